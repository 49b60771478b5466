use super::*;

fn shape(args: &[&str], ranks: u32) -> Shape {
    let p = crate::workload::mdtest::parse(args).unwrap().params;
    let lay = p.validate().unwrap();
    Shape::new(&p, lay, ranks)
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
    let s = shape(&["-n", "10", "-z", "1"], 1);
    let mut k = FsKeeper::new(t.path(), s);
    k.begin("test-dir.0-0").unwrap();
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    k.made("test-dir.0-0").unwrap();
    k.finished("test-dir.0-0", 7, false).unwrap();
    let rec = read(t.path(), "test-dir.0-0").unwrap().unwrap();
    assert_eq!(rec.files, Some(7));
    assert!(rec.dev.is_some() && rec.ino.is_some());
    assert_eq!(rec.shape, s);
    // A later run of the same shape proves it and learns the file count.
    let mut later = FsKeeper::new(t.path(), s);
    assert_eq!(later.verify("test-dir.0-0").unwrap(), Some(7));
    assert_eq!(later.owned(), ["test-dir.0-0"]);
    // Another shape is refused, naming both.
    let other = shape(&["-n", "10", "-z", "1", "-u"], 2);
    let e = verify(t.path(), "test-dir.0-0", &other)
        .unwrap_err()
        .to_string();
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
    let e = verify(t.path(), "test-dir.0-0", &s)
        .unwrap_err()
        .to_string();
    assert!(e.contains("inode differs"), "{e}");
    // Removed with its directory.
    later.finished("test-dir.0-0", 7, true).unwrap();
    assert!(read(t.path(), "test-dir.0-0").unwrap().is_none());
    assert!(later.owned().is_empty());
}

#[test]
fn unrecorded_odd_and_foreign_directories_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let s = shape(&["-n", "10"], 1);
    std::fs::create_dir(t.path().join("test-dir.0-0")).unwrap();
    let e = verify(t.path(), "test-dir.0-0", &s).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("no fslab record"), "{e}");
    for bad in ["results", "../x", "test-dir.0-0/..", ""] {
        let e = verify(t.path(), bad, &s).unwrap_err().to_string();
        assert!(
            e.contains("not an mdtest test directory name"),
            "{bad}: {e}"
        );
    }
    // A symbolic link with a record: still refused.
    std::fs::create_dir(t.path().join("elsewhere")).unwrap();
    let mut k = FsKeeper::new(t.path(), s);
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
    let e = verify(t.path(), "test-dir.1-0", &s)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a directory"), "{e}");
    // A record of something else under this name.
    std::fs::write(path(t.path(), "test-dir.0-0"), "{\"kind\": \"fdtree\"}").unwrap();
    let e = verify(t.path(), "test-dir.0-0", &s)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an fslab mdtest record"), "{e}");
    assert!(t.path().join("test-dir.0-0").is_dir(), "nothing touched");
    assert!(t.path().join("elsewhere").is_dir());
}
