//! Progress on stderr, one display for studies and engine commands alike: the bar of the
//! workload phase in flight, with its rate in units, and beside it what the run as a whole
//! has done and the ETA (see [`Head`]). When stderr is not a terminal (a log, a pipe, CI),
//! one plain line per finished repetition instead. Inside a guest whose host draws, a
//! study's display sends the same events as data on stderr ([`super::progress_wire`]); the
//! host feeds them to its own display ([`Progress::apply`]).
//!
//! * A study: one bar for the repetitions of the whole study (with an ETA from the measured
//!   durations of each series, none before the first is measured) above the phase's bar;
//!   its plain lines carry the totals: `[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s ·
//!   ETA 00:11`.
//! * An engine command: the run's counters and ETA in the phase's bar ("rep 2/3 · point 4/9
//!   · ETA 00:11"), and the same counters in its plain lines. The ETA comes from the
//!   measured durations (see [`progress_text::eta`]); before anything is measured there is
//!   none, or the caller's estimate.
//!
//! [`progress_text::eta`]: super::progress_text::eta

use super::lock;
use super::phase_bar::{words, PhaseBar};
use super::progress_text::{self as text, Left, Position, RateUnit};
use super::progress_wire::{self as wire, Event};
use crate::workload::{Observer, PhaseStatus};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// The study's ETA as last computed, and when: the bar counts it down between repetitions.
type EtaAt = Arc<Mutex<Option<(f64, Instant)>>>;

fn live_eta(e: &EtaAt) -> Option<f64> {
    lock(e).map(|(secs, at)| (secs - at.elapsed().as_secs_f64()).max(0.0))
}

/// The study's line: the repetitions, the elapsed clock, the ETA, then what runs now, cut to
/// the terminal's width (`wide_msg`) so that it never wraps: a wrapped status line is redrawn
/// one screen line short, and every line printed above it left a stale copy behind.
const MAIN: &str = "study [{bar:30}] {pos}/{len} reps  {elapsed_precise} elapsed{left}  {wide_msg}";

/// A study's phase line, below its study line (see [`PhaseBar`]).
const PHASE: &str = "  {msg:12} [{bar:30}] {counts} {rate}";

/// An engine command's bar: its phase, the bar as wide as the terminal allows, counts or
/// the engine's percentage, the rate, and the run's counters and ETA.
const COMMAND: &str = "{msg} [{wide_bar}] {counts} {rate}  {run}";

/// How often the bars are redrawn without news: the elapsed clock and the ETA keep moving
/// while a repetition of fio or dbench sends nothing for seconds.
const TICK: Duration = Duration::from_millis(500);

/// The shortest time between two `progress` lines of the protocol: an engine counts every
/// file, and the guest's console is no place for 100,000 lines a second.
const WIRE_GAP: Duration = Duration::from_millis(100);

/// What the display shows besides the phase in flight.
enum Head {
    /// A study's: the repetitions of the whole study, on a bar of their own above the phase's
    /// when drawn, with the ETA its runner computes.
    Study {
        main: Option<ProgressBar>,
        eta: EtaAt,
    },
    /// An engine command's: its name (`prefix`) before everything, and the run's counters and
    /// ETA, which the display keeps itself from the steps it is told of ([`Steps`]), in the
    /// phase's bar and its plain lines.
    Command {
        prefix: String,
        state: Arc<Mutex<RunState>>,
    },
}

/// The display: bars when stderr is a terminal, plain lines otherwise, the protocol's lines
/// inside a guest whose host draws; also the workloads' [`Observer`].
pub struct Progress {
    head: Head,
    /// The bars, when they are drawn.
    multi: Option<MultiProgress>,
    phase: Mutex<Option<PhaseBar>>,
    unit: Mutex<UnitOf>,
    lines: bool,
    /// Events go out as data (a study inside a guest whose host draws).
    wire: Option<Wire>,
}

