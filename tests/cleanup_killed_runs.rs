//! `fslab cleanup` after an engine run was killed with SIGKILL: what the run recorded making
//! is removed (and only that: a user's file inside the partial tree stays), the run is marked
//! `interrupted`; a live run is left alone. Each test uses its own store, work directory and
//! target directory.

mod common;

use common::{tree_root, wait_for};

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/user.txt"), b"mine").unwrap();
        Setup { dir }
    }
    fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }
    fn cmd(&self) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
        c.env("FSLAB_DB", self.dir.path().join("results.db"))
            .env("FSLAB_WORKDIR", self.dir.path().join("work"))
            .env_remove("RUST_BACKTRACE");
        c
    }
    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
    fn cleanup(&self) -> (i32, String) {
        let out = self.cmd().arg("cleanup").output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }
    fn status(&self) -> String {
        let c = rusqlite::Connection::open(self.dir.path().join("results.db")).unwrap();
        c.query_row("SELECT status FROM study", [], |r| r.get(0))
            .unwrap()
    }
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.target())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

fn kill(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_fdtree_run_is_cleaned_up_and_marked_interrupted() {
    let s = Setup::new();
    let t = s.target();
    let child = s.spawn(&[
        "fdtree",
        "-q",
        "-d",
        "10",
        "-f",
        "100",
        "-s",
        "0",
        "-l",
        "4",
        "-o",
        t.to_str().unwrap(),
    ]);
    wait_for("the tree", || {
        tree_root(&t).is_some_and(|r| r.join("L4D1").is_dir())
    });
    let root = tree_root(&t).unwrap();
    std::fs::write(root.join("L4D1/notes.txt"), b"mine").unwrap();

    // While it runs, cleanup leaves it alone.
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("is running"), "{text}");
    assert_eq!(s.status(), "running");

    kill(child);
    assert_eq!(
        s.status(),
        "running",
        "SIGKILL leaves the run marked running"
    );
    let (code, text) = s.cleanup();
    // The user's file inside the tree is kept, so not everything could go: exit 2, named.
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("notes.txt"), "{text}");
    assert!(text.contains("marked interrupted"), "{text}");
    assert_eq!(s.status(), "interrupted");
    assert_eq!(std::fs::read(root.join("L4D1/notes.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read(t.join("user.txt")).unwrap(), b"mine");
    // Of the tree only the directories holding the user's file are left.
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        1,
        "{:?}",
        s.entries()
    );

    // A second cleanup has nothing more to do.
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
}

#[test]
fn killed_iozone_and_dbench_runs_lose_their_files_and_keep_the_users() {
    let s = Setup::new();
    let t = s.target();
    let f = t.join("iozone.tmp");
    let child = s.spawn(&[
        "iozone",
        "--quiet",
        "--repeat",
        "10000",
        "-i",
        "0",
        "-s",
        "8m",
        "-r",
        "4k",
        "-f",
        f.to_str().unwrap(),
    ]);
    wait_for("the test file", || f.exists());
    kill(child);
    assert!(f.exists());
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("removed IOzone test file"), "{text}");
    assert_eq!(s.entries(), vec!["user.txt".to_string()]);
    assert_eq!(s.status(), "interrupted");

    let s = Setup::new();
    let t = s.target();
    let child = s.spawn(&[
        "dbench",
        "--quiet",
        "-t",
        "60",
        "--warmup",
        "0",
        "-D",
        t.to_str().unwrap(),
        "1",
    ]);
    wait_for("the client tree", || t.join("clients").exists());
    std::thread::sleep(Duration::from_millis(300));
    kill(child);
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("removed dbench client tree"), "{text}");
    assert_eq!(s.entries(), vec!["user.txt".to_string()]);
    assert_eq!(s.status(), "interrupted");
}

