//! The study's loop: which series runs next (the order's scheduler), the time budget, the
//! stopping rule after each repetition, and the ETA from the repetitions still planned.

use super::super::order::Scheduler;
use super::super::progress::Progress;
use super::super::progress_text::Left;
use super::super::series::{Series, SeriesState};
use super::{Ground, RepEnd, Runner, Show};
use crate::stats::adaptive::{self, Rule, StopReason};
use crate::store::SeriesStatus;
use anyhow::Result;

/// Repetitions planned for series `i`; `just_ran` is the series whose repetition just
/// finished, before the rule decided whether it goes on: it is planned at the minimum still
/// needed, so its last repetition does not count one more.
pub(super) fn planned_now(
    series: &[Series],
    i: usize,
    rule: &Rule,
    just_ran: Option<usize>,
) -> u32 {
    let s = &series[i];
    match (just_ran == Some(i), &s.state) {
        (true, SeriesState::Active) => s.done + adaptive::remaining(rule, s.done).0,
        _ => s.planned(rule),
    }
}

/// Seconds left: every series' repetitions still planned at its own measured mean (an
/// unmeasured series at the mean of the others); `None` before anything is measured.
pub(super) fn eta_of(series: &[Series], rule: &Rule, just_ran: Option<usize>) -> Option<f64> {
    let left: Vec<Left> = (0..series.len())
        .map(|i| Left {
            steps: u64::from(planned_now(series, i, rule, just_ran).saturating_sub(series[i].done)),
            mean: series[i].mean_duration(),
            work: 1.0,
        })
        .collect();
    super::super::progress_text::eta(&left, None)
}

/// A study's display, with the repetitions planned, those earlier runs stored, and the ETA.
pub(super) fn display(enabled: bool, series: &[Series], rule: &Rule) -> Progress {
    let total: u64 = series.iter().map(|s| u64::from(s.planned(rule))).sum();
    let progress = Progress::study(enabled, total);
    progress.set_done(
        series.iter().map(|s| u64::from(s.done)).sum(),
        eta_of(series, rule, None),
    );
    progress
}

impl Runner<'_> {
    fn spent(&self) -> f64 {
        self.spent_before + self.started.elapsed().as_secs_f64()
    }

    pub(super) fn update_total(&self) {
        let t: u64 = self
            .series
            .iter()
            .map(|s| u64::from(s.planned(&self.rule)))
            .sum();
        if let Show::Study(p) = &self.show {
            p.set_total(t);
        }
    }

    /// Returns whether the run was interrupted.
    pub(super) fn main_loop(&mut self, seed: u64) -> Result<bool> {
        let mut sched = Scheduler::new(self.reps.order, seed);
        loop {
            if crate::signal::interrupted() {
                return Ok(true);
            }
            let active: Vec<bool> = self.series.iter().map(Series::is_active).collect();
            let done: Vec<u32> = self.series.iter().map(|s| s.done).collect();
            let Some(si) = sched.next(&active, &done) else {
                return Ok(false);
            };
            if !self.budget_allows(si) {
                self.stop_all_for_budget()?;
                continue;
            }
            let cell = self.series[si].cell;
            if !self.live.contains_key(&cell) {
                // Cells on the same real device cannot be mounted together: take the other
                // down first (it is made again when its turn comes).
                let clash: Vec<usize> = match &self.ground {
                    Ground::Made { study, .. } => self
                        .live
                        .keys()
                        .copied()
                        .filter(|&o| study.cells[o].shares_device_with(&study.cells[cell]))
                        .collect(),
                    Ground::Dir { .. } => Vec::new(),
                };
                for o in clash {
                    self.retire(o, false)?;
                }
                if let Err(e) = self.bring_up(cell) {
                    if crate::signal::interrupted() {
                        self.retire(cell, true)?;
                        return Ok(true);
                    }
                    self.fail_cell(cell, &format!("{e:#}"))?;
                    if self.ends_at_failure(e)? {
                        return Ok(false);
                    }
                    continue;
                }
            }
            match self.repetition(si)? {
                RepEnd::Interrupted => return Ok(true),
                RepEnd::Rerun => {}
                RepEnd::Failed { err, cell_level } => {
                    if cell_level {
                        self.fail_cell(cell, &format!("{err:#}"))?;
                    } else {
                        self.fail_series(si, &format!("{err:#}"))?;
                        self.retire_if_done(cell)?;
                    }
                    if self.ends_at_failure(err)? {
                        return Ok(false);
                    }
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

    /// An engine command ends at its first failure: the error is kept for its caller, and
    /// every series not run yet is failed with a line saying why. A study goes on with its
    /// other cells (`false`).
    fn ends_at_failure(&mut self, err: anyhow::Error) -> Result<bool> {
        if let Ground::Made { .. } = self.ground {
            return Ok(false);
        }
        for si in 0..self.series.len() {
            if self.series[si].is_active() {
                let not_run = "not run: the run stopped at an earlier error";
                self.mark_failed(si, not_run, not_run.to_string())?;
            }
        }
        self.failure = Some(err);
        Ok(true)
    }

    /// Whether the time budget (if any) leaves room for one more repetition of series `si`,
    /// at its own mean duration (an unmeasured series at the mean of all).
    fn budget_allows(&self, si: usize) -> bool {
        let Some(budget) = self.reps.budget else {
            return true;
        };
        let all: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.durations.clone())
            .collect();
        let est = self.series[si]
            .mean_duration()
            .or_else(|| (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64))
            .unwrap_or(0.0);
        adaptive::budget_allows(self.spent(), budget.as_secs_f64(), est)
    }

    pub(super) fn ids(&self, si: usize) -> (i64, i64) {
        let s = &self.series[si];
        (self.cell_ids[s.cell], self.wl_ids[s.wl])
    }

    fn stop_all_for_budget(&mut self) -> Result<()> {
        self.show
            .println("time budget reached; stopping every series");
        for si in 0..self.series.len() {
            if self.series[si].is_active() {
                self.series[si].state = SeriesState::Done(StopReason::Budget);
                let (c, w) = self.ids(si);
                let budget = Some(StopReason::Budget);
                self.store
                    .set_series(c, w, SeriesStatus::Complete, budget, None)?;
            }
        }
        Ok(())
    }
}
