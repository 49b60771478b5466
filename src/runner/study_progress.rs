//! Progress of a study on stderr: one bar for the repetitions of the whole study (with an ETA
//! from the measured durations of each series, none before the first is measured) and one
//! for the current workload phase. When stderr is not a terminal (CI logs), one line per
//! repetition instead, with the totals: `[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s ·
//! ETA 00:11`. Inside a guest whose host draws, the same events as data on stderr
//! ([`super::progress_wire`]); the host feeds them to its own display ([`StudyProgress::apply`]).

use super::phase_bar::PhaseBar;
use super::progress_text::{self as text, RateUnit};
use super::progress_wire::{self as wire, Event};
use crate::workload::{Observer, PhaseStatus};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The study's ETA as last computed, and when: the bar counts it down between repetitions.
type EtaAt = Arc<Mutex<Option<(f64, Instant)>>>;

/// What the current workload's phases count (by phase name).
type UnitOf = Box<dyn Fn(&str) -> RateUnit + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn live_eta(e: &EtaAt) -> Option<f64> {
    lock(e).map(|(secs, at)| (secs - at.elapsed().as_secs_f64()).max(0.0))
}

/// The study's line: the repetitions, the elapsed clock, the ETA, then what runs now, cut to
/// the terminal's width (`wide_msg`) so that it never wraps: a wrapped status line is redrawn
/// one screen line short, and every line printed above it left a stale copy behind.
const MAIN: &str = "study [{bar:30}] {pos}/{len} reps  {elapsed_precise} elapsed{left}  {wide_msg}";

/// The phase's line (see [`PhaseBar`]).
const PHASE: &str = "  {msg:12} [{bar:30}] {counts} {rate}";

/// How often the bars are redrawn without news: the elapsed clock and the ETA keep moving
/// while a repetition of fio or dbench sends nothing for seconds.
const TICK: Duration = Duration::from_millis(500);

/// The shortest time between two `progress` lines of the protocol: an engine counts every
/// file, and the guest's console is no place for 100,000 lines a second.
const WIRE_GAP: Duration = Duration::from_millis(100);

/// Study-level progress display; also the workloads' [`Observer`].
pub struct StudyProgress {
    multi: Option<MultiProgress>,
    main: Option<ProgressBar>,
    phase: Mutex<Option<PhaseBar>>,
    unit: Mutex<UnitOf>,
    lines: bool,
    eta: EtaAt,
    /// Events go out as data (inside a guest whose host draws).
    wire: Option<Wire>,
}

/// Where the protocol's lines go, and when the last `progress` went.
struct Wire {
    out: Mutex<Box<dyn std::io::Write + Send>>,
    last: Mutex<Option<Instant>>,
}

impl StudyProgress {
    /// Bars if `enabled` and stderr is a terminal; plain lines if `enabled` otherwise; the
    /// protocol's lines inside a guest whose host draws.
    pub fn new(enabled: bool, total: u64) -> StudyProgress {
        if enabled && super::guest::stderr_wire() {
            return StudyProgress::wired(Box::new(std::io::stderr()), total);
        }
        if enabled && super::guest::stderr_draws() {
            return StudyProgress::on_terminal(total);
        }
        StudyProgress::quiet(enabled)
    }

    /// No bars: plain lines if `lines`, else nothing.
    fn quiet(lines: bool) -> StudyProgress {
        StudyProgress {
            multi: None,
            main: None,
            phase: Mutex::new(None),
            unit: Mutex::new(Box::new(|_| RateUnit::Items("items"))),
            lines,
            eta: EtaAt::default(),
            wire: None,
        }
    }

    /// Bars on stderr (the host's display of a guest's study).
    pub fn on_terminal(total: u64) -> StudyProgress {
        StudyProgress::drawn(ProgressDrawTarget::stderr_with_hz(4), total)
    }

    /// The protocol's lines on `out`, starting with `begin`.
    fn wired(out: Box<dyn std::io::Write + Send>, total: u64) -> StudyProgress {
        let p = StudyProgress {
            wire: Some(Wire {
                out: Mutex::new(out),
                last: Mutex::new(None),
            }),
            ..StudyProgress::quiet(false)
        };
        p.send(&Event::Begin(total));
        p
    }

