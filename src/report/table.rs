//! The terminal report: the articles' tables (rows = configurations, columns = phases; each
//! entry `mean ± sd` with the 95% interval and n under it — the interval of the geometric
//! mean for quantities that cannot be negative, the header says which), comparisons,
//! observations, warnings (grouped, at most about ten lines unless `--warnings all`),
//! repetitions and the environment.

use super::model::*;
use super::verdict::{fmt_interval, fmt_opt, fmt_p_cell};
use super::Exporter;
use crate::units::Scale;
use comfy_table::{presets, Cell, CellAlignment, Table};
use std::fmt::Write as _;

/// Renders [`ReportData`] as text tables for a terminal.
pub struct TableExporter {
    /// Print every configuration's superblock dump in the environment section (`--env
    /// full`); else one line of it per configuration.
    pub superblocks: bool,
}

fn new_table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    // A fixed width keeps the output identical whether or not stdout is a terminal.
    t.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    t
}

/// The header block shared by the text formats: what was reported.
pub(crate) fn source_lines(r: &ReportData) -> Vec<String> {
    let mut out = Vec::new();
    for s in &r.sources {
        out.push(format!(
            "{} {} '{}' [{}] — created {}, finished {}, fslab {}",
            s.kind,
            s.id,
            s.name,
            s.status,
            s.created_at,
            s.finished_at.as_deref().unwrap_or("-"),
            s.tool_version
        ));
        out.push(format!("command: {}", s.command_line));
        if let Some(r) = s.resumed_line() {
            out.push(r);
        }
        if !s.description.is_empty() {
            out.push(format!("about: {}", s.description));
        }
    }
    out
}

/// `mean ± sd` of an entry, in `sc`; `4000 ± 50.99*` when some of its repetitions were
/// disturbed (kept in the statistics: `disturbed = "keep"`), see [`DISTURBED_NOTE`].
pub(crate) fn mean_sd(s: &CellMetric, sc: &Scale) -> String {
    let mark = disturbed_mark(s);
    match s.summary.sd {
        Some(sd) => format!("{} ± {}{mark}", sc.num(s.summary.mean), sc.num(sd)),
        None => format!("{}{mark}", sc.num(s.summary.mean)),
    }
}

/// `[lo – hi] n=5` under an entry, in `sc`.
pub(crate) fn ci_n(s: &CellMetric, sc: &Scale) -> String {
    match s.summary.ci95 {
        Some(ci) => format!("[{}] n={}", fmt_interval(Some(ci), sc), s.summary.n),
        None => format!("n={}", s.summary.n),
    }
}

/// `*` for an entry some of whose repetitions other activity disturbed.
pub(crate) fn disturbed_mark(s: &CellMetric) -> &'static str {
    if s.disturbed.is_empty() {
        ""
    } else {
        "*"
    }
}

/// The line under a table whose entries carry the mark of [`disturbed_mark`].
pub(crate) const DISTURBED_NOTE: &str =
    "* includes repetitions other activity disturbed (kept: disturbed = \"keep\"; see Warnings)";

/// Whether any entry of table `t` carries the disturbed mark.
pub(crate) fn any_disturbed(w: &WorkloadReport, t: &TableSpec) -> bool {
    w.stats
        .iter()
        .any(|s| s.name == t.metric && !s.disturbed.is_empty())
}

/// What the intervals of a table are, from the methods of its entries:
/// `95% CI of the geometric mean (log scale)`.
pub(crate) fn interval_words(w: &WorkloadReport, t: &TableSpec) -> String {
    ci_words(w.stats.iter().filter(|s| s.name == t.metric))
}

/// What the 95% intervals of these statistics are, from their methods:
/// `95% CI of the geometric mean (log scale)`, or several joined with "or".
pub(crate) fn ci_words<'a>(stats: impl Iterator<Item = &'a CellMetric>) -> String {
    use crate::stats::IntervalMethod;
    let mut methods: Vec<IntervalMethod> = stats
        .filter(|s| s.summary.ci95.is_some())
        .map(|s| s.summary.ci95_method)
        .collect();
    methods.sort_by_key(|m| m.as_str());
    methods.dedup();
    let words: Vec<&str> = methods
        .iter()
        .map(|m| match m {
            IntervalMethod::LogT => "of the geometric mean (log scale)",
            IntervalMethod::T => "of the mean (Student t)",
            IntervalMethod::TClipped => "of the mean (Student t, clipped at 0, where a value is 0)",
        })
        .collect();
    if words.is_empty() {
        "95% CI".into()
    } else {
        format!("95% CI {}", words.join(" or "))
    }
}

