//! The study file as written: TOML sections deserialized with unknown keys rejected.
//!
//! `[[workload]]` tables and factor levels stay raw TOML tables here, because a factor level
//! may override any workload parameter; `matrix.rs` merges and deserializes them per cell.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A whole study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// Short name; `--resume` finds the study by it.
    pub name: String,
    /// What the study asks.
    #[serde(default)]
    pub description: String,
    /// Repetitions, order and cache policy.
    #[serde(default)]
    pub repetitions: RepetitionsSection,
    /// Devices.
    pub device: DeviceSection,
    /// The file system and its knobs (the base every factor level modifies).
    #[serde(default)]
    pub filesystem: FilesystemSection,
    /// Factors; their cartesian product gives the cells.
    #[serde(default, rename = "factor")]
    pub factors: Vec<FactorSection>,
    /// Workloads; every one runs on every cell.
    #[serde(default, rename = "workload")]
    pub workloads: Vec<toml::Table>,
    /// Run the study in a guest (`[guest] kind = "uml"`); absent: on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestSection>,
}

/// `[guest]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestSection {
    /// `uml`: a User-mode Linux guest.
    pub kind: String,
    /// Its memory (`512M`, the default), which bounds its page cache.
    pub mem: Option<String>,
    /// File systems both kernels have (`"ext4"` or `["ext4", "xfs"]`) on which the study's
    /// workloads also run on the host and in the guest, so the report shows per metric how
    /// much the guest slows and compresses (doc/guest.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrate: Option<StrOrList>,
}

/// `[repetitions]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepetitionsSection {
    /// At least this many counted repetitions per cell × workload (default: the design's n for
    /// `detect`; 5 with `target_ci`). Given without `detect` or `target_ci`: exactly this many.
    pub min: Option<u32>,
    /// At most this many (default: `min` for a fixed count, else 30).
    pub max: Option<u32>,
    /// Stop when every headline metric's 95% CI half-width is under this fraction of its mean
    /// (a precision target).
    pub target_ci: Option<f64>,
    /// The smallest effect that matters, `"10%"` (the default when neither `min` nor
    /// `target_ci` is given): each series runs the repetitions that give 80% power to detect
    /// it (two-sided Welch on logs, α = 0.05 before adjustment) at an assumed cv of 5%, or at
    /// the spread an earlier study of the same name measured, at most `max`; with `max` given,
    /// also from the spread of its own first `min` values.
    pub detect: Option<String>,
    /// Time budget for the whole study (`2h`, `90m`).
    pub budget: Option<String>,
    /// Execution order.
    pub order: Option<Order>,
    /// Seed for `randomized` (default: drawn at random and stored).
    pub seed: Option<u64>,
    /// Cache policy before each repetition.
    pub cache: Option<CachePolicy>,
    /// Discarded repetitions run first in every series, each prepared by the cache policy
    /// like a counted one (stored, marked, left out of the statistics); for one-time set-up
    /// after mkfs or mount (default 1 with `cache = "warm"`, else 0).
    pub warmup: Option<u32>,
    /// Before each repetition, wait up to this long until the machine is quiet (no other I/O
    /// on the cell's backing device, no steal, no load beyond the CPUs, little other CPU);
    /// the wait is stored with the repetition (default: no wait).
    pub settle: Option<String>,
    /// Sample the cell's devices, the CPU and the engine's progress once a second during
    /// every repetition and store the time series (default true; `false` leaves it out).
    pub timeline: Option<bool>,
    /// What to do with a repetition other activity disturbed: `keep` it (flagged; the
    /// default), `repeat` it (stored as left out and run again), or `drop` it (stored as left
    /// out).
    pub disturbed: Option<crate::stats::adaptive::Disturbed>,
}

crate::vocab::words! {
    /// Order in which repetitions of the cells run.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Order {
        /// Round-robin: repetition 1 of every cell, then repetition 2 of every cell, … (ABAB).
        Interleaved => "interleaved",
        /// Like interleaved, but every round in a seeded random order.
        Randomized => "randomized",
        /// All repetitions of one cell, then the next (AABB).
        Sequential => "sequential",
    }
    /// The study-file word.
    as_str;
}

pub use crate::vocab::CachePolicy;

/// `[device]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSection {
    /// `loop:SIZE`, `ram:SIZE` or a block device path.
    pub data: String,
    /// External journal: `loop:SIZE`, `ram:SIZE`, a path, or `internal` (the default).
    pub journal: Option<String>,
    /// Exact device paths whose old contents may be destroyed.
    #[serde(default)]
    pub allow_format: Vec<PathBuf>,
    /// Direct I/O on loop and RAM devices (default true).
    pub direct_io: Option<bool>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StrOrList {
    /// One string (split on commas for mount options and features, on spaces for mkfs).
    One(String),
    /// A list.
    Many(Vec<String>),
}

/// A size as a string with suffix (`64M`) or an integer number of bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeValue {
    /// Bytes.
    Bytes(u64),
    /// `4k`, `64M`, `1G`.
    Text(String),
}

/// `[filesystem]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesystemSection {
    /// ext2, ext3, ext4, xfs, btrfs, nilfs2, jfs.
    #[serde(rename = "type")]
    pub fs_type: Option<String>,
    /// Extra mkfs arguments.
    pub mkfs: Option<StrOrList>,
    /// Mount options.
    pub mount: Option<StrOrList>,
    /// tune2fs -O features.
    pub features: Option<StrOrList>,
    /// I/O scheduler of the data device.
    pub scheduler: Option<String>,
    /// Journal (ext3/4) or log (XFS) size.
    pub journal_size: Option<SizeValue>,
    /// Block size.
    pub block_size: Option<SizeValue>,
    /// Inode size.
    pub inode_size: Option<SizeValue>,
    /// XFS log size (same as journal_size, XFS only).
    pub log_size: Option<SizeValue>,
}

/// `[[factor]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactorSection {
    /// Factor name, shown in cell labels (`journal=64MB`).
    pub name: String,
    /// Levels: each a table with `label` and the knobs it sets.
    pub values: Vec<toml::Table>,
}
