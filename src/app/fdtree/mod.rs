//! `fslab fdtree`: argument checks, dry run, repetitions, and the three output formats; its
//! MPI variant in [`mpi`].

mod doc;
#[cfg(feature = "mpi")]
pub(super) mod mpi;

use super::finish::{engine_only, outcome, store_for, EngineRan, Recorded, StoredLine};
use super::rundoc::{self, Planned, Subject, UnderMpi};
use crate::cli::{BackendArg, FdtreeArgs, OutputFormat};
use crate::report::runsummary::{self, MetricSummary};
use crate::runner::phase_bar::rate_unit;
use crate::runner::progress::Progress;
use crate::units::fmt_bytes;
use crate::workload::fdtree::report::fdtree_report;
use crate::workload::fdtree::{record, Backend, Fdtree, FdtreeParams, Mode};
use crate::workload::param::{in_words, Words};
use crate::workload::{Target, Workload, WorkloadKind};
use anyhow::Result;
use doc::{CountsDoc, FdtreePart, PER_RANK_UNITS};
use std::path::{Path, PathBuf};

/// Version of the JSON document printed by `--format json`.
pub const JSON_SCHEMA: &str = "fslab.fdtree.v2";

/// Engine parameters from the command line, validated.
pub(crate) fn params_from(a: &FdtreeArgs) -> Result<FdtreeParams> {
    let mode = match (a.create_only, a.remove_only) {
        (true, false) => Mode::CreateOnly,
        (false, true) => Mode::RemoveOnly,
        // fdtree: both or neither means the full cycle.
        _ => Mode::Full,
    };
    if mode != Mode::Full && a.run.repeat > 1 {
        crate::bail_usage!(
            "--repeat {} needs the full cycle; drop -C/-R or use --repeat 1",
            a.run.repeat
        );
    }
    if !a.roots.is_empty() && mode != Mode::RemoveOnly {
        crate::bail_usage!("--root only applies to -R (remove only); drop --root or add -R");
    }
    super::check_run_args(&a.run)?;
    let backend = match a.backend {
        BackendArg::Fs => Backend::Fs,
        BackendArg::Null => Backend::Null,
    };
    if backend == Backend::Null && mode != Mode::Full {
        crate::bail_usage!("--backend null runs the full cycle only; drop -C/-R");
    }
    // The shape goes through the same conversion and checks as a study file's workload.
    Ok(FdtreeParams {
        mode,
        backend,
        keep: a.keep,
        roots: a.roots.clone(),
        ..a.shape
            .to_params()
            .map_err(|e| in_words(e, Words::of_args::<FdtreeArgs>("fslab fdtree")))?
    })
}

/// Find the trees a create-only run of fslab left under `dir` for this host: directories
/// named like fdtree's roots that carry fslab's record (see `workload::fdtree::record`).
fn find_roots(dir: &Path, threads: usize) -> Result<Vec<String>> {
    let prefix = format!("LEVEL0.{}.", crate::sysinfo::short_hostname());
    let candidates: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| crate::error::usage(format!("cannot read {}: {e}; check -o", dir.display())))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    let (mut found, unrecorded): (Vec<String>, Vec<String>) = candidates
        .into_iter()
        .partition(|n| record::verify(dir, n).is_ok());
    found.sort();
    if found.len() == threads {
        return Ok(found);
    }
    if found.is_empty() {
        if !unrecorded.is_empty() {
            crate::bail_usage!(
                "-R found no tree that fslab recorded in {} ({} has no fslab record, so fslab will not remove it); create one with -C first",
                dir.display(),
                unrecorded.join(", ")
            );
        }
        crate::bail_usage!(
            "-R found no tree named {prefix}* in {}; create one with -C first or name it with --root",
            dir.display()
        );
    }
    crate::bail_usage!(
        "-R found {} trees in {} ({}) but --threads is {threads}; name the ones to remove with --root",
        found.len(),
        dir.display(),
        found.join(", ")
    )
}

