use super::*;

fn ident(p: &Path) -> Ident {
    Ident::of(&rustix::fs::lstat(p).unwrap())
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
    let d = open_dir_at(rustix::fs::CWD, t.path()).unwrap();
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
    let d = open_dir_at(rustix::fs::CWD, t.path()).unwrap();
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
    // Above \377 is no byte: kept as written (the kernel writes a backslash as \134).
    assert_eq!(unescape("/x\\777"), "/x\\777");
}

/// Make `depth` directories, each inside the last, below `dir/name` (one descriptor at a
/// time, so the test itself needs no deep stack or many descriptors).
fn deep_chain(dir: &Path, name: &str, depth: usize) {
    std::fs::create_dir(dir.join(name)).unwrap();
    let mut cur = open_dir_at(rustix::fs::CWD, dir.join(name)).unwrap();
    for i in 0..depth {
        let n = format!("d{}", i % 10);
        rustix::fs::mkdirat(&cur, n.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        if i % 7 == 0 {
            rustix::fs::openat(
                &cur,
                "f",
                OFlags::CREATE | OFlags::WRONLY,
                Mode::from_raw_mode(0o644),
            )
            .unwrap();
        }
        cur = open_dir_at(&cur, n.as_str()).unwrap();
    }
}

#[test]
fn a_tree_of_any_depth_is_removed_without_recursion_or_a_descriptor_per_level() {
    let t = tempfile::tempdir().unwrap();
    // 30,000 levels: the recursive removal overflowed its stack (or ran out of descriptors).
    deep_chain(t.path(), "deep", 30_000);
    // Beside it, a wide directory and a symbolic link out, which is removed, not followed.
    std::fs::create_dir_all(t.path().join("deep/wide")).unwrap();
    for i in 0..300 {
        std::fs::create_dir(t.path().join(format!("deep/wide/s{i}"))).unwrap();
        std::fs::write(t.path().join(format!("deep/wide/s{i}/x")), b"x").unwrap();
    }
    std::fs::write(t.path().join("outside"), b"keep").unwrap();
    std::os::unix::fs::symlink(t.path().join("outside"), t.path().join("deep/wide/link")).unwrap();
    let id = ident(&t.path().join("deep"));
    let parent = open_dir_at(rustix::fs::CWD, t.path()).unwrap();
    // Run where the stack is small, as a worker thread's would be.
    let r = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || remove_at(parent.as_fd(), OsStr::new("deep"), Kind::Tree, Some(id)))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(r, Ok(Removed::Done));
    assert!(!t.path().join("deep").exists());
    assert_eq!(std::fs::read(t.path().join("outside")).unwrap(), b"keep");
}

#[test]
fn levels_deeper_than_the_kept_descriptors_are_found_again_through_dotdot() {
    // Below KEEP_OPEN levels an ancestor's descriptor is let go and opened again through
    // `..` on the way up, and used only when it is the same directory (device and inode).
    let t = tempfile::tempdir().unwrap();
    deep_chain(t.path(), "chain", KEEP_OPEN * 3);
    let parent = open_dir_at(rustix::fs::CWD, t.path()).unwrap();
    let id = ident(&t.path().join("chain"));
    assert_eq!(
        remove_at(parent.as_fd(), OsStr::new("chain"), Kind::Tree, Some(id)),
        Ok(Removed::Done)
    );
    assert!(!t.path().join("chain").exists());
}
