//! Who starts the clients of a repetition and watches them while they run: dbench's parent
//! process (release at once, one progress line per second) or, under MPI, a rank in step
//! with the other ranks (`src/mpi/dbench`) — and what one process's clients hand back.

use super::engine::ms;
use super::ops::OpKind;
use super::worker::Slot;
use crate::metric::Unit;
use crate::workload::{Observer, PhaseStatus};
use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One process's clients' results of a repetition, before the report is made (under MPI,
/// every rank has one and rank 0 combines them with [`LocalRep::merge`]); each client's
/// results are one too, combined the same way.
#[derive(Debug, Clone, Default)]
pub struct LocalRep {
    /// Seconds from the start to the last client's end (its last operation done).
    pub last_finish: f64,
    /// ReadX/WriteX bytes of operations completed in the measured window.
    pub measured_bytes: u64,
    /// Operations completed in the measured window.
    pub measured_ops: u64,
    /// Complete passes over the loadfile.
    pub passes: u64,
    /// Loadfile lines executed, warmup included.
    pub lines: u64,
    /// Largest lateness behind the loadfile's timestamps, seconds.
    pub max_lag: f64,
    /// Latency histograms per operation kind (index = `OpKind::index`), merged over clients.
    pub hists: Vec<Option<Histogram<u64>>>,
}

impl LocalRep {
    /// Add another process's results (sums, maxima, merged histograms).
    pub fn merge(&mut self, o: LocalRep) -> Result<()> {
        self.last_finish = self.last_finish.max(o.last_finish);
        self.measured_bytes += o.measured_bytes;
        self.measured_ops += o.measured_ops;
        self.passes += o.passes;
        self.lines += o.lines;
        self.max_lag = self.max_lag.max(o.max_lag);
        self.hists.resize(OpKind::COUNT, None);
        for (h, slot) in o.hists.into_iter().zip(&mut self.hists) {
            match (h, slot) {
                (Some(h), Some(m)) => m
                    .add(h)
                    .map_err(|e| anyhow!("merging latency histograms: {e}"))?,
                (Some(h), slot) => *slot = Some(h),
                (None, _) => {}
            }
        }
        Ok(())
    }
}

/// How the clients of a repetition are released and watched: alone in this process (the
/// per-second lines of dbench's parent), or in step with other MPI ranks (`src/mpi`).
pub(crate) trait Conductor {
    /// Every started client waits at the start line: return the instant the run starts from
    /// (it may wait for other processes first).
    fn release(&self) -> Instant;
    /// Runs while the clients run; returns when every client has finished.
    fn watch(&self, w: &Watch<'_>);
}

/// What a [`Conductor`] sees of the running clients.
pub(crate) struct Watch<'a> {
    /// The start instant.
    pub(crate) t0: Instant,
    /// Warmup (not counted).
    pub(crate) warmup: Duration,
    /// One counter slot per client.
    pub(crate) slots: &'a [Slot],
    /// One message per client that finished.
    pub(crate) done: &'a std::sync::mpsc::Receiver<()>,
    /// Clients started.
    pub(crate) n: usize,
    /// Set to stop every client at its next operation (set by a failing client, too).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) abort: &'a AtomicBool,
    /// Where the per-second lines go.
    pub(crate) obs: &'a dyn Observer,
    /// How long the run is planned to be, for the fraction done.
    pub(crate) span: Span,
}

impl Watch<'_> {
    /// Show the status and progress of a second at `now` from the clients' `lines`, `bytes`
    /// and `measured` bytes (under MPI, every rank's, and `span` their plan). Returns the
    /// phase, its MB/s so far and its seconds when the second gets a line.
    pub(crate) fn second(
        &self,
        now: Instant,
        span: Span,
        (lines, bytes, measured): (u64, u64, u64),
    ) -> Option<(&'static str, f64, f64)> {
        let warm_end = self.t0 + self.warmup;
        let (phase, b, from) = if now < warm_end {
            ("warmup", bytes, self.t0)
        } else {
            ("execute", measured, warm_end)
        };
        let secs = (now - from).as_secs_f64().max(1e-9);
        // Like dbench's line, no rate in the first half second of a phase. The status
        // before the count: a bar shows the fraction, never a count of an unknown total.
        let rate = (secs >= 0.5).then_some(b as f64 / 1e6 / secs);
        let elapsed = (now - self.t0).as_secs_f64();
        self.obs.status(second_status(span, elapsed, lines, rate));
        self.obs.progress(lines);
        rate.map(|mbps| (phase, mbps, secs))
    }
}

/// How long a run is planned to be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Span {
    /// Warmup and run time (dbench's `-t` and `--warmup`).
    Time(Duration),
    /// Loadfile lines in all, once through per client (`--run-once`).
    Lines(u64),
}

