//! `mpiexec -n N fslab fdtree …`: checks agreed by all ranks, the run (stored by rank 0 only)
//! and rank 0's report: header, summary table, per-rank table, fdtree's format and the JSON
//! document.

use super::doc::CountsDoc;
use super::params_from;
use crate::app::finish::{outcome, EngineRan, Recorded};
use crate::app::rundoc::UnderMpi;
use crate::cli::{FdtreeArgs, OutputFormat};
use crate::mpi::comm::Comm;
use crate::mpi::fdtree::{DistFdtree, DistRep, Job, Layout};
use crate::mpi::job;
use crate::mpi::rank::{RankMode, Ranks};
use crate::runner::phase_bar::rate_unit;
use crate::runner::progress::Progress;
use crate::units::fmt_bytes;
use crate::workload::fdtree::report::fdtree_report;
use crate::workload::fdtree::{Backend, FdtreeParams, Mode, Phase, PhaseTiming, RepOutcome};
use crate::workload::{Quiet, Target, WorkloadKind};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

fn validate(a: &FdtreeArgs) -> Result<FdtreeParams> {
    let p = params_from(a)?;
    if p.threads != 1 {
        crate::bail_usage!(
            "--threads {}: under mpiexec every rank is one worker; start more ranks (mpiexec -n) instead",
            p.threads
        );
    }
    if p.mode != Mode::Full {
        crate::bail_usage!(
            "-C/-R: under mpiexec fslab runs the full cycle (create, then remove, between barriers); drop -C/-R"
        );
    }
    Ok(p)
}

fn start_dir(a: &FdtreeArgs, backend: Backend) -> Result<PathBuf> {
    if backend == Backend::Null {
        return Ok(a.start_dir.clone());
    }
    crate::workload::check_writable_dir(&a.start_dir, "-o")?;
    std::fs::canonicalize(&a.start_dir)
        .with_context(|| format!("cannot resolve {}", a.start_dir.display()))
}

/// The run's label: the tree's, the ranks and the layout.
fn label(params: &FdtreeParams, ranks: u32, layout: Layout) -> String {
    let shared = match layout {
        Layout::Shared => " shared",
        Layout::Private => "",
    };
    format!("{} ×{ranks} ranks{shared}", params.label())
}

/// The line before each repetition's fdtree report: ranks and layout.
fn banner(ranks: u32, layout: Layout) -> String {
    format!(
        "fslab MPI: {ranks} ranks, {}; totals below are over all ranks",
        match layout {
            Layout::Private => "one tree per rank (LEVEL0.<tag>.r<rank>)",
            Layout::Shared => "one shared tree (LEVEL0.<tag>.shared)",
        }
    )
}

/// Run `fslab fdtree` as one rank of the job.
pub fn run(comm: &Rc<Comm>, a: FdtreeArgs, db: Option<PathBuf>) -> Result<()> {
    // `--json` and `--format json` are one (`RunArgs::normalize`).
    let format = a.run.format;
    let params = comm.agree(validate(&a))?;
    // `-o` may differ: one tree per rank can use per-node paths.
    let mine = serde_json::json!({
        "params": params, "repeat": a.run.repeat, "dry_run": a.run.dry_run,
        "shared": a.mpi.shared, "stonewall": a.mpi.stonewall,
    });
    let tag = job::start(comm, mine, "fdtree")?;
    let layout = if a.mpi.shared {
        Layout::Shared
    } else {
        Layout::Private
    };
    let dir = comm.agree(start_dir(&a, params.backend))?;
    // Whether every rank sees `-o` as the same directory (with the null backend there is none
    // to see). --shared needs it to; one tree per rank can also use node-local directories
    // (then the space check counts only the ranks on each node).
    let shared = "--shared needs -o to be the same directory on every node (a shared file system)";
    let all_see = params.backend == Backend::Null
        || job::seen_by_all(
            comm,
            &dir,
            &tag,
            (layout == Layout::Shared).then_some(shared),
        )?;
    let spec = Job {
        params: params.clone(),
        layout,
        stonewall: a.mpi.stonewall,
        tag,
        fit_ranks: job::ranks_sharing_my_fs(comm, all_see),
    };
    let mut engine = Ranks::new(comm, DistFdtree::new(Rc::clone(comm), spec.clone()));
    let info = JobInfo {
        comm,
        job: &spec,
        dir: &dir,
        all_see,
    };
    if a.run.dry_run {
        if comm.is_root() {
            dry_run(&info, &engine.mode);
        }
        return Ok(());
    }
    let store = job::open_store(comm, a.run.no_store, db)?;
    let target = Target::new(&dir);
    // Rank 0's progress display (on the other ranks a display that shows nothing).
    let shown = comm.is_root() && !a.run.quiet && format != OutputFormat::Json;
    let bar = Progress::new(shown, "fdtree rank 0")
        .with_units(|phase, _| rate_unit(WorkloadKind::Fdtree, phase, 1));
    let obs: &dyn crate::workload::Observer = if comm.is_root() { &bar } else { &Quiet };
    let counts = engine.mode.job_counts();
    let fdtree_fmt = format == OutputFormat::Fdtree && comm.is_root();
    let ranks = comm.size();
    let mut on_rep = |_rep: u32, _m: &[crate::metric::Metric], w: &Ranks<DistFdtree>| {
        let last = w.reps.last();
        if let (true, Some(rep)) = (fdtree_fmt, last) {
            let out = rep_outcome(rep, &w.mode.root_name());
            crate::outln!("{}", banner(ranks, layout));
            crate::out!("{}", fdtree_report(&params, counts, &a.start_dir, &out));
        }
    };
    let label = label(&params, comm.size(), layout);
    let mpi = info.under_mpi();
    let mut recorded = Recorded::new(WorkloadKind::Fdtree, &params, label, &a.run, store)?
        .under(&mpi, comm.is_root());
    // Disabled on the other ranks: only rank 0 shows where the run is.
    let mut ran = recorded.run(&mut engine, &target, obs, Some(&bar), &mut on_rep)?;
    if comm.is_root() {
        report(&info, &engine, (&recorded, &mut ran), mpi, &a)?;
    }
    outcome(ran.result.error)
}

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
struct JobInfo<'a> {
    comm: &'a Comm,
    job: &'a Job,
    dir: &'a Path,
    all_see: bool,
}

impl JobInfo<'_> {
    /// What the job adds to the stored parameters, the JSON document and the ending.
    fn under_mpi(&self) -> UnderMpi {
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

    fn header(&self, engine: &DistFdtree) -> String {
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
fn rep_outcome(rep: &DistRep, root: &str) -> RepOutcome {
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

fn dry_run(info: &JobInfo, engine: &DistFdtree) {
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
fn report(
    info: &JobInfo,
    engine: &Ranks<DistFdtree>,
    (recorded, ran): (&Recorded, &mut EngineRan),
    mpi: UnderMpi,
    a: &FdtreeArgs,
) -> Result<()> {
    let mut head = info.header(&engine.mode);
    if let Some(rep) = engine.reps.last() {
        for p in &rep.phases {
            ran.warnings
                .extend(crate::mpi::aggregate::warnings(p.phase, &p.agg));
        }
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
