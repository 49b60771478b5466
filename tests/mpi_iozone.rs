//! `mpiexec -n N fslab iozone -t N …` on one machine: one worker per rank, every rank's bytes
//! accounted for in IOzone's figures and the aggregate, IOzone's stonewall across ranks, bad
//! `-t` refused, and a failure or Ctrl-C on one rank ending the run on all, reported once.
//!
//! Needs a build with `--features mpi` and `mpiexec` (MPICH: `scripts/install-deps --mpi`):
//!
//!     cargo test --features mpi --test mpi_iozone
//!
//! Without mpiexec these tests fail; they never pass silently.
#![cfg(feature = "mpi")]

mod common;

use common::mpi::{
    error_lines, interrupt_rank, json, mpi_command, scratch, stored_runs, text, words,
};
use std::path::Path;
use std::process::Output;

/// `mpiexec -n <n> fslab iozone <args>` in `dir` (the files go there), database in `db`.
fn iozone(db: &Path, dir: &Path, n: usize, args: &str) -> Output {
    let mut w = vec!["iozone".to_string()];
    w.extend(words(args));
    let out = mpi_command(db, &[(n, w)])
        .current_dir(dir)
        .output()
        .expect("timeout and mpiexec run");
    assert_ne!(
        out.status.code(),
        Some(124),
        "mpiexec hung: {}",
        text(&out.stderr)
    );
    out
}

fn metric(doc: &serde_json::Value, phase: &str, name: &str) -> f64 {
    common::metric(&doc["points"][0]["repetitions"][0], phase, name)
}

/// Per phase of the first repetition: the ranks' records.
fn phases(doc: &serde_json::Value) -> Vec<(String, Vec<serde_json::Value>)> {
    doc["per_rank"][0]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ranks = p["ranks"].as_array().unwrap().clone();
            for (i, r) in ranks.iter().enumerate() {
                assert_eq!(r["rank"].as_u64(), Some(i as u64), "{p}");
            }
            (p["phase"].as_str().unwrap().to_string(), ranks)
        })
        .collect()
}

fn u(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"))
}

#[test]
fn without_stonewalling_every_rank_moves_its_whole_file_and_the_run_is_stored_once() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = iozone(
        work.path(),
        t.path(),
        4,
        "-t 4 -s 1m -r 64k -i 0 -i 1 -x --phase-pause 0 --quiet --json",
    );
    let doc = json(&out);
    assert_eq!(doc["schema"], "fslab.iozone.mpi.v2");
    assert_eq!(doc["mpi"]["ranks"], 4);
    let file = 1u64 << 20;
    let ps = phases(&doc);
    let names: Vec<&str> = ps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["write", "rewrite", "read", "reread"]);
    for (phase, ranks) in &ps {
        for r in ranks {
            assert_eq!(
                (u(r, "counted"), u(r, "total")),
                (file, file),
                "{phase}: {r}"
            );
            assert_eq!(r["stopped"], false, "{phase}: {r}");
        }
        let p = phase.as_str();
        assert_eq!(metric(&doc, p, "bytes_total"), (4 * file) as f64, "{p}");
        assert_eq!(
            metric(&doc, p, "bytes_before_stop"),
            (4 * file) as f64,
            "{p}"
        );
        assert_eq!(metric(&doc, p, "ranks"), 4.0);
        assert_eq!(metric(&doc, p, "min_xfer"), file as f64);
        // The aggregate: all bytes over the earliest start to the latest finish.
        let agg = metric(&doc, p, "aggregate");
        let want = 4.0 * 1024.0 / metric(&doc, p, "elapsed");
        assert!((agg - want).abs() / want < 1e-6, "{p}: {agg} vs {want}");
        assert_eq!(metric(&doc, p, "throughput"), agg);
        assert!(metric(&doc, p, "start_skew") >= 0.0);
        // "Children see" is the sum of the ranks' own rates.
        let sum: f64 = ranks.iter().map(|r| r["rate"].as_f64().unwrap()).sum();
        assert!(
            (metric(&doc, p, "children_sum") - sum).abs() / sum < 1e-9,
            "{p}"
        );
    }
    // Every file removed; rank 0 stored exactly one run.
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    let runs = stored_runs(work.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(
        runs[0].to_string().contains("mpiexec -n 4"),
        "{:?}",
        runs[0]
    );
}

