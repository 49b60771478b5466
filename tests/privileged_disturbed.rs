//! `disturbed = "repeat"` for real (root), in a study and in an engine command: the cells'
//! images live on a file system of the test's own (an ext4 on a loop device over an image in a
//! temporary directory, so nobody else's I/O lands under them), and a competing O_DIRECT
//! writer on that file system runs during repetition 2. That repetition is stored, marked as
//! left out (`excluded = 'rerun'`) and run again; every counted repetition is free of other
//! I/O; the report says how many were re-run.
//!
//! Other developers' jobs on a shared machine can disturb a repetition by CPU or load at any
//! time (and have it re-run too), so the assertions are about the writer's other I/O.

mod common;
mod testdev;

use common::require_root;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use testdev::hog::Hog;
use testdev::{sh, TestLoop, TestMount};

/// An ext4 without lazy initialisation (its kernel thread would write to the backing device
/// later) on a direct-I/O loop device over a new image in `dir`, mounted on `mnt`.
fn ext4_on_loop(dir: &Path, name: &str, mb: u64, mnt: &Path) -> (TestMount, TestLoop) {
    let l = TestLoop::new(dir, name, mb, false);
    sh("losetup", &["--direct-io=on", l.dev.to_str().unwrap()]);
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            l.dev.to_str().unwrap(),
        ],
    );
    (TestMount::new(l.dev.to_str().unwrap(), mnt), l)
}

/// Run fslab with `args`, calling `on_line` for every line it prints on stderr; the exit code
/// and all of stderr.
fn fslab(args: &[&str], mut on_line: impl FnMut(&str)) -> (i32, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut all = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        on_line(&line);
        all.push_str(&line);
        all.push('\n');
    }
    (child.wait().unwrap().code().unwrap_or(-1), all)
}

/// (repetition, status, interference, excluded) of every stored repetition, in order.
type Row = (i64, String, Option<String>, Option<String>);

fn rows(db: &Path) -> Vec<Row> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT repetition, status, interference, excluded FROM trial ORDER BY order_index, id",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn other_io(r: &Row) -> bool {
    r.2.as_deref().is_some_and(|w| w.contains("other I/O"))
}

/// The rows follow the rule of `disturbed = "repeat"`, whatever else disturbed the machine
/// (other developers' jobs may disturb any repetition by CPU or load): walking them in
/// execution order, a disturbed repetition is left out (`rerun`, status discarded) while the
/// series has re-run fewer than `cap`, and counted after that; a quiet one is counted;
/// repetitions 1 to `n` are counted once each; and the writer's other I/O was seen and, while
/// re-runs were left, the repetition it disturbed was run again.
fn check(rows: &[Row], n: i64, cap: usize, log: &str) {
    let mut reruns = 0;
    let mut io_seen = false;
    for r in rows {
        let disturbed = r.2.is_some();
        io_seen |= other_io(r);
        if disturbed && reruns < cap {
            assert_eq!(
                (r.1.as_str(), r.3.as_deref()),
                ("discarded", Some("rerun")),
                "{r:?} in {rows:#?}\n{log}"
            );
            reruns += 1;
        } else {
            assert_eq!(
                (r.1.as_str(), r.3.as_deref()),
                ("ok", None),
                "{r:?} in {rows:#?}\n{log}"
            );
        }
    }
    let ok: Vec<i64> = rows.iter().filter(|r| r.1 == "ok").map(|r| r.0).collect();
    assert_eq!(ok, (1..=n).collect::<Vec<_>>(), "{rows:#?}\n{log}");
    assert!(
        io_seen,
        "the writer's other I/O was not seen: {rows:#?}\n{log}"
    );
    if let Some(first) = rows.iter().position(other_io) {
        let before = rows[..first].iter().filter(|r| r.3.is_some()).count();
        if before < cap {
            assert_eq!(rows[first].3.as_deref(), Some("rerun"), "{rows:#?}");
        }
    }
}

/// Tests here run one at a time: two runs at once would disturb each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Wait up to two minutes for the other processes on the machine to use under 5% of the
/// CPUs over a second (as the runner judges), so the writer is the disturbance under test.
fn wait_for_quiet_cpus() {
    let busy = || -> f64 {
        let ticks = || -> (u64, u64) {
            let stat = std::fs::read_to_string("/proc/stat").unwrap();
            let cpu: Vec<u64> = stat
                .lines()
                .next()
                .unwrap()
                .split_whitespace()
                .skip(1)
                .map(|v| v.parse().unwrap())
                .collect();
            (cpu[0] + cpu[1], cpu.iter().sum())
        };
        let (u0, t0) = ticks();
        std::thread::sleep(std::time::Duration::from_secs(1));
        let (u1, t1) = ticks();
        (u1 - u0) as f64 / (t1 - t0).max(1) as f64 * 100.0
    };
    for _ in 0..120 {
        if busy() < 5.0 {
            return;
        }
    }
    eprintln!("the machine stayed busy for two minutes; running anyway");
}

