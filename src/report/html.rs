//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network), the
//! answer first — Observations, then the verdicts with a forest plot of the comparisons —
//! then per workload its parameters (tables), its compact table (every table with `--all`)
//! and its charts ([`super::html_parts`]), then warnings, repetitions and the environment
//! with each configuration's exact commands and superblock ([`super::html_tail`]). Wide
//! tables and charts scroll sideways inside their own box, so the page never does.

use super::charts;
use super::entries::comparison_name;
use super::html_kit::{chart_figure, code_spans, esc, table_end, table_head};
use super::model::*;
use super::verdict::fmt_p_cell;
use super::view::{self, Detail, WorkloadView};
use super::Exporter;
use std::fmt::Write as _;

/// Renders [`ReportData`] as one HTML page with embedded SVG charts.
pub struct HtmlExporter {
    /// The compact report or every table (`--all`).
    pub detail: Detail,
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1360px;padding:0 1.5rem 3rem;color:#1a1a1a;line-height:1.45}
h1{margin-top:1.5rem}h2{border-bottom:2px solid #0072b2;padding-bottom:.2rem;margin-top:2.5rem}
h3{margin-top:1.8rem}
nav{background:#f4f6f8;padding:.6rem 1rem;border-radius:6px}nav a{margin-right:1rem;display:inline-block}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d0d4d8;padding:.3rem .55rem;vertical-align:top}
th{background:#eef1f4;text-align:left}
td.num{text-align:right;white-space:nowrap}
tr.group th{background:#f7f8fa}tr.group th.num{text-align:right}
th{white-space:nowrap}
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

fn header(r: &ReportData, o: &mut String) {
    let _ = writeln!(o, "<h1>{}</h1>", esc(&r.title));
    for s in &r.sources {
        let _ = writeln!(
            o,
            "<p class=\"meta\">{} {} <b>{}</b> [{}] · created {} · finished {} · fslab {}<br>command: <code>{}</code>{}{}</p>",
            esc(s.kind.as_str()),
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
    if let Some(l) = super::differences::timing_line(r) {
        let _ = writeln!(o, "<p class=\"meta\">{}</p>", esc(&l));
    }
    o.push_str("<nav><a href=\"#observations\">Observations</a>");
    if r.workloads.iter().any(|w| !w.comparisons.is_empty()) {
        o.push_str("<a href=\"#verdicts\">Verdicts</a>");
    }
    for (i, w) in r.workloads.iter().enumerate() {
        let _ = write!(o, "<a href=\"#workload-{i}\">{}</a>", esc(&w.label));
    }
    o.push_str("<a href=\"#warnings\">Warnings</a><a href=\"#repetitions\">Repetitions</a><a href=\"#environment\">Environment</a></nav>\n");
}

/// The differences between the two sides of a comparison: the parameters and configurations
/// before the answer, the environment (`after`) after the verdicts.
fn differences(r: &ReportData, after: bool, o: &mut String) {
    let Some(h) = super::differences::heading(r, after) else {
        return;
    };
    let id = if after {
        "environment-differences"
    } else {
        "differences"
    };
    let _ = writeln!(o, "<section id=\"{id}\"><h2>{}</h2>", esc(&h));
    let part = super::differences::part(r, after);
    if r.differences.is_empty() {
        let _ = writeln!(o, "<p>{}.</p>", esc(super::differences::NOTHING));
    } else if !part.is_empty() {
        let _ = writeln!(
            o,
            "<div class=\"scroll\"><table><tr><th></th><th></th><th>{}</th><th>{}</th></tr>",
            esc(&r.sources[0].spec),
            esc(&r.sources[1].spec)
        );
        for d in part {
            let cells = super::differences::cells(d).map(|c| format!("<td>{}</td>", esc(&c)));
            let _ = writeln!(o, "<tr>{}</tr>", cells.concat());
        }
        o.push_str("</table></div>\n");
    }
    if let Some(l) = super::differences::later_line(r).filter(|_| !after) {
        let _ = writeln!(o, "<p>{}.</p>", esc(&super::entries::upper_first(&l)));
    }
    o.push_str("</section>\n");
}

fn observations(r: &ReportData, detail: Detail, o: &mut String) {
    o.push_str("<section id=\"observations\"><h2>Observations</h2>\n");
    if r.observations.is_empty() {
        let _ = writeln!(
            o,
            "<p>{}.</p>",
            esc(&super::entries::upper_first(r.no_observations()))
        );
    } else {
        let (shown, more) = view::observations(r, detail);
        o.push_str("<ul>\n");
        for ob in shown {
            let _ = writeln!(
                o,
                "<li><b>{}</b>: {}</li>",
                esc(&ob.workload),
                esc(&ob.text)
            );
        }
        o.push_str("</ul>\n");
        if more > 0 {
            let _ = writeln!(
                o,
                "<p class=\"meta\">…and {more} more observations (all of them: <code>--all</code>).</p>"
            );
        }
    }
    o.push_str("</section>\n");
}

/// Per workload: the forest plot of its comparisons, then their verdicts.
fn verdicts(
    r: &ReportData,
    views: &[WorkloadView<'_>],
    detail: Detail,
    o: &mut String,
) -> anyhow::Result<()> {
    if r.workloads.iter().all(|w| w.comparisons.is_empty()) {
        return Ok(());
    }
    o.push_str("<section id=\"verdicts\"><h2>Verdicts</h2>\n<p class=\"meta\">Percent change against the baseline with its 95% interval; p from Welch's t-test on the same scale (log values for times, rates, sizes and counts), q adjusted by Benjamini–Hochberg.</p>\n");
    for (w, v) in r.workloads.iter().zip(views) {
        if w.comparisons.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "<h3>{} <small>({})</small></h3>",
            esc(&w.label),
            esc(&w.engine_words())
        );
        let (rows, more) = view::forest_rows(w, detail);
        let rows: Vec<(String, &Comparison)> = rows
            .into_iter()
            .map(|c| {
                let label = format!(
                    "{} · {}",
                    comparison_name(c),
                    super::table::verdict_metric(w, c)
                );
                (label, c)
            })
            .collect();
        if let Some(chart) = charts::forest::chart(&rows, more)? {
            o.push_str("<div class=\"charts\">");
            chart_figure(o, &chart);
            o.push_str("</div>\n");
        }
        let mut cols = vec!["comparison", "metric", "verdict", "q (BH)"];
        if detail == Detail::All {
            cols.extend(["Welch p", "Mann–Whitney p"]);
        }
        if !v.comparisons.is_empty() {
            table_head(o, &cols);
        }
        for c in &v.comparisons {
            let class = match c.better {
                Some(true) => " class=\"better\"",
                Some(false) => " class=\"worse\"",
                None => "",
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td{class}>{}</td><td class=\"num\">{}</td>",
                esc(&comparison_name(c)),
                esc(&super::table::verdict_metric(w, c)),
                match c.note() {
                    Some(e) => format!("{}<br><small>{}</small>", esc(&c.verdict), esc(e)),
                    None => esc(&c.verdict),
                },
                fmt_p_cell(c.q)
            );
            if detail == Detail::All {
                let _ = write!(
                    o,
                    "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                    fmt_p_cell(c.welch.map(|x| x.p)),
                    fmt_p_cell(c.mann_whitney.map(|x| x.p))
                );
            }
            o.push_str("</tr>\n");
        }
        if !v.comparisons.is_empty() {
            table_end(o);
        }
        if let Some(l) = v.left_out_line() {
            let _ = writeln!(o, "<p class=\"meta\">{}</p>", code_spans(&esc(&l)));
        }
    }
    o.push_str("</section>\n");
    Ok(())
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
        differences(r, false, &mut o);
        let views = view::workloads(r, self.detail);
        observations(r, self.detail, &mut o);
        verdicts(r, &views, self.detail, &mut o)?;
        differences(r, true, &mut o);
        for (i, (w, v)) in r.workloads.iter().zip(&views).enumerate() {
            let detail = self.detail;
            super::html_parts::workload(&super::sections::Section { r, w, v, detail }, i, &mut o)?;
        }
        super::html_tail::tail(r, self.detail, &mut o);
        let _ = writeln!(
            o,
            "<footer class=\"meta\"><p>{} · {}.</p></footer></body></html>",
            r.schema,
            esc(charts::whisker_words(r.options.error_bars))
        );
        Ok(o.into_bytes())
    }
}
