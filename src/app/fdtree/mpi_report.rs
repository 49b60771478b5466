//! Rank 0's report of an MPI fdtree run: header, summary table, per-rank table, fdtree's
//! format and the JSON document.

use super::doc::CountsDoc;
use crate::app::finish::{EngineRan, Recorded};
use crate::app::rundoc::UnderMpi;
use crate::cli::FdtreeArgs;
use crate::mpi::comm::Comm;
use crate::mpi::fdtree::{DistFdtree, DistRep, Job, Layout};
use crate::mpi::job;
use crate::mpi::rank::{RankMode, Ranks};
use crate::units::fmt_bytes;
use crate::workload::fdtree::{Backend, Phase, PhaseTiming, RepOutcome};
use anyhow::Result;
use std::path::Path;

/// Version of the JSON document printed by `--format json` under MPI.
pub const JSON_SCHEMA: &str = "fslab.fdtree.mpi.v2";

/// Metrics shown in the text table (all are stored and in JSON).
const TABLE_METRICS: [&str; 11] = [
    "elapsed",
    "rate",
    "throughput",
    "items",
    "rank_rate_min",
    "rank_rate_max",
    "rank_rate_spread",
    "start_skew",
    "end_skew",
    "stonewall_rate",
    "stonewall_items",
];

/// What rank 0 says about the job.
pub(super) struct JobInfo<'a> {
    pub(super) comm: &'a Comm,
    pub(super) job: &'a Job,
    pub(super) dir: &'a Path,
    pub(super) all_see: bool,
}

impl JobInfo<'_> {
    /// What the job adds to the stored parameters, the JSON document and the ending.
    pub(super) fn under_mpi(&self) -> UnderMpi {
        let j = self.job;
        crate::app::mpi::under_mpi(
            self.comm,
            &[
                ("layout", serde_json::json!(j.layout)),
                ("stonewall", j.stonewall.into()),
                ("target_seen_by_all_ranks", self.all_see.into()),
                ("tag", j.tag.as_str().into()),
            ],
        )
    }

    pub(super) fn header(&self, engine: &DistFdtree) -> String {
        let t = engine.job_counts();
        let layout = match self.job.layout {
            Layout::Private => "one tree per rank".to_string(),
            Layout::Shared => "one shared tree, every rank's files in every directory".into(),
        };
        let target = match self.job.params.backend {
            Backend::Fs => format!(
                "{} ({}{})",
                self.dir.display(),
                crate::sysinfo::fs_type_of(self.dir).unwrap_or_else(|| "unknown fs".into()),
                if self.all_see {
                    ", seen by all ranks"
                } else {
                    ", NOT the same directory on every node"
                }
            ),
            Backend::Null => "null backend (no system calls)".into(),
        };
        let sync = if self.job.params.sync {
            "syncfs timed per rank"
        } else {
            "syncfs not timed"
        };
        format!(
            "fdtree {} under MPI: {}; {layout}; {target}\n\
             per repetition: {} dirs, {} files, {}; {sync}; stonewall {}",
            self.job.params.flags(),
            job::ranks_text(self.comm),
            t.dirs,
            t.files,
            fmt_bytes(t.bytes),
            if self.job.stonewall { "on" } else { "off" }
        )
    }
}

/// fdtree's report structure filled with the aggregated phases.
pub(super) fn rep_outcome(rep: &DistRep, root: &str) -> RepOutcome {
    RepOutcome {
        phases: rep
            .phases
            .iter()
            .map(|p| PhaseTiming {
                phase: p.phase,
                items: p.agg.items,
                elapsed: p.agg.elapsed,
                sync: (p.agg.sync_max > 0.0).then_some(p.agg.sync_max),
                per_thread: p.ranks.iter().map(|r| r.elapsed()).collect(),
                start_skew: p.agg.start_skew,
                t_in: p.agg.first_start,
                t_out: p.agg.last_end,
            })
            .collect(),
        roots: vec![root.to_string()],
        started: rep.started,
    }
}

pub(super) fn dry_run(info: &JobInfo, engine: &DistFdtree) {
    let t = engine.job_counts();
    let n = info.comm.size();
    crate::outln!(
        "fdtree {} under MPI ({n} ranks), dry run: nothing created",
        info.job.params.flags()
    );
    let per = job::per_rank((0..n).map(|r| engine.items_in(Phase::DirCreate, r)));
    crate::outln!("  directories: {} ({per})", t.dirs);
    crate::outln!(
        "  files:       {} ({} per rank, {} KiB each)",
        t.files,
        engine.items_in(Phase::FileCreate, 0),
        info.job.params.size_blocks * 4
    );
    crate::outln!("  file data:   {}", fmt_bytes(t.bytes));
    let req = engine.requirements();
    crate::outln!(
        "  rank 0's file system must hold about {} and {} inodes ({})",
        fmt_bytes(req.bytes),
        req.inodes,
        if info.all_see {
            "all ranks write to it"
        } else {
            "the ranks on its node write to it"
        }
    );
}

/// Rank 0's report in the command's format (`--json` or `--format`): the engine's ending,
/// given the job (`mpi`), with the MPI warnings, figures and table.
pub(super) fn report(
    info: &JobInfo,
    engine: &Ranks<DistFdtree>,
    (recorded, ran): (&Recorded, &mut EngineRan),
    mpi: UnderMpi,
    a: &FdtreeArgs,
) -> Result<()> {
    if let Some(rep) = engine.reps.last() {
        for p in &rep.phases {
            ran.warnings
                .extend(crate::mpi::aggregate::warnings(p.phase, &p.agg));
        }
    }
    let mut head = info.header(&engine.mode);
    if let Some(rep) = engine.reps.last() {
        head = format!("{head}\n{}", job::clock_line(&rep.clock));
    }
    let shown = ran
        .sums
        .iter()
        .filter(|m| TABLE_METRICS.contains(&m.name.as_str()));
    let mpi = mpi.with_reps(&engine.reps, a.mpi.per_rank, |rep| {
        per_rank_table(info, rep)
    })?;
    super::print_end(
        (recorded, &*ran, JSON_SCHEMA),
        (a, &info.job.params, info.dir),
        CountsDoc::new(None, engine.mode.job_counts()),
        (head, shown.cloned().collect()),
        Some(&mpi),
    )
}

fn per_rank_table(info: &JobInfo, rep: &DistRep) -> String {
    let mut head = "phase|rank|host|items|start +ms|elapsed s|rate/s".to_string();
    if info.job.stonewall {
        head.push_str("|items at stonewall");
    }
    let rows = rep.phases.iter().flat_map(|p| {
        p.ranks.iter().map(|r| {
            let mut row = vec![
                p.phase.to_string(),
                r.rank.to_string(),
                job::host_of(info.comm, r.rank),
                r.items.to_string(),
                format!("{:.3}", (r.start - p.agg.first_start) * 1e3),
                format!("{:.6}", r.elapsed()),
                format!("{:.1}", r.rate()),
            ];
            row.extend(r.stonewall.map(|s| s.items.to_string()));
            row
        })
    });
    job::rank_table(&head, &[0, 2], rows.collect())
}
