//! fio's JSON output (`--output-format=json+`) read back into fslab's metrics and latency
//! histograms.
//!
//! The layout is fio's `stat.c` (`show_thread_status_json`, `add_ddir_status_json`,
//! `add_ddir_lat_json`, `json_array_add_disk_util`): per job `jobname`, `usr_cpu`,
//! `sys_cpu` and one object per direction (`read`, `write`, `trim`, `sync`, or `mixed` with
//! `unified_rw_reporting`) with `io_bytes`, `bw_bytes` (B/s), `iops`, `runtime` (ms),
//! `total_ios` and `slat_ns`/`clat_ns`/`lat_ns` {`min`, `max`, `mean`, `stddev`, `N`,
//! `percentile`, and with json+ `bins`: bucket value in ns → count}; `disk_util[]` with
//! `name` and `util` (%). Read as untyped JSON, so fields a version adds or lacks do not
//! matter; the fields fslab stores are required where fio always writes them.
//!
//! Several entries with the same `jobname` (`numjobs` > 1 without `group_reporting`) are
//! combined as `group_reporting` would: I/O, IOPS and bandwidth summed, runtime the longest,
//! latency means weighted by their sample counts, percentiles read from the merged bins.

use crate::metric::{Histogram as Stored, Metric, Unit};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// Percentiles fslab stores from fio's `percentile` object (all in fio's default list), with
/// the suffix of their metric names (`clat_p99_9`).
pub const PERCENTILES: [(f64, &str); 5] = [
    (50.0, "p50"),
    (90.0, "p90"),
    (99.0, "p99"),
    (99.9, "p99_9"),
    (99.99, "p99_99"),
];

/// Directions of a job as fio names them.
pub const DIRECTIONS: [&str; 5] = ["read", "write", "trim", "mixed", "sync"];

/// One latency statistic (`slat_ns`, `clat_ns`, `lat_ns`) in nanoseconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lat {
    /// Samples.
    pub n: u64,
    /// Smallest, ns.
    pub min: f64,
    /// Largest, ns.
    pub max: f64,
    /// Mean, ns.
    pub mean: f64,
    /// Standard deviation, ns.
    pub stddev: f64,
    /// (percentile, ns) as fio computed them (or from the merged bins).
    pub percentiles: Vec<(f64, f64)>,
    /// json+ bins: (bucket value ns, count), ascending.
    pub bins: Vec<(u64, u64)>,
}

/// One direction of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct DirStats {
    /// `read`, `write`, `trim`, `mixed` or `sync`.
    pub dir: String,
    /// Bytes moved.
    pub io_bytes: u64,
    /// fio's `bw_bytes`: bytes per second.
    pub bw_bytes: f64,
    /// fio's `iops`.
    pub iops: f64,
    /// fio's `runtime` in ms.
    pub runtime_ms: u64,
    /// I/Os completed (for `sync`: fsyncs).
    pub total_ios: u64,
    /// Submission latency.
    pub slat: Lat,
    /// Completion latency.
    pub clat: Lat,
    /// Total latency (for `sync`: the fsync latency).
    pub lat: Lat,
}

/// One job (entries with one name combined).
#[derive(Debug, Clone, PartialEq)]
pub struct JobStats {
    /// fio's `jobname`.
    pub name: String,
    /// Entries combined (threads or processes of `numjobs`).
    pub entries: usize,
    /// fio's `error` (the first non-zero of its entries).
    pub error: i64,
    /// User CPU, % of one CPU, summed over entries.
    pub usr_cpu: f64,
    /// System CPU, % of one CPU, summed over entries.
    pub sys_cpu: f64,
    /// Directions that did I/O, in fio's order.
    pub dirs: Vec<DirStats>,
}

/// A whole fio run.
#[derive(Debug, Clone, PartialEq)]
pub struct FioRun {
    /// `fio version`.
    pub version: String,
    /// Jobs in output order.
    pub jobs: Vec<JobStats>,
    /// `disk_util[]`: device name and utilisation %.
    pub disks: Vec<(String, f64)>,
}