#[test]
fn a_killed_fio_run_loses_its_directory_and_its_fio() {
    if !common::require_fio("a_killed_fio_run_loses_its_directory_and_its_fio") {
        return;
    }
    let s = Setup::new();
    let t = s.target();
    let job = s.dir.path().join("long.fio");
    std::fs::write(
        &job,
        "[w]\nrw=write\nsize=4m\ntime_based\nruntime=300\nioengine=psync\n",
    )
    .unwrap();
    let child = s.spawn(&[
        "fio",
        "--cache",
        "none",
        "-q",
        "-D",
        t.to_str().unwrap(),
        job.to_str().unwrap(),
    ]);
    let data = t.join("fslab-fio").join("w.0.0");
    wait_for("fio's data file", || data.exists());
    // The killed process's identity, as its claim recorded it: the owner mark its caged fio
    // carries.
    let (pid, start): (i64, i64) = rusqlite::Connection::open(s.dir.path().join("results.db"))
        .unwrap()
        .query_row("SELECT pid, start_time FROM claim", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    kill(child);
    let dir = t.join("fslab-fio");
    let fio_running = |d: &std::path::Path| {
        let out = Command::new("pgrep")
            .args(["-f", &format!("directory={}", d.display())])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    // fio is process 1 of its cage's PID namespace and dies with fslab (parent-death
    // SIGKILL), taking every process it started with it.
    wait_for("fio to die with fslab", || !fio_running(&dir));
    // A stand-in for a straggler that escaped that (a race with the kill): a fio writing in
    // the run's directory with the killed process's owner mark. And a second, live run's fio
    // elsewhere, with the same kind of mark but another owner: it must be left running.
    let straggler = |d: &std::path::Path, mark: String| {
        Command::new("fio")
            .args([
                "--name=straggler",
                "--rw=write",
                "--size=1m",
                "--time_based",
                "--runtime=300",
                "--output-format=json",
            ])
            .arg(format!("--directory={}", d.display()))
            .env("FSLAB_CAGE_OWNER", mark)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    /// Stops every process of a mark when dropped (fio forks job processes that outlive a
    /// kill of its main one), so a failing assertion leaves nothing running.
    struct Reap(String);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = fslab::safe::procs::stop_caged(&self.0);
        }
    }
    let dead_mark = format!("{pid}:{start}");
    let live_mark = format!("{pid}:{}", start + 1);
    let _reap = (Reap(dead_mark.clone()), Reap(live_mark.clone()));
    let mut dead_ones = straggler(&dir, dead_mark);
    let live_dir = s.dir.path().join("live-fio");
    std::fs::create_dir(&live_dir).unwrap();
    let mut live = straggler(&live_dir, live_mark);
    wait_for("the stand-ins' files", || {
        dir.join("straggler.0.0").exists() && live_dir.join("straggler.0.0").exists()
    });
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("removed fio directory"), "{text}");
    assert!(
        text.contains("fio process(es) the killed process left running"),
        "{text}"
    );
    assert!(!fio_running(&dir), "fio still runs after cleanup: {text}");
    let _ = dead_ones.wait();
    assert!(
        live.try_wait().unwrap().is_none(),
        "another owner's fio was stopped"
    );
    assert!(live_dir.join("straggler.0.0").exists());
    live.kill().unwrap();
    live.wait().unwrap();
    assert_eq!(s.entries(), vec!["user.txt".to_string()]);
    assert_eq!(s.status(), "interrupted");
}

