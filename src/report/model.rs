//! The report model: everything a report shows, computed once from the store's data by
//! [`super::build`]. Exporters only render it; none of them computes a statistic.
//!
//! The model is serialised as-is by the JSON exporter (`schema` = [`SCHEMA`]), so its field
//! names are part of the output contract documented in `doc/reports.md`.

use crate::metric::Unit;
use crate::stats::compare::{Change, MannWhitney, Welch};
use crate::stats::Summary;
use serde::Serialize;

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
    pub options: OptionsEcho,
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
    pub warning_groups: Vec<super::warngroups::WarningGroup>,
    /// Environment of each source.
    pub environments: Vec<Environment>,
    /// What differs between the two sides of a comparison (parameters, configuration,
    /// environment); empty for a report of one source.
    pub differences: Vec<super::differences::Difference>,
    /// The guest's measured cost (`[guest] calibrate`), for a study measured in a guest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest_calibration: Option<super::calibration::GuestCalibration>,
}

/// A study or run the report was made from.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    /// How the user named it (`12`, `quickstart`, `12:3`), or the id.
    pub spec: String,
    /// Store id.
    pub id: i64,
    /// `run` or `study`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Status.
    pub status: crate::store::StudyStatus,
    /// Command line that made it.
    pub command_line: String,
    /// fslab version that measured it.
    pub tool_version: String,
    /// Start time as stored.
    pub created_at: String,
    /// End time as stored.
    pub finished_at: Option<String>,
    /// When a study was resumed (`--resume`; environment keys `resumed_at.N`), in order;
    /// each resume made its configurations' file systems again.
    pub resumed_at: Vec<String>,
}

impl Source {
    /// The header line saying that (and when) the study was resumed, if it was.
    pub fn resumed_line(&self) -> Option<String> {
        match self.resumed_at.len() {
            0 => None,
            1 => Some(format!(
                "resumed at {}: the repetitions after it ran on file systems made again",
                self.resumed_at[0]
            )),
            n => Some(format!(
                "resumed {n} times, at {}: the repetitions after each ran on file systems made again",
                self.resumed_at.join(", ")
            )),
        }
    }
}

/// Options echoed into the report.
#[derive(Debug, Clone, Serialize)]
pub struct OptionsEcho {
    /// `--baseline`, if given.
    pub baseline: Option<String>,
    /// `--metric` selections, if any.
    pub metrics: Vec<String>,
    /// What error bars show.
    pub error_bars: ErrorBars,
    /// How the text formats list warnings.
    pub warnings: WarningsMode,
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
    /// The level comparisons are made against.
    pub baseline: String,
}

/// One configuration.
#[derive(Debug, Clone, Serialize)]
pub struct CellInfo {
    /// Store id.
    pub id: i64,
    /// Position in the plan.
    pub idx: i64,
    /// Label, e.g. `journal=16MB fs=ext4`.
    pub label: String,
    /// Factor levels, in factor order.
    pub factors: Vec<(String, String)>,
    /// Status.
    pub status: crate::store::CellStatus,
    /// Error, if the cell failed.
    pub error: Option<String>,
    /// Exact provisioning commands (mkfs, mount, …).
    pub commands: Vec<String>,
    /// Superblock or log dump read back after mkfs.
    pub superblock: String,
    /// The resolved configuration.
    pub config: serde_json::Value,
}

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

/// One workload (scenario) of the study.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    /// Store id.
    pub id: i64,
    /// Engine (`fdtree`, `iozone`, `dbench`).
    pub kind: String,
    /// Label.
    pub label: String,
    /// Parameters.
    pub params: serde_json::Value,
    /// Phases in order of first appearance.
    pub phases: Vec<String>,
    /// Tables in the articles' layout: one per metric name.
    pub tables: Vec<TableSpec>,
    /// Statistics of every cell × phase × metric that has values.
    pub stats: Vec<CellMetric>,
    /// Comparisons against the baseline.
    pub comparisons: Vec<Comparison>,
    /// Latency percentiles per operation and cell.
    pub latency: Vec<LatencyCurve>,
    /// The cache policy of its counted repetitions as stored (`cold`, `warm`, `none`;
    /// `mixed` when they differ); `None` without any.
    pub cache_policy: Option<String>,
    /// Statistics of the telemetry recorded around its phases (`dev.*`, `cpu.*`, `fs.*`, …;
    /// `doc/telemetry.md`), per cell and phase; kept apart from `stats` because telemetry
    /// explains results and is not one (select it with `--metric` to compare it).
    pub telemetry: Vec<CellMetric>,
    /// Time series (`--timeline`): per configuration, its first counted repetition that has
    /// one, every sampled metric.
    pub timelines: Vec<TimelineSeries>,
}

/// One metric of one repetition over time.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineSeries {
    /// Index into the report's `cells`.
    pub cell: usize,
    /// The repetition.
    pub repetition: i64,
    /// Metric (`dev.data.write_rate`, `dev.data.util`, `cpu.iowait`, `progress`, …).
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// (seconds since the run began, value), in time order.
    pub points: Vec<(f64, f64)>,
}

