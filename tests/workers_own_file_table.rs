//! Every engine's workers own their file-descriptor table (issue 31, doc/architecture.md
//! "Workers own their kernel state"): the tools fslab replaces run their workers as
//! processes, and threads sharing one table measure the table's lock on many cores.
//!
//! Proven by the kernel, not by timing: the binary runs each multi-worker engine, the test
//! finds its worker threads by name in `/proc/PID/task`, stops the process (so no thread is
//! half-way through exiting) and asks `kcmp(…, KCMP_FILES, …)` whether two threads share a
//! table. Every pair of workers, and every worker against the main thread, must differ.
//! Only directories this test made are used.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fslab::workload::workers::same_file_table;

/// The kernel answers kcmp here: a thread shares its table with itself and not with a
/// child process (fork copies the table).
fn require_kcmp() {
    let me = std::process::id() as i32;
    match same_file_table(me, me) {
        Ok(true) => {}
        Ok(false) => panic!("kcmp says this process does not share its own file table"),
        Err(e) => panic!(
            "kcmp(KCMP_FILES) is not available ({e}); this test needs a kernel with CONFIG_KCMP (or CONFIG_CHECKPOINT_RESTORE)"
        ),
    }
    let mut child = Command::new("sleep").arg("5").spawn().unwrap();
    let differs = same_file_table(me, child.id() as i32);
    let _ = child.kill();
    let _ = child.wait();
    assert!(!differs.unwrap(), "a child process has a table of its own");
}

/// Thread ids of `pid` whose name starts with `prefix`.
fn threads_named(pid: u32, prefix: &str) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<i32> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|tid| {
            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
                .is_ok_and(|c| c.trim_end().starts_with(prefix))
        })
        .collect();
    tids.sort();
    tids
}

/// Kills the engine if the test fails half-way.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        // SAFETY: plain signals to our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGCONT) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `fslab ARGS`, wait until at least `want` threads named `prefix` run, stop the
/// process, and check every pair of them and each against the main thread with kcmp; then
/// let it finish and require success.
fn check_engine(args: &[String], prefix: &str, want: usize) {
    let db = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("fslab");
    let child = Command::new(bin)
        .args(args)
        .env("FSLAB_DB", db.path().join("results.db"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = Running(child);
    let pid = run.0.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut checked = None;
    while checked.is_none() && Instant::now() < deadline {
        if run.0.try_wait().unwrap().is_some() {
            break;
        }
        if threads_named(pid, prefix).len() < want {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        // SAFETY: plain signals to our own child.
        unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_millis(20));
        let workers = threads_named(pid, prefix);
        if workers.len() >= want {
            let mut pairs = Vec::new();
            let mut gone = false;
            for (i, &a) in workers.iter().enumerate() {
                for &b in workers[i + 1..].iter().chain([&(pid as i32)]) {
                    match same_file_table(a, b) {
                        Ok(same) => pairs.push((a, b, same)),
                        Err(_) => gone = true,
                    }
                }
            }
            if !gone {
                checked = Some((workers, pairs));
            }
        }
        // SAFETY: as above.
        unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    }
    let status = {
        let Running(ref mut c) = run;
        c.wait().unwrap()
    };
    let mut err = String::new();
    use std::io::Read as _;
    if let Some(mut e) = run.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "fslab {args:?} failed: {err}");
    let (workers, pairs) = checked.unwrap_or_else(|| {
        panic!("never saw {want} threads named {prefix}* alive at once in fslab {args:?}: {err}")
    });
    let shared: Vec<_> = pairs.iter().filter(|p| p.2).collect();
    assert!(
        shared.is_empty(),
        "threads {workers:?} of fslab {args:?} (main thread {pid}): these pairs share one file table: {shared:?}"
    );
    // Each worker against every other and against the main thread.
    let n = workers.len();
    assert_eq!(pairs.len(), n * (n - 1) / 2 + n);
}

/// Run `command` (DIR: a directory this test made) and check its workers named `prefix`.
fn check(command: &str, prefix: &str) {
    require_kcmp();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().display().to_string();
    let args: Vec<String> = command
        .split_whitespace()
        .map(|w| w.replace("DIR", &dir))
        .collect();
    check_engine(&args, prefix, 3);
}

#[test]
fn dbench_clients_each_own_their_file_table() {
    check(
        "dbench -t 3 --warmup 0 --no-store -q -D DIR 3",
        "dbench-client",
    );
}

#[test]
fn fdtree_threads_each_own_their_file_table() {
    check(
        "fdtree --threads 3 -d 6 -f 40 -s 1 -l 3 --no-store -q -o DIR",
        "fdtree-w",
    );
}

#[test]
fn iozone_throughput_workers_each_own_their_file_table() {
    check(
        "iozone -t 3 -s 4m -r 64k -i 0 -i 1 --phase-pause 1 --no-store -F DIR/f0 DIR/f1 DIR/f2",
        "iozone-w",
    );
}

/// Make every `unshare` of this (child) process fail with EPERM, as a container's default
/// seccomp profile does.
fn deny_unshare() -> std::io::Result<()> {
    use libc::{sock_filter, sock_fprog};
    let stmt = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let filter = [
        // The architecture (offset 4): anything but x86-64 is let through untouched.
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 4),
        jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            0xC000_003E,
            0,
            3,
        ),
        // The system call's number (offset 0).
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            libc::SYS_unshare as u32,
            0,
            1,
        ),
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let prog = sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut sock_filter,
    };
    // SAFETY: plain prctl calls in the child between fork and exec; `prog` outlives them.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(target_arch = "x86_64")]
#[test]
fn where_unshare_is_refused_the_run_goes_on_and_says_its_workers_shared_a_table() {
    use std::os::unix::process::CommandExt;
    let db = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    cmd.args([
        "dbench",
        "-t",
        "1",
        "--warmup",
        "0",
        "--no-store",
        "--json",
        "-D",
    ])
    .arg(work.path())
    .arg("2")
    .env("FSLAB_DB", db.path().join("results.db"));
    // SAFETY: deny_unshare only calls prctl, which is async-signal-safe.
    unsafe { cmd.pre_exec(deny_unshare) };
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["environment"]["worker_file_tables"]
            .as_str()
            .unwrap()
            .starts_with("shared: unshare(CLONE_FILES) refused"),
        "{}",
        doc["environment"]
    );
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("2 workers shared one file-descriptor table"),
        "{warnings}"
    );
    // Without the filter the same run has its own tables and says nothing of it.
    let out = common::fslab(db.path())
        .args([
            "dbench",
            "-t",
            "1",
            "--warmup",
            "0",
            "--no-store",
            "--json",
            "-D",
        ])
        .arg(work.path())
        .arg("2")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["environment"]["worker_file_tables"], "own");
    assert!(!doc["warnings"]
        .to_string()
        .contains("file-descriptor table"));
}
