//! A warning being written ([`Draft`]): what it is about (kind, workload, configuration,
//! metric), finished with where it is, its figure, what is wrong and what to do. Every check
//! (`checks`, `cache_checks`, `comparisons`, `runsummary`) writes its warnings through it, so
//! their lines and the parts a group line lists ([`super::warngroups`]) have one shape.

use super::model::{CellInfo, ReportWarning, WarningKind, WorkloadReport};

/// A warning being written: what it is about.
pub(crate) struct Draft<'a> {
    kind: WarningKind,
    workload: Option<&'a WorkloadReport>,
    cell: Option<&'a CellInfo>,
    metric: Option<String>,
}

impl<'a> Draft<'a> {
    /// A warning of `kind` about a workload, a cell and a `phase.metric`, where given.
    pub(crate) fn new(
        kind: WarningKind,
        workload: Option<&'a WorkloadReport>,
        cell: Option<&'a CellInfo>,
        metric: Option<String>,
    ) -> Self {
        Draft {
            kind,
            workload,
            cell,
            metric,
        }
    }

    /// The warning: `place` names where (`journal=16MB fs=ext4 · dir_remove.rate`), `figure`
    /// the number a group line shows beside it (`12.7%`; may be empty), `statement` what is
    /// wrong and `advice` what to do. The full line is `place: statement; advice`.
    pub(crate) fn finish(
        self,
        place: String,
        figure: String,
        statement: String,
        advice: String,
    ) -> ReportWarning {
        let subject = if figure.is_empty() {
            place.clone()
        } else {
            format!("{place} ({figure})")
        };
        ReportWarning {
            kind: self.kind,
            workload: self.workload.map(|w| w.label.clone()),
            cell: self.cell.map(|c| c.label.clone()),
            metric: self.metric,
            message: format!("{place}: {statement}; {advice}"),
            subject,
            advice,
        }
    }
}
