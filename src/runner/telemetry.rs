//! Telemetry around a repetition, for both runners: a snapshot at every phase boundary the
//! engine reports (its observer's `phase_started` / `phase_finished`, which every engine
//! calls outside its timed region), turned into per-phase samples (`dev.data.write_bytes`,
//! `cpu.iowait`, `fs.journal.transactions`, … — see `doc/telemetry.md`), and the whole
//! repetition's window judged for interference (other I/O on the backing device, steal,
//! load, other processes' CPU).
//!
//! A snapshot costs about 63 µs (bench/results/telemetry.md); a phase gets two. Telemetry
//! that cannot be read (a device gone, a counter file missing) never fails a repetition: the
//! samples it could take are kept and the rest is left out.

use super::repetition::Around;
use crate::metric::{Metric, TimePoint, Unit};
use crate::telemetry::{self, Devices, FsCounters, Snapshot, Verdict, Window};
use crate::workload::{Creates, Observer};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The devices and file-system counters a cell's telemetry reads.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    devices: Devices,
    fs: FsCounters,
}

impl Sources {
    /// The telemetry of `devices`: a provisioned cell's ([`Devices::for_cell`]), an engine
    /// command's target directory's ([`Devices::for_target`]), or a study's work directory's
    /// before it starts ([`Devices::backing_of`]); devices that cannot be found give none.
    pub fn of(devices: anyhow::Result<Devices>) -> Sources {
        let devices = devices.unwrap_or_default();
        let name = |r| {
            devices
                .get(r)
                .map(|d: &telemetry::Device| d.dev.name.clone())
        };
        let fs = match name(telemetry::Role::Data) {
            Some(data) => FsCounters::detect(&data, name(telemetry::Role::Journal).as_deref()),
            None => FsCounters::None,
        };
        Sources { devices, fs }
    }

    /// One snapshot, or none if the kernel files cannot be read.
    pub fn snapshot(&self) -> Option<Snapshot> {
        Snapshot::take(&self.devices, &self.fs).ok()
    }

    /// Wait up to `max` until the machine is quiet; how long it waited.
    pub fn settle(&self, max: Duration) -> Duration {
        if max.is_zero() {
            return Duration::ZERO;
        }
        self.wait_quiet(max, telemetry::SETTLE_POLL)
            .map_or(Duration::ZERO, |s| s.waited)
    }

    /// Look at the machine in windows of `poll` until one is quiet or `max` has passed (one
    /// window at least): how long it took, whether the last was quiet and its verdict.
    /// `None` when the kernel files cannot be read.
    pub fn wait_quiet(&self, max: Duration, poll: Duration) -> Option<telemetry::Settled> {
        let clock = telemetry::SystemClock::default();
        let mut probe = || Snapshot::take(&self.devices, &self.fs);
        let limits = telemetry::Thresholds::default();
        telemetry::settle(max, poll, &limits, &clock, &mut probe).ok()
    }
}

#[derive(Default)]
struct State {
    /// The repetition's first snapshot.
    start: Option<Snapshot>,
    /// The current phase and its first snapshot.
    phase: Option<(String, Snapshot)>,
    /// Samples of the phases that ended.
    metrics: Vec<Metric>,
    /// The repetition's window, once it ended.
    verdict: Option<Verdict>,
    /// The 1 Hz sampler while it runs.
    sampler: Option<Sampler>,
    /// Its points, once it stopped.
    timeline: Vec<TimePoint>,
    /// The engine's own per-second series ([`Observer::series`]).
    engine_series: Vec<TimePoint>,
}

/// A thread that samples the cell's devices, the CPU and the engine's progress once a second.
struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<TimePoint>>,
}

/// How often the sampler looks.
pub const TIMELINE_PERIOD: Duration = Duration::from_secs(1);