/// A table: rows are cells, columns are phases, entries one metric.
#[derive(Debug, Clone, Serialize)]
pub struct TableSpec {
    /// Metric name shown (`elapsed`, `rate`, `throughput`, `p99_latency`).
    pub metric: String,
    /// Title with the stored unit, e.g. `Time (s)`.
    pub title: String,
    /// Title without a unit, e.g. `Time`: the human formats print each phase's values in the
    /// unit that suits them and name it beside the phase.
    pub heading: String,
    /// Phases that have this metric, in order.
    pub phases: Vec<String>,
    /// Unit of each phase's column.
    pub units: Vec<Unit>,
}

/// Statistics of one metric of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellMetric {
    /// Index into the report's `cells`.
    pub cell: usize,
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// n, mean, sd, median, min, max, cv, the 95% interval and its method (log scale for
    /// units that cannot be negative), the geometric mean.
    pub summary: Summary,
    /// Values in execution order.
    pub values: Vec<f64>,
    /// Repetition number of each value.
    pub repetitions: Vec<i64>,
    /// Execution order index of each value.
    pub order: Vec<i64>,
    /// Positions (into `values`) of outliers by the median/MAD rule. Shown, never dropped.
    pub outliers: Vec<usize>,
    /// Positions (into `values`) of repetitions other activity on the machine disturbed
    /// (stored interference). Shown, never dropped.
    pub disturbed: Vec<usize>,
    /// Whether this is the phase's headline metric (compared and charted by default).
    pub headline: bool,
    /// Whether it is in the primary family: a headline that measures the workload's
    /// capability (`Caps::primary`), or a metric `--metric` selected. Observations test these;
    /// the other headlines are exploratory.
    pub primary: bool,
}

/// A candidate cell against its baseline cell for one metric.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The factor that differs (`journal`), or `cell` when `--baseline` names a cell.
    pub factor: String,
    /// Index of the baseline cell.
    pub baseline_cell: usize,
    /// Index of the candidate cell.
    pub cell: usize,
    /// The baseline's level of `factor` (or its label).
    pub from: String,
    /// The candidate's level of `factor` (or its label).
    pub to: String,
    /// The other factors, held equal (`fs=ext4`); empty when there are none.
    pub context: String,
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// Baseline mean.
    pub baseline_mean: f64,
    /// Candidate mean.
    pub mean: f64,
    /// Percent change of the mean with its 95% interval.
    pub change: Option<Change>,
    /// Welch's t-test.
    pub welch: Option<Welch>,
    /// Mann–Whitney U test.
    pub mann_whitney: Option<MannWhitney>,
    /// Welch p < 0.05 and the interval of the change excludes 0 (one model: the two agree).
    pub significant: bool,
    /// Whether the metric is in the primary family (see [`CellMetric::primary`]).
    pub primary: bool,
    /// Welch's p adjusted for multiple comparisons by Benjamini–Hochberg over `family`
    /// tests: every primary comparison of the report for a primary one, every comparison the
    /// report tests for an exploratory one; observations need it < 0.05.
    pub q: Option<f64>,
    /// The number of tests `q` is adjusted over.
    pub family: usize,
    /// Whether the candidate is better (direction from the unit), when significant.
    pub better: Option<bool>,
    /// Plain verdict, e.g. `faster by 56% (95% CI 49–63%, p < 0.001)`.
    pub verdict: String,
    /// For an inconclusive verdict, how many repetitions would narrow the interval to ±10%
    /// (`about 12 repetitions per configuration (now 5) …`).
    pub more: Option<String>,
    /// The telemetry that differs most between the two sides, e.g. `journal device wrote
    /// 3.1 GiB in file_create at 16MB vs 912.0 MiB at 1GB`; `None` without telemetry or
    /// without a clear difference.
    pub explanation: Option<String>,
}

/// Latency percentiles of one operation in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyCurve {
    /// Index into `cells`.
    pub cell: usize,
    /// Operation (phase).
    pub op: String,
    /// `histogram` (all repetitions merged exactly) or `metrics` (means of the per-repetition
    /// percentile metrics).
    pub from: String,
    /// Number of operations recorded (histograms only).
    pub count: Option<u64>,
    /// (percentile, milliseconds), ascending; 100 is the maximum.
    pub points: Vec<(f64, f64)>,
}

