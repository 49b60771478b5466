//! Rank 0's report of an MPI `iozone -t` run: the header, the MPI lines under IOzone's
//! throughput lines, the per-rank table, the summary and the JSON document.

use super::output::summaries_and_warnings;
use super::{print_end, write_biff, Setup};
use crate::app::finish::Ended;
use crate::app::rundoc::UnderMpi;
use crate::cli::IozoneArgs;
use crate::mpi::comm::Comm;
use crate::mpi::iozone::{DistIozone, IozoneRep};
use crate::mpi::rank::Ranks;
use crate::mpi::{aggregate, job};
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
    /// What the job adds to the stored parameters, the JSON document and the ending.
    pub(super) fn under_mpi(&self) -> UnderMpi {
        crate::app::mpi::under_mpi(
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

/// Rank 0, after the run: the engine's ending, given the job (`mpi`), with the MPI warnings,
/// figures and table; then `-b`.
pub(super) fn finish(
    info: &JobInfo,
    (a, s): (&IozoneArgs, &Setup),
    engine: &Ranks<DistIozone>,
    result: &CellsResult,
    (cache_warn, mpi): (Option<String>, UnderMpi),
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
    let end = result.ending(JSON_SCHEMA, &warns);
    let mut subject = super::subject(s, a.run.repeat)?;
    subject.params = serde_json::to_value(info.params)?;
    subject.directory = info.dir;
    let mpi = mpi.with_reps(&engine.reps, a.mpi.per_rank, |rep| {
        per_rank_table(info.comm, rep)
    })?;
    print_end((a, s), (result, &sums), (&end, subject), Some(&mpi))?;
    write_biff(a.biff.as_deref(), s, result)
}