impl Sampler {
    fn start(sources: Sources, progress: Arc<AtomicU64>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut out = Vec::new();
            let Some(mut prev) = sources.snapshot() else {
                return out;
            };
            let mut prev_done = progress.load(Ordering::Relaxed);
            loop {
                // Sleep in small steps so a stop is seen at once.
                let due = prev.at + TIMELINE_PERIOD;
                while Instant::now() < due && !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let stopping = flag.load(Ordering::Relaxed);
                // A last partial second only if it is long enough to mean something.
                if stopping && prev.at.elapsed() < Duration::from_millis(200) {
                    return out;
                }
                let Some(cur) = sources.snapshot() else {
                    return out;
                };
                let done = progress.load(Ordering::Relaxed);
                out.extend(points(&prev, &cur, prev_done, done, t0));
                prev = cur;
                prev_done = done;
                if stopping {
                    return out;
                }
            }
        });
        Sampler { stop, handle }
    }

    fn finish(self) -> Vec<TimePoint> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// The points of one interval: device throughput (MB/s) and utilisation, CPU shares, and the
/// engine's progress rate (its progress units per second: items, records).
fn points(prev: &Snapshot, cur: &Snapshot, done0: u64, done1: u64, t0: Instant) -> Vec<TimePoint> {
    let dt = cur.at.saturating_duration_since(prev.at).as_secs_f64();
    if dt <= 0.0 {
        return Vec::new();
    }
    let t = cur.at.saturating_duration_since(t0).as_secs_f64();
    let mut out = Vec::new();
    for m in telemetry::delta("t", prev, cur) {
        let (name, unit, value) = match (m.name.as_str(), m.unit) {
            (n, Unit::Bytes)
                if n.starts_with("dev.")
                    && (n.ends_with(".write_bytes") || n.ends_with(".read_bytes")) =>
            {
                (
                    n.trim_end_matches("_bytes").to_string() + "_rate",
                    Unit::MBPerSec,
                    m.value / dt / 1e6,
                )
            }
            (n, Unit::Percent) if n.ends_with(".util") || n.starts_with("cpu.") => {
                (n.to_string(), Unit::Percent, m.value)
            }
            _ => continue,
        };
        out.push(TimePoint {
            t,
            name,
            unit,
            value,
        });
    }
    // The counter restarts with every phase: a smaller value is the new phase's progress.
    let items = if done1 >= done0 { done1 - done0 } else { done1 };
    out.push(TimePoint {
        t,
        name: crate::metric::PROGRESS_SERIES.into(),
        unit: Unit::OpsPerSec,
        value: items as f64 / dt,
    });
    out
}

/// The telemetry of one repetition.
pub struct Recorder<'a> {
    sources: &'a Sources,
    state: Mutex<State>,
    /// Sample once a second while it runs (`--timeline`).
    timeline: bool,
    /// The engine's progress counter of the current phase, for the sampler.
    progress: Arc<AtomicU64>,
    /// Whether the engine counted any progress: one that never does (fio) gets no progress
    /// series, rather than a line at 0 that it never measured.
    counted: AtomicBool,
}

impl<'a> Recorder<'a> {
    /// Telemetry from `sources`.
    pub fn new(sources: &'a Sources) -> Recorder<'a> {
        Recorder {
            sources,
            state: Mutex::new(State::default()),
            timeline: false,
            progress: Arc::new(AtomicU64::new(0)),
            counted: AtomicBool::new(false),
        }
    }

    /// Also sample once a second while the repetition runs (`--timeline`).
    pub fn with_timeline(mut self, on: bool) -> Recorder<'a> {
        self.timeline = on;
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        super::lock(&self.state)
    }

    /// The engine's observer with a snapshot at every phase boundary.
    pub fn observer<'o>(&'o self, inner: &'o dyn Observer) -> Watch<'o, 'a> {
        Watch {
            recorder: self,
            inner,
        }
    }

    /// The per-phase samples and the judgement of the repetition's window, taken once.
    pub fn finish(&self) -> (Vec<Metric>, Option<Verdict>) {
        let mut s = self.state();
        (std::mem::take(&mut s.metrics), s.verdict.take())
    }

    /// The time series, taken once: the samples of `--timeline`, and the engine's own
    /// per-second series (dbench's progress lines), which are kept with or without it.
    pub fn take_timeline(&self) -> Vec<TimePoint> {
        let mut s = self.state();
        let mut out = std::mem::take(&mut s.timeline);
        out.append(&mut s.engine_series);
        out
    }
}