    /// Write `e` as a line of the protocol, if this display speaks it; whether it does.
    fn send(&self, e: &Event) -> bool {
        let Some(w) = &self.wire else { return false };
        // One write per line: nothing else on stderr comes between its words.
        let line = format!("{}\n", wire::encode(e));
        let mut out = lock(&w.out);
        let _ = out.write_all(line.as_bytes());
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

    /// Repetitions done as the bar shows them.
    pub fn done(&self) -> u64 {
        self.main.as_ref().map_or(0, |m| m.position())
    }

    /// Run `f` (which writes to the terminal) with the bars out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.multi {
            Some(m) => m.suspend(f),
            None => f(),
        }
    }

    /// Bars drawn on `target`.
    fn drawn(target: ProgressDrawTarget, total: u64) -> StudyProgress {
        let eta = EtaAt::default();
        let shown = eta.clone();
        let multi = MultiProgress::with_draw_target(target);
        let main = multi.add(ProgressBar::new(total));
        let style = ProgressStyle::with_template(MAIN)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "left",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&text::eta_suffix(live_eta(&shown)));
                },
            )
            .progress_chars("=> ");
        main.set_style(style);
        main.enable_steady_tick(TICK);
        StudyProgress {
            multi: Some(multi),
            main: Some(main),
            phase: Mutex::new(None),
            unit: Mutex::new(Box::new(|_| RateUnit::Items("items"))),
            lines: false,
            eta,
            wire: None,
        }
    }

    /// What the phases of the next repetition's workload count (see
    /// [`super::phase_bar::spec_unit`]).
    pub fn set_unit(&self, unit: impl Fn(&str) -> RateUnit + Send + Sync + 'static) {
        *lock(&self.unit) = Box::new(unit);
    }
    /// Change the planned number of repetitions (adaptive series stop early or run longer).
    pub fn set_total(&self, n: u64) {
        if self.send(&Event::Total(n)) {
            return;
        }
        if let Some(m) = &self.main {
            m.set_length(n);
        }
    }

    /// A repetition starts; `what` names cell, workload and repetition.
    pub fn rep_started(&self, what: &str) {
        if self.send(&Event::Rep(what.to_string())) {
            return;
        }
        if let Some(m) = &self.main {
            m.set_message(what.to_string());
        }
    }

    /// Repetitions done so far (a resumed study starts with some) and the time left, if
    /// anything is measured.
    pub fn set_done(&self, done: u64, eta: Option<f64>) {
        if self.send(&Event::Done(done, eta)) {
            return;
        }
        *lock(&self.eta) = eta.map(|e| (e, Instant::now()));
        if let Some(m) = &self.main {
            m.set_position(done);
        }
    }

    /// A repetition finished (counted, or a warm-up that leaves the counts as they were):
    /// `done` of `total` planned now, `what` it was (cell, workload, `rep k/n` or `warm-up
    /// (discarded)`), its wall time and the time left.
    pub fn rep_finished(&self, done: u64, total: u64, what: &str, secs: f64, eta: Option<f64>) {
        self.set_total(total);
        self.set_done(done, eta);
        if self.main.is_none() && self.lines {
            eprintln!("{}", text::study_line(done, total, what, secs, eta));
        }
    }

    /// A line for the user, above the bars.
    pub fn println(&self, msg: &str) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(msg);
            }
            None if self.lines => eprintln!("{msg}"),
            None => {
                // A guest's message: a plain line among the protocol's, printed by the host.
                if let Some(w) = &self.wire {
                    let mut out = lock(&w.out);
                    let _ = out.write_all(format!("{msg}\n").as_bytes());
                    let _ = out.flush();
                }
            }
        }
    }

    /// Remove the bars.
    pub fn finish(&self) {
        if self.send(&Event::Finish) {
            return;
        }
        if let Some(p) = lock(&self.phase).take() {
            p.finish();
        }
        if let Some(m) = &self.main {
            m.finish_and_clear();
        }
    }
}

impl Observer for StudyProgress {
    fn phase_started(&self, phase: &str, total: u64) {
        let unit = (lock(&self.unit))(phase);
        if self.send(&Event::Phase(unit, total, phase.to_string())) {
            return;
        }
        let Some(multi) = &self.multi else { return };
        let named = ProgressBar::new(total).with_message(phase.to_string());
        let bar = PhaseBar::new(multi.add(named), PHASE, total, unit, String::new);
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
        if let Some(b) = lock(&self.phase).as_ref() {
            b.status(status);
        }
    }
}

#[cfg(test)]
#[path = "study_progress_tests.rs"]
mod tests;
