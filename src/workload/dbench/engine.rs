//! Running one dbench repetition: N client threads, each with its own file-descriptor table
//! as dbench's client processes have ([`crate::workload::workers`]), released together behind a barrier,
//! each looping over the loadfile until the time is up, a per-second progress line, and
//! the throughput and per-operation latency histograms after the warmup.
//!
//! Timing follows dbench: the warmup (default a fifth of `-t`) is run first and not
//! counted, then `-t` seconds are measured; throughput is the ReadX and WriteX bytes of
//! operations that completed in the measured window divided by its length, in MB/s
//! (10^6 bytes). Unlike dbench, an operation counts when it *completes* inside the window
//! (dbench counts whatever the one-second alarm saw last), and latency is kept as an HDR
//! histogram per operation kind (nanoseconds, 3 significant digits) instead of a mean and
//! a maximum.

use super::client::Client;
use super::conduct::{Alone, Conductor, LocalRep, Span, Watch};
use super::ops::OpKind;
use super::worker::{run_client, Gate, Slot};
use super::DbenchParams;
use crate::metric::{Histogram as StoredHistogram, Metric, Unit};
use crate::vocab::EntryKind;
use crate::workload::workers::FirstError;
use crate::workload::{Creates, Observer, Requirements, Shortfall, Target, Workload};
use anyhow::{anyhow, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// One row of the per-operation table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpRow {
    /// Operation name.
    pub op: &'static str,
    /// Operations completed in the measured window, all clients.
    pub count: u64,
    /// Mean latency in ms.
    pub mean_ms: f64,
    /// Median latency in ms.
    pub p50_ms: f64,
    /// 99th percentile in ms.
    pub p99_ms: f64,
    /// 99.9th percentile in ms.
    pub p999_ms: f64,
    /// Maximum in ms.
    pub max_ms: f64,
}

/// What one repetition produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RepOutcome {
    /// MB/s (10^6 bytes) of ReadX+WriteX after the warmup.
    pub throughput_mb_s: f64,
    /// Length of the measured window in seconds.
    pub measured_seconds: f64,
    /// Bytes counted in the window.
    pub measured_bytes: u64,
    /// Operations completed in the window.
    pub measured_ops: u64,
    /// Complete passes over the loadfile, all clients.
    pub passes: u64,
    /// Loadfile lines executed by all clients, warmup included (dbench's line counter).
    pub total_lines: u64,
    /// Largest lateness behind the loadfile's timestamps, in ms (0 without timestamps).
    pub max_lag_ms: f64,
    /// Per-operation latency table, in dbench's order; kinds that did not occur are left out.
    pub ops: Vec<OpRow>,
}

impl RepOutcome {
    /// The largest latency of any operation, in ms (0 without operations).
    pub fn max_latency_ms(&self) -> f64 {
        self.ops.iter().map(|r| r.max_ms).fold(0.0, f64::max)
    }
}

/// The dbench engine.
pub struct Dbench {
    params: DbenchParams,
    /// Global number of this process's first client (0 unless several processes share the
    /// clients, as MPI ranks do).
    first_client: usize,
    live: Vec<PathBuf>,
    hists: Vec<StoredHistogram>,
    /// The last repetition's details, for the dbench-style report.
    pub last: Option<RepOutcome>,
}

pub(super) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

impl Dbench {
    /// An engine for validated parameters.
    pub fn new(params: DbenchParams) -> Dbench {
        Dbench {
            params,
            first_client: 0,
            live: Vec::new(),
            hists: Vec::new(),
            last: None,
        }
    }

    /// Number this process's clients from `first` (client trees `client<first>`, …), when
    /// other processes run the clients below it.
    pub fn with_first_client(mut self, first: usize) -> Dbench {
        self.first_client = first;
        self
    }

    fn client_ids(&self) -> std::ops::Range<usize> {
        self.first_client..self.first_client + self.params.clients
    }

    /// Top-level entries of the target that the clients create (`clients`, usually).
    pub fn top_level_names(&self) -> Vec<String> {
        self.params.loadfile.top_level_names(self.client_ids())
    }

    /// Run one repetition in `dir`.
    pub fn run_rep(&mut self, dir: &Path, obs: &dyn Observer) -> Result<RepOutcome> {
        self.begin(dir)?;
        let local = self.run_clients(dir, obs, &Alone)?;
        self.conclude(local)
    }

