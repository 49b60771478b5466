//! Reliability: a study killed with SIGKILL at a random point, cleaned up with
//! `fslab cleanup`, then resumed, ends with exactly the planned repetitions and nothing left
//! mounted or attached. Ctrl-C (SIGINT) tears down at once and resumes the same way.

mod common;
mod testdev;

use common::{fslab, require_root};
use fslab::store::Store;
use rand::Rng;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testdev::{loops_under, mounts_under};

const REPS: i64 = 3;

fn study_text(name: &str) -> String {
    format!(
        r#"
name = "{name}"
[repetitions]
min = {REPS}
cache = "cold"
[device]
data = "loop:128M"
[filesystem]
type = "ext4"
mount = ["noatime"]
[[factor]]
name = "journal"
values = [{{ label = "4M", journal_size = "4M" }}, {{ label = "8M", journal_size = "8M" }}]
[[workload]]
kind = "fdtree"
dirs = 4
files = 8
size_blocks = 1
levels = 3
sync = true
"#
    )
}

fn spawn_run(dir: &Path, file: &Path, work: &Path, resume: bool) -> std::process::Child {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    c.env("FSLAB_DB", dir.join("results.db"))
        .args(["study", "run", "-q"])
        .arg(file)
        .arg("--workdir")
        .arg(work)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    common::default_signals(&mut c);
    if resume {
        c.arg("--resume");
    }
    c.spawn().expect("fslab runs")
}

/// Every series has exactly repetitions 1..=REPS counted, each once.
fn assert_exactly_planned(dir: &Path) {
    let store = Store::open(&dir.join("results.db")).unwrap();
    let s = store.list_studies().unwrap();
    assert_eq!(s.len(), 1, "one study, resumed in place");
    let d = store.load(s[0].id).unwrap().unwrap();
    assert_eq!(d.study.status, "complete");
    for c in &d.cells {
        for w in &d.workloads {
            let mut reps: Vec<i64> = d
                .trials
                .iter()
                .filter(|t| t.cell_id == c.id && t.workload_id == w.id && t.status == "ok")
                .map(|t| t.repetition)
                .collect();
            reps.sort();
            assert_eq!(reps, (1..=REPS).collect::<Vec<_>>(), "cell {}", c.label);
        }
        assert_eq!(c.status, "complete");
        assert!(c.commands.iter().any(|l| l.starts_with("mkfs.ext4")));
    }
    let series = d
        .series
        .iter()
        .filter(|s| s.stop_reason == Some(fslab::stats::adaptive::StopReason::Fixed));
    assert_eq!(series.count(), d.cells.len() * d.workloads.len());
}

