//! `fslab fdtree` options: fdtree.bash's flags (the study's keys, in
//! [`crate::workload::fdtree::FdtreeSpec`]) and the command's own.

use super::{BackendArg, RunArgs, Wording};
use crate::workload::fdtree;
use clap::Args;
use std::path::PathBuf;

pub(super) const EXAMPLES: &str = "\
Examples:
  fslab fdtree -d 20 -f 40 -s 1 -l 3 -o /mnt/test     8,421 dirs and 336,840 files of 4 KiB
  fslab fdtree -o /mnt/test --repeat 10 --sync         ten cycles, writeback counted
  fslab fdtree --dry-run -d 10 -l 6 -o /mnt/test       print the counts and the space needed
  fslab fdtree --backend null -d 10 -l 5 -f 100        fslab's own cost per operation
  fslab fdtree -C -o /mnt/test; fslab fdtree -R -o /mnt/test   create now, remove later";

/// How `fslab fdtree` words the common options.
pub(super) const WORDING: Wording = Wording {
    repeat: "Run the whole cycle (directory create, file create, file remove, directory \
remove) N times and report mean, sd and 95% CI per phase. Default: 1.",
    format: "Output format (--json is the same as --format json)",
    dry_run: "Print the counts and the space needed, create nothing. Default: run",
    quiet: "No progress display on stderr (a bar with the repetition, point and ETA on a \
terminal, one line per finished repetition otherwise) and no \"stored as run N\" line. \
Default: both shown",
    text_only: false,
    short_q: true,
};

/// `fslab fdtree`.
#[derive(Debug, Args)]
pub struct FdtreeArgs {
    /// The tree's shape and how it is timed: the study's fdtree keys, as flags.
    #[command(flatten)]
    pub shape: fdtree::FdtreeSpec,
    /// Start directory; the tree is made inside it as LEVEL0.<host>.<pid> (fdtree -o).
    #[arg(short = 'o', long, default_value = ".", value_name = "DIR")]
    pub start_dir: PathBuf,
    /// Create only: run the two create phases and leave the tree in place (fdtree -C).
    /// Default: the whole cycle.
    #[arg(short = 'C', long = "create-only")]
    pub create_only: bool,
    /// Remove only: run the two remove phases on a tree left by -C (fdtree -R). The tree is
    /// found under -o by name (LEVEL0.<host>.*) unless --root names it; its shape is the one
    /// recorded at -C unless -d, -f, -s, -l are given (then they must match it). Default:
    /// the whole cycle.
    #[arg(short = 'R', long = "remove-only")]
    pub remove_only: bool,
    /// Which of -d, -f, -s, -l were given on the command line (filled in by
    /// [`super::Cli::try_parse_args`]); `-R` without them removes with the shape recorded at `-C`.
    #[arg(skip)]
    pub shape_given: Vec<&'static str>,
    /// With -R: the tree root(s) to remove, names inside -o (one per thread). Default: found
    /// under -o by name.
    #[arg(long = "root", value_name = "NAME")]
    pub roots: Vec<String>,
    /// Where operations go.
    #[arg(long, value_enum, default_value_t = BackendArg::Fs)]
    pub backend: BackendArg,
    /// Keep a partial tree after an error or Ctrl-C (default: remove it).
    #[arg(long)]
    pub keep: bool,
    /// Repetitions, output, dry run and store.
    #[command(flatten)]
    pub run: RunArgs,
    /// MPI mode options (builds with the `mpi` feature; hidden and refused in others).
    #[command(flatten)]
    pub mpi: crate::cli::MpiArgs,
}
