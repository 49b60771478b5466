//! `mpiexec -n N fslab fdtree …` on one machine: every rank's work is counted, the layouts
//! have the documented shape, stonewalling reports per-rank counts, and a failure or Ctrl-C
//! on one rank ends the run on all of them, reported once by rank 0.
//!
//! Needs a build with `--features mpi` and `mpiexec` (MPICH: `scripts/install-deps --mpi`):
//!
//!     cargo test --features mpi --test mpi_fdtree
//!
//! Without mpiexec these tests fail; they never pass silently.
#![cfg(feature = "mpi")]

mod common;

use common::mpi::{json, mpi_command, rank_pid, run, scratch, text};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn args(s: &str, dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = s.split_whitespace().map(String::from).collect();
    v.push("-o".into());
    v.push(dir.display().to_string());
    v
}

/// (phase, per-rank items) of the first repetition.
fn per_rank_items(doc: &serde_json::Value) -> Vec<(String, Vec<u64>)> {
    doc["per_rank"][0]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let items = p["ranks"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    assert_eq!(r["rank"].as_u64(), Some(i as u64));
                    r["items"].as_u64().unwrap()
                })
                .collect();
            (p["phase"].as_str().unwrap().to_string(), items)
        })
        .collect()
}

fn metric(doc: &serde_json::Value, phase: &str, name: &str) -> f64 {
    common::metric(&doc["repetitions"][0], phase, name)
}

#[test]
fn one_tree_per_rank_every_rank_counted_and_stored_once() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = run(
        work.path(),
        &[(4, args("fdtree -d 2 -f 3 -s 1 -l 2 -q --json", t.path()))],
    );
    let doc = json(&out);
    assert_eq!(doc["schema"], "fslab.fdtree.mpi.v2");
    assert_eq!(doc["mpi"]["ranks"], 4);
    assert_eq!(doc["mpi"]["layout"], "private");
    assert_eq!(doc["counts"]["total"]["dirs"], 28);
    assert_eq!(doc["counts"]["total"]["files"], 84);
    for (phase, items) in per_rank_items(&doc) {
        let want = if phase.starts_with("dir") { 7 } else { 21 };
        assert_eq!(items, vec![want; 4], "{phase}");
        assert_eq!(metric(&doc, &phase, "items"), (want * 4) as f64, "{phase}");
        assert_eq!(metric(&doc, &phase, "ranks"), 4.0);
        assert!(metric(&doc, &phase, "start_skew") >= 0.0);
        assert!(metric(&doc, &phase, "rank_rate_min") <= metric(&doc, &phase, "rank_rate_max"));
    }
    let kib = metric(&doc, "file_create", "throughput");
    let rate = metric(&doc, "file_create", "rate");
    assert!(
        (kib / rate - 4.0).abs() < 1e-6,
        "4 KiB files: {kib} / {rate}"
    );
    // Everything removed, nothing but the trees was ever created.
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    // Rank 0 stored exactly one run.
    let list = common::fslab(work.path())
        .args(["list", "--json"])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let runs = runs.as_array().expect("list --json is an array");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(
        runs[0].to_string().contains("mpiexec -n 4"),
        "{:?}",
        runs[0]
    );
}

