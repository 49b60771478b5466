//! dbench's registration: its stored name, what it can do, and how its study-file spec
//! builds the engine.

use super::{Dbench, DbenchSpec};
use crate::workload::{Caps, Counts, Larger, ResultClass};
use std::time::Duration;

/// The stored name, the study file's `kind`.
pub const NAME: &str = "dbench";

/// What dbench can do.
pub const CAPS: Caps = Caps {
    mpi: true,
    timed: true,
    // The run's MB/s; per operation, its mean latency.
    headline: &[("total", "throughput"), ("*", "mean_latency")],
    headline_marked: &[],
    // The number dbench users compare: the run's MB/s.
    primary: &["throughput"],
    larger: Larger {
        words: "a longer run",
        keys: "duration",
        flags: "-t",
    },
    dataset: None,
    // dbench's clients, all ranks together (an MPI job shares them out).
    workers: |p| crate::workload::caps::count_param(p, "clients").unwrap_or(1),
    class: |phase| match phase {
        "total" => ResultClass::Mixed,
        "ReadX" | "READ" => ResultClass::Read,
        "WriteX" | "WRITE" => ResultClass::Write,
        "Flush" | "FLUSH" => ResultClass::Sync,
        _ => ResultClass::Metadata,
    },
    counts: |_| Counts::Items("lines"),
    entry_words: ("dbench", "client tree"),
    tree: None,
};

crate::workload::engine_spec!(
    DbenchSpec => Dbench,
    /// `duration` plus the `warmup` the spec states. A warmup left to its default (a fifth
    /// of `duration`) is not counted, as `study plan`'s ETA never counted it; `None` when the
    /// duration does not parse.
    fn expected_duration(&self) -> Option<Duration> {
        let run = crate::units::parse_duration(&self.duration).ok()?;
        let warmup = self
            .warmup
            .as_deref()
            .and_then(|w| crate::units::parse_duration(w).ok())
            .unwrap_or(Duration::ZERO);
        run.checked_add(warmup)
    }
);
