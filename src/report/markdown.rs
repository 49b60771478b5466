//! The Markdown report, in the terminal report's order — the answer first: Observations,
//! the verdicts, then per workload its parameters (as tables, a fio job as one row per
//! section) and its compact table (every table with `--all`), each entry the mean with the
//! standard deviation under it, then the 95% interval (GitHub-flavoured tables, `<br>`
//! inside cells); warnings grouped (all of them, uncapped) unless `--warnings all`,
//! repetitions, environment and configurations.

use super::entries::{comparison_name, source_lines, upper_first};
pub use super::markdown_kit::MarkdownExporter;
pub(crate) use super::markdown_kit::{esc, header, row};
use super::model::*;
use super::sections::{Cell, Row, Section, Table, Writer};
use super::verdict::fmt_p_cell;
use super::view::{self, Detail, WorkloadView};
use super::Exporter;
use std::fmt::Write as _;

/// A workload's parameters: `parameter | value`, and each set of sections (a fio job) as a
/// table of its own.
fn params(o: &mut String, p: &serde_json::Value) {
    let p = super::params::layout(p);
    if !p.values.is_empty() {
        let _ = writeln!(o);
        header(o, &["parameter".into(), "value".into()], 0..0);
        for (k, v) in &p.values {
            row(o, &[esc(k), format!("`{}`", v.replace('`', "'"))]);
        }
    }
    for s in &p.sections {
        let _ = writeln!(o, "\n`{}`:\n", esc(&s.key));
        let mut h = vec!["section".to_string()];
        h.extend(s.columns.iter().map(|c| esc(c)));
        header(o, &h, 0..0);
        for (name, values) in &s.rows {
            let mut cols = vec![format!("`[{}]`", esc(name))];
            cols.extend(values.iter().map(|v| esc(v)));
            row(o, &cols);
        }
    }
}

/// Markdown's way of writing a workload's tables: `###` headings, GitHub-flavoured tables
/// with `<br>` inside cells.
struct Md<'a>(&'a mut String);

impl Writer for Md<'_> {
    fn caption(&mut self, heading: &str, words: Option<&str>) {
        let _ = writeln!(self.0, "\n### {heading}");
        if let Some(w) = words {
            let _ = writeln!(self.0, "\n{}.", esc(&upper_first(w)));
        }
    }

    fn telemetry_caption(&mut self) {
        self.caption(
            "Telemetry",
            Some("Means per repetition: devices, CPU, journal ([doc/telemetry.md](doc/telemetry.md))"),
        );
    }

    fn subtitle(&mut self, title: &str) {
        let _ = writeln!(self.0, "\n#### {}", esc(title));
    }

    fn table(&mut self, t: &Table<'_>) {
        let o = &mut *self.0;
        let _ = writeln!(o);
        let h: Vec<String> = t.header.iter().map(|h| esc(h)).collect();
        header(o, &h, t.keys..h.len());
        for r in &t.rows {
            let cols: Vec<String> = match r {
                Row::Group(phase, labels) => std::iter::once(format!("**{}**", esc(phase)))
                    .chain(
                        labels
                            .iter()
                            .map(|l| l.map_or_else(String::new, |l| format!("*{l}*"))),
                    )
                    .collect(),
                Row::Values(cells) => cells
                    .iter()
                    .map(|c| match c {
                        Cell::Text(x) => esc(x),
                        Cell::Entry(s, sc) => t.style.text(s, sc, "<br>"),
                    })
                    .collect(),
            };
            row(o, &cols);
        }
    }

    fn note(&mut self, text: &str) {
        // A leading `*` would start a list.
        let _ = writeln!(self.0, "\n\\{}", esc(text));
    }

    fn sentence(&mut self, text: &str) {
        let _ = writeln!(self.0, "\n{}.", upper_first(text));
    }
}

fn workload(s: &Section<'_>, o: &mut String) -> anyhow::Result<()> {
    let (r, w) = (s.r, s.w);
    let _ = writeln!(o, "\n## {} ({})", esc(&w.label), esc(&w.engine_words()));
    params(o, &w.params);
    if r.cells_with_data(w).is_empty() {
        let _ = writeln!(
            o,
            "\nNo completed repetitions of this workload (see Repetitions)."
        );
        return Ok(());
    }
    super::sections::tables(&mut Md(o), s)?;
    if let Some(l) = s.v.also_line(w) {
        let _ = writeln!(o, "\n{}", esc(&l));
    }
    Ok(())
}

