//! `mpiexec -n N fslab fdtree …`: checks agreed by all ranks, the run (stored by rank 0 only)
//! and rank 0's report.

use super::mpi_report::{dry_run, rep_outcome, report, JobInfo};
use super::params_from;
use crate::app::finish::{outcome, Recorded};
use crate::cli::{FdtreeArgs, OutputFormat};
use crate::mpi::comm::Comm;
use crate::mpi::fdtree::{DistFdtree, Job, Layout};
use crate::mpi::job;
use crate::mpi::rank::Ranks;
use crate::runner::progress::ProgressObserver;
use crate::workload::fdtree::report::fdtree_report_counts;
use crate::workload::fdtree::{Backend, FdtreeParams, Mode};
use crate::workload::{Quiet, Target, WorkloadKind};
use anyhow::{Context, Result};
use std::path::PathBuf;
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
    format!(
        "{} ×{ranks} ranks{}",
        params.label(),
        match layout {
            Layout::Shared => " shared",
            Layout::Private => "",
        }
    )
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
    let bar = ProgressObserver::new(
        comm.is_root() && !a.run.quiet && format != OutputFormat::Json,
        "fdtree rank 0",
    )
    .with_units(|phase, _| super::rate_unit(phase));
    let obs: &dyn crate::workload::Observer = if comm.is_root() { &bar } else { &Quiet };
    let counts = engine.mode.job_counts();
    let fdtree_fmt = format == OutputFormat::Fdtree && comm.is_root();
    let start_display = a.start_dir.clone();
    let ranks = comm.size();
    let mut on_rep = |_rep: u32, _m: &[crate::metric::Metric], w: &Ranks<DistFdtree>| {
        let last = w.reps.last();
        if let (true, Some(rep)) = (fdtree_fmt, last) {
            let out = rep_outcome(rep, &w.mode.root_name());
            crate::outln!("{}", banner(ranks, layout));
            crate::out!(
                "{}",
                fdtree_report_counts(&params, counts, &start_display, &out)
            );
        }
    };
    let label = label(&params, comm.size(), layout);
    let mpi = info.under_mpi();
    let mut recorded =
        Recorded::new(WorkloadKind::Fdtree, &params, label, &a.run, store)?.under(&mpi);
    // Disabled on the other ranks: only rank 0 shows where the run is.
    let mut ran = recorded.run(&mut engine, &target, obs, Some(&bar), &mut on_rep)?;
    if comm.is_root() {
        report(&info, &engine, (&recorded, &mut ran), mpi, &a)?;
    }
    outcome(ran.result.error)
}
