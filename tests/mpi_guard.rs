//! A build without the `mpi` feature started by an MPI launcher refuses to run as one of
//! several ranks (each would run the whole benchmark and store its own results), and runs
//! normally as a single rank or when told to ignore the launcher.
#![cfg(not(feature = "mpi"))]

mod common;

use common::fslab;
use predicates::prelude::*;

#[test]
fn several_ranks_without_mpi_support_are_refused() {
    let work = tempfile::tempdir().unwrap();
    fslab(work.path())
        .args(["fdtree", "--backend", "null", "-q", "--no-store"])
        .env("PMI_RANK", "1")
        .env("PMI_SIZE", "4")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--features mpi"))
        .stderr(predicate::str::contains("one of 4 ranks"));
}

#[test]
fn a_single_rank_or_fslab_mpi_0_runs_as_usual() {
    let work = tempfile::tempdir().unwrap();
    for (k, v) in [("PMI_SIZE", "1"), ("FSLAB_MPI", "0")] {
        fslab(work.path())
            .args([
                "fdtree",
                "--backend",
                "null",
                "-d",
                "2",
                "-l",
                "1",
                "-q",
                "--no-store",
            ])
            .env("PMI_RANK", "0")
            .env(
                "OMPI_COMM_WORLD_SIZE",
                if k == "FSLAB_MPI" { "8" } else { "1" },
            )
            .env(k, v)
            .assert()
            .success();
    }
}
