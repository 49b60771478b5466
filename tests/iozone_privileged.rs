//! `fslab iozone` on file systems this test mounts itself (root): no space left part-way
//! through a test on a small tmpfs, and O_DIRECT refused by a file system without it (ramfs).

mod common;

use common::{fslab, require_root, TempMount};

#[test]
fn privileged_no_space_mid_test_reports_bytes_removes_the_file_and_fails() {
    if !require_root("privileged_no_space_mid_test_reports_bytes_removes_the_file_and_fails") {
        return;
    }
    let m = TempMount::new("tmpfs", "size=1m");
    let db = tempfile::tempdir().unwrap();
    let f = m.path().join("full.tmp");
    let out = fslab(db.path())
        .args([
            "iozone",
            "-i",
            "0",
            "-s",
            "4m",
            "-r",
            "64k",
            "--no-space-check",
            "-f",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    let done: u64 = err
        .split("failed after ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("bytes written are reported");
    assert!(done > 0 && done <= 1 << 20, "{err}");
    let fail: Vec<&str> = err.lines().filter(|l| l.starts_with("fslab:")).collect();
    assert_eq!(fail.len(), 1, "{err}");
    assert_eq!(fail[0].matches("No space left").count(), 1, "{err}");
    assert!(err.contains("removed the test file"), "{err}");
    assert!(!f.exists(), "the file must be removed");
    // Without --no-space-check the run is refused before anything is written.
    let out = fslab(db.path())
        .args(["iozone", "-i", "0", "-s", "4m", "-r", "64k", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("free"));
}

#[test]
fn privileged_o_direct_refused_where_the_file_system_lacks_it() {
    if !require_root("privileged_o_direct_refused_where_the_file_system_lacks_it") {
        return;
    }
    let m = TempMount::new("ramfs", "mode=755");
    let db = tempfile::tempdir().unwrap();
    let out = fslab(db.path())
        .args(["iozone", "-I", "-s", "64k", "-f"])
        .arg(m.path().join("f"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("ramfs"), "{err}");
    assert_eq!(
        std::fs::read_dir(m.path()).unwrap().count(),
        0,
        "probe file removed"
    );
}

#[test]
fn privileged_drop_caches_between_tests() {
    if !require_root("privileged_drop_caches_between_tests") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = fslab(d.path())
        .args([
            "iozone",
            "-i",
            "0",
            "-i",
            "1",
            "-s",
            "64k",
            "-r",
            "4k",
            "--drop-caches",
            "--fadvise",
            "--no-store",
            "-f",
        ])
        .arg(d.path().join("f"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
