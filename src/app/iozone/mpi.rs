//! `mpiexec -n N fslab iozone -t N …`: IOzone's flags checked as without MPI, then agreed by
//! all ranks; one worker per rank on its own file; rank 0 prints IOzone's throughput lines
//! with the MPI figures and stores the run.

use super::mpi_report::{self as report, JobInfo};
use super::{cache_warning, point_params, setup, splash, Setup};
use crate::app::finish::{outcome, run_options};
use crate::cli::IozoneArgs;
use crate::mpi::comm::Comm;
use crate::mpi::iozone::DistIozone;
use crate::mpi::job;
use crate::mpi::rank::Ranks;
use crate::runner::adhoc;
use crate::runner::progress::ProgressObserver;
use crate::workload::iozone::IozoneParams;
use crate::workload::{Observer, Quiet, Target, Workload};
use anyhow::Result;
use std::path::PathBuf;
use std::rc::Rc;

/// IOzone's checks, then the MPI rules: throughput mode, one worker per rank.
fn validate(comm: &Comm, a: &IozoneArgs) -> Result<(Setup, IozoneParams)> {
    let n = comm.size() as usize;
    match a.params.threads {
        None => crate::bail_usage!(
            "under mpiexec fslab iozone runs IOzone's throughput mode with one worker per rank; add -t {n} (with -F and {n} files, or none for ./iozone.DUMMY.<rank>)"
        ),
        Some(t) if t != n => crate::bail_usage!(
            "-t {t} but {n} ranks: under mpiexec every rank is one IOzone worker; use -t {n}, or mpiexec -n {t}"
        ),
        Some(_) => {}
    }
    let s = setup(a)?;
    let params = point_params(&s.base, s.plan.points[0])?;
    Ok((s, params))
}

/// This rank's file: its `-F` entry, or `iozone.DUMMY.<rank>` in the current directory.
fn rank_file(p: &IozoneParams, dir: &std::path::Path, rank: u32) -> PathBuf {
    match p.thread_files.get(rank as usize) {
        Some(f) => f.clone(),
        None => dir.join(format!("iozone.DUMMY.{rank}")),
    }
}

/// Run `fslab iozone -t N` as one rank of the job.
pub fn run(comm: &Rc<Comm>, a: IozoneArgs, db: Option<PathBuf>) -> Result<()> {
    let (s, params) = comm.agree(validate(comm, &a))?;
    // File names may differ per node; everything that shapes the phases must not.
    let shape = IozoneParams {
        file: PathBuf::new(),
        thread_files: Vec::new(),
        ..params.clone()
    };
    let mine = serde_json::json!({"params": shape, "repeat": a.run.repeat});
    let tag = job::start(comm, mine, "iozone")?;
    let file = rank_file(&params, s.target.dir(), comm.rank());
    let dir = file
        .parent()
        .map_or_else(|| PathBuf::from("."), |d| d.to_path_buf());
    let all_see = job::seen_by_all(comm, &dir, &tag, None)?;
    let fit_ranks = job::ranks_sharing_my_fs(comm, all_see);
    let target = Target::new(&dir);
    let mode = DistIozone::new(Rc::clone(comm), params.clone(), file, fit_ranks);
    let mut engine = Ranks::new(comm, mode);
    // Space, O_DIRECT and alignment on every rank before anything is written or printed.
    engine.prepare(&target)?;
    let info = JobInfo {
        comm,
        params: &params,
        dir: &dir,
        all_see,
        tag: &tag,
    };
    let root = comm.is_root();
    let json = a.run.json;
    let cache_warn = cache_warning(&s.base, &s.plan);
    if root && !json {
        for n in &s.notes {
            eprintln!("note: {n}");
        }
        let head = splash(&a, &s)
            .replace(" threads\n", " processes (MPI ranks)\n")
            .replace("\tEach thread writes", "\tEach process writes");
        crate::out!("{head}{}", info.header());
    }
    let mut store = job::open_store(comm, a.run.no_store, db)?;
    let record = s.plan.points[0].record;
    let bar = ProgressObserver::new(root && !a.run.quiet && !json, "iozone rank 0")
        .with_units(move |_, _| crate::runner::progress_text::RateUnit::Bytes(record));
    let obs: &dyn Observer = if root { &bar } else { &Quiet };
    let repeat = a.run.repeat;
    let tests = params.tests.clone();
    let ranks = comm.size() as usize;
    let mut cells = vec![super::cell(&target, s.plan.points[0], engine)];
    let mut on_rep = |rep: u32, _ci: usize, m: &[crate::metric::Metric], w: &Ranks<DistIozone>| {
        if !root || json {
            return;
        }
        if repeat > 1 {
            crate::outln!("\n\trepetition {rep} of {repeat}");
        }
        crate::outln!();
        crate::out!("{}", super::output::throughput_lines(m, ranks, &tests));
        if let Some(r) = w.reps.last() {
            crate::out!("{}", report::mpi_lines(r));
        }
    };
    let mpi = info.under_mpi();
    let mut options = run_options(
        "iozone",
        mpi.stored(&serde_json::to_value(&params)?),
        format!("{} ×{} ranks", params.label(), comm.size()),
        &a.run,
        store.as_mut(),
        Some(comm.size()),
    );
    // Disabled on the other ranks: only rank 0 shows where the run is.
    options.steps = Some(&bar);
    let result = adhoc::run_cells(options, &mut cells, &target, obs, &mut on_rep)?;
    if root {
        report::finish(
            &info,
            (&a, &s),
            &cells[0].workload,
            &result,
            (cache_warn, mpi),
        )?;
    }
    outcome(result.error)
}
