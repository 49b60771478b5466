//! Command-line definitions (clap derive). Every option's help states its default.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// fslab: provision file-system configurations, run fdtree/IOzone/dbench-compatible
/// engines at system-call speed, store every sample, and report with statistics.
#[derive(Debug, Parser)]
#[command(
    name = "fslab",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Results database. Default: $FSLAB_DB, else ~/.local/share/fslab/results.db.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Metadata tree benchmark compatible with fdtree.bash (directory create, file create,
    /// file remove, directory remove).
    #[command(after_long_help = FDTREE_EXAMPLES)]
    Fdtree(FdtreeArgs),
    /// List stored runs and studies, newest first.
    List(ListArgs),
    /// Show one stored run or study with its summary.
    Show(ShowArgs),
    /// Report a study or run: the articles' tables, comparisons against a baseline with
    /// significance, warnings, environment; as text, Markdown, CSV, JSON or HTML with charts.
    #[command(after_long_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Compare two runs, studies or cells (B against A) with percent change, 95% interval,
    /// Welch's t-test and Mann–Whitney.
    #[command(after_long_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
}

const REPORT_EXAMPLES: &str = "\
Examples:
  fslab report quickstart                          tables of the newest study named quickstart
  fslab report 12 --format html --out report.html  one self-contained HTML file with charts
  fslab report 12 --baseline journal=64MB          compare every journal size with 64MB
  fslab report 12 --metric file_create.rate        only that metric (tables, charts, tests)
  fslab report 12 --format csv > results.csv       one row per configuration, phase and metric
Sources: ID, NAME (newest with that name), ID:INDEX (one cell), ID/factor=level[,factor=level].";

const COMPARE_EXAMPLES: &str = "\
Examples:
  fslab compare 11 12                    run 12 against run 11 (same engine)
  fslab compare 12:0 12:3                cell 3 of study 12 against its cell 0
  fslab compare 12/journal=16MB 12/journal=1GB --format markdown
  fslab compare old-study new-study      every common configuration and workload";

const FDTREE_EXAMPLES: &str = "\
Examples:
  fslab fdtree -d 20 -f 40 -s 1 -l 3 -o /mnt/test     8,421 dirs and 336,840 files of 4 KiB
  fslab fdtree -o /mnt/test --repeat 10 --sync         ten cycles, writeback counted
  fslab fdtree --dry-run -d 10 -l 6 -o /mnt/test       print the counts and the space needed
  fslab fdtree --backend null -d 10 -l 5 -f 100        fslab's own cost per operation
  fslab fdtree -C -o /mnt/test; fslab fdtree -R -o /mnt/test   create now, remove later";

/// Output format of engine commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A summary table (mean, sd, 95% CI, min, max, cv per metric).
    Table,
    /// fdtree.bash's report lines for every repetition, with sub-second values.
    Fdtree,
    /// One versioned JSON document with units.
    Json,
}

/// Backend of the fdtree engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The file system under -o.
    Fs,
    /// No system calls: measures fslab's own overhead per operation.
    Null,
}

/// `fslab fdtree`.
#[derive(Debug, Args)]
pub struct FdtreeArgs {
    /// Subdirectories per directory (fdtree -d).
    #[arg(short = 'd', long = "dirs", default_value_t = 10, value_name = "N")]
    pub dirs: u64,
    /// Files in every directory, root and leaves included (fdtree -f).
    #[arg(short = 'f', long = "files", default_value_t = 10, value_name = "N")]
    pub files: u64,
    /// File size in 4 KiB blocks; 0 makes empty files (fdtree -s).
    #[arg(
        short = 's',
        long = "size",
        default_value_t = 10,
        value_name = "BLOCKS"
    )]
    pub size: u64,
    /// Levels below the root directory (fdtree -l).
    #[arg(short = 'l', long = "levels", default_value_t = 4, value_name = "N")]
    pub levels: u32,
    /// Start directory; the tree is made inside it as LEVEL0.<host>.<pid> (fdtree -o).
    #[arg(
        short = 'o',
        long = "start-dir",
        default_value = ".",
        value_name = "DIR"
    )]
    pub start_dir: PathBuf,
    /// Create only: run the two create phases and leave the tree in place (fdtree -C).
    #[arg(short = 'C', long = "create-only")]
    pub create_only: bool,
    /// Remove only: run the two remove phases on a tree left by -C (fdtree -R). The tree is
    /// found under -o by name (LEVEL0.<host>.*) unless --root names it.
    #[arg(short = 'R', long = "remove-only")]
    pub remove_only: bool,
    /// With -R: the tree root(s) to remove, names inside -o (one per thread).
    #[arg(long = "root", value_name = "NAME")]
    pub roots: Vec<String>,
    /// Run the whole cycle N times and report mean, sd and 95% CI.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Worker threads, each with its own tree, starting every phase together.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// End every phase with syncfs inside its timing, so writeback is counted.
    /// Default: off, like fdtree (dirty data may still be in memory when a phase ends).
    #[arg(long)]
    pub sync: bool,
    /// Print the counts and the space needed, create nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Where operations go.
    #[arg(long, value_enum, default_value_t = BackendArg::Fs)]
    pub backend: BackendArg,
    /// Keep a partial tree after an error or Ctrl-C (default: remove it).
    #[arg(long)]
    pub keep: bool,
    /// Warn when a phase takes less than this many seconds on average.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub min_phase: f64,
    /// Do not record the run in the results database.
    #[arg(long)]
    pub no_store: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// MPI mode options (builds with the `mpi` feature).
    #[cfg(feature = "mpi")]
    #[command(flatten)]
    pub mpi: crate::dist::MpiArgs,
}

/// `fslab list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `fslab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run or study id (see `fslab list`).
    pub id: i64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What error bars and bands show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorBarsArg {
    /// The 95% confidence interval of the mean (Student t).
    Ci,
    /// Plus and minus one standard deviation.
    Sd,
}

/// Options shared by `fslab report` and `fslab compare`.
#[derive(Debug, Args)]
pub struct ReportOutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::report::Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only these metrics: `phase.metric`, a metric name (all phases) or a phase (all its
    /// metrics); repeat or separate with commas. Default: all metrics in tables, each phase's
    /// headline metric (rate, else throughput, else time) in comparisons and charts.
    #[arg(long, value_name = "METRIC")]
    pub metric: Vec<String>,
    /// What error bars show in charts.
    #[arg(long, value_enum, default_value = "ci")]
    pub error_bars: ErrorBarsArg,
    /// Warn when a phase takes less than this many seconds on average.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub min_phase: f64,
    /// Warn when the coefficient of variation exceeds this percentage.
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
    pub max_cv: f64,
}

/// `fslab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The study or run: ID, NAME (newest with that name), ID:INDEX or ID/factor=level for
    /// one cell.
    pub source: String,
    /// Compare against this instead of each factor's first level: a level (`64MB`),
    /// `factor=level`, or a cell label (then every cell is compared with that cell).
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    /// Output options.
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

/// `fslab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: ID, NAME, ID:INDEX or ID/factor=level.
    pub a: String,
    /// The candidate, compared against A.
    pub b: String,
    /// Output options.
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn fdtree_defaults_are_fdtree_defaults() {
        let c = Cli::try_parse_from(["fslab", "fdtree"]).unwrap();
        let Command::Fdtree(a) = c.command else {
            panic!()
        };
        assert_eq!((a.dirs, a.files, a.size, a.levels), (10, 10, 10, 4));
        assert_eq!(a.start_dir, PathBuf::from("."));
    }
}
