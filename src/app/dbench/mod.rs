//! `fslab dbench`: argument checks, the loadfile generator, repetitions, dbench-style
//! progress and report, and the JSON document.

mod doc;
#[cfg(feature = "mpi")]
pub(super) mod mpi;

use super::finish::{store_for, EngineRan, Recorded, StoredLine};
use super::rundoc::{self, Planned, Subject, UnderMpi};
use crate::cli::DbenchArgs;
use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::runner::progress::Progress;
use crate::workload::dbench::report::report;
use crate::workload::dbench::{flags, generate, Dbench, DbenchParams, Loadfile, RepOutcome};
use crate::workload::param::in_words;
use crate::workload::{Observer, Target, Workload, WorkloadKind};
use anyhow::Result;
use doc::{DbenchPart, LoadfileDoc, PER_RANK_UNITS};
use std::path::{Path, PathBuf};

/// Version of the JSON document printed by `--json`.
pub const JSON_SCHEMA: &str = "fslab.dbench.v2";

/// Prints dbench's per-second lines: to stdout with the tables, to stderr with `--json`.
pub(crate) struct Console {
    pub(crate) json: bool,
    pub(crate) quiet: bool,
}

impl Observer for Console {
    fn message(&self, msg: &str) {
        match (self.quiet, self.json) {
            (true, _) => {}
            (false, true) => eprintln!("{msg}"),
            (false, false) => crate::outln!("{msg}"),
        }
    }
}

/// `fslab dbench`'s arguments onto the engine's parameters: dbench's own through the study's
/// [`DbenchSpec`](crate::workload::dbench::DbenchSpec) (cheap checks before the loadfile is
/// read), then the command-line-only load options.
pub(crate) fn params_from(a: &DbenchArgs) -> Result<DbenchParams> {
    super::check_run_args(&a.run)?;
    let mut p = a
        .load
        .params(flags(), a.run_once)
        .map_err(|e| in_words(e, flags()))?;
    crate::workload::check_writable_dir(&a.directory, "-D")?;
    a.load.load(&mut p)?;
    p.client.sync_dir = a.sync_dir;
    p.client.no_resolve = a.no_resolve;
    p.timestamps = !a.ignore_timestamps;
    p.skip_cleanup = a.skip_cleanup;
    Ok(p)
}

/// The most tasks `--generate` writes: about 170 MB of loadfile, held in memory twice.
pub(crate) const MAX_TASKS: u32 = 10_000;

/// Seed and tasks of `--generate`, checked.
pub(crate) fn generate_options(a: &DbenchArgs) -> Result<(u64, u32)> {
    let seed = a.seed.unwrap_or(generate::DEFAULT_SEED);
    let tasks = a.tasks.unwrap_or(generate::DEFAULT_TASKS);
    if tasks == 0 {
        crate::bail_usage!("--tasks 0 makes a loadfile without work; use --tasks 1 or more");
    }
    if tasks > MAX_TASKS {
        crate::bail_usage!(
            "--tasks {tasks} is out of range; use 1 to {MAX_TASKS} (about 170 MB of loadfile)"
        );
    }
    Ok((seed, tasks))
}

fn write_generated(a: &DbenchArgs, out: &PathBuf) -> Result<()> {
    let (seed, tasks) = generate_options(a)?;
    let text = generate::generate(seed, tasks);
    let lf = Loadfile::parse(&text, "generated")?;
    std::fs::write(out, &text).map_err(|e| {
        crate::error::usage(format!(
            "cannot write {}: {e}; choose a writable path for --generate",
            out.display()
        ))
    })?;
    eprintln!(
        "wrote {}: {} operations per pass, {:.1} MB of ReadX/WriteX per pass (seed {seed}, {tasks} tasks)",
        out.display(),
        lf.ops.len(),
        lf.bytes_per_pass() as f64 / 1e6
    );
    Ok(())
}

