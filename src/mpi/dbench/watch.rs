//! The release and the per-second watch of one rank's dbench clients, in step with the other
//! ranks: a common start instant on rank 0's clock (so warmup and measured window are the
//! same interval on every rank), failures carried between ranks within 20 ms, and a
//! per-second collective that gives rank 0 the job's progress line.

use crate::mpi::comm::Comm;
use crate::workload::dbench::conduct::{progress_line, totals, Conductor};
use crate::workload::dbench::conduct::{Span, Watch};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How far ahead of the broadcast the common start is set: every rank must have the start
/// time before it comes (a rank that gets it late starts at once and shows as start skew).
const START_MARGIN: f64 = 0.05;
/// How often a rank looks for notices from other ranks while its clients run.
const POLL: Duration = Duration::from_millis(20);
/// How often a rank waiting in the per-second collective checks whether it completed.
const NAP: Duration = Duration::from_millis(1);

/// One rank's conductor.
pub(super) struct RankConductor<'a> {
    pub(super) comm: &'a Comm,
    /// This rank's clock minus rank 0's (0 on rank 0's node).
    pub(super) offset: f64,
    /// Set by `release`: the planned start and the actual release, both as this rank's
    /// `MPI_Wtime`.
    pub(super) planned: Cell<f64>,
    pub(super) released: Cell<f64>,
}

impl Conductor for RankConductor<'_> {
    fn release(&self) -> Instant {
        let comm = self.comm;
        // Every rank's clients are at their start line.
        comm.barrier();
        let mut t = [0f64];
        if comm.is_root() {
            t[0] = comm.wtime() + START_MARGIN;
        }
        comm.broadcast_f64s(&mut t);
        // Rank 0's time → this rank's clock.
        let local = t[0] + self.offset;
        let (now_i, now_w) = (Instant::now(), comm.wtime());
        let ahead = local - now_w;
        let t0 = if ahead >= 0.0 {
            now_i + Duration::from_secs_f64(ahead)
        } else {
            now_i
                .checked_sub(Duration::from_secs_f64(-ahead))
                .unwrap_or(now_i)
        };
        let wait = t0.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        self.planned.set(local);
        self.released.set(comm.wtime());
        t0
    }

    fn watch(&self, w: &Watch<'_>) {
        let comm = self.comm;
        let mut finished = 0usize;
        let mut tick = 1u64;
        let mut peer_failed = false;
        let mut notified = false;
        let mut check = |peer_failed: &mut bool| {
            if comm.poll().failed > 0 {
                *peer_failed = true;
                w.abort.store(true, Ordering::Relaxed);
            }
            // A local client failed (or was interrupted): tell the others at once.
            if w.abort.load(Ordering::Relaxed) && !*peer_failed && !notified {
                comm.notify_failed();
                notified = true;
            }
        };
        loop {
            let next = w.t0 + Duration::from_secs(tick);
            // Until the next second, or until this rank's clients are all done.
            while finished < w.n {
                let now = Instant::now();
                if now >= next {
                    break;
                }
                match w.done.recv_timeout((next - now).min(POLL)) {
                    Ok(()) => finished += 1,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => finished = w.n,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                }
                check(&mut peer_failed);
            }
            check(&mut peer_failed);
            tick += 1;
            // This rank's lines, bytes and measured bytes; its largest latency this second.
            let (lines, bytes, mbytes, lat) = totals(w.slots);
            let running = (w.n - finished) as u64;
            // Every rank takes part in every second's collective until no client of any
            // rank runs: all ranks leave the loop after the same one.
            let (s, m) =
                comm.sum_max_napping(&[running, lines, bytes, mbytes, w.n as u64], &[lat], NAP);
            if s[0] == 0 {
                break;
            }
            if comm.is_root() {
                let now = Instant::now();
                // A run once is done by the lines of every rank's clients.
                let span = match w.span {
                    Span::Lines(n) => Span::Lines(n / (w.n as u64).max(1) * s[4]),
                    t => t,
                };
                if let Some((phase, mbps, secs)) = w.second(now, span, (s[1], s[2], s[3])) {
                    let (running, per_client) = (s[0] as usize, s[1] / s[4].max(1));
                    let line = progress_line(running, per_client, mbps, phase, secs, m[0]);
                    w.obs.message(&line);
                }
            }
        }
    }
}