/// What a display shows after a second: the fraction of the planned time (or of the
/// loadfile's lines when run once), dbench's MB/s of the phase (if it prints one yet) as
/// bytes per second, and the seconds left of a timed run.
pub(crate) fn second_status(
    span: Span,
    elapsed: f64,
    lines: u64,
    mbps: Option<f64>,
) -> PhaseStatus {
    let (done, eta) = match span {
        Span::Time(d) if !d.is_zero() => {
            let total = d.as_secs_f64();
            (
                Some((elapsed / total).clamp(0.0, 1.0)),
                Some((total - elapsed).max(0.0)),
            )
        }
        Span::Lines(n) if n > 0 => (Some((lines as f64 / n as f64).clamp(0.0, 1.0)), None),
        _ => (None, None),
    };
    PhaseStatus {
        done,
        bytes_per_sec: mbps.map(|m| m * 1e6).filter(|r| r.is_finite()),
        decimal: true,
        eta,
        ..PhaseStatus::default()
    }
}

/// The clients' counters summed (lines, bytes, measured bytes) and the largest latency since
/// the last call (taken, so each second starts from 0).
pub(crate) fn totals(slots: &[Slot]) -> (u64, u64, u64, u64) {
    let (mut lines, mut bytes, mut measured, mut lat) = (0, 0, 0, 0);
    for s in slots {
        lines += s.lines.load(Ordering::Relaxed);
        bytes += s.bytes.load(Ordering::Relaxed);
        measured += s.measured_bytes.load(Ordering::Relaxed);
        lat = lat.max(s.max_latency_ns.swap(0, Ordering::Relaxed));
    }
    (lines, bytes, measured, lat)
}

/// The conductor of a run in one process: start at once, print a line per second.
pub(super) struct Alone;

impl Conductor for Alone {
    fn release(&self) -> Instant {
        Instant::now()
    }
    /// Print a line per second until every client is done (dbench's parent).
    fn watch(&self, w: &Watch<'_>) {
        let (t0, slots, done, n, obs) = (w.t0, w.slots, w.done, w.n, w.obs);
        let mut finished = 0;
        let mut tick = 1u64;
        obs.phase_started("dbench", 0);
        while finished < n {
            let next = t0 + Duration::from_secs(tick);
            let wait = next.saturating_duration_since(Instant::now());
            match done.recv_timeout(wait) {
                Ok(()) => {
                    finished += 1;
                    continue;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            tick += 1;
            let now = Instant::now();
            let (lines, bytes, measured, lat) = totals(slots);
            let Some((phase, mbps, secs)) = w.second(now, w.span, (lines, bytes, measured)) else {
                // dbench, too, prints nothing in the first second of a phase.
                continue;
            };
            // The line as a time series: MB/s so far in the phase, the largest latency of the
            // second, the clients still running.
            let (t, running) = ((now - t0).as_secs_f64(), n - finished);
            obs.series(&format!("dbench.{phase}_mbps"), Unit::MBPerSec, t, mbps);
            obs.series("dbench.max_latency", Unit::Millis, t, lat as f64 / 1e6);
            obs.series("dbench.clients", Unit::Count, t, running as f64);
            let per_client = lines / n as u64;
            obs.message(&progress_line(running, per_client, mbps, phase, secs, lat));
        }
        obs.phase_finished("dbench");
    }
}

/// dbench's per-second line: clients running, average lines per client, MB/s so far in the
/// phase, phase and seconds, largest latency of the second (ns).
pub(crate) fn progress_line(
    running: usize,
    lines_per_client: u64,
    mbps: f64,
    phase: &str,
    secs: f64,
    lat_ns: u64,
) -> String {
    let lat = ms(lat_ns);
    format!(
        "{running:4}  {lines_per_client:8}  {mbps:7.2} MB/sec  {phase} {secs:3.0} sec  latency {lat:.3} ms"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_run_is_done_by_its_clock_at_dbenchs_rate() {
        // 5 s warmup + 15 s run, 5 s in, dbench's 18.5 MB/s (10^6 bytes).
        let s = second_status(Span::Time(Duration::from_secs(20)), 5.0, 18055, Some(18.5));
        assert_eq!(s.done, Some(0.25));
        assert_eq!(s.eta, Some(15.0));
        assert_eq!(s.bytes_per_sec, Some(18.5e6));
        // Past the end (clients finishing their operation): full, nothing left.
        let s = second_status(Span::Time(Duration::from_secs(20)), 21.0, 0, None);
        assert_eq!(
            (s.done, s.eta, s.bytes_per_sec),
            (Some(1.0), Some(0.0), None)
        );
    }

    #[test]
    fn a_run_once_is_done_by_its_lines() {
        let s = second_status(Span::Lines(400), 3.0, 100, Some(2.0));
        assert_eq!((s.done, s.eta), (Some(0.25), None));
        assert_eq!(second_status(Span::Lines(0), 3.0, 100, None).done, None);
    }
}
