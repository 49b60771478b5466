//! Rank 0's report of an MPI `iozone -t` run: the header, the MPI lines under IOzone's
//! throughput lines, the per-rank table, the summary and the JSON document.

use super::doc::{self, IozonePart};
use super::output::summaries_and_warnings;
use super::{excel_text, write_biff, Setup};
use crate::app::finish::{Ended, StoredLine};
use crate::cli::IozoneArgs;
use crate::mpi::comm::Comm;
use crate::mpi::iozone::{DistIozone, IozoneRep};
use crate::mpi::rank::Ranks;
use crate::mpi::{aggregate, job};
use crate::report::runsummary;
use crate::runner::adhoc::CellsResult;
use crate::workload::iozone::IozoneParams;
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

/// Version of the JSON document printed by `--json` under MPI.
pub const JSON_SCHEMA: &str = "fslab.iozone.mpi.v2";

/// What rank 0 says about the job.
pub(super) struct JobInfo<'a> {
    pub(super) comm: &'a Comm,
    pub(super) params: &'a IozoneParams,
    /// Rank 0's file directory.
    pub(super) dir: &'a Path,
    pub(super) all_see: bool,
    pub(super) tag: &'a str,
}

impl JobInfo<'_> {
    /// The MPI facts of the JSON document and the stored parameters.
    pub(super) fn mpi_json(&self) -> serde_json::Value {
        job::mpi_json(
            self.comm,
            &[
                ("workers_per_rank", 1.into()),
                ("stonewall", self.params.stonewall.into()),
                ("files_in_one_directory", self.all_see.into()),
                ("tag", self.tag.into()),
            ],
        )
    }

    /// The MPI lines after IOzone's opening lines.
    pub(super) fn header(&self) -> String {
        let files = if self.params.thread_files.is_empty() {
            format!("{}/iozone.DUMMY.<rank>", self.dir.display())
        } else {
            "-F, one per rank".into()
        };
        format!(
            "\tMPI: {}, one worker per rank; files {files} ({}, {})\n",
            job::ranks_text(self.comm),
            crate::sysinfo::fs_type_of(self.dir).unwrap_or_else(|| "unknown fs".into()),
            if self.all_see {
                "all in rank 0's directory"
            } else {
                "NOT all in rank 0's directory"
            }
        )
    }
}

/// Per phase: start skew, finish skew, per-rank spread and stonewall lag, under IOzone's lines.
pub(super) fn mpi_lines(rep: &IozoneRep) -> String {
    let mut s = format!(
        "\tMPI, {} ranks: start skew, finish skew (ms); spread of per-rank rates; stonewall lag (ms)\n",
        rep.phases.first().map_or(0, |p| p.ranks.len())
    );
    for p in &rep.phases {
        let rates: Vec<f64> = p.ranks.iter().map(|r| r.rate).collect();
        let spread = aggregate::spread(&rates).map_or(0.0, |x| x.spread_pct);
        let _ = writeln!(
            s,
            "\t  {:<14} {:10.3} {:10.3} {:7.1}% {:>10}",
            p.phase,
            p.agg.start_skew * 1e3,
            p.agg.end_skew * 1e3,
            spread,
            p.stonewall_lag
                .map_or_else(|| "-".to_string(), |l| format!("{:.3}", l * 1e3))
        );
    }
    s.push('\t');
    s.push_str(&job::clock_line(&rep.clock));
    s.push('\n');
    s
}

fn per_rank_table(comm: &Comm, rep: &IozoneRep) -> String {
    let head = "phase|rank|host|start +ms|timed s|kB counted|kB moved|stopped|kB/s";
    let rows = rep.phases.iter().flat_map(|p| {
        p.ranks.iter().map(|w| {
            vec![
                p.phase.to_string(),
                w.rank.to_string(),
                job::host_of(comm, w.rank),
                format!("{:.3}", (w.start - p.agg.first_start) * 1e3),
                format!("{:.6}", w.timed),
                (w.counted / 1024).to_string(),
                (w.total / 1024).to_string(),
                if w.stopped { "yes" } else { "" }.to_string(),
                format!("{:.2}", w.rate),
            ]
        })
    });
    job::rank_table(head, &[0, 2, 7], rows.collect())
}

/// Rank 0, after the run: summary, `-R`/`-b`, per-rank table, warnings, or the JSON document.
pub(super) fn finish(
    info: &JobInfo,
    a: &IozoneArgs,
    s: &Setup,
    engine: &Ranks<DistIozone>,
    result: &CellsResult,
    cache_warn: Option<String>,
) -> Result<()> {
    let (sums, mut warns) = summaries_and_warnings(
        &s.plan.points,
        &result.reps,
        a.run.min_phase,
        cache_warn.as_ref(),
    );
    let advice = if info.params.stonewall {
        "IOzone's per-worker figures stop at the first finish (stonewalling), the aggregate includes the tail"
    } else {
        "drop -x to count only while all ranks run (IOzone's stonewalling)"
    };
    if let Some(rep) = engine.reps.last() {
        for p in &rep.phases {
            warns.extend(aggregate::warnings_with(p.phase, &p.agg, advice));
        }
    }
    let any = result.any_done();
    let end = result.ending(JSON_SCHEMA, &warns);
    if a.run.json {
        let mut subject = super::subject(s, a.run.repeat)?;
        subject.params = serde_json::to_value(info.params)?;
        subject.directory = info.dir;
        end.print_json(
            subject.under_mpi(info.comm.size(), info.mpi_json()),
            (None, None),
            // One point, laid out as `fslab iozone --json` lays out its points.
            IozonePart {
                mode: "throughput",
                units: doc::Units::new(true),
                points: doc::points(&s.plan.points, &result.reps, &sums),
                skipped_points: Vec::new(),
                notes: &s.notes,
                per_rank: Some(serde_json::to_value(&engine.reps)?),
            },
        )?;
    } else {
        if any && a.run.repeat > 1 {
            crate::outln!();
            crate::outln!(
                "{}",
                runsummary::render_table(&crate::app::finish::engine_only(&sums[0]))
            );
        }
        if a.excel && any {
            crate::out!("{}", excel_text(s, &result.reps));
        }
        if a.mpi.per_rank {
            if let Some(rep) = engine.reps.last() {
                crate::outln!("{}", per_rank_table(info.comm, rep));
            }
        }
        end.print_tail(StoredLine::Always, "", a.run.quiet);
    }
    write_biff(a.biff.as_deref(), s, result)
}
