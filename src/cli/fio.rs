//! `fslab fio` options: fslab's (before the job file) and fio's (after it, passed on).

use super::{RunArgs, Wording};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) const EXAMPLES: &str = "\
Examples:
  fslab fio -D /mnt/test jobs/randread.fio               one run, caches dropped first (root)
  fslab fio -D /mnt/test --repeat 5 jobs/randread.fio    five runs: mean ± sd and 95% CI per job
  fslab fio -D /mnt/test --repeat 5 --cache none jobs/randread.fio --bs=8k --iodepth=4
                                                         no cache action; --bs, --iodepth go to fio
  fslab fio -D /mnt/test --dry-run jobs/randread.fio     the job as fio would get it; runs nothing

fslab's options come before the job file; everything after it goes to fio unchanged (fio
options on the command line are defaults that the job file's own options override, as in
fio). fio runs in DIR/fslab-fio (removed afterwards) with --output-format=json+.
Reference: doc/fio.md.";

/// What `fslab fio` does before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FioCacheArg {
    /// `sync`, then `echo 3 > /proc/sys/vm/drop_caches` (root).
    Drop,
    /// Nothing (fio still invalidates the job's files' cached pages unless the job sets
    /// invalidate=0).
    None,
}

/// `fslab fio`.
#[derive(Debug, Args)]
pub struct FioArgs {
    /// Directory fio's files are made in (in a directory fslab-fio inside it, removed after
    /// every run). Default: the current directory.
    #[arg(short = 'D', long, value_name = "DIR", default_value = ".")]
    pub directory: PathBuf,
    /// Before each repetition: drop the page cache (root) or nothing. Default: drop.
    #[arg(long, value_enum, default_value = "drop")]
    pub cache: FioCacheArg,
    /// Let fio also write in DIR2 (repeat for more): the job may name files there and fio's
    /// cage leaves it writable; raw devices stay refused. Default: fio writes only in its
    /// own directory inside -D.
    #[arg(
        id = "allow_outside_cell",
        long = "allow-outside",
        value_name = "DIR2",
        require_equals = true,
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub allow_outside: Vec<PathBuf>,
    /// Let the job fill -D's file system: fill_device/fill_fs, or sizes beyond its free space
    /// less a reserve (a twentieth of it, at most 1 GiB). Default: refused, because -D is
    /// any directory (the host's disk, as likely as not), not a file system made for the test.
    #[arg(long)]
    pub allow_fill: bool,
    /// Options every engine command takes.
    #[command(flatten)]
    pub run: RunArgs,
    /// The fio job file.
    #[arg(value_name = "JOBFILE")]
    pub job: PathBuf,
    /// fio options, passed to fio unchanged (after the job file).
    #[arg(
        value_name = "FIO OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub fio_args: Vec<String>,
}

/// How `fslab fio` words the common options.
pub(super) const WORDING: Wording = Wording {
    repeat: "Run the job file N times, with the --cache action before each run, and report \
mean, sd and 95% CI per job and direction. Default: 1.",
    format: "Output format: the summary table, or one JSON document (--json is the same as \
--format json). Default: table",
    dry_run: "Print what would run — the job file as fslab hands it to fio, fio's command \
line, the directory, the repetitions and the space needed — and exit without running fio (fio \
still checks the job with --parse-only). Default: run",
    quiet: "No repetition counter and no \"stored as run N\" line on stderr. Default: both \
shown",
    text_only: true,
    short_q: true,
};
