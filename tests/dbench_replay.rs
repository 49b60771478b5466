//! Replay tests of the dbench engine through the library: the tree one pass leaves, the
//! operation counts, the loop over passes, the measured window, and loud failures.

use fslab::workload::dbench::{Dbench, DbenchParams, Loadfile};
use fslab::workload::{Quiet, Target, Workload};
use std::path::Path;
use std::time::Duration;

const SESSION: &str = r#"# a tiny office session
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\Docs" 0x1 0x2 2 NT_STATUS_OK
Close 2 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\Docs\a.doc" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\Docs\a.doc" 0x40 0x2 3 NT_STATUS_OK
WriteX 3 0 65536 65536 NT_STATUS_OK
WriteX 3 65536 1000 1000 NT_STATUS_OK
Flush 3 NT_STATUS_OK
QUERY_FILE_INFORMATION 3 1007 NT_STATUS_OK
Close 3 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\Docs\A.DOC" 1004 NT_STATUS_OK
NTCreateX "\clients\client1\Docs\A.DOC" 0x40 0x1 4 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\Docs\a.doc" 0x40 0x1 5 NT_STATUS_OK
ReadX 5 0 65536 65536 NT_STATUS_OK
ReadX 5 65536 65536 1000 NT_STATUS_OK
LockX 5 0 100 NT_STATUS_OK
UnlockX 5 0 100 NT_STATUS_OK
SET_FILE_INFORMATION 5 1004 NT_STATUS_OK
Close 5 NT_STATUS_OK
FIND_FIRST "\clients\client1\Docs\*.DOC" 260 1366 0 NT_STATUS_OK
FIND_FIRST "\clients\client1\Docs\*.xls" 260 1366 0 NT_STATUS_NO_SUCH_FILE
Rename "\clients\client1\Docs\a.doc" "\clients\client1\Docs\b.doc" NT_STATUS_OK
NTCreateX "\clients\client1\Docs\tmp.txt" 0x40 0x5 6 NT_STATUS_OK
WriteX 6 0 10 10 NT_STATUS_OK
Close 6 NT_STATUS_OK
Unlink "\clients\client1\Docs\tmp.txt" 0x6 NT_STATUS_OK
Unlink "\clients\client1\Docs\tmp.txt" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\Empty" 0x1 0x2 7 NT_STATUS_OK
Close 7 NT_STATUS_OK
Rmdir "\clients\client1\Empty" NT_STATUS_OK
QUERY_FS_INFORMATION 259 NT_STATUS_OK
"#;

fn params(text: &str, clients: usize) -> DbenchParams {
    let mut p = DbenchParams::new(Loadfile::parse(text, "session.txt").unwrap());
    p.clients = clients;
    p.warmup = Duration::ZERO;
    p.duration = Duration::from_secs(60);
    p.run_once = true;
    p
}

