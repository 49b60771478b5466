//! Why a difference may have happened: the telemetry line under a significant verdict
//! ("journal commits 17 in file_create at 16MB vs 3.00 at 256MB"). A line is written only
//! when it can be true:
//!
//! 1. **Tied by mechanism.** [`class`] says what a result measures (metadata operations,
//!    writes, reads, syncs, a mix) from its engine and phase, and [`ties`] which telemetry
//!    can cause a change in that: journal commits and blocks explain metadata rates, device
//!    reads explain a read job, device writes never explain a read-only one. Telemetry of
//!    other layers (the backing device, which also carries other processes' I/O) and
//!    symptoms (CPU shares) explain nothing.
//! 2. **Per unit of work.** Each repetition's telemetry is divided by the work its
//!    repetition did where the engine says (`rate × elapsed` items, `throughput × elapsed`
//!    bytes, fio's `io_bytes` of the result's own direction: a read job's device reads per
//!    byte read, never per byte a write job beside it wrote), so a timed run that did more
//!    work is not "explained" by the work itself.
//! 3. **Undisturbed.** Only repetitions the runner judged quiet are used.
//! 4. **Significant.** The telemetry's own difference, on the same one-scale model as the
//!    verdicts (`stats::effect`), has p < 0.05 and an interval that excludes 0.
//! 5. **Pointing the same way.** Every tied telemetry is a cost: a better result must come
//!    with less of it per unit of work, a worse one with more.
//!
//! Among the telemetry that passes, the one whose means differ most relative to the larger
//! (at least 20%, and above a floor of noise) is named.

use super::model::{CellMetric, Comparison, WorkloadReport};
use super::telemetry::{show, Show};
use crate::stats::effect::effect;
use crate::workload::WorkloadKind;

/// What a result measures, for choosing the telemetry that may explain it (each engine
/// declares it per phase).
pub use crate::workload::ResultClass as Class;

/// Telemetry that can cause a change in metadata rates: a client load's but its reads.
const METADATA: &[&str] = MIXED.split_at(MIXED.len() - READ.len()).0;
/// Telemetry that can cause a change in write speed.
const WRITE: &[&str] = &[
    "dev.data.write_bytes",
    "dev.journal.write_bytes",
    "fs.journal.transactions",
    "fs.journal.blocks",
    "fs.journal.wait_ms",
    "fs.log.writes",
    "fs.log.noiclogs",
];
/// Telemetry that can cause a change in read speed: reads the device had to serve.
const READ: &[&str] = &["dev.data.read_bytes"];
/// Telemetry that can cause a change in the time of fsync and flush.
const SYNC: &[&str] = &[
    "fs.journal.transactions",
    "fs.journal.wait_ms",
    "dev.journal.write_bytes",
    "dev.data.write_bytes",
    "fs.log.writes",
];
/// A client load's throughput: everything of the classes it mixes, the metadata's first,
/// then [`READ`].
const MIXED: &[&str] = &[
    "fs.journal.transactions",
    "fs.journal.blocks",
    "fs.journal.wait_ms",
    "fs.log.writes",
    "fs.log.noiclogs",
    "dev.journal.write_bytes",
    "dev.data.write_bytes",
    "dev.data.read_bytes",
];

/// What the result `phase` of an engine `kind` measures (the engine's own
/// [`crate::workload::Caps::class`]).
pub fn class(kind: Option<WorkloadKind>, phase: &str) -> Class {
    kind.map_or(Class::Unexplained, |k| (k.caps().class)(phase))
}

/// The telemetry that can cause a change in a result of class `c`.
pub fn ties(c: Class) -> &'static [&'static str] {
    match c {
        Class::Metadata => METADATA,
        Class::Write => WRITE,
        Class::Read => READ,
        Class::Sync => SYNC,
        Class::Mixed => MIXED,
        Class::Unexplained => &[],
    }
}

