//! Running one fdtree repetition: worker threads (each with its own file-descriptor table,
//! [`crate::workload::workers`]), phase barriers, timing and metrics.

use super::record::TreeRecord;
use super::sweep::sweep_partial;
use super::tree::{FsOps, NullOps, Ops, WalkError, Walker};
use super::{Backend, Counts, FdtreeParams, Mode, Phase, PHASES};
use crate::metric::{Metric, Unit};
use crate::workload::workers::{FirstError, PhaseGate, Seen, Tally};
use crate::workload::{provenance, Creates, Observer, Requirements, Target, Workload};
use anyhow::{anyhow, Context, Result};
use rustix::fd::OwnedFd;
use rustix::fs::OFlags;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Start and end of one worker's part of one phase.
type Span = Option<(Instant, Instant)>;

/// Timing of one phase of one repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseTiming {
    /// The phase's stored name ([`Phase::as_str`]).
    pub phase: &'static str,
    /// Items done in the phase over all workers.
    pub items: u64,
    /// Seconds from the first worker's start to the last worker's finish (plus syncfs if asked).
    pub elapsed: f64,
    /// Seconds of the timed syncfs, if `--sync`.
    pub sync: Option<f64>,
    /// Per-worker elapsed seconds.
    pub per_thread: Vec<f64>,
    /// Spread of the workers' start times (seconds).
    pub start_skew: f64,
    /// Seconds since the start of the repetition at which the phase began and ended.
    pub t_in: f64,
    /// See `t_in`.
    pub t_out: f64,
}

impl PhaseTiming {
    /// The phase, from its stored name (`None` only for a name fslab never makes).
    pub fn kind(&self) -> Option<Phase> {
        Phase::of(self.phase)
    }
}

/// What one repetition produced.
#[derive(Debug, Clone)]
pub struct RepOutcome {
    /// Phase timings in run order.
    pub phases: Vec<PhaseTiming>,
    /// The tree roots used (names inside the start directory).
    pub roots: Vec<String>,
    /// Wall-clock start and end of the phases (for fdtree's date lines).
    pub started: chrono::DateTime<chrono::Local>,
}

/// The start directory as the walk sees it (`O_PATH`) and as syncfs needs it: syncfs needs a
/// real descriptor; O_PATH ones are refused with EBADF.
pub fn open_start_dir(dir: &Path) -> Result<(OwnedFd, OwnedFd)> {
    let open = |flags| {
        let flags = flags | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(dir, flags, rustix::fs::Mode::empty())
            .with_context(|| format!("cannot open start directory {}", dir.display()))
    };
    Ok((open(OFlags::PATH)?, open(OFlags::RDONLY)?))
}

/// The fdtree engine.
pub struct Fdtree {
    params: FdtreeParams,
    counts: Counts,
    /// Roots this repetition made (or, for `-R`, was given and verified), for cleanup.
    live_roots: Vec<PathBuf>,
    /// Write a record beside every tree (ad-hoc runs; see [`super::record`]).
    records: bool,
    /// The last repetition's details, for fdtree-format output.
    pub last: Option<RepOutcome>,
}

impl Fdtree {
    /// An engine for validated parameters.
    pub fn new(params: FdtreeParams) -> Fdtree {
        // Parameters are validated by the caller; counts fall back to zeros if not.
        let counts = params.counts().unwrap_or_default();
        Fdtree {
            params,
            counts,
            live_roots: Vec::new(),
            records: false,
            last: None,
        }
    }

    /// Keep a record beside every tree this engine makes (`fslab fdtree`), so a later `-R`
    /// or `fslab cleanup` can prove the tree is fslab's. Studies run on file systems fslab
    /// made and destroys, and write none.
    pub fn with_records(mut self, on: bool) -> Fdtree {
        self.records = on;
        self
    }

    /// Root names for this process (`LEVEL0.<host>.<pid>[.<i>]`).
    pub fn root_names(&self) -> Vec<String> {
        if self.params.mode == Mode::RemoveOnly {
            return self.params.roots.clone();
        }
        let base = format!(
            "LEVEL0.{}.{}",
            crate::sysinfo::short_hostname(),
            std::process::id()
        );
        if self.params.threads == 1 {
            vec![base]
        } else {
            (0..self.params.threads)
                .map(|i| format!("{base}.{i}"))
                .collect()
        }
    }

