//! The Markdown report, in the terminal report's order — the answer first: Observations,
//! the verdicts, then per workload its parameters (as tables, a fio job as one row per
//! section) and its compact table (every table with `--all`), each entry the mean with the
//! standard deviation under it, then the 95% interval (GitHub-flavoured tables, `<br>`
//! inside cells); warnings grouped (all of them, uncapped) unless `--warnings all`,
//! repetitions, environment and configurations.

use super::entries::{
    comparison_name, interval_words, percentile_label, source_lines, upper_first, EntryStyle,
};
pub use super::markdown_kit::MarkdownExporter;
pub(crate) use super::markdown_kit::{esc, header, row};
use super::model::*;
use super::verdict::{fmt_opt, fmt_p_cell};
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

fn metric_table(r: &ReportData, m: &view::MetricTable<'_>, o: &mut String) {
    let style = EntryStyle::of(m.stats(), m.entry_rows(), true);
    let _ = writeln!(o, "\n### Jobs\n");
    let _ = writeln!(
        o,
        "{}.\n",
        upper_first(&style.words(&super::entries::ci_words(m.stats())))
    );
    let mut h = vec![format!("job / {}", view::cell_corner(r))];
    h.extend(m.columns.iter().map(|c| c.to_string()));
    header(o, &h, 1..h.len());
    for g in &m.groups {
        let mut cols = vec![format!("**{}**", esc(&g.phase))];
        cols.extend(g.scales.iter().map(|s| match s {
            Some(s) => format!("*{}*", s.label),
            None => String::new(),
        }));
        row(o, &cols);
        for (c, entries) in &g.rows {
            let mut cols = vec![esc(&view::cell_name(r, *c))];
            for (e, sc) in entries.iter().zip(&g.scales) {
                cols.push(match (e, sc) {
                    (Some(s), Some(sc)) => style.text(s, sc, "<br>"),
                    _ => "-".into(),
                });
            }
            row(o, &cols);
        }
    }
    if m.stats().any(|s| !s.disturbed.is_empty()) {
        let _ = writeln!(o, "\n\\{}", esc(super::entries::DISTURBED_NOTE));
    }
    let _ = writeln!(o, "\n{}.", upper_first(view::FIO_NOTE));
}

fn metric_grid(r: &ReportData, w: &WorkloadReport, t: &TableSpec, detail: Detail, o: &mut String) {
    let (g, style) = super::grid::styled(r, w, t, detail);
    let _ = writeln!(o, "\n### {}\n", t.heading);
    let _ = writeln!(o, "{}.\n", upper_first(&style.words(&interval_words(w, t))));
    // Rows of configurations of several factors: a column per factor.
    let factors = super::grid::factor_columns(r, &g.cells);
    let keys = factors.as_ref().map_or(1, Vec::len);
    let mut h: Vec<String> = match &factors {
        Some(names) => names.iter().map(|n| esc(n)).collect(),
        None => vec![esc(&g.corner)],
    };
    h.extend(g.columns.iter().map(|p| esc(p)));
    header(o, &h, keys..h.len());
    for (i, (label, entries)) in g.rows.iter().enumerate() {
        let mut cols: Vec<String> = match &factors {
            Some(_) => super::grid::row_levels(r, &g, i)
                .iter()
                .map(|l| esc(l))
                .collect(),
            None => vec![esc(label)],
        };
        for e in entries {
            cols.push(match e {
                Some((s, sc)) => style.text(s, sc, "<br>"),
                None => "-".into(),
            });
        }
        row(o, &cols);
    }
    if super::entries::any_disturbed(w, t) {
        // A leading `*` would start a list.
        let _ = writeln!(o, "\n\\{}", esc(super::entries::DISTURBED_NOTE));
    }
}

/// Table `t` of a sweep as one matrix per phase; `false` when the report is not a sweep.
fn sweep_matrices(r: &ReportData, w: &WorkloadReport, t: &TableSpec, o: &mut String) -> bool {
    use super::sweep;
    let ms = sweep::matrices(r, w, t);
    if ms.is_empty() {
        return false;
    }
    let _ = writeln!(o, "\n### {}\n", t.heading);
    let _ = writeln!(o, "{}.", esc(&upper_first(&sweep::words(r, &ms))));
    for m in &ms {
        let _ = writeln!(o, "\n#### {}\n", esc(&sweep::title(w, m)));
        let (head, rows) = sweep::text(r, m);
        let head: Vec<String> = head.iter().map(|h| esc(h)).collect();
        header(o, &head, 1..head.len());
        for cells in rows {
            row(o, &cells.iter().map(|c| esc(c)).collect::<Vec<_>>());
        }
    }
    if sweep::any_disturbed(&ms) {
        // A leading `*` would start a list.
        let _ = writeln!(o, "\n\\{}", esc(super::entries::DISTURBED_NOTE));
    }
    true
}

fn latency_table(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let _ = writeln!(o, "\n### Latency percentiles per operation\n");
    let pcts = w.latency_percentiles();
    let mut h = vec![
        "operation".to_string(),
        view::cell_corner(r),
        "count".into(),
    ];
    h.extend(pcts.iter().map(|p| percentile_label(*p)));
    header(o, &h, 2..h.len());
    for l in &w.latency {
        let mut cols = vec![
            esc(&super::grid::latency_label(w, &l.op)),
            esc(&view::cell_name(r, l.cell)),
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

fn telemetry_table(r: &ReportData, w: &WorkloadReport, o: &mut String) {
    let Some(t) = super::telemetry::table(w, &r.cells) else {
        return;
    };
    let _ = writeln!(
        o,
        "\n### Telemetry\n\nMeans per repetition: devices, CPU, journal ([doc/telemetry.md](doc/telemetry.md)).\n"
    );
    let mut h = vec![view::cell_corner(r), "phase".to_string()];
    h.extend(t.header.iter().cloned());
    let n = h.len();
    header(o, &h, 2..n);
    for tr in &t.rows {
        let mut cols = vec![esc(&view::cell_name(r, tr.index)), esc(&tr.phase)];
        cols.extend(tr.values.iter().map(|v| esc(v)));
        row(o, &cols);
    }
}

fn workload(
    r: &ReportData,
    w: &WorkloadReport,
    v: &WorkloadView<'_>,
    detail: Detail,
    o: &mut String,
) {
    let _ = writeln!(o, "\n## {} ({})", esc(&w.label), esc(&w.engine_words()));
    params(o, &w.params);
    if r.cells_with_data(w).is_empty() {
        let _ = writeln!(
            o,
            "\nNo completed repetitions of this workload (see Repetitions)."
        );
        return;
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
    if v.latency && !w.latency.is_empty() {
        latency_table(r, w, o);
    }
    if v.telemetry {
        telemetry_table(r, w, o);
    }
    if let Some(l) = v.also_line(w) {
        let _ = writeln!(o, "\n{}", esc(&l));
    }
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
    let side = |v: &Option<String>| v.as_deref().map(esc).unwrap_or_else(|| "(none)".into());
    for d in part {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            d.section.as_str(),
            esc(&d.key),
            side(&d.a),
            side(&d.b)
        );
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
        let views: Vec<WorkloadView<'_>> = r
            .workloads
            .iter()
            .map(|w| view::workload(r, w, self.detail))
            .collect();
        verdicts(r, &views, self.detail, &mut o);
        differences(r, true, &mut o);
        for (w, v) in r.workloads.iter().zip(&views) {
            workload(r, w, v, self.detail, &mut o);
        }
        super::markdown_tail::tail(r, self, &mut o);
        Ok(o.into_bytes())
    }
}
