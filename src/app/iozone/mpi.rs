//! `mpiexec -n N fslab iozone -t N …`: IOzone's flags checked as without MPI, then agreed by
//! all ranks; one worker per rank on its own file; rank 0 prints IOzone's throughput lines
//! with the MPI figures (the header, the MPI lines under IOzone's throughput lines, the
//! per-rank table, the summary and the JSON document) and stores the run.

use super::output::summaries_and_warnings;
use super::{point_params, print_end, setup, splash, Setup};
use crate::app::finish::{outcome, Recorded};
use crate::app::rundoc::UnderMpi;
use crate::cli::IozoneArgs;
use crate::mpi::comm::Comm;
use crate::mpi::iozone::{DistIozone, IozoneRep};
use crate::mpi::rank::Ranks;
use crate::mpi::{aggregate, job};
use crate::runner::adhoc::CellsResult;
use crate::runner::progress::Progress;
use crate::workload::iozone::IozoneParams;
use crate::workload::{Observer, Quiet, Target, Workload, WorkloadKind};
use anyhow::Result;
use std::fmt::Write;
use std::path::{Path, PathBuf};
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
    // This rank's file: its `-F` entry, or `iozone.DUMMY.<rank>` in the current directory
    // (the checks made `-t` the number of ranks).
    let file = params
        .files(s.target.dir())
        .swap_remove(comm.rank() as usize);
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
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
    if root && !json {
        for n in &s.notes {
            eprintln!("note: {n}");
        }
        let head = splash(&a, &s)
            .replace(" threads\n", " processes (MPI ranks)\n")
            .replace("\tEach thread writes", "\tEach process writes");
        crate::out!("{head}{}", info.header());
    }
    let store = job::open_store(comm, a.run.no_store, db)?;
    let record = s.plan.points[0].record;
    let bar = Progress::new(root && !a.run.quiet && !json, "iozone rank 0")
        .with_units(move |_, _| crate::runner::progress_text::RateUnit::Bytes(record));
    let obs: &dyn Observer = if root { &bar } else { &Quiet };
    let mut cells = vec![super::cell(&target, s.plan.points[0], engine)];
    let mut on_rep = |rep: u32, _ci: usize, m: &[crate::metric::Metric], w: &Ranks<DistIozone>| {
        if !root || json {
            return;
        }
        // Throughput mode's lines (`-t` is the number of ranks), then the MPI lines.
        super::print_rep(&s, rep, a.run.repeat, 0, m);
        if let Some(r) = w.reps.last() {
            crate::out!("{}", mpi_lines(r));
        }
    };
    let mpi = info.under_mpi();
    let label = format!("{} ×{} ranks", params.label(), comm.size());
    let mut recorded = Recorded::new(WorkloadKind::Iozone, &params, label, &a.run, store)?
        .under(&mpi, comm.is_root());
    // Disabled on the other ranks: only rank 0 shows where the run is.
    let result = recorded.run_cells(&mut cells, &target, (obs, Some(&bar)), &mut on_rep)?;
    if root {
        finish(&info, (&a, &s), &cells[0].workload, &result, mpi)?;
    }
    outcome(result.error)
}

/// Version of the JSON document printed by `--json` under MPI.
pub const JSON_SCHEMA: &str = "fslab.iozone.mpi.v2";

/// What rank 0 says about the job.
struct JobInfo<'a> {
    comm: &'a Comm,
    params: &'a IozoneParams,
    /// Rank 0's file directory.
    dir: &'a Path,
    all_see: bool,
    tag: &'a str,
}

impl JobInfo<'_> {
    /// What the job adds to the stored parameters, the JSON document and the ending.
    fn under_mpi(&self) -> UnderMpi {
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
    fn header(&self) -> String {
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
fn mpi_lines(rep: &IozoneRep) -> String {
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

/// Rank 0, after the run: the engine's ending (with `-b`), given the job (`mpi`), with the
/// MPI warnings, figures and table.
fn finish(
    info: &JobInfo,
    (a, s): (&IozoneArgs, &Setup),
    engine: &Ranks<DistIozone>,
    result: &CellsResult,
    mpi: UnderMpi,
) -> Result<()> {
    let (sums, mut warns) = summaries_and_warnings(s, &result.reps, a.run.min_phase);
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
    let mut subject = super::subject(s, a.run.repeat)?;
    subject.params = serde_json::to_value(info.params)?;
    subject.directory = info.dir;
    let mpi = mpi.with_reps(&engine.reps, a.mpi.per_rank, |rep| {
        per_rank_table(info.comm, rep)
    })?;
    let end = (JSON_SCHEMA, &warns[..], subject);
    print_end((a, s), (result, &sums), end, Some(&mpi))
}
