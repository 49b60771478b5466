//! `fslab cleanup` on a killed run whose state file was tampered with (issue 25): paths that
//! climb out with `..`, a run's `images` or `mnt` replaced by a symbolic link to somewhere
//! else, a mount that is not the recorded device. Every victim is a file, directory or tmpfs
//! this test made outside the work directory; afterwards each is byte for byte what it was
//! and the tmpfs is still mounted.

mod common;

use common::{fslab, TempMount};
use std::path::Path;

fn mounted(p: &Path) -> bool {
    let canon = std::fs::canonicalize(p).unwrap();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(canon.to_str().unwrap()))
}

#[test]
fn privileged_cleanup_never_leaves_the_work_directory() {
    if !common::require_root("privileged_cleanup_never_leaves_the_work_directory") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let victim = root.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("file"), b"precious").unwrap();
    std::fs::create_dir(victim.join("empty-dir")).unwrap();
    let tmpfs = TempMount::new("tmpfs", "size=1m");
    std::fs::write(tmpfs.path().join("on-tmpfs"), b"also precious").unwrap();
    let tmpfs_path = std::fs::canonicalize(tmpfs.path()).unwrap();

    // A killed run: its directory, an unlocked lock, and a tampered state file.
    let work = root.join("work");
    let run = work.join("runs/4242-1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("lock"), b"").unwrap();
    std::os::unix::fs::symlink(&victim, run.join("images")).unwrap();
    std::os::unix::fs::symlink(&tmpfs_path, run.join("mnt")).unwrap();
    let climb = format!("{}/../../../victim/file", run.display());
    let climb_dir = format!("{}/../../../victim/empty-dir", run.display());
    let state = serde_json::json!({
        "version": 1,
        "pid": 4242,
        "started_at": "2026-01-01T00:00:00Z",
        "study": null,
        "next_id": 9,
        "resources": [
            {"id": 1, "kind": "dir", "path": climb_dir},
            {"id": 2, "kind": "image", "path": climb},
            {"id": 3, "kind": "image", "path": run.join("images/file")},
            {"id": 4, "kind": "dir", "path": run.join("images/empty-dir")},
            {"id": 5, "kind": "tmpfs", "path": run.join("mnt")},
            {"id": 6, "kind": "mount", "path": tmpfs_path, "device": "tmpfs"},
            {"id": 7, "kind": "mount", "path": run.join("mnt"), "device": "tmpfs"},
            {"id": 8, "kind": "image", "path": "/elsewhere/entirely.img"}
        ]
    });
    std::fs::write(
        run.join("state.json"),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .unwrap();

    // Each entry is refused in turn (cleanup stops at the first it cannot undo); run it
    // until the state file stops shrinking.
    let mut said = String::new();
    for _ in 0..10 {
        let out = fslab(&root)
            .args(["cleanup", "--workdir"])
            .arg(&work)
            .output()
            .unwrap();
        said.push_str(&String::from_utf8_lossy(&out.stderr));
        said.push_str(&String::from_utf8_lossy(&out.stdout));
        assert_ne!(out.status.code(), Some(0), "{said}");
        let left: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("state.json")).unwrap()).unwrap();
        if left["resources"].as_array().unwrap().len() == 8 {
            break;
        }
    }
    assert!(said.contains("left alone"), "{said}");
    assert_eq!(std::fs::read(victim.join("file")).unwrap(), b"precious");
    assert!(victim.join("empty-dir").is_dir(), "{said}");
    assert!(
        mounted(&tmpfs_path),
        "the tmpfs outside was unmounted: {said}"
    );
    assert_eq!(
        std::fs::read(tmpfs_path.join("on-tmpfs")).unwrap(),
        b"also precious"
    );
    // Each kind of escape is refused on its own, newest first: drop the newest entry by
    // hand and run again, until every entry was tried.
    let mut resources = state["resources"].as_array().unwrap().clone();
    while !resources.is_empty() {
        let mut doc = state.clone();
        doc["resources"] = serde_json::Value::Array(resources.clone());
        std::fs::write(run.join("state.json"), doc.to_string()).unwrap();
        let out = fslab(&root)
            .args(["cleanup", "--workdir"])
            .arg(&work)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{resources:?}: {err}");
        assert!(
            err.contains("left alone") || err.contains("not fslab's"),
            "{err}"
        );
        assert_eq!(std::fs::read(victim.join("file")).unwrap(), b"precious");
        assert!(victim.join("empty-dir").is_dir());
        assert!(mounted(&tmpfs_path), "{resources:?}: {err}");
        resources.pop();
    }
}
