use super::*;
use crate::workload::mdtest::test_support::{names, shape};
use std::fs;

/// The flags of the test directory [`plant`] leaves.
const PLANTED: &str = "-I 2 -z 1 -b 2";

/// A test directory as `-I 2 -z 1 -b 2` leaves it half-way: tree, some items of rank 0 and 1.
fn plant(dir: &Path) -> std::path::PathBuf {
    let td = dir.join("test-dir.0-0");
    for d in ["mdtest_tree.0/mdtest_tree.1", "mdtest_tree.0/mdtest_tree.2"] {
        fs::create_dir_all(td.join(d)).unwrap();
    }
    for d in [
        "mdtest_tree.0/dir.mdtest.0.0",
        "mdtest_tree.0/dir.mdtest.1.1-XX",
        "mdtest_tree.0/mdtest_tree.2/dir.mdtest.0.5",
    ] {
        fs::create_dir(td.join(d)).unwrap();
    }
    for f in [
        "mdtest_tree.0/file.mdtest.1.0",
        "mdtest_tree.0/mdtest_tree.1/file.mdtest.0.3",
    ] {
        fs::write(td.join(f), b"x").unwrap();
    }
    td
}

#[test]
fn names_follow_the_shape() {
    let s = shape(PLANTED, 2);
    // (name, node, depth) in the shared tree → what it may be, and why.
    for (name, node, depth, want, why) in [
        ("mdtest_tree.1", 0, 0, Some(Expect::Dir(Some(1))), ""),
        ("mdtest_tree.3", 0, 0, None, "not a child of 0"),
        ("mdtest_tree.1", 1, 1, None, "leaves have no children"),
        ("dir.mdtest.1.1", 0, 0, Some(Expect::Dir(None)), ""),
        ("dir.mdtest.1.1-XX", 0, 0, Some(Expect::Dir(None)), ""),
        ("file.mdtest.1.1-XX", 0, 0, None, "files are never renamed"),
        ("file.mdtest.0.3", 1, 1, Some(Expect::File), ""),
        ("file.mdtest.0.3", 0, 0, None, "item 3 lives in directory 1"),
        ("file.mdtest.2.0", 0, 0, None, "rank 2 of 2"),
        ("file.mdtest.0.01", 0, 0, None, "not mdtest's spelling"),
        ("file.mdtest.0.1.bak", 0, 0, None, ""),
    ] {
        let got = expected(name.as_bytes(), None, node, depth, &s);
        assert_eq!(got, want, "{name} in {node} at depth {depth}: {why}");
    }
    let u = shape("-I 2 -u", 3);
    assert_eq!(top_of(b"mdtest_tree.2.0", &u), Some(Some(2)));
    assert_eq!(top_of(b"mdtest_tree.3.0", &u), None);
    assert_eq!(top_of(b"mdtest_tree.0", &u), None);
    assert_eq!(
        expected(b"mdtest_tree.2.1", Some(2), 0, 0, &u),
        None,
        "-z 0: no children"
    );
    let leaf = shape("-I 2 -z 1 -b 2 -L", 1);
    assert_eq!(
        expected(b"file.mdtest.0.0", None, 0, 0, &leaf),
        None,
        "-L: top holds none"
    );
    assert_eq!(
        expected(b"file.mdtest.0.2", None, 1, 1, &leaf),
        Some(Expect::File)
    );
}