#[test]
fn shared_tree_splits_directories_and_every_rank_fills_every_directory() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = run(
        work.path(),
        &[(
            4,
            args(
                "fdtree -d 3 -f 2 -s 1 -l 2 -q --json --no-store --shared",
                t.path(),
            ),
        )],
    );
    let doc = json(&out);
    assert_eq!(doc["mpi"]["layout"], "shared");
    // 13 directories in one tree: the root and index ≡ rank (mod 4) at each depth.
    assert_eq!(doc["counts"]["total"]["dirs"], 13);
    assert_eq!(doc["counts"]["total"]["files"], 4 * 2 * 13);
    for (phase, items) in per_rank_items(&doc) {
        if phase.starts_with("dir") {
            assert_eq!(items, vec![5, 3, 3, 2], "{phase}");
        } else {
            assert_eq!(items, vec![26; 4], "{phase}");
        }
    }
    assert_eq!(metric(&doc, "file_create", "items"), 104.0);
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn stonewall_counts_what_each_rank_did_when_the_first_finished() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = run(
        work.path(),
        &[(
            4,
            args(
                "fdtree -d 4 -f 40 -s 0 -l 2 -q --json --no-store --stonewall",
                t.path(),
            ),
        )],
    );
    let doc = json(&out);
    for p in doc["per_rank"][0]["phases"].as_array().unwrap() {
        let phase = p["phase"].as_str().unwrap();
        let ranks = p["ranks"].as_array().unwrap();
        let mut sum = 0;
        let mut first = (f64::INFINITY, 0u64, 0u64);
        for r in ranks {
            let items = r["items"].as_u64().unwrap();
            let mark = r["stonewall"]["items"]
                .as_u64()
                .expect("every rank has a mark");
            assert!(mark <= items, "{phase}: {r}");
            sum += mark;
            let end = r["end"].as_f64().unwrap();
            if end < first.0 {
                first = (end, items, mark);
            }
        }
        // The first finisher did all its items before the stonewall.
        assert_eq!(first.1, first.2, "{phase}: {p}");
        assert_eq!(
            metric(&doc, phase, "stonewall_items"),
            sum as f64,
            "{phase}"
        );
        assert!(metric(&doc, phase, "stonewall_items") <= metric(&doc, phase, "items"));
        assert!(metric(&doc, phase, "stonewall_elapsed") <= metric(&doc, phase, "elapsed") + 1e-9);
    }
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn a_failure_on_one_rank_is_reported_once_by_rank_0_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let missing = t.path().join("missing");
    let out = run(
        work.path(),
        &[
            (3, args("fdtree -d 2 -f 2 -s 0 -l 1 -q", t.path())),
            (1, args("fdtree -d 2 -f 2 -s 0 -l 1 -q", &missing)),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("fslab:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("rank 3 on "), "{err}");
    assert!(lines[0].contains("does not exist"), "{err}");
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn ranks_with_different_options_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = run(
        work.path(),
        &[
            (1, args("fdtree -d 2 -l 1 -q", t.path())),
            (1, args("fdtree -d 3 -l 1 -q", t.path())),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("rank 1 on "), "{err}");
    assert!(err.contains("same command line"), "{err}");
}

#[test]
fn commands_without_mpi_mode_are_refused_under_mpiexec() {
    let work = tempfile::tempdir().unwrap();
    let out = run(work.path(), &[(2, vec!["list".into()])]);
    // Both ranks refuse and exit 2 before MPI_Init; MPICH's launcher then reports the bad
    // termination and may kill what is left of the job, `timeout` included (seen once in CI
    // on a loaded machine: no exit code, killed by a signal). The refusal is what counts.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        out.status.code() == Some(2) || out.status.signal().is_some(),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("has no MPI mode"));
}

#[test]
fn disturbed_repetitions_are_only_kept_under_mpiexec() {
    // Each rank judges its own repetitions: one re-running or dropping a repetition while the
    // others did not would leave them waiting, so repeat and drop are refused on every rank
    // before MPI_Init (as commands without an MPI mode are; see the test above for MPICH's
    // launcher and the exit code).
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    for policy in ["repeat", "drop"] {
        let out = run(
            work.path(),
            &[(
                2,
                args(
                    &format!("fdtree -d 2 -l 1 -q --disturbed {policy}"),
                    t.path(),
                ),
            )],
        );
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.code() == Some(2) || out.status.signal().is_some(),
            "{:?}: {}",
            out.status,
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "--disturbed {policy} is not available in MPI mode"
            )),
            "{err}"
        );
    }
    // keep (the default, named) runs.
    let out = run(
        work.path(),
        &[(2, args("fdtree -d 2 -l 1 -q --disturbed keep", t.path()))],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn one_rank_and_the_null_backend_work() {
    let work = tempfile::tempdir().unwrap();
    let out = run(
        work.path(),
        &[(
            1,
            args(
                "fdtree --backend null -d 3 -f 5 -l 3 -q --json --no-store",
                work.path(),
            ),
        )],
    );
    let doc = json(&out);
    assert_eq!(doc["mpi"]["ranks"], 1);
    assert_eq!(metric(&doc, "file_create", "items"), 200.0);
    assert_eq!(metric(&doc, "dir_remove", "items"), 40.0);
}

#[test]
fn clock_offsets_of_ranks_sharing_a_clock_lie_within_their_uncertainty() {
    let work = tempfile::tempdir().unwrap();
    let out = mpi_command(
        work.path(),
        &[(
            3,
            args(
                "fdtree --backend null -d 2 -l 1 -q --json --no-store",
                work.path(),
            ),
        )],
    )
    .env("FSLAB_MPI_CLOCK_CHECK", "1")
    .output()
    .unwrap();
    let doc = json(&out);
    let offsets = doc["per_rank"][0]["clock"]["offsets"].as_array().unwrap();
    assert_eq!(offsets.len(), 3);
    for (rank, o) in offsets.iter().enumerate().skip(1) {
        let off = o["offset"].as_f64().unwrap();
        let unc = o["uncertainty"].as_f64().unwrap();
        assert!(unc > 0.0, "rank {rank} was measured: {o}");
        // One node, one clock: the true offset is 0, so the estimate is within ± half the
        // round trip by construction.
        assert!(off.abs() <= unc + 1e-9, "rank {rank}: {o}");
    }
}

#[test]
fn ctrl_c_on_one_rank_stops_all_ranks_and_removes_every_tree() {
    interrupt_rank_2("fdtree -d 10 -f 30 -s 0 -l 3 -q", ".r2");
}

#[test]
fn ctrl_c_on_one_rank_of_a_shared_tree_stops_all_ranks_and_removes_the_tree() {
    // Many directories, so the interrupt often lands in the depth-by-depth directory phases.
    interrupt_rank_2("fdtree -d 10 -f 3 -s 0 -l 4 -q --shared", ".shared");
}

/// Start 4 ranks, interrupt rank 2 as soon as the tree whose name ends in `tree` exists.
fn interrupt_rank_2(cmd: &str, tree: &str) {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let db = work.path().join("results.db");
    let child = mpi_command(work.path(), &[(4, args(cmd, t.path()))])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until rank 2's tree exists, then interrupt rank 2 alone.
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        let tree = std::fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(tree));
        if let (true, Some(pid)) = (tree, rank_pid(2, &db)) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the tree never appeared");
        std::thread::sleep(Duration::from_millis(2));
    };
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("fslab:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("rank 2 on "), "{err}");
    assert!(lines[0].contains("interrupted"), "{err}");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "partial trees left behind"
    );
}

#[test]
fn repetitions_and_timed_syncfs_under_mpi() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = run(
        work.path(),
        &[(
            2,
            args(
                "fdtree -d 2 -f 2 -s 1 -l 1 -q --json --no-store --repeat 2 --sync",
                t.path(),
            ),
        )],
    );
    let doc = json(&out);
    assert_eq!(doc["repetitions"].as_array().unwrap().len(), 2);
    assert_eq!(doc["per_rank"].as_array().unwrap().len(), 2);
    for rep in doc["repetitions"].as_array().unwrap() {
        let sync = rep
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["metric"] == "sync_time")
            .count();
        assert_eq!(sync, 4, "a timed syncfs in every phase: {rep}");
    }
    let s = doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["phase"] == "file_create" && m["metric"] == "items")
        .unwrap()
        .clone();
    assert_eq!((s["n"].as_u64(), s["mean"].as_f64()), (Some(2), Some(12.0)));
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}
