//! The Markdown report: the same sections and numbers as the terminal tables, each entry the
//! mean with the standard deviation under it, then the 95% interval and n (GitHub-flavoured
//! tables, `<br>` inside cells); warnings grouped (all of them, uncapped) unless
//! `--warnings all`.

use super::model::*;
use super::table::{
    ci_n, comparison_name, interval_words, percentile_label, series_rows, source_lines,
    SERIES_HEADER,
};
use super::verdict::{fmt_opt, fmt_p_cell};
use super::Exporter;
use std::fmt::Write as _;

/// Renders [`ReportData`] as Markdown.
pub struct MarkdownExporter {
    /// Print every configuration's superblock dump (`--env full`); else one line of it.
    pub superblocks: bool,
}

/// Escape text for a table cell.
fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn row(o: &mut String, cells: &[String]) {
    let _ = writeln!(o, "| {} |", cells.join(" | "));
}

/// A header row; columns in `right` are right-aligned (numbers).
fn header(o: &mut String, cells: &[String], right: std::ops::Range<usize>) {
    row(o, cells);
    let seps: Vec<String> = (0..cells.len())
        .map(|i| {
            if right.contains(&i) {
                "---:".into()
            } else {
                "---".into()
            }
        })
        .collect();
    row(o, &seps);
}

fn workload(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let _ = writeln!(o, "\n## {} ({})\n", esc(&w.label), w.kind);
    let _ = writeln!(o, "Parameters: `{}`", w.params);
    let cells = r.cells_with_data(w);
    if cells.is_empty() {
        let _ = writeln!(
            o,
            "\nNo completed repetitions of this workload (see Repetitions)."
        );
        return;
    }
    for t in &w.tables {
        let _ = writeln!(o, "\n### {}\n", t.heading);
        let _ = writeln!(
            o,
            "Mean, with the standard deviation under it, then the {} and n.\n",
            interval_words(w, t)
        );
        let g = super::grid::grid(r, w, t, &cells);
        let mut h = vec![g.corner.to_string()];
        h.extend(g.columns.iter().map(|p| esc(p)));
        header(o, &h, 1..h.len());
        for (label, entries) in &g.rows {
            let mut cols = vec![esc(label)];
            for e in entries {
                cols.push(match e {
                    Some((s, sc)) => format!(
                        "{}{}<br>{}<br>{}",
                        sc.num(s.summary.mean),
                        super::table::disturbed_mark(s),
                        s.summary
                            .sd
                            .map(|sd| format!("± {}", sc.num(sd)))
                            .unwrap_or_else(|| "± -".into()),
                        ci_n(s, sc)
                    ),
                    None => "-".into(),
                });
            }
            row(o, &cols);
        }
        if super::table::any_disturbed(w, t) {
            // A leading `*` would start a list.
            let _ = writeln!(o, "\n\\{}", esc(super::table::DISTURBED_NOTE));
        }
    }
    if !w.latency.is_empty() {
        let _ = writeln!(o, "\n### Latency percentiles per operation\n");
        let pcts = w.latency_percentiles();
        let mut h = vec![
            "operation".to_string(),
            "configuration".into(),
            "count".into(),
        ];
        h.extend(pcts.iter().map(|p| percentile_label(*p)));
        header(o, &h, 2..h.len());
        for l in &w.latency {
            let mut cols = vec![
                esc(&super::grid::latency_label(w, &l.op)),
                esc(&r.cells[l.cell].label),
                l.count.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            ];
            let sc = super::grid::latency_scale(w, &l.op);
            for p in &pcts {
                cols.push(fmt_opt(
                    l.points.iter().find(|x| x.0 == *p).map(|x| x.1),
                    &sc,
                ));
            }
            row(o, &cols);
        }
    }
    if let Some(t) = super::telemetry::table(w, &r.cells) {
        let _ = writeln!(
            o,
            "\n### Telemetry\n\nMeans per repetition: devices, CPU, journal ([doc/telemetry.md](doc/telemetry.md)).\n"
        );
        let mut h = vec!["configuration".to_string(), "phase".to_string()];
        h.extend(t.header.iter().cloned());
        let n = h.len();
        header(o, &h, 2..n);
        for tr in &t.rows {
            let mut cols = vec![esc(&tr.cell), esc(&tr.phase)];
            cols.extend(tr.values.iter().map(|v| esc(v)));
            row(o, &cols);
        }
    }
    if !w.comparisons.is_empty() {
        let _ = writeln!(o, "\n### Comparisons against the baseline\n");
        header(
            o,
            &[
                "comparison".into(),
                "metric".into(),
                "verdict".into(),
                "Welch p".into(),
                "q (BH)".into(),
                "Mann–Whitney p".into(),
            ],
            3..6,
        );
        for c in &w.comparisons {
            row(
                o,
                &[
                    esc(&comparison_name(c)),
                    format!("{}.{}", esc(&c.phase), esc(&c.name)),
                    match c.note() {
                        Some(e) => format!("{}; {}", esc(&c.verdict), esc(e)),
                        None => esc(&c.verdict),
                    },
                    fmt_p_cell(c.welch.map(|x| x.p)),
                    fmt_p_cell(c.q),
                    fmt_p_cell(c.mann_whitney.map(|x| x.p)),
                ],
            );
        }
    }
}

