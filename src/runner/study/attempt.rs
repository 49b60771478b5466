//! One repetition of a series: the warm-ups due first, the cache policy (`fresh`: a new
//! file system; `cold`: a remount), the engine (built once per cell from a study's spec, or
//! the one an engine command built), the run through the one protocol with telemetry around
//! it ([`run_observed`]), the disturbed-repetition policy, and the trial stored as soon as it
//! ends.

use super::super::cache;
use super::super::progress_text::Position;
use super::super::repetition::{Outcome, Repetition, Slot};
use super::super::telemetry::{run_observed, Observe};
use super::{fate_line, schedule, Ground, RepEnd, Runner, Show};
use crate::metric::Metric;
use crate::plan::CachePolicy;
use crate::stats::adaptive::Fate;
use crate::store::SeriesStatus;
use crate::workload::Workload;
use anyhow::{anyhow, Result};
use std::collections::btree_map::Entry;
use std::time::Instant;

#[cfg(test)]
thread_local! {
    /// Attempts made on this thread: the test that studies and engine commands run their
    /// repetitions here reads it.
    pub(super) static ATTEMPTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl Runner<'_> {
    /// One counted repetition of series `si` (with the discarded warm-ups first if due:
    /// `[repetitions] warmup` of them once per provisioning of the cell).
    pub(super) fn repetition(&mut self, si: usize) -> Result<RepEnd> {
        let (cell, wl) = (self.series[si].cell, self.series[si].wl);
        let warmup = self.reps.warmup;
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

    /// The cache policy before a counted repetition: a new file system (`fresh`, after the
    /// first) or a remount (`cold`). `Some` ends the repetition.
    fn apply_cache(&mut self, cell: usize) -> Option<RepEnd> {
        let failed = |what: &str, e: String| {
            Some(if crate::signal::interrupted() {
                RepEnd::Interrupted
            } else {
                RepEnd::Failed {
                    err: anyhow!("{what}: {e}"),
                    cell_level: true,
                }
            })
        };
        match self.reps.cache {
            CachePolicy::Fresh if self.live.get(&cell).is_some_and(|l| l.used) => {
                if let Err(e) = self.renew(cell) {
                    return failed("fresh file system", format!("{e:#}"));
                }
            }
            CachePolicy::Cold => {
                let Ground::Made { exec, .. } = &self.ground else {
                    return None;
                };
                let m = self.live.get_mut(&cell)?.prov.as_mut()?.mounted_mut()?;
                if let Err(e) = cache::make_cold(exec.as_ref(), m) {
                    return failed("cold-cache remount", e.to_string());
                }
            }
            _ => {}
        }
        None
    }

    /// The words a repetition is shown and named by: a study's `cell · workload · rep n/N`
    /// (or warm-up), an engine command's `repetition n`.
    fn what(&self, si: usize, counted: bool) -> String {
        let s = &self.series[si];
        let rep_no = s.done + 1;
        match &self.ground {
            Ground::Made { study, .. } => format!(
                "{} · {} · {}",
                self.cell_labels[s.cell],
                study.cells[s.cell].workloads[s.wl].label(),
                if counted {
                    format!("rep {rep_no}/{}", s.planned(&self.rule))
                } else {
                    "warm-up (discarded)".to_string()
                }
            ),
            Ground::Dir { .. } => format!("repetition {rep_no}"),
        }
    }

    /// Where repetition `rep_no` of cell `cell` stands, for an engine command's counters.
    fn position(&self, rep_no: u32, cell: usize) -> Position {
        Position {
            rep: rep_no,
            reps: self.rule.max,
            point: cell + 1,
            points: self.cell_ids.len(),
        }
    }

    /// One repetition of series `si`, counted or a warm-up: announced, the cache policy
    /// applied, run ([`Runner::run_engine`]), stored and judged ([`Runner::judge`]), and
    /// accounted ([`Runner::account`]).
    fn attempt(&mut self, si: usize, counted: bool) -> Result<RepEnd> {
        #[cfg(test)]
        ATTEMPTS.with(|n| n.set(n.get() + 1));
        let (cell, wl) = (self.series[si].cell, self.series[si].wl);
        let what = self.what(si, counted);
        match (&self.show, &self.ground) {
            (Show::Study(p), Ground::Made { study, .. }) => {
                p.rep_started(&what);
                p.set_unit(super::super::phase_bar::spec_unit(
                    &study.cells[cell].workloads[wl],
                ));
            }
            (Show::Command { steps: Some(s), .. }, _) => {
                s.step_started(self.position(self.series[si].done + 1, cell))
            }
            _ => {}
        }
        let started_at = crate::store::now();
        let t0 = Instant::now();
        if counted {
            if let Some(end) = self.apply_cache(cell) {
                return Ok(end);
            }
        }
        let mut r = match self.run_engine(cell, wl, counted) {
            Ok(r) => r,
            Err(end) => return Ok(end),
        };
        // A study's repetition includes the cache policy applied before it (the remount), for
        // the budget and the ETA.
        r.window.started_at = started_at;
        r.window.wall_seconds = t0.elapsed().as_secs_f64();
        for w in &r.warnings {
            self.show.println(&format!("warning: {w}"));
        }
        if r.interrupted() && matches!(self.ground, Ground::Made { .. }) {
            // The repetition in flight is not stored; --resume runs it again.
            return Ok(RepEnd::Interrupted);
        }
        let fate = self.judge(si, counted, &r, &what)?;
        if fate == Fate::Rerun {
            return Ok(RepEnd::Rerun);
        }
        match r.outcome {
            Outcome::Done { metrics, .. } => {
                self.account(si, counted, fate, &metrics, (&what, r.window.wall_seconds))?;
                Ok(RepEnd::Ok)
            }
            Outcome::Failed(err) | Outcome::Interrupted(err) => Ok(RepEnd::Failed {
                err,
                cell_level: false,
            }),
        }
    }

    /// Run workload `wl` once on cell `cell` through the one protocol, with the engine a
    /// study builds from its spec (once per cell) or the one the command built.
    fn run_engine(
        &mut self,
        cell: usize,
        wl: usize,
        counted: bool,
    ) -> std::result::Result<Repetition, RepEnd> {
        let Some(live) = self.live.get_mut(&cell) else {
            return Err(RepEnd::Failed {
                err: anyhow!("the cell is not provisioned"),
                cell_level: true,
            });
        };
        let how = Observe {
            sources: &live.sources,
            settle: self.reps.settle,
            timeline: self.reps.timeline,
        };
        let obs = self.show.observer();
        let r = match &mut self.ground {
            Ground::Made { study, .. } => {
                let engine = match live.engines.entry(wl) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(v) => match study.cells[cell].workloads[wl].build() {
                        Ok(e) => v.insert(e),
                        Err(err) => {
                            return Err(RepEnd::Failed {
                                err,
                                cell_level: false,
                            })
                        }
                    },
                };
                run_observed(engine.as_mut(), &live.target, obs, &how, None)
            }
            Ground::Dir { engines, owned, .. } => {
                let mut around = owned.around(self.store);
                let engine: &mut dyn Workload = engines.engine(cell);
                run_observed(engine, &live.target, obs, &how, Some(&mut around))
            }
        };
        if counted {
            live.used = true;
        }
        Ok(r)
    }

    /// The repetition's fate under the disturbed policy, its trial stored, and its line if
    /// it was disturbed; a re-run is counted against its series.
    fn judge(&mut self, si: usize, counted: bool, r: &Repetition, what: &str) -> Result<Fate> {
        let (c, w) = self.ids(si);
        let policy = self.reps.disturbed;
        let fate = r.fate(policy, counted, self.series[si].reruns, self.rule.max);
        if counted {
            self.disturbance.add(r.window.interference.as_deref(), fate);
        }
        let at = Slot {
            cell: c,
            workload: w,
            repetition: self.series[si].done + 1,
            order_index: self.order_index,
            cache_policy: self.reps.cache.as_str(),
        };
        let trial = r.row(fate, at, counted);
        self.store.record_trial(&trial)?;
        self.order_index += 1;
        let why = r.window.interference.clone().unwrap_or_default();
        let words = (policy, self.show.policy(policy));
        if let Some(line) = fate_line(fate, what, &why, words, self.series[si].reruns) {
            self.show.println(&line);
        }
        if fate == Fate::Rerun {
            self.series[si].reruns += 1;
        }
        Ok(fate)
    }

    /// A repetition that ran to the end: added to its series (counted, or its place taken
    /// when dropped), shown, and handed to an engine command's own report.
    fn account(
        &mut self,
        si: usize,
        counted: bool,
        fate: Fate,
        m: &[Metric],
        (what, wall): (&str, f64),
    ) -> Result<()> {
        let (cell, rep_no) = (self.series[si].cell, self.series[si].done + 1);
        if counted {
            if self.series[si].done == 0 {
                let (c, w) = self.ids(si);
                self.store
                    .set_series(c, w, SeriesStatus::Running, None, None)?;
            }
            if fate == Fate::Drop {
                self.series[si].add_dropped(wall);
            } else {
                self.series[si].add(m, wall);
            }
        }
        let at = self.position(rep_no, cell);
        match (&self.show, &mut self.ground) {
            (Show::Study(p), _) => {
                // A warm-up gets its line too (a log showed nothing for minutes of them); the
                // counts are the counted repetitions', which it leaves as they were.
                let ran = counted.then_some(si);
                let done: u64 = self.series.iter().map(|s| u64::from(s.done)).sum();
                let planned: u64 = (0..self.series.len())
                    .map(|i| u64::from(schedule::planned_now(&self.series, i, &self.rule, ran)))
                    .sum();
                let eta = schedule::eta_of(&self.series, &self.rule, ran);
                p.rep_finished(done, planned, what, wall, eta);
            }
            (Show::Command { steps, .. }, Ground::Dir { engines, .. }) => {
                if let Some(s) = steps {
                    s.step_finished(at, wall);
                }
                if counted && fate == Fate::Count {
                    engines.counted(rep_no, cell, m);
                    self.counted[cell].push(m.to_vec());
                }
            }
            _ => {}
        }
        Ok(())
    }
}
