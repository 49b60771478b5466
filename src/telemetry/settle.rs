//! `settle`: before a repetition, wait (up to a limit) until the machine is quiet by the
//! same measures [`interference`] applies to a repetition, polling every 250 ms, and say how
//! long that took. The clock and the snapshot reader are injected so tests run instantly.

use super::interference::{interference, Thresholds, Verdict, Window};
use super::Snapshot;
use anyhow::Result;
use std::time::{Duration, Instant};

/// How often settle looks: long enough for /proc/stat's 10 ms ticks to say something
/// (50 ticks on two CPUs), short enough not to wait much longer than needed.
pub const SETTLE_POLL: Duration = Duration::from_millis(250);

/// Time as settle sees it.
pub trait Clock {
    /// Time since an arbitrary origin (monotonic).
    fn now(&self) -> Duration;
    /// Wait this long.
    fn sleep(&self, d: Duration);
}

/// The real monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// What settle found.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// How long it waited (at least one poll: one window is needed to judge).
    pub waited: Duration,
    /// Whether the last window was quiet (false: the limit was reached first).
    pub quiet: bool,
    /// The judgement of the last window.
    pub last: Verdict,
}

/// Poll `probe` every `poll` until a window between two polls is quiet by `thresholds`, or
/// until `max_wait` has passed; return how long that took. Errors of `probe` are returned.
pub fn settle(
    max_wait: Duration,
    poll: Duration,
    thresholds: &Thresholds,
    clock: &dyn Clock,
    probe: &mut dyn FnMut() -> Result<Snapshot>,
) -> Result<Settled> {
    let t0 = clock.now();
    let mut prev = probe()?;
    loop {
        clock.sleep(poll);
        let cur = probe()?;
        let last = interference(&Window::between(&prev, &cur), thresholds);
        let waited = clock.now().saturating_sub(t0);
        if last.is_quiet() || waited >= max_wait {
            return Ok(Settled {
                waited,
                quiet: last.is_quiet(),
                last,
            });
        }
        prev = cur;
    }
}
