//! Progress of a study on stderr: one bar for the repetitions of the whole study (with ETA
//! from the repetitions done so far) and one for the current workload phase. When stderr
//! is not a terminal (CI logs), one line per repetition instead.

use crate::workload::Observer;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Study-level progress display; also the workloads' [`Observer`].
pub struct StudyProgress {
    multi: Option<MultiProgress>,
    main: Option<ProgressBar>,
    phase: Mutex<Option<ProgressBar>>,
    lines: bool,
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
            };
        }
        if !std::io::stderr().is_terminal() {
            return StudyProgress {
                multi: None,
                main: None,
                phase: Mutex::new(None),
                lines: true,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let main = multi.add(ProgressBar::new(total));
        let style = ProgressStyle::with_template(
            "study [{bar:30}] {pos}/{len} reps  {elapsed_precise} elapsed, ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        main.set_style(style);
        StudyProgress {
            multi: Some(multi),
            main: Some(main),
            phase: Mutex::new(None),
            lines: false,
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

    /// A counted repetition finished; `line` summarises it for plain-line output.
    pub fn rep_finished(&self, done: u64, line: &str) {
        if let Some(m) = &self.main {
            m.set_position(done);
        } else if self.lines {
            eprintln!("{line}");
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
