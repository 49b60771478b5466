//! The cage fslab runs fio in (`safe::cage`), tested with a shell as the caged program: as
//! root, everything but the writable directory is read-only, device nodes do not work, the
//! process sees no process outside its own and cannot undo any of it. Every victim is a
//! file, directory, tmpfs or device node this test made itself.

mod common;

use fslab::safe::cage::Cage;
use std::path::Path;
use std::process::Command;

/// Run `script` with `sh -c` in a cage that may write only `w`; (exit code, stdout, stderr).
fn caged_sh(w: &Path, script: &str) -> (i32, String, String) {
    let cage = Cage {
        writable: vec![w.to_path_buf()],
        cwd: w.to_path_buf(),
    };
    let mut c = Command::new("sh");
    c.arg("-c").arg(script).current_dir(w);
    cage.apply(&mut c, "test-owner").unwrap();
    let out = c.output().expect("spawn the caged shell");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

struct Victims {
    _t: tempfile::TempDir,
    w: std::path::PathBuf,
    file: std::path::PathBuf,
    dir: std::path::PathBuf,
}

fn victims() -> Victims {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("cell");
    std::fs::create_dir(&w).unwrap();
    let file = t.path().join("victim-file");
    std::fs::write(&file, b"precious bytes\n").unwrap();
    let dir = t.path().join("victim-dir");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inside"), b"also precious\n").unwrap();
    Victims {
        w: std::fs::canonicalize(&w).unwrap(),
        file: std::fs::canonicalize(&file).unwrap(),
        dir: std::fs::canonicalize(&dir).unwrap(),
        _t: t,
    }
}

fn unchanged(v: &Victims) {
    assert_eq!(std::fs::read(&v.file).unwrap(), b"precious bytes\n");
    assert_eq!(
        std::fs::read(v.dir.join("inside")).unwrap(),
        b"also precious\n"
    );
    let names: Vec<_> = std::fs::read_dir(&v.dir).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "nothing added to the victim directory");
}

#[test]
fn privileged_the_cage_writes_only_its_directory() {
    if !common::require_root("privileged_the_cage_writes_only_its_directory") {
        return;
    }
    let v = victims();
    let script = format!(
        r#"
echo inside > ok.txt || exit 10
echo x > {f} && echo WROTE-FILE
rm -rf {d} && echo REMOVED-DIR
echo y > {d}/new && echo ADDED
ln {f} hard 2>/dev/null && echo LINKED
mv {f} moved 2>/dev/null && echo MOVED
mount -o remount,rw / 2>/dev/null && echo REMOUNTED
mount -t tmpfs x {d} 2>/dev/null && echo MOUNTED
umount -l / 2>/dev/null && echo UMOUNTED
mknod node c 1 3 2>/dev/null && echo MKNOD
echo z > /proc/sys/vm/drop_caches 2>/dev/null && echo SYSCTL
ls /dev | tr '\n' ' '
echo
grep CapEff /proc/self/status
ls /proc | grep -c '^[0-9]'
grep NoNewPrivs /proc/self/status
"#,
        f = v.file.display(),
        d = v.dir.display()
    );
    let (code, out, err) = caged_sh(&v.w, &script);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    for escape in [
        "WROTE-FILE",
        "REMOVED-DIR",
        "ADDED",
        "LINKED",
        "MOVED",
        "REMOUNTED",
        "MOUNTED",
        "UMOUNTED",
        "MKNOD",
        "SYSCTL",
    ] {
        assert!(!out.contains(escape), "{escape} succeeded:\n{out}\n{err}");
    }
    assert_eq!(std::fs::read(v.w.join("ok.txt")).unwrap(), b"inside\n");
    unchanged(&v);
    assert!(out.contains("null random urandom zero"), "{out}");
    // At most CAP_CHOWN, DAC_OVERRIDE, FOWNER, FSETID, SETGID, SETUID, IPC_LOCK, SYS_NICE,
    // SYS_RESOURCE (bits 0,1,3,4,6,7,14,23,24; a container may have withheld some).
    let eff = out
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:\t"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .expect("CapEff line");
    assert_eq!(eff & !0x0180_40db, 0, "{out}");
    assert_eq!(eff & (1 << 21), 0, "no CAP_SYS_ADMIN");
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    // Its own PID namespace: the shell, grep's pipeline and ls, nothing of the host.
    let procs: usize = out
        .lines()
        .rev()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(999);
    assert!(procs <= 4, "{procs} processes visible:\n{out}");
}

#[test]
fn privileged_device_nodes_outside_dev_do_not_work_in_the_cage() {
    if !common::require_root("privileged_device_nodes_outside_dev_do_not_work_in_the_cage") {
        return;
    }
    let v = victims();
    // A loop device over an image this test made, and a node for it outside /dev.
    let img = v.dir.join("disk.img");
    std::fs::write(&img, vec![0x5a; 1 << 20]).unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success(), "losetup: {out:?}");
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let md = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&dev).unwrap());
    let node = v.w.join("disk-node");
    let st = Command::new("mknod")
        .arg(&node)
        .arg("b")
        .arg(libc_major(md).to_string())
        .arg(libc_minor(md).to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let script = format!(
        "dd if=/dev/zero of={n} bs=4096 count=1 conv=notrunc 2>/dev/null && echo WROTE-NODE; dd if=/dev/zero of={dev} bs=4096 count=1 conv=notrunc 2>/dev/null && echo WROTE-DEV; true",
        n = node.display()
    );
    let (code, out, err) = caged_sh(&v.w, &script);
    let _ = Command::new("losetup").arg("-d").arg(&dev).status();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("WROTE"), "{out}");
    assert_eq!(std::fs::read(&img).unwrap(), vec![0x5a; 1 << 20]);
}

#[test]
fn privileged_a_killed_parent_leaves_nothing_of_the_cage_running() {
    if !common::require_root("privileged_a_killed_parent_leaves_nothing_of_the_cage_running") {
        return;
    }
    let v = victims();
    let mark = format!("cage-test-{}", std::process::id());
    // The caged shell starts a background process that ignores SIGTERM and SIGHUP and
    // detaches into its own session, then waits.
    let cage = Cage {
        writable: vec![v.w.clone()],
        cwd: v.w.clone(),
    };
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("setsid sh -c 'trap \"\" TERM HUP; sleep 300' & sleep 300")
        .current_dir(&v.w);
    cage.apply(&mut c, &mark).unwrap();
    let mut child = c.spawn().unwrap();
    common::wait_for("the caged processes", || {
        fslab::safe::procs::caged_by(&mark).len() >= 3
    });
    // Kill the process outside the namespace (as fslab's death would): the kernel ends the
    // namespace and everything in it.
    child.kill().unwrap();
    child.wait().unwrap();
    common::wait_for("the cage to empty", || {
        fslab::safe::procs::caged_by(&mark).is_empty()
    });
}

fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
}