impl Exporter for MarkdownExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = String::new();
        let _ = writeln!(o, "# {}\n", esc(&r.title));
        for l in source_lines(r) {
            let _ = writeln!(o, "- {}", esc(&l));
        }
        if let Some(h) = super::differences::heading(r) {
            let _ = writeln!(o, "\n## {}\n", esc(&h));
            if r.differences.is_empty() {
                let _ = writeln!(o, "{}.", super::differences::NOTHING);
            } else {
                let (a, b) = (&r.sources[0].spec, &r.sources[1].spec);
                let _ = writeln!(o, "| | | {} | {} |\n|---|---|---|---|", esc(a), esc(b));
                for d in &r.differences {
                    let side = |v: &Option<String>| {
                        v.as_deref().map(esc).unwrap_or_else(|| "(none)".into())
                    };
                    let _ = writeln!(
                        o,
                        "| {} | {} | {} | {} |",
                        d.section.as_str(),
                        esc(&d.key),
                        side(&d.a),
                        side(&d.b)
                    );
                }
            }
        }
        // The answer first: what differs, then the tables it comes from.
        let _ = writeln!(o, "\n## Observations\n");
        if r.observations.is_empty() {
            let _ = writeln!(o, "{}.", upper_first(r.no_observations()));
        }
        for ob in &r.observations {
            let _ = writeln!(o, "- **{}**: {}", esc(&ob.workload), ob.text);
        }
        for w in &r.workloads {
            workload(r, w, &mut o);
        }
        let _ = writeln!(o, "\n## Warnings\n");
        if r.warnings.is_empty() {
            let _ = writeln!(o, "None.");
        }
        for l in super::warngroups::lines(r, false) {
            let _ = writeln!(o, "- {}", l);
        }
        if let Some(c) = &r.guest_calibration {
            let _ = writeln!(o, "\n## Guest calibration\n");
            let lines = super::calibration::lines(c);
            let (intro, rows) = lines.split_at(2.min(lines.len()));
            let _ = writeln!(o, "{}\n", esc(&intro.join(" ")));
            for l in rows {
                let _ = writeln!(o, "- {}", esc(l.trim()));
            }
        }
        let _ = writeln!(o, "\n## Repetitions\n");
        let h: Vec<String> = SERIES_HEADER.iter().map(|s| s.to_string()).collect();
        header(&mut o, &h, 2..5);
        for r in series_rows(r) {
            let cols: Vec<String> = r.iter().map(|c| esc(c)).collect();
            row(&mut o, &cols);
        }
        let _ = writeln!(o, "\n## Environment\n");
        for e in &r.environments {
            if r.environments.len() > 1 {
                let _ = writeln!(o, "\n### {}\n", esc(&e.source));
            }
            header(&mut o, &["key".into(), "value".into()], 0..0);
            for (k, v) in &e.entries {
                row(&mut o, &[esc(k), esc(&super::verdict::env_value(k, v))]);
            }
        }
        for c in &r.cells {
            if c.commands.is_empty() && c.superblock.is_empty() {
                continue;
            }
            let _ = writeln!(o, "\n### Configuration {}\n", esc(&c.label));
            if !c.commands.is_empty() {
                let _ = writeln!(o, "```sh");
                for cmd in &c.commands {
                    let _ = writeln!(o, "{cmd}");
                }
                let _ = writeln!(o, "```");
            }
            if !c.superblock.is_empty() && self.superblocks {
                let _ = writeln!(
                    o,
                    "\nSuperblock:\n\n```text\n{}\n```",
                    c.superblock.trim_end()
                );
            } else if !c.superblock.is_empty() {
                let _ = writeln!(
                    o,
                    "\nSuperblock: {} (whole: `--env full`)",
                    esc(&super::superblock::summary(&c.superblock))
                );
            }
        }
        Ok(o.into_bytes())
    }
}

/// `text` with its first letter in upper case (a sentence).
pub(crate) fn upper_first(text: &str) -> String {
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
