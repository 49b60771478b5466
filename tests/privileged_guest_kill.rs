//! Issue 33: nothing of a guest study outlives a killed fslab, or a killed `linux.uml`.
//!
//! A study runs in a User-mode Linux guest on a `ram:` device (its image in `/dev/shm`); at a
//! moment drawn at random — while the guest boots, or once it has stored its first
//! repetition — SIGKILL goes to fslab (one test) or to the guest's kernel process (the
//! other). Afterwards no process
//! whose command line names the test's directory is left (the guest's kernel, its helpers,
//! the guest's own init and fslab, which once ran on untraced on the host), nothing is
//! mounted or attached from it, the host's store passes SQLite's integrity check and the
//! host's standard output holds text only (a guest process that outlived its tracer once
//! wrote database pages into it). `fslab cleanup` then removes everything the run left:
//! the guest's directory, its `ram:` image, the guest's run directories.
//!
//! Needs root and Debian's `user-mode-linux` (`scripts/install-deps --test`).

mod common;
#[path = "testdev/mod.rs"]
mod testdev;

use common::require_guest;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};
use testdev::{loops_under, mounts_under};

const STUDY: &str = r#"
name = "guest-kill"
[repetitions]
min = 60
cache = "cold"
[device]
data = "ram:128M"
[[factor]]
name = "fs"
values = [
  { label = "ext4", fs = "ext4" },
  { label = "jfs", fs = "jfs" },
]
[[workload]]
kind = "fdtree"
dirs = 3
files = 20
size_blocks = 1
levels = 2
"#;

#[derive(Clone, Copy, Debug)]
enum Victim {
    Fslab,
    Kernel,
}

/// Processes (other than this test) whose command line names `dir`.
fn processes_naming(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id();
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(&needle) {
            v.push((pid, cmd));
        }
    }
    v
}

/// The guest's kernel: the `linux.uml` naming `dir` whose parent is not a `linux.uml`.
fn kernel_process(dir: &Path) -> Option<u32> {
    let comm = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let parent = |pid: u32| -> u32 {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    };
    processes_naming(dir)
        .into_iter()
        .map(|(pid, _)| pid)
        .find(|&pid| comm(pid).trim() == "linux.uml" && comm(parent(pid)).trim() != "linux.uml")
}

fn stored_repetitions(db: &Path) -> i64 {
    let Ok(c) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    let _ = c.busy_timeout(Duration::from_millis(200));
    c.query_row("SELECT count(*) FROM trial WHERE status = 'ok'", [], |r| {
        r.get(0)
    })
    .unwrap_or(0)
}