fn num(v: &Value, key: &str) -> Option<f64> {
    match v.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn need(v: &Value, key: &str, at: &str) -> Result<f64> {
    num(v, key).ok_or_else(|| anyhow!("fio's JSON has no number '{key}' in {at}"))
}

fn lat(v: Option<&Value>) -> Lat {
    let Some(v) = v else {
        return Lat::default();
    };
    // An object of numbers keyed by numbers (fio's percentile table, its histogram bins).
    fn pairs<K: std::str::FromStr, X>(
        v: &Value,
        key: &str,
        x: fn(&Value) -> Option<X>,
    ) -> Vec<(K, X)> {
        v.get(key)
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| Some((k.parse::<K>().ok()?, x(v)?)))
                    .collect()
            })
            .unwrap_or_default()
    }
    let mut percentiles: Vec<(f64, f64)> = pairs(v, "percentile", Value::as_f64);
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bins: Vec<(u64, u64)> = pairs(v, "bins", Value::as_u64);
    bins.sort_unstable();
    Lat {
        n: num(v, "N").unwrap_or(0.0) as u64,
        min: num(v, "min").unwrap_or(0.0),
        max: num(v, "max").unwrap_or(0.0),
        mean: num(v, "mean").unwrap_or(0.0),
        stddev: num(v, "stddev").unwrap_or(0.0),
        percentiles,
        bins,
    }
}

/// Parse fio's JSON output. Text before the document (warnings fio prints to stdout) is
/// skipped.
pub fn parse(text: &str) -> Result<FioRun> {
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))
        .ok_or_else(|| anyhow!("fio printed no JSON document"))?;
    let doc: Value = serde_json::from_str(&text[start..]).context("fio's JSON output")?;
    let version = doc.get("fio version").and_then(Value::as_str);
    let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
        bail!("fio's JSON has no 'jobs' array");
    };
    let mut out: Vec<JobStats> = Vec::new();
    for j in jobs {
        let name = j
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("a job in fio's JSON has no 'jobname'"))?
            .to_string();
        let mut dirs = Vec::new();
        for d in DIRECTIONS {
            let Some(v) = j.get(d) else { continue };
            let at = format!("job {name}, {d}");
            let total_ios = need(v, "total_ios", &at)? as u64;
            // fio's `sync` counts the fsyncs and times them in `lat_ns`, and says no more.
            let sync = d == "sync";
            let io = |key: &str| if sync { Ok(0.0) } else { need(v, key, &at) };
            let lat_of = |key: &str| lat(v.get(key).filter(|_| !sync));
            let s = DirStats {
                dir: d.into(),
                io_bytes: io("io_bytes")? as u64,
                bw_bytes: io("bw_bytes").or_else(|_| io("bw").map(|kib| kib * 1024.0))?,
                iops: io("iops")?,
                runtime_ms: io("runtime")? as u64,
                total_ios,
                slat: lat_of("slat_ns"),
                clat: lat_of("clat_ns"),
                lat: lat(v.get("lat_ns")),
            };
            if s.total_ios > 0 || s.io_bytes > 0 {
                dirs.push(s);
            }
        }
        let js = JobStats {
            name: name.clone(),
            entries: 1,
            error: num(j, "error").unwrap_or(0.0) as i64,
            usr_cpu: num(j, "usr_cpu").unwrap_or(0.0),
            sys_cpu: num(j, "sys_cpu").unwrap_or(0.0),
            dirs,
        };
        match out.iter_mut().find(|o| o.name == name) {
            Some(o) => combine(o, js),
            None => out.push(js),
        }
    }
    let disks = doc
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|d| Some((d.get("name")?.as_str()?.to_string(), num(d, "util")?)))
                .collect()
        })
        .unwrap_or_default();
    Ok(FioRun {
        version: version.unwrap_or("unknown").to_string(),
        jobs: out,
        disks,
    })
}

