//! What the human formats (terminal, Markdown, HTML) show of a report: by default the answer
//! and one compact table per workload (its headline metrics; fio's IOPS, bandwidth and
//! latency percentiles side by side), with `--all` every table. In both, metrics whose values
//! say nothing in a table (the same value in every repetition, or zero everywhere) are named
//! in one line with their value instead, and comparisons without a test are counted, not
//! listed. The model is the same either way; this only chooses (`--format json` and `csv`
//! always carry everything).

use super::model::*;
use crate::units::Scale;
use crate::workload::WorkloadKind;

/// How much of a report the human formats show (`--all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The answer and each workload's headline metrics.
    #[default]
    Compact,
    /// Every table.
    All,
}

/// Compact tables with more rows than this print each entry on one line (mean ± sd); their
/// intervals are in the verdicts and behind `--all`.
pub const ROWS_WITH_INTERVALS: usize = 8;
/// Compact tables with more rows than this (a sweep: IOzone's `-a` has 126 points) print the
/// means alone, one short line per configuration, as IOzone prints its table.
pub const ROWS_WITH_SD: usize = 24;
/// At most this many observations are listed in the compact report, the rest counted.
pub const OBSERVATIONS_SHOWN: usize = 10;
/// At most this many verdicts are listed per workload in the compact report; beyond it only
/// the significant ones are, and the rest are counted.
pub const VERDICTS_SHOWN: usize = 20;

/// A metric whose values are all the same, in every repetition of every configuration
/// (fio's run time of a time-based job, dbench's measured time), or all zero.
#[derive(Debug, Clone, PartialEq)]
pub struct Flat {
    /// The table's heading (`Time`, `Data`).
    pub heading: String,
    /// The metric name.
    pub metric: String,
    /// Its phases.
    pub phases: Vec<String>,
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: crate::metric::Unit,
}

impl Flat {
    /// `total.elapsed 20.00 s`, `io_bytes of 6 phases 16.00 MiB`.
    pub fn words(&self) -> String {
        let what = match self.phases.as_slice() {
            [one] => format!("{one}.{}", self.metric),
            more => format!("{} of {} phases", self.metric, more.len()),
        };
        format!("{what} {}", self.unit.scale(self.value).fmt(self.value))
    }
}

/// Whether every value of table `t` is the same one; that value.
fn flat_value(w: &WorkloadReport, t: &TableSpec) -> Option<f64> {
    let mut values = w
        .stats
        .iter()
        .filter(|s| s.name == t.metric && t.phases.contains(&s.phase))
        .flat_map(|s| s.values.iter().copied());
    let first = values.next()?;
    values.all(|v| v == first).then_some(first)
}

/// The tables of `w` whose values are all the same, as [`Flat`]s.
pub fn flat_tables(w: &WorkloadReport) -> Vec<Flat> {
    w.tables
        .iter()
        .filter_map(|t| {
            let value = flat_value(w, t)?;
            Some(Flat {
                heading: t.heading.clone(),
                metric: t.metric.clone(),
                phases: t.phases.clone(),
                value,
                unit: *t.units.first()?,
            })
        })
        .collect()
}

/// A column of fio's compact table: its header and the metrics it takes, first found first
/// (a job's `sync` direction has `lat_*`, its reads and writes `clat_*`).
type MetricColumn = (&'static str, &'static [&'static str]);

/// fio's summary, as fio users read a job: IOPS, bandwidth, completion latency p50 and p99.
const FIO_COLUMNS: [MetricColumn; 4] = [
    ("IOPS", &["iops"]),
    ("bandwidth", &["throughput"]),
    ("p50 latency", &["clat_p50", "lat_p50"]),
    ("p99 latency", &["clat_p99", "lat_p99"]),
];

/// The note under fio's compact table.
pub const FIO_NOTE: &str =
    "latency: completion latency (clat) of reads and writes; of an fsync, its whole latency";

/// A table whose rows are phases (each heading its configurations) and whose columns are
/// metrics (fio's jobs: IOPS, bandwidth, latency).
#[derive(Debug, Clone)]
pub struct MetricTable<'a> {
    /// Column headers.
    pub columns: Vec<&'static str>,
    /// One group per phase.
    pub groups: Vec<MetricGroup<'a>>,
}

/// One phase of a [`MetricTable`].
#[derive(Debug, Clone)]
pub struct MetricGroup<'a> {
    /// The phase (`randwrite-fsync/write`).
    pub phase: String,
    /// The scale of each column in this phase (shared by its configurations).
    pub scales: Vec<Option<Scale>>,
    /// Per configuration (index into the report's cells), one entry per column.
    pub rows: Vec<(usize, Vec<Option<&'a CellMetric>>)>,
}

impl MetricTable<'_> {
    /// Rows of entries (not counting the phase lines).
    pub fn entry_rows(&self) -> usize {
        self.groups.iter().map(|g| g.rows.len()).sum()
    }

    /// The statistics it shows.
    pub fn stats(&self) -> impl Iterator<Item = &CellMetric> {
        self.groups
            .iter()
            .flat_map(|g| g.rows.iter().flat_map(|r| r.1.iter().flatten().copied()))
    }
}