/// Check that every tree `-R` is about to remove is one fslab made. Without shape flags
/// (`given` empty) the shape recorded at `-C` is taken; with them it must match.
fn verify_roots(dir: &Path, params: &mut FdtreeParams, given: &[&str]) -> Result<()> {
    let mut adopted: Option<record::TreeRecord> = None;
    for root in params.roots.clone() {
        let rec = record::verify(dir, &root)?;
        let asked = params.flags();
        if rec.flags() == asked {
            continue;
        }
        if given.is_empty() && adopted.is_none() {
            params.dirs = rec.dirs;
            params.files = rec.files;
            params.size_blocks = rec.size_blocks;
            params.levels = rec.levels;
            adopted = Some(rec);
            continue;
        }
        let fix = if given.is_empty() {
            "remove them one at a time with --root".to_string()
        } else {
            format!(
                "run `fslab fdtree -R -o {} {}`, or leave out {} to use the recorded shape",
                dir.display(),
                rec.flags(),
                given.join(", ")
            )
        };
        crate::bail_usage!(
            "{} was made with {}, not {asked}; {fix}",
            dir.join(&root).display(),
            rec.flags()
        );
    }
    if let Some(rec) = adopted {
        eprintln!(
            "note: removing with the shape recorded at -C: {}",
            rec.flags()
        );
    }
    Ok(())
}

/// Run `fslab fdtree`.
pub fn run(a: FdtreeArgs, db: Option<PathBuf>) -> Result<()> {
    a.mpi.refuse_outside_mpi()?;
    let mut params = params_from(&a)?;
    // `--json` and `--format json` are one (`RunArgs::normalize`).
    let format = a.run.format;
    let start_dir = start_dir(&a, &mut params)?;
    let per_tree = params.counts()?;
    let total = params.total_counts()?;
    let target = Target::new(&start_dir);
    let mut engine = Fdtree::new(params.clone()).with_records(params.backend == Backend::Fs);

    if a.run.dry_run {
        return dry_run(&params, &engine, &target, format, a.run.repeat);
    }
    if params.backend == Backend::Fs {
        // Before anything is created: does it fit?
        engine.prepare(&target)?;
    }

    let obs = Progress::new(!a.run.quiet && format != OutputFormat::Json, "fdtree")
        .with_units(|phase, _| rate_unit(WorkloadKind::Fdtree, phase, 1));
    let fdtree_fmt = format == OutputFormat::Fdtree;
    let mut on_rep = |_rep: u32, _m: &[crate::metric::Metric], w: &Fdtree| {
        if let (true, Some(out)) = (fdtree_fmt, &w.last) {
            crate::out!("{}", fdtree_report(&params, total, &a.start_dir, out));
        }
    };
    let store = store_for(&a.run, db)?;
    let mut recorded = Recorded::new(WorkloadKind::Fdtree, &params, params.label(), &a.run, store)?;
    let ran = recorded.run(&mut engine, &target, &obs, Some(&obs), &mut on_rep)?;
    let header = header(&params, &start_dir, target.fs_type.as_deref())?;
    let table = (header, engine_only(&ran.sums));
    let counts = CountsDoc::new(Some(per_tree), total);
    let ended = (&recorded, &ran, JSON_SCHEMA);
    print_end(ended, (&a, &params, &start_dir), counts, table, None)?;
    if params.mode == Mode::CreateOnly && ran.result.error.is_none() {
        say_tree_kept(&engine, &start_dir, &a.start_dir, &params);
    }
    outcome(ran.result.error)
}