/// Where the protocol's lines go, and when the last `progress` went.
struct Wire {
    out: Mutex<Box<dyn std::io::Write + Send>>,
    last: Mutex<Option<Instant>>,
}

impl Progress {
    /// An engine command's display. If `enabled`: bars on stderr when it is a terminal, plain
    /// lines otherwise. `prefix` (the engine) goes before everything. Its messages are said
    /// even when it is not enabled (`-q` keeps warnings).
    pub fn new(enabled: bool, prefix: impl Into<String>) -> Self {
        let tty = super::guest::stderr_draws();
        Progress {
            head: Head::Command {
                prefix: prefix.into(),
                state: Arc::default(),
            },
            multi: (enabled && tty)
                .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(5))),
            lines: enabled && !tty,
            ..Progress::quiet(false)
        }
    }

    /// A study's display of `total` repetitions: bars if `enabled` and stderr is a terminal;
    /// plain lines if `enabled` otherwise; the protocol's lines inside a guest whose host
    /// draws.
    pub fn study(enabled: bool, total: u64) -> Self {
        if enabled && super::guest::stderr_wire() {
            return Progress::wired(Box::new(std::io::stderr()), total);
        }
        if enabled && super::guest::stderr_draws() {
            return Progress::on_terminal(total);
        }
        Progress::quiet(enabled)
    }

    /// A study's display without bars: plain lines if `lines`, else nothing.
    fn quiet(lines: bool) -> Self {
        Progress {
            head: Head::Study {
                main: None,
                eta: EtaAt::default(),
            },
            multi: None,
            phase: Mutex::new(None),
            unit: Mutex::new(Box::new(|_, _| RateUnit::Items("items"))),
            lines,
            wire: None,
        }
    }

    /// A study's bars on stderr (the host's display of a guest's study).
    pub fn on_terminal(total: u64) -> Self {
        Progress::drawn(ProgressDrawTarget::stderr_with_hz(4), total)
    }

    /// A study's bars drawn on `target`.
    fn drawn(target: ProgressDrawTarget, total: u64) -> Self {
        let eta = EtaAt::default();
        let shown = eta.clone();
        let multi = MultiProgress::with_draw_target(target);
        let main = multi.add(ProgressBar::new(total));
        let style = ProgressStyle::with_template(MAIN)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("left", words(move |_| text::eta_suffix(live_eta(&shown))))
            .progress_chars("=> ");
        main.set_style(style);
        main.enable_steady_tick(TICK);
        Progress {
            head: Head::Study {
                main: Some(main),
                eta,
            },
            multi: Some(multi),
            ..Progress::quiet(false)
        }
    }

    /// A study's protocol lines on `out`, starting with `begin`.
    fn wired(out: Box<dyn std::io::Write + Send>, total: u64) -> Self {
        let p = Progress {
            wire: Some(Wire {
                out: Mutex::new(out),
                last: Mutex::new(None),
            }),
            ..Progress::quiet(false)
        };
        p.send(&Event::Begin(total));
        p
    }

    /// Plain lines only, even on a terminal (an engine that prints its own lines, like
    /// dbench's per-second ones, where a bar would be torn apart).
    pub fn lines_only(mut self) -> Self {
        self.lines |= self.multi.take().is_some();
        self
    }

    /// How each phase's rate is counted (by phase name and point index).
    pub fn with_units(self, f: impl Fn(&str, usize) -> RateUnit + Send + Sync + 'static) -> Self {
        *lock(&self.unit) = Box::new(f);
        self
    }

    /// What the phases of the next repetition's workload count (see
    /// [`super::phase_bar::spec_unit`]).
    pub fn set_unit(&self, unit: impl Fn(&str) -> RateUnit + Send + Sync + 'static) {
        *lock(&self.unit) = Box::new(move |phase, _| unit(phase));
    }

    /// An engine command's run state (none for a study).
    fn run(&self) -> Option<MutexGuard<'_, RunState>> {
        match &self.head {
            Head::Command { state, .. } => Some(lock(state)),
            Head::Study { .. } => None,
        }
    }

    /// The points of a sweep: their relative work and their words in plain lines.
    pub fn with_points(self, work: Vec<f64>, labels: Vec<String>) -> Self {
        if let Some(mut s) = self.run() {
            s.work = work;
            s.labels = labels;
        }
        self
    }

    /// Seconds one unit of work should take (one step where every point's work is 1: see
    /// [`Self::with_points`]), for an ETA before the first step is measured.
    pub fn with_estimate(self, secs_per_work: f64) -> Self {
        if let Some(mut s) = self.run() {
            s.prior = Some(secs_per_work).filter(|s| s.is_finite() && *s > 0.0);
        }
        self
    }

    /// Write `e` as a line of the protocol, if this display speaks it; whether it does.
    fn send(&self, e: &Event) -> bool {
        self.wire.is_some() && self.wire_line(&wire::encode(e))
    }

    /// Write `line` on the protocol's stream, if this display has one; whether it does.
    fn wire_line(&self, line: &str) -> bool {
        let Some(w) = &self.wire else { return false };
        // One write per line: nothing else on stderr comes between its words.
        let mut out = lock(&w.out);
        let _ = out.write_all(format!("{line}\n").as_bytes());
        let _ = out.flush();
        true
    }

    /// Take an event of a guest's display (see [`super::progress_wire`]).
    pub fn apply(&self, e: Event) {
        match e {
            // The host makes a display per `begin`; within one, nothing to do.
            Event::Begin(_) => {}
            Event::Total(n) => self.set_total(n),
            Event::Done(n, eta) => self.set_done(n, eta),
            Event::Rep(what) => self.rep_started(&what),
            Event::Phase(unit, total, name) => {
                self.set_unit(move |_| unit);
                self.phase_started(&name, total);
            }
            Event::Progress(n) => self.progress(n),
            Event::Status(s) => self.status(s),
            Event::End => self.phase_finished(""),
            Event::Finish => self.finish(),
        }
    }

    /// A study's bar of repetitions, when it is drawn.
    fn main(&self) -> Option<&ProgressBar> {
        match &self.head {
            Head::Study { main, .. } => main.as_ref(),
            Head::Command { .. } => None,
        }
    }

    /// Repetitions done as the study's bar shows them.
    pub fn done(&self) -> u64 {
        self.main().map_or(0, |m| m.position())
    }

    /// Run `f` (which writes to the terminal) with the bars out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.multi {
            Some(m) => m.suspend(f),
            None => f(),
        }
    }

    /// Change the planned number of repetitions (adaptive series stop early or run longer).
    pub fn set_total(&self, n: u64) {
        if self.send(&Event::Total(n)) {
            return;
        }
        if let Some(m) = self.main() {
            m.set_length(n);
        }
    }

    /// A repetition starts; `what` names cell, workload and repetition.
    pub fn rep_started(&self, what: &str) {
        if self.send(&Event::Rep(what.to_string())) {
            return;
        }
        if let Some(m) = self.main() {
            m.set_message(what.to_string());
        }
    }

    /// Repetitions done so far (a resumed study starts with some) and the time left, if
    /// anything is measured.
    pub fn set_done(&self, done: u64, eta: Option<f64>) {
        if self.send(&Event::Done(done, eta)) {
            return;
        }
        if let Head::Study { eta: at, .. } = &self.head {
            *lock(at) = eta.map(|e| (e, Instant::now()));
        }
        if let Some(m) = self.main() {
            m.set_position(done);
        }
    }

    /// A repetition of a study finished (counted, or a warm-up that leaves the counts as
    /// they were): `done` of `total` planned now, `what` it was (cell, workload, `rep k/n` or
    /// `warm-up (discarded)`), its wall time and the time left.
    pub fn rep_finished(&self, done: u64, total: u64, what: &str, secs: f64, eta: Option<f64>) {
        self.set_total(total);
        self.set_done(done, eta);
        if self.main().is_none() && self.lines {
            eprintln!("{}", text::study_line(done, total, what, secs, eta));
        }
    }

    /// A line for the user, above the bars. An engine command says it even when it shows no
    /// progress; a study's guest sends it as a plain line among the protocol's.
    pub fn println(&self, msg: &str) {
        match (&self.multi, &self.head) {
            (Some(m), _) => {
                let _ = m.println(msg);
            }
            (None, Head::Command { .. }) => eprintln!("{msg}"),
            (None, _) if self.lines => eprintln!("{msg}"),
            (None, _) => {
                // A guest's message: a plain line among the protocol's, printed by the host.
                self.wire_line(msg);
            }
        }
    }

    /// Remove the bars.
    pub fn finish(&self) {
        if self.send(&Event::Finish) {
            return;
        }
        self.phase_finished("");
        if let Some(m) = self.main() {
            m.finish_and_clear();
        }
    }
}

