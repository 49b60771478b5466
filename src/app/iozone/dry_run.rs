//! `fslab iozone --dry-run`: the sweep's points, the bytes each moves, the space needed and
//! an estimate of the time, without writing anything.

use super::doc::{IozonePlanPart, PlanPoint};
use super::estimate::{self, Rate};
use super::{Setup, JSON_SCHEMA};
use crate::app::rundoc::{self, Needs, Planned};
use crate::units::{duration_from_secs_saturating, fmt_bytes, fmt_duration};
use crate::workload::iozone::{self, sweep::Point};
use anyhow::Result;

/// Print what `fslab iozone` would do with these arguments, its time estimated at `rate`.
pub(super) fn dry_run(s: &Setup, repeat: u32, json: bool, rate: Rate) -> Result<()> {
    let passes = estimate::passes(&s.base.tests);
    let workers = s.base.threads.max(1) as u64;
    let pause = if s.base.throughput {
        s.base.phase_pause * passes.len() as f64
    } else {
        0.0
    };
    // Per point: file bytes, record bytes, bytes moved.
    let row = |p: &Point| {
        let file = p.file_kib.saturating_mul(1024);
        (file, p.record, estimate::point_bytes(s, p))
    };
    let rows: Vec<(u64, u64, u64)> = s.plan.points.iter().map(row).collect();
    let moved: u64 = rows
        .iter()
        .fold(0u64, |a, r| a.saturating_add(r.2))
        .saturating_mul(u64::from(repeat));
    let largest = rows.iter().map(|r| r.0).max().unwrap_or(0);
    let needs = largest.saturating_mul(workers);
    let free = crate::sysinfo::free_space(s.target.dir())?;
    let secs = moved as f64 / rate.bytes_per_sec + pause * rows.len() as f64 * f64::from(repeat);
    let names: Vec<&str> = passes.iter().map(|t| t.phase()).collect();
    if !json {
        let e = Estimate {
            names,
            workers,
            pause,
            rows,
            moved,
            needs,
            free_bytes: free.bytes,
            secs,
        };
        say(s, repeat, rate, e);
        return Ok(());
    }
    let needs = Needs {
        bytes: needs,
        inodes: None,
    };
    rundoc::print_dry_run(
        JSON_SCHEMA,
        super::subject(s, repeat)?,
        Planned::new(needs, Some(free), Some(secs)),
        IozonePlanPart {
            tests: &s.base.tests,
            passes: names,
            workers,
            points: s
                .plan
                .points
                .iter()
                .zip(&rows)
                .map(|(p, r)| PlanPoint {
                    at: *p,
                    bytes_moved: r.2,
                })
                .collect(),
            bytes_moved: moved,
            estimate_basis: rate.basis(),
        },
    )
}

/// What a dry run works out from the sweep, for its words.
struct Estimate<'a> {
    names: Vec<&'a str>,
    workers: u64,
    /// Seconds of pauses per point.
    pause: f64,
    /// Per point: file bytes, record bytes, bytes moved.
    rows: Vec<(u64, u64, u64)>,
    moved: u64,
    needs: u64,
    free_bytes: u64,
    secs: f64,
}

/// The dry run in words.
fn say(s: &Setup, repeat: u32, rate: Rate, e: Estimate) {
    let fits = e.needs <= e.free_bytes;
    crate::outln!(
        "iozone dry run: nothing written ({} point(s), {} worker(s), --repeat {repeat})",
        e.rows.len(),
        e.workers
    );
    crate::outln!("  tests        {}", e.names.join(", "));
    for (f, r, m) in &e.rows {
        crate::outln!(
            "  file {:>10}  record {:>6}  moves {} per repetition",
            fmt_bytes(*f),
            iozone::fmt_record(*r),
            fmt_bytes(*m)
        );
    }
    crate::outln!(
        "  needs        {} free in {} ({} free{})",
        fmt_bytes(e.needs),
        s.target.dir().display(),
        fmt_bytes(e.free_bytes),
        if fits { "" } else { ": does not fit" }
    );
    crate::outln!("  moves        {} in all", fmt_bytes(e.moved));
    crate::outln!(
        "  takes about  {} (at {}{})",
        fmt_duration(duration_from_secs_saturating(e.secs)),
        rate.words(),
        if e.pause > 0.0 {
            format!("; plus {:.0} s of pauses per point", e.pause)
        } else {
            String::new()
        }
    );
}