fn kill_during_a_guest_study(victim: Victim) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let db = dir.join("results.db");
    let work = dir.join("work");
    let file = dir.join("study.toml");
    std::fs::write(&file, STUDY).unwrap();
    let out_path = dir.join("stdout.txt");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", &db)
        .env_remove("RUST_BACKTRACE")
        .args(["study", "run", "--guest", "uml:384M"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let host_pid = child.id();
    // A moment drawn at random: while the guest boots (its kernel has started), or while
    // the study runs in it (it has stored its first repetition in the host's store).
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let during_boot = nanos % 2 == 0;
    let t0 = Instant::now();
    let started = |child: &mut std::process::Child| {
        if let Some(st) = child.try_wait().unwrap() {
            panic!(
                "the study ended ({st}) before it was killed:\n{}",
                std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default()
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "not started in 120 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    while kernel_process(dir).is_none() {
        started(&mut child);
    }
    if !during_boot {
        while stored_repetitions(&db) < 1 {
            started(&mut child);
        }
    }
    // No process of the guest holds the host's standard output or error: its consoles are
    // pipes of fslab's.
    for (pid, _) in processes_naming(dir) {
        if pid == host_pid {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            assert!(
                target != out_path && target != dir.join("stderr.txt"),
                "process {pid} holds {} as {}",
                target.display(),
                fd.path().display()
            );
        }
    }
    let wait = Duration::from_millis(u64::from(nanos / 1000 % 1500));
    eprintln!(
        "{victim:?} killed {wait:?} after {}",
        if during_boot {
            "the guest's kernel started"
        } else {
            "the first stored repetition"
        }
    );
    std::thread::sleep(wait);
    let target = match victim {
        Victim::Fslab => host_pid,
        Victim::Kernel => kernel_process(dir).expect("the guest's kernel process"),
    };
    // SAFETY: kill(2) on a process this test started (or its guest's kernel).
    assert_eq!(unsafe { libc::kill(target as i32, libc::SIGKILL) }, 0);
    let status = child.wait().unwrap();
    if let Victim::Kernel = victim {
        assert_eq!(status.code(), Some(1), "fslab says the guest failed");
    }

    // Nothing that names the test's directory runs on: not the kernel, not its helpers, not
    // the guest's processes (the kernel is asynchronous in tearing a namespace down).
    let t0 = Instant::now();
    loop {
        let left = processes_naming(dir);
        if left.is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "left running after {victim:?} was killed: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(mounts_under(dir).is_empty(), "{:?}", mounts_under(dir));
    assert!(loops_under(dir).is_empty(), "{:?}", loops_under(dir));

    // The host's store is whole and its output is text.
    let c = rusqlite::Connection::open(&db).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    if !during_boot {
        assert!(stored_repetitions(&db) >= 1);
    }
    let out = std::fs::read(&out_path).unwrap();
    assert!(
        std::str::from_utf8(&out).is_ok()
            && !out.windows(4).any(|w| w[..3] == [0x37, 0x7f, 0x06])
            && !out.windows(15).any(|w| w == b"SQLite format 3"),
        "the host's output holds binary data ({} bytes)",
        out.len()
    );

    // cleanup removes what the run left, and a second finds nothing.
    let ram = PathBuf::from(format!("/dev/shm/fslab-guest-{host_pid}"));
    let cleanup = || {
        Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .env("FSLAB_DB", &db)
            .args(["cleanup", "--workdir"])
            .arg(&work)
            .output()
            .unwrap()
    };
    let first = cleanup();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(first.status.success(), "{said}");
    let mut left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "guest-work")
        .collect();
    if let Ok(runs) = std::fs::read_dir(work.join("guest-work/runs")) {
        left.extend(runs.flatten().map(|e| e.path().display().to_string()));
    }
    assert!(left.is_empty(), "left after cleanup: {left:?}\n{said}");
    assert!(!ram.exists(), "{} left\n{said}", ram.display());
    // (Killed while the guest booted, the study may not be stored yet.)
    let running: i64 = c
        .query_row(
            "SELECT count(*) FROM study WHERE status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(running, 0, "{said}");
    let second = cleanup();
    assert!(
        second.status.success()
            && String::from_utf8_lossy(&second.stdout).contains("nothing to clean"),
        "{}{}",
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&second.stderr)
    );
}

#[test]
fn privileged_killing_fslab_during_a_guest_study_leaves_nothing_running() {
    if !require_guest("privileged_killing_fslab_during_a_guest_study_leaves_nothing_running") {
        return;
    }
    kill_during_a_guest_study(Victim::Fslab);
}

#[test]
fn privileged_killing_the_guests_kernel_leaves_nothing_running() {
    if !require_guest("privileged_killing_the_guests_kernel_leaves_nothing_running") {
        return;
    }
    kill_during_a_guest_study(Victim::Kernel);
}

/// Ctrl-C while the guest boots (before its init listens) stops the study: exit 130, the
/// study marked interrupted, the resume command naming the user's file, nothing left running.
/// (A stop said once while the guest booted was lost and the whole study ran.)
#[test]
fn privileged_ctrl_c_while_the_guest_boots_interrupts_the_study_and_says_how_to_resume() {
    if !require_guest(
        "privileged_ctrl_c_while_the_guest_boots_interrupts_the_study_and_says_how_to_resume",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let db = dir.join("results.db");
    let file = dir.join("study.toml");
    std::fs::write(&file, STUDY.replace("min = 60", "min = 5")).unwrap();
    let mut child =
        common::default_signals(&mut Command::new(assert_cmd::cargo::cargo_bin("fslab")))
            .env("FSLAB_DB", &db)
            .args(["study", "run", "-q", "--guest", "uml:384M"])
            .arg(&file)
            .arg("--workdir")
            .arg(dir.join("work"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
    let t0 = Instant::now();
    while kernel_process(dir).is_none() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before the guest booted"
        );
        assert!(t0.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the process this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    let se = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert_eq!(status.code(), Some(130), "{se}");
    assert!(
        se.contains(&format!(
            "continue with `fslab study run {} --resume --guest uml:384M`",
            file.display()
        )),
        "{se}"
    );
    assert_eq!(
        se.matches("interrupted by signal").count(),
        1,
        "said once: {se}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let running: i64 = c
        .query_row(
            "SELECT count(*) FROM study WHERE status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(running, 0, "{se}");
    assert!(
        processes_naming(dir).is_empty(),
        "{:?}",
        processes_naming(dir)
    );
}
