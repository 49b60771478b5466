//! IOzone's throughput mode (`-t N`): N workers, each on its own file, start every phase
//! together; the phases run in IOzone's order (initial write, rewrite, read, re-read,
//! reverse read, stride read, random read, random write, fwrite, fread) with `sync()` and a
//! pause between them, as `throughput_test` in `iozone.c` does.
//!
//! Stonewalling (IOzone's default; `-x` turns it off): the first worker to finish raises a
//! stop flag. Readers and the rewriter stop at once; the initial and random writers keep
//! writing to the end of their file (IOzone: "otherwise the readers will fail") but only the
//! bytes before the stop count; fwrite and fread ignore the flag, as in IOzone. Every worker's
//! rate is its bytes before the stop over its time until the stop.
//!
//! Reported per phase: IOzone's "children see" (sum of worker rates), "parent sees" (bytes
//! before the stop over the parent's wall time), min/max/avg worker and min xfer, plus the
//! true aggregate: every byte moved over the time from the first worker's start to the last
//! worker's finish. Workers are threads (IOzone `-T`), each with its own file-descriptor
//! table as IOzone's default child processes have ([`crate::workload::workers`]).

use super::calls::pow2_mask;
pub use super::coord::Coordination;
use super::coord::Threads;
use super::io::{AlignedBuf, Fd, Io, OpenFlags, RealIo, Whence};
use super::passes::{permutation, read_exact, stride_next, write_all, Test};
use super::report::ThroughputLines;
use super::stream::{Mode, Stream};
use super::IozoneParams;
use crate::metric::{Metric, Unit};
use crate::workload::workers::{FirstError, PhaseGate, Seen, Tally};
use crate::workload::Observer;
use anyhow::{anyhow, Context, Result};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The throughput-mode phases for the selected tests, in IOzone's order.
pub fn phases(tests: &[u8]) -> Vec<Test> {
    let order = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::BackwardRead,
        Test::StrideRead,
        Test::RandomRead,
        Test::RandomWrite,
        Test::Fwrite,
        Test::Fread,
    ];
    order
        .into_iter()
        .filter(|t| tests.contains(&t.number()))
        .collect()
}

/// IOzone's title and noun for a phase.
pub fn titles(t: Test) -> (&'static str, &'static str) {
    match t {
        Test::Write => ("Initial write", "initial writers"),
        Test::Rewrite => ("Rewrite", "rewriters"),
        Test::Read => ("Read", "readers"),
        Test::Reread => ("Re-read", "re-readers"),
        Test::BackwardRead => ("Reverse Read", "reverse readers"),
        Test::StrideRead => ("Stride read", "stride readers"),
        Test::RandomRead => ("Random read", "random readers"),
        Test::RandomWrite => ("Random write", "random writers"),
        Test::Fwrite | Test::Frewrite => ("Fwrite", "fwriters"),
        _ => ("Fread", "freaders"),
    }
}

/// One worker's part of one phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkerPhase {
    /// When its timed loop began.
    pub start: Instant,
    /// Seconds from `start` to the stop (or to the end of its loop if it was not stopped).
    pub timed: f64,
    /// When it had finished everything (untimed fsync and close included).
    pub finish: Instant,
    /// Bytes moved before the stop (what IOzone counts).
    pub counted: u64,
    /// Bytes moved in total.
    pub total: u64,
    /// Whether the stop flag cut its measurement short.
    pub stopped: bool,
}

impl WorkerPhase {
    /// IOzone's per-child rate in KiB/s.
    pub fn rate(&self) -> f64 {
        self.counted as f64 / 1024.0 / self.timed.max(1e-9)
    }
}

/// One phase over all workers.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseOutcome {
    /// Which pass.
    pub test: Test,
    /// Per worker.
    pub workers: Vec<WorkerPhase>,
    /// The parent's wall time from releasing the workers to the last one finishing.
    pub parent: Duration,
}

impl PhaseOutcome {
    /// The figures IOzone prints, plus the aggregate.
    pub fn lines(&self) -> ThroughputLines {
        let (title, noun) = titles(self.test);
        let rates: Vec<f64> = self.workers.iter().map(|w| w.rate()).collect();
        let children: f64 = rates.iter().sum();
        let counted: u64 = self.workers.iter().map(|w| w.counted).sum();
        ThroughputLines {
            title,
            noun,
            workers: self.workers.len(),
            children,
            parent: counted as f64 / 1024.0 / self.parent.as_secs_f64().max(1e-9),
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(0.0, f64::max),
            avg: children / self.workers.len().max(1) as f64,
            min_xfer: self
                .workers
                .iter()
                .map(|w| w.counted as f64 / 1024.0)
                .fold(f64::INFINITY, f64::min),
            aggregate: self.total() as f64 / 1024.0 / self.span().max(1e-9),
        }
    }

