//! `mpiexec -n N fslab dbench NCLIENTS …` on one machine: the clients spread over the ranks,
//! every rank's operations and bytes accounted for in the totals and the merged histograms,
//! one measured window for all ranks, and Ctrl-C on one rank ending the run on all.
//!
//! Needs a build with `--features mpi` and `mpiexec` (MPICH: `scripts/install-deps --mpi`):
//!
//!     cargo test --features mpi --test mpi_dbench
//!
//! Without mpiexec these tests fail; they never pass silently.
#![cfg(feature = "mpi")]

mod common;

use common::mpi::{
    error_lines, interrupt_rank, json, mpi_command, scratch, stored_runs, text, words,
};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A small generated loadfile (40 tasks per pass) in `dir`.
fn small_loadfile(dir: &Path) -> PathBuf {
    let lf = dir.join("office40.txt");
    common::fslab(dir)
        .args(["dbench", "--generate"])
        .arg(&lf)
        .args(["--tasks", "40"])
        .assert()
        .success();
    lf
}

/// `mpiexec -n <n> fslab dbench <args> -c <loadfile> -D <dir>`, database in `db`.
fn dbench(db: &Path, n: usize, args: &str, lf: &Path, dir: &Path) -> Output {
    let mut w = vec!["dbench".to_string()];
    w.extend(words(args));
    w.extend(["-c".into(), lf.display().to_string()]);
    w.extend(["-D".into(), dir.display().to_string()]);
    let out = mpi_command(db, &[(n, w)])
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
    common::metric(&doc["repetitions"][0], phase, name)
}

fn u(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"))
}

#[test]
fn one_pass_per_client_every_rank_and_operation_accounted_for() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let lf = small_loadfile(work.path());
    let out = dbench(
        work.path(),
        4,
        "6 --run-once --warmup 0 -t 120 --json",
        &lf,
        t.path(),
    );
    let doc = json(&out);
    assert_eq!(doc["schema"], "fslab.dbench.mpi.v2");
    assert_eq!(doc["mpi"]["ranks"], 4);
    let ops = u(&doc["loadfile"], "operations_per_pass");
    let bytes = u(&doc["loadfile"], "bytes_per_pass");
    let rep = &doc["outcomes"][0];
    // Six clients, one pass each: exactly six passes of work, all of it measured.
    assert_eq!(u(rep, "passes"), 6);
    assert_eq!(u(rep, "measured_ops"), 6 * ops);
    assert_eq!(u(rep, "measured_bytes"), 6 * bytes);
    assert_eq!(metric(&doc, "total", "operations"), (6 * ops) as f64);
    assert_eq!(metric(&doc, "total", "ranks"), 4.0);
    // The per-operation counts come from the histograms merged over the ranks.
    let per_op: u64 = rep["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| u(o, "count"))
        .sum();
    assert_eq!(per_op, 6 * ops);
    // Clients 0-1, 2-3, 4, 5 on ranks 0-3; each rank did exactly its clients' passes.
    let ranks = doc["per_rank"][0]["ranks"].as_array().unwrap();
    let shares: Vec<(u64, u64)> = ranks
        .iter()
        .map(|r| (u(r, "first_client"), u(r, "clients")))
        .collect();
    assert_eq!(shares, [(0, 2), (2, 2), (4, 1), (5, 1)]);
    for r in ranks {
        let c = u(r, "clients");
        assert_eq!(
            (u(r, "passes"), u(r, "measured_ops"), u(r, "measured_bytes")),
            (c, c * ops, c * bytes),
            "{r}"
        );
    }
    let sum_ops: u64 = ranks.iter().map(|r| u(r, "measured_ops")).sum();
    assert_eq!(sum_ops, u(rep, "measured_ops"));
    // Every client tree removed; rank 0 stored one run, with the merged histograms.
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
fn a_timed_run_measures_one_window_for_all_ranks() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let lf = small_loadfile(work.path());
    let out = dbench(
        work.path(),
        3,
        "3 -t 1 --warmup 1 --json --no-store",
        &lf,
        t.path(),
    );
    let doc = json(&out);
    let rep = &doc["outcomes"][0];
    // The clients run past the end of the window, which is then exactly -t long.
    assert!(
        (metric(&doc, "total", "elapsed") - 1.0).abs() < 1e-9,
        "{rep}"
    );
    let ranks = doc["per_rank"][0]["ranks"].as_array().unwrap();
    let bytes: u64 = ranks.iter().map(|r| u(r, "measured_bytes")).sum();
    let ops: u64 = ranks.iter().map(|r| u(r, "measured_ops")).sum();
    assert_eq!(bytes, u(rep, "measured_bytes"));
    assert_eq!(ops, u(rep, "measured_ops"));
    let mb_s = metric(&doc, "total", "throughput");
    assert!(
        (mb_s - bytes as f64 / 1e6).abs() < 1e-6 * mb_s.max(1.0),
        "{mb_s}"
    );
    for r in ranks {
        // Released at the common start (late by scheduling at most), ended after the window.
        let start = r["start"].as_f64().unwrap();
        assert!((-0.001..1.0).contains(&start), "{r}");
        assert!(r["finish"].as_f64().unwrap() >= 2.0, "{r}");
    }
    assert!(metric(&doc, "total", "start_skew") >= 0.0);
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

#[test]
fn fewer_clients_than_ranks_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let lf = small_loadfile(work.path());
    let out = dbench(work.path(), 4, "2 -t 1 --no-store", &lf, t.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let lines = error_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("every rank needs at least one"),
        "{lines:?}"
    );
}

#[test]
fn ctrl_c_on_one_rank_stops_all_ranks_and_removes_the_trees() {
    let work = tempfile::tempdir().unwrap();
    let t = scratch();
    let lf = small_loadfile(work.path());
    let mut w = words("dbench 4 -t 60 --quiet --no-store -c");
    w.push(lf.display().to_string());
    w.extend(["-D".into(), t.path().display().to_string()]);
    let cmd = mpi_command(work.path(), &[(4, w)]);
    let out = interrupt_rank(cmd, work.path(), 2, || {
        t.path().join("clients").join("client2").exists()
    });
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let lines = error_lines(&out.stderr);
    assert_eq!(lines.len(), 1, "{}", text(&out.stderr));
    assert!(lines[0].contains("rank 2 on "), "{lines:?}");
    assert!(lines[0].contains("interrupted"), "{lines:?}");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "client trees left behind"
    );
}
