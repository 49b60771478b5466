//! IOzone's throughput mode (`-t N`) with one worker per MPI rank: the worker of
//! `workload::iozone::throughput` (same system calls, same untimed set-up, same stonewall
//! rules), started at every phase by `MPI_Barrier` instead of a thread barrier, its stonewall
//! and failures carried between ranks by the notices of [`super::comm`], timed on each rank
//! and combined at rank 0 on rank 0's clock.
//!
//! IOzone's figures are computed from the ranks' records exactly as from threads' ("children
//! see", "parent sees", min/max/avg per worker, min xfer), plus the true aggregate (all bytes
//! / (latest finish − earliest start)) and the MPI figures of [`super::aggregate`] (phase-start
//! and finish skew, per-rank spread). Stonewalling across ranks: the first rank to finish its
//! loop notifies all others; each notices it at its next poll (every 64 KiB of records, an
//! `MPI_Iprobe` of about 50 ns, in every phase, so a failure elsewhere is seen as fast), stops
//! counting there (readers stop, writers write on to the end of their file), and the lateness
//! of the slowest notice is reported as `stonewall_lag`.

mod combine;

use super::aggregate::PhaseAggregate;
use super::clock::ClockInfo;
use super::comm::Comm;
use super::rank::{Gathered, RankMode};
use crate::metric::Metric;
use crate::workload::iozone::io::{AlignedBuf, Io, RealIo};
use crate::workload::iozone::throughput::{self, worker_phase, Coordination, Job};
use crate::workload::iozone::IozoneParams;
use crate::workload::iozone::{calls::pow2_mask, check_direct, check_space, passes::permutation};
use crate::workload::testfile::{self, TestFile};
use crate::workload::{Observer, Requirements, Target};
use anyhow::Result;
use serde::Serialize;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Values per phase sent from each rank to rank 0: start, timed seconds, finish, bytes
/// counted, bytes moved, stopped (0/1). (Only complete repetitions are combined.)
const REC: usize = 6;
/// Bytes of records between two polls for notices from other ranks.
const POLL_BYTES: u64 = 64 << 10;

/// One rank's part of one phase, as reported (times in seconds since the repetition's
/// earliest start, on rank 0's clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RankWorker {
    /// The rank.
    pub rank: u32,
    /// Start of its timed loop.
    pub start: f64,
    /// Seconds IOzone times: to the stop it noticed, or to the end of its loop.
    pub timed: f64,
    /// When it had finished everything (untimed fsync and close included).
    pub finish: f64,
    /// Bytes before the stop (what IOzone counts).
    pub counted: u64,
    /// Bytes moved in all.
    pub total: u64,
    /// Whether the stonewall cut its measurement short.
    pub stopped: bool,
    /// IOzone's per-worker rate, KiB/s.
    pub rate: f64,
}

/// One phase of one repetition at rank 0.
#[derive(Debug, Clone, Serialize)]
pub struct RankPhases {
    /// Metric phase name (`write`, `read`, …).
    pub phase: &'static str,
    /// Every rank's record.
    pub ranks: Vec<RankWorker>,
    /// The last-done aggregate (items are KiB, so per-rank rates are KiB/s).
    pub agg: PhaseAggregate,
    /// Latest stop noticed − first finish: how late the slowest rank saw the stonewall
    /// (`None` without stonewalling, in fwrite/fread, or when no rank was stopped).
    pub stonewall_lag: Option<f64>,
}

/// One repetition at rank 0.
#[derive(Debug, Clone, Serialize)]
pub struct IozoneRep {
    /// Phases in run order.
    pub phases: Vec<RankPhases>,
    /// Clock offsets used.
    pub clock: ClockInfo,
}

/// The engine on one rank.
pub struct DistIozone {
    comm: Rc<Comm>,
    params: IozoneParams,
    /// This rank's file.
    file: PathBuf,
    /// Ranks whose files share this rank's file system (for the space check).
    fit_ranks: u64,
    /// This rank's file and what was there before (see `workload::testfile`), once claimed.
    claim: Option<TestFile>,
    succeeded: bool,
    /// The current repetition's I/O, buffer and random-read order.
    io: RealIo,
    buf: AlignedBuf,
    order: Vec<u64>,
}

/// The worker's view of the other ranks during one phase.
struct RankCoord<'a> {
    comm: &'a Comm,
    stonewall: bool,
    poll_mask: u64,
    stop: Cell<bool>,
    failed: Cell<bool>,
    obs: Option<&'a dyn Observer>,
    done: Cell<u64>,
}

impl Coordination for RankCoord<'_> {
    fn start_line(&self) {
        self.comm.barrier();
    }
    fn aborted(&self) -> bool {
        self.abandon()
    }
    #[inline]
    fn stop_raised(&self, _i: u64) -> bool {
        // Polled by `abandon`, which the worker calls just before at every check.
        self.stop.get()
    }
    #[inline]
    fn stop_seen(&self) -> bool {
        self.stop.get()
    }
    fn raise_stop(&self) {
        self.comm.notify_finished();
    }
    fn progress(&self, records: u64) {
        if let Some(obs) = self.obs {
            self.done.set(self.done.get() + records);
            obs.progress(self.done.get());
        }
    }
    fn abandon(&self) -> bool {
        let seen = self.comm.poll();
        if seen.failed > 0 {
            self.failed.set(true);
        }
        if self.stonewall && seen.finished > 0 {
            self.stop.set(true);
        }
        self.failed.get()
    }
    fn check_mask(&self, mask: u64) -> u64 {
        mask.min(self.poll_mask)
    }
    fn interrupted(&self) {}
}

