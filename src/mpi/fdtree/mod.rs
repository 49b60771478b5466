//! The fdtree engine as one MPI rank: the same tree walk as `workload::fdtree`, one worker
//! per rank, every phase between a barrier and a closing collective, timed with `MPI_Wtime`
//! and combined at rank 0 by the rules of [`super::aggregate`].
//!
//! Layouts: **private** (the default) gives every rank its own fdtree tree
//! `LEVEL0.<host0>.<pid0>.r<rank>` in the shared start directory (as people ran fdtree copies
//! side by side, now synchronised); **shared** (`--shared`) is described in
//! [`super::shared_tree`].

mod walk;

use super::aggregate::{self, PhaseAggregate, RankPhase, StonewallMark};
use super::clock::ClockInfo;
use super::comm::Comm;
use super::rank::{Gathered, RankMode};
use super::shared_tree::dirs_of_rank;
use crate::metric::Metric;
use crate::workload::fdtree::sweep::sweep_partial;
use crate::workload::fdtree::tree::{FsOps, NullOps};
use crate::workload::fdtree::{
    open_start_dir, Backend, Counts, FdtreeParams, Phase, BLOCK, PHASES,
};
use crate::workload::{Observer, Requirements, Target};
use anyhow::Result;
use rustix::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Values per phase sent from each rank to rank 0.
pub(super) const REC: usize = 8;

/// How the ranks' trees are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// One fdtree tree per rank.
    Private,
    /// One tree for all ranks, directories split, files of every rank in every directory.
    Shared,
}

/// One phase of one repetition at rank 0.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DistPhase {
    /// The phase's stored name ([`Phase::as_str`]).
    pub phase: &'static str,
    /// Every rank's record; times in seconds since the repetition's earliest start, on rank
    /// 0's clock.
    pub ranks: Vec<RankPhase>,
    /// The combined figures.
    pub agg: PhaseAggregate,
}

/// One repetition at rank 0.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DistRep {
    /// The phases in run order.
    pub phases: Vec<DistPhase>,
    /// Clock offsets used.
    pub clock: ClockInfo,
    /// Wall-clock time when the repetition started.
    #[serde(skip)]
    pub started: chrono::DateTime<chrono::Local>,
}

/// How the job runs fdtree (the same on every rank but `fit_ranks`).
#[derive(Debug, Clone)]
pub struct Job {
    /// Validated parameters (`threads` is 1).
    pub params: FdtreeParams,
    /// How the ranks' trees are laid out.
    pub layout: Layout,
    /// Whether each phase is also measured up to the first rank's finish.
    pub stonewall: bool,
    /// Names the job's trees.
    pub tag: String,
    /// How many ranks (this one included) put their trees on the file system this rank
    /// sees, for the space check.
    pub fit_ranks: u64,
}

/// The engine on one rank.
pub struct DistFdtree {
    comm: Rc<Comm>,
    job: Job,
    /// A repetition started and may have left a tree behind.
    live: Option<PathBuf>,
    /// The start directory of the current repetition.
    base: Base,
    /// Wall-clock time when the current repetition started.
    started: chrono::DateTime<chrono::Local>,
}

/// The start directory as the walk sees it.
enum Base {
    Fs { dir: OwnedFd, sync: OwnedFd },
    Null,
}

impl DistFdtree {
    /// The engine of one rank of `job`.
    pub fn new(comm: Rc<Comm>, job: Job) -> Self {
        DistFdtree {
            comm,
            job,
            live: None,
            base: Base::Null,
            started: chrono::Local::now(),
        }
    }

    /// Name of this rank's tree root inside the start directory.
    pub fn root_name(&self) -> String {
        match self.job.layout {
            Layout::Private => format!("LEVEL0.{}.r{}", self.job.tag, self.comm.rank()),
            Layout::Shared => format!("LEVEL0.{}.shared", self.job.tag),
        }
    }

    fn tree(&self) -> Counts {
        // Validated by the caller; zeros only if it was not.
        self.job.params.counts().unwrap_or_default()
    }

    /// Items of `phase` for `rank`.
    pub fn items_in(&self, phase: Phase, rank: u32) -> u64 {
        let t = self.tree();
        match (phase.on_dirs(), self.job.layout) {
            (false, _) => t.files,
            (true, Layout::Private) => t.dirs,
            (true, Layout::Shared) => dirs_of_rank(
                self.job.params.dirs,
                self.job.params.levels,
                u64::from(rank),
                u64::from(self.comm.size()),
            ),
        }
    }

    /// Directories, files and bytes of the whole job per repetition.
    pub fn job_counts(&self) -> Counts {
        let t = self.tree();
        let n = u64::from(self.comm.size());
        Counts {
            dirs: match self.job.layout {
                Layout::Private => t.dirs.saturating_mul(n),
                Layout::Shared => t.dirs,
            },
            files: t.files.saturating_mul(n),
            bytes: t.bytes.saturating_mul(n),
        }
    }

