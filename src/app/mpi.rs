//! Whether a command runs as an MPI rank, and running it as one (builds with the `mpi`
//! feature): the engines whose kind supports MPI ([`crate::workload::WorkloadKind::caps`])
//! run their MPI command (`app/<engine>/mpi.rs`, dispatched by `app::dispatch_rank`) under
//! an MPI launcher; every other command is refused when there are several ranks. An engine's
//! MPI run goes through the same `finish::Recorded` as its plain command (`Recorded::under`),
//! and rank 0 ends it with the engine's own ending, given what MPI adds to it ([`UnderMpi`]:
//! the job's facts, every rank's figures, the `--per-rank` table). See `doc/mpi.md`.

use super::rundoc::UnderMpi;
use crate::cli::{Cli, Command};
use crate::mpi::{comm, job, launch};

/// Whether this process should run `cmd` as an MPI rank: an MPI launcher started it and the
/// command runs an engine with an MPI mode. A command without one is refused when there are
/// several ranks.
pub fn wants_mpi(cmd: &Command) -> anyhow::Result<bool> {
    let Some(launch) = launch::from_env()? else {
        return Ok(false);
    };
    if cmd.engine().is_some_and(|k| k.caps().mpi) {
        return Ok(true);
    }
    let name = match cmd {
        Command::Dbench(_) => "dbench --generate",
        other => other.name(),
    };
    launch::refuse_for_command(Some(&launch), name)?;
    Ok(false)
}

/// Every rank judges its own repetitions: one that re-ran or dropped a repetition while the
/// others did not would leave them waiting, so `--disturbed repeat` and `drop` are refused.
pub(crate) fn refuse_disturbed(r: &crate::cli::RunArgs) -> anyhow::Result<()> {
    if r.disturbed == crate::stats::adaptive::Disturbed::Keep {
        return Ok(());
    }
    Err(crate::error::usage(format!(
        "--disturbed {} is not available in MPI mode (each rank judges its own repetitions); run without it: disturbed repetitions are kept and flagged",
        r.disturbed.as_str()
    )))
}

/// What the job adds to an engine command: its ranks and hosts, and [`job::mpi_json`] with
/// the engine's `extra` facts.
pub(crate) fn under_mpi(comm: &comm::Comm, extra: &[(&str, serde_json::Value)]) -> UnderMpi {
    UnderMpi {
        ranks: comm.size(),
        hosts: job::hosts(comm).len() as u32,
        job: job::mpi_json(comm, extra),
        ..UnderMpi::default()
    }
}

impl UnderMpi {
    /// The same with every rank's figures of every repetition (`reps`) and, with
    /// `--per-rank` (`shown`), the last repetition's `table`.
    pub(crate) fn with_reps<R: serde::Serialize>(
        mut self,
        reps: &[R],
        shown: bool,
        table: impl FnOnce(&R) -> String,
    ) -> anyhow::Result<Self> {
        self.per_rank = Some(serde_json::to_value(reps)?);
        self.table = reps.last().filter(|_| shown).map(table);
        Ok(self)
    }
}

/// Run `cli` as one MPI rank (after [`wants_mpi`] said so).
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // Refused on every rank alike, before MPI starts (an engine whose options its own parser
    // reads refuses it after parsing them).
    let mut command = cli.command;
    if let Some(r) = command.run_args_mut() {
        refuse_disturbed(r)?;
    }
    let comm = std::rc::Rc::new(comm::Comm::init()?);
    let db = cli.global.db;
    let result = super::dispatch_rank(&comm, command, db);
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn command_names_are_the_subcommands() {
        for (args, name) in [
            (vec!["fslab", "list"], "list"),
            (vec!["fslab", "show", "3"], "show"),
            (vec!["fslab", "cleanup"], "cleanup"),
            (vec!["fslab", "study", "plan", "x.toml"], "study"),
        ] {
            let c = Cli::try_parse_from(args).unwrap();
            assert_eq!(c.command.name(), name);
        }
    }

    #[test]
    fn engine_commands_with_an_mpi_mode_are_the_mpi_capable_kinds() {
        let c = Cli::try_parse_from(["fslab", "dbench", "--generate", "x.txt"]).unwrap();
        assert_eq!(c.command.engine(), None);
        let c = Cli::try_parse_from(["fslab", "fdtree"]).unwrap();
        assert!(c.command.engine().is_some_and(|k| k.caps().mpi));
    }
}
