//! fio's registration: its stored name, what it can do, and how its study-file spec builds
//! the engine.

use super::{Fio, FioSpec};
use crate::workload::{Caps, Counts, Larger, ResultClass};

/// The stored name, the study file's `kind`.
pub const NAME: &str = "fio";

/// What fio (run by fslab) can do.
pub const CAPS: Caps = Caps {
    mpi: false,
    timed: false,
    // Per job and direction its IOPS; the throughput for sequential jobs with blocks of
    // 128 KiB or more (marked `large_sequential`); a job's CPU use; an fsync's mean latency.
    headline: &[("*", "iops"), ("*", "lat_mean"), ("*", "sys_cpu")],
    headline_marked: &[(super::output::LARGE_SEQUENTIAL, "throughput")],
    // IOPS, or the throughput where `large_sequential` makes it the headline.
    primary: &["iops", "throughput"],
    larger: Larger {
        words: "a longer run: a larger size, or time_based with a longer runtime",
        keys: "size, runtime",
        flags: "--size, --runtime",
    },
    // fio drops the file's cached pages before each job (`invalidate`, on by default), and
    // `direct` is the job's choice.
    dataset: None,
    // fio starts its own jobs; fslab runs one fio at a time.
    workers: |_| 1,
    class: |phase| match phase.rsplit_once('/').map(|(_, d)| d) {
        Some("read") => ResultClass::Read,
        Some("write") => ResultClass::Write,
        Some("sync") => ResultClass::Sync,
        _ => ResultClass::Unexplained,
    },
    counts: |_| Counts::Items("ops"),
    entry_words: ("fio", "directory"),
    tree: None,
};

crate::workload::engine_spec!(FioSpec => Fio);
