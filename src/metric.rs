//! Measured values in long format: one [`Metric`] is one number of one repetition.
//!
//! Every engine (fdtree, IOzone, dbench) reports a flat list of metrics, so the store and
//! the reports never need to know which workload produced them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The unit of a metric. Stored as its short string (`as_str`) so the database stays readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Unit {
    /// Elapsed wall-clock time in seconds.
    Seconds,
    /// Latency in milliseconds.
    Millis,
    /// Directories created or removed per second.
    DirsPerSec,
    /// Files created or removed per second.
    FilesPerSec,
    /// Generic operations per second.
    OpsPerSec,
    /// Throughput in KiB/s (1024 bytes), as IOzone and fdtree report it.
    KiBPerSec,
    /// Throughput in MB/s (10^6 bytes), as dbench reports it.
    MBPerSec,
    /// A count of items (files, operations, records).
    Count,
    /// A number of bytes.
    Bytes,
    /// A percentage (for example CPU use).
    Percent,
}

impl Unit {
    /// All units, for parsing and documentation.
    pub const ALL: [Unit; 10] = [
        Unit::Seconds,
        Unit::Millis,
        Unit::DirsPerSec,
        Unit::FilesPerSec,
        Unit::OpsPerSec,
        Unit::KiBPerSec,
        Unit::MBPerSec,
        Unit::Count,
        Unit::Bytes,
        Unit::Percent,
    ];

    /// The short unit string used in the store, JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Millis => "ms",
            Unit::DirsPerSec => "dirs/s",
            Unit::FilesPerSec => "files/s",
            Unit::OpsPerSec => "ops/s",
            Unit::KiBPerSec => "KiB/s",
            Unit::MBPerSec => "MB/s",
            Unit::Count => "count",
            Unit::Bytes => "B",
            Unit::Percent => "%",
        }
    }

    /// Parse the short unit string written by [`Unit::as_str`].
    pub fn parse(s: &str) -> Option<Unit> {
        Unit::ALL.into_iter().find(|u| u.as_str() == s)
    }

    /// Whether a larger value is better (rates) or worse (times, latencies).
    /// Counts and bytes are treated as "higher is better" (more work done).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Unit::Seconds | Unit::Millis)
    }

    /// Whether a value in this unit can never be negative: times, rates, throughputs, counts
    /// and bytes (their 95% intervals are computed on the log scale). Percentages are not
    /// (a percentage can be a signed change).
    pub fn is_positive(self) -> bool {
        !matches!(self, Unit::Percent)
    }

    /// Whether this unit is a rate (per second).
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Unit::DirsPerSec
                | Unit::FilesPerSec
                | Unit::OpsPerSec
                | Unit::KiBPerSec
                | Unit::MBPerSec
        )
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One measured value of one repetition.
///
/// `phase` names what was measured (`file_create`, `random_read`, `NTCreateX`),
/// `name` names the statistic (`rate`, `elapsed`, `throughput`, `p99_latency`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// What was measured, e.g. `dir_create`.
    pub phase: String,
    /// Which number of that phase, e.g. `rate`.
    pub name: String,
    /// The unit of `value`.
    pub unit: Unit,
    /// The value.
    pub value: f64,
}

impl Metric {
    /// Build a metric.
    pub fn new(phase: impl Into<String>, name: impl Into<String>, unit: Unit, value: f64) -> Self {
        Metric {
            phase: phase.into(),
            name: name.into(),
            unit,
            value,
        }
    }

    /// `phase.name`, the key used by `--metric` filters and reports.
    pub fn key(&self) -> String {
        format!("{}.{}", self.phase, self.name)
    }

    /// Whether it is telemetry measured around the engine (see [`is_telemetry`]).
    pub fn is_telemetry(&self) -> bool {
        is_telemetry(&self.name)
    }
}

/// One point of a repetition's time series (`--timeline`): a value over the second that
/// ends `t` seconds after the run began.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TimePoint {
    /// Seconds since the run began, at the end of the interval.
    pub t: f64,
    /// What (`dev.data.write_bytes` per second, `cpu.iowait`, `progress`, …).
    pub name: String,
    /// Unit of the value.
    pub unit: Unit,
    /// The value (a rate per second, or a percentage).
    pub value: f64,
}

/// Name prefixes of the telemetry samples taken around an engine's phases (devices, CPU,
/// load, memory, fslab's own process, the file system's journal or log; `doc/telemetry.md`).
pub const TELEMETRY_PREFIXES: [&str; 6] = ["dev.", "cpu.", "load.", "mem.", "proc.", "fs."];

/// Whether a metric name is telemetry rather than one of the engine's own measurements:
/// telemetry explains results, it is not a result, so it gets tables of its own and no
/// variation warnings.
pub fn is_telemetry(name: &str) -> bool {
    name == "ctxt" || TELEMETRY_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A serialized latency histogram of one phase of one repetition (stored beside the samples
/// so reports can merge repetitions exactly).
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// The phase (operation) it belongs to.
    pub phase: String,
    /// What it measures, e.g. `latency_ns`.
    pub name: String,
    /// How `data` is encoded, e.g. `hdr-v2-deflate` (hdrhistogram's V2 deflate serializer).
    pub encoding: String,
    /// The encoded histogram.
    pub data: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_strings_round_trip() {
        for u in Unit::ALL {
            assert_eq!(Unit::parse(u.as_str()), Some(u));
        }
        assert_eq!(Unit::parse("furlongs"), None);
    }

    #[test]
    fn times_are_lower_is_better() {
        assert!(!Unit::Seconds.higher_is_better());
        assert!(!Unit::Millis.higher_is_better());
        assert!(Unit::FilesPerSec.higher_is_better());
        assert!(Unit::KiBPerSec.is_rate());
        assert!(!Unit::Seconds.is_rate());
        assert!(Unit::Seconds.is_positive() && Unit::Count.is_positive());
        assert!(Unit::MBPerSec.is_positive() && Unit::Bytes.is_positive());
        assert!(!Unit::Percent.is_positive());
    }

    #[test]
    fn metric_key_joins_phase_and_name() {
        let m = Metric::new("file_create", "rate", Unit::FilesPerSec, 1.0);
        assert_eq!(m.key(), "file_create.rate");
    }
}
