//! One function per subcommand: turn parsed arguments into work and print the result.

mod cleanup;
mod dbench;
mod doctor;
mod fdtree;
mod finish;
mod fio;
mod iozone;
mod list;
mod manage;
mod mdtest;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(test)]
mod prop_tests;
mod report;
mod rundoc;
mod study;
pub(crate) mod study_plan;

use crate::cli::{Cli, Command};
use crate::store::Store;
use anyhow::Result;
use std::path::PathBuf;

/// Check the options every engine command shares ([`crate::cli::RunArgs`]).
fn check_run_args(r: &crate::cli::RunArgs) -> Result<()> {
    check_repeat(r.repeat)?;
    if r.min_phase.is_nan() || r.min_phase < 0.0 {
        crate::bail_usage!("--min-phase must be a number of seconds ≥ 0");
    }
    crate::units::check_seconds(r.min_phase, "--min-phase").map_err(crate::error::usage)
}

/// Check `--repeat` of the engine commands: 1 to [`crate::plan::MAX_REPETITIONS`].
fn check_repeat(n: u32) -> Result<()> {
    if n == 0 {
        crate::bail_usage!("--repeat 0: at least one repetition is needed; use --repeat 1 or more");
    }
    if n > crate::plan::MAX_REPETITIONS {
        crate::bail_usage!(
            "--repeat {n} is out of range; use 1 to {}",
            crate::plan::MAX_REPETITIONS
        );
    }
    Ok(())
}

/// Run the parsed command line.
pub fn run(mut cli: Cli) -> Result<()> {
    if let Some(r) = cli.command.run_args_mut() {
        r.normalize();
    }
    // Under an MPI launcher the MPI-aware engines run as ranks (src/mpi, doc/mpi.md).
    // A dry run of iozone or dbench only prints; no rank needs to start for it.
    #[cfg(feature = "mpi")]
    let dry = matches!(&cli.command, Command::Iozone(a) if a.run.dry_run)
        || matches!(&cli.command, Command::Dbench(a) if a.run.dry_run);
    #[cfg(feature = "mpi")]
    if !dry && mpi::wants_mpi(&cli.command)? {
        return mpi::run(cli);
    }
    #[cfg(not(feature = "mpi"))]
    crate::mpi::launch::refuse_without_feature(crate::mpi::launch::from_env()?.as_ref())?;
    dispatch(cli)
}

/// Run the parsed command line in this process alone (no MPI).
pub fn dispatch(cli: Cli) -> Result<()> {
    let db = cli.global.db.clone();
    match cli.command {
        Command::Fdtree(a) => fdtree::run(a, db),
        Command::Iozone(a) => iozone::run(a, db),
        Command::Dbench(a) => dbench::run(a, db),
        Command::Fio(a) => fio::run(a, db),
        Command::List(a) => list::list(a, db),
        Command::Show(a) => list::show(a, db),
        Command::Report(a) => report::report(a, db),
        Command::Compare(a) => report::compare(a, db),
        Command::Study(crate::cli::StudyCommand::Plan(a)) => study::plan(a, db),
        Command::Study(crate::cli::StudyCommand::Run(a)) => study::run(a, db),
        Command::Cleanup(a) => cleanup::run(a, db),
        Command::Rm(a) => manage::rm(a, db),
        Command::Export(a) => manage::export(a, db),
        Command::Import(a) => manage::import(a, db),
        Command::Mdtest(a) => mdtest::run(a, db),
        Command::Doctor(a) => doctor::run(a, db),
        Command::GuestSelftest => doctor::guest_selftest(),
    }
}

/// Run the parsed command as one rank of an MPI job (after `mpi::wants_mpi` said so): the
/// engines' MPI commands; any other is refused.
#[cfg(feature = "mpi")]
pub(crate) fn dispatch_rank(
    comm: &std::rc::Rc<crate::mpi::comm::Comm>,
    command: Command,
    db: Option<PathBuf>,
) -> Result<()> {
    match command {
        Command::Fdtree(a) => fdtree::mpi::run(comm, a, db),
        Command::Iozone(a) => iozone::mpi::run(comm, a, db),
        Command::Dbench(a) => dbench::mpi::run(comm, a, db),
        Command::Mdtest(a) => mdtest::mpi::run(comm, a, db),
        other => Err(crate::error::usage(format!(
            "`fslab {}` has no MPI mode; run it without mpiexec",
            other.name()
        ))),
    }
}

/// Open the results database chosen by `--db` or the default, for a command that writes:
/// the file is created if missing and migrated to the current schema.
pub fn open_store(db: Option<PathBuf>) -> Result<Store> {
    let path = db.unwrap_or_else(crate::store::default_path);
    Store::open(&path)
}

/// Open the results database chosen by `--db` or the default, for a command that only reads
/// (`list`, `show`, `report`, `compare`): nothing is created or changed, so it works on a
/// read-only file system, and a missing file is an error that names it.
pub fn open_store_read_only(db: Option<PathBuf>) -> Result<Store> {
    let path = db.unwrap_or_else(crate::store::default_path);
    Store::open_read_only(&path)
}

/// The command line as typed, quoted where needed, for the store.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
