//! The tables of one workload's section, decided once for the three human formats: fio's
//! jobs, each table of the workload (a sweep as one matrix per phase), the latency
//! percentiles and the telemetry. Each format writes them through a [`Writer`] (the terminal
//! report's lines, Markdown, HTML), which decides only how a heading, a table or a note
//! looks.

use super::entries::{ci_words, interval_words, percentile_label, EntryStyle, DISTURBED_NOTE};
use super::model::*;
use super::verdict::fmt_opt;
use super::view::{self, Detail, WorkloadView};
use crate::units::Scale;

/// One cell of a [`Table`].
pub(crate) enum Cell<'a> {
    /// Text as it is.
    Text(String),
    /// A mean with its spread and interval, as the table's [`EntryStyle`] says.
    Entry(&'a CellMetric, Scale),
}

/// A row of a [`Table`].
pub(crate) enum Row<'a> {
    /// A group's heading row (fio's phase) with each column's unit, `None` where the column
    /// has no value in the group.
    Group(String, Vec<Option<&'static str>>),
    /// The key cells, then the values.
    Values(Vec<Cell<'a>>),
}

/// A table of a workload's section: its leading `keys` columns name the rows (left-aligned),
/// the others hold numbers (right-aligned).
pub(crate) struct Table<'a> {
    /// The column headings.
    pub header: Vec<String>,
    /// How many leading columns name the rows.
    pub keys: usize,
    /// Whether the key cells head their rows (HTML's `<th>`) rather than being data.
    pub row_heads: bool,
    /// How the entries read.
    pub style: EntryStyle,
    /// The rows.
    pub rows: Vec<Row<'a>>,
}

impl<'a> Table<'a> {
    fn new(header: Vec<String>, keys: usize, row_heads: bool, style: EntryStyle) -> Table<'a> {
        Table {
            header,
            keys,
            row_heads,
            style,
            rows: Vec::new(),
        }
    }

    fn values(&mut self, cells: Vec<Cell<'a>>) {
        self.rows.push(Row::Values(cells));
    }
}

/// One workload's section: the report, the workload, what the compact or whole report
/// (`detail`) shows of it.
pub(crate) struct Section<'a> {
    /// The report.
    pub r: &'a ReportData,
    /// The workload.
    pub w: &'a WorkloadReport,
    /// What the report shows of it.
    pub v: &'a WorkloadView<'a>,
    /// The compact report or every table (`--all`).
    pub detail: Detail,
}

