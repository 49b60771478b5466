//! Was a repetition disturbed by something other than the cell? Pure functions over the
//! snapshots at its start and end: I/O on a backing device beyond what the cell's own
//! devices did, CPU steal, more runnable tasks than CPUs, other processes' CPU time.
//! The thresholds are named constants; why each has its value is said beside it and in
//! `doc/telemetry.md`.

use super::diskstats;
use super::procfs::CpuSplit;
use super::Snapshot;
use crate::units::fmt_bytes;
use std::fmt;

/// Other I/O always tolerated on a backing device, in bytes, whatever the window: one
/// commit of the backing file system's journal with the inode and allocation updates of
/// the image files (a few hundred KiB) fits several times.
pub const OTHER_IO_FLOOR_BYTES: u64 = 1 << 20;

/// Other I/O tolerated per second of window, in bytes: the background of a Linux machine
/// with nothing to do (journald, log rotation, atime and the backing file system's 5 s
/// journal commits). Measured on the development VM over 2 minutes: see
/// `doc/telemetry.md`; 1 MiB/s is several times that and far below any disturbance that
/// moves a result (a competing `dd` writes hundreds of MiB/s).
pub const OTHER_IO_BYTES_PER_SEC: u64 = 1 << 20;

/// Other I/O tolerated as a fraction of the bytes the cell's devices moved: the backing
/// file system's own metadata for the images (block allocation in a sparse image, extent
/// conversion, bitmaps, its journal) adds to each byte that goes through a loop device.
/// Measured on ext4 backing files (`doc/telemetry.md`): +0.4% for 32 MiB of streaming
/// writes, but 11–17% for dbench (many small synced writes into new regions of sparse
/// images). A quarter covers that with room; a competing writer moves many times the cell's
/// own bytes (0.8–1.9 GiB against 33–115 MB in the study test).
pub const OTHER_IO_FRACTION: f64 = 0.25;

/// CPU steal above this share of all CPUs' time marks a repetition. A healthy VM shows
/// (almost) none; 2% of the CPUs taken away is already the size of the run-to-run variation
/// a study tries to resolve (its target confidence interval is typically ±5%).
pub const STEAL_MAX_PCT: f64 = 2.0;

/// Other processes' user-mode CPU above this share of all CPUs' time marks a repetition.
/// Kernel-mode time is not counted: the cell's own I/O runs in kernel threads (loop workers,
/// jbd2, flusher kworkers, xfsaild) that are not fslab's and would look like "others".
/// /proc/stat is sampled per tick (10 ms), so small windows need the floor below too.
pub const OTHER_CPU_MAX_PCT: f64 = 5.0;

/// Other processes' CPU below this many CPU-seconds is never a disturbance (five USER_HZ
/// ticks: the sampling noise of /proc/stat).
pub const OTHER_CPU_FLOOR_S: f64 = 0.05;

/// The limits [`interference`] applies; `Default` is the named constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// See [`OTHER_IO_FLOOR_BYTES`].
    pub other_io_floor_bytes: u64,
    /// See [`OTHER_IO_BYTES_PER_SEC`].
    pub other_io_bytes_per_sec: u64,
    /// See [`OTHER_IO_FRACTION`].
    pub other_io_fraction: f64,
    /// See [`STEAL_MAX_PCT`].
    pub steal_max_pct: f64,
    /// See [`OTHER_CPU_MAX_PCT`].
    pub other_cpu_max_pct: f64,
    /// See [`OTHER_CPU_FLOOR_S`].
    pub other_cpu_floor_s: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            other_io_floor_bytes: OTHER_IO_FLOOR_BYTES,
            other_io_bytes_per_sec: OTHER_IO_BYTES_PER_SEC,
            other_io_fraction: OTHER_IO_FRACTION,
            steal_max_pct: STEAL_MAX_PCT,
            other_cpu_max_pct: OTHER_CPU_MAX_PCT,
            other_cpu_floor_s: OTHER_CPU_FLOOR_S,
        }
    }
}

/// The I/O of one backing device and of the cell devices whose images it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackingIo {
    /// Its kernel name (`vda`).
    pub name: String,
    /// Bytes read from it.
    pub read_bytes: u64,
    /// Bytes written to it.
    pub write_bytes: u64,
    /// Bytes read by the cell devices it backs.
    pub cell_read_bytes: u64,
    /// Bytes written by the cell devices it backs.
    pub cell_write_bytes: u64,
    /// Whether reads can be compared: every loop device on it does direct I/O. A buffered
    /// loop reads its image through the page cache, with readahead, so its reads do not
    /// map one for one.
    pub reads_comparable: bool,
}

/// What a window (a repetition, or one settle poll) looked like.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Its length in seconds.
    pub seconds: f64,
    /// Online CPUs.
    pub cpus: u32,
    /// Each backing device.
    pub backing: Vec<BackingIo>,
    /// Steal in % of all CPUs' time (`None` for a window shorter than a tick).
    pub steal_pct: Option<f64>,
    /// CPU-seconds of all CPUs in the window.
    pub cpu_seconds: f64,
    /// User-mode CPU-seconds of processes other than fslab.
    pub other_cpu_seconds: f64,
    /// Runnable tasks other than the reading thread, at the start and at the end.
    pub runnable_others: [u64; 2],
}

