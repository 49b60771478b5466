//! Options of the commands on the results database: `fslab list`, `show`, `rm`, `export`,
//! `import`.

use super::TextFormat;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

pub(super) const LIST_EXAMPLES: &str = "\
Examples:
  fslab list --kind fdtree --since 7d          fdtree runs of the last seven days
  fslab list --name 'ext4-*' --limit 5         the five newest studies whose name starts ext4-
  fslab list --since 2026-11-01 --format json  everything since 1 November (UTC), as JSON";

pub(super) const EXPORT_EXAMPLES: &str = "\
Examples:
  fslab export 12 --raw -o samples.csv         every sample of study 12 with its factor levels
  fslab export 12 --raw --format json          the same as one JSON document
  fslab export 12                              one row per repetition, a column per metric
SQL users: the views `samples` and `study_<ID>_samples` (doc/schema.md) hold the same rows.";

/// `fslab list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only studies and runs with this name; `*` and `?` are wildcards (quote them).
    /// Default: all names.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Only this kind: `study` (study files), `run` (engine commands), or an engine (its runs
    /// and the studies with such a workload). Default: all kinds.
    #[arg(long, value_name = "KIND", value_parser = list_kinds())]
    pub kind: Option<String>,
    /// Only those created since a date (2026-11-24, in UTC), a time (RFC 3339, e.g.
    /// 2026-11-24T08:00:00Z) or a while ago (12h, 7d). Default: any time.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most N, newest first. Default: all.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Output format: `--format`, or `--json`.
    #[command(flatten)]
    pub output: TextOutput,
}

/// The output format of a command that shows what is stored (`list`, `show`).
#[derive(Debug, Args)]
pub struct TextOutput {
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// The same as --format json. Default: a table.
    #[arg(long)]
    pub json: bool,
}

impl TextOutput {
    /// Whether one JSON document is asked for (`--json` or `--format json`).
    pub fn is_json(&self) -> bool {
        self.json || self.format == TextFormat::Json
    }
}

/// The kinds `list --kind` takes: `study`, `run` and every registered engine.
pub fn list_kinds() -> clap::builder::PossibleValuesParser {
    let engines = crate::workload::WorkloadKind::ALL.map(|k| k.as_str());
    clap::builder::PossibleValuesParser::new(["study", "run"].into_iter().chain(engines))
}

/// `fslab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run or study id (see `fslab list`).
    pub id: i64,
    /// Output format: `--format`, or `--json`.
    #[command(flatten)]
    pub output: TextOutput,
    /// Every table, comparison and environment entry (as `fslab report --all`). Default: the
    /// compact report.
    #[arg(long)]
    pub all: bool,
    /// Fit the text in this many columns. Default: the terminal's width, 100 when the output
    /// is not a terminal.
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
}

/// `fslab rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// The study and run ids to remove with all their cells, repetitions and samples (see
    /// `fslab list`). All are removed in one transaction, or none when one is refused.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<i64>,
}

/// Format of `fslab export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON document.
    Json,
}

/// `fslab export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The study or run id (see `fslab list`).
    pub id: i64,
    /// Every raw sample, one row each: study, cell, one column per factor level,
    /// workload, repetition, order index, phase, metric, unit, value. Default: one row per
    /// repetition with a column per phase.metric.
    #[arg(long)]
    pub raw: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output. Default: standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `fslab import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Another fslab results database (e.g. copied from another machine). Its finished
    /// studies and runs are copied with new ids; where each came from is recorded.
    #[arg(value_name = "OTHER.db")]
    pub file: PathBuf,
}
