//! Progress of an engine command on stderr. On a terminal, one bar per phase with its rate in
//! units and the run's counters and ETA ("rep 2/3 · point 4/9 · ETA 00:11"); when stderr is
//! not a terminal (a log, a pipe), one plain line per finished repetition of a point with
//! the same counters. The ETA comes from the measured durations (see [`progress_text::eta`]);
//! before anything is measured there is none, or the caller's estimate.
//!
//! [`progress_text::eta`]: super::progress_text::eta

use super::phase_bar::PhaseBar;
use super::progress_text::{self as text, Left, Position, RateUnit};
use crate::workload::{Observer, PhaseStatus};
use indicatif::{ProgressBar, ProgressDrawTarget};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Told by [`super::adhoc::run_cells`] where the run is: each (repetition, point) step.
pub trait Steps: Sync {
    /// A step starts.
    fn step_started(&self, at: Position);
    /// A step finished and was measured: it took `secs` of wall time.
    fn step_finished(&self, at: Position, secs: f64);
}

/// What the display knows of the run.
#[derive(Default)]
struct RunState {
    /// The step in flight (or the last one).
    at: Option<Position>,
    /// When the step in flight started.
    started: Option<Instant>,
    /// ETA when it started, that step included, and what would be left after it.
    eta_at_start: Option<f64>,
    eta_after: Option<f64>,
    /// Per point: Σ measured seconds and how many.
    measured: Vec<(f64, u32)>,
    /// Per point: relative work (to estimate unmeasured points).
    work: Vec<f64>,
    /// Per point: its words in plain lines (`1024k, 64k`).
    labels: Vec<String>,
    /// Seconds per unit of work before anything is measured (a plan's estimate; per step
    /// where every point's work is 1).
    prior: Option<f64>,
    /// The engine's own estimate of the step in flight (fio's ETA), and when it came.
    engine_left: Option<(f64, Instant)>,
}

impl RunState {
    fn points(&self, at: Position) -> usize {
        at.points.max(1)
    }

    /// Per point, what is left after `after` (or of the whole run).
    fn left(&self, reps: u32, points: usize, after: Option<Position>) -> Vec<Left> {
        text::interleaved_left(reps, points, after)
            .into_iter()
            .enumerate()
            .map(|(i, steps)| {
                let (sum, n) = self.measured.get(i).copied().unwrap_or((0.0, 0));
                Left {
                    steps,
                    mean: (n > 0).then(|| sum / f64::from(n)),
                    work: self.work.get(i).copied().unwrap_or(1.0),
                }
            })
            .collect()
    }

    /// Seconds left now: the engine's own estimate of the step in flight plus what the
    /// steps after it need, when the engine gives one; else the estimate at the step's
    /// start less its elapsed time, never below what the steps after it need.
    fn live_eta(&self) -> Option<f64> {
        if let Some((left, at)) = self.engine_left {
            let now = (left - at.elapsed().as_secs_f64()).max(0.0);
            return Some(now + self.eta_after.unwrap_or(0.0));
        }
        let start = self.eta_at_start?;
        let elapsed = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        Some((start - elapsed).max(self.eta_after.unwrap_or(0.0)))
    }

    /// The engine says the step in flight needs `left` more seconds. Before anything is
    /// measured, its length so far plus that is the best guess for the steps after it.
    fn engine_eta(&mut self, left: f64) {
        let Some(at) = self.at else { return };
        let elapsed = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let work = self
            .work
            .get(at.point.saturating_sub(1))
            .copied()
            .unwrap_or(1.0);
        let guess = self.prior.or(Some((elapsed + left) / work));
        let after = self.left(at.reps, self.points(at), Some(at));
        self.eta_after = text::eta(&after, guess);
        self.engine_left = Some((left, Instant::now()));
    }

    /// `rep 2/3 · point 4/9 · ETA 00:11` (what the bar shows after the rate).
    fn run_text(&self) -> String {
        match self.at {
            Some(at) => format!("{}{}", text::counter(at), text::eta_suffix(self.live_eta())),
            None => String::new(),
        }
    }
}

/// The rate unit of a phase: given the phase name and the point's index.
type UnitOf = Box<dyn Fn(&str, usize) -> RateUnit + Send + Sync>;

