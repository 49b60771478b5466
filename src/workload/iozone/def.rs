//! IOzone's registration: its stored name, what it can do, and how its study-file spec
//! builds the engine.

use super::{Iozone, IozoneSpec};
use crate::workload::{Caps, Counts, Larger, ResultClass};

/// The stored name, the study file's `kind`.
pub const NAME: &str = "iozone";

/// What IOzone can do.
pub const CAPS: Caps = Caps {
    mpi: true,
    timed: false,
    headline: &[("*", "throughput")],
    headline_marked: &[],
    primary: &["throughput"],
    larger: Larger {
        words: "larger files",
        keys: "file_size",
        flags: "-s",
    },
    dataset: Some(dataset_bytes),
    // Throughput mode's workers (under MPI, one per rank: `threads` is the ranks).
    workers: |p| crate::workload::caps::count_param(p, "threads").unwrap_or(1),
    class: |phase| {
        if phase.contains("read") {
            ResultClass::Read
        } else {
            ResultClass::Write
        }
    },
    counts: |_| Counts::Records,
    entry_words: ("IOzone", "test file"),
    tree: None,
};

crate::workload::engine_spec!(IozoneSpec => Iozone);

/// Bytes IOzone keeps on disk, from its stored parameters: `dataset_bytes` where a run
/// records it, else the file size (`file_size` or `size` in a study, bytes or a size such as
/// `1g`; `file_kib` for an engine command) × `threads`. `None` when unknown and when the test
/// bypasses the cache (`direct`/`o_direct`).
fn dataset_bytes(p: &serde_json::Value) -> Option<u64> {
    let num = |k: &str| p.get(k).and_then(serde_json::Value::as_u64);
    let size = |k: &str| match p.get(k)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => crate::units::parse_size(s).ok(),
        _ => None,
    };
    let on = |k: &str| p.get(k).and_then(serde_json::Value::as_bool) == Some(true);
    if on("direct") || on("o_direct") {
        return None;
    }
    if let Some(b) = num("dataset_bytes") {
        return Some(b);
    }
    let threads = num("threads").unwrap_or(1).max(1);
    let file = size("file_size")
        .or_else(|| size("size"))
        .or_else(|| num("file_kib").and_then(|k| k.checked_mul(1024)))?;
    file.checked_mul(threads)
}
