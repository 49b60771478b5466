use super::*;
use crate::workload::mdtest::test_support::shape;

/// Why `verify` refuses `testdir` in `dir` for `shape`.
fn refusal(dir: &Path, testdir: &str, shape: &Shape) -> String {
    verify(dir, testdir, shape).unwrap_err().to_string()
}

#[test]
fn test_directory_names_are_recognised_exactly() {
    for ok in ["test-dir.0-0", "test-dir.12-0"] {
        assert!(is_test_dir_name(ok), "{ok}");
    }
    for bad in [
        "test-dir.-0",
        "test-dir.01-0",
        "test-dir.1-1",
        "test-dir.1",
        "test-dir.x-0",
        "../test-dir.0-0",
        "test-dir.0-0/",
        "out",
        "",
        ".",
        "..",
    ] {
        assert!(!is_test_dir_name(bad), "{bad}");
    }
}

#[test]
fn a_recorded_test_directory_verifies_and_a_replaced_one_does_not() {
    let t = tempfile::tempdir().unwrap();
    let s = shape("-n 10 -z 1", 1);
    let mut k = Keeper::new(t.path(), s);
    k.begin("test-dir.0-0").unwrap();
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    k.made("test-dir.0-0").unwrap();
    k.finished("test-dir.0-0", 7, false).unwrap();
    let rec = read(t.path(), "test-dir.0-0").unwrap().unwrap();
    assert_eq!(rec.files, Some(7));
    assert!(rec.dev.is_some() && rec.ino.is_some());
    assert_eq!(rec.shape, s);
    // A later run of the same shape proves it and learns the file count.
    let mut later = Keeper::new(t.path(), s);
    assert_eq!(later.verify("test-dir.0-0").unwrap(), Some(7));
    assert_eq!(later.owned(), ["test-dir.0-0"]);
    // Another shape is refused, naming both.
    let other = shape("-n 10 -z 1 -u", 2);
    let e = refusal(t.path(), "test-dir.0-0", &other);
    assert!(
        e.contains("was made with -I 5 -z 1 -b 1 on 1 rank(s)"),
        "{e}"
    );
    assert!(
        e.contains("this run has -I 5 -z 1 -b 1 -u on 2 rank(s)"),
        "{e}"
    );
    // Replaced by another directory of the same name: refused.
    std::fs::rename(t.path().join("test-dir.0-0"), t.path().join("moved")).unwrap();
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    let e = refusal(t.path(), "test-dir.0-0", &s);
    assert!(e.contains("inode differs"), "{e}");
    // Removed with its directory.
    later.finished("test-dir.0-0", 7, true).unwrap();
    assert!(read(t.path(), "test-dir.0-0").unwrap().is_none());
    assert!(later.owned().is_empty());
}

#[test]
fn unrecorded_odd_and_foreign_directories_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let s = shape("-n 10", 1);
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    let e = verify(t.path(), "test-dir.0-0", &s).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("no fslab record"), "{e}");
    for bad in ["results", "../x", "test-dir.0-0/..", ""] {
        let e = refusal(t.path(), bad, &s);
        assert!(
            e.contains("not an mdtest test directory name"),
            "{bad}: {e}"
        );
    }
    // A symbolic link with a record: still refused.
    std::fs::create_dir(t.path().join("elsewhere")).unwrap();
    let mut k = Keeper::new(t.path(), s);
    k.begin("test-dir.1-0").unwrap();
    std::os::unix::fs::symlink(t.path().join("elsewhere"), t.path().join("test-dir.1-0")).unwrap();
    // Nor may a new run start over a name that exists or has a record.
    let e = k.begin("test-dir.1-0").unwrap_err().to_string();
    assert!(e.contains("already exists"), "{e}");
    std::fs::create_dir(t.path().join("gone")).unwrap();
    k.begin("test-dir.2-0").unwrap();
    let e = k.begin("test-dir.2-0").unwrap_err().to_string();
    assert!(e.contains("an earlier run's record"), "{e}");
    k.abandon("test-dir.2-0").unwrap();
    assert!(read(t.path(), "test-dir.2-0").unwrap().is_none());
    let e = refusal(t.path(), "test-dir.1-0", &s);
    assert!(e.contains("not a directory"), "{e}");
    // A record of something else under this name.
    std::fs::write(path(t.path(), "test-dir.0-0"), "{\"kind\": \"fdtree\"}").unwrap();
    let e = refusal(t.path(), "test-dir.0-0", &s);
    assert!(e.contains("not an fslab mdtest record"), "{e}");
    assert!(t.path().join("test-dir.0-0").is_dir(), "nothing touched");
    assert!(t.path().join("elsewhere").is_dir());
}

