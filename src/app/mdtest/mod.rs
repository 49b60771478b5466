//! `fslab mdtest`: mdtest's flags and output (the engine in `workload::mdtest`), with what
//! every fslab engine command adds — repetitions (`-i N` or `--repeat N`, one mdtest iteration
//! each), the store, progress, a JSON document, a dry run; its MPI variant in [`mpi`] (with the `mpi` feature).

#[cfg(feature = "mpi")]
pub(super) mod mpi;

use super::finish::{engine_only, outcome, store_for, EngineRan, Recorded, StoredLine};
use super::rundoc::{self, Planned, Subject, UnderMpi};
use crate::cli::{BackendArg, MdtestArgs, MdtestOwnArgs};
use crate::report::runsummary;
use crate::runner::progress::Progress;
use crate::runner::progress_text::RateUnit;
use crate::workload::mdtest::{self, report, Backend, Invocation, Mdtest, Options};
use crate::workload::param::in_words;
use crate::workload::{Target, Workload, WorkloadKind};
use anyhow::Result;
use clap::FromArgMatches;
use std::path::{Path, PathBuf};

/// Version of the JSON document printed by `--format json`.
pub const JSON_SCHEMA: &str = "fslab.mdtest.v2";

/// The command line, read: fslab's options, mdtest's invocation, the repetitions.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub own: MdtestOwnArgs,
    pub inv: Invocation,
    /// mdtest's arguments as given, for its "Command line used" line.
    pub mdtest_args: Vec<String>,
    /// `--db` given among mdtest's flags (clap takes it before them).
    pub db: Option<PathBuf>,
}

/// Read `fslab mdtest`'s command line. Errors are one line, naming the flag.
pub(crate) fn parse(a: &MdtestArgs) -> Result<Parsed> {
    let (own_args, mdtest_args) = MdtestOwnArgs::split(&a.args);
    let matches = MdtestOwnArgs::parser()
        .try_get_matches_from(&own_args)
        .map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid option");
            crate::error::usage(format!(
                "{}; see `fslab mdtest --help`",
                first.trim_start_matches("error: ")
            ))
        })?;
    let mut own = MdtestOwnArgs::from_arg_matches(&matches)
        .map_err(|e| crate::error::usage(e.to_string()))?;
    super::check_run_args(&own.run)?;
    let mut inv =
        mdtest::parse(&mdtest_args).map_err(|e| crate::error::usage(e.render(mdtest::words())))?;
    inv.params
        .validate()
        .map_err(|e| crate::error::usage(in_words(e, mdtest::words()).to_string()))?;
    // mdtest's -i and fslab's --repeat are one thing: repetitions (iterations) of the run.
    let repeat_given =
        matches.value_source("repeat") == Some(clap::parser::ValueSource::CommandLine);
    let iterations = inv.params.iterations;
    match (repeat_given, iterations) {
        (true, 1) => inv.params.iterations = own.run.repeat,
        (true, i) if i != own.run.repeat => crate::bail_usage!(
            "-i {i} and --repeat {} say two numbers of repetitions; give one of them",
            own.run.repeat
        ),
        _ => own.run.repeat = iterations,
    }
    own.run.normalize();
    Ok(Parsed {
        own,
        inv,
        mdtest_args,
        db: matches.get_one::<PathBuf>("db").cloned(),
    })
}

/// The engine's options from fslab's.
pub(crate) fn options(own: &MdtestOwnArgs) -> Options {
    Options {
        backend: match own.backend {
            BackendArg::Fs => Backend::Fs,
            BackendArg::Null => Backend::Null,
        },
        ..Options::default()
    }
}

