//! MPI mode: the engines run as MPI ranks under `mpiexec`, as IOR, mdtest and IO500 do, for
//! file systems that one client cannot load (NFS, Lustre, GPFS, CephFS). See `doc/mpi.md`.
//!
//! The rank-agnostic parts are plain functions compiled into every build and unit-tested
//! without MPI: how a launch is detected ([`launch`]), how the ranks' figures are combined
//! ([`aggregate`]), how clocks are aligned ([`clock`]) and the shared-tree layout
//! ([`shared_tree`]). The parts that call MPI exist only with the cargo feature `mpi`.
//!
//! Under MPI every rank runs the same command; rank 0 alone prints and writes the results
//! database, the others never open it. Failures are agreed collectively (see `comm`), so an
//! error on one rank ends the run on all of them and rank 0 reports it naming the rank.

pub mod aggregate;
pub mod clock;
pub mod launch;
pub mod shared_tree;

#[cfg(feature = "mpi")]
mod cli;
#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod dbench;
#[cfg(feature = "mpi")]
mod fdtree;
#[cfg(feature = "mpi")]
mod iozone;
#[cfg(feature = "mpi")]
mod job;

#[cfg(feature = "mpi")]
pub use cli::{MpiArgs, MpiReportArgs};

#[cfg(feature = "mpi")]
use crate::cli::{Cli, Command};

/// The subcommand's name as typed (`list`, `fdtree`, …), for messages.
#[cfg(feature = "mpi")]
fn command_name(cmd: &Command) -> String {
    let debug = format!("{cmd:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_lowercase()
}

/// Whether this process should run `cmd` as an MPI rank: an MPI launcher started it and the
/// command has an MPI mode. A command without one is refused when there are several ranks.
#[cfg(feature = "mpi")]
pub fn wants_mpi(cmd: &Command) -> anyhow::Result<bool> {
    let Some(launch) = launch::from_env()? else {
        return Ok(false);
    };
    let name = match cmd {
        Command::Fdtree(_) | Command::Iozone(_) => return Ok(true),
        // Writing the generated loadfile is not a benchmark: every rank would write it.
        Command::Dbench(a) if a.generate.is_some() => "dbench --generate".to_string(),
        Command::Dbench(_) => return Ok(true),
        other => command_name(other),
    };
    launch::refuse_for_command(Some(&launch), &name)?;
    Ok(false)
}

/// Run `cli` as one MPI rank (after [`wants_mpi`] said so).
#[cfg(feature = "mpi")]
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let comm = std::rc::Rc::new(comm::Comm::init()?);
    let db = cli.db;
    let result = match cli.command {
        Command::Fdtree(a) => fdtree::run(&comm, a, db),
        Command::Iozone(a) => iozone::run(&comm, a, db),
        Command::Dbench(a) => dbench::run(&comm, a, db),
        other => Err(crate::error::usage(format!(
            "`fslab {}` has no MPI mode; run it without mpiexec",
            command_name(&other)
        ))),
    };
    match result {
        Ok(()) => Ok(()),
        // Agreed by all ranks: every rank returns, rank 0's message names the failed ranks.
        Err(e) if e.downcast_ref::<crate::error::Collective>().is_some() => Err(e),
        // Escaped the collectives: the other ranks may be waiting for this one. End the job.
        Err(e) => {
            let code = crate::error::exit_code(&e);
            eprintln!(
                "fslab: rank {} on {}: {e:#}; ending all ranks (MPI_Abort)",
                comm.rank(),
                comm.hosts()[comm.rank() as usize]
            );
            comm.abort(code)
        }
    }
}

#[cfg(all(test, feature = "mpi"))]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn command_names_come_from_the_variant() {
        let c = Cli::try_parse_from(["fslab", "list"]).unwrap();
        assert_eq!(command_name(&c.command), "list");
        let c = Cli::try_parse_from(["fslab", "show", "3"]).unwrap();
        assert_eq!(command_name(&c.command), "show");
    }
}
