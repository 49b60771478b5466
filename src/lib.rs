//! fslab: a file-system benchmarking lab.
//!
//! Layers (dependencies point one way; `doc/architecture.md` has the whole picture and
//! `tests/layers.rs` checks it): `main → app → {cli, runner, mpi, report, plan} →
//! {provision, workload, store, telemetry} → {stats, metric, units, target, sysinfo, error,
//! signal, safe, vocab, process}`; `stats` imports nothing of ours and does no I/O.
//!
//! Unit tests live beside the code they test: an inline `#[cfg(test)] mod tests { … }` when
//! short, else a sibling file `<module>_tests.rs` (for `x/mod.rs`: `x/x_tests.rs`) that the
//! module includes with `#[cfg(test)] #[path = "<module>_tests.rs"] mod tests;`. No
//! `tests.rs`, `tests_*.rs` or `unit_tests/`; product code never lives in a file named so.

#![warn(missing_docs)]

/// Print a line to stdout, ignoring a closed pipe (`fslab … | head` must not panic or
/// leave a half-made tree behind because its reader went away).
#[macro_export]
macro_rules! outln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Print to stdout without a newline, ignoring a closed pipe.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

pub mod app;
pub mod cli;
pub mod error;
pub mod metric;
pub mod mpi;
pub mod plan;
pub mod process;
pub mod provision;
pub mod report;
pub mod runner;
pub mod safe;
pub mod signal;
pub mod stats;
pub mod store;
pub mod sysinfo;
pub mod target;
pub mod telemetry;
pub mod units;
pub mod vocab;
pub mod workload;
