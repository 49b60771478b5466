//! The host's display of a guest's study, when the host's stderr is a terminal: the guest's
//! fslab sends its progress as lines of [`progress_wire`] on its stderr console; the host
//! draws them with its own bars ([`Progress`]) and prints every other line above them.
//! The guest's stdout (its report) is written with the bars out of the way, so that a redraw
//! never lands in the middle of it.

use super::super::progress::Progress;
use super::super::progress_wire::{self as wire, Event};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

/// The bars of the guest's current study (each fslab command in the guest makes its own:
/// the calibration, then the study), shared by the readers of both consoles.
#[derive(Clone, Default)]
pub(super) struct Display {
    bars: Arc<Mutex<Option<Progress>>>,
}

impl Display {
    fn bars(&self) -> MutexGuard<'_, Option<Progress>> {
        super::super::lock(&self.bars)
    }

    /// A line of the guest's stderr (without its newline).
    pub(super) fn stderr_line(&self, line: &str) {
        let mut bars = self.bars();
        match wire::parse(line) {
            Some(Event::Begin(total)) => {
                if let Some(old) = bars.replace(Progress::on_terminal(total)) {
                    old.finish();
                }
            }
            Some(Event::Finish) => {
                if let Some(b) = bars.take() {
                    b.finish();
                }
            }
            Some(e) => {
                if let Some(b) = bars.as_ref() {
                    b.apply(e);
                }
            }
            None => match bars.as_ref() {
                Some(b) => b.println(line),
                None => eprintln!("{line}"),
            },
        }
    }

    /// Bytes of the guest's stdout, written to the host's.
    pub(super) fn stdout(&self, bytes: &[u8]) {
        let write = || {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        };
        match self.bars().as_ref() {
            Some(b) => b.suspend(write),
            None => write(),
        }
    }

    /// The guest ended: bars away, whatever it said last.
    pub(super) fn close(&self) {
        if let Some(b) = self.bars().take() {
            b.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_in_the_guest_gets_bars_until_it_finishes() {
        let d = Display::default();
        d.stderr_line("fslab: provisioning cell 1");
        assert!(d.bars().is_none());
        d.stderr_line("@fslab-progress begin 4");
        d.stderr_line("@fslab-progress done 1 -");
        let pos = |d: &Display| d.bars().as_ref().map(|b| b.done());
        assert_eq!(pos(&d), Some(1));
        // The calibration ends, the study begins with bars of its own.
        d.stderr_line("@fslab-progress finish");
        assert_eq!(pos(&d), None);
        d.stderr_line("@fslab-progress begin 12");
        assert_eq!(pos(&d), Some(0));
        d.close();
        assert_eq!(pos(&d), None);
    }
}