/// The comparison's name: `journal 16MB → 64MB (fs=ext4)`.
pub(crate) fn comparison_name(c: &Comparison) -> String {
    let base = if c.factor == "cell" || c.factor == "source" {
        format!("{} → {}", c.from, c.to)
    } else {
        format!("{} {} → {}", c.factor, c.from, c.to)
    };
    if c.context.is_empty() {
        base
    } else {
        format!("{base} ({})", c.context)
    }
}

/// Percentile column label: `p50`, `p99.9`, `max`.
pub(crate) fn percentile_label(p: f64) -> String {
    if p >= 100.0 {
        "max".into()
    } else {
        format!("p{}", super::levels::fmt_number_label(p))
    }
}

fn workload_section(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let _ = writeln!(o, "\n== {} ({}) ==", w.label, w.kind);
    let cells = r.cells_with_data(w);
    if cells.is_empty() {
        let _ = writeln!(o, "no completed repetitions of this workload");
        return;
    }
    for t in &w.tables {
        let _ = writeln!(
            o,
            "\n{} — mean ± sd; {} and n below",
            t.heading,
            interval_words(w, t)
        );
        let mut tb = new_table();
        let g = super::grid::grid(r, w, t, &cells);
        let mut header = vec![Cell::new(g.corner)];
        header.extend(g.columns.iter().map(Cell::new));
        tb.set_header(header);
        for (label, entries) in &g.rows {
            let mut row = vec![Cell::new(label)];
            for e in entries {
                let text = match e {
                    Some((s, sc)) => format!("{}\n{}", mean_sd(s, sc), ci_n(s, sc)),
                    None => "-".into(),
                };
                row.push(Cell::new(text).set_alignment(CellAlignment::Right));
            }
            tb.add_row(row);
        }
        let _ = writeln!(o, "{tb}");
        if any_disturbed(w, t) {
            let _ = writeln!(o, "{DISTURBED_NOTE}");
        }
    }
    if !w.latency.is_empty() {
        latency_table(r, w, o);
    }
    if let Some(t) = super::telemetry::table(w, &r.cells) {
        let _ = writeln!(
            o,
            "\nTelemetry — means per repetition (devices, CPU, journal; doc/telemetry.md)"
        );
        let mut tb = new_table();
        let mut header = vec!["configuration".to_string(), "phase".to_string()];
        header.extend(t.header.iter().cloned());
        tb.set_header(header);
        for row in &t.rows {
            let mut cells = vec![Cell::new(&row.cell), Cell::new(&row.phase)];
            cells.extend(
                row.values
                    .iter()
                    .map(|v| Cell::new(v).set_alignment(CellAlignment::Right)),
            );
            tb.add_row(cells);
        }
        let _ = writeln!(o, "{tb}");
    }
    if !w.comparisons.is_empty() {
        let _ = writeln!(
            o,
            "\nComparisons against the baseline (Welch's t-test on log values, with its interval; Mann–Whitney p beside)"
        );
        let mut tb = new_table();
        tb.set_header(vec!["comparison", "metric", "verdict", "M–W p"]);
        for c in &w.comparisons {
            tb.add_row(vec![
                Cell::new(comparison_name(c)),
                Cell::new(format!("{}.{}", c.phase, c.name)),
                Cell::new(match c.note() {
                    Some(e) => format!("{}\n↳ {e}", c.verdict),
                    None => c.verdict.clone(),
                }),
                Cell::new(fmt_p_cell(c.mann_whitney.map(|m| m.p)))
                    .set_alignment(CellAlignment::Right),
            ]);
        }
        let _ = writeln!(o, "{tb}");
    }
}

fn latency_table(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let _ = writeln!(o, "\nLatency percentiles per operation");
    let pcts = w.latency_percentiles();
    let mut tb = new_table();
    let mut header = vec![
        "operation".to_string(),
        "configuration".to_string(),
        "count".to_string(),
    ];
    header.extend(pcts.iter().map(|p| percentile_label(*p)));
    tb.set_header(header);
    for l in &w.latency {
        let mut row = vec![
            Cell::new(super::grid::latency_label(w, &l.op)),
            Cell::new(&r.cells[l.cell].label),
            Cell::new(l.count.map(|c| c.to_string()).unwrap_or_else(|| "-".into()))
                .set_alignment(CellAlignment::Right),
        ];
        let sc = super::grid::latency_scale(w, &l.op);
        for p in &pcts {
            let v = l.points.iter().find(|x| x.0 == *p).map(|x| x.1);
            row.push(Cell::new(fmt_opt(v, &sc)).set_alignment(CellAlignment::Right));
        }
        tb.add_row(row);
    }
    let _ = writeln!(o, "{tb}");
}

