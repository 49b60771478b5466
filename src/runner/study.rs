//! Running a study: provision every cell for real, run every workload on it with the cache
//! policy, in the chosen order, until each series' stopping rule or the budget says stop,
//! storing every repetition in one transaction as it completes.
//!
//! Failure semantics: a cell whose provisioning or remount fails is recorded failed with its
//! error; a repetition that fails fails its series (and marks the cell failed); the study
//! goes on with the other cells. Ctrl-C stops at the next safe point, the repetition in
//! flight is dropped (not stored), everything is unmounted and detached, and
//! `--resume` continues later with exactly the planned repetitions.

use super::cache;
use super::order::Scheduler;
use super::progress_text::Left;
use super::series::{Series, SeriesState};
use super::study_progress::StudyProgress;
use super::study_setup::{create_new, open_existing};
use super::telemetry::{run_observed, Observe, Sources};
use crate::plan::{CachePolicy, Study};
use crate::provision::exec::Exec;
use crate::provision::state::{self, CleanupReport, WorkDir};
use crate::provision::{Provisioned, Provisioner};
use crate::stats::adaptive::{self, Disturbed, Fate, Rule, StopReason};
use crate::store::{CellStatus, SeriesStatus, Store, StudyStatus};
use crate::workload::Workload;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run a study.
pub struct StudyRun<'a> {
    /// The validated study.
    pub study: &'a Study,
    /// Where results go.
    pub store: &'a mut Store,
    /// The work directory for images, mounts and state.
    pub workdir: WorkDir,
    /// Runs the external commands.
    pub exec: Arc<dyn Exec>,
    /// Continue the newest unfinished study of this name.
    pub resume: bool,
    /// The command line as typed.
    pub command_line: String,
    /// Show progress on stderr.
    pub progress: bool,
}

/// What a study run ended with.
#[derive(Debug)]
pub struct Outcome {
    /// The study id in the store.
    pub study_id: i64,
    /// Complete, partial, failed or interrupted.
    pub status: StudyStatus,
    /// Failed cells: label and error.
    pub failed_cells: Vec<(String, String)>,
    /// Number of cells.
    pub total_cells: usize,
    /// What the start-of-run cleanup removed (left by killed runs).
    pub cleaned: CleanupReport,
    /// Teardown problems, if any (run `fslab cleanup`).
    pub leftovers: Vec<String>,
    /// Whether this run continued an earlier one.
    pub resumed: bool,
}

struct Live {
    prov: Provisioned,
    engines: BTreeMap<usize, Box<dyn Workload>>,
    /// Warm-up repetitions run per workload since the cell was (re)provisioned.
    warmed: BTreeMap<usize, u32>,
    /// The cell's devices and file-system counters, for telemetry.
    sources: Sources,
    /// Whether a counted repetition ran on this file system (`fresh` makes a new one).
    used: bool,
}

struct Runner<'a> {
    // Dropped first on an early error: cells are taken down before the provisioner's
    // tmpfs and directories (fields drop in declaration order).
    live: BTreeMap<usize, Live>,
    prov: Provisioner,
    study: &'a Study,
    store: &'a mut Store,
    exec: Arc<dyn Exec>,
    series: Vec<Series>,
    cell_ids: Vec<i64>,
    wl_ids: Vec<i64>,
    cell_errors: BTreeMap<usize, String>,
    order_index: u32,
    progress: StudyProgress,
    spent_before: f64,
    started: Instant,
    rule: Rule,
    leftovers: Vec<String>,
}

enum RepEnd {
    Ok,
    /// A disturbed repetition was stored as left out; the series runs it again.
    Rerun,
    /// The repetition failed; `cell_level` when the cell itself is unusable.
    Failed {
        err: String,
        cell_level: bool,
    },
    Interrupted,
}