    /// Bytes moved by all workers.
    pub fn total(&self) -> u64 {
        self.workers.iter().map(|w| w.total).sum()
    }

    /// Seconds from the first start to the last finish.
    pub fn span(&self) -> f64 {
        let first = self.workers.iter().map(|w| w.start).min();
        let last = self.workers.iter().map(|w| w.finish).max();
        first.zip(last).map_or(0.0, |(a, b)| (b - a).as_secs_f64())
    }
}

/// Everything a throughput-mode repetition produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputOutcome {
    /// Phases in run order.
    pub phases: Vec<PhaseOutcome>,
}

impl ThroughputOutcome {
    /// Metrics per phase: `throughput` is the true aggregate; IOzone's figures are
    /// `children_sum`, `parent`, `min_worker`, `max_worker`, `avg_worker`, `min_xfer`.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut m = Vec::new();
        for p in &self.phases {
            let l = p.lines();
            let k = Unit::KiBPerSec;
            let counted: u64 = p.workers.iter().map(|w| w.counted).sum();
            let stopped = p.workers.iter().filter(|w| w.stopped).count();
            for (name, unit, value) in [
                ("throughput", k, l.aggregate),
                ("aggregate", k, l.aggregate),
                ("children_sum", k, l.children),
                ("parent", k, l.parent),
                ("min_worker", k, l.min),
                ("max_worker", k, l.max),
                ("avg_worker", k, l.avg),
                ("elapsed", Unit::Seconds, p.span()),
                ("bytes_before_stop", Unit::Bytes, counted as f64),
                ("bytes_total", Unit::Bytes, p.total() as f64),
                ("min_xfer", Unit::Bytes, l.min_xfer * 1024.0),
                ("stopped_workers", Unit::Count, stopped as f64),
            ] {
                m.push(Metric::new(p.test.phase(), name, unit, value));
            }
        }
        m
    }
}

/// One worker's settings.
pub struct Job<'a> {
    /// Its file.
    pub path: &'a Path,
    /// The run's parameters.
    pub p: &'a IozoneParams,
    /// The random tests' record order ([`permutation`] of the records; empty without `-i 2`).
    pub order: &'a [u64],
}

/// Run throughput mode on the real file system.
pub fn run(p: &IozoneParams, files: &[PathBuf], obs: &dyn Observer) -> Result<ThroughputOutcome> {
    run_with(p, files, obs, |_| RealIo::default(), pause)
}

/// Between two phases of a real run (on every rank under MPI): flush the dirty data, then
/// IOzone's pause.
pub fn pause(pause: Duration) {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::thread::sleep(pause);
}