#[test]
fn an_iozone_file_kept_with_w_by_a_finished_run_is_not_touched() {
    let s = Setup::new();
    let f = s.target().join("kept");
    let out = s
        .cmd()
        .args([
            "iozone", "--quiet", "-w", "-i", "0", "-s", "64k", "-r", "4k", "-f",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, text) = s.cleanup();
    assert_eq!(code, 0, "{text}");
    assert!(f.exists(), "a complete run's -w file is the user's to keep");
    assert_eq!(s.status(), "complete");
}

/// A study killed outright, recorded in another results database than the one `fslab
/// cleanup` is given: its state file in the work directory names that database, so cleanup
/// marks it `interrupted` there and puts its running cell back to `pending` for --resume.
#[test]
fn privileged_a_killed_study_is_marked_interrupted_in_the_store_its_state_file_names() {
    if !common::require_root(
        "privileged_a_killed_study_is_marked_interrupted_in_the_store_its_state_file_names",
    ) {
        return;
    }
    use fslab::store::{CellStatus, NewCell, NewStudy, Store};
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("elsewhere.db");
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let study = {
        let st = Store::open(&db).unwrap();
        let s = st
            .begin_study(&NewStudy {
                kind: fslab::vocab::StudyKind::Study,
                name: "killed".into(),
                command_line: "fslab study run killed.toml".into(),
                ..Default::default()
            })
            .unwrap();
        let c = st
            .add_cell(
                s,
                &NewCell {
                    idx: 0,
                    label: "fs=ext4".into(),
                    factors: vec![("fs".into(), "ext4".into())],
                    config: serde_json::json!({"fs": "ext4"}),
                },
            )
            .unwrap();
        st.set_cell_status(c, CellStatus::Running, None).unwrap();
        s
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO claim (study_id, pid, host, start_time, claimed_at) VALUES (?1, ?2, ?3, 1, '2026-11-24T00:00:00Z')",
            rusqlite::params![study, pid, host.trim()],
        )
        .unwrap();
    // The run directory the killed process left: its state file and an unheld lock.
    let run = t.path().join("work/runs").join(format!("{pid}-1"));
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("lock"), b"").unwrap();
    let state = serde_json::json!({
        "version": 1, "pid": pid, "started_at": "2026-11-24T00:00:00Z", "study": study,
        "db": std::fs::canonicalize(&db).unwrap(), "next_id": 1, "resources": [],
    });
    std::fs::write(run.join("state.json"), state.to_string()).unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", t.path().join("results.db"))
        .arg("cleanup")
        .arg("--workdir")
        .arg(t.path().join("work"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("study {study}: marked interrupted")),
        "{said}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let (status, cell): (String, String) = c
        .query_row(
            "SELECT s.status, c.status FROM study s JOIN cell c ON c.study_id = s.id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), cell.as_str()), ("interrupted", "pending"));
    assert!(!run.exists(), "the run directory is removed");
}

/// A run killed after recording its intent to make `clients` but before its device and
/// inode were recorded: whatever is made at that path later (the user removed the leftover
/// and made their own) is not adopted; an entry born right after the intent is.
#[test]
fn an_intent_only_record_adopts_nothing_made_after_the_run() {
    use fslab::store::{NewStudy, OwnedKind, Store};
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let st = Store::open(&db).unwrap();
    let record = |name: &str, intent: &str| {
        let run = st
            .begin_study(&NewStudy {
                kind: fslab::vocab::StudyKind::Run,
                name: "dbench".into(),
                command_line: "fslab dbench".into(),
                ..Default::default()
            })
            .unwrap();
        let id = st
            .add_owned_path(
                run,
                &target.join(name),
                OwnedKind::new("dbench", fslab::vocab::EntryKind::Dir),
                &serde_json::Value::Null,
            )
            .unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute(
            "UPDATE owned_path SET created_at = ?2 WHERE id = ?1",
            rusqlite::params![id, intent],
        )
        .unwrap();
        c.execute(
            "INSERT INTO claim (study_id, pid, host, start_time, claimed_at) VALUES (?1, ?2, ?3, 1, ?4)",
            rusqlite::params![run, pid, host.trim(), intent],
        )
        .unwrap();
    };
    // Killed long ago; the user's tree made now at the path it meant to use.
    record("clients", "2026-01-01T00:00:00.000Z");
    std::fs::create_dir_all(target.join("clients/p")).unwrap();
    std::fs::write(target.join("clients/p/r.txt"), b"the user's").unwrap();
    // Killed just now, right after making its tree: that one is the run's.
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    record("fresh", &now);
    std::fs::create_dir_all(target.join("fresh/client1")).unwrap();
    drop(st);
    let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", &db)
        .env("FSLAB_WORKDIR", t.path().join("work"))
        .arg("cleanup")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(target.join("clients/p/r.txt")).unwrap(),
        b"the user's",
        "{said}"
    );
    assert!(said.contains("after the run"), "{said}");
    assert!(!target.join("fresh").exists(), "{said}");
    assert_eq!(out.status.code(), Some(2), "{said}");
}