/// Run (or resume) a study.
pub fn run(r: StudyRun<'_>) -> Result<Outcome> {
    let study = r.study;
    let nothing_stored = r.store.latest_study_named(study.name())?.is_none();
    if r.resume && nothing_stored {
        // Killed before its plan was stored (one transaction): nothing was measured yet.
        eprintln!(
            "note: no study named '{}' in {} yet; starting it",
            study.name(),
            r.store.path().display()
        );
    }
    let ((study_id, cell_ids, wl_ids, seed, resumed), claim) = if r.resume && !nothing_stored {
        open_existing(r.store, &r.workdir, r.exec.as_ref(), study)?
    } else {
        create_new(r.store, r.exec.as_ref(), &r.workdir, study, &r.command_line)?
    };
    if let Some(gone) = claim.taken_over() {
        eprintln!(
            "fslab: note: study {study_id} was claimed by process {} on this host since {}, which is gone; taking it over",
            gone.pid, gone.claimed_at
        );
    }
    // Held until this function returns, however it returns (an early `?` included); a run
    // killed outright leaves a claim of a dead process, which the next run takes over.
    let _claim = claim;
    let trials = r.store.trials(study_id)?;
    let prior_series = r.store.series(study_id)?;
    let rep = &study.repetitions;
    let rule = Rule {
        min: rep.min,
        max: rep.max,
        target_ci: rep.target_ci,
    };
    let mut series = Vec::new();
    for c in &study.cells {
        for w in &study.workloads {
            let mut s = Series::new(c.idx, w.idx, w.spec.workload_kind());
            let (cid, wid) = (cell_ids[c.idx], wl_ids[w.idx]);
            let mine: Vec<_> = trials
                .iter()
                .filter(|t| t.cell_id == cid && t.workload_id == wid)
                .collect();
            s.load(&mine);
            let prior = prior_series
                .iter()
                .find(|p| p.cell_id == cid && p.workload_id == wid);
            if let Some(p) = prior.filter(|p| p.status == SeriesStatus::Complete) {
                s.state = SeriesState::Done(p.stop_reason.unwrap_or(StopReason::Fixed));
            } else if let Some(reason) = s.decide(&rule) {
                r.store
                    .set_series(cid, wid, SeriesStatus::Complete, Some(reason), None)?;
            }
            series.push(s);
        }
    }
    let spent_before: f64 = trials.iter().map(|t| t.wall_seconds).sum();

    // What killed runs left, then our own run directory.
    let cleaned = state::cleanup(&r.workdir, r.exec.as_ref(), Duration::from_secs(10));
    let run_dir = r
        .workdir
        .start_run(Some(study_id))
        .context("preparing the work directory")?;
    run_dir
        .set_db(r.store.path())
        .context("preparing the work directory")?;
    let prov = Provisioner::new(
        r.exec.clone(),
        run_dir.clone(),
        study.allow_format(),
        study.ram_bytes(),
    )?
    .with_guest_devices(super::guest::devices_from_env()?);
    let total: u64 = series.iter().map(|s| u64::from(s.planned(&rule))).sum();
    let progress = StudyProgress::new(r.progress, total);
    progress.set_done(
        series.iter().map(|s| u64::from(s.done)).sum(),
        eta_of(&series, &rule, None),
    );
    let order_index = r.store.next_order_index(study_id)?;
    let mut runner = Runner {
        study,
        store: r.store,
        exec: r.exec.clone(),
        prov,
        series,
        live: BTreeMap::new(),
        cell_ids,
        wl_ids,
        cell_errors: BTreeMap::new(),
        order_index,
        progress,
        spent_before,
        started: Instant::now(),
        rule,
        leftovers: Vec::new(),
    };
    let interrupted = runner.main_loop(seed)?;
    runner.progress.finish();
    // Take everything down, whatever happened.
    let cells: Vec<usize> = runner.live.keys().copied().collect();
    for c in cells {
        runner.retire(c, interrupted)?;
    }
    if let Err(e) = runner.prov.finish() {
        runner.leftovers.push(e.to_string());
    }
    if let Err(e) = run_dir.finish() {
        runner.leftovers.push(e.to_string());
    }
    // A cell whose series were all done before this run started is never brought up, so
    // nothing above sets its status: a run killed while tearing it down left it `running`.
    for cell in 0..study.cells.len() {
        let done = runner
            .series
            .iter()
            .filter(|s| s.cell == cell)
            .all(|s| matches!(s.state, SeriesState::Done(_)));
        if done && !runner.cell_errors.contains_key(&cell) {
            runner
                .store
                .set_cell_status(runner.cell_ids[cell], CellStatus::Complete, None)?;
        }
    }
    let failed_cells: Vec<(String, String)> = runner
        .cell_errors
        .iter()
        .map(|(&c, e)| (study.cells[c].label.clone(), e.clone()))
        .collect();
    let any_ok = runner
        .series
        .iter()
        .any(|s| matches!(s.state, SeriesState::Done(_)));
    let status = if interrupted {
        StudyStatus::Interrupted
    } else if failed_cells.is_empty() {
        StudyStatus::Complete
    } else if any_ok {
        StudyStatus::Partial
    } else {
        StudyStatus::Failed
    };
    runner.store.set_study_status(study_id, status)?;
    Ok(Outcome {
        study_id,
        status,
        failed_cells,
        total_cells: study.cells.len(),
        cleaned,
        leftovers: runner.leftovers,
        resumed,
    })
}

