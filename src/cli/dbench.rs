//! `fslab dbench` options: dbench's arguments (the study's keys, in
//! [`crate::workload::dbench::DbenchSpec`]), the command's own and the loadfile generator's.

use super::{RunArgs, Wording};
use clap::Args;
use std::path::PathBuf;

pub(super) const EXAMPLES: &str = "\
Examples:
  fslab dbench -D /mnt/test 10                          10 clients, fslab's office load, 120 s warmup + 600 s
  fslab dbench -D /mnt/test -t 60 16                    16 clients, 12 s warmup + 60 s measured
  fslab dbench -c /usr/share/dbench/client.txt -D /mnt/test -t 60 4   dbench's own loadfile
  fslab dbench -D /mnt/test -t 30 --fsync --repeat 5 8  fsync after every write, five runs, mean and CI
  fslab dbench --generate office.txt --seed 7           write a loadfile from fslab's office model";

/// How `fslab dbench` words the common options.
pub(super) const WORDING: Wording = Wording {
    repeat: "Run the load N times (each with its warmup and -t) and report mean, sd and 95% CI \
of the throughput and the per-operation latencies. Default: 1.",
    format: "Output format: dbench's text, or one JSON document (--json is the same as \
--format json)",
    dry_run: "Print the clients, the loadfile, the run time and the space needed; create \
nothing. Default: run",
    quiet: "No per-second progress lines, no repetition counter (`dbench rep 2/3 · ETA …`) and \
no \"stored as run N\" line on stderr. Default: all shown",
    text_only: true,
    short_q: true,
};

/// `fslab dbench`: dbench's parameters (the study's keys, as arguments) and the command's own
/// options.
#[derive(Debug, Args)]
pub struct DbenchArgs {
    /// Clients, run time, loadfile and sync options: the study's dbench keys, as arguments.
    #[command(flatten)]
    pub load: crate::workload::dbench::DbenchSpec,
    /// Directory the client trees are made in (dbench -D).
    #[arg(short = 'D', long, default_value = ".", value_name = "DIR")]
    pub directory: PathBuf,
    /// fdatasync the parent directory after unlink, rmdir and rename (dbench -S). Default: off.
    #[arg(short = 'S', long)]
    pub sync_dir: bool,
    /// Skip the case-insensitive name lookups that imitate Samba (dbench --no-resolve).
    /// Default: lookups on, like dbench.
    #[arg(long)]
    pub no_resolve: bool,
    /// Replay as fast as possible, ignoring the loadfile's timestamps. Default: timestamps are
    /// honoured like dbench (client.txt has none).
    #[arg(long)]
    pub ignore_timestamps: bool,
    /// Play the loadfile once per client instead of looping until -t is over (dbench 5
    /// --run-once); -t still caps the run. Default: loop until -t is over.
    #[arg(long)]
    pub run_once: bool,
    /// Leave the client trees in place after the run (dbench --skip-cleanup). Default: removed.
    #[arg(long)]
    pub skip_cleanup: bool,
    /// Repetitions, output (with --json the progress lines go to stderr) and store.
    #[command(flatten)]
    pub run: RunArgs,
    /// Write fslab's default loadfile model to FILE and exit (no clients are run).
    #[arg(long, value_name = "FILE", conflicts_with = "clients")]
    pub generate: Option<PathBuf>,
    /// Seed for --generate. Default: the seed of the built-in default load.
    #[arg(long, value_name = "N", requires = "generate")]
    pub seed: Option<u64>,
    /// Tasks per pass for --generate, 1 to 10000. Default: as the built-in default load (1500).
    #[arg(long, value_name = "N", requires = "generate")]
    pub tasks: Option<u32>,
    /// MPI mode options (builds with the `mpi` feature; hidden and refused in others).
    #[command(flatten)]
    pub mpi: crate::cli::MpiReportArgs,
}
