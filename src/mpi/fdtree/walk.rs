//! The work of one phase on one rank: fdtree's walk in either layout, the notices from the
//! other ranks polled as it goes, and the record sent to rank 0.

use super::{DistFdtree, Layout};
use crate::mpi::shared_tree::LevelWalker;
use crate::workload::fdtree::tree::{Ops, Walker};
use crate::workload::fdtree::Phase;
use crate::workload::Observer;
use anyhow::{anyhow, Context, Result};
use rustix::fd::OwnedFd;
use std::cell::Cell;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

/// Items between two polls for notices from other ranks: small enough that a stonewall or a
/// failure elsewhere is seen within a fraction of a millisecond on fast file systems, large
/// enough that the poll (`MPI_Iprobe`, well under a microsecond) costs nothing measurable.
pub const CHECK_EVERY: u64 = 64;

impl DistFdtree {
    /// One phase on this rank, generic over the operations: the record sent to rank 0, or
    /// a real local failure (not "stopped because another rank failed").
    pub(super) fn run_phase<O: Ops, F: Fn() -> O>(
        &self,
        phase: Phase,
        make_ops: F,
        base: &O::Dir,
        sync: Option<&OwnedFd>,
        obs: &dyn Observer,
    ) -> Result<Vec<f64>> {
        let comm = &*self.comm;
        let progress = AtomicU64::new(0);
        let peer_failed = Cell::new(false);
        let mark: Cell<Option<(u64, f64)>> = Cell::new(None);
        let stop = || {
            if crate::signal::interrupted() {
                return true;
            }
            let seen = comm.poll();
            if seen.failed > 0 {
                peer_failed.set(true);
                return true;
            }
            let done = progress.load(Ordering::Relaxed);
            if self.job.stonewall && seen.finished > 0 && mark.get().is_none() {
                mark.set(Some((done, comm.wtime())));
            }
            if comm.is_root() {
                obs.progress(done);
            }
            false
        };
        let mut w = Walker::new(make_ops(), self.job.params.shape(), &progress, &stop);
        w.check_every = CHECK_EVERY;
        let start = comm.wtime();
        // Look once before starting, so a rank that starts after the first finisher is done
        // is marked with 0 items. Never skip the walk on what it sees (a peer's failure, a
        // signal): the shared layout's directory phases contain collective steps that every
        // rank must take; the walk notices the stop at its first check and takes them.
        let _ = stop();
        // The work of the phase, every item counted in `progress`.
        let mut result = match (self.job.layout, phase) {
            (Layout::Private, _) => self.tree_phase(phase, w, base),
            // Every rank's files, with its suffix, in every directory.
            (Layout::Shared, Phase::FileCreate | Phase::FileRemove) => {
                w.rank_files = Some(self.comm.rank());
                self.tree_phase(phase, w, base)
            }
            (Layout::Shared, Phase::DirCreate | Phase::DirRemove) => {
                let remove = phase == Phase::DirRemove;
                self.shared_dirs(remove, LevelWalker::new(w), base)
            }
        };
        let mut sync_secs = 0.0;
        if result.is_ok() && self.job.params.sync {
            if let Some(fd) = sync {
                let t = comm.wtime();
                result = rustix::fs::syncfs(fd).map_err(|e| anyhow!("syncfs after {phase}: {e}"));
                sync_secs = comm.wtime() - t;
            }
        }
        let end = comm.wtime();
        let items = progress.load(Ordering::Relaxed);
        if result.is_ok() && self.job.stonewall {
            comm.notify_finished();
        }
        let (sw_items, sw_at) = mark.get().unwrap_or((items, end));
        let bytes = if phase.writes_data() {
            items * self.job.params.file_bytes()
        } else {
            0
        };
        let rec = vec![
            items as f64,
            bytes as f64,
            start,
            end,
            sync_secs,
            sw_items as f64,
            sw_at,
            if self.job.stonewall { 1.0 } else { 0.0 },
        ];
        match result {
            Ok(()) => Ok(rec),
            // Stopped because another rank failed: not this rank's error.
            Err(_) if peer_failed.get() && !crate::signal::interrupted() => Ok(rec),
            Err(e) => Err(e),
        }
    }

    /// One phase of fdtree's walk over this rank's tree (the directory phases also make or
    /// remove its root).
    fn tree_phase<O: Ops>(&self, phase: Phase, mut w: Walker<O>, base: &O::Dir) -> Result<()> {
        let name = CString::new(self.root_name())?;
        let label = self.root_name();
        let progress = w.progress;
        if phase == Phase::DirCreate {
            w.ops
                .mkdir(base, &name)
                .with_context(|| format!("mkdir {label}"))?;
            progress.fetch_add(1, Ordering::Relaxed);
        }
        let root = w
            .ops
            .open_dir(base, &name)
            .with_context(|| format!("open {label}"))?;
        let r = w.walk(phase, &root, self.job.params.levels);
        drop(root);
        w.flush_progress();
        r.map_err(|e| e.into_error(&label))?;
        if phase == Phase::DirRemove {
            w.ops
                .rmdir(base, &name)
                .with_context(|| format!("rmdir {label}"))?;
            progress.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Shared layout, directory phases: depth by depth with a collective step in between.
    fn shared_dirs<O: Ops>(
        &self,
        remove: bool,
        mut lw: LevelWalker<O>,
        base: &O::Dir,
    ) -> Result<()> {
        let comm = &*self.comm;
        let name = &CString::new(self.root_name())?;
        let (rank, size) = (u64::from(comm.rank()), u64::from(comm.size()));
        let levels = self.job.params.levels;
        let progress = lw.walker.progress;
        let mut failed: Option<anyhow::Error> = None;
        if !remove && comm.is_root() {
            match lw.walker.ops.mkdir(base, name) {
                Ok(()) => {
                    progress.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => failed = Some(anyhow!("mkdir {}: {e}", self.root_name())),
            }
        }
        let mut root = None;
        let depths: Vec<u32> = if remove {
            (1..=levels).rev().collect()
        } else {
            (1..=levels).collect()
        };
        for (i, depth) in depths.iter().enumerate() {
            // Creating: the step comes before each depth (its parents must exist). Removing:
            // between depths (a directory's children must be gone).
            if !remove || i > 0 {
                if failed.is_some() {
                    comm.notify_failed();
                }
                if !comm.all(failed.is_none()) {
                    break;
                }
            }
            if root.is_none() {
                match lw.walker.ops.open_dir(base, name) {
                    Ok(r) => root = Some(r),
                    Err(e) => {
                        failed = Some(anyhow!("open {}: {e}", self.root_name()));
                        continue;
                    }
                }
            }
            if let Some(r) = &root {
                if let Err(e) = lw.level(r, *depth, rank, size, remove) {
                    lw.walker.flush_progress();
                    failed = Some(e.into_error(&self.root_name()));
                }
            }
        }
        lw.walker.flush_progress();
        lw.close();
        drop(root);
        if remove {
            if failed.is_some() {
                comm.notify_failed();
            }
            if comm.all(failed.is_none()) && comm.is_root() {
                lw.walker
                    .ops
                    .rmdir(base, name)
                    .with_context(|| format!("rmdir {}", self.root_name()))?;
                progress.fetch_add(1, Ordering::Relaxed);
            }
        }
        failed.map_or(Ok(()), Err)
    }
}
