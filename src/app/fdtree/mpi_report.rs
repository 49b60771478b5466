//! Rank 0's report of an MPI fdtree run: header, summary table, per-rank table, fdtree's
//! format and the JSON document.

use super::doc::{CountsDoc, FdtreePart, PER_RANK_UNITS};
use crate::app::finish::{summarize, Ended, StoredLine};
use crate::app::rundoc::{self, Subject};
use crate::cli::OutputFormat;
use crate::mpi::comm::Comm;
use crate::mpi::fdtree::{DistFdtree, DistRep, Layout};
use crate::mpi::job;
use crate::report::runsummary;
use crate::runner::adhoc;
use crate::units::fmt_bytes;
use crate::workload::fdtree::{Backend, FdtreeParams, Phase, PhaseTiming, RepOutcome};
use crate::workload::Workload;
use anyhow::Result;
use comfy_table::{presets, Cell, CellAlignment, Table};
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
    pub(super) params: &'a FdtreeParams,
    pub(super) layout: Layout,
    pub(super) stonewall: bool,
    pub(super) dir: &'a Path,
    pub(super) all_see: bool,
    pub(super) tag: &'a str,
}

impl JobInfo<'_> {
    fn mpi_json(&self) -> serde_json::Value {
        job::mpi_json(
            self.comm,
            &[
                ("layout", serde_json::json!(self.layout)),
                ("stonewall", self.stonewall.into()),
                ("target_seen_by_all_ranks", self.all_see.into()),
                ("tag", self.tag.into()),
            ],
        )
    }

    pub(super) fn params_json(&self) -> Result<serde_json::Value> {
        job::params_with_mpi(self.params, self.mpi_json())
    }

    pub(super) fn header(&self, engine: &DistFdtree) -> String {
        let t = engine.job_counts();
        let layout = match self.layout {
            Layout::Private => "one tree per rank".to_string(),
            Layout::Shared => "one shared tree, every rank's files in every directory".into(),
        };
        let target = match self.params.backend {
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
        let sync = if self.params.sync {
            "syncfs timed per rank"
        } else {
            "syncfs not timed"
        };
        format!(
            "fdtree {} under MPI: {}; {layout}; {target}\n\
             per repetition: {} dirs, {} files, {}; {sync}; stonewall {}",
            self.params.flags(),
            job::ranks_text(self.comm),
            t.dirs,
            t.files,
            fmt_bytes(t.bytes),
            if self.stonewall { "on" } else { "off" }
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
        info.params.flags()
    );
    let per_rank_dirs: Vec<u64> = (0..n)
        .map(|r| engine.items_in(Phase::DirCreate, r))
        .collect();
    let lo = per_rank_dirs.iter().min().copied().unwrap_or(0);
    let hi = per_rank_dirs.iter().max().copied().unwrap_or(0);
    let per = if lo == hi {
        format!("{lo} per rank")
    } else {
        format!("{lo}–{hi} per rank")
    };
    crate::outln!("  directories: {} ({per})", t.dirs);
    crate::outln!(
        "  files:       {} ({} per rank, {} KiB each)",
        t.files,
        engine.items_in(Phase::FileCreate, 0),
        info.params.size_blocks * 4
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

/// How rank 0 shows the result: the command's output options.
pub(super) struct Show {
    pub format: OutputFormat,
    pub min_phase: f64,
    pub repeat: u32,
    pub per_rank: bool,
    pub quiet: bool,
}

pub(super) fn report(
    info: &JobInfo,
    engine: &DistFdtree,
    result: &adhoc::AdhocResult,
    show: Show,
) -> Result<()> {
    let Show {
        format,
        min_phase,
        repeat,
        per_rank,
        quiet,
    } = show;
    let (sums, mut warnings) = summarize(
        &result.reps,
        min_phase,
        crate::workload::WorkloadKind::Fdtree,
        &serde_json::to_value(info.params)?,
    );
    if let Some(rep) = engine.reps.last() {
        for p in &rep.phases {
            warnings.extend(crate::mpi::aggregate::warnings(p.phase, &p.agg));
        }
    }
    let end = result.ending(JSON_SCHEMA, &warnings);
    if format == OutputFormat::Json {
        let subject = Subject::new(
            crate::workload::WorkloadKind::Fdtree,
            info.dir,
            serde_json::to_value(info.params)?,
            repeat,
        )
        .under_mpi(info.comm.size(), info.mpi_json());
        return end.print_json(
            subject,
            rundoc::measured(&result.reps, &sums),
            FdtreePart {
                counts: CountsDoc::new(None, engine.job_counts()),
                sync_timed: info.params.sync,
                per_rank: Some(serde_json::to_value(&engine.reps)?),
                per_rank_units: Some(PER_RANK_UNITS),
            },
        );
    }
    if format == OutputFormat::Table && !result.reps.is_empty() {
        crate::outln!("{}", info.header(engine));
        if let Some(rep) = engine.reps.last() {
            crate::outln!("{}", job::clock_line(&rep.clock));
        }
        let shown: Vec<_> = sums
            .into_iter()
            .filter(|m| TABLE_METRICS.contains(&m.name.as_str()))
            .collect();
        crate::outln!("{}", runsummary::render_table(&shown));
    }
    if per_rank {
        if let Some(rep) = engine.reps.last() {
            crate::outln!("{}", per_rank_table(info, rep));
        }
    }
    end.print_tail(StoredLine::Always, " --all (all metrics)", quiet);
    Ok(())
}

fn per_rank_table(info: &JobInfo, rep: &DistRep) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    let mut head = vec![
        "phase",
        "rank",
        "host",
        "items",
        "start +ms",
        "elapsed s",
        "rate/s",
    ];
    if info.stonewall {
        head.push("items at stonewall");
    }
    t.set_header(head);
    let hosts = info.comm.hosts();
    for p in &rep.phases {
        for r in &p.ranks {
            let mut row = vec![
                Cell::new(p.phase),
                Cell::new(r.rank).set_alignment(CellAlignment::Right),
                Cell::new(hosts.get(r.rank as usize).map_or("?", |h| h.as_str())),
                Cell::new(r.items).set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.3}", (r.start - p.agg.first_start) * 1e3))
                    .set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.6}", r.elapsed())).set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.1}", r.rate())).set_alignment(CellAlignment::Right),
            ];
            if let Some(s) = r.stonewall {
                row.push(Cell::new(s.items).set_alignment(CellAlignment::Right));
            }
            t.add_row(row);
        }
    }
    t.to_string()
}