/// `fslab report` of the newest run or study in `db`, as text.
fn report(db: &Path, name: &str) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .args(["report", name, "--warnings", "all", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn privileged_a_study_reruns_its_disturbed_repetition() {
    if !require_root("privileged_a_study_reruns_its_disturbed_repetition") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = tempfile::tempdir().unwrap();
    let own = t.path().join("own");
    let (_m, _l) = ext4_on_loop(t.path(), "own.img", 4096, &own);
    let file = t.path().join("s.toml");
    std::fs::write(
        &file,
        r#"
name = "rerun"
[repetitions]
min = 3
order = "sequential"
cache = "cold"
disturbed = "repeat"
[device]
data = "loop:512M"
[filesystem]
type = "ext4"
[[workload]]
kind = "dbench"
clients = 1
duration = "2s"
warmup = "0s"
"#,
    )
    .unwrap();
    let db = t.path().join("results.db");
    let hog = Hog::new(&own.join("hog"));
    let work = own.join("work");
    wait_for_quiet_cpus();
    let (code, log) = fslab(
        &[
            "study",
            "run",
            file.to_str().unwrap(),
            "--workdir",
            work.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        |line| {
            // The writer runs from the end of repetition 1 until a repetition is judged
            // disturbed by its I/O.
            if line.starts_with("[1/") {
                hog.set(true);
            }
            if line.contains("of other I/O") {
                hog.set(false);
            }
        },
    );
    drop(hog);
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains("stored, left out, and run again (disturbed = \"repeat\")"),
        "{log}"
    );
    let rows = rows(&db);
    // A series may re-run as many repetitions as it counts.
    check(&rows, 3, 3, &log);
    let reruns = rows.iter().filter(|r| r.3.is_some()).count();
    let text = report(&db, "rerun");
    assert!(text.contains(&format!("0 + {reruns} re-run")), "{text}");
    let one = if reruns == 1 {
        "1 disturbed repetition re-run".to_string()
    } else {
        format!("{reruns} disturbed repetitions re-run")
    };
    assert!(text.contains(&one), "{text}");
    assert!(testdev::loops_under(&work).is_empty());
}

#[test]
fn privileged_an_engine_command_reruns_its_disturbed_repetition() {
    if !require_root("privileged_an_engine_command_reruns_its_disturbed_repetition") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = tempfile::tempdir().unwrap();
    let own = t.path().join("own");
    let (_om, _ol) = ext4_on_loop(t.path(), "own.img", 2048, &own);
    // The run's target: a file system on a loop device over an image on our own.
    let cell: PathBuf = t.path().join("cell");
    let (_cm, _cl) = ext4_on_loop(&own, "cell.img", 512, &cell);
    let db = t.path().join("runs.db");
    let hog = Hog::new(&own.join("hog"));
    wait_for_quiet_cpus();
    let (code, log) = fslab(
        &[
            "dbench",
            "-D",
            cell.to_str().unwrap(),
            "-t",
            "2",
            "--warmup",
            "0",
            "--repeat",
            "3",
            "--disturbed",
            "repeat",
            "--db",
            db.to_str().unwrap(),
            "1",
        ],
        |line| {
            if line.starts_with("dbench rep 1/3") {
                hog.set(true);
            }
            if line.contains("of other I/O") {
                hog.set(false);
            }
        },
    );
    drop(hog);
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains("stored, left out, and run again (--disturbed repeat)"),
        "{log}"
    );
    let rows = rows(&db);
    check(&rows, 3, 3, &log);
    let text = report(&db, "dbench");
    assert!(text.contains(" re-run"), "{text}");
}

#[test]
fn privileged_a_busy_machine_is_named_before_the_study_starts() {
    if !require_root("privileged_a_busy_machine_is_named_before_the_study_starts") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = tempfile::tempdir().unwrap();
    let own = t.path().join("own");
    let (_m, _l) = ext4_on_loop(t.path(), "own.img", 2048, &own);
    let file = t.path().join("s.toml");
    std::fs::write(
        &file,
        r#"
name = "busy"
[repetitions]
min = 1
cache = "none"
[device]
data = "loop:128M"
[filesystem]
type = "ext4"
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#,
    )
    .unwrap();
    let db = t.path().join("results.db");
    let work = own.join("work");
    let run = |extra: &[&str], hog: &Hog| {
        let mut args = vec![
            "study",
            "run",
            "-q",
            file.to_str().unwrap(),
            "--workdir",
            work.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        // The writer runs on the work directory's file system until the check has spoken.
        hog.set(true);
        fslab(&args, |line| {
            if line.contains("busy") {
                hog.set(false);
            }
        })
    };
    let hog = Hog::new(&own.join("hog"));
    // Without --wait-quiet: one line naming the other I/O, and the study goes on.
    let (code, log) = run(&[], &hog);
    assert_eq!(code, 0, "{log}");
    let line = log
        .lines()
        .find(|l| l.starts_with("fslab: the machine is busy now ("))
        .unwrap_or_else(|| panic!("no busy line: {log}"));
    assert!(line.contains("of other I/O on"), "{line}");
    assert!(line.contains("--wait-quiet"), "{line}");
    // With --wait-quiet and a writer that does not stop while it waits: it waits its time,
    // says it gave up with the figures, and goes on.
    let (code, log) = run(&["--wait-quiet", "3s"], &hog);
    drop(hog);
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains("waiting up to 3.0 s for a quiet machine"),
        "{log}"
    );
    let line = log
        .lines()
        .find(|l| l.starts_with("fslab: the machine is still busy after "))
        .unwrap_or_else(|| panic!("no give-up line: {log}"));
    assert!(line.contains("of other I/O on"), "{line}");
    assert!(testdev::loops_under(&work).is_empty());
}