#[test]
fn a_record_without_an_inode_covers_only_a_directory_born_just_after_it() {
    let t = tempfile::tempdir().unwrap();
    let s = shape("-n 10", 1);
    let rec = |name: &str, at: Option<&str>| Record {
        kind: "mdtest".into(),
        testdir: name.into(),
        fslab_version: "0".into(),
        host: "h".into(),
        pid: 1,
        created_at: at.map_or_else(crate::units::timestamp_now, str::to_string),
        shape: s,
        files: None,
        dev: None,
        ino: None,
    };
    // A user's directory, then a forged record without an inode beside it.
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    std::fs::write(t.path().join("test-dir.0-0/file.mdtest.0.0"), b"mine").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    provenance::write(t.path(), &rec("test-dir.0-0", None)).unwrap();
    let e = refusal(t.path(), "test-dir.0-0", &s);
    assert!(
        e.contains("has no inode") && e.contains("existed before"),
        "{e}"
    );
    // A record written long before the directory came (its run ended long ago).
    provenance::write(
        t.path(),
        &rec("test-dir.1-0", Some("2020-01-01T00:00:00.000Z")),
    )
    .unwrap();
    std::fs::create_dir(t.path().join("test-dir.1-0")).unwrap();
    let e = refusal(t.path(), "test-dir.1-0", &s);
    assert!(e.contains("has no inode"), "{e}");
    // Written, then the directory made at once (a run killed before completing it): accepted.
    provenance::write(t.path(), &rec("test-dir.2-0", None)).unwrap();
    std::fs::create_dir(t.path().join("test-dir.2-0")).unwrap();
    verify(t.path(), "test-dir.2-0", &s).unwrap();
    assert_eq!(
        std::fs::read(t.path().join("test-dir.0-0/file.mdtest.0.0")).unwrap(),
        b"mine"
    );
}

/// Root, or loudly refused unless FSLAB_SKIP_PRIVILEGED=1 is set on purpose.
fn root(test: &str) -> bool {
    if crate::sysinfo::is_root() {
        return true;
    }
    if std::env::var("FSLAB_SKIP_PRIVILEGED").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: needs root (FSLAB_SKIP_PRIVILEGED=1)");
        return false;
    }
    panic!("{test} needs root (it mounts a tmpfs); run as root or set FSLAB_SKIP_PRIVILEGED=1 to skip on purpose");
}

/// Unmounts its tmpfs whatever the test's outcome.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn privileged_a_test_directory_with_a_mount_inside_is_never_crossed() {
    if !root("privileged_a_test_directory_with_a_mount_inside_is_never_crossed") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let s = shape("-I 2 -z 1 -b 2", 1);
    let mut k = Keeper::new(t.path(), s);
    k.begin("test-dir.0-0").unwrap();
    let node = t.path().join("test-dir.0-0/mdtest_tree.0/mdtest_tree.1");
    std::fs::create_dir_all(&node).unwrap();
    k.made("test-dir.0-0").unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&node)
        .status()
        .unwrap();
    assert!(ok.success(), "mount a tmpfs on {}", node.display());
    let _m = Mounted(node.clone());
    // Inside the mount, a file of an mdtest name (the user's, on another file system).
    std::fs::write(node.join("file.mdtest.0.2"), b"mine").unwrap();
    let e = refusal(t.path(), "test-dir.0-0", &s);
    assert!(e.contains("has a mount inside it"), "{e}");
    let swept =
        crate::workload::mdtest::sweep::sweep_testdir(t.path(), "test-dir.0-0", &s).unwrap();
    assert!(
        swept.kept.iter().any(|k| k.contains("a mount inside")),
        "{:?}",
        swept.kept
    );
    assert_eq!(
        std::fs::read(node.join("file.mdtest.0.2")).unwrap(),
        b"mine"
    );
}
