//! The terminal report, the answer first and every line within the width (the terminal's,
//! 100 columns when the output is not a terminal; [`super::textfit`]): the header (for
//! `compare`, whether the sides ran interleaved and what differs but the environment), the
//! Observations, the verdicts, the environment's differences, then per workload its compact
//! table —
//! the headline metrics (fio: IOPS, bandwidth and latency percentiles of every job in one
//! table), each entry `mean ± sd` with its 95% interval under it — and what else it measured;
//! then warnings (grouped, at most about ten lines unless `--warnings all`), repetitions, the
//! environment and the configurations' commands ([`super::table_tail`]). `--all` prints every
//! table ([`super::view`]).

use super::entries::{ci_words, comparison_name, interval_words, EntryStyle};
use super::model::*;
pub use super::table_kit::TableExporter;
pub(crate) use super::table_kit::Text;
use super::textfit::{Align, TextTable};
use super::verdict::{fmt_opt, fmt_p_cell};
use super::view::{self, Detail, WorkloadView};
use super::Exporter;

fn header(r: &ReportData, o: &mut Text) {
    o.para(&r.title, "", "  ");
    for s in &r.sources {
        let finished = s.finished_at.as_deref().map_or_else(
            || "-".to_string(),
            |f| crate::units::short_time(f, Some(&s.created_at)),
        );
        o.para(
            &format!(
                "{} {} '{}' [{}] · {} → {finished} UTC · fslab {}",
                s.kind,
                s.id,
                s.name,
                s.status,
                crate::units::short_time(&s.created_at, None),
                s.tool_version
            ),
            "  ",
            "    ",
        );
        for l in super::textfit::wrap_command(&s.command_line, o.width, "  ") {
            o.line(&l);
        }
        if let Some(line) = s.resumed_line() {
            o.para(&line, "  ", "    ");
        }
        if !s.description.is_empty() {
            o.para(&s.description, "  ", "  ");
        }
    }
    if let Some(l) = super::differences::timing_line(r) {
        o.para(&l, "  ", "    ");
    }
    differences(r, false, o);
}

/// What differs between the two sides of `compare`: the parameters and configurations before
/// the answer, the environment (`after`) after the verdicts.
fn differences(r: &ReportData, after: bool, o: &mut Text) {
    let Some(h) = super::differences::heading(r, after) else {
        return;
    };
    o.heading(&h);
    if r.differences.is_empty() {
        o.line(super::differences::NOTHING);
    }
    let part = super::differences::part(r, after);
    let width = part.iter().map(|d| d.key.len()).max().unwrap_or(0).min(30);
    for d in part {
        let first = format!("  {:<13} {:<width$}  ", d.section.as_str(), d.key);
        let rest = " ".repeat(17 + width);
        o.para(&super::differences::change_text(d), &first, &rest);
    }
    if let Some(l) = super::differences::later_line(r).filter(|_| !after) {
        o.para(&l, "  ", "    ");
    }
}

fn observations(r: &ReportData, detail: Detail, o: &mut Text) {
    o.heading("Observations");
    if r.observations.is_empty() {
        o.para(r.no_observations(), "", "");
    }
    let (shown, more) = view::observations(r, detail);
    let several = r.workloads.len() > 1;
    for ob in shown {
        let text = if several {
            format!("[{}] {}", ob.workload, ob.text)
        } else {
            ob.text.clone()
        };
        o.para(&text, "- ", "  ");
    }
    if more > 0 {
        o.para(
            &format!("…and {more} more observations (all of them: --all)"),
            "  ",
            "  ",
        );
    }
}

/// A comparison's metric as the tables name it: `Qfsinfo.mean_latency`.
pub(crate) fn verdict_metric(w: &WorkloadReport, c: &Comparison) -> String {
    format!("{}.{}", super::grid::phase_label(&w.kind, &c.phase), c.name)
}

