//! One rank mode for every engine: what an engine does as one MPI rank ([`RankMode`]: its
//! checks, the set-up of a repetition, each phase, how rank 0 combines the ranks' records),
//! and the one driver ([`Ranks`]) that runs any of them as a [`Workload`] with the same
//! protocol.
//!
//! A repetition, on every rank: measure the clocks; set up (agreed); per phase, run this
//! rank's share, tell the others at once if it failed ([`Comm::notify_failed`]) and close
//! the phase with [`Comm::settle`] (the closing collective: a failure anywhere ends the
//! repetition after this phase on every rank); agree on the verdict; gather every rank's
//! records (and bytes) at rank 0, which combines them on its own clock into the figures it
//! stores and reports. Set-up and clean-up are agreed the same way, so an error on one rank
//! ends the run on all of them.

use super::clock::ClockInfo;
use super::comm::Comm;
use crate::metric::Metric;
use crate::workload::{Observer, Requirements, Target, Workload};
use anyhow::Result;
use std::path::Path;
use std::rc::Rc;

/// Rounds of the clock ping-pong per repetition.
const CLOCK_ROUNDS: usize = 8;

/// An engine as one rank of an MPI job. Every method but `combine` runs on every rank;
/// the driver agrees on the errors they return.
pub trait RankMode {
    /// What rank 0 keeps of one repetition (the per-rank figures of reports and JSON).
    type Rep: serde::Serialize;
    /// The engine's name.
    fn name(&self) -> &'static str;
    /// What the file system this rank sees must hold.
    fn requirements(&self) -> Requirements;
    /// This rank's checks before the first repetition.
    fn prepare(&mut self, target: &Target) -> Result<()>;
    /// This rank's set-up of a repetition, after the clocks were measured (`clock` on rank 0).
    fn begin(&mut self, _dir: &Path, _clock: Option<&ClockInfo>) -> Result<()> {
        Ok(())
    }
    /// The phases of a repetition: the name rank 0's progress shows and its items.
    fn phases(&self) -> Vec<(&'static str, u64)>;
    /// Phase `i` on this rank: its record for rank 0 (the same length on every rank), or an
    /// error of its own (a stop because another rank failed is not one).
    fn phase(&mut self, i: usize, dir: &Path, obs: &dyn Observer) -> Result<Vec<f64>>;
    /// Between two phases, on every rank.
    fn between(&mut self) {}
    /// After a complete repetition: bytes this rank sends rank 0 beside its records.
    fn complete(&mut self) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }
    /// Rank 0: what the ranks sent, as the repetition and its metrics.
    fn combine(&mut self, all: Gathered) -> Result<(Self::Rep, Vec<Metric>)>;
    /// This rank's clean-up, once every rank has stopped.
    fn cleanup(&mut self, target: &Target) -> Result<()>;
    /// Rank 0: latency histograms of the last repetition, for the store.
    fn take_histograms(&mut self) -> Vec<crate::metric::Histogram> {
        Vec::new()
    }
}

/// What rank 0 gathered of one repetition.
pub struct Gathered {
    /// Every rank's records: each rank's phases in turn, by rank.
    pub recs: Vec<f64>,
    /// The bytes of [`RankMode::complete`], by rank.
    pub bytes: Vec<Vec<u8>>,
    /// The clock offsets used.
    pub clock: ClockInfo,
}

/// Any [`RankMode`] run as a workload by the one protocol.
pub struct Ranks<M: RankMode> {
    comm: Rc<Comm>,
    /// The engine's rank mode.
    pub mode: M,
    /// Also measure the clocks of ranks on rank 0's node (`FSLAB_MPI_CLOCK_CHECK=1`).
    check_clocks: bool,
    /// Rank 0: every completed repetition.
    pub reps: Vec<M::Rep>,
}

impl<M: RankMode> Ranks<M> {
    /// The driver of `mode` (collective: every rank learns rank 0's clock-check setting).
    pub fn new(comm: &Rc<Comm>, mode: M) -> Self {
        Ranks {
            check_clocks: super::job::clock_check(comm),
            comm: Rc::clone(comm),
            mode,
            reps: Vec::new(),
        }
    }
}

impl<M: RankMode> Workload for Ranks<M> {
    fn name(&self) -> &'static str {
        self.mode.name()
    }

    fn requirements(&self) -> Requirements {
        self.mode.requirements()
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        self.comm.agree(self.mode.prepare(target))
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        let comm = &*self.comm;
        let clock = comm.clocks(CLOCK_ROUNDS, self.check_clocks);
        comm.agree(self.mode.begin(target.dir(), clock.as_ref()))?;
        let phases = self.mode.phases();
        let mut recs = Vec::new();
        let mut failed = None;
        for (i, &(name, items)) in phases.iter().enumerate() {
            if comm.is_root() {
                obs.phase_started(name, items);
            }
            let run = self.mode.phase(i, target.dir(), obs);
            if run.is_err() {
                comm.notify_failed();
            }
            let any_failed = comm.settle();
            if comm.is_root() {
                obs.phase_finished(name);
            }
            match run {
                Ok(rec) => recs.extend(rec),
                Err(e) => failed = Some(e),
            }
            if any_failed {
                break;
            }
            if i + 1 < phases.len() {
                self.mode.between();
            }
        }
        comm.agree(failed.map_or(Ok(()), Err))?;
        let bytes = comm.agree(self.mode.complete())?;
        let combined = match (comm.gather(&recs), comm.gather_bytes(&bytes), clock) {
            (Some(recs), Some(bytes), Some(clock)) => {
                self.mode.combine(Gathered { recs, bytes, clock }).map(Some)
            }
            _ => Ok(None),
        };
        let Some((rep, metrics)) = comm.agree(combined)? else {
            return Ok(Vec::new());
        };
        self.reps.push(rep);
        Ok(metrics)
    }

    fn cleanup(&mut self, target: &Target) -> Result<()> {
        // Every rank has stopped before anything is removed.
        self.comm.barrier();
        self.comm.agree(self.mode.cleanup(target))
    }

    fn take_histograms(&mut self) -> Vec<crate::metric::Histogram> {
        self.mode.take_histograms()
    }
}
