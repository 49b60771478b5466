//! `fslab iozone`: IOzone's flags turned into a plan of (file size, record size) points
//! ([`setup`]), each run `--repeat` times (interleaved) and stored as its own cell, printed as
//! IOzone prints it (text table, `-R` blocks and `-b` worksheet in [`excel`], throughput-mode
//! lines in [`output`]) and summarised with fslab's statistics, or as one JSON document.
//!
//! A sweep is several cells, so the run goes through `finish::Recorded::run_cells`, the
//! many-cell form of `Recorded::run`; a single point is one cell of it.

mod doc;
mod dry_run;
mod estimate;
mod excel;
#[cfg(feature = "mpi")]
pub(super) mod mpi;
mod output;
mod setup;

pub(crate) use excel::{excel_text, write_biff};
pub(crate) use output::splash;
pub(crate) use setup::{cache_warning, factors, point_label, point_params, setup, Setup};

use super::finish::{engine_only, Recorded, StoredLine};
use super::rundoc::{self, Subject, UnderMpi};
use crate::cli::IozoneArgs;
use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::runner::adhoc::{AdhocCell, CellsResult};
use crate::runner::progress::Progress;
use crate::runner::progress_text::RateUnit;
use crate::workload::iozone::sweep::Point;
use crate::workload::iozone::{self, report, Iozone};
use crate::workload::{Target, Workload, WorkloadKind};
use anyhow::Result;
use doc::IozonePart;
use output::{rate_of, summaries_and_warnings, sweep_table, throughput_lines};
use std::path::PathBuf;

/// Version of the JSON document printed by `--json`.
pub const JSON_SCHEMA: &str = "fslab.iozone.v2";

/// What the run document says IOzone ran, where (the test file's directory) and how often.
pub(crate) fn subject(s: &Setup, repeat: u32) -> Result<Subject<'_>> {
    Subject::new(WorkloadKind::Iozone, s.target.dir(), &s.base, repeat)
}

/// Run `fslab iozone`.
pub fn run(a: IozoneArgs, db: Option<PathBuf>) -> Result<()> {
    a.mpi.refuse_outside_mpi()?;
    let s = setup(&a)?;
    let json = a.run.json;
    let rate = estimate::rate(&s, db.as_deref());
    if a.run.dry_run {
        return dry_run::dry_run(&s, a.run.repeat, json, rate);
    }
    let mut cells = cells_of(&s)?;
    if !json {
        for n in &s.notes {
            eprintln!("note: {n}");
        }
        crate::out!("{}", splash(&a, &s));
    }
    let store = super::finish::store_for(&a.run, db)?;
    let obs = progress(&s, !a.run.quiet && !json, rate.bytes_per_sec);
    let mut on_rep = |rep: u32, ci: usize, m: &[Metric], _w: &Iozone| {
        if !json {
            print_rep(&s, rep, a.run.repeat, ci, m);
        }
    };
    let label = match s.plan.points.as_slice() {
        [p] => point_params(&s.base, *p)?.label(),
        ps => format!(
            "iozone sweep of {} points{}",
            ps.len(),
            s.base.flags_label()
        ),
    };
    let mut recorded = Recorded::new(WorkloadKind::Iozone, &s.base, label, &a.run, store)?;
    let result = recorded.run_cells(&mut cells, &s.target, (&obs, Some(&obs)), &mut on_rep)?;
    let (sums, warnings) = summaries_and_warnings(&s, &result.reps, a.run.min_phase);
    let end = (JSON_SCHEMA, &warnings[..], subject(&s, a.run.repeat)?);
    print_end((&a, &s), (&result, &sums), end, None)?;
    super::finish::outcome(result.error)
}

/// IOzone's lines of repetition `rep` of `repeat` for cell `ci` (metrics `m`): before the
/// first cell the repetition's heading (and the text table's header), then the cell's row of
/// the table or its throughput-mode lines.
pub(super) fn print_rep(s: &Setup, rep: u32, repeat: u32, ci: usize, m: &[Metric]) {
    let tmode = s.base.throughput;
    if ci == 0 {
        if repeat > 1 {
            crate::outln!("\n\trepetition {rep} of {repeat}");
        }
        if !tmode {
            crate::out!("\n{}", report::table_header());
        } else {
            crate::outln!();
        }
    }
    let (p, tests) = (s.plan.points[ci], &s.base.tests);
    if tmode {
        crate::out!("{}", throughput_lines(m, s.base.threads, tests));
    } else {
        crate::outln!(
            "{}",
            report::table_row(p.file_kib, p.record, tests, &|t| rate_of(m, t))
        );
    }
}