fn assert_nothing_left(work: &Path) {
    assert!(
        loops_under(work).is_empty(),
        "loop devices left: {:?}",
        loops_under(work)
    );
    assert!(
        mounts_under(work).is_empty(),
        "mounts left: {:?}",
        mounts_under(work)
    );
    let runs: Vec<_> = std::fs::read_dir(work.join("runs"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(runs.is_empty(), "run directories left: {runs:?}");
}

fn finish_with_resume(dir: &Path, file: &Path, work: &Path) {
    let out = spawn_run(dir, file, work, true).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "resume failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_exactly_planned(dir);
    assert_nothing_left(work);
    // A complete study cannot be resumed again.
    let again = spawn_run(dir, file, work, true).wait_with_output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already complete"));
}

#[test]
fn privileged_sigkill_cleanup_resume_gives_exactly_the_planned_repetitions() {
    if !require_root("privileged_sigkill_cleanup_resume_gives_exactly_the_planned_repetitions") {
        return;
    }
    let seed: u64 = rand::thread_rng().gen();
    eprintln!("kill-point seed {seed}");
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
    // Retry with an earlier kill point if the study happened to finish first.
    for attempt in 0..4 {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("s.toml");
        std::fs::write(&file, study_text("killed")).unwrap();
        let work = t.path().join("work");
        let delay = Duration::from_millis(rng.gen_range(100..3000) >> attempt);
        let mut child = spawn_run(t.path(), &file, &work, false);
        let start = Instant::now();
        std::thread::sleep(delay);
        let finished_first = child.try_wait().unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        // Killed after the study was complete (while printing its summary): nothing to resume.
        let completed = Store::open_read_only(&t.path().join("results.db"))
            .and_then(|s| s.list_studies())
            .is_ok_and(|l| l.iter().any(|s| s.status == "complete"));
        if finished_first || completed {
            eprintln!("attempt {attempt}: finished within {delay:?}; trying an earlier kill");
            continue;
        }
        eprintln!("attempt {attempt}: SIGKILL after {:?}", start.elapsed());
        let out = fslab(t.path())
            .arg("cleanup")
            .arg("--workdir")
            .arg(&work)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cleanup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_nothing_left(&work);
        finish_with_resume(t.path(), &file, &work);
        return;
    }
    panic!("the study always finished before the kill; make it larger");
}

#[test]
fn privileged_ctrl_c_tears_down_and_resume_completes() {
    if !require_root("privileged_ctrl_c_tears_down_and_resume_completes") {
        return;
    }
    for attempt in 0..4 {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("s.toml");
        std::fs::write(&file, study_text("interrupted")).unwrap();
        let work = t.path().join("work");
        let child = spawn_run(t.path(), &file, &work, false);
        std::thread::sleep(Duration::from_millis(1500 >> attempt));
        // SAFETY: kill(2) with a valid pid and signal number.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            continue; // finished before the signal
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(err.contains("--resume"), "{err}");
        // Torn down by the interrupted run itself, no cleanup needed.
        assert_nothing_left(&work);
        finish_with_resume(t.path(), &file, &work);
        return;
    }
    panic!("the study always finished before Ctrl-C; make it larger");
}

#[test]
fn privileged_two_resumes_of_one_study_are_kept_apart() {
    if !require_root("privileged_two_resumes_of_one_study_are_kept_apart") {
        return;
    }
    for attempt in 0..4 {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("s.toml");
        std::fs::write(&file, study_text("raced")).unwrap();
        let work = t.path().join("work");
        let child = spawn_run(t.path(), &file, &work, false);
        std::thread::sleep(Duration::from_millis(1500 >> attempt));
        // SAFETY: kill(2) with a valid pid and signal number.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            continue; // finished before the signal
        }
        assert_eq!(out.status.code(), Some(130));
        // Two resumes at once: exactly one proceeds, the other stops at once naming it.
        let mut runs = [
            spawn_run(t.path(), &file, &work, true),
            spawn_run(t.path(), &file, &work, true),
        ];
        let start = Instant::now();
        let first = loop {
            if let Some(i) = (0..2).find(|&i| runs[i].try_wait().unwrap().is_some()) {
                break i;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "neither resume ended"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let [a, b] = runs;
        let (loser, winner) = if first == 0 { (a, b) } else { (b, a) };
        let winner_pid = winner.id();
        let lost = loser.wait_with_output().unwrap();
        let lost_after = start.elapsed();
        let won = winner.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&lost.stderr);
        assert_eq!(lost.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("is being run by process {winner_pid} on host"))
                && err.contains("wait for it or stop it")
                && err.lines().count() == 1,
            "{err}"
        );
        assert!(
            lost_after < Duration::from_secs(10),
            "the loser took {lost_after:?}"
        );
        assert!(
            won.status.success(),
            "winner: {}",
            String::from_utf8_lossy(&won.stderr)
        );
        assert_exactly_planned(t.path());
        // Neither left a run directory, a mount or a loop device; the claim is gone.
        assert_nothing_left(&work);
        let store = Store::open(&t.path().join("results.db")).unwrap();
        assert_eq!(store.unfinished_runs().unwrap(), []);
        let id = store.list_studies().unwrap()[0].id;
        assert_eq!(store.claim_of(id).unwrap(), None);
        return;
    }
    panic!("the study always finished before Ctrl-C; make it larger");
}

/// A run killed while tearing down a cell whose repetitions were all stored leaves that
/// cell `running`; the resume has nothing to measure there but must still finish it.
#[test]
fn privileged_resume_finishes_a_cell_killed_during_its_teardown() {
    if !require_root("privileged_resume_finishes_a_cell_killed_during_its_teardown") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("s.toml");
    std::fs::write(&file, study_text("torn")).unwrap();
    let work = t.path().join("work");
    let out = spawn_run(t.path(), &file, &work, false)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The state such a kill leaves: every repetition stored, the cell and study still running.
    let c = rusqlite::Connection::open(t.path().join("results.db")).unwrap();
    c.execute_batch(
        "UPDATE cell SET status = 'running' WHERE idx = 1;
         UPDATE study SET status = 'running', finished_at = NULL;",
    )
    .unwrap();
    drop(c);
    finish_with_resume(t.path(), &file, &work);
}
