//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network) with
//! the tables, the charts of every workload, comparisons, observations, warnings,
//! repetitions and the environment with each configuration's exact commands and superblock.

use super::charts::{self, Chart};
use super::entries::{
    comparison_name, interval_words, percentile_label, series_rows, SERIES_HEADER,
};
use super::model::*;
use super::verdict::{fmt_interval, fmt_opt, fmt_p_cell};
use super::Exporter;
use crate::units::Scale;
use std::fmt::Write as _;

/// Renders [`ReportData`] as one HTML page with embedded SVG charts.
pub struct HtmlExporter {
    /// The compact report or every table (`--all`).
    pub detail: super::view::Detail,
}

/// Escape text for HTML.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// `` `text` `` as `<code>text</code>` (in already escaped text).
fn code_spans(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split('`').enumerate() {
        if i > 0 {
            out.push_str(if i % 2 == 1 { "<code>" } else { "</code>" });
        }
        out.push_str(part);
    }
    if s.matches('`').count() % 2 == 1 {
        out.push_str("</code>");
    }
    out
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1360px;padding:0 1.5rem 3rem;color:#1a1a1a;line-height:1.45}
h1{margin-top:1.5rem}h2{border-bottom:2px solid #0072b2;padding-bottom:.2rem;margin-top:2.5rem}
h3{margin-top:1.8rem}
nav{background:#f4f6f8;padding:.6rem 1rem;border-radius:6px}nav a{margin-right:1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d0d4d8;padding:.3rem .55rem;vertical-align:top}
th{background:#eef1f4;text-align:left}
td.num{text-align:right;white-space:nowrap}
.mean{font-weight:600}.sd{color:#444}.ci{color:#666;font-size:.8rem}
.charts{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;border:1px solid #e1e4e8;border-radius:6px;padding:.4rem;background:#fff;max-width:100%;box-sizing:border-box;overflow-x:auto}
figure svg{max-width:none;height:auto;display:block}
.scroll{max-width:100%;overflow-x:auto}
table.params td{font-family:ui-monospace,monospace}
figcaption{font-size:.82rem;color:#555;max-width:640px}
.better{color:#00734d}.worse{color:#b33c00}
ul.warnings li{margin:.25rem 0}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;font-size:.82rem}
.meta{color:#555}
";

/// Open a table inside a box that scrolls sideways when the table is wider than the page
/// (IOzone's 13 tests, many configurations); [`table_end`] closes both.
fn table_head(o: &mut String, cols: &[&str]) {
    o.push_str("<div class=\"scroll\"><table><thead><tr>");
    for c in cols {
        let _ = write!(o, "<th>{}</th>", esc(c));
    }
    o.push_str("</tr></thead><tbody>\n");
}

/// Close what [`table_head`] opened.
fn table_end(o: &mut String) {
    o.push_str("</tbody></table></div>\n");
}

/// A workload's parameters as a table: one row per parameter, values as written (strings
/// without quotes, lists joined).
fn params_table(o: &mut String, params: &serde_json::Value) {
    let Some(map) = params.as_object().filter(|m| !m.is_empty()) else {
        let _ = writeln!(
            o,
            "<p class=\"meta\">Parameters: <code>{}</code></p>",
            esc(&params.to_string())
        );
        return;
    };
    fn text(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
            other => other.to_string(),
        }
    }
    o.push_str("<div class=\"scroll\"><table class=\"params\"><thead><tr><th>parameter</th><th>value</th></tr></thead><tbody>\n");
    for (k, v) in map {
        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&text(v)));
    }
    table_end(o);
}

fn entry(s: &CellMetric, sc: &Scale) -> String {
    let sd = s
        .summary
        .sd
        .map(|v| format!("± {}", sc.num(v)))
        .unwrap_or_else(|| "± -".into());
    let ci = match s.summary.ci95 {
        Some(ci) => format!("95% CI {} · n={}", fmt_interval(Some(ci), sc), s.summary.n),
        None => format!("n={}", s.summary.n),
    };
    format!(
        "<div class=\"mean\">{}{}</div><div class=\"sd\">{sd}</div><div class=\"ci\">{ci}</div>",
        sc.num(s.summary.mean),
        super::entries::disturbed_mark(s)
    )
}

fn chart_figure(o: &mut String, c: &Chart) {
    let _ = writeln!(
        o,
        "<figure class=\"chart chart-{}\">{}<figcaption>{}</figcaption></figure>",
        c.kind,
        c.svg,
        esc(&c.caption)
    );
}

fn workload(r: &ReportData, wi: usize, w: &WorkloadReport, o: &mut String) -> anyhow::Result<()> {
    let _ = writeln!(
        o,
        "<section id=\"workload-{wi}\"><h2>{} <small>({})</small></h2>",
        esc(&w.label),
        esc(&w.kind)
    );
    params_table(o, &w.params);
    let cells = r.cells_with_data(w);
    if cells.is_empty() {
        o.push_str(
            "<p>No completed repetitions of this workload (see Repetitions).</p></section>\n",
        );
        return Ok(());
    }
    for t in &w.tables {
        let _ = writeln!(o, "<h3>{}</h3>", esc(&t.heading));
        let _ = writeln!(
            o,
            "<p class=\"meta\">Mean, ± standard deviation, then the {} and n.</p>",
            esc(&interval_words(w, t))
        );
        let g = super::grid::grid(r, w, t, &cells);
        let mut cols = vec![g.corner.as_str()];
        cols.extend(g.columns.iter().map(String::as_str));
        table_head(o, &cols);
        for (label, entries) in &g.rows {
            let _ = write!(o, "<tr><th>{}</th>", esc(label));
            for e in entries {
                match e {
                    Some((s, sc)) => {
                        let _ = write!(o, "<td class=\"num\">{}</td>", entry(s, sc));
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
    let charts = charts::workload_charts(r, w)?;
    if !charts.is_empty() {
        o.push_str("<h3>Charts</h3><div class=\"charts\">\n");
        for c in &charts {
            chart_figure(o, c);
        }
        o.push_str("</div>\n");
    }
    if !w.latency.is_empty() {
        o.push_str("<h3>Latency percentiles per operation</h3>\n");
        let pcts = w.latency_percentiles();
        let labels: Vec<String> = pcts.iter().map(|p| percentile_label(*p)).collect();
        let mut cols = vec!["operation", "configuration", "count"];
        cols.extend(labels.iter().map(String::as_str));
        table_head(o, &cols);
        for l in &w.latency {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td>",
                esc(&super::grid::latency_label(w, &l.op)),
                esc(&r.cells[l.cell].label),
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
    if let Some(t) = super::telemetry::table(w, &r.cells) {
        o.push_str("<h3>Telemetry</h3>\n<p>Means per repetition: bytes each device wrote and read, write amplification (device bytes per byte the workload wrote), utilisation, the CPU split and journal commits (doc/telemetry.md).</p>\n");
        let mut cols = vec!["configuration", "phase"];
        cols.extend(t.header.iter().map(String::as_str));
        table_head(o, &cols);
        for tr in &t.rows {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td>",
                esc(&tr.cell),
                esc(&tr.phase)
            );
            for v in &tr.values {
                let _ = write!(o, "<td class=\"num\">{}</td>", esc(v));
            }
            o.push_str("</tr>\n");
        }
        table_end(o);
    }
    if !w.comparisons.is_empty() {
        o.push_str("<h3>Comparisons against the baseline</h3>\n");
        table_head(
            o,
            &[
                "comparison",
                "metric",
                "verdict",
                "Welch p",
                "q (BH)",
                "Mann–Whitney p",
            ],
        );
        for c in &w.comparisons {
            let class = match c.better {
                Some(true) => " class=\"better\"",
                Some(false) => " class=\"worse\"",
                None => "",
            };
            let _ = writeln!(
                o,
                "<tr><td>{}</td><td>{}.{}</td><td{class}>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&comparison_name(c)),
                esc(&c.phase),
                esc(&c.name),
                match c.note() {
                    Some(e) => format!("{}<br><small>{}</small>", esc(&c.verdict), esc(e)),
                    None => esc(&c.verdict),
                },
                fmt_p_cell(c.welch.map(|x| x.p)),
                fmt_p_cell(c.q),
                fmt_p_cell(c.mann_whitney.map(|x| x.p))
            );
        }
        table_end(o);
    }
    o.push_str("</section>\n");
    Ok(())
}

fn header(r: &ReportData, o: &mut String) {
    let _ = writeln!(o, "<h1>{}</h1>", esc(&r.title));
    for s in &r.sources {
        let _ = writeln!(
            o,
            "<p class=\"meta\">{} {} <b>{}</b> [{}] · created {} · finished {} · fslab {}<br>command: <code>{}</code>{}{}</p>",
            esc(&s.kind),
            s.id,
            esc(&s.name),
            esc(s.status.as_str()),
            esc(&s.created_at),
            esc(s.finished_at.as_deref().unwrap_or("-")),
            esc(&s.tool_version),
            esc(&s.command_line),
            s.resumed_line()
                .map(|l| format!("<br>{}", esc(&l)))
                .unwrap_or_default(),
            if s.description.is_empty() {
                String::new()
            } else {
                format!("<br>{}", esc(&s.description))
            }
        );
    }
    o.push_str("<nav>");
    for (i, w) in r.workloads.iter().enumerate() {
        let _ = write!(o, "<a href=\"#workload-{i}\">{}</a>", esc(&w.label));
    }
    o.push_str("<a href=\"#observations\">Observations</a><a href=\"#warnings\">Warnings</a><a href=\"#repetitions\">Repetitions</a><a href=\"#environment\">Environment</a></nav>\n");
}

/// The differences between the two sides of a comparison, above the workloads.
fn differences(r: &ReportData, o: &mut String) {
    let Some(h) = super::differences::heading(r) else {
        return;
    };
    let _ = writeln!(o, "<section id=\"differences\"><h2>{}</h2>", esc(&h));
    if r.differences.is_empty() {
        let _ = writeln!(o, "<p>{}.</p>", esc(super::differences::NOTHING));
    } else {
        let _ = writeln!(
            o,
            "<div class=\"scroll\"><table><tr><th></th><th></th><th>{}</th><th>{}</th></tr>",
            esc(&r.sources[0].spec),
            esc(&r.sources[1].spec)
        );
        let side = |v: &Option<String>| v.as_deref().map(esc).unwrap_or_else(|| "(none)".into());
        for d in &r.differences {
            let _ = writeln!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                d.section.as_str(),
                esc(&d.key),
                side(&d.a),
                side(&d.b)
            );
        }
        o.push_str("</table></div>\n");
    }
    o.push_str("</section>\n");
}

fn tail(r: &ReportData, o: &mut String) {
    o.push_str("<section id=\"observations\"><h2>Observations</h2>\n");
    if r.observations.is_empty() {
        let _ = writeln!(
            o,
            "<p>{}.</p>",
            esc(&super::entries::upper_first(r.no_observations()))
        );
    } else {
        o.push_str("<ul>\n");
        for ob in &r.observations {
            let _ = writeln!(
                o,
                "<li><b>{}</b>: {}</li>",
                esc(&ob.workload),
                esc(&ob.text)
            );
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</section>\n<section id=\"warnings\"><h2>Warnings</h2>\n");
    if r.warnings.is_empty() {
        o.push_str("<p>None.</p>\n");
    } else {
        o.push_str("<ul class=\"warnings\">\n");
        for l in super::warngroups::lines(r, false) {
            let _ = writeln!(o, "<li>{}</li>", code_spans(&esc(&l)));
        }
        o.push_str("</ul>\n");
    }
    if let Some(c) = &r.guest_calibration {
        o.push_str("</section>\n<section id=\"guest-calibration\"><h2>Guest calibration</h2>\n");
        let lines = super::calibration::lines(c);
        let (intro, rows) = lines.split_at(2.min(lines.len()));
        let _ = writeln!(o, "<p>{}</p>\n<ul>", esc(&intro.join(" ")));
        for l in rows {
            let _ = writeln!(o, "<li>{}</li>", esc(l.trim()));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</section>\n<section id=\"repetitions\"><h2>Repetitions</h2>\n");
    table_head(o, &SERIES_HEADER);
    for row in series_rows(r) {
        o.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if (2..5).contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(o, "<td{class}>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    table_end(o);
    o.push_str("</section>\n<section id=\"environment\"><h2>Environment</h2>\n");
    for e in &r.environments {
        if r.environments.len() > 1 {
            let _ = writeln!(o, "<h3>{}</h3>", esc(&e.source));
        }
        table_head(o, &["key", "value"]);
        for (k, v) in &e.entries {
            let _ = writeln!(
                o,
                "<tr><th>{}</th><td>{}</td></tr>",
                esc(k),
                esc(&super::verdict::env_value(k, v))
            );
        }
        table_end(o);
    }
    for c in &r.cells {
        if c.commands.is_empty() && c.superblock.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<h3>Configuration {}</h3>", esc(&c.label));
        if !c.commands.is_empty() {
            let _ = writeln!(o, "<pre>{}</pre>", esc(&c.commands.join("\n")));
        }
        if !c.superblock.is_empty() {
            let _ = writeln!(
                o,
                "<details><summary>Superblock: {}</summary><pre>{}</pre></details>",
                esc(&super::superblock::summary(&c.superblock)),
                esc(c.superblock.trim_end())
            );
        }
    }
    o.push_str("</section>\n");
}

impl Exporter for HtmlExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<link rel=\"icon\" href=\"data:,\"><title>fslab report: {}</title><style>{STYLE}</style></head><body>",
            esc(&r.title)
        );
        header(r, &mut o);
        differences(r, &mut o);
        for (i, w) in r.workloads.iter().enumerate() {
            workload(r, i, w, &mut o)?;
        }
        tail(r, &mut o);
        let _ = writeln!(
            o,
            "<footer class=\"meta\"><p>{} · {}.</p></footer></body></html>",
            r.schema,
            esc(charts::whisker_words(r.options.error_bars))
        );
        Ok(o.into_bytes())
    }
}