/// Add entry `b` to job `a` (same name).
fn combine(a: &mut JobStats, b: JobStats) {
    a.entries += b.entries;
    if a.error == 0 {
        a.error = b.error;
    }
    a.usr_cpu += b.usr_cpu;
    a.sys_cpu += b.sys_cpu;
    for d in b.dirs {
        match a.dirs.iter_mut().find(|x| x.dir == d.dir) {
            None => a.dirs.push(d),
            Some(x) => {
                x.io_bytes += d.io_bytes;
                x.bw_bytes += d.bw_bytes;
                x.iops += d.iops;
                x.runtime_ms = x.runtime_ms.max(d.runtime_ms);
                x.total_ios += d.total_ios;
                combine_lat(&mut x.slat, &d.slat);
                combine_lat(&mut x.clat, &d.clat);
                combine_lat(&mut x.lat, &d.lat);
            }
        }
    }
    let order = |d: &str| DIRECTIONS.iter().position(|x| *x == d).unwrap_or(9);
    a.dirs.sort_by_key(|d| order(&d.dir));
}

/// Pool two latency statistics: weighted mean, pooled variance, merged bins and the
/// percentiles read from them (fio's rule: the first bucket whose cumulative count reaches
/// the percentile). Without bins, the combined percentiles are unknown and left out.
fn combine_lat(a: &mut Lat, b: &Lat) {
    if b.n == 0 {
        return;
    }
    if a.n == 0 {
        *a = b.clone();
        return;
    }
    let (na, nb) = (a.n as f64, b.n as f64);
    let n = na + nb;
    let mean = (na * a.mean + nb * b.mean) / n;
    let var = (na * (a.stddev.powi(2) + (a.mean - mean).powi(2))
        + nb * (b.stddev.powi(2) + (b.mean - mean).powi(2)))
        / n;
    let mut bins: BTreeMap<u64, u64> = a.bins.iter().copied().collect();
    for &(v, c) in &b.bins {
        *bins.entry(v).or_default() += c;
    }
    a.bins = bins.into_iter().collect();
    a.min = a.min.min(b.min);
    a.max = a.max.max(b.max);
    a.mean = mean;
    a.stddev = var.sqrt();
    a.n += b.n;
    a.percentiles = if a.bins.is_empty() {
        Vec::new()
    } else {
        PERCENTILES
            .iter()
            .filter_map(|&(p, _)| Some((p, bin_percentile(&a.bins, p)? as f64)))
            .collect()
    };
}

/// The value of percentile `p` from bins: the first bucket at which the cumulative count
/// reaches `p`% of all samples (as fio's `calc_clat_percentiles` does).
pub fn bin_percentile(bins: &[(u64, u64)], p: f64) -> Option<u64> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let want = (p / 100.0 * total as f64).max(1.0);
    let mut cum = 0u64;
    for &(v, c) in bins {
        cum += c;
        if cum as f64 >= want {
            return Some(v);
        }
    }
    bins.last().map(|b| b.0)
}

impl Lat {
    /// fio's value of percentile `p`, if it computed it.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-6)
            .map(|x| x.1)
    }

    /// The metrics of this statistic, named `{prefix}_mean` … in ms.
    fn metrics(&self, phase: &str, prefix: &str, out: &mut Vec<Metric>) {
        if self.n == 0 {
            return;
        }
        let percentiles = PERCENTILES
            .iter()
            .filter_map(|&(p, suffix)| Some((suffix, self.percentile(p)?)));
        let all = [("mean", self.mean), ("min", self.min), ("max", self.max)];
        for (suffix, ns) in all.into_iter().chain(percentiles) {
            let name = format!("{prefix}_{suffix}");
            out.push(Metric::new(phase, name, Unit::Millis, ns / 1e6));
        }
    }

    /// The bins as an HDR histogram (values in ns; each bin's count at its bucket value).
    pub fn hdr(&self) -> Result<Option<hdrhistogram::Histogram<u64>>> {
        if self.bins.is_empty() {
            return Ok(None);
        }
        let mut h = hdrhistogram::Histogram::<u64>::new(3)
            .map_err(|e| anyhow!("cannot make a histogram: {e:?}"))?;
        for &(v, c) in &self.bins {
            h.record_n(v.max(1), c)
                .map_err(|e| anyhow!("cannot record {v} ns in a histogram: {e:?}"))?;
        }
        Ok(Some(h))
    }
}