    /// Open the start directory; check that the tree does not exist yet.
    fn open_base(&self, dir: &Path) -> Result<Base> {
        if self.job.params.backend == Backend::Null {
            return Ok(Base::Null);
        }
        let root = dir.join(self.root_name());
        let checks = self.job.layout == Layout::Private || self.comm.is_root();
        if checks && root.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} already exists (left by an earlier run?); remove it first",
                root.display()
            );
        }
        let (dir, sync) = open_start_dir(dir)?;
        Ok(Base::Fs { dir, sync })
    }
}

impl RankMode for DistFdtree {
    type Rep = DistRep;

    fn name(&self) -> &'static str {
        "fdtree"
    }

    /// What this rank's file system must hold: the job's share of every rank that writes to it.
    fn requirements(&self) -> Requirements {
        if self.job.params.backend == Backend::Null {
            return Requirements::default();
        }
        let job = self.job_counts();
        let n = u64::from(self.comm.size()).max(1);
        let bytes = job.bytes + job.dirs * BLOCK;
        let inodes = job.dirs + job.files;
        Requirements {
            bytes: (bytes / n).saturating_mul(self.job.fit_ranks),
            inodes: (inodes / n + 1).saturating_mul(self.job.fit_ranks),
        }
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        if self.job.params.backend == Backend::Null {
            return Ok(());
        }
        crate::workload::check_writable_dir(target.dir(), "-o")?;
        crate::workload::check_fits(target.dir(), self.requirements(), "this fdtree run")
    }

    fn begin(&mut self, dir: &Path, _clock: Option<&ClockInfo>) -> Result<()> {
        self.started = chrono::Local::now();
        self.base = self.open_base(dir)?;
        if matches!(self.base, Base::Fs { .. }) {
            self.live = Some(dir.join(self.root_name()));
        }
        Ok(())
    }

    fn phases(&self) -> Vec<(&'static str, u64)> {
        PHASES
            .iter()
            .map(|&p| (p.as_str(), self.items_in(p, 0)))
            .collect()
    }

    fn phase(&mut self, i: usize, _dir: &Path, obs: &dyn Observer) -> Result<Vec<f64>> {
        let phase = PHASES[i];
        self.comm.barrier();
        match &self.base {
            Base::Fs { dir, sync } => {
                let fb = self.job.params.file_bytes();
                self.run_phase(phase, || FsOps::new(fb), dir, Some(sync), obs)
            }
            Base::Null => self.run_phase(phase, || NullOps, &(), None, obs),
        }
    }

    fn complete(&mut self) -> Result<Vec<u8>> {
        // The full cycle removed the trees.
        self.live = None;
        self.base = Base::Null;
        Ok(Vec::new())
    }

    /// Rank 0: the gathered records as per-phase aggregates.
    fn combine(&mut self, g: Gathered) -> Result<(DistRep, Vec<Metric>)> {
        let (all, clock) = (&g.recs, g.clock);
        let per_rank = PHASES.len() * REC;
        let n = self.comm.size() as usize;
        // Report times as seconds since the earliest start of the first phase.
        let t0 = (0..n)
            .map(|r| clock.to_rank0(r, all[r * per_rank + 2]))
            .fold(f64::INFINITY, f64::min);
        let (phases, metrics): (Vec<DistPhase>, Vec<Vec<Metric>>) = PHASES
            .iter()
            .enumerate()
            .filter_map(|(pi, &phase)| {
                let ranks: Vec<RankPhase> = (0..n)
                    .map(|r| {
                        let v = &all[r * per_rank + pi * REC..][..REC];
                        let t = |x: f64| clock.to_rank0(r, x) - t0;
                        RankPhase {
                            rank: r as u32,
                            items: v[0] as u64,
                            bytes: v[1] as u64,
                            start: t(v[2]),
                            end: t(v[3]),
                            sync: v[4],
                            stonewall: (v[7] > 0.0).then(|| StonewallMark {
                                items: v[5] as u64,
                                at: t(v[6]),
                            }),
                        }
                    })
                    .collect();
                // `None` only for zero ranks, which MPI never has.
                let agg = aggregate::aggregate(&ranks)?;
                let (name, unit) = (phase.as_str(), phase.rate_unit());
                let metrics = aggregate::phase_metrics(name, &agg, unit, phase.writes_data());
                let phase = DistPhase {
                    phase: name,
                    ranks,
                    agg,
                };
                Some((phase, metrics))
            })
            .unzip();
        let rep = DistRep {
            phases,
            clock,
            started: self.started,
        };
        Ok((rep, metrics.concat()))
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        let leftover = self.live.take();
        self.base = Base::Null;
        // Shared tree: only rank 0 removes it (the driver waited until every rank stopped).
        let shared = self.job.layout == Layout::Shared;
        let mine = !shared || self.comm.is_root();
        match leftover {
            Some(p) if mine && !self.job.params.keep && p.symlink_metadata().is_ok() => {
                // Only fdtree's own names go; anything else stays and is named.
                let ranks = shared.then(|| u64::from(self.comm.size()));
                sweep_partial(&p, &self.job.params.sweep_shape(ranks))
            }
            _ => Ok(()),
        }
    }
}
