//! One repetition of a series: the warm-ups due first, the cache policy (`fresh`: a new
//! file system; `cold`: a remount), the engine built once per cell, the run through the one
//! protocol with telemetry around it ([`run_observed`]), the disturbed-repetition policy,
//! and the trial stored as soon as it ends.

use super::super::cache;
use super::super::telemetry::{run_observed, Observe};
use super::{schedule, RepEnd, Runner};
use crate::plan::CachePolicy;
use crate::stats::adaptive::{Disturbed, Fate};
use crate::store::SeriesStatus;
use anyhow::Result;
use std::time::Instant;

impl Runner<'_> {
    /// One counted repetition of series `si` (with the discarded warm-ups first if due:
    /// `[repetitions] warmup` of them once per provisioning of the cell).
    pub(super) fn repetition(&mut self, si: usize) -> Result<RepEnd> {
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
        self.progress
            .set_unit(super::super::phase_bar::spec_unit(&spec));
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
        let fate = r.fate(policy, counted, self.series[si].reruns, self.rule.max);
        let trial = r.row(
            fate,
            c,
            w,
            rep_no,
            self.order_index,
            cache_policy.as_str(),
            counted,
        );
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
                }
                // A warm-up gets its line too (a log showed nothing for minutes of them); the
                // counts are the counted repetitions', which it leaves as they were.
                let ran = counted.then_some(si);
                let done: u64 = self.series.iter().map(|s| u64::from(s.done)).sum();
                let planned: u64 = (0..self.series.len())
                    .map(|i| u64::from(schedule::planned_now(&self.series, i, &self.rule, ran)))
                    .sum();
                self.progress.rep_finished(
                    done,
                    planned,
                    &what,
                    wall,
                    schedule::eta_of(&self.series, &self.rule, ran),
                );
                Ok(RepEnd::Ok)
            }
            None => Ok(RepEnd::Failed {
                err: r.error().map(|e| format!("{e:#}")).unwrap_or_default(),
                cell_level: false,
            }),
        }
    }
}
