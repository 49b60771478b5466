//! `mpiexec -n N fslab mdtest …`: the same options on every rank (agreed), `-d` seen by all
//! ranks (with `-d a@b`, rank r works in directory r mod 2, as mdtest's), the run through the
//! one repetition protocol (stored by rank 0 only), and rank 0's mdtest output.

use super::{on_iteration, options, parse, print_end, rate_unit};
use crate::app::finish::{outcome, Recorded};
use crate::cli::{MdtestArgs, MdtestOwnArgs};
use crate::mpi::comm::Comm;
use crate::mpi::job;
use crate::runner::progress::Progress;
use crate::workload::mdtest::{self, report, Backend, Invocation, Mdtest, Options, Team};
use crate::workload::param::in_words;
use crate::workload::{Quiet, Target, WorkloadKind};
use anyhow::Result;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// Run `fslab mdtest` as one rank of the job.
pub fn run(comm: &Rc<Comm>, a: MdtestArgs, db: Option<PathBuf>) -> Result<()> {
    let parsed = comm.agree(parse(&a).and_then(|p| {
        crate::app::mpi::refuse_disturbed(&p.own.run)?;
        Ok(p)
    }))?;
    let (own, inv) = (&parsed.own, &parsed.inv);
    let db = parsed.db.clone().or(db);
    let p = &inv.params;
    let mine =
        serde_json::json!({"params": p, "repeat": own.run.repeat, "dry_run": own.run.dry_run});
    let tag = job::start(comm, mine, "mdtest")?;
    let lay = p.validate().map_err(|e| in_words(e, mdtest::words()))?;
    let mut opts = options(own);
    let json = own.run.json;
    let mine = directories(comm, own, inv, &mut opts, &tag)?;
    let team = CommTeam(Rc::clone(comm));
    let mut engine =
        Mdtest::with_team(p.clone(), opts, team).map_err(|e| in_words(e, mdtest::words()))?;
    if own.run.dry_run {
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
    let store = job::open_store(comm, own.run.no_store, db)?;
    let target = Target::new(&mine);
    let bar = Progress::new(comm.is_root() && !own.run.quiet && !json, "mdtest rank 0")
        .with_units(rate_unit);
    let obs: &dyn crate::workload::Observer = if comm.is_root() { &bar } else { &Quiet };
    let mpi = crate::app::mpi::under_mpi(comm, &[]);
    let label = format!("{} ×{} ranks", p.flags(), comm.size());
    let mut recorded =
        Recorded::new(WorkloadKind::Mdtest, p, label, &own.run, store)?.under(&mpi, comm.is_root());
    // Rank 0: -x after a stonewalled creation, -v after every iteration.
    let mut status_error = None;
    let root = comm.is_root().then_some(comm.size());
    let mut each = on_iteration::<CommTeam>(inv, root, json, &mut status_error);
    let ran = recorded.run(&mut engine, &target, obs, Some(&bar), &mut each)?;
    drop(each);
    let seed = engine.seed();
    let notes = engine.finish();
    if comm.is_root() {
        for note in notes {
            eprintln!("fslab: note: {note}");
        }
        print_end(&parsed, &engine, (&lay, started, seed), &ran, Some(&mpi))?;
    }
    if let Some(e) = status_error {
        return Err(e);
    }
    outcome(ran.result.error)
}

/// This rank's directory, the `-d` directories seen to: no more of them than ranks, each made
/// by its first rank (`opts.made_dir`: the run made it), one shared by every rank when there
/// is one; and the `-x` status file checked by rank 0.
fn directories(
    comm: &Comm,
    own: &MdtestOwnArgs,
    inv: &Invocation,
    opts: &mut Options,
    tag: &str,
) -> Result<PathBuf> {
    let p = &inv.params;
    // -d a@b: rank r works in directory r mod 2, as mdtest's ranks do.
    opts.dirs = inv.dirs.len() as u32;
    // Refused by all ranks together, so rank 0 says why and every rank exits 2 (a rank that
    // refused alone would end the job with MPI_Abort, its line and code racing the others).
    comm.agree(mdtest::run::check_dirs(opts.dirs, comm.size()))?;
    let mine = inv.dir_of(comm.rank()).clone();
    // Every rank of a directory works in the same test directories: it must be one
    // directory for all of them (a dry run makes nothing).
    if opts.backend == Backend::Fs && !own.run.dry_run {
        // The directory's first rank alone makes it, so that it knows the run made it (and
        // removes it at the end, as mdtest does); the others then check that they see it.
        let made = if comm.rank() < opts.dirs {
            let missing = std::fs::symlink_metadata(&mine).is_err();
            std::fs::create_dir_all(&mine)
                .map(|()| missing)
                .map_err(|e| crate::error::usage(format!("cannot make -d {}: {e}", mine.display())))
        } else {
            Ok(false)
        };
        opts.made_dir = comm.agree(made)?;
        if opts.dirs == 1 {
            job::seen_by_all(
                comm,
                &inv.dir,
                tag,
                Some("-d must be the same directory on every node (a shared file system)"),
            )?;
        }
    }
    if let Some(x) = &inv.status_file {
        // Rank 0 reads it (mdtest's rank 0 does) and checks it against its records.
        let checked = comm
            .is_root()
            .then(|| mdtest::status::check(x, p, &inv.dir));
        let checked = checked.unwrap_or(Ok(None));
        if let Some(note) = comm.agree(checked)? {
            eprintln!("fslab: note: {note}");
        }
    }
    Ok(mine)
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
