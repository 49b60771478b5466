//! Measured values in long format: one [`Metric`] is one number of one repetition.
//!
//! Every engine (fdtree, IOzone, dbench) reports a flat list of metrics, so the store and
//! the reports never need to know which workload produced them.

use crate::units::{self, Ladder, Scale};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The unit of a metric. Stored, exported (CSV, JSON) and printed as its short string
/// (`as_str`: `s`, `dirs/s`), one spelling everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// A percentage that is a share, never negative: CPU use, device utilisation, the spread
    /// between workers. (No unit fslab stores can be negative: every 95% interval is of a
    /// positive quantity.)
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

    /// The unit ladder people read values of this unit in (seconds → ms/µs, KiB/s → GiB/s).
    fn ladder(self) -> Option<Ladder> {
        match self {
            Unit::Seconds => Some(units::SECONDS),
            Unit::Millis => Some(units::MILLIS),
            Unit::KiBPerSec => Some(units::KIB_PER_SEC),
            Unit::MBPerSec => Some(units::MB_PER_SEC),
            Unit::Bytes => Some(units::BYTES),
            _ => None,
        }
    }

    /// The scale to print values of about `magnitude` in: `ms` for 0.0123 s, `GiB/s` for
    /// 15000000 KiB/s; rates of items keep their unit, counts print as whole numbers.
    pub fn scale(self, magnitude: f64) -> Scale {
        match self.ladder() {
            Some(l) => Scale::pick(l, magnitude),
            None if self == Unit::Count => Scale::fixed("").whole(),
            None => Scale::fixed(self.as_str()),
        }
    }

    /// The scale for a set of values compared with each other (a column, an axis), from
    /// their typical magnitude (see [`units::typical_magnitude`]).
    pub fn scale_for(self, values: impl IntoIterator<Item = f64>) -> Scale {
        self.scale(units::typical_magnitude(values))
    }

    /// One value with its own scale and unit: `955.3 µs`, `1.83 GB/s`, `160`.
    pub fn fmt(self, v: f64) -> String {
        self.scale(v).fmt(v)
    }

    /// Whether a larger value is better (rates) or worse (times, latencies).
    /// Counts and bytes are treated as "higher is better" (more work done).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Unit::Seconds | Unit::Millis)
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

impl Serialize for Unit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        // The short spelling; fslab 0.1 wrote the variant names (`Seconds`) in JSON.
        Unit::parse(&s)
            .or_else(|| Unit::ALL.into_iter().find(|u| format!("{u:?}") == s))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown unit '{s}'")))
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

/// The [`TimePoint`] series of the engine's progress rate: its progress units per second.
pub const PROGRESS_SERIES: &str = "progress";

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

impl Histogram {
    /// `h` as histogram `name` of `phase`, encoded `hdr-v2-deflate`; `what` names it in the
    /// error (`the ReadX histogram`).
    pub fn hdr_v2_deflate(
        phase: String,
        name: &str,
        h: &hdrhistogram::Histogram<u64>,
        what: &str,
    ) -> anyhow::Result<Self> {
        use hdrhistogram::serialization::Serializer as _;
        let mut data = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(h, &mut data)
            .map_err(|e| anyhow::anyhow!("serializing {what}: {e:?}"))?;
        Ok(Histogram {
            phase,
            name: name.into(),
            encoding: "hdr-v2-deflate".into(),
            data,
        })
    }
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
    fn json_spells_units_as_the_store_does() {
        assert_eq!(
            serde_json::to_string(&Unit::DirsPerSec).unwrap(),
            "\"dirs/s\""
        );
        assert_eq!(serde_json::to_string(&Unit::Seconds).unwrap(), "\"s\"");
        for u in Unit::ALL {
            let j = serde_json::to_string(&u).unwrap();
            assert_eq!(serde_json::from_str::<Unit>(&j).unwrap(), u);
        }
        // Documents written by fslab 0.1 still read.
        assert_eq!(
            serde_json::from_str::<Unit>("\"KiBPerSec\"").unwrap(),
            Unit::KiBPerSec
        );
        assert!(serde_json::from_str::<Unit>("\"furlongs\"").is_err());
    }

    #[test]
    fn values_print_in_the_unit_that_fits() {
        assert_eq!(Unit::Seconds.fmt(0.0009553), "955.3 µs");
        assert_eq!(Unit::KiBPerSec.scale(15_000_000.0).label, "GiB/s");
        assert_eq!(Unit::Count.fmt(160.0), "160");
        assert_eq!(Unit::FilesPerSec.fmt(2000.0), "2000 files/s");
        assert_eq!(Unit::Millis.fmt(0.25), "250.0 µs");
        assert_eq!(Unit::Bytes.fmt(16.0 * 1048576.0), "16.00 MiB");
        let col = Unit::Seconds.scale_for([0.002, 0.003, 0.004]);
        assert_eq!((col.label, col.num(0.0035)), ("ms", "3.50".to_string()));
    }

    #[test]
    fn times_are_lower_is_better() {
        assert!(!Unit::Seconds.higher_is_better());
        assert!(!Unit::Millis.higher_is_better());
        assert!(Unit::FilesPerSec.higher_is_better());
        assert!(Unit::KiBPerSec.is_rate());
        assert!(!Unit::Seconds.is_rate());
    }

    #[test]
    fn metric_key_joins_phase_and_name() {
        let m = Metric::new("file_create", "rate", Unit::FilesPerSec, 1.0);
        assert_eq!(m.key(), "file_create.rate");
    }
}
