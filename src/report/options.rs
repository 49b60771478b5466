//! The choices that shape a report ([`ReportOptions`]), apart from the code that builds it,
//! so the builder and the parts it calls (`checks`, `comparisons`) all depend on this file
//! and not on each other.

use super::model::{ErrorBars, WarningsMode};
use crate::stats::Thresholds;

/// Choices that shape a report, echoed into it (the model's `options`) but for the skipped.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ReportOptions {
    /// `--baseline`: a cell label, `factor=level`, or a level of one factor.
    pub baseline: Option<String>,
    /// `--metric` selections: `phase.metric`, `metric` or `phase` (empty = all).
    pub metrics: Vec<String>,
    /// What error bars show.
    pub error_bars: ErrorBars,
    /// Warning thresholds (short phases, high variation).
    #[serde(skip)]
    pub thresholds: Thresholds,
    /// Restrict comparisons to these factors (`fslab compare` uses its `source` factor).
    #[serde(skip)]
    pub compare_factors: Option<Vec<String>>,
    /// How the text formats list warnings (`--warnings`).
    pub warnings: WarningsMode,
}
