//! How the workers of IOzone's throughput mode are coordinated: the hook
//! ([`Coordination`]) the worker calls at its start line, before each record and every few
//! records, and its implementation for threads of one process (an in-process barrier, a stop
//! flag and an abort flag, IOzone `-T`'s shared-memory flags). MPI ranks have their own
//! implementation in `src/mpi/iozone`.

use crate::workload::workers::{PhaseGate, Seen};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How the workers of a phase are started together, stopped by the stonewall and told about
/// failures elsewhere: threads of this process (an in-process barrier and flags, below), or
/// one worker per MPI rank (`src/mpi/iozone`). The worker calls these at fixed points of
/// [`super::throughput::worker_phase`]; implementations must be cheap where they are polled per record.
pub trait Coordination {
    /// The start line: called after the untimed set-up; returns when every worker may start.
    fn start_line(&self);
    /// Checked right after the start line: another worker already failed, do not start.
    fn aborted(&self) -> bool;
    /// Checked before every record `i` in phases the stonewall applies to: has the first
    /// worker finished? (May poll other processes every few records.)
    fn stop_raised(&self, i: u64) -> bool;
    /// Checked after every record: has the stop been seen (no new polling)?
    fn stop_seen(&self) -> bool;
    /// This worker finished its loop before any stop: stop the others (stonewalling on).
    fn raise_stop(&self);
    /// Records done since the last call (called every few records).
    fn progress(&self, records: u64);
    /// Checked with the Ctrl-C check every few records: give up this phase now because
    /// another worker failed.
    fn abandon(&self) -> bool;
    /// How often the progress, Ctrl-C and abandon checks run: every `mask + 1` records, given
    /// the worker's own choice (a power of two minus one); may only make it more often.
    fn check_mask(&self, mask: u64) -> u64 {
        mask
    }
    /// This worker was interrupted (Ctrl-C) and stops with an error.
    fn interrupted(&self);
}

/// The worker threads of one process: a phase gate, a stop flag and an abort flag (the state
/// the workers of a phase share). Each test is two steps of the gate: set-up (the worker opens
/// its file), then, once every worker is set up, the timed run.
pub(super) struct Threads<'a> {
    pub(super) stop: &'a AtomicBool,
    pub(super) abort: &'a AtomicBool,
    pub(super) progress: &'a AtomicU64,
    pub(super) gate: &'a PhaseGate,
    /// The last step this worker started.
    pub(super) seen: Cell<Seen>,
}

impl Threads<'_> {
    /// Wait for the coordinator to open the next step.
    pub(super) fn next_step(&self) {
        let mut seen = self.seen.get();
        self.gate.start(&mut seen);
        self.seen.set(seen);
    }
}

impl Coordination for Threads<'_> {
    fn start_line(&self) {
        // Set up: tell the coordinator, then wait for the run to open.
        self.gate.finish();
        self.next_step();
    }
    fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
    #[inline]
    fn stop_raised(&self, _i: u64) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    #[inline]
    fn stop_seen(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn raise_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
    fn progress(&self, records: u64) {
        self.progress.fetch_add(records, Ordering::Relaxed);
    }
    fn abandon(&self) -> bool {
        // Threads finish their phase when another fails; the run ends at the phase's end.
        false
    }
    fn interrupted(&self) {
        self.abort.store(true, Ordering::Relaxed);
    }
}