/// Shared, so the same recorder also serves as the engine's observer during the run.
impl Around for &Recorder<'_> {
    fn before_run(&mut self, _creates: &[Creates]) -> anyhow::Result<()> {
        let snap = self.sources.snapshot();
        let sampler = self
            .timeline
            .then(|| Sampler::start(self.sources.clone(), Arc::clone(&self.progress)));
        let mut s = self.state();
        s.start = snap;
        s.sampler = sampler;
        Ok(())
    }

    fn after_cleanup(&mut self, _creates: &[Creates]) -> anyhow::Result<()> {
        let sampler = self.state().sampler.take();
        if let Some(sm) = sampler {
            let mut points = sm.finish();
            if !self.counted.load(Ordering::Relaxed) {
                points.retain(|p| p.name != crate::metric::PROGRESS_SERIES);
            }
            self.state().timeline = points;
        }
        let end = self.sources.snapshot();
        let mut s = self.state();
        if let (Some(start), Some(end)) = (s.start.take(), end) {
            let w = Window::between(&start, &end);
            let limits = telemetry::Thresholds::default();
            s.verdict = Some(telemetry::interference(&w, &limits));
        }
        Ok(())
    }
}

/// An observer that takes the phase boundaries' snapshots and passes every event on.
pub struct Watch<'o, 'a> {
    recorder: &'o Recorder<'a>,
    inner: &'o dyn Observer,
}

impl Observer for Watch<'_, '_> {
    fn phase_started(&self, phase: &str, total: u64) {
        self.recorder.progress.store(0, Ordering::Relaxed);
        if let Some(snap) = self.recorder.sources.snapshot() {
            self.recorder.state().phase = Some((phase.to_string(), snap));
        }
        self.inner.phase_started(phase, total);
    }

    fn progress(&self, done: u64) {
        self.recorder.counted.store(true, Ordering::Relaxed);
        self.recorder.progress.store(done, Ordering::Relaxed);
        self.inner.progress(done);
    }

    fn phase_finished(&self, phase: &str) {
        self.inner.phase_finished(phase);
        let end = self.recorder.sources.snapshot();
        let mut s = self.recorder.state();
        if let (Some((name, start)), Some(end)) = (s.phase.take(), end) {
            if name == phase {
                let m = telemetry::delta(phase, &start, &end);
                s.metrics.extend(m);
            }
        }
    }

    fn message(&self, msg: &str) {
        self.inner.message(msg);
    }

    fn series(&self, name: &str, unit: Unit, t: f64, value: f64) {
        self.recorder.state().engine_series.push(TimePoint {
            t,
            name: name.to_string(),
            unit,
            value,
        });
        self.inner.series(name, unit, t, value);
    }

    fn wants_status(&self) -> bool {
        self.inner.wants_status()
    }

    fn status(&self, status: crate::workload::PhaseStatus) {
        self.inner.status(status);
    }
}

/// Two things around one repetition, in order.
pub struct Both<'x>(pub &'x mut dyn Around, pub &'x mut dyn Around);

/// How one repetition is observed, the same for a study and an engine command.
pub struct Observe<'a> {
    /// The target's devices and file-system counters.
    pub sources: &'a Sources,
    /// Wait up to this long for a quiet machine first (zero: no wait).
    pub settle: std::time::Duration,
    /// Sample once a second and keep the time series.
    pub timeline: bool,
}

