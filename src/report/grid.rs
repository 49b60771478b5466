//! The layout of a metric table, shared by the text, Markdown and HTML reports: rows are
//! configurations and columns phases (the articles' tables), except for dbench, whose 14
//! operations are rows under dbench's own names (`Qpathinfo`, `Find`, …) with one column per
//! configuration, so the table stays as narrow as the number of configurations.

use super::model::{CellMetric, ReportData, TableSpec, WorkloadReport};

/// One table laid out: the corner label, the column labels, and each row's label with its
/// entries (`None`: no value).
pub struct Grid<'a> {
    /// Label of the first column (`configuration` or `operation`).
    pub corner: &'static str,
    /// Column labels after the first.
    pub columns: Vec<String>,
    /// Row label and one entry per column.
    pub rows: Vec<(String, Vec<Option<&'a CellMetric>>)>,
}

/// How a phase is named in a report: dbench's operations by dbench's summary names.
pub fn phase_label(kind: &str, phase: &str) -> String {
    if kind == "dbench" {
        if let Some(op) = crate::workload::dbench::ops::OpKind::from_name(phase) {
            return op.display_name().to_string();
        }
    }
    phase.to_string()
}

/// Lay out table `t` of workload `w` for the configurations `cells`.
pub fn grid<'a>(r: &ReportData, w: &'a WorkloadReport, t: &TableSpec, cells: &[usize]) -> Grid<'a> {
    if w.kind == "dbench" && t.phases.len() > 1 {
        return Grid {
            corner: "operation",
            columns: cells.iter().map(|&c| r.cells[c].label.clone()).collect(),
            rows: t
                .phases
                .iter()
                .map(|p| {
                    let entries = cells.iter().map(|&c| w.stat(c, p, &t.metric)).collect();
                    (phase_label(&w.kind, p), entries)
                })
                .collect(),
        };
    }
    Grid {
        corner: "configuration",
        columns: t.phases.iter().map(|p| phase_label(&w.kind, p)).collect(),
        rows: cells
            .iter()
            .map(|&c| {
                let entries = t.phases.iter().map(|p| w.stat(c, p, &t.metric)).collect();
                (r.cells[c].label.clone(), entries)
            })
            .collect(),
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
