//! Telemetry at phase boundaries (issue 12): what the devices, the machine, fslab itself and
//! the file system's journal did during a phase, as ordinary [`Metric`](crate::metric::Metric) samples.
//!
//! At each boundary the runner takes a [`Snapshot`] (one read each of `/proc/diskstats`,
//! `/proc/stat`, `/proc/loadavg`, `/proc/meminfo`, getrusage and the file system's counter
//! file: jbd2 `info`, XFS `stats`, btrfs `commit_stats`); [`delta`] turns two snapshots into
//! the phase's metrics. [`interference`] judges a repetition's window for disturbance by
//! other I/O, CPU steal, load and other processes' CPU; [`settle`] waits for a quiet
//! machine. Names, units, sources and derivations are listed in `doc/telemetry.md`.
//!
//! This module reads only kernel interfaces and imports only `crate::metric`,
//! `crate::units` and `crate::sysinfo`.

mod btrfs;
mod counter;
mod devices;
mod diskstats;
mod fs;
mod interference;
mod jbd2;
mod metrics;
mod procfs;
mod settle;
#[cfg(test)]
#[path = "telemetry_tests.rs"]
mod tests;
mod xfs;

pub use btrfs::CommitStats;
pub use devices::{BlockDev, Device, Devices, Role};
pub use diskstats::DiskStats;
pub use fs::{FsCounters, FsSample};
pub use interference::{
    interference, BackingIo, Disturbance, Thresholds, Verdict, Window, OTHER_CPU_FLOOR_S,
    OTHER_CPU_MAX_PCT, OTHER_IO_BYTES_PER_SEC, OTHER_IO_FLOOR_BYTES, OTHER_IO_FRACTION,
    STEAL_MAX_PCT,
};
pub use jbd2::{Jbd2Averages, Jbd2Info};
pub use metrics::delta;
pub use procfs::{CpuTimes, DirtyMemory, LoadAvg, ProcStat, Usage};
pub use settle::{settle, Clock, Settled, SystemClock, SETTLE_POLL};
pub use xfs::XfsLog;

use anyhow::{Context, Result};
use std::time::Instant;

/// Everything read at one phase boundary.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When it was taken (monotonic clock).
    pub at: Instant,
    /// Each device of the cell with its diskstats line (`None`: not in /proc/diskstats).
    pub disks: Vec<(Device, Option<DiskStats>)>,
    /// `/proc/stat`.
    pub stat: ProcStat,
    /// USER_HZ, the unit of `stat`'s CPU times.
    pub ticks_per_second: u64,
    /// `/proc/loadavg`.
    pub load: LoadAvg,
    /// `Dirty` and `Writeback` of `/proc/meminfo`.
    pub memory: DirtyMemory,
    /// getrusage of fslab (self and waited-for children).
    pub usage: Usage,
    /// The file-system counters, if the file system has any and they could be read.
    pub fs: Option<FsSample>,
    /// What could not be read (a vanished counter file); the rest is still valid.
    pub notes: Vec<String>,
}

/// The texts a snapshot is made of, as read from the kernel (tests pass captured ones).
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    /// `/proc/diskstats`.
    pub diskstats: &'a str,
    /// `/proc/stat`.
    pub stat: &'a str,
    /// `/proc/loadavg`.
    pub loadavg: &'a str,
    /// `/proc/meminfo`.
    pub meminfo: &'a str,
}

fn read(path: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
}

impl Snapshot {
    /// Read everything once, now.
    pub fn take(devices: &Devices, fs: &FsCounters) -> Result<Snapshot> {
        let diskstats = read("/proc/diskstats")?;
        let stat = read("/proc/stat")?;
        let loadavg = read("/proc/loadavg")?;
        let meminfo = read("/proc/meminfo")?;
        let usage = procfs::usage()?;
        let (fs, notes) = match fs.read() {
            Ok(s) => (s, Vec::new()),
            Err(e) => (None, vec![format!("{e:#}")]),
        };
        let texts = Texts {
            diskstats: &diskstats,
            stat: &stat,
            loadavg: &loadavg,
            meminfo: &meminfo,
        };
        let mut s = Snapshot::from_texts(Instant::now(), devices, texts, usage, fs)?;
        s.notes = notes;
        Ok(s)
    }

    /// Build a snapshot from texts read earlier (the parsing half of [`Snapshot::take`]).
    pub fn from_texts(
        at: Instant,
        devices: &Devices,
        texts: Texts<'_>,
        usage: Usage,
        fs: Option<FsSample>,
    ) -> Result<Snapshot> {
        let lines = diskstats::parse_wanted(texts.diskstats, &devices.numbers());
        Ok(Snapshot {
            at,
            disks: devices.iter().cloned().zip(lines).collect(),
            stat: procfs::parse_stat(texts.stat)?,
            ticks_per_second: procfs::ticks_per_second(),
            load: procfs::parse_loadavg(texts.loadavg)?,
            memory: procfs::parse_meminfo(texts.meminfo)?,
            usage,
            fs,
            notes: Vec::new(),
        })
    }

    /// The diskstats line of the device with `role`, if it was there.
    pub fn disk(&self, role: Role) -> Option<&DiskStats> {
        self.disks
            .iter()
            .find(|(d, _)| d.role == role)
            .and_then(|(_, s)| s.as_ref())
    }

    /// The diskstats line of `dev`, matched by role and device number, if it was there.
    pub(crate) fn disk_of(&self, dev: &Device) -> Option<&DiskStats> {
        let number = |b: &BlockDev| (b.major, b.minor);
        self.disks
            .iter()
            .find(|(d, _)| d.role == dev.role && number(&d.dev) == number(&dev.dev))
            .and_then(|(_, s)| s.as_ref())
    }
}