    /// Refuse to start where a top-level entry the clients create exists (left by an
    /// earlier run?): the run would remove it.
    pub fn refuse_leftovers(&self, dir: &Path) -> Result<()> {
        for n in self.top_level_names() {
            let p = dir.join(n);
            if p.symlink_metadata().is_ok() {
                crate::bail_usage!(
                    "{} already exists (left by an earlier run?); remove it or choose another directory with -D",
                    p.display()
                );
            }
        }
        Ok(())
    }

    /// Refuse to start if a top-level entry the clients create exists; note what the
    /// repetition will create (removed by cleanup).
    pub fn begin(&mut self, dir: &Path) -> Result<()> {
        self.refuse_leftovers(dir)?;
        self.live = self.top_level_names().iter().map(|n| dir.join(n)).collect();
        Ok(())
    }

    /// Start this process's clients, release them through `conductor`, let it watch them,
    /// and combine their results.
    pub(crate) fn run_clients(
        &self,
        dir: &Path,
        obs: &dyn Observer,
        conductor: &dyn Conductor,
    ) -> Result<LocalRep> {
        let p = &self.params;
        let lf = &*p.loadfile;
        let n = p.clients;
        let slots: Vec<Slot> = (0..n).map(|_| Slot::default()).collect();
        let abort = AtomicBool::new(false);
        let first_error = FirstError::default();
        let start: OnceLock<Instant> = OnceLock::new();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let fail = |e: anyhow::Error| {
            abort.store(true, Ordering::Relaxed);
            first_error.note(e);
        };

        let gate = Gate::default();
        let results: Vec<Option<LocalRep>> = std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(n);
            for (id, slot) in self.client_ids().zip(&slots) {
                let (gate, abort, start, fail) = (&gate, &abort, &start, &fail);
                let done = done_tx.clone();
                let spawned =
                    crate::workload::workers::spawn(s, format!("dbench-client{id}"), move || {
                        let client = Client::new(id, lf, dir, p.client);
                        let t0 = gate.arrive_and_wait(start);
                        let out = match client {
                            Err(e) => {
                                Err(anyhow!("client {id}: cannot open {}: {e}", dir.display()))
                            }
                            Ok(c) => run_client(c, p, slot, abort, t0)
                                .map_err(|e| e.context_for(id, dir)),
                        };
                        let _ = done.send(());
                        out.map_err(fail).ok()
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        fail(anyhow!(
                            "cannot start client thread {id}: {e}; use fewer clients"
                        ));
                        break;
                    }
                }
            }
            drop(done_tx);
            // Release everybody at once when all started clients are ready.
            let t0 = gate.open_when(handles.len(), &start, || conductor.release());
            conductor.watch(&Watch {
                t0,
                warmup: p.warmup,
                slots: &slots,
                done: &done_rx,
                n: handles.len(),
                abort: &abort,
                obs,
                span: if p.run_once {
                    Span::Lines(p.loadfile.ops.len() as u64 * handles.len() as u64)
                } else {
                    Span::Time(p.warmup + p.duration)
                },
            });
            handles
                .into_iter()
                .zip(self.client_ids())
                .map(|(h, id)| {
                    h.join().unwrap_or_else(|_| {
                        fail(anyhow!(
                            "client {id} panicked; this is a bug in fslab, please report it"
                        ));
                        None
                    })
                })
                .collect()
        });

        first_error.into_result()?;
        let mut local = LocalRep::default();
        for r in results.into_iter().flatten() {
            local.merge(r)?;
        }
        Ok(local)
    }

    /// The report of a repetition from its clients' results (one process's, or every
    /// rank's merged): checks that something was measured, the per-operation table and the
    /// stored histograms.
    pub fn conclude(&mut self, r: LocalRep) -> Result<RepOutcome> {
        let p = &self.params;
        let warm = p.warmup.as_secs_f64();
        let last = r.last_finish.min(warm + p.duration.as_secs_f64());
        if last <= warm {
            crate::bail_usage!(
                "every client finished before the warmup of {:.1} s was over, so nothing was measured; use a shorter --warmup (or --warmup 0 with --run-once)",
                p.warmup.as_secs_f64()
            );
        }
        let window = last - warm;
        if r.measured_ops == 0 {
            crate::bail_usage!(
                "no operation completed in the {window:.1} s after the warmup (each one took longer); use a longer -t"
            );
        }
        let mut rows = Vec::new();
        self.hists.clear();
        for (kind, h) in OpKind::ALL.into_iter().zip(&r.hists) {
            let Some(h) = h.as_ref().filter(|h| !h.is_empty()) else {
                continue;
            };
            rows.push(OpRow {
                op: kind.display_name(),
                count: h.len(),
                mean_ms: h.mean() / 1e6,
                p50_ms: ms(h.value_at_quantile(0.5)),
                p99_ms: ms(h.value_at_quantile(0.99)),
                p999_ms: ms(h.value_at_quantile(0.999)),
                max_ms: ms(h.max()),
            });
            let what = format!("the {kind} histogram");
            let phase = kind.display_name().to_string();
            let stored = StoredHistogram::hdr_v2_deflate(phase, "latency_ns", h, &what)?;
            self.hists.push(stored);
        }
        let out = RepOutcome {
            throughput_mb_s: r.measured_bytes as f64 / 1e6 / window,
            measured_seconds: window,
            measured_bytes: r.measured_bytes,
            measured_ops: r.measured_ops,
            passes: r.passes,
            total_lines: r.lines,
            max_lag_ms: r.max_lag * 1e3,
            ops: rows,
        };
        self.last = Some(out.clone());
        Ok(out)
    }

    /// Metrics of one repetition.
    pub fn metrics(&self, o: &RepOutcome) -> Vec<Metric> {
        let ops = o.measured_ops as f64;
        let total = [
            ("throughput", Unit::MBPerSec, o.throughput_mb_s),
            ("op_rate", Unit::OpsPerSec, ops / o.measured_seconds),
            ("elapsed", Unit::Seconds, o.measured_seconds),
            ("operations", Unit::Count, ops),
            ("max_latency", Unit::Millis, o.max_latency_ms()),
        ];
        let mut m: Vec<Metric> = total
            .into_iter()
            .map(|(name, unit, v)| Metric::new("total", name, unit, v))
            .collect();
        if self.params.timestamps && self.params.loadfile.has_timestamps {
            m.push(Metric::new("total", "max_lag", Unit::Millis, o.max_lag_ms));
        }
        for r in &o.ops {
            m.push(Metric::new(r.op, "count", Unit::Count, r.count as f64));
            m.push(Metric::new(r.op, "mean_latency", Unit::Millis, r.mean_ms));
            m.push(Metric::new(r.op, "p50_latency", Unit::Millis, r.p50_ms));
            m.push(Metric::new(r.op, "p99_latency", Unit::Millis, r.p99_ms));
            m.push(Metric::new(r.op, "p999_latency", Unit::Millis, r.p999_ms));
            m.push(Metric::new(r.op, "max_latency", Unit::Millis, r.max_ms));
        }
        m
    }

    /// Remove the client trees of the current repetition.
    fn remove_trees(&mut self) -> Result<()> {
        let mut first = None;
        for p in self.live.drain(..) {
            let r = match p.symlink_metadata() {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p),
                Ok(_) => std::fs::remove_file(&p),
                Err(_) => Ok(()),
            };
            // Gone meanwhile: removed by another process of the same job (MPI ranks sharing
            // a node-local directory).
            let r = r.or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            });
            if let Err(e) = r {
                first.get_or_insert(anyhow!("could not remove client tree {}: {e}", p.display()));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Workload for Dbench {
    fn name(&self) -> &'static str {
        "dbench"
    }

    fn requirements(&self) -> Requirements {
        let f = super::footprint::footprint(&self.params.loadfile);
        let c = self.params.clients as u64;
        Requirements {
            bytes: f.bytes.saturating_mul(c),
            inodes: f.inodes.saturating_mul(c),
        }
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        crate::workload::check_writable_dir(target.dir(), "-D")?;
        match crate::workload::shortfall(target.dir(), self.requirements())? {
            Some(Shortfall::Bytes(s) | Shortfall::Inodes(s)) => crate::bail_usage!(
                "this run ({} replaying {}) needs about {s}; use fewer clients, a smaller loadfile, or another directory with -D",
                super::clients_text(self.params.clients),
                self.params.loadfile_source
            ),
            None => Ok(()),
        }
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        self.hists.clear();
        let out = self.run_rep(target.dir(), obs)?;
        Ok(self.metrics(&out))
    }

    fn creates(&self, target: &Target) -> Vec<Creates> {
        let dir = target.dir();
        let paths = self.top_level_names().into_iter().map(|n| dir.join(n));
        Creates::each(super::NAME, EntryKind::Dir, serde_json::Value::Null, paths)
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        if self.params.skip_cleanup {
            self.live.clear();
            return Ok(());
        }
        self.remove_trees()
    }

    fn take_histograms(&mut self) -> Vec<StoredHistogram> {
        std::mem::take(&mut self.hists)
    }
}
