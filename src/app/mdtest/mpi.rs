//! `mpiexec -n N fslab mdtest …`: the same options on every rank (agreed), `-d` seen by all
//! ranks, the run through the one repetition protocol (stored by rank 0 only), and rank 0's
//! mdtest output.

use super::{fs_of, options, parse, rate_unit, subject, MdtestPart, Parsed, FLAGS, JSON_SCHEMA};
use crate::app::finish::{run_options, summarize, Ended, StoredLine};
use crate::app::rundoc;
use crate::cli::{MdtestArgs, TextFormat};
use crate::mpi::comm::Comm;
use crate::mpi::job;
use crate::runner::adhoc;
use crate::runner::progress::ProgressObserver;
use crate::workload::mdtest::{report, Backend, Mdtest, Team};
use crate::workload::param::in_words;
use crate::workload::{Quiet, Target, WorkloadKind};
use anyhow::Result;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// Run `fslab mdtest` as one rank of the job.
pub fn run(comm: &Rc<Comm>, a: MdtestArgs, db: Option<PathBuf>) -> Result<()> {
    let Parsed {
        own,
        inv,
        mdtest_args,
    } = comm.agree(parse(&a))?;
    let p = &inv.params;
    let mine = serde_json::json!({"params": p, "repeat": own.run.repeat, "dry_run": own.dry_run})
        .to_string();
    job::same_options_everywhere(comm, &mine, "mdtest")?;
    let lay = p.validate().map_err(|e| in_words(e, FLAGS))?;
    let mut opts = options(&own);
    let json = own.format == TextFormat::Json;
    let tag = job::tag(comm);
    // Every rank works in the same test directories: -d must be one directory for all (a
    // dry run makes nothing).
    if opts.backend == Backend::Fs && !own.dry_run {
        // Rank 0 alone makes it, so that it knows the run made it (and removes it at the end,
        // as mdtest does); the others then check that they see it.
        let made = if comm.is_root() {
            let missing = std::fs::symlink_metadata(&inv.dir).is_err();
            std::fs::create_dir_all(&inv.dir)
                .map(|()| missing)
                .map_err(|e| {
                    crate::error::usage(format!("cannot make -d {}: {e}", inv.dir.display()))
                })
        } else {
            Ok(false)
        };
        opts.made_dir = comm.agree(made)?;
        job::seen_by_all(
            comm,
            &inv.dir,
            &tag,
            Some("-d must be the same directory on every node (a shared file system)"),
        )?;
    }
    let team = CommTeam(Rc::clone(comm));
    let mut engine = Mdtest::with_team(p.clone(), opts, team).map_err(|e| in_words(e, FLAGS))?;
    if own.dry_run {
        if comm.is_root() {
            crate::outln!(
                "{} in {} on {}, dry run: nothing created",
                p.flags(),
                inv.dir.display(),
                job::ranks_text(comm)
            );
            crate::outln!("  {}", report::tasks_line(p, &lay, comm.size()));
        }
        return Ok(());
    }
    let started = chrono::Local::now();
    let mut store = job::open_store(comm, own.run.no_store, db)?;
    let target = Target::new(&inv.dir);
    let bar = ProgressObserver::new(comm.is_root() && !own.quiet && !json, "mdtest rank 0")
        .with_units(rate_unit);
    let obs: &dyn crate::workload::Observer = if comm.is_root() { &bar } else { &Quiet };
    let params = job::params_with_mpi(p, job::mpi_json(comm, &[]))?;
    let mut options = run_options(
        "mdtest",
        params.clone(),
        format!("{} ×{} ranks", p.flags(), comm.size()),
        &own.run,
        store.as_mut(),
        Some(comm.size()),
    );
    options.steps = Some(&bar);
    let result = adhoc::run(options, &mut engine, &target, obs, &mut |_, _, _| {})?;
    let seed = engine.seed();
    let notes = engine.finish();
    if comm.is_root() {
        for note in notes {
            eprintln!("fslab: note: {note}");
        }
        let (sums, warnings) = summarize(
            &result.reps,
            own.run.min_phase,
            WorkloadKind::Mdtest,
            &params,
        );
        let end = result.ending(JSON_SCHEMA, &warnings);
        if json {
            end.print_json(
                subject(&inv, own.run.repeat)?.under_mpi(comm.size(), job::mpi_json(comm, &[])),
                rundoc::measured(&result.reps, &sums),
                MdtestPart {
                    items_per_rank: lay.items,
                    seed,
                    iterations: Some(engine.iterations()),
                    tree_dirs: None,
                },
            )?;
        } else {
            if !result.reps.is_empty() {
                let fs = fs_of(&inv.dir);
                crate::out!(
                    "{}",
                    report::preamble(&report::Preamble {
                        started: report::timestamp(started),
                        ranks: comm.size(),
                        nodes: job::hosts(comm).len() as u32,
                        command: report::command_line("fslab mdtest", &mdtest_args),
                        warnings: p.notes().iter().map(|n| n.render(FLAGS)).collect(),
                        fs: report::fs_lines(&fs),
                        seed,
                        tasks: report::tasks_line(p, &lay, comm.size()),
                    })
                );
                crate::out!("{}", report::tables(engine.iterations(), p, inv.print));
                crate::out!("{}", report::finished(chrono::Local::now()));
            }
            end.print_tail(StoredLine::Always, "", own.quiet);
        }
    }
    match result.error {
        Some(e) => Err(crate::error::runtime(e)),
        None => Ok(()),
    }
}

/// How long a rank naps between polls while it waits in a reduction (a few per phase).
const NAP: Duration = Duration::from_micros(50);

/// The job's ranks as an mdtest team: barriers between phases, agreement on failures, and
/// the sums and maxima that make rates over all ranks.
#[derive(Clone)]
pub struct CommTeam(pub Rc<Comm>);

impl Team for CommTeam {
    fn rank(&self) -> u32 {
        self.0.rank()
    }
    fn size(&self) -> u32 {
        self.0.size()
    }
    fn barrier(&self) {
        self.0.barrier()
    }
    fn agree(&self, local: anyhow::Result<()>) -> anyhow::Result<()> {
        self.0.agree(local)
    }
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>) {
        self.0.sum_max_napping(sums, maxes, NAP)
    }
}