/// The file system the test directories go on (`-d` may not exist yet).
pub(crate) fn fs_of(dir: &Path) -> PathBuf {
    if dir.exists() {
        return dir.to_path_buf();
    }
    dir.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The progress bars count directories, files or trees, by phase, as the engine declares.
pub(crate) fn rate_unit(phase: &str, _: usize) -> RateUnit {
    crate::runner::phase_bar::rate_unit(WorkloadKind::Mdtest, phase, 1)
}

/// Run `fslab mdtest`.
pub fn run(a: MdtestArgs, db: Option<PathBuf>) -> Result<()> {
    let parsed = parse(&a)?;
    let (own, inv) = (&parsed.own, &parsed.inv);
    let db = parsed.db.clone().or(db);
    let p = &inv.params;
    let lay = p.validate().map_err(|e| in_words(e, mdtest::words()))?;
    let opts = options(own);
    let json = own.run.json;
    let target = Target::new(&inv.dir);
    let mut engine = Mdtest::new(p.clone(), opts).map_err(|e| in_words(e, mdtest::words()))?;
    if own.run.dry_run {
        return dry_run(inv, &engine, json);
    }
    let started = chrono::Local::now();
    if inv.dirs.len() > 1 {
        crate::bail_usage!(
            "-d {}: {} directories for 1 rank; mdtest gives rank r the directory r mod {} and needs at least as many ranks as directories: run under mpiexec -n {} or more (fslab built with mpi), or give one directory",
            inv.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join("@"),
            inv.dirs.len(),
            inv.dirs.len(),
            inv.dirs.len()
        );
    }
    if let Some(x) = &inv.status_file {
        if let Some(note) = mdtest::status::check(x, p, &inv.dir)? {
            eprintln!("fslab: note: {note}");
        }
    }
    // Opens -d (made if missing) and checks the space before anything is timed.
    engine.prepare(&target)?;
    let obs = Progress::new(!own.run.quiet && !json, "mdtest").with_units(rate_unit);
    let mut status_error = None;
    let mut each = on_iteration::<mdtest::Solo>(inv, Some(1), json, &mut status_error);
    let store = store_for(&own.run, db)?;
    let mut recorded = Recorded::new(WorkloadKind::Mdtest, p, p.flags(), &own.run, store)?;
    let ran = recorded.run(&mut engine, &target, &obs, Some(&obs), &mut each)?;
    drop(each);
    let seed = engine.seed();
    for note in engine.finish() {
        eprintln!("fslab: note: {note}");
    }
    print_end(&parsed, &engine, (&lay, started, seed), &ran, None)?;
    if let Some(e) = status_error {
        return Err(e);
    }
    outcome(ran.result.error)
}

/// The ending of a run that started at `started` (rank 0's under MPI, `mpi`): the JSON
/// document, or mdtest's preamble, tables and closing line (and, in one process, the summary
/// of several repetitions), then the tail.
pub(crate) fn print_end<T: mdtest::Team>(
    parsed: &Parsed,
    engine: &Mdtest<T>,
    (lay, started, seed): (
        &mdtest::Layout,
        chrono::DateTime<chrono::Local>,
        Option<u32>,
    ),
    ran: &EngineRan,
    mpi: Option<&UnderMpi>,
) -> Result<()> {
    let (own, inv) = (&parsed.own, &parsed.inv);
    let p = &inv.params;
    let (ranks, nodes) = mpi.map_or((1, 1), |m| (m.ranks, m.hosts));
    let doc = || {
        let part = MdtestPart {
            items_per_rank: lay.items,
            seed,
            iterations: Some(engine.iterations()),
            ..MdtestPart::default()
        };
        Ok((subject(inv, own.run.repeat)?.under(mpi), part))
    };
    ran.print(JSON_SCHEMA, own.run.json, doc, |end| {
        if !ran.result.reps.is_empty() {
            let notes = p
                .notes()
                .iter()
                .map(|n| n.render(mdtest::words()))
                .collect();
            let fs = fs_of(&inv.dir);
            let fs_lines = report::fs_lines(&fs);
            crate::out!(
                "{}",
                report::preamble(&report::Preamble {
                    started: report::timestamp(started),
                    ranks,
                    nodes,
                    command: report::command_line("fslab mdtest", &parsed.mdtest_args),
                    warnings: notes,
                    // In one process the lines name -d itself.
                    fs: match mpi {
                        Some(_) => fs_lines,
                        None => fs_lines.map(|s| s.replacen(
                            &fs.display().to_string(),
                            &inv.dir.display().to_string(),
                            1
                        )),
                    },
                    seed,
                    tasks: report::tasks_line(p, lay, ranks),
                })
            );
            crate::out!("{}", report::tables(engine.iterations(), p, inv.print));
            crate::out!("{}", report::finished(chrono::Local::now()));
            if own.run.repeat > 1 && mpi.is_none() {
                crate::outln!("{}", runsummary::render_table(&engine_only(&ran.sums)));
            }
        }
        end.print_tail(StoredLine::Always, "", own.run.quiet);
    })
}

/// What runs after each iteration (the root rank's under MPI, `ranks` there; `None` on the
/// others): `-v`'s phase lines (stdout as mdtest; stderr beside a JSON document) and, after a
/// stonewalled creation, `-x`'s status file of the files each rank made (mdtest writes it
/// each iteration); its first error is kept in `error`.
pub(crate) fn on_iteration<'a, T: mdtest::Team>(
    inv: &'a Invocation,
    ranks: Option<u32>,
    json: bool,
    error: &'a mut Option<anyhow::Error>,
) -> impl FnMut(u32, &[crate::metric::Metric], &Mdtest<T>) + 'a {
    let p = &inv.params;
    let status_to = inv
        .status_file
        .as_ref()
        .filter(|_| p.stonewall > 0 && p.steps().create);
    move |_, _, e| {
        let (Some(ranks), Some(it)) = (ranks, e.iterations().last()) else {
            return;
        };
        if let Some(x) = status_to {
            if let Err(err) = mdtest::status::write(x, it, ranks) {
                error.get_or_insert(err);
            }
        }
        if inv.verbose > 0 {
            let text = report::verbose(it, inv.verbose, &inv.dir);
            if json {
                eprint!("{text}");
            } else {
                crate::out!("{text}");
            }
        }
    }
}

