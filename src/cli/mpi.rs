//! Command-line options of MPI mode, flattened into the engine commands that have one (see
//! `doc/mpi.md`). A build without the `mpi` feature hides them and refuses them with a
//! message that names the MPI build, rather than clap's "unexpected argument".

use clap::Args;

/// Whether this build lacks MPI mode (its options are then hidden from --help).
const NO_MPI: bool = cfg!(not(feature = "mpi"));

/// The refusal of MPI-only options in a build without MPI mode.
fn refuse_without_mpi(used: &[&str]) -> anyhow::Result<()> {
    if NO_MPI && !used.is_empty() {
        crate::bail_usage!(
            "{} needs the MPI build of fslab (MPI mode runs under mpiexec); rebuild with `scripts/install-deps --mpi && cargo build --release --features mpi` and run it as `mpiexec -n N fslab …` (see doc/mpi.md)",
            used.join(", ")
        );
    }
    Ok(())
}

/// Options that only apply under `mpiexec`.
#[derive(Debug, Clone, Default, Args)]
pub struct MpiArgs {
    /// Under mpiexec: all ranks work in one shared tree (directories split among ranks, every
    /// rank's files in every directory, the IO500's shared-directory mode) instead of one tree per
    /// rank. Default: one tree per rank.
    #[arg(long, help_heading = "MPI mode (under mpiexec, see doc/mpi.md)", hide = NO_MPI)]
    pub shared: bool,
    /// Under mpiexec: also measure each phase up to the moment the first rank finishes its
    /// share (IOzone's stonewall), reporting the items every rank had done by then beside the
    /// usual last-done figures. Default: off.
    #[arg(long, help_heading = "MPI mode (under mpiexec, see doc/mpi.md)", hide = NO_MPI)]
    pub stonewall: bool,
    /// Under mpiexec: print every rank's items, start offset, time and rate per phase (last
    /// repetition; JSON always has them). Default: off.
    #[arg(long, help_heading = "MPI mode (under mpiexec, see doc/mpi.md)", hide = NO_MPI)]
    pub per_rank: bool,
}

impl MpiArgs {
    /// Refuse MPI-only options in a run that is not under mpiexec.
    pub fn refuse_outside_mpi(&self) -> anyhow::Result<()> {
        let used: Vec<&str> = [
            (self.shared, "--shared"),
            (self.stonewall, "--stonewall"),
            (self.per_rank, "--per-rank"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| *f)
        .collect();
        refuse_without_mpi(&used)?;
        if !used.is_empty() {
            crate::bail_usage!(
                "{} only apply under mpiexec (e.g. `mpiexec -n 4 fslab fdtree …`); drop them or start fslab with mpiexec",
                used.join(", ")
            );
        }
        Ok(())
    }
}

/// MPI options of the engines whose layout under mpiexec is fixed (`iozone -t`, `dbench`).
#[derive(Debug, Clone, Default, Args)]
pub struct MpiReportArgs {
    /// Under mpiexec: print every rank's figures (last repetition; JSON always has them).
    /// Default: off.
    #[arg(long, help_heading = "MPI mode (under mpiexec, see doc/mpi.md)", hide = NO_MPI)]
    pub per_rank: bool,
}

impl MpiReportArgs {
    /// Refuse MPI-only options in a run that is not under mpiexec.
    pub fn refuse_outside_mpi(&self) -> anyhow::Result<()> {
        if self.per_rank {
            refuse_without_mpi(&["--per-rank"])?;
            crate::bail_usage!(
                "--per-rank only applies under mpiexec (e.g. `mpiexec -n 4 fslab dbench 8 …`); drop it or start fslab with mpiexec"
            );
        }
        Ok(())
    }
}
