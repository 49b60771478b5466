//! Progress of a study on stderr: one bar for the repetitions of the whole study (with an ETA
//! from the measured durations of each series, none before the first is measured) and one
//! for the current workload phase. When stderr is not a terminal (CI logs), one line per
//! repetition instead, with the totals: `[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s ·
//! ETA 00:11`.

use super::progress_text as text;
use crate::workload::Observer;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The study's ETA as last computed, and when: the bar counts it down between repetitions.
type EtaAt = Arc<Mutex<Option<(f64, Instant)>>>;

fn live_eta(e: &EtaAt) -> Option<f64> {
    let g = e.lock().unwrap_or_else(|p| p.into_inner());
    g.map(|(secs, at)| (secs - at.elapsed().as_secs_f64()).max(0.0))
}

/// Study-level progress display; also the workloads' [`Observer`].
pub struct StudyProgress {
    multi: Option<MultiProgress>,
    main: Option<ProgressBar>,
    phase: Mutex<Option<ProgressBar>>,
    lines: bool,
    eta: EtaAt,
}

impl StudyProgress {
    /// Bars if `enabled` and stderr is a terminal; plain lines if `enabled` otherwise.
    pub fn new(enabled: bool, total: u64) -> StudyProgress {
        if !enabled {
            return StudyProgress {
                multi: None,
                main: None,
                phase: Mutex::new(None),
                lines: false,
                eta: EtaAt::default(),
            };
        }
        if !super::guest::stderr_draws() {
            return StudyProgress {
                multi: None,
                main: None,
                phase: Mutex::new(None),
                lines: true,
                eta: EtaAt::default(),
            };
        }
        let eta = EtaAt::default();
        let shown = eta.clone();
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let main = multi.add(ProgressBar::new(total));
        let style = ProgressStyle::with_template(
            "study [{bar:30}] {pos}/{len} reps  {elapsed_precise} elapsed{left}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "left",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&text::eta_suffix(live_eta(&shown)));
            },
        )
        .progress_chars("=> ");
        main.set_style(style);
        StudyProgress {
            multi: Some(multi),
            main: Some(main),
            phase: Mutex::new(None),
            lines: false,
            eta,
        }
    }

    /// Change the planned number of repetitions (adaptive series stop early or run longer).
    pub fn set_total(&self, n: u64) {
        if let Some(m) = &self.main {
            m.set_length(n);
        }
    }

    /// A repetition starts; `what` names cell, workload and repetition.
    pub fn rep_started(&self, what: &str) {
        if let Some(m) = &self.main {
            m.set_message(what.to_string());
        }
    }

    /// Repetitions done so far (a resumed study starts with some) and the time left, if
    /// anything is measured.
    pub fn set_done(&self, done: u64, eta: Option<f64>) {
        *self.eta.lock().unwrap_or_else(|p| p.into_inner()) = eta.map(|e| (e, Instant::now()));
        if let Some(m) = &self.main {
            m.set_position(done);
        }
    }

    /// A counted repetition finished: `done` of `total` planned now, `what` it was (cell,
    /// workload, `rep k/n`), its wall time and the time left.
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
            None => {}
        }
    }

    /// Remove the bars.
    pub fn finish(&self) {
        if let Some(p) = self.phase.lock().unwrap_or_else(|p| p.into_inner()).take() {
            p.finish_and_clear();
        }
        if let Some(m) = &self.main {
            m.finish_and_clear();
        }
    }
}

impl Observer for StudyProgress {
    fn phase_started(&self, phase: &str, total: u64) {
        let Some(multi) = &self.multi else { return };
        let bar = multi.add(ProgressBar::new(total));
        let style = ProgressStyle::with_template("  {msg:12} [{bar:30}] {pos}/{len} {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(phase.to_string());
        if let Some(old) = self
            .phase
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(bar)
        {
            old.finish_and_clear();
        }
    }

    fn progress(&self, done: u64) {
        if let Some(b) = self
            .phase
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            b.set_position(done);
        }
    }

    fn phase_finished(&self, _phase: &str) {
        if let Some(b) = self.phase.lock().unwrap_or_else(|p| p.into_inner()).take() {
            b.finish_and_clear();
            if let Some(m) = &self.multi {
                m.remove(&b);
            }
        }
    }

    fn message(&self, msg: &str) {
        self.println(msg);
    }
}
