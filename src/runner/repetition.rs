//! One repetition of one workload on one target: the protocol every runner follows (a study's
//! series and an engine command's `--repeat` alike).
//!
//! prepare (untimed) → the caller's `before_run` → run (the engine times what it measures) →
//! cleanup (always, also after a failure) → the caller's `after_cleanup` → the engine's
//! histograms (only of a successful repetition). The result is a typed [`Repetition`]: done
//! with its metrics, failed with its error, or interrupted by a signal; what to store is
//! derived from it in one place ([`Repetition::trial`]).

use crate::metric::{Histogram, Metric};
use crate::stats::adaptive::{self, Disturbed, Fate};
use crate::store::{self, NewTrial, RunWindow, TrialStatus};
use crate::workload::{Creates, Observer, Target, Workload};
use std::time::Instant;

/// How a repetition ended.
#[derive(Debug)]
pub enum Outcome {
    /// It ran to the end and cleaned up.
    Done {
        /// The measured values.
        metrics: Vec<Metric>,
        /// Latency histograms, if the engine keeps any.
        histograms: Vec<Histogram>,
    },
    /// It (or its cleanup) failed.
    Failed(anyhow::Error),
    /// A signal stopped it.
    Interrupted(anyhow::Error),
}

/// Where a repetition's trial row goes: its cell and workload, its number in the series, its
/// place in the run's order, and the cache policy applied before it.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The cell's id.
    pub cell: i64,
    /// The workload's id.
    pub workload: i64,
    /// Its number in the series (1-based).
    pub repetition: u32,
    /// Its place in the run's order.
    pub order_index: u32,
    /// The cache policy's word.
    pub cache_policy: &'a str,
}

/// One repetition, as it happened.
#[derive(Debug)]
pub struct Repetition {
    /// How it ended.
    pub outcome: Outcome,
    /// When it ran, and how quiet the machine was (the runner fills in the latter).
    pub window: RunWindow,
    /// What cleanup could not do after the run had already failed (the run's error decides
    /// the outcome; these are said besides).
    pub warnings: Vec<String>,
    /// Its time series, sampled once a second (`--timeline`); empty when not asked.
    pub timeline: Vec<crate::metric::TimePoint>,
}

/// What a runner does around a repetition (record what it will create, take telemetry, …),
/// given the entries the engine said it will create ([`Workload::creates`]). Both default to
/// nothing; an error fails the repetition.
pub trait Around {
    /// After `prepare` succeeded, right before `run`.
    fn before_run(&mut self, _creates: &[Creates]) -> anyhow::Result<()> {
        Ok(())
    }
    /// After `cleanup`, whatever happened.
    fn after_cleanup(&mut self, _creates: &[Creates]) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Whether `e` is (or was caused by) a signal's interruption.
pub(super) fn is_interrupt(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<crate::signal::Interrupted>())
}

/// Run one repetition of `engine` on `target`.
pub fn run_one<W: Workload + ?Sized>(
    engine: &mut W,
    target: &Target,
    obs: &dyn Observer,
    around: &mut dyn Around,
) -> Repetition {
    // No timed phase of any engine pays for running a page of fslab's code the first time.
    crate::workload::warm::map_own_code();
    let started_at = store::now();
    let t0 = Instant::now();
    let mut creates = Vec::new();
    let result = engine
        .prepare(target)
        .and_then(|_| {
            creates = engine.creates(target);
            around.before_run(&creates)
        })
        .and_then(|_| engine.run(target, obs));
    let cleaned = engine.cleanup(target);
    let cleaned = match around.after_cleanup(&creates) {
        Ok(()) => cleaned,
        Err(e) => cleaned.and(Err(e)),
    };
    let mut warnings = Vec::new();
    let result = match (result, cleaned) {
        (Ok(m), Ok(())) => Ok(m),
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(c)) => {
            warnings.push(format!("{c:#}"));
            Err(e)
        }
        (Ok(_), Err(c)) => Err(c),
    };
    let outcome = match result {
        Ok(metrics) => Outcome::Done {
            metrics,
            histograms: engine.take_histograms(),
        },
        Err(e) if is_interrupt(&e) || crate::signal::interrupted() => Outcome::Interrupted(e),
        Err(e) => Outcome::Failed(e),
    };
    Repetition {
        outcome,
        window: RunWindow {
            started_at,
            finished_at: store::now(),
            wall_seconds: t0.elapsed().as_secs_f64(),
            ..RunWindow::default()
        },
        warnings,
        timeline: Vec::new(),
    }
}

impl Repetition {
    /// Add samples measured around the engine (telemetry) to a repetition that ran to the end.
    pub fn add_metrics(&mut self, extra: Vec<Metric>) {
        if let Outcome::Done { metrics, .. } = &mut self.outcome {
            metrics.extend(extra);
        }
    }

    /// Whether a signal stopped it.
    pub fn interrupted(&self) -> bool {
        matches!(self.outcome, Outcome::Interrupted(_))
    }

