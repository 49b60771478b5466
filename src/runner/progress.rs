//! A progress bar on stderr for long phases (hidden when stderr is not a terminal).

use crate::workload::Observer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Draws one bar per phase with rate and ETA; messages go above the bar.
pub struct ProgressObserver {
    bar: Mutex<Option<ProgressBar>>,
    enabled: bool,
    prefix: String,
}

impl ProgressObserver {
    /// A bar on stderr if it is a terminal and `enabled`; `prefix` goes before the phase name.
    pub fn new(enabled: bool, prefix: impl Into<String>) -> Self {
        ProgressObserver {
            bar: Mutex::new(None),
            enabled: enabled && std::io::stderr().is_terminal(),
            prefix: prefix.into(),
        }
    }
}

impl Observer for ProgressObserver {
    fn phase_started(&self, phase: &str, total: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(5));
        let style = ProgressStyle::with_template(
            "{prefix} {msg:12} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(self.prefix.clone());
        bar.set_message(phase.to_string());
        *self.bar.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar);
    }

    fn progress(&self, done: u64) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            b.set_position(done);
        }
    }

    fn phase_finished(&self, _phase: &str) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            b.finish_and_clear();
        }
    }

    fn message(&self, msg: &str) {
        match self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }
}
