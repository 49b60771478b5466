//! `fslab report` and `fslab compare` options.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) const REPORT_EXAMPLES: &str = "\
Examples:
  fslab report quickstart                          tables of the newest study named quickstart
  fslab report 12 --format html --out report.html  one self-contained HTML file with charts
  fslab report 12 --baseline journal=64MB          compare every journal size with 64MB
  fslab report 12 --metric file_create.rate        only that metric (tables, charts, tests)
  fslab report 12 --format csv > results.csv       one row per configuration, phase and metric
Sources: ID, NAME (newest with that name), ID:INDEX (one cell), ID/factor=level[,factor=level].";

pub(super) const COMPARE_EXAMPLES: &str = "\
Examples:
  fslab compare 11 12                    run 12 against run 11 (same engine)
  fslab compare 12:0 12:3                cell 3 of study 12 against its cell 0
  fslab compare 12/journal=16MB 12/journal=1GB --format markdown
  fslab compare old-study new-study      every common configuration and workload";

/// What error bars and bands show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorBarsArg {
    /// The 95% confidence interval (of the geometric mean, on the log scale, for times,
    /// rates, sizes and counts; Student t of the mean otherwise).
    Ci,
    /// Plus and minus one standard deviation (clipped at 0 for quantities that cannot be
    /// negative).
    Sd,
}

/// Options shared by `fslab report` and `fslab compare`.
#[derive(Debug, Args)]
pub struct ReportOutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::report::Format,
    /// Write the report to FILE instead of standard output. Default: standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only these metrics: `phase.metric`, a metric name (all phases) or a phase (all its
    /// metrics); repeat or separate with commas. They are compared and are the primary family
    /// Observations test. Default: all metrics in tables, each phase's headline metric in
    /// comparisons and charts, the workload's capability (fdtree's rates, IOzone's and
    /// dbench's throughput, fio's IOPS) as the primary family.
    #[arg(long, value_name = "METRIC")]
    pub metric: Vec<String>,
    /// What error bars show in charts.
    #[arg(long, value_enum, default_value = "ci")]
    pub error_bars: ErrorBarsArg,
    /// Warn when a phase takes less than this many seconds on average and its time varies by
    /// more than --max-cv between repetitions (with one repetition: whenever it is shorter).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub min_phase: f64,
    /// Warn when the coefficient of variation exceeds this percentage with 95% confidence (its
    /// one-sided lower bound from the chi-square distribution of the sample variance: at n = 5
    /// a measured value above 1.54 times this).
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
    pub max_cv: f64,
    /// How warnings are listed: one line per kind with a count and the places named (the
    /// terminal shows at most about ten), or every warning on its own line. JSON has both.
    #[arg(long, value_enum, default_value = "grouped")]
    pub warnings: crate::report::WarningsMode,
    /// How much of each configuration's superblock the terminal and Markdown reports print:
    /// one line (block size, inodes, journal or log, features) or the whole dump. HTML folds
    /// the whole dump under its line; JSON and CSV carry it as data.
    #[arg(long, value_enum, default_value = "summary")]
    pub env: crate::report::EnvDetail,
    /// Every table, comparison, observation, environment entry and command. Default: the
    /// answer first and one compact table per workload (its headline metrics); the rest is
    /// counted in one line. JSON and CSV always carry everything.
    #[arg(long)]
    pub all: bool,
    /// Fit the terminal report in this many columns. Default: the terminal's width, 100 when
    /// the output is not a terminal.
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
}

/// `fslab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The study or run: ID, NAME (newest with that name), ID:INDEX or ID/factor=level for
    /// one cell.
    pub source: String,
    /// Compare against this instead of each factor's first level: a level (`64MB`),
    /// `factor=level`, or a cell label (then every cell is compared with that cell). Default:
    /// each factor's first level, except a sweep's (8 or more numeric levels, such as IOzone's
    /// -a record sizes, and the other axis of its matrix), which is compared only against a
    /// level named here.
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
