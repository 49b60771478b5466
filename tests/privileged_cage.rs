//! The cage fslab runs fio and the provisioning tools in (`safe::cage`), tested with a shell or
//! this test binary (a helper role, `FSLAB_CAGE_TEST_ROLE`) as the caged program: as root,
//! everything but the writable directory is read-only, device nodes do not work but the
//! cell's own, the process sees no process, socket, shared memory or process group outside
//! its own, cannot undo any of it, and dies with fslab whatever user it became. Every victim
//! is a file, directory, tmpfs, device node, socket or segment this test made itself.

mod common;

use fslab::safe::cage::Cage;
use std::path::Path;
use std::process::Command;

/// Run `script` with `sh -c` in a cage that may write only `w`; (exit code, stdout, stderr).
fn caged_sh(w: &Path, script: &str) -> (i32, String, String) {
    let cage = Cage::job(vec![w.to_path_buf()], w.to_path_buf());
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
    // At most CAP_CHOWN, DAC_OVERRIDE, FOWNER, FSETID, SETGID, SETUID (bits 0,1,3,4,6,7; a
    // container may have withheld some): no IPC_LOCK, SYS_NICE or SYS_RESOURCE (issue 32).
    let eff = out
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:\t"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .expect("CapEff line");
    assert_eq!(eff & !0xdb, 0, "{out}");
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
    let cage = Cage::job(vec![v.w.clone()], v.w.clone());
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

// ---- the helper role: this test binary run inside a cage ---------------------------------

const ROLE: &str = "FSLAB_CAGE_TEST_ROLE";

/// What the caged helper does, by `FSLAB_CAGE_TEST_ROLE` (nothing when it is unset: then
/// this is an ordinary, empty test). It prints one line saying what happened.
#[test]
fn helper() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let (what, arg) = role.split_once(':').unwrap_or((role.as_str(), ""));
    let said = match what {
        "unix" => match std::os::unix::net::UnixStream::connect(arg) {
            Ok(_) => "CONNECTED".to_string(),
            Err(e) => format!("REFUSED {e}"),
        },
        "abstract" => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(arg.as_bytes()).unwrap();
            match std::os::unix::net::UnixStream::connect_addr(&addr) {
                Ok(_) => "CONNECTED".to_string(),
                Err(e) => format!("REFUSED {e}"),
            }
        }
        "tcp" => match std::net::TcpStream::connect(("127.0.0.1", arg.parse::<u16>().unwrap())) {
            Ok(_) => "CONNECTED".to_string(),
            Err(e) => format!("REFUSED {e}"),
        },
        "shm" => {
            // SAFETY: shmget with a key and no flags only looks the segment up.
            let id = unsafe { libc::shmget(arg.parse::<libc::key_t>().unwrap(), 0, 0) };
            if id >= 0 {
                "SHM-FOUND".to_string()
            } else {
                format!("SHM-ABSENT {}", std::io::Error::last_os_error())
            }
        }
        "uring" => {
            // io_uring_params is 120 bytes; zeroed asks for nothing special.
            let mut params = [0u8; 120];
            // SAFETY: io_uring_setup with a valid, writable params buffer.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_setup,
                    4 as libc::c_long,
                    params.as_mut_ptr(),
                )
            };
            if fd >= 0 {
                "URING-OK".to_string()
            } else {
                format!("URING-REFUSED {}", std::io::Error::last_os_error())
            }
        }
        "group" => {
            // SAFETY: ignore the signal here (it reaches this process too), then signal this
            // process's own group.
            let r = unsafe {
                libc::signal(libc::SIGUSR1, libc::SIG_IGN);
                libc::kill(0, libc::SIGUSR1)
            };
            format!("SIGNALLED-GROUP {r}")
        }
        "spawn" => {
            // Start `setpriv … sleep` caged (it switches to another user), say so, wait.
            let w = std::path::PathBuf::from(arg);
            let cage = Cage::job(vec![w.clone()], w.clone());
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sleep",
                "300",
            ])
            .current_dir(&w);
            cage.apply(&mut c, &std::env::var("FSLAB_CAGE_TEST_MARK").unwrap())
                .unwrap();
            let mut child = c.spawn().unwrap();
            println!("SPAWNED");
            let _ = child.wait();
            return;
        }
        other => panic!("unknown role {other}"),
    };
    println!("{said}");
}

