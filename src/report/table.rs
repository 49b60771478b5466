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

use super::entries::comparison_name;
use super::model::*;
use super::sections::{Cell, Row, Section, Table, Writer};
pub use super::table_kit::TableExporter;
pub(crate) use super::table_kit::Text;
use super::textfit::{Align, TextTable};
use super::verdict::fmt_p_cell;
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

/// The terminal report's way of writing a workload's tables: a heading line with what its
/// entries are, tables fitted to the width.
impl Writer for Text {
    fn caption(&mut self, heading: &str, words: Option<&str>) {
        self.line("");
        match words {
            Some(w) => self.para(&format!("{heading} — {w}"), "", "  "),
            None => self.para(heading, "", "  "),
        }
    }

    fn telemetry_caption(&mut self) {
        self.caption(
            "Telemetry",
            Some("means per repetition (devices, CPU, journal; doc/telemetry.md)"),
        );
    }

    fn subtitle(&mut self, title: &str) {
        self.line("");
        self.para(title, "", "  ");
    }

    fn table(&mut self, t: &Table<'_>) {
        let cols = t.header.iter().enumerate().map(|(i, h)| {
            let align = if i < t.keys {
                Align::Left
            } else {
                Align::Right
            };
            (h.clone(), align)
        });
        let mut tb = TextTable::new(cols.collect(), t.keys);
        // Under a group's row, its rows are indented.
        let grouped = t.rows.iter().any(|r| matches!(r, Row::Group(..)));
        for r in &t.rows {
            tb.row(match r {
                Row::Group(phase, labels) => std::iter::once(phase.clone())
                    .chain(labels.iter().map(|l| l.unwrap_or_default().to_string()))
                    .collect(),
                Row::Values(cells) => cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| match c {
                        Cell::Text(x) if i == 0 && grouped => format!("  {x}"),
                        Cell::Text(x) => x.clone(),
                        Cell::Entry(s, sc) => t.style.text(s, sc, "\n"),
                    })
                    .collect(),
            });
        }
        // Text's own `table`: the rows fitted to the width.
        Text::table(self, &tb);
    }

    fn note(&mut self, text: &str) {
        self.para(text, "", "  ");
    }

    fn sentence(&mut self, text: &str) {
        self.para(text, "", "  ");
    }
}

fn workload_section(s: &Section<'_>, o: &mut Text) -> anyhow::Result<()> {
    let (r, w) = (s.r, s.w);
    o.heading(&format!("{} ({})", w.label, w.engine_words()));
    if r.cells_with_data(w).is_empty() {
        o.line("no completed repetitions of this workload (see Repetitions)");
        return Ok(());
    }
    super::sections::tables(o, s)?;
    if let Some(l) = s.v.also_line(w) {
        o.line("");
        o.para(&l, "", "  ");
    }
    Ok(())
}

/// The report from the Observations on (no header): what `fslab show` prints under its own.
pub(crate) fn body(r: &ReportData, exp: &TableExporter, o: &mut Text) -> anyhow::Result<()> {
    let views = view::workloads(r, exp.detail);
    observations(r, exp.detail, o);
    verdicts(r, &views, exp.detail, o);
    differences(r, true, o);
    for (w, v) in r.workloads.iter().zip(&views) {
        let detail = exp.detail;
        workload_section(&Section { r, w, v, detail }, o)?;
    }
    super::table_tail::tail(r, exp, o);
    Ok(())
}

impl Exporter for TableExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = Text {
            out: String::new(),
            width: self.width.max(super::textfit::MIN_WIDTH),
        };
        header(r, &mut o);
        body(r, self, &mut o)?;
        Ok(o.out.into_bytes())
    }
}
