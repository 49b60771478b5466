//! The rows the store's reads return: a study, its cells, workloads, series and trials.

use super::{CellStatus, SeriesStatus, StudyStatus, TrialStatus};
use crate::metric::Metric;
use crate::stats::adaptive::StopReason;
use crate::vocab::{CachePolicy, Stored, StudyKind};
use serde::Serialize;

/// A row of the `study` table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StudyRow {
    /// Id.
    pub id: i64,
    /// A study or an engine run.
    pub kind: StudyKind,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Command line as typed.
    pub command_line: String,
    /// Study file text or engine parameters.
    pub spec: String,
    /// Hash of `spec`.
    pub spec_hash: String,
    /// fslab version that wrote it.
    pub tool_version: String,
    /// Seed, if any.
    pub seed: Option<i64>,
    /// Status.
    pub status: StudyStatus,
    /// Creation time.
    pub created_at: String,
    /// Finish time.
    pub finished_at: Option<String>,
}

/// A row of the `cell` table; the report's JSON writes it as it is, in this order
/// (`report::model::CellInfo`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellRow {
    /// Id.
    pub id: i64,
    /// Position in the plan.
    pub idx: i64,
    /// Label.
    pub label: String,
    /// Factor name and level label, in plan order.
    pub factors: Vec<(String, String)>,
    /// Status.
    pub status: CellStatus,
    /// Error, if failed.
    pub error: Option<String>,
    /// Exact provisioning commands.
    pub commands: Vec<String>,
    /// Superblock / log dump after mkfs.
    pub superblock: String,
    /// Resolved configuration.
    pub config: serde_json::Value,
}

/// A row of the `workload` table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WorkloadRow {
    /// Id.
    pub id: i64,
    /// Position in the study.
    pub idx: i64,
    /// Engine (`fdtree`, `iozone`, `dbench`).
    pub kind: String,
    /// Label.
    pub label: String,
    /// Parameters as JSON.
    pub params: serde_json::Value,
}

/// A row of the `series` table (one cell × workload).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SeriesRow {
    /// Cell id.
    pub cell_id: i64,
    /// Workload id.
    pub workload_id: i64,
    /// Status.
    pub status: SeriesStatus,
    /// Why repetitions stopped.
    pub stop_reason: Option<StopReason>,
    /// Error, if failed.
    pub error: Option<String>,
}

/// A trial (repetition) with its samples.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TrialRow {
    /// Id.
    pub id: i64,
    /// Cell id.
    pub cell_id: i64,
    /// Workload id.
    pub workload_id: i64,
    /// Repetition number (0 = discarded warm-up).
    pub repetition: i64,
    /// Position in the execution order.
    pub order_index: i64,
    /// Counted, failed or a discarded warm-up.
    pub status: TrialStatus,
    /// Error, if failed.
    pub error: Option<String>,
    /// Cache policy applied (a word this fslab does not know is kept as stored).
    pub cache_policy: Stored<CachePolicy>,
    /// When it ran, and how quiet the machine was (its keys stand among the row's own).
    #[serde(flatten)]
    pub window: super::RunWindow,
    /// Why a completed repetition is left out of the statistics: `rerun` or `dropped`
    /// (disturbed, under `disturbed = "repeat"` or `"drop"`; status `discarded`); `None`
    /// otherwise and before schema version 6.
    pub excluded: Option<String>,
    /// The measured values.
    pub samples: Vec<Metric>,
    /// Its time series (`--timeline`; schema version 4), by time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<crate::metric::TimePoint>,
}

/// Everything stored about one study or run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StudyData {
    /// The study.
    pub study: StudyRow,
    /// Environment key/value pairs, sorted by key.
    pub environment: Vec<(String, String)>,
    /// Cells in plan order.
    pub cells: Vec<CellRow>,
    /// Workloads in study order.
    pub workloads: Vec<WorkloadRow>,
    /// Series outcomes.
    pub series: Vec<SeriesRow>,
    /// Trials in execution order, each with its samples.
    pub trials: Vec<TrialRow>,
}