/// Run throughput mode with an I/O layer per worker (tests use recording layers) and a
/// hook run between phases (real runs: `sync(); sleep(pause)`).
pub fn run_with<I, F, B>(
    p: &IozoneParams,
    files: &[PathBuf],
    obs: &dyn Observer,
    make_io: F,
    between: B,
) -> Result<ThroughputOutcome>
where
    I: Io + Send,
    F: Fn(usize) -> I + Sync,
    B: Fn(Duration),
{
    // References, so the worker closure below copies them.
    let phases = &phases(&p.tests);
    let n = files.len();
    let gate = &PhaseGate::new(n);
    let stop = &AtomicBool::new(false);
    let abort = &AtomicBool::new(false);
    // Each worker counts on its own cache line; the coordinator sums them.
    let tally = &Tally::new(n);
    let first_error = FirstError::default();
    let results = &Mutex::new(vec![vec![None; n]; phases.len()]);
    let order = &permutation(if p.tests.contains(&2) { p.numrecs() } else { 0 });
    let make_io = &make_io;
    let mut out = Vec::new();
    std::thread::scope(|s| {
        let first_error = &first_error;
        let worker = move |w: usize| {
            let path = &files[w];
            let mut io = make_io(w);
            let mut buf = AlignedBuf::new(p.record as usize, p.pattern, p.huge_buffer);
            let job = Job { path, p, order };
            let coord = Threads {
                stop,
                abort,
                progress: tally.slot(w),
                gate,
                seen: Cell::new(Seen::default()),
            };
            for (pi, &test) in phases.iter().enumerate() {
                // The set-up step: the worker opens its file, then waits for the run.
                coord.next_step();
                match worker_phase(&mut io, &job, &coord, &mut buf, test) {
                    Ok(Some(wp)) => {
                        results.lock().unwrap_or_else(|e| e.into_inner())[pi][w] = Some(wp)
                    }
                    Ok(None) => {}
                    Err(e) => {
                        abort.store(true, Ordering::Relaxed);
                        io.close_all();
                        first_error.note(e.context(format!("worker {w} ({})", path.display())));
                    }
                }
                gate.finish();
            }
        };
        let started = crate::workload::workers::spawn_all(s, n, |w| format!("iozone-w{w}"), worker);
        if let Err(e) = started {
            first_error.note(anyhow!("{e}; use fewer threads (-t)"));
            return;
        }
        for (pi, &test) in phases.iter().enumerate() {
            stop.store(false, Ordering::SeqCst);
            tally.reset();
            // Set-up (untimed): every worker opens its file.
            gate.open();
            gate.wait_finished(Duration::from_secs(1), || {});
            obs.phase_started(test.phase(), p.numrecs() * n as u64);
            // The run: one wake releases every worker; the parent's time starts here.
            gate.open();
            let t0 = Instant::now();
            gate.wait_finished(Duration::from_millis(100), || obs.progress(tally.total()));
            let parent = t0.elapsed();
            obs.progress(tally.total());
            obs.phase_finished(test.phase());
            if abort.load(Ordering::Relaxed) {
                continue;
            }
            let row = std::mem::take(&mut results.lock().unwrap_or_else(|e| e.into_inner())[pi]);
            out.push(PhaseOutcome {
                test,
                workers: row.into_iter().flatten().collect(),
                parent,
            });
            if pi + 1 < phases.len() {
                between(Duration::from_secs_f64(p.phase_pause));
            }
        }
    });
    first_error.into_result()?;
    Ok(ThroughputOutcome { phases: out })
}

/// How a phase reacts to the stop flag.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnStop {
    /// Stop at once (readers, rewriter).
    Break,
    /// Keep going to the end, count only bytes before the stop (initial and random writer).
    Finish,
    /// Ignore the flag (fwrite, fread).
    Ignore,
}