#[test]
fn stonewalling_counts_up_to_the_first_rank_to_finish() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = iozone(
        work.path(),
        t.path(),
        4,
        "-t 4 -s 4m -r 4k -i 0 -i 1 --phase-pause 0 --quiet --json --no-store",
    );
    let doc = json(&out);
    let file = 4u64 << 20;
    for (phase, ranks) in phases(&doc) {
        let p = phase.as_str();
        // The first rank to end its loop finished before any stop and counted everything.
        let first = ranks
            .iter()
            .filter(|r| r["stopped"] == false)
            .min_by(|a, b| {
                let end = |r: &serde_json::Value| {
                    r["start"].as_f64().unwrap() + r["timed"].as_f64().unwrap()
                };
                end(a).total_cmp(&end(b))
            })
            .unwrap_or_else(|| panic!("{p}: some rank must finish first: {ranks:?}"));
        assert_eq!(
            (u(first, "counted"), u(first, "total")),
            (file, file),
            "{p}"
        );
        for r in &ranks {
            assert!(u(r, "counted") <= u(r, "total"), "{p}: {r}");
            assert_eq!(u(r, "counted") % 4096, 0, "{p}: whole records: {r}");
            if p == "write" {
                // Writers write on to the end of their file after the stop.
                assert_eq!(u(r, "total"), file, "{p}: {r}");
            }
        }
        let counted: u64 = ranks.iter().map(|r| u(r, "counted")).sum();
        let total: u64 = ranks.iter().map(|r| u(r, "total")).sum();
        assert_eq!(metric(&doc, p, "bytes_before_stop"), counted as f64, "{p}");
        assert_eq!(metric(&doc, p, "bytes_total"), total as f64, "{p}");
        let fewest = ranks.iter().map(|r| u(r, "counted")).min().unwrap();
        assert_eq!(metric(&doc, p, "min_xfer"), fewest as f64, "{p}");
        let stopped = ranks.iter().filter(|r| r["stopped"] == true).count();
        assert_eq!(metric(&doc, p, "stopped_workers"), stopped as f64, "{p}");
        if stopped > 0 {
            assert!(metric(&doc, p, "stonewall_lag") >= 0.0, "{p}");
        }
    }
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn one_rank_is_the_baseline_and_a_wrong_t_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let out = iozone(
        work.path(),
        t.path(),
        1,
        "-t 1 -s 256k -r 64k -i 0 --phase-pause 0 --quiet --json --no-store",
    );
    let doc = json(&out);
    assert_eq!(metric(&doc, "write", "bytes_total"), (256 * 1024) as f64);
    for (args, want) in [
        ("-t 3 -s 256k -i 0 --no-store", "-t 3 but 2 ranks"),
        ("-s 256k -i 0 --no-store", "add -t 2"),
    ] {
        let out = iozone(work.path(), t.path(), 2, args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let lines = error_lines(&out.stderr);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(want), "{lines:?}");
    }
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn a_failure_on_one_rank_is_reported_once_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    // Rank 3's file name is taken by a directory: its first open fails.
    std::fs::create_dir(t.path().join("iozone.DUMMY.3")).unwrap();
    let out = iozone(
        work.path(),
        t.path(),
        4,
        "-t 4 -s 1m -r 64k -i 0 --phase-pause 0 --quiet --no-store",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let lines = error_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{}", text(&out.stderr));
    assert!(lines[0].contains("rank 3 on "), "{lines:?}");
    assert!(lines[0].contains("iozone.DUMMY.3"), "{lines:?}");
    std::fs::remove_dir(t.path().join("iozone.DUMMY.3")).unwrap();
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn ctrl_c_on_one_rank_stops_all_ranks_and_removes_every_file() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let mut w = vec!["iozone".to_string()];
    w.extend(words(
        "-t 4 -s 64m -r 4k -i 0 -i 1 -i 2 --phase-pause 0.3 --quiet --no-store",
    ));
    let mut cmd = mpi_command(work.path(), &[(4, w)]);
    cmd.current_dir(t.path());
    let out = interrupt_rank(cmd, work.path(), 2, || {
        t.path().join("iozone.DUMMY.2").exists()
    });
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let lines = error_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{}", text(&out.stderr));
    assert!(lines[0].contains("rank 2 on "), "{lines:?}");
    assert!(lines[0].contains("interrupted"), "{lines:?}");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "test files left behind"
    );
}