/// One repetition of `engine` with telemetry around it: the wait for a quiet machine, the
/// snapshots at every phase boundary (their deltas become the repetition's telemetry
/// samples), the verdict on interference and the timeline; `around` adds the caller's own
/// steps (an engine command records the entries a repetition makes).
pub fn run_observed<W: crate::workload::Workload + ?Sized>(
    engine: &mut W,
    target: &crate::workload::Target,
    obs: &dyn crate::workload::Observer,
    how: &Observe<'_>,
    around: Option<&mut dyn Around>,
) -> super::repetition::Repetition {
    let waited = (!how.settle.is_zero()).then(|| how.sources.settle(how.settle));
    let tele = Recorder::new(how.sources).with_timeline(how.timeline);
    let watch = tele.observer(obs);
    let mut tele_around = &tele;
    let mut r = match around {
        Some(a) => {
            super::repetition::run_one(engine, target, &watch, &mut Both(a, &mut tele_around))
        }
        None => super::repetition::run_one(engine, target, &watch, &mut tele_around),
    };
    let (extra, verdict) = tele.finish();
    r.add_metrics(extra);
    r.window.interference = verdict.filter(|v| !v.is_quiet()).map(|v| v.to_string());
    r.window.settle_seconds = waited.map(|w| w.as_secs_f64());
    r.timeline = tele.take_timeline();
    r
}

impl Around for Both<'_> {
    fn before_run(&mut self, creates: &[Creates]) -> anyhow::Result<()> {
        self.0.before_run(creates)?;
        self.1.before_run(creates)
    }

    fn after_cleanup(&mut self, creates: &[Creates]) -> anyhow::Result<()> {
        let a = self.0.after_cleanup(creates);
        let b = self.1.after_cleanup(creates);
        a.and(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Quiet;

    #[test]
    fn phases_get_samples_and_the_repetition_a_verdict() {
        // No devices (as on tmpfs): the machine and process figures are still recorded.
        let sources = Sources::default();
        let rec = Recorder::new(&sources);
        (&rec).before_run(&[]).unwrap();
        {
            let obs = rec.observer(&Quiet);
            obs.phase_started("file_create", 10);
            std::thread::sleep(Duration::from_millis(30));
            obs.phase_finished("file_create");
            // A phase that ends under another name (never happens) records nothing.
            obs.phase_started("a", 1);
            obs.phase_finished("b");
        }
        (&rec).after_cleanup(&[]).unwrap();
        let (m, verdict) = rec.finish();
        assert!(m.iter().all(|x| x.phase == "file_create"), "{m:?}");
        for name in ["load.start", "load.end", "proc.user", "proc.sys"] {
            assert!(m.iter().any(|x| x.name == name), "{name} missing: {m:?}");
        }
        assert!(verdict.is_some());
        assert!(rec.finish().0.is_empty(), "taken once");
    }

    #[test]
    fn only_an_engine_that_counts_progress_gets_a_progress_series() {
        // fio counts nothing (its rate was stored as 0 every second and charted flat); fdtree
        // counts its items. Both sampled over the same second and a bit.
        let sources = Sources::default();
        let (silent, counting) = (
            Recorder::new(&sources).with_timeline(true),
            Recorder::new(&sources).with_timeline(true),
        );
        (&silent).before_run(&[]).unwrap();
        (&counting).before_run(&[]).unwrap();
        {
            let (a, b) = (silent.observer(&Quiet), counting.observer(&Quiet));
            a.phase_started("fio", 0);
            b.phase_started("file_create", 10);
            b.progress(5);
            std::thread::sleep(Duration::from_millis(1300));
            b.progress(10);
            a.phase_finished("fio");
            b.phase_finished("file_create");
        }
        (&silent).after_cleanup(&[]).unwrap();
        (&counting).after_cleanup(&[]).unwrap();
        let names = |r: &Recorder| -> Vec<String> {
            r.take_timeline().into_iter().map(|p| p.name).collect()
        };
        let (silent, counting) = (names(&silent), names(&counting));
        assert!(silent.iter().any(|n| n == "cpu.sys"), "{silent:?}");
        assert!(!silent.iter().any(|n| n == "progress"), "{silent:?}");
        assert!(counting.iter().any(|n| n == "progress"), "{counting:?}");
    }
}