/// One worker's phase: set up (untimed), wait at the start line, run the timed loop, finish
/// untimed. Returns `None` when the run was aborted by another worker. `buf` is one record.
pub fn worker_phase<I: Io, C: Coordination>(
    io: &mut I,
    job: &Job<'_>,
    coord: &C,
    buf: &mut [u8],
    test: Test,
) -> Result<Option<WorkerPhase>> {
    let p = job.p;
    let path = job.path;
    let reclen = p.record;
    let n = p.numrecs();
    let on_stop = match test {
        Test::Write | Test::RandomWrite => OnStop::Finish,
        Test::Fwrite | Test::Fread | Test::Frewrite | Test::Freread => OnStop::Ignore,
        _ => OnStop::Break,
    };
    // Untimed set-up; a failure still joins the start barrier so nobody waits forever.
    let setup: Result<Target> = (|| -> std::io::Result<Target> {
        Ok(match test {
            Test::Write | Test::RandomWrite | Test::Rewrite => {
                let mut flags = p.write_flags();
                flags.create = test != Test::Rewrite;
                Target::Fd(io.open(path, flags)?)
            }
            Test::Fwrite => {
                let mode = if io.exists(path) {
                    Mode::ReadWrite
                } else {
                    Mode::Create
                };
                let st = Stream::open(io, path, mode, reclen as usize)?;
                io.fsync(st.fd())?;
                Target::Stream(st)
            }
            Test::Fread => Target::Stream(Stream::open(io, path, Mode::Read, reclen as usize)?),
            _ => Target::Fd(io.open(path, OpenFlags::read_only(p.direct))?),
        })
    })()
    .with_context(|| format!("{} phase: cannot open {}", test.phase(), path.display()));
    if matches!(
        test,
        Test::Write | Test::RandomWrite | Test::Rewrite | Test::Fwrite
    ) {
        buf.fill(p.pattern);
    }
    coord.start_line();
    let mut target = setup?;
    if coord.aborted() {
        let _ = target.close(io);
        return Ok(None);
    }
    let per = ((64u64 << 20) / reclen).clamp(1, 1024);
    let mask = coord.check_mask(pow2_mask(per));
    let mut counted = 0u64;
    let mut total = 0u64;
    let mut stopped = false;
    let mut t_stop = None;
    let mut wraps = 0u64;
    let mut pos = 0u64;
    let start = Instant::now();
    if test == Test::BackwardRead {
        io.seek(target.fd(), -(reclen as i64), Whence::End)
            .context("backward read: lseek to the last record")?;
    }
    for i in 0..n {
        if i & mask == 0 {
            coord.progress(if i == 0 { 0 } else { mask + 1 });
            if crate::signal::interrupted() {
                coord.interrupted();
                return Err(anyhow!(crate::signal::Interrupted));
            }
            if coord.abandon() {
                let _ = target.close(io);
                return Ok(None);
            }
        }
        if on_stop != OnStop::Ignore && coord.stop_raised(i) {
            if on_stop == OnStop::Break {
                stopped = true;
                break;
            }
            if !stopped {
                stopped = true;
                if p.fsync {
                    io.fsync(target.fd())?;
                }
                t_stop = Some(start.elapsed());
            }
        }
        let r = match test {
            Test::Write | Test::Rewrite => write_all(io, target.fd(), buf),
            Test::RandomWrite | Test::RandomRead => {
                let off = job.order[i as usize] * reclen;
                io.seek(target.fd(), off as i64, Whence::Set).and_then(|_| {
                    if test == Test::RandomRead {
                        read_exact(io, target.fd(), buf)
                    } else {
                        write_all(io, target.fd(), buf)
                    }
                })
            }
            Test::BackwardRead => read_exact(io, target.fd(), buf).and_then(|_| {
                if i + 1 < n {
                    io.seek(target.fd(), -2 * reclen as i64, Whence::Cur)
                        .map(|_| ())
                } else {
                    Ok(())
                }
            }),
            Test::StrideRead => read_exact(io, target.fd(), buf).and_then(|_| {
                pos = stride_next(pos, reclen, p.stride, n, &mut wraps);
                io.seek(target.fd(), pos as i64, Whence::Set).map(|_| ())
            }),
            Test::Fwrite | Test::Frewrite => target.stream()?.write(io, buf),
            Test::Fread | Test::Freread => target.stream()?.read(io, buf),
            _ => read_exact(io, target.fd(), buf),
        };
        r.with_context(|| {
            format!(
                "{} phase: I/O on {} failed after {total} bytes",
                test.phase(),
                path.display()
            )
        })?;
        total += reclen;
        if on_stop == OnStop::Ignore || !coord.stop_seen() {
            counted += reclen;
        }
    }
    if p.stonewall && !stopped {
        coord.raise_stop();
    }
    if p.fsync {
        target.flush(io)?;
        io.fsync(target.fd())?;
    }
    if p.close {
        target.close(io)?;
    }
    let end = start.elapsed();
    if !p.close {
        target.flush(io)?;
        io.fsync(target.fd())?;
        target.close(io)?;
    }
    let finish = Instant::now();
    Ok(Some(WorkerPhase {
        start,
        timed: t_stop.unwrap_or(end).as_secs_f64(),
        finish,
        counted,
        total,
        stopped,
    }))
}

/// An open descriptor or stream of one worker.
enum Target {
    Fd(Fd),
    Stream(Stream),
    Closed,
}

impl Target {
    fn fd(&self) -> Fd {
        match self {
            Target::Fd(fd) => *fd,
            Target::Stream(s) => s.fd(),
            Target::Closed => -1,
        }
    }

    fn stream(&mut self) -> std::io::Result<&mut Stream> {
        match self {
            Target::Stream(s) => Ok(s),
            _ => Err(std::io::Error::other("not a stream")),
        }
    }

    fn flush<I: Io>(&mut self, io: &mut I) -> Result<()> {
        if let Target::Stream(s) = self {
            s.flush(io)?;
        }
        Ok(())
    }

    fn close<I: Io>(&mut self, io: &mut I) -> Result<()> {
        match std::mem::replace(self, Target::Closed) {
            Target::Fd(fd) => io.close(fd)?,
            Target::Stream(s) => s.close(io)?,
            Target::Closed => {}
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "throughput_tests.rs"]
mod tests;