/// Repetitions planned for series `i`; `just_ran` is the series whose repetition just
/// finished, before the rule decided whether it goes on: it is planned at the minimum still
/// needed, so its last repetition does not count one more.
fn planned_now(series: &[Series], i: usize, rule: &Rule, just_ran: Option<usize>) -> u32 {
    let s = &series[i];
    match (just_ran == Some(i), &s.state) {
        (true, SeriesState::Active) => s.done + adaptive::remaining(rule, s.done).0,
        _ => s.planned(rule),
    }
}

/// Seconds left: every series' repetitions still planned at its own measured mean (an
/// unmeasured series at the mean of the others); `None` before anything is measured.
fn eta_of(series: &[Series], rule: &Rule, just_ran: Option<usize>) -> Option<f64> {
    let left: Vec<Left> = (0..series.len())
        .map(|i| Left {
            steps: u64::from(planned_now(series, i, rule, just_ran).saturating_sub(series[i].done)),
            mean: series[i].mean_duration(),
            work: 1.0,
        })
        .collect();
    super::progress_text::eta(&left, None)
}

impl Runner<'_> {
    fn spent(&self) -> f64 {
        self.spent_before + self.started.elapsed().as_secs_f64()
    }

    fn update_total(&self) {
        let t: u64 = self
            .series
            .iter()
            .map(|s| u64::from(s.planned(&self.rule)))
            .sum();
        self.progress.set_total(t);
    }

    /// Returns whether the run was interrupted.
    fn main_loop(&mut self, seed: u64) -> Result<bool> {
        let mut sched = Scheduler::new(self.study.repetitions.order, seed);
        loop {
            if crate::signal::interrupted() {
                return Ok(true);
            }
            let active: Vec<bool> = self.series.iter().map(Series::is_active).collect();
            let done: Vec<u32> = self.series.iter().map(|s| s.done).collect();
            let Some(si) = sched.next(&active, &done) else {
                return Ok(false);
            };
            if let Some(budget) = self.study.repetitions.budget {
                let all: Vec<f64> = self
                    .series
                    .iter()
                    .flat_map(|s| s.durations.clone())
                    .collect();
                let est = self.series[si]
                    .mean_duration()
                    .or_else(|| {
                        (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
                    })
                    .unwrap_or(0.0);
                if !adaptive::budget_allows(self.spent(), budget.as_secs_f64(), est) {
                    self.stop_all_for_budget()?;
                    continue;
                }
            }
            let cell = self.series[si].cell;
            if !self.live.contains_key(&cell) {
                // Cells on the same real device cannot be mounted together: take the other
                // down first (it is made again when its turn comes).
                let clash: Vec<usize> = self
                    .live
                    .keys()
                    .copied()
                    .filter(|&o| self.study.cells[o].shares_device_with(&self.study.cells[cell]))
                    .collect();
                for o in clash {
                    self.retire(o, false)?;
                }
                if let Err(e) = self.bring_up(cell) {
                    if crate::signal::interrupted() {
                        self.retire(cell, true)?;
                        return Ok(true);
                    }
                    self.fail_cell(cell, &format!("{e:#}"))?;
                    continue;
                }
            }
            match self.repetition(si)? {
                RepEnd::Interrupted => return Ok(true),
                RepEnd::Rerun => {}
                RepEnd::Failed {
                    err,
                    cell_level: true,
                } => self.fail_cell(cell, &err)?,
                RepEnd::Failed {
                    err,
                    cell_level: false,
                } => {
                    self.fail_series(si, &err)?;
                    self.retire_if_done(cell)?;
                }
                RepEnd::Ok => {
                    if let Some(reason) = self.series[si].decide(&self.rule) {
                        let (c, w) = self.ids(si);
                        self.store
                            .set_series(c, w, SeriesStatus::Complete, Some(reason), None)?;
                        self.update_total();
                        self.retire_if_done(cell)?;
                    }
                }
            }
        }
    }

    fn ids(&self, si: usize) -> (i64, i64) {
        let s = &self.series[si];
        (self.cell_ids[s.cell], self.wl_ids[s.wl])
    }

    fn stop_all_for_budget(&mut self) -> Result<()> {
        self.progress
            .println("time budget reached; stopping every series");
        for si in 0..self.series.len() {
            if self.series[si].is_active() {
                self.series[si].state = SeriesState::Done(StopReason::Budget);
                let (c, w) = self.ids(si);
                self.store.set_series(
                    c,
                    w,
                    SeriesStatus::Complete,
                    Some(StopReason::Budget),
                    None,
                )?;
            }
        }
        Ok(())
    }

    fn bring_up(&mut self, cell: usize) -> Result<()> {
        let c = &self.study.cells[cell];
        let cid = self.cell_ids[cell];
        self.store.set_cell_status(cid, CellStatus::Running, None)?;
        self.progress
            .println(&format!("provisioning cell {}: {}", cell, c.label));
        let prov = self.prov.provision(cell, &c.fs)?;
        self.store
            .set_cell_provisioning(cid, &prov.commands, &prov.dump)?;
        let sources = Sources::for_cell(&prov.data, prov.journal.as_deref());
        self.live.insert(
            cell,
            Live {
                prov,
                engines: BTreeMap::new(),
                warmed: BTreeMap::new(),
                sources,
                used: false,
            },
        );
        Ok(())
    }

    /// `fresh`: take the cell's file system down and make it again (mkfs, mount), so the
    /// next repetition starts on a new one.
    fn renew(&mut self, cell: usize) -> Result<()> {
        if let Some(live) = self.live.remove(&cell) {
            let mut engines = live.engines;
            let target = live.prov.target();
            for e in engines.values_mut() {
                let _ = e.cleanup(&target);
            }
            live.prov.teardown()?;
        }
        self.bring_up(cell)?;
        // In a guest, the host's page cache holds what mkfs just wrote to the image files.
        super::guest::drop_host_caches()
    }

    fn fail_cell(&mut self, cell: usize, err: &str) -> Result<()> {
        self.progress.println(&format!(
            "cell {} failed: {err}",
            self.study.cells[cell].label
        ));
        for si in 0..self.series.len() {
            if self.series[si].cell == cell && self.series[si].is_active() {
                self.mark_failed(si, err, err.to_string())?;
            }
        }
        self.retire(cell, false)
    }

    /// Series `si` failed with `err`; its cell carries `cell_error` (the first one counts).
    fn mark_failed(&mut self, si: usize, err: &str, cell_error: String) -> Result<()> {
        self.series[si].state = SeriesState::Failed(err.to_string());
        let (c, w) = self.ids(si);
        self.store
            .set_series(c, w, SeriesStatus::Failed, None, Some(err))?;
        self.cell_errors
            .entry(self.series[si].cell)
            .or_insert(cell_error);
        self.update_total();
        Ok(())
    }

    fn fail_series(&mut self, si: usize, err: &str) -> Result<()> {
        let s = &self.series[si];
        let cell = s.cell;
        let label = self.study.workloads[s.wl].spec.label();
        self.progress.println(&format!(
            "{} · {label} failed: {err}",
            self.study.cells[cell].label
        ));
        self.mark_failed(si, err, format!("workload {label}: {err}"))
    }

    fn retire_if_done(&mut self, cell: usize) -> Result<()> {
        if self.series.iter().any(|s| s.cell == cell && s.is_active()) {
            return Ok(());
        }
        self.retire(cell, false)
    }

    /// Tear a cell down and set its final status.
    fn retire(&mut self, cell: usize, interrupted: bool) -> Result<()> {
        if let Some(live) = self.live.remove(&cell) {
            let mut engines = live.engines;
            let target = live.prov.target();
            for e in engines.values_mut() {
                let _ = e.cleanup(&target);
            }
            if let Err(e) = live.prov.teardown() {
                self.leftovers
                    .push(format!("cell {}: {e}", self.study.cells[cell].label));
            }
        }
        let cid = self.cell_ids[cell];
        match self.cell_errors.get(&cell) {
            Some(e) => self
                .store
                .set_cell_status(cid, CellStatus::Failed, Some(e))?,
            None if interrupted || self.series.iter().any(|s| s.cell == cell && s.is_active()) => {
                self.store.set_cell_status(cid, CellStatus::Pending, None)?
            }
            None => self
                .store
                .set_cell_status(cid, CellStatus::Complete, None)?,
        }
        Ok(())
    }

    /// One counted repetition of series `si` (with the discarded warm-ups first if due:
    /// `[repetitions] warmup` of them once per provisioning of the cell).
    fn repetition(&mut self, si: usize) -> Result<RepEnd> {
        let (cell, wl) = (self.series[si].cell, self.series[si].wl);
        let warmup = self.study.repetitions.warmup;
        let done = |me: &Self| {
            me.live
                .get(&cell)
                .and_then(|l| l.warmed.get(&wl).copied())
                .unwrap_or(0)
        };
        while done(self) < warmup {
            match self.attempt(si, false)? {
                RepEnd::Ok => match self.live.get_mut(&cell) {
                    Some(l) => *l.warmed.entry(wl).or_insert(0) += 1,
                    // No live cell to remember it by: on to the counted repetition.
                    None => break,
                },
                other => return Ok(other),
            }
        }
        self.attempt(si, true)
    }

    fn attempt(&mut self, si: usize, counted: bool) -> Result<RepEnd> {
        let (cell, wl) = (self.series[si].cell, self.series[si].wl);
        let cache_policy = self.study.repetitions.cache;
        let spec = self.study.cells[cell].workloads[wl].clone();
        let rep_no = self.series[si].done + 1;
        let what = format!(
            "{} · {} · {}",
            self.study.cells[cell].label,
            spec.label(),
            if counted {
                format!("rep {rep_no}/{}", self.series[si].planned(&self.rule))
            } else {
                "warm-up (discarded)".to_string()
            }
        );
        self.progress.rep_started(&what);
        self.progress.set_unit(super::phase_bar::spec_unit(&spec));
        let started_at = crate::store::now();
        let t0 = Instant::now();
        if counted
            && cache_policy == CachePolicy::Fresh
            && self.live.get(&cell).is_some_and(|l| l.used)
        {
            if let Err(e) = self.renew(cell) {
                if crate::signal::interrupted() {
                    return Ok(RepEnd::Interrupted);
                }
                return Ok(RepEnd::Failed {
                    err: format!("fresh file system: {e:#}"),
                    cell_level: true,
                });
            }
        }
        let Some(live) = self.live.get_mut(&cell) else {
            return Ok(RepEnd::Failed {
                err: "the cell is not provisioned".into(),
                cell_level: true,
            });
        };
        if counted && cache_policy == CachePolicy::Cold {
            if let Some(m) = live.prov.mounted_mut() {
                if let Err(e) = cache::make_cold(self.exec.as_ref(), m) {
                    if crate::signal::interrupted() {
                        return Ok(RepEnd::Interrupted);
                    }
                    return Ok(RepEnd::Failed {
                        err: format!("cold-cache remount: {e}"),
                        cell_level: true,
                    });
                }
            }
        }
        let target = live.prov.target();
        let engine = match live.engines.entry(wl) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => match spec.build() {
                Ok(e) => v.insert(e),
                Err(e) => {
                    return Ok(RepEnd::Failed {
                        err: format!("{e:#}"),
                        cell_level: false,
                    })
                }
            },
        };
        let how = Observe {
            sources: &live.sources,
            settle: self.study.repetitions.settle,
            timeline: self.study.repetitions.timeline,
        };
        let mut r = run_observed(engine.as_mut(), &target, &self.progress, &how, None);
        if counted {
            live.used = true;
        }
        // A study's repetition includes the cache policy applied before it (the remount), for
        // the budget and the ETA.
        r.started_at = started_at;
        r.wall_seconds = t0.elapsed().as_secs_f64();
        for w in &r.warnings {
            self.progress.println(&format!("warning: {w}"));
        }
        if r.interrupted() {
            // The repetition in flight is not stored; --resume runs it again.
            return Ok(RepEnd::Interrupted);
        }
        let (c, w) = self.ids(si);
        // A disturbed repetition: counted, or left out (and run again) by the policy.
        let policy = self.study.repetitions.disturbed;
        let fate = match (&r.interference, r.metrics()) {
            (Some(_), Some(_)) if counted => {
                adaptive::fate(policy, true, self.series[si].reruns, self.rule.max)
            }
            _ => Fate::Count,
        };
        let trial = match fate.excluded() {
            Some(ex) => r.excluded_trial(c, w, rep_no, self.order_index, cache_policy.as_str(), ex),
            None => r.trial(
                c,
                w,
                rep_no,
                self.order_index,
                cache_policy.as_str(),
                counted,
            ),
        };
        self.store.record_trial(&trial)?;
        self.order_index += 1;
        let wall = r.wall_seconds;
        let why = r.interference.clone().unwrap_or_default();
        match fate {
            Fate::Rerun => {
                self.series[si].reruns += 1;
                self.progress.println(&format!(
                    "{what}: disturbed ({why}); stored, left out, and run again (disturbed = \"repeat\")"
                ));
                return Ok(RepEnd::Rerun);
            }
            Fate::Drop => self.progress.println(&format!(
                "{what}: disturbed ({why}); stored and left out (disturbed = \"drop\")"
            )),
            Fate::Count if counted && policy == Disturbed::Repeat && !why.is_empty() => {
                self.progress.println(&format!(
                    "{what}: disturbed ({why}); kept: this series has re-run {} repetitions, its limit",
                    self.series[si].reruns
                ))
            }
            Fate::Count => {}
        }
        match r.metrics() {
            Some(m) => {
                if counted {
                    if self.series[si].done == 0 {
                        self.store
                            .set_series(c, w, SeriesStatus::Running, None, None)?;
                    }
                    if fate == Fate::Drop {
                        self.series[si].add_dropped(wall);
                    } else {
                        self.series[si].add(m, wall);
                    }
                    let done: u64 = self.series.iter().map(|s| u64::from(s.done)).sum();
                    let planned: u64 = (0..self.series.len())
                        .map(|i| u64::from(planned_now(&self.series, i, &self.rule, Some(si))))
                        .sum();
                    self.progress.rep_finished(
                        done,
                        planned,
                        &what,
                        wall,
                        eta_of(&self.series, &self.rule, Some(si)),
                    );
                }
                Ok(RepEnd::Ok)
            }
            None => Ok(RepEnd::Failed {
                err: r.error().map(|e| format!("{e:#}")).unwrap_or_default(),
                cell_level: false,
            }),
        }
    }
}