pub(crate) fn options_text(p: &DbenchParams) -> String {
    let ignored = !p.timestamps && p.loadfile.has_timestamps;
    let v: Vec<&str> = [
        (p.client.sync_open, "O_SYNC opens (--sync)"),
        (p.client.fsync, "fsync after every write (--fsync)"),
        (p.client.sync_dir, "directory syncs (--sync-dir)"),
        (p.client.no_resolve, "no name resolution (--no-resolve)"),
        (p.run_once, "one pass per client (--run-once)"),
        (ignored, "timestamps ignored"),
    ]
    .into_iter()
    .filter_map(|(on, said)| on.then_some(said))
    .collect();
    if v.is_empty() {
        String::new()
    } else {
        format!("; {}", v.join(", "))
    }
}

/// Run `fslab dbench`.
pub fn run(a: DbenchArgs, db: Option<PathBuf>) -> Result<()> {
    a.mpi.refuse_outside_mpi()?;
    if let Some(out) = &a.generate {
        return write_generated(&a, out);
    }
    let params = params_from(&a)?;
    let dir = std::fs::canonicalize(&a.directory)?;
    let target = Target::new(&dir);
    let mut engine = Dbench::new(params.clone());
    if a.run.dry_run {
        return dry_run(&params, &engine, &target, a.run.repeat, a.run.json);
    }
    // Before anything is created: does it fit?
    engine.prepare(&target)?;
    engine.refuse_leftovers(&dir)?;
    let console = Console {
        json: a.run.json,
        quiet: a.run.quiet,
    };
    console.message(&header(&params, &target));
    let steps = steps(&params, !a.run.quiet);
    let mut outcomes: Vec<RepOutcome> = Vec::new();
    let mut on_rep = |rep: u32, _m: &[Metric], w: &Dbench| {
        if let Some(o) = w.last.clone() {
            print_rep(&a, &params, rep, &o);
            outcomes.push(o);
        }
    };
    let label = label(&params, a.load.loadfile.is_some(), None);
    let store = store_for(&a.run, db)?;
    let mut recorded = Recorded::new(WorkloadKind::Dbench, &params, label, &a.run, store)?;
    let ran = recorded.run(&mut engine, &target, &console, Some(&steps), &mut on_rep)?;
    let ended = (&recorded, &ran, JSON_SCHEMA);
    print_end(ended, (&a, &params, &dir), outcomes.iter().collect(), None)?;
    let names = || engine.top_level_names();
    conclude(&params, &dir, true, names, ran.result.error)
}

/// Where the run is (rank 0's under MPI), `shown` or not: dbench prints its own line a
/// second, so repetitions are counted in plain lines on stderr.
pub(super) fn steps(params: &DbenchParams, shown: bool) -> Progress {
    let steps = Progress::new(shown, "dbench").lines_only();
    match params.run_once {
        true => steps,
        // Warm-up and run are timed, so the first repetition's length is known beforehand.
        false => steps.with_estimate((params.warmup + params.duration).as_secs_f64()),
    }
}

/// A repetition's dbench report (rank 0's under MPI), unless the output is a JSON document.
pub(super) fn print_rep(a: &DbenchArgs, params: &DbenchParams, rep: u32, outcome: &RepOutcome) {
    if !a.run.json {
        if a.run.repeat > 1 {
            crate::outln!("\nrepetition {rep} of {}:", a.run.repeat);
        }
        crate::outln!("\n{}", report(params, outcome));
    }
}

/// The run's label: its clients and time, its ranks under MPI, and the loadfile when one was
/// given.
pub(super) fn label(params: &DbenchParams, loadfile_given: bool, ranks: Option<u32>) -> String {
    format!(
        "dbench {}, {:.0} s{}{}",
        crate::workload::dbench::clients_text(params.clients),
        params.duration.as_secs_f64(),
        ranks.map_or(String::new(), |n| format!(" ×{n} ranks")),
        if loadfile_given {
            format!(", {}", params.loadfile_source)
        } else {
            String::new()
        }
    )
}

/// The first line of a run: clients, target, loadfile, times and options.
pub(super) fn header(p: &DbenchParams, target: &Target) -> String {
    let lf = &p.loadfile;
    format!(
        "fslab dbench: {} in {} ({}), loadfile {} ({} operations, {:.1} MB per pass), warmup {:.0} s, run {:.0} s{}",
        crate::workload::dbench::clients_text(p.clients),
        target.dir.display(),
        target.fs_type.as_deref().unwrap_or("unknown fs"),
        p.loadfile_source,
        lf.ops.len(),
        lf.bytes_per_pass() as f64 / 1e6,
        p.warmup.as_secs_f64(),
        p.duration.as_secs_f64(),
        options_text(p)
    )
}