fn files_under(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, u64)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            let rel = e.path().strip_prefix(base).unwrap().display().to_string();
            if m.is_dir() {
                out.push((format!("{rel}/"), 0));
                walk(base, &e.path(), out);
            } else {
                out.push((rel, m.len()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn one_pass_leaves_the_expected_tree_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = params(SESSION, 2);
    p.skip_cleanup = true;
    let mut d = Dbench::new(p);
    let t = Target::new(dir.path());
    d.prepare(&t).unwrap();
    let metrics = d.run(&t, &Quiet).unwrap();
    d.cleanup(&t).unwrap();

    let mut want = Vec::new();
    for c in ["client0", "client1"] {
        want.push((format!("clients/{c}/"), 0));
        want.push((format!("clients/{c}/Docs/"), 0));
        want.push((format!("clients/{c}/Docs/b.doc"), 66536));
    }
    want.push(("clients/".to_string(), 0));
    want.sort();
    assert_eq!(files_under(dir.path()), want);

    let o = d.last.clone().unwrap();
    let count = |op: &str| o.ops.iter().find(|r| r.op == op).map_or(0, |r| r.count);
    assert_eq!(o.measured_ops, 2 * 34);
    assert_eq!(o.passes, 2);
    assert_eq!(count("NTCreateX"), 2 * 7);
    assert_eq!(count("Close"), 2 * 6);
    assert_eq!(count("ReadX"), 2 * 2);
    assert_eq!(count("WriteX"), 2 * 3);
    assert_eq!(count("Find"), 2 * 2);
    assert_eq!(count("Qpathinfo"), 2 * 2);
    assert_eq!(count("Rmdir"), 2);
    assert_eq!(o.measured_bytes, 2 * (65536 + 1000 + 65536 + 65536 + 10));
    let get = |phase: &str, name: &str| {
        metrics
            .iter()
            .find(|m| m.phase == phase && m.name == name)
            .map(|m| m.value)
    };
    assert!(get("total", "throughput").unwrap() > 0.0);
    assert_eq!(get("LockX", "count"), Some(2.0));
    assert!(get("WriteX", "p99_latency").unwrap() > 0.0);
    let h = d.take_histograms();
    assert_eq!(h.len(), o.ops.len());
    assert!(h
        .iter()
        .all(|h| h.encoding == "hdr-v2-deflate" && h.name == "latency_ns"));
    assert!(d.take_histograms().is_empty(), "histograms are taken once");
}

#[test]
fn loops_over_passes_and_measures_exactly_the_window_after_warmup() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = params(SESSION, 3);
    p.run_once = false;
    p.warmup = Duration::from_millis(200);
    p.duration = Duration::from_millis(300);
    let mut d = Dbench::new(p);
    let t = Target::new(dir.path());
    d.prepare(&t).unwrap();
    d.run(&t, &Quiet).unwrap();
    d.cleanup(&t).unwrap();
    let o = d.last.clone().unwrap();
    assert!(o.passes > 3, "passes {}", o.passes);
    assert!(
        (o.measured_seconds - 0.3).abs() < 1e-9,
        "{}",
        o.measured_seconds
    );
    assert!(o.throughput_mb_s > 0.0);
    // Cleanup removed everything the clients made.
    assert!(files_under(dir.path()).is_empty());
}

#[test]
fn a_status_mismatch_fails_loudly_with_line_op_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Mkdir \"\\clients\" NT_STATUS_OK\nNTCreateX \"\\clients\\client1\" 0x1 0x2 1 NT_STATUS_OK\nClose 1 NT_STATUS_OK\nNTCreateX \"\\clients\\client1\\missing.doc\" 0x40 0x1 2 NT_STATUS_OK\n";
    let mut d = Dbench::new(params(text, 2));
    let t = Target::new(dir.path());
    let e = d.run(&t, &Quiet).unwrap_err().to_string();
    d.cleanup(&t).unwrap();
    assert!(e.contains("line 4: NTCreateX clients/client"), "{e}");
    assert!(
        e.contains("/missing.doc: expected NT_STATUS_OK, got ENOENT"),
        "{e}"
    );
    assert!(
        files_under(dir.path()).is_empty(),
        "client trees are removed"
    );

    let ok_but_expected_missing =
        "Mkdir \"\\clients\" NT_STATUS_OK\nQUERY_PATH_INFORMATION \"\\clients\" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND\n";
    let mut d = Dbench::new(params(ok_but_expected_missing, 1));
    let e = d.run(&t, &Quiet).unwrap_err().to_string();
    d.cleanup(&t).unwrap();
    assert!(
        e.contains("line 2: QUERY_PATH_INFORMATION clients: expected NT_STATUS_OBJECT_NAME_NOT_FOUND, but it succeeded"),
        "{e}"
    );

    let bad_handle = "Mkdir \"\\clients\" NT_STATUS_OK\nReadX 77 0 10 10 NT_STATUS_OK\n";
    let mut d = Dbench::new(params(bad_handle, 1));
    let e = d.run(&t, &Quiet).unwrap_err().to_string();
    d.cleanup(&t).unwrap();
    assert!(
        e.contains("line 2: ReadX handle 77: the handle is not open"),
        "{e}"
    );
}

#[test]
fn a_short_read_is_a_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Mkdir \"\\clients\" NT_STATUS_OK\nNTCreateX \"\\clients\\f\" 0x40 0x5 1 NT_STATUS_OK\nWriteX 1 0 10 10 NT_STATUS_OK\nReadX 1 0 100 100 NT_STATUS_OK\n";
    let mut d = Dbench::new(params(text, 1));
    let t = Target::new(dir.path());
    let e = d.run(&t, &Quiet).unwrap_err().to_string();
    d.cleanup(&t).unwrap();
    assert!(
        e.contains("line 4: ReadX handle 1: read 10 bytes at offset 0, the loadfile expects 100"),
        "{e}"
    );
}

#[test]
fn an_existing_tree_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("clients")).unwrap();
    std::fs::write(dir.path().join("clients/precious"), b"x").unwrap();
    let mut d = Dbench::new(params(SESSION, 1));
    let t = Target::new(dir.path());
    let e = d.run(&t, &Quiet).unwrap_err().to_string();
    d.cleanup(&t).unwrap();
    assert!(e.contains("clients already exists"), "{e}");
    assert!(dir.path().join("clients/precious").exists());
}
