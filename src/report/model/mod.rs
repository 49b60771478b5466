//! The report model: everything a report shows, computed once from the store's data by
//! [`crate::report::build`]. Exporters only render it; none of them computes a statistic.
//!
//! The model is serialised as-is by the JSON exporter (`schema` = [`SCHEMA`]), so its field
//! names are part of the output contract documented in `doc/reports.md`.

use serde::Serialize;

mod sources;
mod warning;
mod workload;

pub use sources::*;
pub use warning::*;
pub use workload::*;

/// Version tag of the JSON report.
pub const SCHEMA: &str = "fslab.report.v1";

/// Whether error bars and bands show the 95% confidence interval or ± one sd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ErrorBars {
    /// The 95% interval of each statistic (`summary.ci95`, by its `ci95_method`).
    #[default]
    Ci,
    /// Mean ± one standard deviation (clipped at 0 for quantities that cannot be negative).
    Sd,
}

/// How the text formats list warnings (`--warnings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum WarningsMode {
    /// One line per kind of warning (and advice), with a count and the first few places; the
    /// terminal shows at most about ten lines.
    #[default]
    Grouped,
    /// Every warning on its own line.
    All,
}

/// A complete report.
#[derive(Debug, Clone, Serialize)]
pub struct ReportData {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Title (the study or run name, or "A vs B").
    pub title: String,
    /// What was reported: one study or run, or the two sides of a comparison.
    pub sources: Vec<Source>,
    /// Options that shaped the report.
    pub options: crate::report::ReportOptions,
    /// Factors of the study, in plan order.
    pub factors: Vec<Factor>,
    /// Configurations (cells), in plan order.
    pub cells: Vec<CellInfo>,
    /// One section per workload (scenario).
    pub workloads: Vec<WorkloadReport>,
    /// Repetitions and stop reason of every cell × workload.
    pub series: Vec<SeriesInfo>,
    /// Plain-language observations, only for significant differences.
    pub observations: Vec<Observation>,
    /// What the Observations section says when there are none: why (`nothing could be
    /// tested: …`, `no significant differences among the 4 headline comparisons …`).
    pub observations_note: Option<String>,
    /// Results that should not be trusted as they are, one entry each.
    pub warnings: Vec<ReportWarning>,
    /// The same warnings grouped by kind and advice, most serious first.
    pub warning_groups: Vec<WarningGroup>,
    /// Environment of each source.
    pub environments: Vec<Environment>,
    /// What differs between the two sides of a comparison (parameters, configuration,
    /// environment); empty for a report of one source.
    pub differences: Vec<Difference>,
    /// When the two sides of a comparison ran and whether they were interleaved; absent for
    /// a report of one source (or timestamps that do not parse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<SourceTiming>,
    /// The guest's measured cost (`[guest] calibrate`), for a study measured in a guest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest_calibration: Option<crate::report::calibration::GuestCalibration>,
}

/// A factor and its levels.
#[derive(Debug, Clone, Serialize)]
pub struct Factor {
    /// Name, e.g. `journal`.
    pub name: String,
    /// Level labels in plan order.
    pub levels: Vec<String>,
    /// Numeric value of each level when every level parses as a size or a number
    /// (`16MB` → bytes, `4` → 4), for ordering and line charts.
    pub numeric: Option<Vec<f64>>,
    /// Whether the levels are sizes (`16MB`, `4k`) rather than plain numbers.
    pub is_size: bool,
    /// The level comparisons are made against: the first level, or the one `--baseline`
    /// names; `None` for a sweep (see `sweep`) that `--baseline` does not name.
    pub baseline: Option<String>,
    /// A sweep: at least [`SWEEP_LEVELS`] numeric levels (IOzone's record sizes, a clients
    /// series), or the other axis of such a sweep's matrix (`report::sweep::mark`). Its
    /// levels are not compared with its first one unless `--baseline` names a level: each
    /// point against the smallest is a question nobody asked, and 126 points made 1,521.
    pub sweep: bool,
}

impl Factor {
    /// The index of cell `c`'s level of this factor in [`Factor::levels`].
    pub fn position(&self, c: &CellInfo) -> Option<usize> {
        level(c, &self.name).and_then(|l| self.levels.iter().position(|x| x == l))
    }
}

/// The level of `factor` in a cell.
pub fn level<'a>(c: &'a CellInfo, factor: &str) -> Option<&'a str> {
    c.factors
        .iter()
        .find(|(n, _)| n == factor)
        .map(|(_, l)| l.as_str())
}

/// Numeric levels from which a factor is a sweep (`Factor::sweep`).
pub const SWEEP_LEVELS: usize = 8;

/// One configuration: its stored row (label, factor levels, provisioning commands,
/// superblock, resolved configuration), as the report's JSON has it.
pub type CellInfo = crate::store::CellRow;

/// Repetitions of one cell × workload.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesInfo {
    /// Index into `cells`.
    pub cell: usize,
    /// Index into `workloads`.
    pub workload: usize,
    /// Counted (`ok`) repetitions.
    pub ok: usize,
    /// Failed repetitions.
    pub failed: usize,
    /// Discarded warm-up repetitions.
    pub discarded: usize,
    /// Disturbed repetitions stored, left out and run again (`disturbed = "repeat"`).
    pub rerun: usize,
    /// Disturbed repetitions stored and left out (`disturbed = "drop"`).
    pub dropped: usize,
    /// Series status as stored (the cell's, for a series without a row).
    pub status: crate::store::SeriesStatus,
    /// Why repetitions stopped (`fixed`, `ci_met`, `max_reps`, `budget`, …).
    pub stop_reason: Option<crate::stats::adaptive::StopReason>,
    /// The series error, or the first failed repetition's.
    pub error: Option<String>,
}

/// A plain-language observation about a significant difference.
#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    /// Workload label.
    pub workload: String,
    /// The sentence.
    pub text: String,
}

impl ReportData {
    /// What the Observations section says when it has none.
    pub fn no_observations(&self) -> &str {
        self.observations_note
            .as_deref()
            .unwrap_or("no significant differences against the baseline")
    }

    /// Cells that have at least one value in workload `w`, in plan order.
    pub fn cells_with_data(&self, w: &WorkloadReport) -> Vec<usize> {
        (0..self.cells.len())
            .filter(|&c| w.stats.iter().any(|s| s.cell == c))
            .collect()
    }
}
