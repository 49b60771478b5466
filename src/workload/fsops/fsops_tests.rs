use super::*;
use std::os::unix::fs::PermissionsExt;

fn excl(bytes: u64, fsync: bool) -> CreateHow {
    CreateHow {
        bytes,
        fsync,
        exclusive: true,
        mode: 0o664,
    }
}

#[test]
fn fs_ops_do_every_operation_on_a_real_directory() {
    let t = tempfile::tempdir().unwrap();
    let mut ops = FsOps::with_buffers(3000, 100);
    let root = FsOps::open_path(t.path()).unwrap();
    let at = |p: &str| t.path().join(p);
    let code = |e: io::Error| e.raw_os_error();
    ops.mkdir(&root, c"d").unwrap();
    let d = ops.open_dir(&root, c"d").unwrap();
    ops.create(&d, c"f", excl(3000, true)).unwrap();
    assert_eq!(std::fs::read(at("d/f")).unwrap(), vec![0u8; 3000]);
    // O_EXCL: never into an entry that exists.
    let e = ops.create(&d, c"f", excl(1, false)).unwrap_err();
    assert_eq!(code(e), Some(libc::EEXIST));
    // Without O_EXCL (fdtree's create) the file is truncated to the new size.
    ops.create_file(&d, c"f", 10).unwrap();
    assert_eq!(std::fs::metadata(at("d/f")).unwrap().len(), 10);
    let mode = std::fs::metadata(at("d/f")).unwrap().permissions();
    assert_eq!(mode.mode() & 0o600, 0o600);
    assert_eq!(ops.read_file(&d, c"f", 100).unwrap(), 10, "short file");
    ops.create(&d, c"g", excl(5000, false)).unwrap();
    assert_eq!(ops.read_file(&d, c"g", 4000).unwrap(), 4000);
    assert_eq!(ops.stat(&d, c"g").unwrap(), Kind::File);
    assert_eq!(ops.stat(&root, c"d").unwrap(), Kind::Dir);
    assert_eq!(ops.stat(&root, c"d/g").unwrap(), Kind::File, "a path below");
    std::os::unix::fs::symlink("g", at("d/link")).unwrap();
    assert_eq!(ops.stat(&d, c"link").unwrap(), Kind::Other, "not followed");
    assert_eq!(
        code(ops.read_file(&d, c"link", 1).unwrap_err()),
        Some(libc::ELOOP)
    );
    assert_eq!(std::fs::read_dir(at("d")).unwrap().count(), 3);
    ops.mkdir(&root, c"e").unwrap();
    let e = ops.open_dir(&root, c"e").unwrap();
    ops.rename(&d, c"g", &e, c"h").unwrap();
    assert!(at("e/h").is_file());
    assert_eq!(code(ops.stat(&d, c"g").unwrap_err()), Some(libc::ENOENT));
    for (dir, name) in [(&d, c"f"), (&d, c"link"), (&e, c"h")] {
        ops.unlink(dir, name).unwrap();
    }
    assert_eq!(std::fs::read_dir(at("d")).unwrap().count(), 0);
    ops.mkdir(&d, c"sub").unwrap();
    std::fs::write(at("d/sub/user"), b"x").unwrap();
    assert_eq!(
        code(ops.rmdir(&d, c"sub").unwrap_err()),
        Some(libc::ENOTEMPTY)
    );
    std::fs::remove_file(at("d/sub/user")).unwrap();
    ops.rmdir(&d, c"sub").unwrap();
    drop((d, e));
    ops.rmdir(&root, c"d").unwrap();
    ops.rmdir(&root, c"e").unwrap();
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn open_dir_does_not_follow_a_symbolic_link() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("real")).unwrap();
    std::os::unix::fs::symlink("real", t.path().join("link")).unwrap();
    let mut ops = FsOps::new(0);
    let root = FsOps::open_path(t.path()).unwrap();
    assert!(ops.open_dir(&root, c"real").is_ok());
    assert!(ops.open_dir(&root, c"link").is_err());
}

#[test]
fn a_write_without_a_buffer_grows_one() {
    let t = tempfile::tempdir().unwrap();
    let mut ops = FsOps::with_buffers(0, 0);
    let root = FsOps::open_path(t.path()).unwrap();
    ops.create(&root, c"f", excl(100, false)).unwrap();
    assert_eq!(std::fs::metadata(t.path().join("f")).unwrap().len(), 100);
    assert_eq!(ops.read_file(&root, c"f", 100).unwrap(), 100);
}

