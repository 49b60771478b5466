//! The layout of a metric table, shared by the text, Markdown and HTML reports: rows are
//! configurations and columns phases (the articles' tables), except for dbench, whose 17
//! operations are rows under the names dbench 4.0 prints (`Qpathinfo`, `Find`, …) with one
//! column per configuration, so the table stays as narrow as the number of configurations.

//!
//! Each phase has one [`Scale`] (from the typical mean of its entries), so the values that
//! are compared with each other share a unit, named beside the phase: `file_create (ms)`.

use super::model::{CellMetric, ReportData, TableSpec, WorkloadReport};
use crate::units::Scale;

/// One table laid out: the corner label, the column labels, and each row's label with its
/// entries (`None`: no value).
pub struct Grid<'a> {
    /// Label of the first column (`configuration`, the one factor's name, or `operation`).
    pub corner: String,
    /// Column labels after the first.
    pub columns: Vec<String>,
    /// Row label and one entry per column.
    pub rows: Vec<(String, Vec<Entry<'a>>)>,
    /// The configuration (index into the report's cells) of each row, when rows are
    /// configurations; empty when they are operations.
    pub cells: Vec<usize>,
}

/// One entry of a table with the scale it prints in; `None` when there is no value.
pub type Entry<'a> = Option<(&'a CellMetric, Scale)>;

/// The scale of one phase's entries: from the typical magnitude of their means.
fn phase_scale(entries: &[Option<&CellMetric>]) -> Option<Scale> {
    let unit = entries.iter().flatten().next()?.unit;
    Some(unit.scale_for(entries.iter().flatten().map(|s| s.summary.mean)))
}

/// Entries with their phase's scale.
fn scaled(entries: Vec<Option<&CellMetric>>, scale: Option<Scale>) -> Vec<Entry<'_>> {
    entries.into_iter().map(|e| e.zip(scale)).collect()
}

/// A label with its scale's unit: `file_create (ms)`.
fn with_unit(label: String, scale: Option<Scale>) -> String {
    match scale {
        Some(s) => format!("{label}{}", s.suffix()),
        None => label,
    }
}

/// How a phase is named in a report: dbench's operations by the names dbench 4.0 prints,
/// whichever spelling the store holds.
pub fn phase_label(kind: &str, phase: &str) -> String {
    if kind == "dbench" {
        if let Some(name) = super::spelling::dbench_phase(phase) {
            return name.to_string();
        }
    }
    phase.to_string()
}

/// The scale of one operation's latency percentiles (stored in ms), from every
/// configuration's points, so an operation's rows share a unit.
pub fn latency_scale(w: &WorkloadReport, op: &str) -> Scale {
    crate::metric::Unit::Millis.scale_for(
        w.latency
            .iter()
            .filter(|l| l.op == op)
            .flat_map(|l| l.points.iter().map(|p| p.1)),
    )
}

/// An operation of the latency table with its unit: `Qpathinfo (µs)`.
pub fn latency_label(w: &WorkloadReport, op: &str) -> String {
    format!(
        "{}{}",
        phase_label(&w.kind, op),
        latency_scale(w, op).suffix()
    )
}

/// The factor names, when every configuration of the rows has the same two or more factors
/// (each then gets a column of its own).
pub fn factor_columns(r: &ReportData, cells: &[usize]) -> Option<Vec<String>> {
    let first = &r.cells[*cells.first()?].factors;
    let names: Vec<String> = first.iter().map(|(n, _)| n.clone()).collect();
    let same = cells.iter().all(|&c| {
        let f = &r.cells[c].factors;
        f.len() == names.len() && f.iter().zip(&names).all(|((n, _), m)| n == m)
    });
    (names.len() >= 2 && same).then_some(names)
}

/// The factor levels of row `i` of a grid whose rows are configurations.
pub fn row_levels(r: &ReportData, g: &Grid<'_>, i: usize) -> Vec<String> {
    r.cells[g.cells[i]]
        .factors
        .iter()
        .map(|(_, l)| l.clone())
        .collect()
}

/// Lay out table `t` of workload `w` for the configurations with data, with the style of
/// its entries at `detail`.
pub fn styled<'a>(
    r: &ReportData,
    w: &'a WorkloadReport,
    t: &TableSpec,
    detail: super::view::Detail,
) -> (Grid<'a>, super::entries::EntryStyle) {
    let g = grid(r, w, t, &r.cells_with_data(w));
    let stats = g
        .rows
        .iter()
        .flat_map(|(_, e)| e.iter().flatten().map(|x| x.0));
    let style =
        super::entries::EntryStyle::of(stats, g.rows.len(), detail == super::view::Detail::Compact);
    (g, style)
}

/// Lay out table `t` of workload `w` for the configurations `cells`.
pub fn grid<'a>(r: &ReportData, w: &'a WorkloadReport, t: &TableSpec, cells: &[usize]) -> Grid<'a> {
    if w.kind == "dbench" && t.phases.len() > 1 {
        return Grid {
            corner: "operation".into(),
            columns: cells
                .iter()
                .map(|&c| super::view::cell_name(r, c))
                .collect(),
            rows: t
                .phases
                .iter()
                .map(|p| {
                    let entries: Vec<_> = cells.iter().map(|&c| w.stat(c, p, &t.metric)).collect();
                    let scale = phase_scale(&entries);
                    (
                        with_unit(phase_label(&w.kind, p), scale),
                        scaled(entries, scale),
                    )
                })
                .collect(),
            cells: Vec::new(),
        };
    }
    let scales: Vec<Option<Scale>> = t
        .phases
        .iter()
        .map(|p| {
            let entries: Vec<_> = cells.iter().map(|&c| w.stat(c, p, &t.metric)).collect();
            phase_scale(&entries)
        })
        .collect();
    Grid {
        corner: super::view::cell_corner(r),
        columns: t
            .phases
            .iter()
            .zip(&scales)
            .map(|(p, s)| with_unit(phase_label(&w.kind, p), *s))
            .collect(),
        rows: cells
            .iter()
            .map(|&c| {
                let entries = t
                    .phases
                    .iter()
                    .zip(&scales)
                    .map(|(p, sc)| w.stat(c, p, &t.metric).zip(*sc))
                    .collect();
                (super::view::cell_name(r, c), entries)
            })
            .collect(),
        cells: cells.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dbench_operations_take_dbench_names_and_others_keep_theirs() {
        assert_eq!(phase_label("dbench", "QUERY_PATH_INFORMATION"), "Qpathinfo");
        assert_eq!(phase_label("dbench", "FIND_FIRST"), "Find");
        assert_eq!(phase_label("dbench", "NTCreateX"), "NTCreateX");
        assert_eq!(phase_label("dbench", "total"), "total");
        assert_eq!(phase_label("fdtree", "FIND_FIRST"), "FIND_FIRST");
    }
}
