//! IOzone's part of the run document (`app::rundoc`): the mode, every point (file size,
//! record size) with its repetitions and summary, and for a dry run the passes and the bytes
//! each point moves.

use crate::app::rundoc::{self, MetricRow};
use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::workload::iozone::sweep::Point;
use serde::Serialize;

/// The keys only IOzone's run document has.
#[derive(Debug, Serialize)]
pub(crate) struct IozonePart<'a> {
    /// `single` (one file per point) or `throughput` (`-t`: workers at once).
    pub mode: &'static str,
    /// Units of the points' figures.
    pub units: Units,
    /// Every point: its sizes, repetitions and summary.
    pub points: Vec<PointDoc>,
    /// Points the crossover rule skipped (`-a`'s record sizes above the file size limit).
    pub skipped_points: Vec<Point>,
    /// What fslab adjusted and why, one line each.
    pub notes: &'a [String],
    /// Under MPI: every rank's figures per test and repetition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_rank: Option<serde_json::Value>,
}

/// The keys only IOzone's dry-run document has.
#[derive(Debug, Serialize)]
pub(crate) struct IozonePlanPart<'a> {
    /// The test numbers (`-i`).
    pub tests: &'a [u8],
    /// The timed passes those tests make, in order.
    pub passes: Vec<&'static str>,
    /// Workers per point (`-t`; 1 otherwise).
    pub workers: u64,
    /// Every point: its sizes and the bytes one repetition moves.
    pub points: Vec<PlanPoint>,
    /// Bytes moved by the whole run.
    pub bytes_moved: u64,
    /// The speed the estimate assumes.
    pub estimate_basis: String,
}

/// Units of `points`.
#[derive(Debug, Serialize)]
pub(crate) struct Units {
    throughput: &'static str,
    elapsed: &'static str,
    file_kib: &'static str,
    record_bytes: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_rank: Option<rundoc::Units>,
}

impl Units {
    /// The units of a run's points; `mpi` adds those of `per_rank`.
    pub fn new(mpi: bool) -> Self {
        Units {
            throughput: "KiB/s",
            elapsed: "s",
            file_kib: "KiB",
            record_bytes: "B",
            // Units of `per_rank` under MPI.
            per_rank: mpi.then_some(rundoc::Units(&[
                ("start", "s"),
                ("timed", "s"),
                ("finish", "s"),
                ("counted", "B"),
                ("total", "B"),
                ("rate", "KiB/s"),
            ])),
        }
    }
}

/// One point of a run.
#[derive(Debug, Serialize)]
pub(crate) struct PointDoc {
    /// Its sizes.
    #[serde(flatten)]
    pub at: Point,
    /// Every repetition's metrics, in order.
    pub repetitions: Vec<Vec<MetricRow>>,
    /// Mean, sd, interval, … per test and metric.
    pub summary: serde_json::Value,
}

/// One point of a dry run.
#[derive(Debug, Serialize)]
pub(crate) struct PlanPoint {
    /// Its sizes.
    #[serde(flatten)]
    pub at: Point,
    /// Bytes one repetition of the point moves (all passes, all workers).
    pub bytes_moved: u64,
}

/// The points of a run: sizes, every repetition's metrics and the summary.
pub(crate) fn points(
    points: &[Point],
    reps: &[Vec<Vec<Metric>>],
    sums: &[Vec<MetricSummary>],
) -> Vec<PointDoc> {
    points
        .iter()
        .zip(reps)
        .zip(sums)
        .map(|((p, reps), sum)| PointDoc {
            at: *p,
            repetitions: rundoc::repetitions(reps),
            summary: runsummary::to_json(sum),
        })
        .collect()
}