/// Draws one bar per phase with its rate, the run's counters and ETA; messages go above the
/// bar. When stderr is not a terminal, plain lines per finished step instead.
pub struct ProgressObserver {
    bar: Mutex<Option<PhaseBar>>,
    bars: bool,
    lines: bool,
    prefix: String,
    unit: UnitOf,
    state: Arc<Mutex<RunState>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ProgressObserver {
    /// If `enabled`: bars on stderr when it is a terminal, plain lines otherwise. `prefix`
    /// (the engine) goes before everything.
    pub fn new(enabled: bool, prefix: impl Into<String>) -> Self {
        let tty = super::guest::stderr_draws();
        ProgressObserver {
            bar: Mutex::new(None),
            bars: enabled && tty,
            lines: enabled && !tty,
            prefix: prefix.into(),
            unit: Box::new(|_, _| RateUnit::Items("items")),
            state: Arc::new(Mutex::new(RunState::default())),
        }
    }

    /// Plain lines only, even on a terminal (an engine that prints its own lines, like
    /// dbench's per-second ones, where a bar would be torn apart).
    pub fn lines_only(mut self) -> Self {
        self.lines |= self.bars;
        self.bars = false;
        self
    }

    /// How each phase's rate is counted (by phase name and point index).
    pub fn with_units(
        mut self,
        f: impl Fn(&str, usize) -> RateUnit + Send + Sync + 'static,
    ) -> Self {
        self.unit = Box::new(f);
        self
    }

    /// The points of a sweep: their relative work and their words in plain lines.
    pub fn with_points(self, work: Vec<f64>, labels: Vec<String>) -> Self {
        {
            let mut s = lock(&self.state);
            s.work = work;
            s.labels = labels;
        }
        self
    }

    /// Seconds one unit of work should take (one step where every point's work is 1: see
    /// [`Self::with_points`]), for an ETA before the first step is measured.
    pub fn with_estimate(self, secs_per_work: f64) -> Self {
        lock(&self.state).prior = Some(secs_per_work).filter(|s| s.is_finite() && *s > 0.0);
        self
    }
}

impl Steps for ProgressObserver {
    fn step_started(&self, at: Position) {
        let mut s = lock(&self.state);
        let points = s.points(at);
        let mut left = s.left(at.reps, points, Some(at));
        let eta_after = text::eta(&left, s.prior);
        if let Some(l) = left.get_mut(at.point.saturating_sub(1)) {
            l.steps += 1;
        }
        s.eta_at_start = text::eta(&left, s.prior);
        s.eta_after = eta_after;
        s.at = Some(at);
        s.started = Some(Instant::now());
        s.engine_left = None;
    }

    fn step_finished(&self, at: Position, secs: f64) {
        let line = {
            let mut s = lock(&self.state);
            let i = at.point.saturating_sub(1);
            if s.measured.len() <= i {
                s.measured.resize(i + 1, (0.0, 0));
            }
            s.measured[i].0 += secs;
            s.measured[i].1 += 1;
            s.engine_left = None;
            let left = s.left(at.reps, s.points(at), Some(at));
            let eta = text::eta(&left, s.prior);
            let what = s.labels.get(i).cloned().unwrap_or_default();
            text::step_line(&self.prefix, at, &what, secs, eta)
        };
        if self.lines {
            eprintln!("{line}");
        }
    }
}

/// An engine command's bar: its phase, the bar as wide as the terminal allows, counts or
/// the engine's percentage, the rate, and the run's counters and ETA.
const TEMPLATE: &str = "{msg} [{wide_bar}] {counts} {rate}  {run}";

impl Observer for ProgressObserver {
    fn phase_started(&self, phase: &str, total: u64) {
        if !self.bars {
            return;
        }
        let point = lock(&self.state)
            .at
            .map_or(0, |a| a.point.saturating_sub(1));
        let unit = (self.unit)(phase, point);
        let state = self.state.clone();
        let bar = PhaseBar::new(
            // Named before its first frame.
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(5))
                .with_message(text::bar_name(&self.prefix, phase)),
            TEMPLATE,
            total,
            unit,
            move || lock(&state).run_text(),
        );
        // The ETA counts down between the engine's events.
        bar.bar()
            .enable_steady_tick(std::time::Duration::from_millis(500));
        if let Some(old) = lock(&self.bar).replace(bar) {
            old.finish();
        }
    }

    fn progress(&self, done: u64) {
        if let Some(b) = lock(&self.bar).as_ref() {
            b.progress(done);
        }
    }

    fn phase_finished(&self, _phase: &str) {
        if let Some(b) = lock(&self.bar).take() {
            b.finish();
        }
    }

    fn message(&self, msg: &str) {
        match lock(&self.bar).as_ref() {
            Some(b) => b.bar().println(msg),
            None => eprintln!("{msg}"),
        }
    }

    fn wants_status(&self) -> bool {
        self.bars
    }

    fn status(&self, status: PhaseStatus) {
        if let Some(left) = status.eta {
            lock(&self.state).engine_eta(left);
        }
        if let Some(b) = lock(&self.bar).as_ref() {
            b.status(status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rep: u32, reps: u32) -> Position {
        Position {
            rep,
            reps,
            point: 1,
            points: 1,
        }
    }

    #[test]
    fn the_engines_eta_counts_for_the_step_in_flight() {
        // Repetition 1 of 3, nothing measured, fio says 4 s more: the steps after it are
        // guessed at this one's length (0 s so far + 4 s) each.
        let mut s = RunState {
            at: Some(at(1, 3)),
            ..RunState::default()
        };
        assert_eq!(s.live_eta(), None, "no ETA before anything is known");
        s.engine_eta(4.0);
        let eta = s.live_eta().unwrap();
        assert!((11.5..=12.0).contains(&eta), "{eta}");
        // Repetition 3 of 3 after two measured at 5 s: fio's 2 s and nothing after.
        s.measured = vec![(10.0, 2)];
        s.at = Some(at(3, 3));
        s.engine_eta(2.0);
        let eta = s.live_eta().unwrap();
        assert!((1.5..=2.0).contains(&eta), "{eta}");
        // Repetition 2 of 3: 2 s now and one more at the measured 5 s.
        s.at = Some(at(2, 3));
        s.engine_eta(2.0);
        let eta = s.live_eta().unwrap();
        assert!((6.5..=7.0).contains(&eta), "{eta}");
    }
}