/// Run this test binary's helper in a cage that may write `w`, as role `role`; its output.
fn caged_helper(w: &Path, role: &str) -> String {
    caged_helper_in(Cage::job(vec![w.to_path_buf()], w.to_path_buf()), w, role)
}

/// [`caged_helper`] in the cage given.
fn caged_helper_in(cage: Cage, w: &Path, role: &str) -> String {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "helper", "--nocapture", "--test-threads", "1"])
        .env(ROLE, role)
        .current_dir(w);
    cage.apply(&mut c, "test-owner").unwrap();
    let out = c.output().expect("spawn the caged helper");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn privileged_the_cage_reaches_no_socket_or_shared_memory_of_the_host() {
    if !common::require_root("privileged_the_cage_reaches_no_socket_or_shared_memory_of_the_host") {
        return;
    }
    let v = victims();
    let t = tempfile::tempdir().unwrap();
    // A unix socket at a path, an abstract one and a TCP listener on 127.0.0.1: each accepts
    // from this process (checked below), none from the cage.
    let path = t.path().join("daemon.sock");
    let unix = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let name = format!("fslab-cage-test-{}", std::process::id());
    let abs = {
        use std::os::linux::net::SocketAddrExt;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&a).unwrap()
    };
    let tcp = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = tcp.local_addr().unwrap().port();
    // A SysV shared-memory segment of the host's.
    let key = 0x7a00_0000 + (std::process::id() as libc::key_t & 0xffff);
    // SAFETY: a new segment of 4 KiB, removed at the end of the test.
    let shm = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o600) };
    assert!(shm >= 0, "shmget: {}", std::io::Error::last_os_error());
    for (role, reached) in [
        (format!("unix:{}", path.display()), "CONNECTED"),
        (format!("abstract:{name}"), "CONNECTED"),
        (format!("tcp:{port}"), "CONNECTED"),
        (format!("shm:{key}"), "SHM-FOUND"),
    ] {
        let out = caged_helper(&v.w, &role);
        assert!(!out.contains(reached), "{role}: {out}");
        assert!(
            out.contains("REFUSED") || out.contains("SHM-ABSENT"),
            "{role}: {out}"
        );
    }
    // Outside the cage the same helper reaches each of them: the refusals are the cage's.
    for role in [format!("unix:{}", path.display()), format!("tcp:{port}")] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "helper", "--nocapture", "--test-threads", "1"])
            .env(ROLE, &role)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("CONNECTED"),
            "{role}"
        );
    }
    // SAFETY: removing the segment made above.
    unsafe { libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()) };
    drop((unix, abs, tcp));
    unchanged(&v);
}

#[test]
fn privileged_the_cage_cannot_signal_fslabs_process_group() {
    if !common::require_root("privileged_the_cage_cannot_signal_fslabs_process_group") {
        return;
    }
    // This process counts SIGUSR1 instead of dying of it.
    let got = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(libc::SIGUSR1, std::sync::Arc::clone(&got)).unwrap();
    let v = victims();
    let out = caged_helper(&v.w, "group");
    assert!(out.contains("SIGNALLED-GROUP 0"), "{out}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        !got.load(std::sync::atomic::Ordering::Relaxed),
        "kill(0, …) in the cage reached the test's process group"
    );
}

#[test]
fn privileged_a_caged_program_that_changed_its_user_dies_with_fslab() {
    if !common::require_root("privileged_a_caged_program_that_changed_its_user_dies_with_fslab") {
        return;
    }
    let v = victims();
    let mark = format!("cage-tie-test-{}", std::process::id());
    // The spawner stands for fslab: it cages `setpriv --reuid=65534 sleep 300` and waits.
    let mut spawner = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "helper", "--nocapture", "--test-threads", "1"])
        .env(ROLE, format!("spawn:{}", v.w.display()))
        .env("FSLAB_CAGE_TEST_MARK", &mark)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for("the caged sleep, as another user", || {
        fslab::safe::procs::caged_by(&mark).iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t65534")))
        })
    });
    // fslab dies as hard as a process can.
    spawner.kill().unwrap();
    spawner.wait().unwrap();
    common::wait_for("the cage to empty after its fslab died", || {
        fslab::safe::procs::caged_by(&mark).is_empty()
    });
}