/// Repetitions and stop reasons table rows: (configuration, workload, n, failed, discarded,
/// stop reason, status).
pub(crate) fn series_rows(r: &ReportData) -> Vec<[String; 7]> {
    r.series
        .iter()
        .map(|s| {
            [
                r.cells[s.cell].label.clone(),
                r.workloads[s.workload].label.clone(),
                s.ok.to_string(),
                s.failed.to_string(),
                discarded_text(s),
                s.stop_reason
                    .map_or_else(|| "-".into(), |r| r.as_str().to_string()),
                s.status.as_str().to_string(),
            ]
        })
        .collect()
}

/// The discarded warm-ups, and the disturbed repetitions left out (`0 + 2 re-run`).
fn discarded_text(s: &SeriesInfo) -> String {
    let mut t = s.discarded.to_string();
    if s.rerun > 0 {
        t.push_str(&format!(" + {} re-run", s.rerun));
    }
    if s.dropped > 0 {
        t.push_str(&format!(" + {} dropped", s.dropped));
    }
    t
}

/// Column names of [`series_rows`].
pub(crate) const SERIES_HEADER: [&str; 7] = [
    "configuration",
    "workload",
    "n",
    "failed",
    "discarded",
    "stop reason",
    "status",
];

/// The workload sections (tables, latency, comparisons) and the warnings, as `fslab show`
/// prints them under its own header.
pub fn summary_text(r: &ReportData) -> String {
    let mut o = String::new();
    for w in &r.workloads {
        workload_section(r, w, &mut o);
    }
    if !r.warnings.is_empty() {
        let _ = writeln!(o, "\nWarnings:");
        for l in super::warngroups::lines(r, true) {
            let _ = writeln!(o, "- {l}");
        }
    }
    o
}

impl Exporter for TableExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = String::new();
        let _ = writeln!(o, "{}", r.title);
        for l in source_lines(r) {
            let _ = writeln!(o, "  {l}");
        }
        if let Some(h) = super::differences::heading(r) {
            let _ = writeln!(o, "\n== {h} ==");
            if r.differences.is_empty() {
                let _ = writeln!(o, "{}", super::differences::NOTHING);
            }
            let width = r.differences.iter().map(|d| d.key.len()).max().unwrap_or(0);
            for d in &r.differences {
                let _ = writeln!(
                    o,
                    "  {:<13} {:<width$}  {}",
                    d.section.as_str(),
                    d.key,
                    super::differences::change_text(d)
                );
            }
        }
        // The answer first: what differs, then the tables it comes from.
        let _ = writeln!(o, "\n== Observations ==");
        if r.observations.is_empty() {
            let _ = writeln!(o, "{}", r.no_observations());
        }
        for ob in &r.observations {
            let _ = writeln!(o, "- [{}] {}", ob.workload, ob.text);
        }
        for w in &r.workloads {
            workload_section(r, w, &mut o);
        }
        let _ = writeln!(o, "\n== Warnings ==");
        if r.warnings.is_empty() {
            let _ = writeln!(o, "none");
        }
        for l in super::warngroups::lines(r, true) {
            let _ = writeln!(o, "- {l}");
        }
        if let Some(c) = &r.guest_calibration {
            let _ = writeln!(o, "\n== Guest calibration ==");
            for l in super::calibration::lines(c) {
                let _ = writeln!(o, "{l}");
            }
        }
        let _ = writeln!(o, "\n== Repetitions ==");
        let mut tb = new_table();
        tb.set_header(SERIES_HEADER.to_vec());
        for row in series_rows(r) {
            tb.add_row(row.to_vec());
        }
        let _ = writeln!(o, "{tb}");
        let _ = writeln!(o, "\n== Environment ==");
        for e in &r.environments {
            if r.environments.len() > 1 {
                let _ = writeln!(o, "[{}]", e.source);
            }
            for (k, v) in &e.entries {
                let _ = writeln!(o, "  {k:<24} {}", super::verdict::env_value(k, v));
            }
        }
        for c in &r.cells {
            if c.commands.is_empty() && c.superblock.is_empty() {
                continue;
            }
            let _ = writeln!(o, "\n-- configuration {} --", c.label);
            for cmd in &c.commands {
                let _ = writeln!(o, "  $ {cmd}");
            }
            if !c.superblock.is_empty() && !self.superblocks {
                let _ = writeln!(
                    o,
                    "  superblock: {} (whole: `--env full`)",
                    super::superblock::summary(&c.superblock)
                );
            } else if !c.superblock.is_empty() {
                let _ = writeln!(o, "  superblock:");
                for l in c.superblock.lines() {
                    let _ = writeln!(o, "    {l}");
                }
            }
        }
        Ok(o.into_bytes())
    }
}