/// What a telemetry metric measures, in words.
fn words(name: &str) -> Option<(&'static str, Show)> {
    Some(match name {
        "dev.data.write_bytes" => ("data device wrote", Show::Bytes),
        "dev.journal.write_bytes" => ("journal device wrote", Show::Bytes),
        "dev.data.read_bytes" => ("data device read", Show::Bytes),
        "fs.journal.transactions" => ("journal commits", Show::Count),
        "fs.journal.blocks" => ("journal blocks", Show::Count),
        "fs.journal.wait_ms" => ("waiting for a journal transaction (ms)", Show::Count),
        "fs.log.writes" => ("log writes", Show::Count),
        "fs.log.noiclogs" => ("waits for a free log buffer", Show::Count),
        _ => return None,
    })
}

/// Below these a difference is noise, whatever its ratio: a megabyte, five events (a journal
/// commit is a discrete event: 5.7 against 1.3 per phase is the mechanism itself).
fn big_enough(v: f64, how: Show) -> bool {
    match how {
        Show::Bytes => v >= 1024.0 * 1024.0,
        Show::Count | Show::Pct => v >= 5.0,
    }
}

/// Of `(metric, larger mean as measured, baseline, candidate)` entries, the known one whose
/// baseline and candidate figures differ most relative to the larger (at least 20%, and the
/// larger mean as measured above [`big_enough`]).
fn most_different<'a>(entries: &[(&'a str, f64, f64, f64)]) -> Option<&'a str> {
    let mut best: Option<(f64, &'a str)> = None;
    for &(name, measured, x, y) in entries {
        let Some((_, how)) = words(name) else {
            continue;
        };
        let hi = x.max(y);
        if !big_enough(measured, how) || hi <= 0.0 {
            continue;
        }
        let rel = (x - y).abs() / hi;
        if rel < 0.2 || best.as_ref().is_some_and(|(r, _)| *r >= rel) {
            continue;
        }
        best = Some((rel, name));
    }
    best.map(|(_, n)| n)
}

/// The work one repetition did, by repetition number: the items or bytes of the result's
/// phase (`rate` or `throughput` times `elapsed`), dbench's bytes of the run, and for fio the
/// bytes of the result's own direction ([`fio_direction`]); `None` where the engine gives no
/// measure (every repetition then counts as the same work).
fn work(w: &WorkloadReport, cell: usize, phase: &str, rep: i64) -> Option<f64> {
    let at = |s: &CellMetric| {
        s.repetitions
            .iter()
            .position(|&r| r == rep)
            .map(|i| s.values[i])
    };
    match WorkloadKind::of(&w.kind) {
        Some(WorkloadKind::Fio) => {
            let dir = fio_direction(phase);
            let total: f64 = w
                .stats
                .iter()
                .filter(|s| s.cell == cell && s.name == "io_bytes")
                .filter(|s| dir.map_or(true, |d| s.phase.rsplit_once('/').map(|x| x.1) == Some(d)))
                .filter_map(at)
                .sum();
            (total > 0.0).then_some(total)
        }
        kind => {
            let phase = if kind == Some(WorkloadKind::Dbench) {
                "total"
            } else {
                phase
            };
            let el = at(w.stat(cell, phase, "elapsed")?)?;
            let per_s = w
                .stat(cell, phase, "rate")
                .or_else(|| w.stat(cell, phase, "throughput"))?;
            Some(at(per_s)? * el).filter(|x| *x > 0.0)
        }
    }
}

/// The direction whose bytes are the work of fio result `phase` (`job/read`): a read is
/// explained per byte read, a write or a sync per byte written, never per byte of another
/// direction (a write job beside a read job would dilute the reads). fio's telemetry covers
/// the whole run, so the bytes are those of every job of that direction — with one reading
/// job, its own. `None` (every direction) for a phase without one.
fn fio_direction(phase: &str) -> Option<&'static str> {
    match phase.rsplit_once('/').map(|x| x.1) {
        Some("read") => Some("read"),
        Some("write" | "sync") => Some("write"),
        _ => None,
    }
}

/// One side's telemetry metric over its undisturbed repetitions: the values per unit of work
/// where the work is known, the mean of the values as measured, and the mean work.
struct Side {
    per_work: Vec<f64>,
    mean: f64,
    work: Option<f64>,
}

