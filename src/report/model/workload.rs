//! The model of one workload: its tables, the statistics of every configuration, phase and
//! metric, its comparisons, latency curves and time series.

use crate::metric::Unit;
use crate::stats::compare::{Change, MannWhitney, Welch};
use crate::stats::Summary;
use crate::vocab::{CachePolicy, Stored};
use serde::Serialize;

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
    /// The cache policy of its counted repetitions as stored (`cold`, `warm`, `none`,
    /// `fresh`, or a word this fslab does not know; `mixed` when they differ); `None` without
    /// any.
    pub cache_policy: Option<Stored<CachePolicy>>,
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
    /// Positions (into `values`) of outliers (`stats::outliers::judge`). Shown, never dropped.
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
    /// For an inconclusive verdict, the change the design detects with 80% power at the n
    /// used, and how many repetitions would narrow the interval to ±10% (a precision target).
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

impl WorkloadReport {
    /// What stands in brackets after the label: the command its parameters make when the
    /// label hides it (`small files` → `fdtree -d 3 -f 4 -s 1 -l 8`), else the engine.
    pub fn engine_words(&self) -> String {
        crate::workload::WorkloadKind::of(&self.kind)
            .and_then(|k| k.command(&self.params))
            // A label that is the command already, with or without the engine's name.
            .filter(|c| {
                c.strip_prefix(self.kind.as_str()).unwrap_or(c).trim()
                    != self.label.trim_start_matches(self.kind.as_str()).trim()
            })
            .unwrap_or_else(|| self.kind.clone())
    }

    /// This workload's parameters in configuration `cell`, the workload being the report's
    /// `wi`-th: a study's factor may set them per cell (the cell's resolved workloads, in
    /// study order); an engine command's sweep stores each point's own values beside its
    /// target (`file_kib` of `fslab iozone -a`), which replace the run's; else its own.
    pub fn params_in(
        &self,
        cell: &super::CellInfo,
        wi: usize,
    ) -> std::borrow::Cow<'_, serde_json::Value> {
        use serde_json::Value;
        let resolved = cell
            .config
            .get("workloads")
            .and_then(Value::as_array)
            .and_then(|ws| ws.get(wi))
            .filter(|x| x.get("kind").and_then(Value::as_str) == Some(self.kind.as_str()));
        if let Some(p) = resolved {
            return std::borrow::Cow::Owned(p.clone());
        }
        let (Some(own), Some(point)) = (self.params.as_object(), cell.config.as_object()) else {
            return std::borrow::Cow::Borrowed(&self.params);
        };
        let mut merged = own.clone();
        let mut any = false;
        for (k, v) in point {
            if let Some(slot) = merged.get_mut(k) {
                any |= slot != v;
                *slot = v.clone();
            }
        }
        if any {
            std::borrow::Cow::Owned(Value::Object(merged))
        } else {
            std::borrow::Cow::Borrowed(&self.params)
        }
    }

    /// Every percentile that some latency curve has, ascending (the columns of the latency
    /// tables).
    pub fn latency_percentiles(&self) -> Vec<f64> {
        let points = self.latency.iter().flat_map(|l| &l.points);
        let mut pcts = crate::report::distinct(points.map(|(p, _)| *p));
        pcts.sort_by(f64::total_cmp);
        pcts
    }

    /// The statistics of one cell, phase and metric.
    pub fn stat(&self, cell: usize, phase: &str, name: &str) -> Option<&CellMetric> {
        self.stats
            .iter()
            .find(|s| s.cell == cell && s.phase == phase && s.name == name)
    }

    /// The telemetry statistics of one cell, phase and metric.
    pub fn telemetry_stat(&self, cell: usize, phase: &str, name: &str) -> Option<&CellMetric> {
        self.telemetry
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

#[cfg(test)]
mod tests {
    use crate::metric::{Metric, Unit};
    use crate::report::tests::{default_report, fdtree, study_of, Workload};
    use crate::report::Format;

    fn rendered(params: serde_json::Value, format: Format) -> String {
        let wl = Workload { params, ..fdtree() };
        let cells: [&[(&str, &str)]; 2] = [&[("fs", "ext4")], &[("fs", "xfs")]];
        let r = default_report(study_of(&wl, &cells, 3, &[], |c, rep| {
            let v = 1000.0 * (1.0 + 0.01 * f64::from(rep) + 0.1 * c as f64);
            vec![Metric::new("file_create", "rate", Unit::FilesPerSec, v)]
        }));
        crate::report::tests::rendered(&r, format)
    }

    #[test]
    fn a_labelled_workload_shows_its_flags() {
        // Stored as a study stores it: the study keys with the label ("tiny"); every
        // engine's spec makes its command the same way (each engine's def.rs tests its own).
        let p = serde_json::json!({
            "kind": "fdtree", "label": "tiny", "dirs": 3, "files": 4, "size_blocks": 1,
            "levels": 8
        });
        let want = "tiny (fdtree -d 3 -f 4 -s 1 -l 8)";
        let text = rendered(p.clone(), Format::Table);
        assert!(text.contains(&format!("== {want} ==")), "{text}");
        let md = rendered(p.clone(), Format::Markdown);
        assert!(md.contains(&format!("## {want}")), "{md}");
        let html = rendered(p, Format::Html);
        assert!(
            html.contains("tiny <small>(fdtree -d 3 -f 4 -s 1 -l 8)</small>"),
            "html"
        );
        // Parameters that are not a study's (an engine command stores its own) name the
        // engine only.
        let text = rendered(serde_json::json!({"nonsense": 1}), Format::Table);
        assert!(text.contains("== tiny (fdtree) =="), "{text}");
    }
}
