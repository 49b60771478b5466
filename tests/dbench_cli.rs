//! `fslab dbench` end to end: short runs, JSON, the generator, and every bad-input case of
//! the issue (one line, exit code 2, client trees removed).

mod common;

use common::{fslab, require_root, TempMount};
use std::path::Path;

const TINY: &str = r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\a.doc" 0x40 0x2 2 NT_STATUS_OK
WriteX 2 0 65536 65536 NT_STATUS_OK
ReadX 2 0 65536 65536 NT_STATUS_OK
Close 2 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\a.doc" 1004 NT_STATUS_OK
"#;

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Run and expect exit 2 (bad input) with exactly one line on stderr containing `needle`;
/// returns it.
fn fails(args: &[&str], db: &Path, needle: &str) -> String {
    fails_with(2, args, db, needle)
}

/// Run and expect exit `code` with exactly one line on stderr containing `needle`.
fn fails_with(code: i32, args: &[&str], db: &Path, needle: &str) -> String {
    let out = fslab(db).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "args {args:?}: stderr {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    err
}

#[test]
fn short_run_json_has_throughput_and_per_op_percentiles() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let load = db.path().join("tiny.txt");
    std::fs::write(&load, TINY).unwrap();
    let out = fslab(db.path())
        .args(["dbench", "-t", "0.5", "--warmup", "0.2", "--json", "-c"])
        .arg(&load)
        .arg("-D")
        .arg(dir.path())
        .arg("2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "fslab.dbench.v2");
    let rep = &doc["outcomes"][0];
    assert!(rep["throughput_mb_s"].as_f64().unwrap() > 0.0);
    assert!((rep["measured_seconds"].as_f64().unwrap() - 0.5).abs() < 1e-6);
    let ops = rep["ops"].as_array().unwrap();
    let write = ops.iter().find(|o| o["op"] == "WriteX").unwrap();
    assert!(write["count"].as_u64().unwrap() > 0);
    for k in ["mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms"] {
        assert!(write[k].as_f64().unwrap() > 0.0, "{k}");
    }
    let metrics = doc["repetitions"][0].as_array().unwrap();
    assert!(metrics
        .iter()
        .any(|m| m["phase"] == "total" && m["metric"] == "throughput" && m["unit"] == "MB/s"));
    assert!(metrics
        .iter()
        .any(|m| m["phase"] == "ReadX" && m["metric"] == "p999_latency" && m["unit"] == "ms"));
    assert!(doc["run_id"].as_i64().is_some(), "stored in the database");
    assert!(entries(dir.path()).is_empty(), "client trees removed");
    // Progress lines went to stderr, the header among them.
    assert!(String::from_utf8_lossy(&out.stderr).contains("fslab dbench: 2 clients"));
}

#[test]
fn table_output_with_repeat_and_default_loadfile() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = fslab(db.path())
        .args([
            "dbench",
            "-t",
            "1.2",
            "--warmup",
            "0.3",
            "--repeat",
            "2",
            "--no-store",
            "-D",
        ])
        .arg(dir.path())
        .arg("1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("default loadfile (fslab model v1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("MB/sec  execute"),
        "per-second line: {stdout}"
    );
    assert_eq!(stdout.matches("Throughput ").count(), 2, "{stdout}");
    assert!(stdout.contains("P99.9"), "{stdout}");
    assert!(stdout.contains("summary over 2 repetitions"), "{stdout}");
    assert!(entries(dir.path()).is_empty());
    // The repetitions are counted on stderr (a pipe here): plain lines with the total, an
    // ETA while one is left; stdout has none of them.
    let err = String::from_utf8_lossy(&out.stderr);
    let reps: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("dbench rep "))
        .collect();
    assert_eq!(reps.len(), 2, "{err}");
    assert!(
        reps[0].starts_with("dbench rep 1/2: ") && reps[0].contains(" · ETA "),
        "{err}"
    );
    assert!(
        reps[1].starts_with("dbench rep 2/2: ") && !reps[1].contains("ETA"),
        "{err}"
    );
    assert!(!stdout.contains("dbench rep "), "{stdout}");
}

