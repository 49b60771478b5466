//! One workload's section of the HTML report: its parameters as tables (a fio job as one
//! row per section), its compact table or every table (`--all`), what else it measured, its
//! charts, the latency percentiles and the telemetry.

use super::charts;
use super::entries::{upper_first, EntryStyle};
use super::html_kit::{chart_figure, esc, table_end, table_head};
use super::model::*;
use super::sections::{Cell, Row, Section, Table, Writer};
use super::view::Detail;
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

/// HTML's way of writing a workload's tables: `<h3>` headings, tables that scroll inside
/// their own box.
struct Html<'a>(&'a mut String);

impl Writer for Html<'_> {
    fn caption(&mut self, heading: &str, words: Option<&str>) {
        let _ = writeln!(self.0, "<h3>{}</h3>", esc(heading));
        if let Some(w) = words {
            let _ = writeln!(self.0, "<p class=\"meta\">{}.</p>", esc(&upper_first(w)));
        }
    }

    fn telemetry_caption(&mut self) {
        self.0.push_str("<h3>Telemetry</h3>\n<p>Means per repetition: bytes each device wrote and read, write amplification (device bytes per byte the workload wrote), utilisation, the CPU split and journal commits (doc/telemetry.md).</p>\n");
    }

    fn subtitle(&mut self, title: &str) {
        let _ = writeln!(self.0, "<h4>{}</h4>", esc(title));
    }

    fn table(&mut self, t: &Table<'_>) {
        let o = &mut *self.0;
        let cols: Vec<&str> = t.header.iter().map(String::as_str).collect();
        table_head(o, &cols);
        let key = if t.row_heads { "th" } else { "td" };
        for r in &t.rows {
            match r {
                Row::Group(phase, labels) => {
                    let _ = write!(o, "<tr class=\"group\"><th>{}</th>", esc(phase));
                    for l in labels {
                        let _ = write!(o, "<th class=\"num\">{}</th>", esc(l.unwrap_or_default()));
                    }
                }
                Row::Values(cells) => {
                    o.push_str("<tr>");
                    for (i, c) in cells.iter().enumerate() {
                        let text = match c {
                            Cell::Text(x) => esc(x),
                            Cell::Entry(s, sc) => entry(s, sc, &t.style),
                        };
                        if i < t.keys {
                            let _ = write!(o, "<{key}>{text}</{key}>");
                        } else {
                            let _ = write!(o, "<td class=\"num\">{text}</td>");
                        }
                    }
                }
            }
            o.push_str("</tr>\n");
        }
        table_end(o);
    }

    fn note(&mut self, text: &str) {
        let _ = writeln!(self.0, "<p class=\"meta\">{}</p>", esc(text));
    }

    fn sentence(&mut self, text: &str) {
        let _ = writeln!(self.0, "<p class=\"meta\">{}.</p>", esc(&upper_first(text)));
    }

    /// What else the workload measured, then its charts.
    fn after_tables(&mut self, s: &Section<'_>) -> anyhow::Result<()> {
        let (o, w) = (&mut *self.0, s.w);
        if let Some(l) = s.v.also_line(w) {
            let _ = writeln!(o, "<p class=\"meta\">{}</p>", esc(&l));
        }
        let charts = charts::workload_charts_for(s.r, w, s.detail == Detail::Compact)?;
        if !charts.is_empty() {
            o.push_str("<h3>Charts</h3><div class=\"charts\">\n");
            for c in &charts {
                chart_figure(o, c);
            }
            o.push_str("</div>\n");
        }
        Ok(())
    }
}

/// The section of a workload, the report's `wi`-th.
pub(crate) fn workload(s: &Section<'_>, wi: usize, o: &mut String) -> anyhow::Result<()> {
    let (r, w) = (s.r, s.w);
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
    super::sections::tables(&mut Html(o), s)?;
    o.push_str("</section>\n");
    Ok(())
}
