//! Parser tests on tricky lines.

use super::*;
use crate::workload::dbench::ops::FailClass;

/// `text` parsed; it must parse.
fn parsed(text: &str) -> Loadfile {
    Loadfile::parse(text, "t").unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn one(line: &str) -> (Loadfile, Op) {
    let lf = parsed(line);
    let op = lf.ops[0];
    (lf, op)
}

fn err(text: &str) -> String {
    Loadfile::parse(text, "t.txt").unwrap_err().to_string()
}

#[test]
fn quoted_backslash_path_with_spaces() {
    let (lf, op) =
        one(r#"NTCreateX "\clients\client1\My Documents\a b.doc" 0x40 0x2 9938 NT_STATUS_OK"#);
    let Args::Create(c) = op.args else {
        panic!("{:?}", op.args)
    };
    assert_eq!(
        lf.paths[c.path as usize].text,
        "clients/client1/My Documents/a b.doc"
    );
    assert_eq!((c.options, c.disposition), (0x40, 2));
    assert_eq!(lf.handles[c.handle as usize], 9938);
    assert_eq!(op.expect, Expect::Success);
    assert_eq!(lf.statuses[op.status as usize], "NT_STATUS_OK");
    assert_eq!(op.line, 1);
}

#[test]
fn leading_timestamp_and_hex_handle() {
    let (lf, op) = one("40.380244000 WriteX 0x2724 0 602 602 0x00000000");
    assert_eq!(op.time, Some(40.380244));
    assert!(lf.has_timestamps);
    let Args::Io(io) = op.args else { panic!() };
    assert_eq!(
        (lf.handles[io.handle as usize], io.offset, io.size, io.ret),
        (0x2724, 0, 602, 602)
    );
    assert_eq!(lf.max_io, 602);
}

#[test]
fn numbers_read_like_strtol_base_0() {
    assert_eq!(parse_int("16385"), Some(16385));
    assert_eq!(parse_int("0x2724"), Some(0x2724));
    assert_eq!(parse_int("0X1f"), Some(31));
    assert_eq!(parse_int("010"), Some(8));
    assert_eq!(parse_int("0"), Some(0));
    assert_eq!(parse_int("08"), None);
    assert_eq!(parse_int("12abc"), None);
    assert_eq!(parse_int("0x"), None);
    assert_eq!(parse_int("99999999999999999999999"), None);
    assert!(err("ReadX 1 12abc 10 10 NT_STATUS_OK").contains("offset 12abc is not a number"));
}

#[test]
fn trailing_backslash_and_unquoted_paths() {
    let lf = parsed(
        "13.49 NTCreateX \"/clients/client1\\\" 0x00000001 1 0x2723 0x00000000\nQUERY_PATH_INFORMATION \\clients\\client1\\x 1004 NT_STATUS_OK\n",
    );
    let Args::Create(c) = lf.ops[0].args else {
        panic!()
    };
    let p = &lf.paths[c.path as usize];
    assert_eq!(p.text, "clients/client1/");
    assert_eq!(lf.paths[p.parent.unwrap() as usize].text, "clients");
    let Args::Path(q) = lf.ops[1].args else {
        panic!()
    };
    assert_eq!(lf.paths[q as usize].text, "clients/client1/x");
}

#[test]
fn paths_are_interned_with_parents() {
    let lf = parsed("Unlink \"\\a\\b\\c\" 0x6 NT_STATUS_OK\nUnlink \"/a//b/./c\" NT_STATUS_OK\n");
    assert_eq!(lf.ops[0].args, lf.ops[1].args);
    let texts: Vec<&str> = lf.paths.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, vec![".", "a", "a/b", "a/b/c"]);
}

#[test]
fn client1_components_are_rewritten_per_client_only() {
    let p = LoadPath {
        text: "clients/client1/client10/client1.doc/client1".into(),
        parent: None,
    };
    assert_eq!(
        p.for_client(7),
        "clients/client7/client10/client1.doc/client7"
    );
    assert_eq!(p.for_client(1), p.text);
    let lf =
        parsed("Deltree \"\\clients\\client1\" NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\n");
    assert_eq!(lf.top_level_names(3..4), vec!["clients".to_string()]);
    let other = parsed("Mkdir \"\\client1\\x\" NT_STATUS_OK\n");
    assert_eq!(other.top_level_names(4..5), vec!["client4".to_string()]);
    assert_eq!(lf.top_level_names(0..3), ["clients"]);
    assert_eq!(other.top_level_names(4..6), ["client4", "client5"]);
}

#[test]
fn statuses_of_every_form() {
    let text = "Unlink \"\\a\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\nUnlink \"\\a\" 0xc0000034\nUnlink \"\\a\" ERROR\nUnlink \"\\a\" *\nUnlink \"\\a\" SUCCESS\nRmdir \"\\a\" NT_STATUS_DIRECTORY_NOT_EMPTY\n";
    let lf = parsed(text);
    let e: Vec<Expect> = lf.ops.iter().map(|o| o.expect).collect();
    assert_eq!(
        e,
        vec![
            Expect::Failure(FailClass::NotFound),
            Expect::Failure(FailClass::NotFound),
            Expect::Failure(FailClass::Any),
            Expect::Any,
            Expect::Success,
            Expect::Failure(FailClass::NotEmpty),
        ]
    );
    assert_eq!(lf.statuses.len(), 6);
}

#[test]
fn comments_blank_lines_and_crlf_keep_line_numbers() {
    let lf = parsed(
        "# comment\r\n\r\n   \r\nClose 5 NT_STATUS_OK\r\n#Close 6 NT_STATUS_OK\r\nFlush 5 NT_STATUS_OK",
    );
    assert_eq!(lf.ops.len(), 2);
    assert_eq!((lf.ops[0].line, lf.ops[1].line), (4, 6));
    assert_eq!(lf.lines, 6);
}

#[test]
fn op_names_ignore_case() {
    let (_, op) = one("ntcreatex \"\\x\" 0x40 0x1 3 NT_STATUS_OK");
    assert_eq!(op.kind, OpKind::NtCreateX);
    let (_, op) = one("query_fs_information 259 NT_STATUS_OK");
    assert_eq!(op.kind, OpKind::QueryFsInformation);
}

#[test]
fn find_first_wildcards_and_optional_unlink_attributes() {
    let lf = parsed(
        "FIND_FIRST \"\\clients\\client1\\docs\\<.TMP\" 260 1366 0 NT_STATUS_NO_SUCH_FILE\nFIND_FIRST \"\\clients\\client1\\x.doc\" 260 10 0 NT_STATUS_OK\nUnlink \"\\x\" NT_STATUS_OK\n",
    );
    assert!(matches!(
        lf.ops[0].args,
        Args::Find(Find {
            wildcard: true,
            maxcnt: 1366,
            ..
        })
    ));
    assert!(matches!(
        lf.ops[1].args,
        Args::Find(Find {
            wildcard: false,
            maxcnt: 10,
            ..
        })
    ));
    assert!(matches!(lf.ops[2].args, Args::Path(_)));
}

#[test]
fn errors_name_the_line_number_and_text() {
    let e = err("Close 1 NT_STATUS_OK\nNTCreateX \"\\x\" NT_STATUS_OK\n");
    assert!(
        e.starts_with("t.txt line 2: NTCreateX takes PATH CREATE_OPTIONS DISPOSITION HANDLE"),
        "{e}"
    );
    assert!(e.contains("`NTCreateX \"\\x\" NT_STATUS_OK`"), "{e}");
    let e = err("\n\nFrobnicate 1 NT_STATUS_OK");
    assert!(
        e.starts_with("t.txt line 3: unknown operation Frobnicate"),
        "{e}"
    );
    let e = err("Close 1 OK");
    assert!(e.contains("line 1: badly formed status OK"), "{e}");
    let e = err("Close 1");
    assert!(e.contains("badly formed status 1"), "{e}");
    let e = err("Close");
    assert!(e.contains("Close has no status"), "{e}");
    let e = err("12.5");
    assert!(e.contains("a timestamp without an operation"), "{e}");
    let e = err("1e999 Close 1 NT_STATUS_OK");
    assert!(e.contains("timestamp 1e999"), "{e}");
    for big in ["1e300", "9223372036854775807", "31536000.5"] {
        let e = err(&format!("{big} Close 1 NT_STATUS_OK"));
        assert!(
            e.contains(&format!("timestamp {big} is out of range")),
            "{e}"
        );
    }
}

#[test]
fn unsupported_and_unsafe_lines_are_refused() {
    assert!(err("LOOP 3").contains("dbench 5 directive LOOP"));
    assert!(err("RANDOMSTRING 1 \"[abc]\"").contains("directive RANDOMSTRING"));
    assert!(
        err("ReadX 1 *%4096 10 10 NT_STATUS_OK").contains("argument expressions are not supported")
    );
    assert!(err("SMBopenX x y z").contains("dbench 1 loadfile"));
    assert!(
        err("Unlink \"\\clients\\..\\..\\etc\\passwd\" NT_STATUS_OK")
            .contains("leaves the client tree")
    );
    assert!(err("Deltree \"\\\" NT_STATUS_OK").contains("target directory itself"));
    assert!(err("Rename \"\\a\" \"\\\" NT_STATUS_OK").contains("target directory itself"));
    assert!(err("ReadX 1 0 10 20 NT_STATUS_OK").contains("larger than the size"));
    assert!(err("WriteX 1 0 999999999 999999999 NT_STATUS_OK").contains("above the supported"));
    assert!(err("# only a comment\n\n").contains("contains no operations"));
    let long = format!("Bogus {} NT_STATUS_OK", "x".repeat(300));
    let e = err(&long);
    assert!(e.contains('…') && e.len() < 300, "{e}");
}

#[test]
fn gzip_and_plain_files_parse_the_same() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let text = "Mkdir \"\\clients\" NT_STATUS_OK\nQUERY_FS_INFORMATION 1 NT_STATUS_OK\n";
    let plain = dir.path().join("load.txt");
    std::fs::write(&plain, text).unwrap();
    let gz = dir.path().join("load.whatever");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = Loadfile::from_path(&plain).unwrap();
    let b = Loadfile::from_path(&gz).unwrap();
    assert_eq!(a.ops, b.ops);
    assert_eq!(a.ops.len(), 2);

    let bad_gz = dir.path().join("bad.gz");
    std::fs::write(&bad_gz, [0x1f, 0x8b, 8, 0, 1, 2, 3]).unwrap();
    let e = Loadfile::from_path(&bad_gz).unwrap_err().to_string();
    assert!(e.contains("cannot be decompressed"), "{e}");
    let binary = dir.path().join("bin");
    std::fs::write(&binary, b"Close 1 NT_STATUS_OK\n\xff\xfe\x00garbage").unwrap();
    let e = Loadfile::from_path(&binary).unwrap_err().to_string();
    assert!(e.contains("line 2 is not text"), "{e}");
    let e = Loadfile::from_path(&dir.path().join("missing"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("cannot read loadfile"), "{e}");
}

#[test]
fn counts_and_bytes_per_pass() {
    let lf = parsed(
        "NTCreateX \"\\a\" 0x40 0x2 1 NT_STATUS_OK\nWriteX 1 0 100 100 NT_STATUS_OK\nReadX 1 0 65536 100 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n",
    );
    let c = lf.op_counts();
    assert_eq!(c[OpKind::WriteX.index()], 1);
    assert_eq!(c[OpKind::Close.index()], 1);
    assert_eq!(lf.bytes_per_pass(), 100 + 65536);
}
