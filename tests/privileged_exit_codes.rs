//! `fslab study run` exit codes follow doc/studies.md in every case: 130 (with the resume
//! hint) when interrupted, also before the first repetition was stored; 1 when cells
//! failed, also when every cell failed; 0 when all completed. Loop devices of the test's
//! own, in its own work directory.

mod common;
mod testdev;

use common::require_root;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use testdev::{loops_under, mounts_under};

fn study(name: &str, mount: &str, workload: &str) -> String {
    format!(
        r#"
name = "{name}"
[repetitions]
min = 2
cache = "cold"
[device]
data = "loop:512M"
[filesystem]
type = "ext4"
mount = [{mount}]
[[factor]]
name = "journal"
values = [{{ label = "4M", journal_size = "4M" }}, {{ label = "8M", journal_size = "8M" }}]
[[workload]]
{workload}
"#
    )
}

fn command(dir: &Path, file: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    c.env("FSLAB_DB", dir.join("results.db"))
        .args(["study", "run", "-q"])
        .arg(file)
        .arg("--workdir")
        .arg(dir.join("work"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The test signals it: its own handlers act, also under `nohup`.
    common::default_signals(&mut c);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn assert_nothing_left(work: &Path) {
    assert!(
        mounts_under(work).is_empty(),
        "mounts left: {:?}",
        mounts_under(work)
    );
    assert!(
        loops_under(work).is_empty(),
        "loop devices left: {:?}",
        loops_under(work)
    );
}

#[test]
fn privileged_interrupt_before_the_first_repetition_exits_130_with_the_resume_hint() {
    if !require_root(
        "privileged_interrupt_before_the_first_repetition_exits_130_with_the_resume_hint",
    ) {
        return;
    }
    stopped_by(libc::SIGINT);
}

/// A closed terminal or a dropped ssh session (SIGHUP) stops a study like Ctrl-C: torn
/// down, exit 130, nothing mounted or attached.
#[test]
fn privileged_a_hangup_tears_the_study_down_like_ctrl_c() {
    if !require_root("privileged_a_hangup_tears_the_study_down_like_ctrl_c") {
        return;
    }
    stopped_by(libc::SIGHUP);
}

fn stopped_by(sig: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    // One repetition of a minute: the interrupt lands inside the first one.
    std::fs::write(
        &file,
        study(
            "exit-130",
            "\"noatime\"",
            "kind = \"dbench\"\nclients = 1\nduration = \"60s\"\nwarmup = \"0s\"",
        ),
    )
    .unwrap();
    let child = command(dir.path(), &file).spawn().unwrap();
    let work = dir.path().join("work");
    let t = Instant::now();
    // Wait until the first cell is mounted and its clients are at work.
    while !mounts_under(&work).iter().any(|m| {
        std::fs::read_dir(m)
            .is_ok_and(|d| d.filter_map(|e| e.ok()).any(|e| e.file_name() == "clients"))
    }) {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "the first repetition never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out: Output = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("--resume"), "{err}");
    assert!(!err.contains("nothing to report;"), "{err}");
    assert_nothing_left(&work);
}

#[test]
fn privileged_every_cell_failing_exits_1() {
    if !require_root("privileged_every_cell_failing_exits_1") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    // mount(8) refuses an option ext4 does not know: every cell fails to provision.
    std::fs::write(
        &file,
        study(
            "exit-1",
            "\"no_such_option_fslab\"",
            "kind = \"fdtree\"\ndirs = 2\nfiles = 2\nsize_blocks = 1\nlevels = 1",
        ),
    )
    .unwrap();
    let out = command(dir.path(), &file).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}\n{}", text(&out.stdout));
    assert!(err.contains("2 of 2 cells failed"), "{err}");
    assert!(
        text(&out.stdout).contains("FAILED cell"),
        "{}",
        text(&out.stdout)
    );
    assert_nothing_left(&dir.path().join("work"));
}