/// The compact columns of a workload kind, when it has its own (fio).
fn metric_columns(kind: &str) -> Option<&'static [MetricColumn]> {
    match WorkloadKind::of(kind)? {
        WorkloadKind::Fio => Some(&FIO_COLUMNS),
        _ => None,
    }
}

/// The metric table of `w` for the configurations `cells`, for a kind that has one.
pub fn metric_table<'a>(w: &'a WorkloadReport, cells: &[usize]) -> Option<MetricTable<'a>> {
    let columns = metric_columns(&w.kind)?;
    let mut groups = Vec::new();
    for phase in &w.phases {
        let find = |c: usize, names: &[&str]| names.iter().find_map(|n| w.stat(c, phase, n));
        let rows: Vec<(usize, Vec<Option<&CellMetric>>)> = cells
            .iter()
            .map(|&c| (c, columns.iter().map(|col| find(c, col.1)).collect()))
            .collect();
        if rows.iter().all(|r| r.1.iter().all(Option::is_none)) {
            continue;
        }
        let scales = (0..columns.len())
            .map(|i| {
                let entries: Vec<&CellMetric> = rows.iter().filter_map(|r| r.1[i]).collect();
                let unit = entries.first()?.unit;
                Some(unit.scale_for(entries.iter().map(|s| s.summary.mean)))
            })
            .collect();
        groups.push(MetricGroup {
            phase: phase.clone(),
            scales,
            rows,
        });
    }
    (!groups.is_empty()).then(|| MetricTable {
        columns: columns.iter().map(|c| c.0).collect(),
        groups,
    })
}

/// What a human format shows of one workload.
#[derive(Debug, Clone)]
pub struct WorkloadView<'a> {
    /// The metric table (fio's jobs), in the compact report of a kind that has one.
    pub metric_table: Option<MetricTable<'a>>,
    /// The tables shown, in order.
    pub tables: Vec<&'a TableSpec>,
    /// Tables left out because all their values are the same ([`Flat`]).
    pub flat: Vec<Flat>,
    /// Headings of the other tables left out (compact), for the "also measured" line.
    pub hidden: Vec<String>,
    /// Whether the latency-percentile table is shown.
    pub latency: bool,
    /// Whether the telemetry table is shown.
    pub telemetry: bool,
    /// The comparisons listed.
    pub comparisons: Vec<&'a Comparison>,
    /// What the comparisons left out were, counted (empty when none was).
    pub left_out: Vec<(usize, &'static str)>,
}