/// `fslab dbench --dry-run`: what would run, for how long, and whether it fits; creates
/// nothing.
fn dry_run(
    p: &DbenchParams,
    engine: &Dbench,
    target: &Target,
    repeat: u32,
    json: bool,
) -> Result<()> {
    let req = engine.requirements();
    let free = crate::sysinfo::free_space(target.dir())?;
    let fits = req.fits(&free);
    let secs = (p.warmup + p.duration).as_secs_f64() * f64::from(repeat);
    if json {
        return rundoc::print_dry_run(
            JSON_SCHEMA,
            Subject::new(WorkloadKind::Dbench, target.dir(), p, repeat)?,
            Planned::new(req.into(), Some(free), Some(secs)),
            DbenchPart {
                loadfile: LoadfileDoc::of(p),
                outcomes: None,
                per_rank: None,
                per_rank_units: None,
            },
        );
    }
    crate::outln!("{}", header(p, target));
    crate::outln!("dry run: nothing created");
    crate::outln!(
        "  takes        {} ({:.0} s warmup + {:.0} s measured, --repeat {repeat})",
        crate::units::fmt_duration(crate::units::duration_from_secs_saturating(secs)),
        p.warmup.as_secs_f64(),
        p.duration.as_secs_f64()
    );
    crate::outln!(
        "  needs about  {} and {} inodes in {} ({} and {} inodes free{})",
        crate::units::fmt_bytes(req.bytes),
        req.inodes,
        target.dir().display(),
        crate::units::fmt_bytes(free.bytes),
        free.inodes,
        if fits { "" } else { ": does not fit" }
    );
    Ok(())
}

/// The end of the output (rank 0's under MPI, `mpi`): the run document, or the summary over
/// the repetitions, the `--per-rank` table and the tail.
pub(super) fn print_end(
    (recorded, ran, schema): (&Recorded, &EngineRan, &'static str),
    (a, params, dir): (&DbenchArgs, &DbenchParams, &Path),
    outcomes: Vec<&RepOutcome>,
    mpi: Option<&UnderMpi>,
) -> Result<()> {
    let doc = || {
        let part = DbenchPart {
            loadfile: LoadfileDoc::of(params),
            outcomes: Some(outcomes),
            per_rank: mpi.and_then(|m| m.per_rank.clone()),
            per_rank_units: mpi.map(|_| PER_RANK_UNITS),
        };
        Ok((recorded.subject(dir)?, part))
    };
    ran.print(schema, a.run.json, doc, |end| {
        print_repetitions_summary(&ran.sums, ran.result.reps.len());
        UnderMpi::print_table(mpi);
        // On failure the error is the one line; the failed trial is stored all the same.
        end.print_tail(StoredLine::OnSuccess, "", a.run.quiet);
    })
}

/// After several repetitions: the summary of the whole-run figures (phase `total`).
fn print_repetitions_summary(sums: &[MetricSummary], reps: usize) {
    if reps > 1 {
        let totals: Vec<_> = sums
            .iter()
            .filter(|m| m.phase == "total")
            .cloned()
            .collect();
        crate::outln!("\nsummary over {reps} repetitions:");
        crate::outln!("{}", runsummary::render_table(&totals));
    }
}

/// The end of a dbench run: with `--skip-cleanup` after a successful run, say where the
/// client trees were kept (when `tell`: rank 0 under MPI), then return the run's error.
pub(crate) fn conclude(
    params: &DbenchParams,
    dir: &std::path::Path,
    tell: bool,
    names: impl FnOnce() -> Vec<String>,
    error: Option<anyhow::Error>,
) -> Result<()> {
    if params.skip_cleanup && error.is_none() && tell {
        eprintln!(
            "client trees kept (--skip-cleanup): {}",
            names()
                .iter()
                .map(|n| dir.join(n).display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    super::finish::outcome(error)
}