/// The verdicts of every workload, grouped by comparison, the answer before the tables.
fn verdicts(r: &ReportData, views: &[WorkloadView<'_>], detail: Detail, o: &mut Text) {
    if r.workloads.iter().all(|w| w.comparisons.is_empty()) {
        return;
    }
    o.heading("Verdicts");
    o.para(
        "Change against the baseline with its 95% interval and p (one model: Welch on log values).",
        "",
        "",
    );
    for (w, v) in r.workloads.iter().zip(views) {
        if w.comparisons.is_empty() {
            continue;
        }
        o.line("");
        o.para(&format!("{} ({})", w.label, w.engine_words()), "", "  ");
        let key_w = v
            .comparisons
            .iter()
            .map(|c| super::textfit::width(&verdict_metric(w, c)))
            .max()
            .unwrap_or(0)
            .min(o.width / 3);
        let mut last = String::new();
        for c in &v.comparisons {
            let name = comparison_name(c);
            if name != last {
                o.para(&name, "  ", "    ");
                last = name;
            }
            let metric = verdict_metric(w, c);
            let mut verdict = c.verdict.clone();
            if detail == Detail::All {
                verdict.push_str(&format!(
                    "; Mann–Whitney p {}",
                    fmt_p_cell(c.mann_whitney.map(|m| m.p))
                ));
            }
            let pad = " ".repeat(4 + key_w + 2);
            if super::textfit::width(&metric) <= key_w {
                let first = format!("    {metric:<key_w$}  ");
                o.para(&verdict, &first, &pad);
            } else {
                o.para(&metric, "    ", "      ");
                o.para(&verdict, &pad, &pad);
            }
            if let Some(note) = c.note() {
                o.para(note, &format!("{pad}↳ "), &format!("{pad}  "));
            }
        }
        if let Some(l) = v.left_out_line() {
            o.para(&l, "  ", "  ");
        }
    }
}

/// A metric table (fio's jobs): a line per phase with its units, then its configurations.
fn metric_table(r: &ReportData, w: &WorkloadReport, m: &view::MetricTable<'_>, o: &mut Text) {
    let style = EntryStyle::of(m.stats(), m.entry_rows(), true);
    o.line("");
    o.para(
        &format!(
            "Jobs — {}",
            style.words(&ci_words(m.stats().filter(|_| true)))
        ),
        "",
        "  ",
    );
    let mut cols = vec![(format!("job / {}", view::cell_corner(r)), Align::Left)];
    cols.extend(m.columns.iter().map(|c| (c.to_string(), Align::Right)));
    let mut t = TextTable::new(cols, 1);
    for g in &m.groups {
        let mut row = vec![g.phase.clone()];
        row.extend(g.scales.iter().map(|s| match s {
            Some(s) if !s.label.is_empty() => s.label.to_string(),
            _ => String::new(),
        }));
        t.row(row);
        for (c, entries) in &g.rows {
            let mut row = vec![format!("  {}", view::cell_name(r, *c))];
            for (e, sc) in entries.iter().zip(&g.scales) {
                row.push(match (e, sc) {
                    (Some(s), Some(sc)) => style.text(s, sc, "\n"),
                    _ => "-".into(),
                });
            }
            t.row(row);
        }
    }
    o.table(&t);
    if m.stats().any(|s| !s.disturbed.is_empty()) {
        o.para(super::entries::DISTURBED_NOTE, "", "  ");
    }
    o.para(view::FIO_NOTE, "", "  ");
    let _ = w;
}

/// One of the articles' tables (rows = configurations, columns = phases; dbench's
/// operations as rows).
fn metric_grid(r: &ReportData, w: &WorkloadReport, t: &TableSpec, detail: Detail, o: &mut Text) {
    let (g, style) = super::grid::styled(r, w, t, detail);
    o.line("");
    o.para(
        &format!("{} — {}", t.heading, style.words(&interval_words(w, t))),
        "",
        "  ",
    );
    // Rows of configurations of several factors: a column per factor (`64 KiB  4 KiB`).
    let factors = super::grid::factor_columns(r, &g.cells);
    let keys = factors.as_ref().map_or(1, Vec::len);
    let mut cols: Vec<(String, Align)> = match &factors {
        Some(names) => names.iter().map(|n| (n.clone(), Align::Left)).collect(),
        None => vec![(g.corner.clone(), Align::Left)],
    };
    cols.extend(g.columns.iter().map(|c| (c.clone(), Align::Right)));
    let mut tb = TextTable::new(cols, keys);
    for (i, (label, entries)) in g.rows.iter().enumerate() {
        let mut row = match &factors {
            Some(_) => super::grid::row_levels(r, &g, i),
            None => vec![label.clone()],
        };
        row.extend(entries.iter().map(|e| match e {
            Some((s, sc)) => style.text(s, sc, "\n"),
            None => "-".into(),
        }));
        tb.row(row);
    }
    o.table(&tb);
    if super::entries::any_disturbed(w, t) {
        o.para(super::entries::DISTURBED_NOTE, "", "  ");
    }
}

/// Table `t` of a sweep as one matrix per phase (rows and columns the two swept factors,
/// means), split into blocks of columns that fit the width; `false` when the report is not a
/// sweep.
fn sweep_matrices(r: &ReportData, w: &WorkloadReport, t: &TableSpec, o: &mut Text) -> bool {
    use super::sweep;
    let ms = sweep::matrices(r, w, t);
    if ms.is_empty() {
        return false;
    }
    o.line("");
    o.para(
        &format!("{} — {}", t.heading, sweep::words(r, &ms)),
        "",
        "  ",
    );
    for m in &ms {
        o.line("");
        o.para(&sweep::title(w, m), "", "  ");
        let (header, rows) = sweep::text(r, m);
        let mut cols = vec![(header[0].clone(), Align::Left)];
        cols.extend(header[1..].iter().map(|h| (h.clone(), Align::Right)));
        let mut tb = TextTable::new(cols, 1);
        for row in rows {
            tb.row(row);
        }
        o.table(&tb);
    }
    if sweep::any_disturbed(&ms) {
        o.para(super::entries::DISTURBED_NOTE, "", "  ");
    }
    true
}

fn latency_table(r: &ReportData, w: &WorkloadReport, o: &mut Text) {
    o.line("");
    o.line("Latency percentiles per operation");
    let pcts = w.latency_percentiles();
    let mut cols = vec![
        ("operation".to_string(), Align::Left),
        (view::cell_corner(r), Align::Left),
        ("count".to_string(), Align::Right),
    ];
    cols.extend(
        pcts.iter()
            .map(|p| (super::entries::percentile_label(*p), Align::Right)),
    );
    let mut t = TextTable::new(cols, 2);
    for l in &w.latency {
        let sc = super::grid::latency_scale(w, &l.op);
        let mut row = vec![
            super::grid::latency_label(w, &l.op),
            view::cell_name(r, l.cell),
            l.count.map_or_else(|| "-".into(), |c| c.to_string()),
        ];
        for p in &pcts {
            let v = l.points.iter().find(|x| x.0 == *p).map(|x| x.1);
            row.push(fmt_opt(v, &sc));
        }
        t.row(row);
    }
    o.table(&t);
}

fn telemetry_table(r: &ReportData, w: &WorkloadReport, o: &mut Text) {
    let Some(t) = super::telemetry::table(w, &r.cells) else {
        return;
    };
    o.line("");
    o.para(
        "Telemetry — means per repetition (devices, CPU, journal; doc/telemetry.md)",
        "",
        "  ",
    );
    let mut cols = vec![
        (view::cell_corner(r), Align::Left),
        ("phase".to_string(), Align::Left),
    ];
    cols.extend(t.header.iter().map(|h| (h.clone(), Align::Right)));
    let mut tb = TextTable::new(cols, 2);
    for row in &t.rows {
        let mut cells = vec![view::cell_name(r, row.index), row.phase.clone()];
        cells.extend(row.values.iter().cloned());
        tb.row(cells);
    }
    o.table(&tb);
}

fn workload_section(
    r: &ReportData,
    w: &WorkloadReport,
    v: &WorkloadView<'_>,
    detail: Detail,
    o: &mut Text,
) {
    o.heading(&format!("{} ({})", w.label, w.engine_words()));
    if r.cells_with_data(w).is_empty() {
        o.line("no completed repetitions of this workload (see Repetitions)");
        return;
    }
    if let Some(m) = &v.metric_table {
        metric_table(r, w, m, o);
    }
    for t in &v.tables {
        // A sweep as matrices; its configuration rows too with --all.
        if !sweep_matrices(r, w, t, o) || detail == Detail::All {
            metric_grid(r, w, t, detail, o);
        }
    }
    if v.latency && !w.latency.is_empty() {
        latency_table(r, w, o);
    }
    if v.telemetry {
        telemetry_table(r, w, o);
    }
    if let Some(l) = v.also_line(w) {
        o.line("");
        o.para(&l, "", "  ");
    }
}

/// The report from the Observations on (no header): what `fslab show` prints under its own.
pub(crate) fn body(r: &ReportData, exp: &TableExporter, o: &mut Text) {
    let views: Vec<WorkloadView<'_>> = r
        .workloads
        .iter()
        .map(|w| view::workload(r, w, exp.detail))
        .collect();
    observations(r, exp.detail, o);
    verdicts(r, &views, exp.detail, o);
    differences(r, true, o);
    for (w, v) in r.workloads.iter().zip(&views) {
        workload_section(r, w, v, exp.detail, o);
    }
    super::table_tail::tail(r, exp, o);
}

impl Exporter for TableExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = Text {
            out: String::new(),
            width: self.width.max(super::textfit::MIN_WIDTH),
        };
        header(r, &mut o);
        body(r, self, &mut o);
        Ok(o.out.into_bytes())
    }
}