#[test]
fn a_partial_test_directory_is_removed_entirely() {
    let t = tempfile::tempdir().unwrap();
    plant(t.path());
    let s = sweep_testdir(t.path(), "test-dir.0-0", &shape(PLANTED, 2)).unwrap();
    assert!(s.kept.is_empty(), "{:?}", s.kept);
    assert_eq!((s.files, s.dirs), (2, 3 + 3 + 1));
    assert_eq!(fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn foreign_entries_and_their_parents_stay() {
    let t = tempfile::tempdir().unwrap();
    let td = plant(t.path());
    fs::write(td.join("mdtest_tree.0/notes.txt"), b"mine").unwrap();
    fs::write(td.join("mdtest_tree.0/dir.mdtest.0.0/inside"), b"mine").unwrap();
    fs::write(
        td.join("mdtest_tree.0/mdtest_tree.1/file.mdtest.0.9"),
        b"mine",
    )
    .unwrap();
    // A directory where a file belongs, and a symbolic link where a tree directory belongs.
    fs::create_dir(td.join("mdtest_tree.0/file.mdtest.0.1")).unwrap();
    let outside = t.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("file.mdtest.0.4"), b"mine").unwrap();
    fs::remove_dir_all(td.join("mdtest_tree.0/mdtest_tree.2")).unwrap();
    std::os::unix::fs::symlink(&outside, td.join("mdtest_tree.0/mdtest_tree.2")).unwrap();
    let s = sweep_testdir(t.path(), "test-dir.0-0", &shape(PLANTED, 2)).unwrap();
    s.assert_kept(&[
        "mdtest_tree.0/notes.txt",
        "dir.mdtest.0.0/inside",
        "mdtest_tree.1/file.mdtest.0.9",
        "mdtest_tree.0/file.mdtest.0.1",
        "mdtest_tree.0/mdtest_tree.2",
    ]);
    for mine in [
        "mdtest_tree.0/notes.txt",
        "mdtest_tree.0/dir.mdtest.0.0/inside",
    ] {
        assert_eq!(fs::read(td.join(mine)).unwrap(), b"mine", "{mine}");
    }
    assert_eq!(fs::read(outside.join("file.mdtest.0.4")).unwrap(), b"mine");
    assert!(td.join("mdtest_tree.0/mdtest_tree.2").is_symlink());
    // mdtest's own entries went: the file beside the user's, the renamed directory.
    assert!(!td
        .join("mdtest_tree.0/mdtest_tree.1/file.mdtest.0.3")
        .exists());
    assert!(!td.join("mdtest_tree.0/dir.mdtest.1.1-XX").exists());
    let e = s.into_result(&td).unwrap_err().to_string();
    assert!(e.contains("fslab did not make these entries"), "{e}");
}

#[test]
fn a_test_directory_that_is_not_one_is_left_alone() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("test-dir.0-0"), b"mine").unwrap();
    let sh = shape("-n 4", 1);
    let s = sweep_testdir(t.path(), "test-dir.0-0", &sh).unwrap();
    assert_eq!(s.kept.len(), 1);
    assert_eq!(fs::read(t.path().join("test-dir.0-0")).unwrap(), b"mine");
    assert!(sweep_testdir(t.path(), "test-dir.1-0", &sh)
        .unwrap()
        .kept
        .is_empty());
    // A tree of another rank count or another tree name in the test directory stays.
    fs::create_dir_all(t.path().join("test-dir.2-0/mdtest_tree.1.0")).unwrap();
    let s = sweep_testdir(t.path(), "test-dir.2-0", &sh).unwrap();
    assert!(
        s.kept.iter().any(|k| k.contains("mdtest_tree.1.0")),
        "{:?}",
        s.kept
    );
    assert!(t.path().join("test-dir.2-0/mdtest_tree.1.0").is_dir());
}

#[test]
fn a_killed_runs_test_directory_is_removed_through_its_record_only() {
    use crate::workload::mdtest::record::Keeper;
    let t = tempfile::tempdir().unwrap();
    let sh = shape(PLANTED, 2);
    let mut k = Keeper::new(t.path(), sh);
    k.begin("test-dir.0-0").unwrap();
    plant(t.path());
    k.made("test-dir.0-0").unwrap();
    let s = sweep_recorded(t.path(), "test-dir.0-0").unwrap();
    assert_eq!(s.files, 2);
    assert!(names(t.path()).is_empty(), "directory and record gone");
    // No record: refused, nothing touched.
    plant(t.path());
    let e = sweep_recorded(t.path(), "test-dir.0-0").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(t
        .path()
        .join("test-dir.0-0/mdtest_tree.0/file.mdtest.1.0")
        .is_file());
    // A record whose directory is gone: the record goes.
    let mut k = Keeper::new(t.path(), sh);
    k.begin("test-dir.5-0").unwrap();
    sweep_recorded(t.path(), "test-dir.5-0").unwrap();
    assert_eq!(names(t.path()), ["test-dir.0-0"]);
}