/// How one format writes the pieces of a workload's section.
pub(crate) trait Writer {
    /// A table's heading and, when given, what its entries are.
    fn caption(&mut self, heading: &str, words: Option<&str>);
    /// The telemetry table's heading and what it holds (each format says it its own way).
    fn telemetry_caption(&mut self);
    /// The title of one of a sweep's matrices.
    fn subtitle(&mut self, title: &str);
    /// A table.
    fn table(&mut self, t: &Table<'_>);
    /// A note as it is, under a table (the disturbed mark's).
    fn note(&mut self, text: &str);
    /// A note that reads as a sentence (Markdown and HTML start it upper case and end it
    /// with a full stop; the terminal prints it as it is).
    fn sentence(&mut self, text: &str);
    /// What comes between the workload's tables and its latency percentiles (HTML: what
    /// else it measured, and the charts).
    fn after_tables(&mut self, _s: &Section<'_>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The tables of a workload that has data, as its view chose them.
pub(crate) fn tables(o: &mut impl Writer, s: &Section<'_>) -> anyhow::Result<()> {
    let Section { r, w, v, detail } = *s;
    if let Some(m) = &v.metric_table {
        metric_table(o, r, m);
    }
    for t in &v.tables {
        // A sweep as matrices; its configuration rows too with --all.
        if !sweep_matrices(o, r, w, t) || detail == Detail::All {
            metric_grid(o, r, w, t, detail);
        }
    }
    o.after_tables(s)?;
    if v.latency && !w.latency.is_empty() {
        latency_table(o, r, w);
    }
    if v.telemetry {
        telemetry_table(o, r, w);
    }
    Ok(())
}

/// fio's jobs: a group of rows per phase with its units, then its configurations; IOPS,
/// bandwidth and latency percentiles side by side.
fn metric_table(o: &mut impl Writer, r: &ReportData, m: &view::MetricTable<'_>) {
    let style = EntryStyle::of(m.stats(), m.entry_rows(), true);
    o.caption("Jobs", Some(&style.words(&ci_words(m.stats()))));
    let mut header = vec![format!("job / {}", view::cell_corner(r))];
    header.extend(m.columns.iter().map(|c| c.to_string()));
    let mut t = Table::new(header, 1, false, style);
    for g in &m.groups {
        let labels = g.scales.iter().map(|s| s.map(|s| s.label)).collect();
        t.rows.push(Row::Group(g.phase.clone(), labels));
        for (c, entries) in &g.rows {
            let mut cells = vec![Cell::Text(view::cell_name(r, *c))];
            cells.extend(entries.iter().zip(&g.scales).map(|(e, sc)| match (e, sc) {
                (Some(s), Some(sc)) => Cell::Entry(s, *sc),
                _ => Cell::Text("-".into()),
            }));
            t.values(cells);
        }
    }
    o.table(&t);
    if m.stats().any(|s| !s.disturbed.is_empty()) {
        o.note(DISTURBED_NOTE);
    }
    o.sentence(view::FIO_NOTE);
}

/// One of the articles' tables (rows = configurations, columns = phases; dbench's
/// operations as rows); rows of configurations of several factors have a column per factor.
fn metric_grid(
    o: &mut impl Writer,
    r: &ReportData,
    w: &WorkloadReport,
    t: &TableSpec,
    detail: Detail,
) {
    let (g, style) = super::grid::styled(r, w, t, detail);
    o.caption(&t.heading, Some(&style.words(&interval_words(w, t))));
    let factors = super::grid::factor_columns(r, &g.cells);
    let keys = factors.as_ref().map_or(1, Vec::len);
    let mut header = factors.clone().unwrap_or_else(|| vec![g.corner.clone()]);
    header.extend(g.columns.iter().cloned());
    let mut tb = Table::new(header, keys, true, style);
    for (i, (label, entries)) in g.rows.iter().enumerate() {
        let keys = match &factors {
            Some(_) => super::grid::row_levels(r, &g, i),
            None => vec![label.clone()],
        };
        let mut cells: Vec<Cell<'_>> = keys.into_iter().map(Cell::Text).collect();
        cells.extend(entries.iter().map(|e| match e {
            Some((s, sc)) => Cell::Entry(s, *sc),
            None => Cell::Text("-".into()),
        }));
        tb.values(cells);
    }
    o.table(&tb);
    if super::entries::any_disturbed(w, t) {
        o.note(DISTURBED_NOTE);
    }
}

/// Table `t` of a sweep as one matrix per phase (rows and columns the two swept factors,
/// means); `false` when the report is not a sweep.
fn sweep_matrices(o: &mut impl Writer, r: &ReportData, w: &WorkloadReport, t: &TableSpec) -> bool {
    use super::sweep;
    let ms = sweep::matrices(r, w, t);
    if ms.is_empty() {
        return false;
    }
    o.caption(&t.heading, Some(&sweep::words(r, &ms)));
    for m in &ms {
        o.subtitle(&sweep::title(w, m));
        let (header, rows) = sweep::text(r, m);
        let mut tb = Table::new(header, 1, true, TEXT_ONLY);
        for row in rows {
            tb.values(row.into_iter().map(Cell::Text).collect());
        }
        o.table(&tb);
    }
    if sweep::any_disturbed(&ms) {
        o.note(DISTURBED_NOTE);
    }
    true
}

/// No entries in the table: its cells are all text.
const TEXT_ONLY: EntryStyle = EntryStyle {
    intervals: false,
    sd: false,
    n: None,
};

fn latency_table(o: &mut impl Writer, r: &ReportData, w: &WorkloadReport) {
    o.caption("Latency percentiles per operation", None);
    let pcts = w.latency_percentiles();
    let mut header = vec![
        "operation".to_string(),
        view::cell_corner(r),
        "count".into(),
    ];
    header.extend(pcts.iter().map(|p| percentile_label(*p)));
    let mut t = Table::new(header, 2, false, TEXT_ONLY);
    for l in &w.latency {
        let sc = super::grid::latency_scale(w, &l.op);
        let mut cells = vec![
            super::grid::latency_label(w, &l.op),
            view::cell_name(r, l.cell),
            l.count.map_or_else(|| "-".into(), |c| c.to_string()),
        ];
        for p in &pcts {
            let v = l.points.iter().find(|x| x.0 == *p).map(|x| x.1);
            cells.push(fmt_opt(v, &sc));
        }
        t.values(cells.into_iter().map(Cell::Text).collect());
    }
    o.table(&t);
}

fn telemetry_table(o: &mut impl Writer, r: &ReportData, w: &WorkloadReport) {
    let Some(t) = super::telemetry::table(w, &r.cells) else {
        return;
    };
    o.telemetry_caption();
    let mut header = vec![view::cell_corner(r), "phase".to_string()];
    header.extend(t.header.iter().cloned());
    let mut tb = Table::new(header, 2, false, TEXT_ONLY);
    for row in &t.rows {
        let mut cells = vec![view::cell_name(r, row.index), row.phase.clone()];
        cells.extend(row.values.iter().cloned());
        tb.values(cells.into_iter().map(Cell::Text).collect());
    }
    o.table(&tb);
}