fn side(w: &WorkloadReport, t: &CellMetric, result_phase: &str) -> Side {
    let mut per = Vec::new();
    let mut raw = Vec::new();
    let mut works = Vec::new();
    for (i, (&v, &rep)) in t.values.iter().zip(&t.repetitions).enumerate() {
        if t.disturbed.contains(&i) {
            continue;
        }
        raw.push(v);
        match work(w, t.cell, result_phase, rep) {
            Some(x) => {
                per.push(v / x);
                works.push(x);
            }
            None => per.push(v),
        }
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    Side {
        mean: if raw.is_empty() { f64::NAN } else { mean(&raw) },
        // Per unit of work only where every repetition's work is known.
        work: (works.len() == raw.len() && !raw.is_empty()).then(|| mean(&works)),
        per_work: if works.len() == raw.len() { per } else { raw },
    }
}

/// The telemetry line for comparison `c`, if some telemetry meets every rule of the module
/// header, e.g. `journal commits 17 in file_create at 16MB vs 3.00 at 256MB`.
pub fn explain(w: &WorkloadReport, c: &Comparison) -> Option<String> {
    let better = c.better?;
    if !c.significant {
        return None;
    }
    let tied = ties(class(WorkloadKind::of(&w.kind), &c.phase));
    // The engine's phase, or (dbench, fio) the one phase its telemetry has.
    let mut phase = c.phase.as_str();
    if !w.telemetry.iter().any(|s| s.phase == phase) {
        let mut ps = w.telemetry.iter().map(|s| s.phase.as_str());
        let first = ps.next()?;
        if ps.any(|p| p != first) {
            return None;
        }
        phase = first;
    }
    let find = |cell: usize, name: &str| w.telemetry_stat(cell, phase, name);
    // (metric, baseline mean, candidate mean, the same per unit of work, percent change per
    // unit of work, whether the two sides did different amounts of work).
    struct Pass<'a> {
        name: &'a str,
        means: (f64, f64),
        per_work: (f64, f64),
        pct: f64,
        unequal: bool,
    }
    let mut passing: Vec<Pass> = Vec::new();
    for &name in tied {
        let (Some(a), Some(b)) = (find(c.baseline_cell, name), find(c.cell, name)) else {
            continue;
        };
        let (sa, sb) = (side(w, a, &c.phase), side(w, b, &c.phase));
        let Some((change, test)) = effect(&sa.per_work, &sb.per_work) else {
            continue;
        };
        if !super::verdict::is_significant(Some(&change), test.as_ref()) {
            continue;
        }
        // A cost: the better side has less of it per unit of work.
        if (change.percent < 0.0) != better {
            continue;
        }
        let unequal = match (sa.work, sb.work) {
            (Some(x), Some(y)) => (x - y).abs() > 0.01 * x.max(y),
            _ => false,
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        passing.push(Pass {
            name,
            means: (sa.mean, sb.mean),
            per_work: (mean(&sa.per_work), mean(&sb.per_work)),
            pct: change.percent,
            unequal,
        });
    }
    let entries: Vec<(&str, f64, f64, f64)> = passing
        .iter()
        .map(|p| {
            let (x, y) = if p.unequal { p.per_work } else { p.means };
            (p.name, p.means.0.max(p.means.1), x, y)
        })
        .collect();
    let name = most_different(&entries)?;
    let p = passing.iter().find(|p| p.name == name)?;
    let ((x, y), pct, unequal) = (p.means, p.pct, p.unequal);
    let (what, how) = words(name)?;
    if unequal {
        // The sides did different amounts of work (a timed run): the totals could point
        // either way, so say what was tested.
        let more = match (pct > 0.0, how) {
            (true, _) => "more",
            (false, Show::Count) => "fewer",
            (false, Show::Bytes | Show::Pct) => "less",
        };
        return Some(format!(
            "{what} {}% {more} per unit of work in {phase} at {} than at {}",
            super::verdict::fmt_pct(pct.abs()),
            c.to,
            c.from
        ));
    }
    Some(format!(
        "{what} {} in {phase} at {} vs {} at {}",
        show(x, how),
        c.from,
        show(y, how),
        c.to
    ))
}

#[cfg(test)]
#[path = "explain_tests.rs"]
mod tests;
