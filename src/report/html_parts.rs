//! One workload's section of the HTML report: its parameters as tables (a fio job as one
//! row per section), its compact table or every table (`--all`), what else it measured, its
//! charts, the latency percentiles and the telemetry.

use super::charts;
use super::entries::{interval_words, percentile_label, EntryStyle};
use super::html_kit::{chart_figure, esc, table_end, table_head};
use super::model::*;
use super::verdict::fmt_opt;
use super::view::{self, Detail, WorkloadView};
use crate::units::Scale;
use std::fmt::Write as _;

/// A workload's parameters: `parameter | value`, and each set of sections (a fio job) as a
/// table of its own.
fn params(o: &mut String, p: &serde_json::Value) {
    let p = super::params::layout(p);
    if !p.values.is_empty() {
        o.push_str("<div class=\"scroll\"><table class=\"params\"><thead><tr><th>parameter</th><th>value</th></tr></thead><tbody>\n");
        for (k, v) in &p.values {
            let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        table_end(o);
    }
    for s in &p.sections {
        let mut cols = vec!["section"];
        cols.extend(s.columns.iter().map(String::as_str));
        let _ = writeln!(o, "<p class=\"meta\"><code>{}</code>:</p>", esc(&s.key));
        o.push_str("<div class=\"scroll\"><table class=\"params\"><thead><tr>");
        for c in &cols {
            let _ = write!(o, "<th>{}</th>", esc(c));
        }
        o.push_str("</tr></thead><tbody>\n");
        for (name, values) in &s.rows {
            let _ = write!(o, "<tr><th>[{}]</th>", esc(name));
            for v in values {
                let _ = write!(o, "<td>{}</td>", esc(v));
            }
            o.push_str("</tr>\n");
        }
        table_end(o);
    }
}

/// One entry: the mean, then (as the style says) ± sd and the interval.
fn entry(s: &CellMetric, sc: &Scale, style: &EntryStyle) -> String {
    let mark = super::entries::disturbed_mark(s);
    let mut out = format!("<div class=\"mean\">{}{mark}</div>", sc.num(s.summary.mean));
    if style.sd {
        if let Some(sd) = s.summary.sd {
            let _ = write!(out, "<div class=\"sd\">± {}</div>", sc.num(sd));
        }
    }
    if style.intervals && s.summary.ci95.is_some() {
        let _ = write!(
            out,
            "<div class=\"ci\">95% CI {}{}</div>",
            super::verdict::fmt_interval(s.summary.ci95, sc),
            if style.n.is_none() {
                format!(" · n={}", s.summary.n)
            } else {
                String::new()
            }
        );
    } else if style.n.is_none() {
        let _ = write!(out, "<div class=\"ci\">n={}</div>", s.summary.n);
    }
    out
}

/// fio's jobs: IOPS, bandwidth and latency percentiles side by side.
fn metric_table(r: &ReportData, m: &view::MetricTable<'_>, o: &mut String) {
    let style = EntryStyle::of(m.stats(), m.entry_rows(), true);
    let _ = writeln!(
        o,
        "<h3>Jobs</h3>\n<p class=\"meta\">{}.</p>",
        esc(&super::entries::upper_first(
            &style.words(&super::entries::ci_words(m.stats()))
        ))
    );
    let corner = format!("job / {}", view::cell_corner(r));
    let mut cols = vec![corner.as_str()];
    cols.extend(m.columns.iter().copied());
    table_head(o, &cols);
    for g in &m.groups {
        let _ = write!(o, "<tr class=\"group\"><th>{}</th>", esc(&g.phase));
        for s in &g.scales {
            let _ = write!(
                o,
                "<th class=\"num\">{}</th>",
                s.map_or_else(String::new, |s| esc(s.label))
            );
        }
        o.push_str("</tr>\n");
        for (c, entries) in &g.rows {
            let _ = write!(o, "<tr><td>{}</td>", esc(&view::cell_name(r, *c)));
            for (e, sc) in entries.iter().zip(&g.scales) {
                match (e, sc) {
                    (Some(s), Some(sc)) => {
                        let _ = write!(o, "<td class=\"num\">{}</td>", entry(s, sc, &style));
                    }
                    _ => o.push_str("<td class=\"num\">-</td>"),
                }
            }
            o.push_str("</tr>\n");
        }
    }
    table_end(o);
    if m.stats().any(|s| !s.disturbed.is_empty()) {
        let _ = writeln!(
            o,
            "<p class=\"meta\">{}</p>",
            esc(super::entries::DISTURBED_NOTE)
        );
    }
    let _ = writeln!(
        o,
        "<p class=\"meta\">{}.</p>",
        esc(&super::entries::upper_first(view::FIO_NOTE))
    );
}

fn metric_grid(r: &ReportData, w: &WorkloadReport, t: &TableSpec, detail: Detail, o: &mut String) {
    let (g, style) = super::grid::styled(r, w, t, detail);
    let _ = writeln!(o, "<h3>{}</h3>", esc(&t.heading));
    let _ = writeln!(
        o,
        "<p class=\"meta\">{}.</p>",
        esc(&super::entries::upper_first(
            &style.words(&interval_words(w, t))
        ))
    );
    // Rows of configurations of several factors: a column per factor.
    let factors = super::grid::factor_columns(r, &g.cells);
    let mut cols: Vec<&str> = match &factors {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => vec![g.corner.as_str()],
    };
    cols.extend(g.columns.iter().map(String::as_str));
    table_head(o, &cols);
    for (i, (label, entries)) in g.rows.iter().enumerate() {
        o.push_str("<tr>");
        match &factors {
            Some(_) => {
                for l in super::grid::row_levels(r, &g, i) {
                    let _ = write!(o, "<th>{}</th>", esc(&l));
                }
            }
            None => {
                let _ = write!(o, "<th>{}</th>", esc(label));
            }
        }
        for e in entries {
            match e {
                Some((s, sc)) => {
                    let _ = write!(o, "<td class=\"num\">{}</td>", entry(s, sc, &style));
                }
                None => o.push_str("<td class=\"num\">-</td>"),
            }
        }
        o.push_str("</tr>\n");
    }
    table_end(o);
    if super::entries::any_disturbed(w, t) {
        let _ = writeln!(
            o,
            "<p class=\"meta\">{}</p>",
            esc(super::entries::DISTURBED_NOTE)
        );
    }
}

/// Table `t` of a sweep as one matrix per phase (the heatmaps below draw them); `false`
/// when the report is not a sweep.
fn sweep_matrices(r: &ReportData, w: &WorkloadReport, t: &TableSpec, o: &mut String) -> bool {
    use super::sweep;
    let ms = sweep::matrices(r, w, t);
    if ms.is_empty() {
        return false;
    }
    let _ = writeln!(o, "<h3>{}</h3>", esc(&t.heading));
    let _ = writeln!(
        o,
        "<p class=\"meta\">{}.</p>",
        esc(&super::entries::upper_first(&sweep::words(r, &ms)))
    );
    for m in &ms {
        let _ = writeln!(o, "<h4>{}</h4>", esc(&sweep::title(w, m)));
        let (header, rows) = sweep::text(r, m);
        let cols: Vec<&str> = header.iter().map(String::as_str).collect();
        table_head(o, &cols);
        for row in rows {
            let _ = write!(o, "<tr><th>{}</th>", esc(&row[0]));
            for e in &row[1..] {
                let _ = write!(o, "<td class=\"num\">{}</td>", esc(e));
            }
            o.push_str("</tr>\n");
        }
        table_end(o);
    }
    if sweep::any_disturbed(&ms) {
        let _ = writeln!(
            o,
            "<p class=\"meta\">{}</p>",
            esc(super::entries::DISTURBED_NOTE)
        );
    }
    true
}

fn latency_table(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    o.push_str("<h3>Latency percentiles per operation</h3>\n");
    let pcts = w.latency_percentiles();
    let labels: Vec<String> = pcts.iter().map(|p| percentile_label(*p)).collect();
    let corner = view::cell_corner(r);
    let mut cols = vec!["operation", corner.as_str(), "count"];
    cols.extend(labels.iter().map(String::as_str));
    table_head(o, &cols);
    for l in &w.latency {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td>",
            esc(&super::grid::latency_label(w, &l.op)),
            esc(&view::cell_name(r, l.cell)),
            l.count.map(|c| c.to_string()).unwrap_or_else(|| "-".into())
        );
        let sc = super::grid::latency_scale(w, &l.op);
        for p in &pcts {
            let v = l.points.iter().find(|x| x.0 == *p).map(|x| x.1);
            let _ = write!(o, "<td class=\"num\">{}</td>", fmt_opt(v, &sc));
        }
        o.push_str("</tr>\n");
    }
    table_end(o);
}

