use super::*;
use serde::Deserialize;

/// A record of a made-up engine, so the rule is tested apart from the engines that use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rec {
    kind: String,
    dir: String,
    created_at: String,
    dev: Option<u64>,
    ino: Option<u64>,
}

impl_record!(Rec, name: dir, prefix: ".fslab-probe.", kind: "probe", what: "probe record");

fn rec(dir: &str) -> Rec {
    Rec {
        kind: "probe".into(),
        dir: dir.into(),
        created_at: crate::units::timestamp_now(),
        dev: None,
        ino: None,
    }
}

const TOUCH: Purpose = Purpose {
    verb: "touch",
    hint: "",
};

/// Why `prove` refuses `dir/name`.
fn refusal(dir: &Path, name: &str, purpose: Purpose) -> String {
    prove::<Rec>(dir, name, purpose).unwrap_err().to_string()
}

#[test]
fn a_completed_record_proves_its_directory_and_no_other() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), &rec("d")).unwrap();
    assert!(path::<Rec>(t.path(), "d").ends_with(".fslab-probe.d"));
    std::fs::create_dir(t.path().join("d")).unwrap();
    complete::<Rec>(t.path(), "d").unwrap();
    let r: Rec = prove(t.path(), "d", TOUCH).unwrap();
    assert!(r.made().is_some());
    // The same name made again by someone else: another inode, refused.
    std::fs::rename(t.path().join("d"), t.path().join("moved")).unwrap();
    std::fs::create_dir(t.path().join("d")).unwrap();
    let e = refusal(t.path(), "d", TOUCH);
    assert!(
        e.contains("inode differs") && e.contains("will not touch"),
        "{e}"
    );
    remove::<Rec>(t.path(), "d").unwrap();
    assert!(read::<Rec>(t.path(), "d").unwrap().is_none());
    remove::<Rec>(t.path(), "d").unwrap();
}

#[test]
fn a_record_of_another_engine_or_directory_proves_nothing() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("a")).unwrap();
    let mut other = rec("a");
    other.kind = "fdtree".into();
    write(t.path(), &other).unwrap();
    let e = refusal(t.path(), "a", TOUCH);
    assert!(e.contains("another directory"), "{e}");
    // A record copied under another directory's name.
    std::fs::create_dir(t.path().join("b")).unwrap();
    write(t.path(), &rec("a")).unwrap();
    std::fs::copy(path::<Rec>(t.path(), "a"), path::<Rec>(t.path(), "b")).unwrap();
    let e = refusal(t.path(), "b", TOUCH);
    assert!(e.contains("another directory"), "{e}");
}

#[test]
fn links_files_and_unrecorded_directories_are_refused() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("real")).unwrap();
    std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
    write(t.path(), &rec("link")).unwrap();
    let e = refusal(t.path(), "link", TOUCH);
    assert!(e.contains("not a directory"), "{e}");
    let e = refusal(t.path(), "real", TOUCH);
    assert!(e.contains("no fslab record"), "{e}");
    let hint = Purpose {
        verb: "remove",
        hint: "; make it first",
    };
    let e = refusal(t.path(), "absent", hint);
    assert!(e.ends_with("; make it first"), "{e}");
}

#[test]
fn a_record_without_an_inode_covers_only_a_directory_born_just_after_it() {
    let t = tempfile::tempdir().unwrap();
    // Born after its record, within the window: the run was killed before completing it.
    write(t.path(), &rec("fresh")).unwrap();
    std::fs::create_dir(t.path().join("fresh")).unwrap();
    prove::<Rec>(t.path(), "fresh", TOUCH).unwrap();
    for (name, created_at, said) in [
        // A record written long before the directory came.
        ("late", "2020-01-01T00:00:00.000Z", "has no inode"),
        // An unreadable time proves nothing either.
        ("odd", "yesterday", "unreadable time"),
    ] {
        let mut r = rec(name);
        r.created_at = created_at.into();
        write(t.path(), &r).unwrap();
        std::fs::create_dir(t.path().join(name)).unwrap();
        let e = refusal(t.path(), name, TOUCH);
        assert!(e.contains(said), "{e}");
    }
}

#[test]
fn update_changes_an_existing_record_and_ignores_a_missing_one() {
    let t = tempfile::tempdir().unwrap();
    update::<Rec>(t.path(), "none", |r| r.dev = Some(1)).unwrap();
    assert!(read::<Rec>(t.path(), "none").unwrap().is_none());
    write(t.path(), &rec("x")).unwrap();
    update::<Rec>(t.path(), "x", |r| r.ino = Some(42)).unwrap();
    assert_eq!(read::<Rec>(t.path(), "x").unwrap().unwrap().ino, Some(42));
}
