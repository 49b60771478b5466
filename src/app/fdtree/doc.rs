//! fdtree's part of the run document (`app::rundoc`): the tree's counts and whether syncfs
//! was timed; under MPI every rank's figures.

use crate::app::rundoc::Units;
use crate::workload::fdtree::Counts;
use serde::Serialize;

/// The keys only fdtree's document has.
#[derive(Debug, Serialize)]
pub(crate) struct FdtreePart {
    /// Directories, files and bytes.
    pub counts: CountsDoc,
    /// Whether every phase ends with a timed syncfs (`--sync`).
    pub sync_timed: bool,
    /// Under MPI: every rank's start, end, items and rate per phase and repetition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rank: Option<serde_json::Value>,
    /// Under MPI: the units of `per_rank`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rank_units: Option<Units>,
}

/// Counts of one tree and of the whole run.
#[derive(Debug, Serialize)]
pub(crate) struct CountsDoc {
    /// One tree (one thread's); absent under MPI, where the ranks share a layout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_tree: Option<Counts>,
    /// All threads or ranks together, per repetition.
    pub total: Counts,
    /// Units of the counts.
    pub units: Units,
}

/// The units of the counts: `{"dirs": "count", "files": "count", "bytes": "B"}`.
const COUNT_UNITS: Units = Units(&[("dirs", "count"), ("files", "count"), ("bytes", "B")]);

/// The units of `per_rank` under MPI.
pub(crate) const PER_RANK_UNITS: Units = Units(&[
    ("start", "s"),
    ("end", "s"),
    ("sync", "s"),
    ("items", "count"),
    ("bytes", "B"),
    ("rate", "items/s"),
]);

impl CountsDoc {
    /// The counts with their units.
    pub fn new(per_tree: Option<Counts>, total: Counts) -> Self {
        CountsDoc {
            per_tree,
            total,
            units: COUNT_UNITS,
        }
    }
}