impl Steps for Progress {
    fn step_started(&self, at: Position) {
        let Some(mut s) = self.run() else { return };
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
        let Head::Command { prefix, .. } = &self.head else {
            return;
        };
        let line = {
            let Some(mut s) = self.run() else { return };
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
            text::step_line(prefix, at, &what, secs, eta)
        };
        if self.lines {
            eprintln!("{line}");
        }
    }
}

impl Observer for Progress {
    fn phase_started(&self, phase: &str, total: u64) {
        let point = self
            .run()
            .and_then(|s| s.at)
            .map_or(0, |a| a.point.saturating_sub(1));
        let unit = (lock(&self.unit))(phase, point);
        if self.send(&Event::Phase(unit, total, phase.to_string())) {
            return;
        }
        let Some(multi) = &self.multi else { return };
        let bar = match &self.head {
            Head::Study { .. } => {
                let named = ProgressBar::new(total).with_message(phase.to_string());
                PhaseBar::new(multi.add(named), PHASE, total, unit, String::new)
            }
            Head::Command { prefix, state } => {
                // Named before its first frame.
                let named = ProgressBar::new(total).with_message(text::bar_name(prefix, phase));
                let state = state.clone();
                let bar = PhaseBar::new(multi.add(named), COMMAND, total, unit, move || {
                    lock(&state).run_text()
                });
                // The ETA counts down between the engine's events.
                bar.bar().enable_steady_tick(TICK);
                bar
            }
        };
        if let Some(old) = lock(&self.phase).replace(bar) {
            old.finish();
            multi.remove(old.bar());
        }
    }