impl DistIozone {
    /// The engine for validated throughput-mode parameters (`threads` = number of ranks).
    pub fn new(comm: Rc<Comm>, params: IozoneParams, file: PathBuf, fit_ranks: u64) -> Self {
        DistIozone {
            comm,
            file,
            fit_ranks,
            claim: None,
            succeeded: false,
            io: RealIo::default(),
            buf: AlignedBuf::new(params.record as usize, params.pattern, params.huge_buffer),
            order: Vec::new(),
            params,
        }
    }
}

impl RankMode for DistIozone {
    type Rep = IozoneRep;

    fn name(&self) -> &'static str {
        "iozone"
    }

    /// This rank's file system holds the files of every rank that writes to it.
    fn requirements(&self) -> Requirements {
        Requirements {
            bytes: self.params.file_bytes().saturating_mul(self.fit_ranks),
            inodes: self.fit_ranks,
        }
    }

    fn prepare(&mut self, _target: &Target) -> Result<()> {
        self.succeeded = false;
        let dir = &self.file.parent().unwrap_or(Path::new(".")).to_path_buf();
        crate::workload::check_writable_dir(dir, "-F")?;
        let claim = testfile::claim(&self.file, self.params.overwrite, "-F")?;
        self.file = claim.path.clone();
        self.claim = Some(claim);
        if self.params.direct {
            check_direct(&self.params, dir)?;
        }
        let files = std::slice::from_ref(&self.file);
        check_space(&self.params, dir, self.requirements(), files)
    }

    fn begin(&mut self, _dir: &Path, _clock: Option<&ClockInfo>) -> Result<()> {
        let p = &self.params;
        self.order = permutation(if p.tests.contains(&2) { p.numrecs() } else { 0 });
        self.io = RealIo::default();
        self.buf = AlignedBuf::new(p.record as usize, p.pattern, p.huge_buffer);
        Ok(())
    }

    fn phases(&self) -> Vec<(&'static str, u64)> {
        let n = self.params.numrecs();
        throughput::phases(&self.params.tests)
            .iter()
            .map(|t| (t.phase(), n))
            .collect()
    }

    fn phase(&mut self, i: usize, _dir: &Path, obs: &dyn Observer) -> Result<Vec<f64>> {
        let p = &self.params;
        let comm = &*self.comm;
        let test = throughput::phases(&p.tests)[i];
        let job = Job {
            path: &self.file,
            p,
            order: &self.order,
        };
        let coord = RankCoord {
            comm,
            stonewall: p.stonewall,
            poll_mask: pow2_mask(POLL_BYTES / p.record.max(1)),
            stop: Cell::new(false),
            failed: Cell::new(false),
            obs: comm.is_root().then_some(obs),
            done: Cell::new(0),
        };
        // MPI_Wtime and Instant may be different clocks: convert through one pair.
        let (ref_i, ref_w) = (Instant::now(), comm.wtime());
        let w = |t: Instant| ref_w + t.saturating_duration_since(ref_i).as_secs_f64();
        // The worker's errors name the file.
        match worker_phase(&mut self.io, &job, &coord, &mut self.buf, test) {
            Ok(Some(wp)) => Ok(vec![
                w(wp.start),
                wp.timed,
                w(wp.finish),
                wp.counted as f64,
                wp.total as f64,
                f64::from(u8::from(wp.stopped)),
            ]),
            Ok(None) => Ok(vec![0.0; REC]),
            Err(e) => {
                self.io.close_all();
                Err(e)
            }
        }
    }

    fn between(&mut self) {
        // Every rank flushes its own node's dirty data.
        throughput::pause(Duration::from_secs_f64(self.params.phase_pause));
    }

    fn complete(&mut self) -> Result<Vec<u8>> {
        self.succeeded = true;
        Ok(Vec::new())
    }

    fn combine(&mut self, g: Gathered) -> Result<(IozoneRep, Vec<Metric>)> {
        let p = &self.params;
        let phases = throughput::phases(&p.tests);
        let n = self.comm.size() as usize;
        let (rep, outcome) = combine::combine(&g.recs, g.clock, &phases, n, p.stonewall);
        let mut metrics = outcome.metrics();
        metrics.extend(rep.phases.iter().flat_map(combine::mpi_metrics));
        Ok((rep, metrics))
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        let keep = self.params.keep && self.succeeded;
        self.claim
            .take()
            .map_or(Ok(()), |c| testfile::release(&c, keep))
    }
}

#[cfg(test)]
mod tests {
    use crate::workload::iozone::calls::pow2_mask;

    #[test]
    fn poll_masks_are_powers_of_two() {
        assert_eq!(pow2_mask(16), 15);
        assert_eq!(pow2_mask(17), 15);
        assert_eq!(pow2_mask(1), 0);
        assert_eq!(pow2_mask(0), 0);
    }
}
