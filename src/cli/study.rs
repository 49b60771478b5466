//! `fslab study plan|run` and `fslab cleanup` options.

use super::common::parse_settle;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `fslab study …`.
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Print the cells, the exact commands each will run, the space needed and an ETA;
    /// changes nothing and needs no root.
    #[command(after_long_help = STUDY_EXAMPLES)]
    Plan(StudyPlanArgs),
    /// Run a study (as root): provision each cell, run the workloads with the cache policy
    /// and order of the file, store every repetition, print a summary per cell.
    #[command(after_long_help = STUDY_EXAMPLES)]
    Run(StudyRunArgs),
}

const STUDY_EXAMPLES: &str = "\
Examples:
  fslab study plan examples/studies/quickstart.toml     what it will do, how long, how much space
  fslab study run examples/studies/quickstart.toml      run it (root)
  fslab study run examples/studies/quickstart.toml --resume   continue after Ctrl-C or a crash
  fslab cleanup                                         remove what a killed run left

The work directory holds loop images, mount points and the state file of each run:
default $FSLAB_WORKDIR, else /var/tmp/fslab (choose with --workdir).
Study file reference: doc/studies.md. Safety rules: doc/safety.md.";

/// `fslab study plan`.
#[derive(Debug, Args)]
pub struct StudyPlanArgs {
    /// The study file (TOML).
    pub file: PathBuf,
    /// Work directory for loop images, mount points and run state.
    /// Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Plan for a User-mode Linux guest (`uml` or `uml:MEM`), as `study run --guest` runs it.
    /// Default: the study file's [guest], else the host.
    #[arg(long, value_name = "uml[:MEM]")]
    pub guest: Option<String>,
}

/// `fslab study run`.
#[derive(Debug, Args)]
pub struct StudyRunArgs {
    /// The study file (TOML).
    pub file: PathBuf,
    /// Continue the newest unfinished study with this name (the file must be unchanged):
    /// completed repetitions are kept, the missing ones are run. Default: start a new study.
    #[arg(long)]
    pub resume: bool,
    /// Work directory for loop images, mount points and run state.
    /// Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// No progress display (the summary is still printed). Default: progress shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Run the study in a User-mode Linux guest whose kernel has nilfs2, JFS and ReiserFS:
    /// `uml` or `uml:MEM` (guest memory, default 512M). Default: the study file's [guest], else
    /// on the host. See doc/guest.md.
    #[arg(long, value_name = "uml[:MEM]")]
    pub guest: Option<String>,
    /// Before the study starts, wait up to TIME (default 10m) for a quiet machine: no other
    /// I/O on the work directory's device, no CPU steal, no load beyond the CPUs, little other
    /// CPU. Without it a busy machine gets one line and the study goes on.
    #[arg(long, value_name = "TIME", num_args = 0..=1, default_missing_value = "10m", value_parser = parse_settle)]
    pub wait_quiet: Option<std::time::Duration>,
}

/// `fslab cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Work directory to clean. Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
}