    fn phases(&self) -> &'static [Phase] {
        match self.params.mode {
            Mode::Full => &PHASES,
            Mode::CreateOnly => &PHASES[..2],
            Mode::RemoveOnly => &PHASES[2..],
        }
    }

    /// Run one repetition and return its timings.
    pub fn run_rep(&mut self, start_dir: &Path, obs: &dyn Observer) -> Result<RepOutcome> {
        let names = self.root_names();
        let started = chrono::Local::now();
        let phases = match self.params.backend {
            Backend::Fs => {
                let (base, sync_dir) = open_start_dir(start_dir)?;
                if self.params.mode == Mode::RemoveOnly {
                    // Verified by the caller: these trees are fslab's.
                    self.live_roots = names.iter().map(|n| start_dir.join(n)).collect();
                } else {
                    for n in &names {
                        let p = start_dir.join(n);
                        if p.symlink_metadata().is_ok() {
                            crate::bail_usage!(
                                "{} already exists; remove it (or run with -R --root {n}) first",
                                p.display()
                            );
                        }
                    }
                    if self.records {
                        for n in &names {
                            provenance::write(start_dir, &TreeRecord::new(n, &self.params))?;
                        }
                    }
                }
                let fb = self.params.file_bytes();
                // The roots this run made itself: only these are ever swept on failure.
                let made = std::sync::Mutex::new(Vec::new());
                let records = self.records;
                let mkdir_done = |n: &str| {
                    // The record gets the root's inode right away, untimed: a run killed
                    // from here on leaves a record that names exactly this directory.
                    made.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(n.to_string());
                    if records {
                        provenance::complete::<TreeRecord>(start_dir, n)?;
                    }
                    Ok(())
                };
                let r = self.run_phases(
                    &names,
                    obs,
                    || FsOps::new(fb),
                    &base,
                    &mkdir_done,
                    Some(&sync_dir),
                );
                let made = made.into_inner().unwrap_or_else(|p| p.into_inner());
                let after = self.after_phases(start_dir, &names, &made, r.is_ok());
                let phases = r?;
                after?;
                phases
            }
            Backend::Null => self.run_phases(&names, obs, || NullOps, &(), &|_| Ok(()), None)?,
        };
        let out = RepOutcome {
            phases,
            roots: names,
            started,
        };
        self.last = Some(out.clone());
        Ok(out)
    }

    /// The multi-threaded phase loop, generic over the operations: `base` is the start
    /// directory as they see it, and `mkdir_done(root)` the untimed bookkeeping after a
    /// root's mkdir.
    fn run_phases<O: Ops>(
        &self,
        names: &[String],
        obs: &dyn Observer,
        make_ops: impl Fn() -> O + Sync,
        base: &O::Dir,
        mkdir_done: &(dyn Fn(&str) -> Result<()> + Sync),
        sync_fd: Option<&OwnedFd>,
    ) -> Result<Vec<PhaseTiming>>
    where
        O::Dir: Sync,
    {
        let threads = self.params.threads;
        let phases = self.phases();
        let shape = self.params.shape();
        let gate = PhaseGate::new(threads);
        let abort = AtomicBool::new(false);
        // Each worker counts on its own cache line; the coordinator sums them.
        let tally = Tally::new(threads);
        let first_error = FirstError::default();
        // Per phase, per thread: (start, end) instants.
        let spans: Mutex<Vec<Vec<Span>>> = Mutex::new(vec![vec![None; threads]; phases.len()]);
        let stop = || abort.load(Ordering::Relaxed) || crate::signal::interrupted();
        let t0 = Instant::now();
        let mut timings = Vec::new();

        std::thread::scope(|s| {
            let (gate, abort, tally, first_error, spans, stop) =
                (&gate, &abort, &tally, &first_error, &spans, &stop);
            let (make_ops, phases) = (&make_ops, &phases);
            let worker = move |tid: usize| {
                let root_name = &names[tid];
                let mut walker = Walker::new(make_ops(), shape, tally.slot(tid), stop);
                let fail = |e: anyhow::Error| {
                    abort.store(true, Ordering::Relaxed);
                    first_error.note(e);
                };
                let walk_err = |e: WalkError| e.into_error(root_name);
                let mut seen = Seen::default();
                for (pi, &phase) in phases.iter().enumerate() {
                    gate.start(&mut seen);
                    if !abort.load(Ordering::Relaxed) {
                        let mut start = Instant::now();
                        let r: Result<()> = (|| {
                            let c = CString::new(root_name.as_bytes())?;
                            if phase == Phase::DirCreate {
                                let made = walker.ops.mkdir(base, &c).map_err(anyhow::Error::from);
                                // Bookkeeping after the root's mkdir is not timed.
                                let t = Instant::now();
                                made.and_then(|()| mkdir_done(root_name))
                                    .with_context(|| format!("mkdir {root_name}"))?;
                                start += t.elapsed();
                            }
                            let root = walker.ops.open_dir(base, &c);
                            let root = match phase {
                                Phase::FileRemove => {
                                    root.with_context(|| format!("open tree root {root_name}"))?
                                }
                                _ => root?,
                            };
                            walker.walk(phase, &root, shape.levels).map_err(walk_err)?;
                            drop(root);
                            if phase == Phase::DirRemove {
                                walker
                                    .ops
                                    .rmdir(base, &c)
                                    .with_context(|| format!("rmdir {root_name}"))?;
                            }
                            Ok(())
                        })();
                        let end = Instant::now();
                        walker.flush_progress();
                        match r {
                            Ok(()) => {
                                spans.lock().unwrap_or_else(|p| p.into_inner())[pi][tid] =
                                    Some((start, end));
                            }
                            Err(e) => fail(e),
                        }
                    }
                    gate.finish();
                }
            };
            let started = crate::workload::workers::spawn_all(
                s,
                names.len(),
                |tid| format!("fdtree-w{tid}"),
                worker,
            );
            if let Err(e) = started {
                first_error.note(anyhow!("{e}; use fewer --threads"));
                return;
            }
            // The coordinator: releases each phase, waits for its end, times the syncfs.
            for (pi, &phase) in phases.iter().enumerate() {
                let items = self.items_of(phase);
                obs.phase_started(phase.as_str(), items);
                tally.reset();
                // One wake releases every worker; the coordinator sleeps while they work,
                // waking every 100 ms to report their progress.
                gate.open();
                gate.wait_finished(Duration::from_millis(100), || obs.progress(tally.total()));
                obs.progress(tally.total());
                let sync_span = (self.params.sync && !abort.load(Ordering::Relaxed)).then(|| {
                    let t = Instant::now();
                    if let Some(fd) = sync_fd {
                        // Never return early here: the workers are waiting for the next phase.
                        if let Err(e) = rustix::fs::syncfs(fd) {
                            abort.store(true, Ordering::Relaxed);
                            first_error.note(anyhow!("syncfs after {phase}: {e}"));
                        }
                    }
                    (t, Instant::now())
                });
                obs.phase_finished(phase.as_str());
                if abort.load(Ordering::Relaxed) {
                    continue;
                }
                let sp = spans.lock().unwrap_or_else(|p| p.into_inner());
                let row: Vec<(Instant, Instant)> = sp[pi].iter().flatten().copied().collect();
                let first = row.iter().map(|r| r.0).min().unwrap_or(t0);
                let last = row.iter().map(|r| r.1).max().unwrap_or(t0);
                let last_start = row.iter().map(|r| r.0).max().unwrap_or(t0);
                // With --sync the phase ends when syncfs returns.
                let end = sync_span.map_or(last, |(_, e)| e.max(last));
                let elapsed = (end - first).as_secs_f64();
                let t_in = (first - t0).as_secs_f64();
                timings.push(PhaseTiming {
                    phase: phase.as_str(),
                    items,
                    elapsed,
                    sync: sync_span.map(|(a, b)| (b - a).as_secs_f64()),
                    per_thread: row.iter().map(|r| (r.1 - r.0).as_secs_f64()).collect(),
                    start_skew: (last_start - first).as_secs_f64(),
                    t_in,
                    t_out: t_in + elapsed,
                });
            }
        });
        first_error.into_result()?;
        Ok(timings)
    }

    /// Items of a phase over all workers.
    fn items_of(&self, phase: Phase) -> u64 {
        let t = self.params.threads as u64;
        if phase.on_dirs() {
            self.counts.dirs * t
        } else {
            self.counts.files * t
        }
    }

    /// Metrics of one repetition's timings.
    pub fn metrics(&self, phases: &[PhaseTiming]) -> Vec<Metric> {
        let mut m = Vec::new();
        for p in phases {
            let mut push = |name, unit, value| m.push(Metric::new(p.phase, name, unit, value));
            let kind = p.kind();
            let unit = kind.map_or(Unit::FilesPerSec, Phase::rate_unit);
            let secs = p.elapsed.max(1e-9);
            push("elapsed", Unit::Seconds, p.elapsed);
            push("rate", unit, p.items as f64 / secs);
            if kind.is_some_and(Phase::writes_data) {
                let kib = (p.items * self.params.file_bytes()) as f64 / 1024.0;
                push("throughput", Unit::KiBPerSec, kib / secs);
            }
            if let Some(s) = p.sync {
                push("sync_time", Unit::Seconds, s);
            }
            if self.params.threads > 1 {
                let rates: Vec<f64> = p
                    .per_thread
                    .iter()
                    .map(|t| (p.items / self.params.threads as u64) as f64 / t.max(1e-9))
                    .collect();
                let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
                let max = rates.iter().copied().fold(0.0, f64::max);
                push("thread_rate_min", unit, min);
                push("thread_rate_max", unit, max);
                push("start_skew", Unit::Seconds, p.start_skew);
            }
        }
        m
    }

    /// Bookkeeping once the phases are over: which roots cleanup may sweep, and the records.
    fn after_phases(
        &mut self,
        start_dir: &Path,
        names: &[String],
        made: &[String],
        ok: bool,
    ) -> Result<()> {
        let mode = self.params.mode;
        if mode != Mode::RemoveOnly {
            // A failed run leaves only what it made itself for cleanup.
            self.live_roots = if ok {
                Vec::new()
            } else {
                made.iter().map(|n| start_dir.join(n)).collect()
            };
        } else if ok {
            self.live_roots.clear();
        }
        if !self.records {
            return Ok(());
        }
        for n in names {
            let exists = made.contains(n) || mode == Mode::RemoveOnly;
            let gone = ok && mode != Mode::CreateOnly;
            if gone || !exists {
                provenance::remove::<TreeRecord>(start_dir, n)?;
            } else if mode != Mode::RemoveOnly && start_dir.join(n).symlink_metadata().is_ok() {
                provenance::complete::<TreeRecord>(start_dir, n)?;
            }
        }
        Ok(())
    }

    /// Remove what is left of the trees this repetition made (or `-R` was given): only
    /// fdtree's own entries (see [`super::sweep`]); anything else stays and is reported.
    fn remove_leftovers(&mut self) -> Result<()> {
        let mut first_err = None;
        let shape = self.params.sweep_shape(None);
        for root in std::mem::take(&mut self.live_roots) {
            let swept = sweep_partial(&root, &shape);
            let r = match (root.parent(), root.file_name()) {
                (Some(parent), Some(name)) if self.records => swept.and_then(|()| {
                    provenance::remove::<TreeRecord>(parent, &name.to_string_lossy())
                }),
                _ => swept,
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Workload for Fdtree {
    fn name(&self) -> &'static str {
        "fdtree"
    }

    fn requirements(&self) -> Requirements {
        if self.params.backend == Backend::Null || self.params.mode == Mode::RemoveOnly {
            return Requirements::default();
        }
        let t = self.params.threads as u64;
        // Each directory takes at least one block of its own on block file systems.
        Requirements {
            bytes: (self.counts.bytes + self.counts.dirs * super::BLOCK).saturating_mul(t),
            inodes: (self.counts.dirs + self.counts.files).saturating_mul(t),
        }
    }

    fn data_bytes(&self) -> u64 {
        if self.params.backend == Backend::Null || self.params.mode == Mode::RemoveOnly {
            return 0;
        }
        self.counts.bytes.saturating_mul(self.params.threads as u64)
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        if self.params.backend == Backend::Null {
            return Ok(());
        }
        crate::workload::check_writable_dir(target.dir(), "-o")?;
        crate::workload::check_fits(target.dir(), self.requirements(), "this fdtree run")
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        let out = self.run_rep(target.dir(), obs)?;
        Ok(self.metrics(&out.phases))
    }

    fn creates(&self, target: &Target) -> Vec<Creates> {
        if self.params.backend == Backend::Null {
            return Vec::new();
        }
        let detail = serde_json::json!({
            "dirs": self.params.dirs,
            "files": self.params.files,
            "size_blocks": self.params.size_blocks,
            "levels": self.params.levels,
        });
        let paths = self.root_names().into_iter().map(|n| target.dir().join(n));
        Creates::each(super::NAME, crate::vocab::EntryKind::Tree, detail, paths)
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        if self.params.keep {
            self.live_roots.clear();
            return Ok(());
        }
        self.remove_leftovers()
    }
}
