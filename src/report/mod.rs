//! Turning stored samples into reports: the [`ReportData`] model computed once from the
//! store ([`build`]), and one [`Exporter`] per output format that only renders it
//! (terminal table, Markdown, CSV, JSON, HTML with SVG charts).
//!
//! `runsummary` is the compact per-metric summary printed by engine commands.

pub mod advice;
pub mod build;
pub mod cache_checks;
pub mod calibration;
pub mod calibration_load;
pub mod charts;
pub mod checks;
pub mod comparisons;
pub mod cpu_checks;
pub mod csv;
pub mod differences;
pub mod disturbed;
pub mod draft;
pub mod entries;
pub mod envsummary;
pub mod explain;
pub mod grid;
pub mod headline;
pub mod html;
mod html_kit;
mod html_parts;
mod html_tail;
pub mod json;
pub mod latency;
pub mod levels;
pub mod markdown;
mod markdown_kit;
mod markdown_tail;
pub mod model;
pub mod options;
pub mod params;
pub mod runsummary;
mod sections;
pub mod select;
pub mod spelling;
pub mod superblock;
pub mod sweep;
pub mod table;
mod table_kit;
mod table_tail;
pub mod telemetry;
pub mod textfit;
pub mod verdict;
pub mod view;
pub mod warngroups;

pub use build::{build, Input};
pub use model::{ErrorBars, ReportData, WarningsMode};
pub use options::ReportOptions;

/// The index of `x` in `v`, appended first when it is not there (first-seen order).
pub(crate) fn index_in<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
    v.iter().position(|y| *y == x).unwrap_or_else(|| {
        v.push(x);
        v.len() - 1
    })
}

/// The items in order of first appearance, each once; kept in `stats`, a leaf, so that the
/// store and the plans share it.
pub(crate) use crate::stats::distinct;

/// Renders a report. Pure: the same model gives the same bytes.
pub trait Exporter {
    /// Render `report` into bytes (UTF-8 text for every format of fslab).
    fn render(&self, report: &ReportData) -> anyhow::Result<Vec<u8>>;
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for the terminal (`mean ± sd` on one line, the interval and n under it).
    Table,
    /// Markdown: the same tables and sections.
    Markdown,
    /// CSV: one row per configuration, workload, phase and metric.
    Csv,
    /// The whole model as versioned JSON.
    Json,
    /// One self-contained HTML file with SVG charts.
    Html,
}

/// How much of each configuration's environment the text formats print (`--env`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EnvDetail {
    /// One line per configuration: the superblock's block size, inodes, journal or log and
    /// features.
    #[default]
    Summary,
    /// Every configuration's whole superblock dump (`dumpe2fs -h`, `xfs_info`, …).
    Full,
}

/// How the human formats present a report: how much of each configuration's environment
/// (`--env`), compact or every table (`--all`), and the width the terminal report fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Presentation {
    /// `--env`.
    pub env: EnvDetail,
    /// `--all`.
    pub detail: view::Detail,
    /// Columns every line of the terminal report fits in.
    pub width: usize,
}

impl Default for Presentation {
    fn default() -> Self {
        Presentation {
            env: EnvDetail::Summary,
            detail: view::Detail::Compact,
            width: textfit::DEFAULT_WIDTH,
        }
    }
}

/// The exporter of a format, presenting the compact report in 100 columns.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    exporter_for(format, &Presentation::default())
}

/// The exporter of a format, presenting as `p` says. HTML always has each configuration's
/// superblock (folded), JSON and CSV carry everything as data.
pub fn exporter_for(format: Format, p: &Presentation) -> Box<dyn Exporter> {
    let superblocks = p.env == EnvDetail::Full;
    match format {
        Format::Table => Box::new(table::TableExporter {
            superblocks,
            detail: p.detail,
            width: p.width,
        }),
        Format::Markdown => Box::new(markdown::MarkdownExporter {
            superblocks,
            detail: p.detail,
        }),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Json => Box::new(json::JsonExporter),
        Format::Html => Box::new(html::HtmlExporter { detail: p.detail }),
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
