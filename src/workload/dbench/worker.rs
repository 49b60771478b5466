//! One client thread of a dbench run: the start gate, the loop over loadfile passes with
//! per-operation timing into HDR histograms, and the counters the progress line reads.

use super::client::{Client, OpError};
use super::conduct::LocalRep;
use super::ops::OpKind;
use super::DbenchParams;
use crate::sysinfo::{free_space, FreeSpace};
use crate::units::fmt_bytes;
use anyhow::anyhow;
use hdrhistogram::Histogram;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Counters one client publishes for the progress line (its own cache line).
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Slot {
    /// Loadfile lines executed.
    pub(crate) lines: AtomicU64,
    /// ReadX/WriteX bytes, warmup included.
    pub(crate) bytes: AtomicU64,
    /// ReadX/WriteX bytes after the warmup.
    pub(crate) measured_bytes: AtomicU64,
    /// Largest latency since the progress line last took it (reset to 0 when read).
    pub(crate) max_latency_ns: AtomicU64,
}

/// The start line: clients arrive and wait; the coordinator opens it when all have arrived
/// and sets the common start instant (dbench's SIGSTOP/SIGCONT release).
#[derive(Default)]
pub(super) struct Gate {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
}

impl Gate {
    pub(super) fn arrive_and_wait(&self, start: &OnceLock<Instant>) -> Instant {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.0 += 1;
        self.cv.notify_all();
        while !g.1 {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        *start.get_or_init(Instant::now)
    }

    /// Wait until `n` clients have arrived, ask `release` for the start instant, then open.
    pub(super) fn open_when(
        &self,
        n: usize,
        start: &OnceLock<Instant>,
        release: impl FnOnce() -> Instant,
    ) -> Instant {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while g.0 < n {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        // The clients wait on the condition variable, not the lock: releasing it while the
        // conductor waits (for other processes) lets nobody past the gate.
        drop(g);
        let t0 = *start.get_or_init(release);
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        g.1 = true;
        self.cv.notify_all();
        t0
    }
}

impl ClientFailure {
    /// Turns a client's failure into the run's error.
    pub(super) fn context_for(self, id: usize, dir: &Path) -> anyhow::Error {
        match self {
            ClientFailure::Stopped => anyhow!(crate::signal::Interrupted),
            ClientFailure::Op(e, space) => match e.errno {
                Some(n @ (libc::ENOSPC | libc::EDQUOT)) => {
                    crate::error::usage(no_space_message(n, id, dir, &e, space))
                }
                _ => anyhow!("client {id} failed in {}: loadfile {e}", dir.display()),
            },
        }
    }
}

/// "no space left on DIR (ENOSPC): 12.0 MiB free of 1.0 GiB; …": the errno, the target's
/// free space and size (statvfs, when the write failed), the operation, the fix.
fn no_space_message(
    errno: i32,
    id: usize,
    dir: &Path,
    e: &OpError,
    space: Option<FreeSpace>,
) -> String {
    let (what, name, fix) = if errno == libc::EDQUOT {
        (
            "disk quota exceeded",
            "EDQUOT",
            "raise the quota, use fewer clients or a bigger file system",
        )
    } else {
        (
            "no space left",
            "ENOSPC",
            "use fewer clients or a bigger file system",
        )
    };
    let space = match space {
        Some(f) => format!(
            "{} free of {}",
            fmt_bytes(f.bytes),
            fmt_bytes(f.total_bytes)
        ),
        None => "free space unknown (statvfs failed)".into(),
    };
    format!(
        "{what} on {} ({name}): {space}, at client {id}'s loadfile line {} ({} {}); {fix}",
        dir.display(),
        e.line,
        e.op,
        e.subject
    )
}

/// Why a client stopped early.
pub(super) enum ClientFailure {
    Stopped,
    /// A failed operation, with the target's free space when it failed for lack of space
    /// (taken while the client's handles still hold what they hold).
    Op(OpError, Option<FreeSpace>),
}

/// One client's loop: passes over the loadfile until the end of the run. Its results are a
/// process's results of one client, its end counted from `t0`.
pub(super) fn run_client(
    mut c: Client<'_>,
    p: &DbenchParams,
    slot: &Slot,
    abort: &AtomicBool,
    t0: Instant,
) -> std::result::Result<LocalRep, ClientFailure> {
    let lf = &*p.loadfile;
    let warm_end = t0 + p.warmup;
    let end = warm_end + p.duration;
    let mut measuring = p.warmup.is_zero();
    let mut hists: Vec<Option<Histogram<u64>>> = (0..OpKind::COUNT).map(|_| None).collect();
    let (mut lines, mut bytes, mut mbytes, mut mops, mut passes) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut max_lag = Duration::ZERO;
    'run: loop {
        let pass_start = Instant::now();
        for op in &lf.ops {
            if abort.load(Ordering::Relaxed) || crate::signal::interrupted() {
                if crate::signal::interrupted() {
                    return Err(ClientFailure::Stopped);
                }
                break 'run;
            }
            if let Some(t) = op.time.filter(|_| p.timestamps) {
                let target = pass_start + Duration::from_secs_f64(t);
                let now = Instant::now();
                if target > now {
                    std::thread::sleep(target.min(end) - now);
                    if Instant::now() >= end {
                        break 'run;
                    }
                } else {
                    max_lag = max_lag.max(now - target);
                }
            }
            let s = Instant::now();
            let r = c.exec(op);
            let e = Instant::now();
            let n = r.map_err(|e| {
                let full = matches!(e.errno, Some(libc::ENOSPC | libc::EDQUOT));
                let space = full.then(|| free_space(c.root()).ok()).flatten();
                ClientFailure::Op(e, space)
            })?;
            if e >= end {
                break 'run;
            }
            let ns = (e - s).as_nanos() as u64;
            lines += 1;
            bytes += n;
            slot.lines.store(lines, Ordering::Relaxed);
            slot.bytes.store(bytes, Ordering::Relaxed);
            slot.max_latency_ns.fetch_max(ns, Ordering::Relaxed);
            measuring |= e >= warm_end;
            if measuring {
                let h = hists[op.kind.index()].get_or_insert_with(|| {
                    // Auto-resizing, 3 significant digits: grows with the largest latency seen.
                    let mut h = Histogram::<u64>::new(3).expect("3 significant digits are valid");
                    h.auto(true);
                    h
                });
                // An auto-resizing histogram only fails on counter overflow, which a u64
                // count cannot reach in a run.
                let _ = h.record(ns.max(1));
                mbytes += n;
                mops += 1;
                slot.measured_bytes.store(mbytes, Ordering::Relaxed);
            }
        }
        passes += 1;
        if p.run_once {
            break;
        }
    }
    let last_finish = Instant::now().saturating_duration_since(t0).as_secs_f64();
    c.close_all();
    Ok(LocalRep {
        last_finish,
        measured_bytes: mbytes,
        measured_ops: mops,
        passes,
        lines,
        max_lag: max_lag.as_secs_f64(),
        hists,
    })
}