#[test]
fn generator_is_seeded_and_its_output_replays() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = db.path().join("a.txt");
    let b = db.path().join("b.txt");
    let c = db.path().join("c.txt");
    for (p, seed) in [(&a, "5"), (&b, "5"), (&c, "6")] {
        fslab(db.path())
            .args(["dbench", "--tasks", "40", "--seed", seed, "--generate"])
            .arg(p)
            .assert()
            .success();
    }
    let (ta, tb, tc) = (
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        std::fs::read(&c).unwrap(),
    );
    assert_eq!(ta, tb);
    assert_ne!(ta, tc);
    let out = fslab(db.path())
        .args(["dbench", "--run-once", "--json", "--no-store", "-q", "-c"])
        .arg(&a)
        .arg("-D")
        .arg(dir.path())
        .arg("2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ops_per_pass = doc["loadfile"]["operations_per_pass"].as_u64().unwrap();
    assert_eq!(
        doc["outcomes"][0]["measured_ops"].as_u64().unwrap(),
        2 * ops_per_pass
    );
}

#[test]
fn gzip_loadfile_runs() {
    use std::io::Write;
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = db.path().join("tiny.txt.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(TINY.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let out = fslab(db.path())
        .args(["dbench", "--run-once", "--json", "--no-store", "-q", "-c"])
        .arg(&gz)
        .arg("-D")
        .arg(dir.path())
        .arg("3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["outcomes"][0]["measured_ops"], 27);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let missing = db.path().join("nope.txt");
    let garbled = db.path().join("garbled.txt");
    std::fs::write(
        &garbled,
        "Close 1 NT_STATUS_OK\nNTCreateX \"\\x\" 0x40 NT_STATUS_OK\n",
    )
    .unwrap();
    let binary = db.path().join("binary");
    std::fs::write(&binary, [0u8, 159, 146, 150, 255, 1, 2]).unwrap();
    let file_target = db.path().join("plain-file");
    std::fs::write(&file_target, "x").unwrap();

    fails(&["dbench", "-D", d, "0"], db.path(), "0 clients");
    fails(&["dbench", "-D", d, "0"], db.path(), "e.g. fslab dbench 10");
    fails(
        &["dbench", "-D", d, "5000"],
        db.path(),
        "fslab dbench 5000: at most 4096 clients",
    );
    fails(&["dbench", "-D", d, "-t", "0", "4"], db.path(), "0 seconds");
    fails(
        &["dbench", "-D", d, "-t", "soon", "4"],
        db.path(),
        "-t: 'soon' is not a duration",
    );
    fails(
        &["dbench", "-D", d, "-c", missing.to_str().unwrap(), "4"],
        db.path(),
        "cannot read loadfile",
    );
    let e = fails(
        &["dbench", "-D", d, "-c", garbled.to_str().unwrap(), "4"],
        db.path(),
        "garbled.txt line 2: NTCreateX takes PATH",
    );
    assert!(e.contains("choose another loadfile with -c"), "{e}");
    fails(
        &["dbench", "-D", d, "-c", binary.to_str().unwrap(), "4"],
        db.path(),
        "is not text",
    );
    fails(
        &["dbench", "-D", "/nonexistent/dir", "4"],
        db.path(),
        "does not exist",
    );
    fails(
        &["dbench", "-D", file_target.to_str().unwrap(), "4"],
        db.path(),
        "is not a directory",
    );
    fails(
        &["dbench", "-D", d, "--repeat", "0", "1"],
        db.path(),
        "--repeat 0",
    );
    fails(&["dbench", "-D", d], db.path(), "NCLIENTS");
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_mismatch_fails_the_run_loudly_and_removes_the_trees() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let load = db.path().join("wrong.txt");
    std::fs::write(
        &load,
        format!("{TINY}Unlink \"\\clients\\client1\\a.doc\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n"),
    )
    .unwrap();
    // A failure while running (not bad input): exit 1.
    let e = fails_with(
        1,
        &[
            "dbench",
            "-t",
            "5",
            "--warmup",
            "0",
            "-c",
            load.to_str().unwrap(),
            "-D",
            dir.path().to_str().unwrap(),
            "2",
        ],
        db.path(),
        "line 10: Unlink clients/client",
    );
    assert!(
        e.contains("expected NT_STATUS_OBJECT_NAME_NOT_FOUND, but it succeeded"),
        "{e}"
    );
    assert!(
        entries(dir.path()).is_empty(),
        "trees removed after the failure"
    );
}

#[test]
fn existing_clients_directory_is_refused() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("clients")).unwrap();
    fails(
        &["dbench", "-t", "1", "-D", dir.path().to_str().unwrap(), "2"],
        db.path(),
        "clients already exists",
    );
    assert_eq!(entries(dir.path()), vec!["clients".to_string()]);
}