/// The phase of a job's direction: `job/dir` (a `.` in the job name becomes `_`, because
/// `--metric` selections split `phase.metric` at the first dot).
pub fn phase(job: &str, dir: &str) -> String {
    format!("{}/{dir}", job.replace('.', "_"))
}

/// The phase of a job as a whole (its CPU use).
pub fn job_phase(job: &str) -> String {
    job.replace('.', "_")
}

/// The name under which the disk holding the target is stored (phase `disk_util`).
pub const DATA_DISK: &str = "data";

/// The metric marking a direction whose headline is its throughput (see [`crate::workload::Caps`]).
pub const LARGE_SEQUENTIAL: &str = "large_sequential";

impl FioRun {
    /// The run's metrics. `large_sequential(job, dir)` says whether a direction of a job is
    /// sequential with blocks of at least 128 KiB (its headline is then the throughput).
    /// Disks keep fio's names; call [`FioRun::name_data_disk`] first to name the cell's.
    pub fn metrics(&self, large_sequential: &dyn Fn(&str, &str) -> bool) -> Vec<Metric> {
        let mut out = Vec::new();
        for j in &self.jobs {
            for d in &j.dirs {
                let ph = phase(&j.name, &d.dir);
                let total_ios = Metric::new(&ph, "total_ios", Unit::Count, d.total_ios as f64);
                if d.dir == "sync" {
                    out.push(total_ios);
                    d.lat.metrics(&ph, "lat", &mut out);
                    continue;
                }
                for (name, unit, value) in [
                    ("iops", Unit::OpsPerSec, d.iops),
                    ("throughput", Unit::KiBPerSec, d.bw_bytes / 1024.0),
                    ("elapsed", Unit::Seconds, d.runtime_ms as f64 / 1e3),
                    ("io_bytes", Unit::Bytes, d.io_bytes as f64),
                ] {
                    out.push(Metric::new(&ph, name, unit, value));
                }
                out.push(total_ios);
                d.slat.metrics(&ph, "slat", &mut out);
                d.clat.metrics(&ph, "clat", &mut out);
                d.lat.metrics(&ph, "lat", &mut out);
                if large_sequential(&j.name, &d.dir) {
                    out.push(Metric::new(&ph, LARGE_SEQUENTIAL, Unit::Count, 1.0));
                }
            }
            let jp = job_phase(&j.name);
            out.push(Metric::new(&jp, "usr_cpu", Unit::Percent, j.usr_cpu));
            out.push(Metric::new(&jp, "sys_cpu", Unit::Percent, j.sys_cpu));
        }
        for (name, util) in &self.disks {
            out.push(Metric::new("disk_util", name, Unit::Percent, *util));
        }
        out
    }

    /// Call the disk fio names `device` (the device under the target, e.g. `loop3`) `data`,
    /// so every configuration's figure has the same name whichever device it got.
    pub fn name_data_disk(&mut self, device: &str) {
        for d in self.disks.iter_mut().filter(|d| d.0 == device) {
            d.0 = DATA_DISK.into();
        }
    }

    /// The completion-latency histograms (`clat_ns`; `lat_ns` where fio kept only total
    /// latency bins, and for `sync`), one per job and direction, HDR V2 deflate-encoded.
    pub fn histograms(&self) -> Result<Vec<Stored>> {
        let mut out = Vec::new();
        for j in &self.jobs {
            for d in &j.dirs {
                let (name, l) = if d.clat.bins.is_empty() {
                    ("lat_ns", &d.lat)
                } else {
                    ("clat_ns", &d.clat)
                };
                let Some(h) = l.hdr()? else { continue };
                let phase = phase(&j.name, &d.dir);
                out.push(Stored::hdr_v2_deflate(phase, name, &h, "a fio histogram")?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