    /// The trial row to store at `at`: counted (`ok`) or a discarded warm-up when it ran to
    /// the end, else `failed` with its error (an interrupted one too, for runners that keep
    /// it).
    pub fn trial<'a>(&'a self, at: Slot<'a>, counted: bool) -> NewTrial<'a> {
        let (status, error, metrics, histograms): (_, _, &[Metric], &[Histogram]) =
            match &self.outcome {
                Outcome::Done {
                    metrics,
                    histograms,
                } if counted => (TrialStatus::Ok, None, metrics, histograms),
                Outcome::Done {
                    metrics,
                    histograms,
                } => (TrialStatus::Discarded, None, metrics, histograms),
                Outcome::Failed(e) | Outcome::Interrupted(e) => {
                    (TrialStatus::Failed, Some(format!("{e:#}")), &[], &[])
                }
            };
        NewTrial {
            cell: at.cell,
            workload: at.workload,
            repetition: if status == TrialStatus::Ok {
                at.repetition
            } else {
                0
            },
            order_index: at.order_index,
            status,
            error,
            cache_policy: at.cache_policy,
            window: self.window.clone(),
            metrics,
            histograms,
            timeline: &self.timeline,
            excluded: None,
        }
    }

    /// What becomes of it under the disturbed-repetition policy (`--disturbed`,
    /// `[repetitions] disturbed`): a counted repetition that ran to the end while the machine
    /// was not quiet is judged by `policy` (`reruns`: how many of its series were re-run
    /// already, `max`: how many the series may count); every other one counts as it is.
    pub fn fate(&self, policy: Disturbed, counted: bool, reruns: u32, max: u32) -> Fate {
        match (&self.window.interference, &self.outcome) {
            (Some(_), Outcome::Done { .. }) if counted => adaptive::fate(policy, true, reruns, max),
            _ => Fate::Count,
        }
    }

    /// The trial row to store for a repetition whose [`Repetition::fate`] is `fate`: as it
    /// ended ([`Repetition::trial`]), or, disturbed and left out (`excluded` = `rerun` or
    /// `dropped`), status `discarded` with its repetition number kept.
    pub fn row<'a>(&'a self, fate: Fate, at: Slot<'a>, counted: bool) -> NewTrial<'a> {
        let repetition = at.repetition;
        match fate.excluded() {
            Some(ex) => NewTrial {
                repetition,
                excluded: Some(ex),
                ..self.trial(at, false)
            },
            None => self.trial(at, counted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(outcome: Outcome, disturbed: bool) -> Repetition {
        Repetition {
            outcome,
            window: RunWindow {
                started_at: "2026-01-01T00:00:00Z".into(),
                finished_at: "2026-01-01T00:00:01Z".into(),
                wall_seconds: 1.0,
                interference: disturbed.then(|| "other I/O".to_string()),
                settle_seconds: None,
            },
            warnings: Vec::new(),
            timeline: Vec::new(),
        }
    }

    fn done() -> Outcome {
        Outcome::Done {
            metrics: Vec::new(),
            histograms: Vec::new(),
        }
    }

    #[test]
    fn only_a_counted_disturbed_repetition_that_ran_to_the_end_is_judged() {
        let r = rep(done(), true);
        assert_eq!(r.fate(Disturbed::Repeat, true, 0, 5), Fate::Rerun);
        assert_eq!(r.fate(Disturbed::Drop, true, 0, 5), Fate::Drop);
        assert_eq!(r.fate(Disturbed::Keep, true, 0, 5), Fate::Count);
        // A warm-up is discarded anyway; a quiet one and a failed one count as they are.
        assert_eq!(r.fate(Disturbed::Repeat, false, 0, 5), Fate::Count);
        let quiet = rep(done(), false);
        assert_eq!(quiet.fate(Disturbed::Repeat, true, 0, 5), Fate::Count);
        let failed = rep(Outcome::Failed(anyhow::anyhow!("boom")), true);
        assert_eq!(failed.fate(Disturbed::Repeat, true, 0, 5), Fate::Count);
    }

    #[test]
    fn the_row_follows_the_fate() {
        let r = rep(done(), true);
        let at = |cache| Slot {
            cell: 1,
            workload: 2,
            repetition: 3,
            order_index: 7,
            cache_policy: cache,
        };
        let t = r.row(Fate::Rerun, at("cold"), true);
        assert_eq!(
            (t.status, t.repetition, t.excluded),
            (TrialStatus::Discarded, 3, Some("rerun"))
        );
        let t = r.row(Fate::Drop, at("cold"), true);
        assert_eq!(t.excluded, Some("dropped"));
        let t = r.row(Fate::Count, at("cold"), true);
        assert_eq!(
            (t.status, t.repetition, t.excluded),
            (TrialStatus::Ok, 3, None)
        );
        let warmup = r.row(Fate::Count, at("cold"), false);
        assert_eq!(
            (warmup.status, warmup.repetition),
            (TrialStatus::Discarded, 0)
        );
        let failed = rep(Outcome::Failed(anyhow::anyhow!("boom")), false);
        let t = failed.row(Fate::Count, at("none"), true);
        assert_eq!(
            (t.status, t.error.as_deref()),
            (TrialStatus::Failed, Some("boom"))
        );
    }
}