/// The cell of point `p` on `target`, run by `workload`: its label, factors and configuration.
pub(super) fn cell<W>(target: &Target, p: Point, workload: W) -> AdhocCell<W> {
    AdhocCell {
        label: point_label(p),
        factors: factors(p),
        config: serde_json::json!({
            "target": target.dir, "fs_type": target.fs_type,
            "file_kib": p.file_kib, "record_bytes": p.record,
        }),
        workload,
    }
}

/// One cell per point of the plan, the largest checked before anything runs (space,
/// O_DIRECT, alignment).
fn cells_of(s: &Setup) -> Result<Vec<AdhocCell<Iozone>>> {
    let mut cells = Vec::new();
    for &p in &s.plan.points {
        let params = point_params(&s.base, p)?;
        cells.push(cell(&s.target, p, Iozone::new(params)));
    }
    // Check the largest point before anything runs (space, O_DIRECT, alignment).
    if let Some(c) = cells
        .iter_mut()
        .max_by_key(|c| c.workload.requirements().bytes)
    {
        c.workload.prepare(&s.target)?;
    }
    Ok(cells)
}

/// The run's display: each point's rate in bytes of its record size, its share of the work
/// by the bytes it moves, and the plan's rate before a point is measured.
fn progress(s: &Setup, enabled: bool, bytes_per_sec: f64) -> Progress {
    let records: Vec<u64> = s.plan.points.iter().map(|p| p.record).collect();
    Progress::new(enabled, "iozone")
        .with_units(move |_, point| RateUnit::Bytes(records.get(point).copied().unwrap_or(1)))
        .with_points(
            // Time grows with the bytes moved (and a cost per point the ETA measures).
            s.plan
                .points
                .iter()
                .map(|p| estimate::point_bytes(s, p) as f64)
                .collect(),
            s.plan
                .points
                .iter()
                .map(|p| format!("{}k, {}", p.file_kib, iozone::fmt_record(p.record)))
                .collect(),
        )
        // Before a point is measured: the plan's rate.
        .with_estimate(1.0 / bytes_per_sec)
}

/// The end of the output (rank 0's under MPI, `mpi`): the run document about `subject`, or
/// IOzone's closing line, the summary over the repetitions (a table per point, or one for
/// the sweep), `-R`'s Excel text, the `--per-rank` table and the tail (the warnings); then
/// `-b`'s worksheet.
pub(super) fn print_end(
    (a, s): (&IozoneArgs, &Setup),
    (result, sums): (&CellsResult, &[Vec<MetricSummary>]),
    (schema, warnings, subject): (&'static str, &[String], Subject<'_>),
    mpi: Option<&UnderMpi>,
) -> Result<()> {
    let (tmode, repeat) = (s.base.throughput, a.run.repeat);
    let any = result.any_done();
    let end = result.ending(schema, warnings);
    if a.run.json {
        rundoc::print(&end.document(
            subject.under(mpi),
            (None, None),
            // Under MPI one point, laid out as `fslab iozone --json` lays out its points.
            IozonePart {
                mode: if tmode { "throughput" } else { "single" },
                units: doc::Units::new(mpi.is_some()),
                points: doc::points(&s.plan.points, &result.reps, sums),
                skipped_points: s.plan.skipped.clone(),
                notes: &s.notes,
                per_rank: mpi.and_then(|m| m.per_rank.clone()),
            },
        ))?;
    } else {
        if !tmode && any {
            crate::outln!("\niozone test complete.");
        }
        if any && repeat > 1 {
            crate::outln!();
            if s.plan.points.len() == 1 {
                crate::outln!("{}", runsummary::render_table(&engine_only(&sums[0])));
            } else {
                crate::outln!("{}", sweep_table(&s.plan.points, sums));
            }
        }
        if a.excel && any {
            crate::out!("{}", excel_text(s, &result.reps));
        }
        UnderMpi::print_table(mpi);
        end.print_tail(StoredLine::Always, "", a.run.quiet);
    }
    write_biff(a.biff.as_deref(), s, result)
}