fn verdicts(r: &ReportData, views: &[WorkloadView<'_>], detail: Detail, o: &mut String) {
    if r.workloads.iter().all(|w| w.comparisons.is_empty()) {
        return;
    }
    let _ = writeln!(o, "\n## Verdicts\n");
    let _ = writeln!(
        o,
        "Percent change against the baseline with its 95% interval; p from Welch's t-test on the same scale (log values for times, rates, sizes and counts), q adjusted by Benjamini–Hochberg."
    );
    for (w, v) in r.workloads.iter().zip(views) {
        if w.comparisons.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n### {} ({})\n", esc(&w.label), esc(&w.engine_words()));
        let mut h: Vec<String> = ["comparison", "metric", "verdict", "q (BH)"]
            .map(String::from)
            .to_vec();
        if detail == Detail::All {
            h.extend(["Welch p".into(), "Mann–Whitney p".into()]);
        }
        let n = h.len();
        header(o, &h, 3..n);
        for c in &v.comparisons {
            let mut cols = vec![
                esc(&comparison_name(c)),
                format!("{}.{}", esc(&c.phase), esc(&c.name)),
                match c.note() {
                    Some(e) => format!("{}; {}", esc(&c.verdict), esc(e)),
                    None => esc(&c.verdict),
                },
                fmt_p_cell(c.q),
            ];
            if detail == Detail::All {
                cols.push(fmt_p_cell(c.welch.map(|x| x.p)));
                cols.push(fmt_p_cell(c.mann_whitney.map(|x| x.p)));
            }
            row(o, &cols);
        }
        if let Some(l) = v.left_out_line() {
            let _ = writeln!(o, "\n{}", esc(&l));
        }
    }
}

/// What differs between the two sides of `compare`: the parameters and configurations before
/// the answer, the environment (`after`) after the verdicts.
fn differences(r: &ReportData, after: bool, o: &mut String) {
    let Some(h) = super::differences::heading(r, after) else {
        return;
    };
    let _ = writeln!(o, "\n## {}\n", esc(&h));
    if r.differences.is_empty() {
        let _ = writeln!(o, "{}.", super::differences::NOTHING);
        return;
    }
    let part = super::differences::part(r, after);
    if !part.is_empty() {
        let (a, b) = (&r.sources[0].spec, &r.sources[1].spec);
        let _ = writeln!(o, "| | | {} | {} |\n|---|---|---|---|", esc(a), esc(b));
    }
    for d in part {
        row(o, &super::differences::cells(d).map(|c| esc(&c)));
    }
    if let Some(l) = super::differences::later_line(r).filter(|_| !after) {
        let _ = writeln!(o, "\n{}.", upper_first(&l));
    }
}

impl Exporter for MarkdownExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = String::new();
        let _ = writeln!(o, "# {}\n", esc(&r.title));
        for l in source_lines(r) {
            let _ = writeln!(o, "- {}", esc(&l));
        }
        if let Some(l) = super::differences::timing_line(r) {
            let _ = writeln!(o, "- {}", esc(&l));
        }
        differences(r, false, &mut o);
        // The answer first: the Observations and verdicts, then the environment's
        // differences, then the tables it comes from.
        let _ = writeln!(o, "\n## Observations\n");
        if r.observations.is_empty() {
            let _ = writeln!(o, "{}.", upper_first(r.no_observations()));
        }
        let (shown, more) = view::observations(r, self.detail);
        for ob in shown {
            let _ = writeln!(o, "- **{}**: {}", esc(&ob.workload), ob.text);
        }
        if more > 0 {
            let _ = writeln!(o, "\n…and {more} more observations (all of them: `--all`).");
        }
        let views = view::workloads(r, self.detail);
        verdicts(r, &views, self.detail, &mut o);
        differences(r, true, &mut o);
        for (w, v) in r.workloads.iter().zip(&views) {
            let detail = self.detail;
            workload(&Section { r, w, v, detail }, &mut o)?;
        }
        super::markdown_tail::tail(r, self, &mut o);
        Ok(o.into_bytes())
    }
}
