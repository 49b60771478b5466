//! dbench's part of the run document (`app::rundoc`): the loadfile, dbench's own figures of
//! every repetition, and under MPI every rank's.

use crate::app::rundoc::Units;
use crate::workload::dbench::{DbenchParams, RepOutcome};
use serde::Serialize;

/// The keys only dbench's document has.
#[derive(Debug, Serialize)]
pub(crate) struct DbenchPart<'a> {
    /// The loadfile replayed.
    pub loadfile: LoadfileDoc<'a>,
    /// dbench's own figures of every repetition (operations, MB/s, latencies); absent in a
    /// dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<&'a RepOutcome>>,
    /// Under MPI: every rank's start, finish, bytes and MB/s per repetition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rank: Option<serde_json::Value>,
    /// Under MPI: the units of `per_rank`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rank_units: Option<Units>,
}

/// The loadfile as the document describes it.
#[derive(Debug, Serialize)]
pub(crate) struct LoadfileDoc<'a> {
    /// Where it came from (a path, or fslab's generated load).
    pub source: &'a str,
    /// Lines read.
    pub lines: u32,
    /// Operations one pass replays.
    pub operations_per_pass: usize,
    /// Bytes one pass reads and writes.
    pub bytes_per_pass: u64,
    /// Whether its lines carry timestamps.
    pub has_timestamps: bool,
}

impl<'a> LoadfileDoc<'a> {
    /// The loadfile of these parameters.
    pub fn of(p: &'a DbenchParams) -> Self {
        let lf = &p.loadfile;
        LoadfileDoc {
            source: &p.loadfile_source,
            lines: lf.lines,
            operations_per_pass: lf.ops.len(),
            bytes_per_pass: lf.bytes_per_pass(),
            has_timestamps: lf.has_timestamps,
        }
    }
}

/// The units of `per_rank` under MPI.
pub(crate) const PER_RANK_UNITS: Units = Units(&[
    ("start", "s"),
    ("finish", "s"),
    ("measured_bytes", "B"),
    ("throughput_mb_s", "MB/s"),
]);