/// A plain-language observation about a significant difference.
#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    /// Workload label.
    pub workload: String,
    /// The sentence.
    pub text: String,
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A phase shorter than the minimum.
    TooShort,
    /// Coefficient of variation above the threshold.
    HighCv,
    /// Fewer than two repetitions: no spread, interval or test.
    FewRepetitions,
    /// A value flagged by the median/MAD rule.
    Outlier,
    /// The first repetition much worse than the others.
    FirstSlower,
    /// A trend across the execution order.
    Drift,
    /// The data set is smaller than twice the RAM.
    CacheDataset,
    /// Reads faster than the device can deliver.
    CacheDevice,
    /// Repetitions stopped for a reason other than meeting the target.
    StopReason,
    /// Failed repetitions or cells.
    Failed,
    /// Differences with p < 0.05 that do not survive the adjustment for multiple comparisons.
    MultipleComparisons,
    /// Repetitions disturbed by other activity on the machine (other I/O on the backing
    /// device, CPU steal, load, other processes' CPU).
    Interference,
    /// The two sides of a comparison ran their workloads with different parameters.
    ParametersDiffer,
    /// Measured in a User-mode Linux guest: figures for comparing its configurations with
    /// each other, not with the host's.
    Guest,
}

/// A warning about one result, with what to do about it.
#[derive(Debug, Clone, Serialize)]
pub struct ReportWarning {
    /// Kind.
    pub kind: WarningKind,
    /// Workload label, if specific to one.
    pub workload: Option<String>,
    /// Cell label, if specific to one.
    pub cell: Option<String>,
    /// `phase.metric`, if specific to one.
    pub metric: Option<String>,
    /// The message, one line, naming the fix.
    pub message: String,
    /// Where, with its figure, as listed in a group line
    /// (`journal=16MB fs=ext4 · dir_remove.rate 12.7%`).
    pub subject: String,
    /// What to do, in the words of its workload and cache policy (shared by a group).
    pub advice: String,
}

/// Environment of one source.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    /// The source's spec (matches `Source::spec`).
    pub source: String,
    /// Key/value pairs, sorted by key. In JSON, sizes and counts (`*_bytes`, `*_count`,
    /// `*_rotational`) are numbers, every other value a string.
    #[serde(serialize_with = "entries_json")]
    pub entries: Vec<(String, String)>,
}

/// Whether an environment value is a number in JSON: a whole number under a key that
/// names a size, a count or a flag.
pub fn env_is_number(key: &str, value: &str) -> Option<u64> {
    let numeric_key = ["_bytes", "_count", "_rotational"]
        .iter()
        .any(|s| key.ends_with(s));
    let plain = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'));
    if numeric_key && plain {
        value.parse().ok()
    } else {
        None
    }
}

/// Environment entries as JSON, sizes and counts as numbers (see [`env_is_number`]).
pub fn env_json(entries: &[(String, String)]) -> serde_json::Value {
    serde_json::Value::Array(
        entries
            .iter()
            .map(|(k, v)| match env_is_number(k, v) {
                Some(n) => serde_json::json!([k, n]),
                None => serde_json::json!([k, v]),
            })
            .collect(),
    )
}

fn entries_json<S: serde::Serializer>(
    entries: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(entries.len()))?;
    for (k, v) in entries {
        match env_is_number(k, v) {
            Some(n) => seq.serialize_element(&(k, n))?,
            None => seq.serialize_element(&(k, v))?,
        }
    }
    seq.end()
}

impl WarningKind {
    /// Order of groups, most serious first: results that are missing or cannot be compared,
    /// then results that measure something else (the page cache), then doubtful values.
    pub fn rank(self) -> u8 {
        match self {
            WarningKind::Failed => 0,
            WarningKind::FewRepetitions => 1,
            WarningKind::MultipleComparisons => 2,
            WarningKind::CacheDataset => 3,
            WarningKind::CacheDevice => 4,
            WarningKind::TooShort => 5,
            WarningKind::HighCv => 6,
            WarningKind::Drift => 7,
            WarningKind::FirstSlower => 8,
            WarningKind::Outlier => 9,
            WarningKind::StopReason => 10,
            WarningKind::Interference => 3,
            WarningKind::ParametersDiffer => 1,
            WarningKind::Guest => 2,
        }
    }
}

impl WorkloadReport {
    /// Every percentile that some latency curve has, ascending (the columns of the latency
    /// tables).
    pub fn latency_percentiles(&self) -> Vec<f64> {
        let mut pcts: Vec<f64> = Vec::new();
        for l in &self.latency {
            for (p, _) in &l.points {
                if !pcts.contains(p) {
                    pcts.push(*p);
                }
            }
        }
        pcts.sort_by(f64::total_cmp);
        pcts
    }

    /// The statistics of one cell, phase and metric.
    pub fn stat(&self, cell: usize, phase: &str, name: &str) -> Option<&CellMetric> {
        self.stats
            .iter()
            .find(|s| s.cell == cell && s.phase == phase && s.name == name)
    }

    /// The headline metric name of a phase, if any.
    pub fn headline(&self, phase: &str) -> Option<&CellMetric> {
        self.stats.iter().find(|s| s.phase == phase && s.headline)
    }
}

impl Comparison {
    /// The line printed under the verdict, if any: what may explain a significant difference
    /// (its telemetry), or for an inconclusive one how many repetitions would help.
    pub fn note(&self) -> Option<&str> {
        match (&self.explanation, self.significant) {
            (Some(e), true) => Some(e),
            _ => self.more.as_deref(),
        }
    }
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