impl Window {
    /// The window from `start` to `end`.
    pub fn between(start: &Snapshot, end: &Snapshot) -> Window {
        let dev_delta = |dev: &super::Device, e: &Option<diskstats::DiskStats>| {
            Some(diskstats::delta(start.disk_of(dev), e.as_ref()?))
        };
        let mut backing = Vec::new();
        for (b, e) in end.disks.iter().filter(|(d, _)| !d.role.is_cell()) {
            let Some(bd) = dev_delta(b, e) else {
                continue;
            };
            let mut io = BackingIo {
                name: b.dev.name.clone(),
                read_bytes: bd.read_bytes,
                write_bytes: bd.write_bytes,
                cell_read_bytes: 0,
                cell_write_bytes: 0,
                reads_comparable: true,
            };
            for (c, e) in end
                .disks
                .iter()
                .filter(|(d, _)| d.backed_by == Some(b.role))
            {
                let cd = dev_delta(c, e).unwrap_or_default();
                io.cell_read_bytes += cd.read_bytes;
                io.cell_write_bytes += cd.write_bytes;
                io.reads_comparable &= c.direct_io == Some(true);
            }
            backing.push(io);
        }
        let c = CpuSplit::between(&start.stat.cpu, &end.stat.cpu);
        let hz = end.ticks_per_second.max(1) as f64;
        let own_user = end.usage.user_us.saturating_sub(start.usage.user_us) as f64 / 1e6;
        let total = c.total() as f64;
        Window {
            seconds: end.at.saturating_duration_since(start.at).as_secs_f64(),
            cpus: end.stat.cpus.max(1),
            backing,
            steal_pct: (total > 0.0).then(|| c.steal as f64 / total * 100.0),
            cpu_seconds: total / hz,
            other_cpu_seconds: (c.user as f64 / hz - own_user).max(0.0),
            runnable_others: [
                start.stat.procs_running.saturating_sub(1),
                end.stat.procs_running.saturating_sub(1),
            ],
        }
    }
}

/// One reason a window was disturbed.
#[derive(Debug, Clone, PartialEq)]
pub enum Disturbance {
    /// I/O on a backing device that the cell's devices did not cause.
    OtherIo {
        /// The backing device.
        device: String,
        /// Bytes beyond the cell's own.
        bytes: u64,
    },
    /// The hypervisor took CPU time.
    Steal {
        /// % of all CPUs' time.
        pct: f64,
    },
    /// More tasks wanted to run than there are CPUs, at both ends of the window.
    Load {
        /// The smaller of the two counts of runnable tasks besides fslab's reader.
        runnable: u64,
        /// Online CPUs.
        cpus: u32,
    },
    /// Other processes used CPU.
    OtherCpu {
        /// Their user-mode CPU-seconds.
        seconds: f64,
        /// As % of all CPUs' time.
        pct: f64,
    },
}

impl fmt::Display for Disturbance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disturbance::OtherIo { device, bytes } => {
                write!(f, "{} of other I/O on {device}", fmt_bytes(*bytes))
            }
            Disturbance::Steal { pct } => write!(f, "CPU steal {pct:.1}% of all CPUs"),
            Disturbance::Load { runnable, cpus } => {
                write!(f, "{runnable} other runnable tasks on {cpus} CPUs")
            }
            Disturbance::OtherCpu { seconds, pct } => write!(
                f,
                "other processes used {seconds:.2} CPU-s ({pct:.1}% of all CPUs)"
            ),
        }
    }
}

/// The judgement of one window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// Every disturbance found; empty for a quiet window.
    pub disturbances: Vec<Disturbance>,
}

impl Verdict {
    /// Whether nothing disturbed the window.
    pub fn is_quiet(&self) -> bool {
        self.disturbances.is_empty()
    }

    /// The other I/O found on backing devices, in bytes.
    pub fn other_io_bytes(&self) -> u64 {
        self.disturbances
            .iter()
            .map(|d| match d {
                Disturbance::OtherIo { bytes, .. } => *bytes,
                _ => 0,
            })
            .sum()
    }
}

impl fmt::Display for Verdict {
    /// One line: `quiet`, or the disturbances joined with `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_quiet() {
            return f.write_str("quiet");
        }
        let parts: Vec<String> = self.disturbances.iter().map(|d| d.to_string()).collect();
        f.write_str(&parts.join("; "))
    }
}

/// Judge a window against the thresholds.
pub fn interference(w: &Window, t: &Thresholds) -> Verdict {
    let mut v = Vec::new();
    for b in &w.backing {
        let mut other = b.write_bytes.saturating_sub(b.cell_write_bytes);
        let mut cell = b.cell_write_bytes;
        if b.reads_comparable {
            other += b.read_bytes.saturating_sub(b.cell_read_bytes);
            cell += b.cell_read_bytes;
        }
        let allowed = t.other_io_floor_bytes as f64
            + t.other_io_bytes_per_sec as f64 * w.seconds
            + t.other_io_fraction * cell as f64;
        if other as f64 > allowed {
            v.push(Disturbance::OtherIo {
                device: b.name.clone(),
                bytes: other,
            });
        }
    }
    if let Some(pct) = w.steal_pct.filter(|p| *p > t.steal_max_pct) {
        v.push(Disturbance::Steal { pct });
    }
    let runnable = w.runnable_others[0].min(w.runnable_others[1]);
    if runnable > u64::from(w.cpus) {
        v.push(Disturbance::Load {
            runnable,
            cpus: w.cpus,
        });
    }
    if w.cpu_seconds > 0.0 {
        let pct = w.other_cpu_seconds / w.cpu_seconds * 100.0;
        if pct > t.other_cpu_max_pct && w.other_cpu_seconds > t.other_cpu_floor_s {
            v.push(Disturbance::OtherCpu {
                seconds: w.other_cpu_seconds,
                pct,
            });
        }
    }
    Verdict { disturbances: v }
}

#[cfg(test)]
#[path = "interference_tests.rs"]
mod tests;
