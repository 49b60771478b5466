use super::*;
use std::os::unix::fs::MetadataExt;

fn ident(p: &Path) -> Ident {
    let md = std::fs::symlink_metadata(p).unwrap();
    Ident {
        dev: md.dev(),
        ino: md.ino(),
    }
}

#[test]
fn paths_outside_or_through_dots_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let r = Root::open(t.path()).unwrap();
    let ok = r.components(&t.path().join("runs/1/images")).unwrap();
    assert_eq!(ok, vec!["runs", "1", "images"]);
    for bad in [
        t.path().join("runs/1/../../victim"),
        t.path().join("runs/./1"),
        PathBuf::from("/elsewhere/x"),
    ] {
        let e = r.components(&bad).unwrap_err();
        assert!(e.contains("left alone"), "{bad:?}: {e}");
    }
}

#[test]
fn a_symbolic_link_on_the_way_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let outside = t.path().join("outside");
    std::fs::create_dir_all(outside.join("images")).unwrap();
    std::fs::write(outside.join("images/victim.img"), b"keep").unwrap();
    let root = t.path().join("work");
    std::fs::create_dir_all(root.join("runs/1")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("runs/1/link")).unwrap();
    let r = Root::open(&root).unwrap();
    let e = r
        .parent_of(&root.join("runs/1/link/images/victim.img"))
        .unwrap_err();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(
        std::fs::read(outside.join("images/victim.img")).unwrap(),
        b"keep"
    );
    // The walk used where openat2 is missing refuses it too.
    let comps: Vec<OsString> = ["runs", "1", "link"].iter().map(OsString::from).collect();
    assert!(r.walk(&comps).is_err());
}

#[test]
fn only_the_recorded_entry_of_the_recorded_kind_is_removed() {
    let t = tempfile::tempdir().unwrap();
    let d = rustix::fs::open(t.path(), dir_flags(), Mode::empty()).unwrap();
    let f = t.path().join("f");
    std::fs::write(&f, b"x").unwrap();
    let before = ident(&f);
    // Replaced by another file at the same name: left.
    std::fs::remove_file(&f).unwrap();
    std::fs::write(t.path().join("other"), b"y").unwrap();
    std::fs::write(&f, b"user's").unwrap();
    let e = remove_at(d.as_fd(), OsStr::new("f"), Kind::File, Some(before)).unwrap_err();
    assert!(e.contains("differ"), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), b"user's");
    // A directory where a file was made: left.
    std::fs::create_dir(t.path().join("dir")).unwrap();
    assert!(remove_at(d.as_fd(), OsStr::new("dir"), Kind::File, None).is_err());
    // A symbolic link where a directory was made: left, and its target too.
    std::os::unix::fs::symlink(t.path().join("dir"), t.path().join("ln")).unwrap();
    assert!(remove_at(d.as_fd(), OsStr::new("ln"), Kind::Tree, None).is_err());
    assert!(t.path().join("dir").is_dir());
    // The right one goes.
    let now = ident(&f);
    assert_eq!(
        remove_at(d.as_fd(), OsStr::new("f"), Kind::File, Some(now)),
        Ok(Removed::Done)
    );
    assert_eq!(
        remove_at(d.as_fd(), OsStr::new("f"), Kind::File, Some(now)),
        Ok(Removed::Absent)
    );
}

#[test]
fn a_tree_goes_but_not_what_its_links_point_to() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("v"), b"keep").unwrap();
    let tree = t.path().join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::write(tree.join("a/b/f"), b"x").unwrap();
    std::os::unix::fs::symlink(&victim, tree.join("a/to-victim")).unwrap();
    let d = rustix::fs::open(t.path(), dir_flags(), Mode::empty()).unwrap();
    let id = ident(&tree);
    assert_eq!(
        remove_at(d.as_fd(), OsStr::new("tree"), Kind::Tree, Some(id)),
        Ok(Removed::Done)
    );
    assert!(!tree.exists());
    assert_eq!(std::fs::read(victim.join("v")).unwrap(), b"keep");
}

#[test]
fn mountinfo_escapes_are_read_back() {
    assert_eq!(unescape("/a\\040b\\011c"), "/a b\tc");
    assert_eq!(unescape("/plain"), "/plain");
    assert_eq!(unescape("/end\\"), "/end\\");
}