fn telemetry_table(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let Some(t) = super::telemetry::table(w, &r.cells) else {
        return;
    };
    o.push_str("<h3>Telemetry</h3>\n<p>Means per repetition: bytes each device wrote and read, write amplification (device bytes per byte the workload wrote), utilisation, the CPU split and journal commits (doc/telemetry.md).</p>\n");
    let corner = view::cell_corner(r);
    let mut cols = vec![corner.as_str(), "phase"];
    cols.extend(t.header.iter().map(String::as_str));
    table_head(o, &cols);
    for tr in &t.rows {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td>",
            esc(&view::cell_name(r, tr.index)),
            esc(&tr.phase)
        );
        for v in &tr.values {
            let _ = write!(o, "<td class=\"num\">{}</td>", esc(v));
        }
        o.push_str("</tr>\n");
    }
    table_end(o);
}

/// The section of workload `w` (the `wi`-th).
pub(crate) fn workload(
    r: &ReportData,
    wi: usize,
    w: &WorkloadReport,
    v: &WorkloadView<'_>,
    detail: Detail,
    o: &mut String,
) -> anyhow::Result<()> {
    let _ = writeln!(
        o,
        "<section id=\"workload-{wi}\"><h2>{} <small>({})</small></h2>",
        esc(&w.label),
        esc(&w.engine_words())
    );
    params(o, &w.params);
    if r.cells_with_data(w).is_empty() {
        o.push_str(
            "<p>No completed repetitions of this workload (see Repetitions).</p></section>\n",
        );
        return Ok(());
    }
    if let Some(m) = &v.metric_table {
        metric_table(r, m, o);
    }
    for t in &v.tables {
        // A sweep as matrices; its configuration rows too with --all.
        if !sweep_matrices(r, w, t, o) || detail == Detail::All {
            metric_grid(r, w, t, detail, o);
        }
    }
    if let Some(l) = v.also_line(w) {
        let _ = writeln!(o, "<p class=\"meta\">{}</p>", esc(&l));
    }
    let charts = charts::workload_charts_for(r, w, detail == Detail::Compact)?;
    if !charts.is_empty() {
        o.push_str("<h3>Charts</h3><div class=\"charts\">\n");
        for c in &charts {
            chart_figure(o, c);
        }
        o.push_str("</div>\n");
    }
    if v.latency && !w.latency.is_empty() {
        latency_table(r, w, o);
    }
    if v.telemetry {
        telemetry_table(r, w, o);
    }
    o.push_str("</section>\n");
    Ok(())
}