/// The keys only mdtest's document has.
#[derive(Debug, Default, serde::Serialize)]
pub(crate) struct MdtestPart<'a> {
    /// Items (files or directories) each rank creates per phase.
    pub items_per_rank: u64,
    /// The seed of `-R`'s random stat order, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
    /// mdtest's figures of every iteration (phase times and rates); absent in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<&'a [mdtest::Iteration]>,
    /// Directories of the tree, in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_dirs: Option<u64>,
}

/// What the run document says mdtest ran, where (`-d`, which may not exist yet) and how
/// often.
pub(crate) fn subject(inv: &Invocation, repeat: u32) -> Result<Subject<'_>> {
    let mut s = Subject::new(WorkloadKind::Mdtest, &inv.dir, &inv.params, repeat)?;
    s.fs_type = crate::sysinfo::fs_type_of(&fs_of(&inv.dir));
    Ok(s)
}

fn dry_run(inv: &Invocation, engine: &Mdtest, json: bool) -> Result<()> {
    let p = &inv.params;
    let lay = p.validate()?;
    let req = engine.requirements();
    let free = crate::sysinfo::free_space(&fs_of(&inv.dir)).ok();
    if json {
        return rundoc::print_dry_run(
            JSON_SCHEMA,
            subject(inv, p.iterations)?,
            Planned::new(req.into(), free, None),
            MdtestPart {
                items_per_rank: lay.items,
                tree_dirs: Some(lay.dirs),
                ..MdtestPart::default()
            },
        );
    }
    crate::outln!(
        "{} in {}, dry run: nothing created",
        p.flags(),
        inv.dir.display()
    );
    crate::outln!("  {}", report::tasks_line(p, &lay, 1));
    crate::outln!(
        "  tree: depth {}, branching {}, {} directories, {} items in each",
        lay.depth,
        lay.branching,
        lay.dirs,
        lay.items_per_dir
    );
    crate::outln!(
        "  iterations: {} (one repetition each, in test-dir.<i>-0)",
        p.iterations
    );
    crate::outln!(
        "  needs about {} and {} inodes{}",
        crate::units::fmt_bytes(req.bytes),
        req.inodes,
        free.map_or(String::new(), |f| format!(
            "; {} free there: {}",
            crate::units::fmt_bytes(f.bytes),
            if req.fits(&f) { "fits" } else { "DOES NOT FIT" }
        ))
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments of command line `line`, split at white space.
    fn args(line: &str) -> MdtestArgs {
        MdtestArgs {
            args: line.split_whitespace().map(String::from).collect(),
        }
    }

    #[test]
    fn fslab_options_are_taken_from_among_mdtests() {
        let (own, md) = MdtestOwnArgs::split(
            &args("-n 100 --repeat 3 -u --format=json -q --random-seed 7 -d x").args,
        );
        assert_eq!(own, ["--repeat", "3", "--format=json", "-q"]);
        assert_eq!(md, ["-n", "100", "-u", "--random-seed", "7", "-d", "x"]);
        let p = parse(&args("-n 100 --repeat 3 -d x --json")).unwrap();
        assert_eq!((p.own.run.repeat, p.inv.params.iterations), (3, 3));
        assert!(p.own.run.json);
        assert_eq!(p.inv.dir, PathBuf::from("x"));
    }

    /// `--db` among mdtest's flags is fslab's (tests/engine_shape.rs: every common option).
    #[test]
    fn db_is_fslabs_among_mdtests_flags() {
        let p = parse(&args("-n 10 --db a.db -d x")).unwrap();
        assert_eq!(p.db, Some(PathBuf::from("a.db")));
        let p = parse(&args("--db=b.db -n 10")).unwrap();
        assert_eq!(p.db, Some(PathBuf::from("b.db")));
    }

    #[test]
    fn iterations_and_repeat_are_one_number() {
        let p = parse(&args("-n 10 -i 4")).unwrap();
        assert_eq!((p.own.run.repeat, p.inv.params.iterations), (4, 4));
        let e = parse(&args("-n 10 -i 4 --repeat 2")).unwrap_err();
        assert!(e.to_string().contains("give one of them"), "{e}");
        assert!(parse(&args("-n 10 -i 2 --repeat 2")).is_ok());
    }

    #[test]
    fn bad_flags_are_one_line_naming_the_flag() {
        let refused = |line| parse(&args(line)).unwrap_err().to_string();
        for (line, start) in [
            ("-n ten", "-n ten"),
            ("-n 1 -S", "-S: mdtest option not supported"),
            ("-n 1 --posix.odirect -w 100", "-w 100 with --posix.odirect"),
        ] {
            let e = refused(line);
            assert!(e.starts_with(start), "{line}: {e}");
        }
        let e = refused("-n 10 --repeat x");
        assert!(
            e.contains("--repeat") && e.contains("fslab mdtest --help"),
            "{e}"
        );
    }
}