/// The end of the output (rank 0's under MPI, `mpi`): the run document, or under
/// `--format table` (with repetitions) the header and summary `table` gives; the `--per-rank`
/// table and the tail.
pub(super) fn print_end(
    (recorded, ran, schema): (&Recorded, &EngineRan, &'static str),
    (a, params, dir): (&FdtreeArgs, &FdtreeParams, &Path),
    counts: CountsDoc,
    (head, shown): (String, Vec<MetricSummary>),
    mpi: Option<&UnderMpi>,
) -> Result<()> {
    let format = a.run.format;
    let doc = || {
        let part = FdtreePart {
            counts,
            sync_timed: params.sync,
            per_rank: mpi.and_then(|m| m.per_rank.clone()),
            per_rank_units: mpi.map(|_| PER_RANK_UNITS),
        };
        Ok((recorded.subject(dir)?, part))
    };
    ran.print(schema, format == OutputFormat::Json, doc, |end| {
        if format == OutputFormat::Table && !ran.result.reps.is_empty() {
            crate::outln!("{head}");
            crate::outln!("{}", runsummary::render_table(&shown));
        }
        UnderMpi::print_table(mpi);
        let all = mpi.map_or("", |_| " --all (all metrics)");
        end.print_tail(StoredLine::Always, all, a.run.quiet);
    })
}

/// The directory `-o` names, checked and made absolute; for `-R`, the trees to remove
/// (found, counted against `--threads`, and each verified as one fslab made).
fn start_dir(a: &FdtreeArgs, params: &mut FdtreeParams) -> Result<PathBuf> {
    let start_dir = if params.backend == Backend::Fs {
        crate::workload::check_writable_dir(&a.start_dir, "-o")?;
        std::fs::canonicalize(&a.start_dir).map_err(|e| {
            crate::error::usage(format!("cannot use -o {}: {e}", a.start_dir.display()))
        })?
    } else {
        a.start_dir.clone()
    };
    if params.mode == Mode::RemoveOnly {
        if params.roots.is_empty() {
            params.roots = find_roots(&start_dir, params.threads)?;
        }
        if params.roots.len() != params.threads {
            crate::bail_usage!(
                "-R with --threads {} needs {} --root names, got {}",
                params.threads,
                params.threads,
                params.roots.len()
            );
        }
        verify_roots(&start_dir, params, &a.shape_given)?;
    }
    Ok(start_dir)
}

/// After `-C`: where the trees are and the command that removes them.
fn say_tree_kept(engine: &Fdtree, start_dir: &Path, given: &Path, params: &FdtreeParams) {
    eprintln!(
        "tree kept: {} (remove it with: fslab fdtree -R -o {} {})",
        engine
            .root_names()
            .iter()
            .map(|n| start_dir.join(n).display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        given.display(),
        params.flags()
    );
}

fn header(p: &FdtreeParams, dir: &Path, fs: Option<&str>) -> Result<String> {
    let t = p.total_counts()?;
    let sync = if p.sync {
        "syncfs timed at the end of every phase (--sync)"
    } else {
        "syncfs not timed (the default, like fdtree; --sync counts writeback)"
    };
    let backend = match p.backend {
        Backend::Fs => format!("{} ({})", dir.display(), fs.unwrap_or("unknown fs")),
        Backend::Null => "null backend (no system calls)".to_string(),
    };
    Ok(format!(
        "fdtree {} on {backend}: {} dirs, {} files, {} per repetition; {} thread(s); {sync}",
        p.flags(),
        t.dirs,
        t.files,
        fmt_bytes(t.bytes),
        p.threads
    ))
}

fn dry_run(
    p: &FdtreeParams,
    engine: &Fdtree,
    target: &Target,
    format: OutputFormat,
    repeat: u32,
) -> Result<()> {
    let per = p.counts()?;
    let t = p.total_counts()?;
    let req = engine.requirements();
    let free = (p.backend == Backend::Fs)
        .then(|| crate::sysinfo::free_space(target.dir()))
        .transpose()?;
    if format == OutputFormat::Json {
        return rundoc::print_dry_run(
            JSON_SCHEMA,
            Subject::new(WorkloadKind::Fdtree, target.dir(), p, repeat)?,
            Planned::new(req.into(), free, None),
            FdtreePart {
                counts: CountsDoc::new(Some(per), t),
                sync_timed: p.sync,
                per_rank: None,
                per_rank_units: None,
            },
        );
    }
    crate::outln!(
        "fdtree {} ({} thread(s)), dry run: nothing created",
        p.flags(),
        p.threads
    );
    crate::outln!("  directories: {} ({} per tree)", t.dirs, per.dirs);
    crate::outln!(
        "  files:       {} ({} per tree, {} KiB each)",
        t.files,
        per.files,
        p.size_blocks * 4
    );
    crate::outln!(
        "  file data:   {} ({} KiB)",
        fmt_bytes(t.bytes),
        t.bytes / 1024
    );
    crate::outln!(
        "  needs about  {} and {} inodes",
        fmt_bytes(req.bytes),
        req.inodes
    );
    if let Some(f) = free {
        let inodes = if f.inodes_total == 0 {
            "no fixed inode limit".to_string()
        } else {
            format!("{} inodes", f.inodes)
        };
        crate::outln!(
            "  {} has   {} and {inodes} free: {}",
            target.dir().display(),
            fmt_bytes(f.bytes),
            if req.fits(&f) { "fits" } else { "DOES NOT FIT" }
        );
    }
    Ok(())
}
