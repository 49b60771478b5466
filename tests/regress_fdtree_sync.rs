//! Regression: `fdtree --sync` called syncfs(2) on an O_PATH descriptor (EBADF) and then
//! returned while its workers waited at a barrier, so the run hung forever.

mod common;

#[test]
fn fdtree_sync_completes_and_counts_writeback() {
    let t = tempfile::tempdir().unwrap();
    let out = common::fslab(t.path())
        .args([
            "fdtree",
            "--sync",
            "--json",
            "--no-store",
            "-d",
            "2",
            "-f",
            "2",
            "-s",
            "1",
            "-l",
            "1",
            "-o",
        ])
        .arg(t.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["sync_timed"], true);
}