    fn progress(&self, done: u64) {
        if let Some(w) = &self.wire {
            let mut last = lock(&w.last);
            if last.map_or(true, |t| t.elapsed() >= WIRE_GAP) {
                *last = Some(Instant::now());
                drop(last);
                self.send(&Event::Progress(done));
            }
            return;
        }
        if let Some(b) = lock(&self.phase).as_ref() {
            b.progress(done);
        }
    }

    fn phase_finished(&self, _phase: &str) {
        if self.send(&Event::End) {
            return;
        }
        if let Some(b) = lock(&self.phase).take() {
            b.finish();
            if let Some(m) = &self.multi {
                m.remove(b.bar());
            }
        }
    }

    fn message(&self, msg: &str) {
        self.println(msg);
    }

    fn wants_status(&self) -> bool {
        self.multi.is_some() || self.wire.is_some()
    }

    fn status(&self, status: PhaseStatus) {
        if self.send(&Event::Status(status.clone())) {
            return;
        }
        if let (Some(left), Some(mut s)) = (status.eta, self.run()) {
            s.engine_eta(left);
        }
        if let Some(b) = lock(&self.phase).as_ref() {
            b.status(status);
        }
    }
}

#[cfg(test)]
#[path = "progress_study_tests.rs"]
mod study_tests;

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
