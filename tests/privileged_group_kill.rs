//! Issue 25's "done when", on devices this test made:
//!
//! * killing fslab's whole process group (SIGKILL to every process in it) during `fslab fio`
//!   on a file system of the test's own loop device, and during a study with a fio workload,
//!   then `fslab cleanup`: no fio left, no claim or run directory (lock) left, and nothing of
//!   fslab's mounted or attached — the test's own mount comes off and its loop detaches;
//! * `--db` naming the test's loop device holding ext4: exit 2, and `blkid` still says ext4;
//!   naming a FIFO: exit 2 within a second.

mod common;
#[path = "testdev/mod.rs"]
mod testdev;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testdev::{loops_under, mounts_under, sh, TestLoop, TestMount};

/// fslab in a process group of its own (as a shell job is), so the group can be killed.
fn fslab_group(db: &Path, work: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    c.env("FSLAB_DB", db)
        .env("FSLAB_WORKDIR", work)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c.process_group(0);
    c
}

fn kill_group(pgid: u32) {
    // SAFETY: kill(2) on the process group this test made.
    assert_eq!(unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) }, 0);
}

/// Processes running fio (by name) whose command line names `dir`.
fn fio_in(dir: &Path) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-a", "-f", &format!("directory={}", dir.display())])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn cleanup(db: &Path, work: &Path) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", db)
        .args(["cleanup", "--workdir"])
        .arg(work)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    said
}

#[test]
fn privileged_killing_the_process_group_of_fslab_fio_then_cleanup_leaves_nothing() {
    if !common::require_root(
        "privileged_killing_the_process_group_of_fslab_fio_then_cleanup_leaves_nothing",
    ) || !common::require_fio(
        "privileged_killing_the_process_group_of_fslab_fio_then_cleanup_leaves_nothing",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    let work = t.path().join("work");
    let lo = TestLoop::new(t.path(), "disk.img", 256, false);
    sh("mkfs.ext4", &["-q", "-F", lo.path()]);
    let mnt = t.path().join("mnt");
    let m = TestMount::new(lo.path(), &mnt);
    let job = t.path().join("long.fio");
    std::fs::write(
        &job,
        "[w]\nrw=write\nsize=8m\nnumjobs=2\ntime_based\nruntime=300\nioengine=psync\n",
    )
    .unwrap();
    let mut child = fslab_group(&db, &work)
        .args(["fio", "--cache", "none", "-q", "-D"])
        .arg(&mnt)
        .arg(&job)
        .spawn()
        .unwrap();
    let dir = mnt.join("fslab-fio");
    common::wait_for("fio's data files", || dir.join("w.1.0").exists());
    kill_group(child.id());
    child.wait().unwrap();
    let said = cleanup(&db, &work);
    assert!(
        fio_in(&dir).is_empty(),
        "fio left: {:?}\n{said}",
        fio_in(&dir)
    );
    assert!(!dir.exists(), "{said}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let claims: i64 = c
        .query_row("SELECT count(*) FROM claim", [], |r| r.get(0))
        .unwrap();
    assert_eq!(claims, 0, "{said}");
    let status: String = c
        .query_row("SELECT status FROM study", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "interrupted");
    // Nothing holds the test's file system: it unmounts, and its loop device detaches.
    drop(m);
    assert!(
        mounts_under(t.path()).is_empty(),
        "{:?}",
        mounts_under(t.path())
    );
    drop(lo);
    // The killed fio's cage held the file system in a mount namespace of its own; the kernel
    // releases that namespace, and so the loop device, shortly after its last process is gone
    // (asynchronously: under load it took longer than the first look).
    common::wait_for("the test's loop device to detach", || {
        loops_under(t.path()).is_empty()
    });
}

#[test]
fn privileged_killing_the_process_group_of_a_fio_study_then_cleanup_leaves_nothing() {
    if !common::require_root(
        "privileged_killing_the_process_group_of_a_fio_study_then_cleanup_leaves_nothing",
    ) || !common::require_fio(
        "privileged_killing_the_process_group_of_a_fio_study_then_cleanup_leaves_nothing",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    let work = t.path().join("work");
    let study = t.path().join("s.toml");
    std::fs::write(
        &study,
        "name = \"killed-fio\"\n[repetitions]\nmin = 1\ncache = \"warm\"\n[device]\ndata = \"loop:256M\"\n[filesystem]\ntype = \"ext4\"\n[[workload]]\nkind = \"fio\"\n[workload.job.w]\nrw = \"write\"\nsize = \"8m\"\nnumjobs = 2\ntime_based = true\nruntime = 300\nioengine = \"psync\"\n",
    )
    .unwrap();
    let mut child = fslab_group(&db, &work)
        .args(["study", "run", "-q"])
        .arg(&study)
        .arg("--workdir")
        .arg(&work)
        .spawn()
        .unwrap();
    common::wait_for("fio at work in the cell", || {
        mounts_under(&work)
            .iter()
            .any(|m| Path::new(m).join("fslab-fio/w.1.0").exists())
    });
    kill_group(child.id());
    child.wait().unwrap();
    let said = cleanup(&db, &work);
    let t0 = Instant::now();
    while !fio_in(&work).is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        fio_in(&work).is_empty(),
        "fio left: {:?}\n{said}",
        fio_in(&work)
    );
    assert!(
        mounts_under(&work).is_empty(),
        "{:?}\n{said}",
        mounts_under(&work)
    );
    assert!(
        loops_under(&work).is_empty(),
        "{:?}\n{said}",
        loops_under(&work)
    );
    let runs: Vec<_> = std::fs::read_dir(work.join("runs"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        runs.is_empty(),
        "run directory (and its lock) left: {runs:?}\n{said}"
    );
}

#[test]
fn privileged_a_device_or_fifo_as_db_is_refused_and_left_as_it_was() {
    if !common::require_root("privileged_a_device_or_fifo_as_db_is_refused_and_left_as_it_was") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(t.path(), "disk.img", 64, false);
    sh("mkfs.ext4", &["-q", "-F", lo.path()]);
    let before = std::fs::read(&lo.image).unwrap();
    for args in [
        &["list"][..],
        &["show", "1"],
        &["fdtree", "-q", "-l", "0", "-o"],
    ] {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
        c.arg("--db").arg(&lo.dev).args(args);
        if args[0] == "fdtree" {
            c.arg(t.path());
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is a block device"), "{err}");
    }
    let blkid = sh("blkid", &["-p", "-o", "value", "-s", "TYPE", lo.path()]);
    assert_eq!(blkid.trim(), "ext4");
    assert!(
        std::fs::read(&lo.image).unwrap() == before,
        "the device was written"
    );

    let fifo = t.path().join("db.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for args in [&["list"][..], &["show", "1"]] {
        let t0 = Instant::now();
        let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(&fifo)
            .args(args)
            .output()
            .unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "{args:?} took {:?}",
            t0.elapsed()
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("is a FIFO"), "{err}");
    }
}