/// A tmpfs mounted for one test, unmounted when dropped.

#[test]
fn privileged_dbench_read_only_target() {
    if !require_root("privileged_dbench_read_only_target") {
        return;
    }
    let db = tempfile::tempdir().unwrap();
    let fs = TempMount::new("tmpfs", "ro,size=1m");
    fails(
        &["dbench", "-t", "1", "-D", fs.path().to_str().unwrap(), "2"],
        db.path(),
        "read-only file system",
    );
}

#[test]
fn privileged_dbench_target_without_space() {
    if !require_root("privileged_dbench_target_without_space") {
        return;
    }
    let db = tempfile::tempdir().unwrap();
    let fs = TempMount::new("tmpfs", "size=1m");
    // The default load needs tens of MB per client: refused before anything is made.
    fails(
        &["dbench", "-t", "1", "-D", fs.path().to_str().unwrap(), "2"],
        db.path(),
        "this run (2 clients replaying default loadfile (fslab model v1, seed 2024)) needs about",
    );
    assert!(entries(fs.path()).is_empty());

    // Data kept alive by an open handle after its name is gone is not in the estimate:
    // the run itself meets ENOSPC, fails with one line and removes the trees.
    let load = db.path().join("hog.txt");
    let mut text = String::from("Deltree \"\\clients\\client1\" NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\nNTCreateX \"\\clients\\client1\" 0x1 0x2 1 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n");
    for h in 2..6 {
        text.push_str(&format!(
            "NTCreateX \"\\clients\\client1\\hog\" 0x40 0x5 {h} NT_STATUS_OK\n"
        ));
        for i in 0..8 {
            text.push_str(&format!(
                "WriteX {h} {} 65536 65536 NT_STATUS_OK\n",
                i * 65536
            ));
        }
        text.push_str("Unlink \"\\clients\\client1\\hog\" 0x6 NT_STATUS_OK\n");
    }
    std::fs::write(&load, text).unwrap();
    fails(
        &[
            "dbench",
            "--run-once",
            "-c",
            load.to_str().unwrap(),
            "-D",
            fs.path().to_str().unwrap(),
            "1",
        ],
        db.path(),
        "(ENOSPC): ",
    );
    assert!(entries(fs.path()).is_empty(), "trees removed");
}

#[test]
fn privileged_dbench_short_write_on_a_full_file_system_names_enospc() {
    if !require_root("privileged_dbench_short_write_on_a_full_file_system_names_enospc") {
        return;
    }
    let db = tempfile::tempdir().unwrap();
    let fs = TempMount::new("tmpfs", "size=2m");
    // A 12 KiB write first, so a later 64 KiB write straddles the end of the space: the
    // kernel writes part of it and returns a short count without an errno. The file is
    // unlinked while its handle stays open, which the space estimate does not model.
    let load = db.path().join("straddle.txt");
    let mut text = String::from("Deltree \"\\clients\\client1\" NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\nNTCreateX \"\\clients\\client1\" 0x1 0x2 1 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n");
    for h in 2..5 {
        text.push_str(&format!(
            "NTCreateX \"\\clients\\client1\\hog\" 0x40 0x5 {h} NT_STATUS_OK\nWriteX {h} 0 12288 12288 NT_STATUS_OK\n"
        ));
        for i in 0..16 {
            text.push_str(&format!(
                "WriteX {h} {} 65536 65536 NT_STATUS_OK\n",
                12288 + i * 65536
            ));
        }
        text.push_str("Unlink \"\\clients\\client1\\hog\" 0x6 NT_STATUS_OK\n");
    }
    std::fs::write(&load, text).unwrap();
    let dir = fs.path().to_str().unwrap();
    let err = fails(
        &[
            "dbench",
            "--run-once",
            "-c",
            load.to_str().unwrap(),
            "-D",
            dir,
            "1",
        ],
        db.path(),
        &format!("no space left on {dir} (ENOSPC): "),
    );
    // The free space of the target when the write failed, of its size.
    assert!(err.contains(" free of 2.0 MiB"), "{err}");
    assert!(
        err.contains("use fewer clients or a bigger file system"),
        "{err}"
    );
    assert!(!err.contains("wrote "), "{err}");
    assert!(entries(fs.path()).is_empty(), "trees removed");
}