#[test]
fn privileged_a_read_only_mount_below_a_writable_directory_stays_read_only() {
    if !common::require_root(
        "privileged_a_read_only_mount_below_a_writable_directory_stays_read_only",
    ) {
        return;
    }
    let v = victims();
    // A read-only bind mount of a writable directory of the test's (read-only at the mount,
    // not in its file system: what `allow_outside` below a read-only bind met).
    let ro = v.w.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let st = Command::new("mount")
        .args(["--bind", "-o", "ro"])
        .arg(&v.dir)
        .arg(&ro)
        .status()
        .unwrap();
    assert!(st.success());
    let st = Command::new("mount")
        .args(["-o", "remount,bind,ro"])
        .arg(&ro)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(
        std::fs::write(ro.join("f"), b"x").is_err(),
        "read-only outside the cage"
    );
    let (code, out, err) = caged_sh(
        &v.w,
        "echo x > ro/f 2>/dev/null && echo WROTE-RO; echo y > ok.txt && echo WROTE-OK; true",
    );
    let _ = Command::new("umount").arg(&ro).status();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !out.contains("WROTE-RO"),
        "the read-only mount was written: {out}"
    );
    assert!(out.contains("WROTE-OK"), "{out}\n{err}");
    unchanged(&v);
}

#[test]
fn privileged_io_uring_only_for_a_job_that_needs_it() {
    if !common::require_root("privileged_io_uring_only_for_a_job_that_needs_it") {
        return;
    }
    let v = victims();
    // io_uring makes and connects sockets unseen by the seccomp filter: refused by default.
    let out = caged_helper(&v.w, "uring");
    assert!(out.contains("URING-REFUSED"), "{out}");
    let out = caged_helper_in(
        Cage::job(vec![v.w.clone()], v.w.clone()).with_io_uring(true),
        &v.w,
        "uring",
    );
    // Allowed for a job whose engine is io_uring (where the kernel has it at all).
    assert!(
        out.contains("URING-OK") || out.contains("not implemented"),
        "{out}"
    );
}

/// A directory of the test's own below `/dev/shm` (a tmpfs), removed when dropped.
fn shm_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fslab-cage-test-")
        .tempdir_in("/dev/shm")
        .unwrap()
}

#[test]
fn privileged_a_directory_below_dev_shm_is_writable_in_the_cage_and_nothing_else_there() {
    if !common::require_root(
        "privileged_a_directory_below_dev_shm_is_writable_in_the_cage_and_nothing_else_there",
    ) {
        return;
    }
    // `fslab fio -D /dev/shm/…` was refused: the cage's own /dev hid the directory.
    let t = shm_dir();
    let w = t.path().join("cell");
    std::fs::create_dir(&w).unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, b"precious bytes\n").unwrap();
    let beside = t.path().join("beside");
    let script = format!(
        r#"
echo inside > ok.txt || exit 10
echo inside > {w}/by-path.txt || exit 11
echo x > {v} && echo WROTE-VICTIM
echo y > {b} && echo WROTE-BESIDE
mkdir /dev/shm/fslab-cage-escape 2>/dev/null && echo WROTE-SHM
mount -o remount,rw /dev 2>/dev/null && echo REMOUNTED
ls /dev | tr '\n' ' '
echo
"#,
        w = w.display(),
        v = victim.display(),
        b = beside.display()
    );
    let (code, out, err) = caged_sh(&w, &script);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    for escape in ["WROTE-VICTIM", "WROTE-BESIDE", "WROTE-SHM", "REMOUNTED"] {
        assert!(!out.contains(escape), "{escape} succeeded:\n{out}\n{err}");
    }
    // Written on the host's tmpfs, by its relative and its absolute path.
    assert_eq!(std::fs::read(w.join("ok.txt")).unwrap(), b"inside\n");
    assert_eq!(std::fs::read(w.join("by-path.txt")).unwrap(), b"inside\n");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious bytes\n");
    assert!(!beside.exists() && !Path::new("/dev/shm/fslab-cage-escape").exists());
    // The cage's /dev: its four nodes and the way to the directory, nothing of the host's.
    assert!(out.contains("null random shm urandom zero"), "{out}");
    // /dev/shm itself, and anything else below /dev, is refused before anything runs.
    for p in ["/dev/shm", "/dev"] {
        let cage = Cage::job(vec![p.into()], w.clone());
        let e = cage.apply(&mut Command::new("true"), "x").unwrap_err();
        assert!(
            e.to_string().contains("cannot be made writable"),
            "{p}: {e}"
        );
    }
}
