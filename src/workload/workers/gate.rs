//! The phase gate of a coordinator and its workers: the coordinator opens a phase for all
//! workers at once, each worker says when its part is done, and the coordinator sleeps until
//! the last one has (waking at intervals to report progress).
//!
//! Built on the kernel's futex directly, because the general-purpose barrier is the wrong
//! tool for a timed start: `std::sync::Barrier` wakes its waiters through a mutex they must
//! each take again in turn, so on many cores the workers start one after another (measured
//! here: 0.3–3 ms between the first and the last of two fdtree threads, on phases of 0.5 ms),
//! and its coordinator took part as one more runnable thread. Here one `FUTEX_WAKE` releases
//! every worker, none of them takes a lock on the way, and the coordinator is asleep in
//! `FUTEX_WAIT` while they work, as `pthread_barrier_wait` and MPI's barriers leave the C
//! tools' workers.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Wait while `word` holds `expected`, at most `timeout`; spurious returns are fine (callers
/// loop).
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the duration of the call; the
    // kernel only reads it and the optional timespec, which outlives the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
        );
    }
}

/// Wake every thread waiting on `word`.
fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: as above; FUTEX_WAKE reads nothing but the address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// How long a worker polls for the next phase (yielding its CPU to anyone who needs it)
/// before it sleeps. The coordinator's work between two phases (the telemetry snapshots)
/// takes about 0.1 ms; a worker woken from sleep instead can wait for a CPU for a scheduler
/// tick (measured: up to 4 ms between two fdtree workers on 2 CPUs, where the C loop's
/// processes started within 22 µs of each other).
const POLL_FOR: Duration = Duration::from_millis(10);

/// Phases for `n` workers and one coordinator.
#[derive(Debug)]
pub struct PhaseGate {
    /// The current phase's number; workers wait for it to change.
    phase: AtomicU32,
    /// Workers still working on the current phase.
    left: AtomicU32,
    n: u32,
}

/// A worker's view of the gate: the last phase it started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen(u32);

impl PhaseGate {
    /// A gate for `n` workers, before its first phase.
    pub fn new(n: usize) -> PhaseGate {
        PhaseGate {
            phase: AtomicU32::new(0),
            left: AtomicU32::new(0),
            n: u32::try_from(n).unwrap_or(u32::MAX),
        }
    }

    /// Worker: wait until the coordinator opens the phase after the one in `seen`.
    pub fn start(&self, seen: &mut Seen) {
        let polling = std::time::Instant::now();
        loop {
            let now = self.phase.load(Ordering::Acquire);
            if now != seen.0 {
                seen.0 = now;
                return;
            }
            if polling.elapsed() < POLL_FOR {
                std::thread::yield_now();
            } else {
                futex_wait(&self.phase, now, None);
            }
        }
    }

    /// Worker: this worker's part of the current phase is done.
    pub fn finish(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            futex_wake_all(&self.left);
        }
    }

    /// Coordinator: open the next phase for every worker at once. Call it only when the
    /// previous phase is finished ([`PhaseGate::wait_finished`]).
    pub fn open(&self) {
        self.left.store(self.n, Ordering::Relaxed);
        self.phase.fetch_add(1, Ordering::Release);
        futex_wake_all(&self.phase);
    }

    /// Coordinator: sleep until every worker has finished the current phase, calling `tick`
    /// whenever `every` passes without that.
    pub fn wait_finished(&self, every: Duration, mut tick: impl FnMut()) {
        loop {
            let left = self.left.load(Ordering::Acquire);
            if left == 0 {
                return;
            }
            let t = std::time::Instant::now();
            futex_wait(&self.left, left, Some(every));
            if t.elapsed() >= every {
                tick();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Instant;

    #[test]
    fn no_worker_starts_early_or_misses_a_phase_over_many_rounds() {
        let gate = PhaseGate::new(3);
        let count = AtomicU64::new(0);
        let rounds = 500u64;
        std::thread::scope(|s| {
            for _ in 0..3 {
                let (gate, count) = (&gate, &count);
                s.spawn(move || {
                    let mut seen = Seen::default();
                    for _ in 0..rounds {
                        gate.start(&mut seen);
                        count.fetch_add(1, Ordering::Relaxed);
                        gate.finish();
                    }
                });
            }
            for round in 1..=rounds {
                gate.open();
                gate.wait_finished(Duration::from_secs(1), || {});
                // Every worker did this round's part, and none did the next one's yet.
                assert_eq!(count.load(Ordering::Relaxed), 3 * round);
            }
        });
    }

    #[test]
    fn the_coordinator_ticks_while_a_worker_is_slow() {
        let gate = PhaseGate::new(1);
        let ticks = std::cell::Cell::new(0);
        std::thread::scope(|s| {
            let g = &gate;
            s.spawn(move || {
                let mut seen = Seen::default();
                g.start(&mut seen);
                std::thread::sleep(Duration::from_millis(120));
                g.finish();
            });
            let t = Instant::now();
            gate.open();
            gate.wait_finished(Duration::from_millis(20), || ticks.set(ticks.get() + 1));
            assert!(t.elapsed() >= Duration::from_millis(120));
        });
        assert!(ticks.get() >= 2, "{} ticks", ticks.get());
    }
}