#[test]
fn the_checked_recorder_refuses_what_the_kernel_would() {
    let mut r = Recorder::checked(&["R"]);
    let root = "R".to_string();
    r.mkdir(&root, c"a").unwrap();
    let code = |e: io::Error| e.raw_os_error().unwrap();
    assert_eq!(code(r.mkdir(&root, c"a").unwrap_err()), libc::EEXIST);
    assert_eq!(code(r.mkdir(&root, c"x/y").unwrap_err()), libc::ENOENT);
    let a = r.open_dir(&root, c"a").unwrap();
    r.create(&a, c"f", excl(7, true)).unwrap();
    let again = r.create(&a, c"f", excl(7, false));
    assert_eq!(code(again.unwrap_err()), libc::EEXIST);
    r.create_file(&a, c"f", 3).unwrap();
    assert_eq!(r.read_file(&a, c"f", 10).unwrap(), 3);
    assert_eq!(code(r.read_file(&root, c"a", 1).unwrap_err()), libc::EISDIR);
    assert_eq!(r.stat(&a, c"f").unwrap(), Kind::File);
    assert_eq!(code(r.stat(&a, c"nope").unwrap_err()), libc::ENOENT);
    assert_eq!(code(r.rmdir(&root, c"a").unwrap_err()), libc::ENOTEMPTY);
    assert_eq!(code(r.unlink(&root, c"a").unwrap_err()), libc::EISDIR);
    r.mkdir(&root, c"b").unwrap();
    let over = r.rename(&root, c"a", &root, c"b");
    assert_eq!(code(over.unwrap_err()), libc::EEXIST);
    r.rename(&root, c"a", &root, c"c").unwrap();
    assert_eq!(r.paths(), ["R", "R/b", "R/c", "R/c/f"]);
    r.unlink(&"R/c".to_string(), c"f").unwrap();
    r.rmdir(&root, c"c").unwrap();
    r.rmdir(&root, c"b").unwrap();
    assert_eq!(
        r.text(),
        "mkdir R/a\nopen R/a\ncreate R/a/f 7 fsync excl\ncreate R/a/f 3\nread R/a/f 10\n\
         stat R/a/f\nmkdir R/b\nrename R/a R/c\nunlink R/c/f\nrmdir R/c\nrmdir R/b"
    );
}

#[test]
fn the_recorder_injects_failures_and_leaves_out_opens_on_request() {
    let mut r = Recorder::default()
        .without_opens()
        .fail_on("create", "L0F1", libc::ENOSPC);
    let root = "R".to_string();
    let d = r.open_dir(&root, c"L1D1").unwrap();
    r.create_file(&d, c"L0F2", 1).unwrap();
    let e = r.create_file(&d, c"L0F1", 1).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(r.text(), "create R/L1D1/L0F2 1");
}

#[test]
fn null_ops_succeed_without_touching_anything() {
    let mut n = NullOps;
    n.mkdir(&(), c"/nonexistent/x").unwrap();
    assert_eq!(n.read_file(&(), c"x", 5).unwrap(), 5);
    assert_eq!(n.stat(&(), c"x").unwrap(), Kind::File);
}

#[test]
fn direct_io_bypasses_the_page_cache_both_ways() {
    let Some(t) = direct_io_tempdir() else {
        return;
    };
    let root = FsOps::open_path(t.path()).unwrap();
    let mut direct = FsOps::with_buffers(8192, 8192).direct(true);
    let mut buffered = FsOps::with_buffers(8192, 8192);
    direct.create(&root, c"d", excl(8192, false)).unwrap();
    buffered.create(&root, c"b", excl(8192, false)).unwrap();
    assert_eq!(resident_pages(&t.path().join("d")).unwrap(), 0);
    assert_eq!(resident_pages(&t.path().join("b")).unwrap(), 2);
    assert_eq!(direct.read_file(&root, c"d", 8192).unwrap(), 8192);
    let direct_pages = resident_pages(&t.path().join("d")).unwrap();
    assert_eq!(direct_pages, 0, "read direct");
    // A length O_DIRECT cannot move is the kernel's EINVAL, never a silent buffered read.
    let e = direct.read_file(&root, c"d", 100).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn mknod_makes_an_empty_regular_file_without_opening_it() {
    let t = tempfile::tempdir().unwrap();
    let root = FsOps::open_path(t.path()).unwrap();
    let mut ops = FsOps::with_buffers(0, 0).mknod(true);
    ops.create(&root, c"n", excl(0, false)).unwrap();
    let m = std::fs::symlink_metadata(t.path().join("n")).unwrap();
    assert!(m.is_file() && m.len() == 0);
    assert_eq!(m.permissions().mode() & 0o777, 0o400);
    let e = ops.create(&root, c"n", excl(0, false)).unwrap_err();
    assert_eq!(
        e.raw_os_error(),
        Some(libc::EEXIST),
        "never over an entry that exists"
    );
}