impl WorkloadView<'_> {
    /// The line saying what else was measured and where to see it, and the metrics that are
    /// the same in every repetition with their value (`None` if there is nothing to say).
    pub fn also_line(&self, w: &WorkloadReport) -> Option<String> {
        let mut parts = Vec::new();
        if !self.hidden.is_empty() {
            let n = self.hidden.len();
            let mut names: Vec<String> = self
                .hidden
                .iter()
                .take(6)
                .map(|h| h.to_lowercase())
                .collect();
            if n > 6 {
                names.push("…".into());
            }
            parts.push(format!(
                "{n} more {} ({})",
                if n == 1 { "metric" } else { "metrics" },
                names.join(", ")
            ));
        }
        if !self.latency && !w.latency.is_empty() {
            parts.push("latency percentiles".into());
        }
        if !self.telemetry && !w.telemetry.is_empty() {
            parts.push("telemetry".into());
        }
        let mut line = String::new();
        if !parts.is_empty() {
            line = format!("Also measured, shown with --all: {}.", parts.join("; "));
        }
        if !self.flat.is_empty() {
            let words: Vec<String> = self.flat.iter().map(Flat::words).collect();
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&format!(
                "The same in every repetition: {}.",
                words.join("; ")
            ));
        }
        (!line.is_empty()).then_some(line)
    }

    /// The line counting the comparisons not listed (`None` if all are).
    pub fn left_out_line(&self) -> Option<String> {
        if self.left_out.is_empty() {
            return None;
        }
        let total: usize = self.left_out.iter().map(|(n, _)| n).sum();
        let parts: Vec<String> = self
            .left_out
            .iter()
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        let more = if self.comparisons.is_empty() {
            ""
        } else {
            " more"
        };
        Some(format!(
            "{total}{more} {}: {} (--all lists them).",
            if total == 1 {
                "comparison"
            } else {
                "comparisons"
            },
            parts.join(", ")
        ))
    }
}

/// What to show of each of the report's workloads, in order.
pub fn workloads(r: &ReportData, detail: Detail) -> Vec<WorkloadView<'_>> {
    r.workloads.iter().map(|w| workload(r, w, detail)).collect()
}

/// What to show of workload `w`.
pub fn workload<'a>(r: &ReportData, w: &'a WorkloadReport, detail: Detail) -> WorkloadView<'a> {
    let flat = flat_tables(w);
    let is_flat = |t: &TableSpec| flat.iter().any(|f| f.metric == t.metric);
    let cells = r.cells_with_data(w);
    let metric_table = match detail {
        Detail::Compact => metric_table(w, &cells),
        Detail::All => None,
    };
    let mut tables = Vec::new();
    let mut hidden = Vec::new();
    for t in &w.tables {
        let headline = t
            .phases
            .iter()
            .any(|p| w.headline(p).is_some_and(|h| h.name == t.metric));
        let shown = match detail {
            Detail::All => true,
            Detail::Compact => headline && metric_table.is_none(),
        };
        let in_metric_table = metric_columns(&w.kind)
            .is_some_and(|cols| cols.iter().any(|c| c.1.contains(&t.metric.as_str())));
        if is_flat(t) || (metric_table.is_some() && in_metric_table) {
            continue;
        }
        if shown {
            tables.push(t);
        } else {
            hidden.push(t.heading.clone());
        }
    }
    let (comparisons, left_out) = comparisons(w, detail);
    WorkloadView {
        metric_table,
        tables,
        flat,
        hidden,
        latency: detail == Detail::All,
        telemetry: detail == Detail::All,
        comparisons,
        left_out,
    }
}

/// Whether a comparison has a test (both sides repeated, a percent change that exists).
fn tested(c: &Comparison) -> bool {
    c.welch.is_some() && c.change.is_some()
}

/// The comparisons listed and what the others were: every one with `--all`; compact, the
/// tested primary ones that are not Observations already (only the significant ones when
/// there are more than [`VERDICTS_SHOWN`]), then the exploratory ones that hold up after the
/// adjustment for multiple comparisons, up to [`VERDICTS_SHOWN`] in all.
fn comparisons(
    w: &WorkloadReport,
    detail: Detail,
) -> (Vec<&Comparison>, Vec<(usize, &'static str)>) {
    if detail == Detail::All {
        return (w.comparisons.iter().collect(), Vec::new());
    }
    let holds = |c: &Comparison| super::comparisons::holds_up(c);
    let mut left_out: Vec<(usize, &'static str)> = Vec::new();
    let mut count = |n: usize, what: &'static str| {
        if n > 0 {
            left_out.push((n, what));
        }
    };
    let all = &w.comparisons;
    count(
        all.iter()
            .filter(|c| c.change.is_some() && c.welch.is_none())
            .count(),
        "not tested (one repetition)",
    );
    count(
        all.iter().filter(|c| c.change.is_none()).count(),
        "not comparable (a mean is zero)",
    );
    // Those that hold up are the Observations: not listed twice.
    count(
        all.iter().filter(|c| c.primary && holds(c)).count(),
        "significant, under Observations",
    );
    let mut primary: Vec<&Comparison> = all
        .iter()
        .filter(|c| tested(c) && c.primary && !holds(c))
        .collect();
    if primary.len() > VERDICTS_SHOWN {
        count(
            primary.iter().filter(|c| !c.significant).count(),
            "primary without a significant difference",
        );
        primary.retain(|c| c.significant);
        if primary.len() > VERDICTS_SHOWN {
            count(
                primary.len() - VERDICTS_SHOWN,
                "primary significant, beyond the first 20",
            );
            primary.truncate(VERDICTS_SHOWN);
        }
    }
    let room = VERDICTS_SHOWN.saturating_sub(primary.len());
    let exploratory: Vec<&Comparison> = all.iter().filter(|c| tested(c) && !c.primary).collect();
    let (mut kept, rest): (Vec<&Comparison>, Vec<&Comparison>) =
        exploratory.into_iter().partition(|c| holds(c));
    count(
        rest.iter().filter(|c| c.significant).count(),
        "exploratory with p < 0.05 that do not hold up after adjusting",
    );
    count(
        rest.iter().filter(|c| !c.significant).count(),
        "exploratory without a significant difference",
    );
    if kept.len() > room {
        count(
            kept.len() - room,
            "exploratory significant, beyond the first 20",
        );
        kept.truncate(room);
    }
    // In the model's order: the listing follows the tables.
    let shown: Vec<&Comparison> = all
        .iter()
        .filter(|c| {
            primary.iter().any(|p| std::ptr::eq(*p, *c))
                || kept.iter().any(|k| std::ptr::eq(*k, *c))
        })
        .collect();
    (shown, left_out)
}

/// At most this many comparisons are drawn in a forest plot (the significant ones first).
pub const FOREST_ROWS: usize = 40;

/// The comparisons a forest plot draws, in the model's order, and how many tested ones it
/// leaves out: compact, the primary ones and the exploratory ones that hold up (those the
/// Observations and verdicts are about); with `--all`, every tested one. Beyond
/// [`FOREST_ROWS`], the significant ones are kept first.
pub fn forest_rows(w: &WorkloadReport, detail: Detail) -> (Vec<&Comparison>, usize) {
    let mut rows: Vec<&Comparison> = w
        .comparisons
        .iter()
        .filter(|c| tested(c))
        .filter(|c| detail == Detail::All || c.primary || super::comparisons::holds_up(c))
        .collect();
    let total = rows.len();
    if total > FOREST_ROWS {
        let mut kept: Vec<&Comparison> = rows.iter().copied().filter(|c| c.significant).collect();
        kept.extend(rows.iter().copied().filter(|c| !c.significant));
        kept.truncate(FOREST_ROWS);
        rows.retain(|c| kept.iter().any(|k| std::ptr::eq(*k, *c)));
    }
    (rows, total - total.min(FOREST_ROWS))
}

/// The observations listed (all with `--all`, else at most [`OBSERVATIONS_SHOWN`]) and how
/// many are not.
pub fn observations(r: &ReportData, detail: Detail) -> (&[Observation], usize) {
    match detail {
        Detail::All => (&r.observations, 0),
        Detail::Compact => {
            let n = r.observations.len().min(OBSERVATIONS_SHOWN);
            (&r.observations[..n], r.observations.len() - n)
        }
    }
}

/// How a configuration is named in a table's rows: its level when the report has one factor
/// (the factor names the column), else its label.
pub fn cell_name(r: &ReportData, c: usize) -> String {
    let cell = &r.cells[c];
    match (r.factors.len(), cell.factors.as_slice()) {
        (1, [(_, level)]) => level.clone(),
        _ => cell.label.clone(),
    }
}

/// The corner of a table whose rows are configurations: the one factor's name, else
/// `configuration`.
pub fn cell_corner(r: &ReportData) -> String {
    match r.factors.as_slice() {
        [f] if r.cells.iter().all(|c| c.factors.len() == 1) => f.name.clone(),
        _ => "configuration".into(),
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
