//! `fslab iozone`: IOzone's flags turned into a plan of (file size, record size) points, each
//! run `--repeat` times (interleaved) and stored as its own cell, printed as IOzone prints it
//! (text table, `-R` blocks, `-b` worksheet, throughput-mode lines) and summarised with
//! fslab's statistics, or as one JSON document.

mod doc;
mod dry_run;
#[cfg(feature = "mpi")]
pub(super) mod mpi;
#[cfg(feature = "mpi")]
mod mpi_report;
mod output;

use super::finish::{run_options, Ended, StoredLine};
use super::rundoc::Subject;
use crate::cli::IozoneArgs;
use crate::metric::Metric;
use crate::report::runsummary;
use crate::runner::adhoc::{self, AdhocCell, CellsResult};
use crate::runner::progress::ProgressObserver;
use crate::runner::progress_text::RateUnit;
use crate::units::{fmt_bytes, fmt_size};
use crate::workload::iozone::sweep::{self, Plan, Point, SizeOptions};
use crate::workload::iozone::{
    self, biff, report, resolve_tests, throughput, Iozone, IozoneParams,
};
use crate::workload::param::{in_words, Words};
use crate::workload::{Target, Workload};
use anyhow::{Context, Result};
use doc::IozonePart;
use output::{get, means, rate_of, summaries_and_warnings, sweep_table, throughput_lines};
use std::path::{Path, PathBuf};

/// The command line's flag for each engine parameter, for its error messages.
const FLAGS: Words = Words::Flags(&[
    ("record_size", "-r"),
    ("file_size", "-s"),
    ("threads", "-t"),
    ("thread_files", "-F"),
    ("tests", "-i"),
    ("phase_pause", "--phase-pause"),
]);

/// Version of the JSON document printed by `--json`.
pub const JSON_SCHEMA: &str = "fslab.iozone.v2";

/// Parsed and checked command line.
/// What the run document says IOzone ran, where (the test file's directory) and how often.
pub(crate) fn subject(s: &Setup, repeat: u32) -> Result<Subject<'_>> {
    Ok(Subject::new(
        crate::workload::WorkloadKind::Iozone,
        s.target.dir(),
        serde_json::to_value(&s.base)?,
        repeat,
    ))
}

pub(crate) struct Setup {
    pub(crate) plan: Plan,
    pub(crate) base: IozoneParams,
    pub(crate) target: Target,
    pub(crate) notes: Vec<String>,
}

fn kib(s: &str, flag: &str) -> Result<u64> {
    let b = iozone::parse_kib_size(s, flag)?;
    if b % 1024 != 0 {
        crate::bail_usage!("{flag} {s}: IOzone file sizes are whole KiB; use a multiple of 1k");
    }
    Ok(b / 1024)
}

fn bytes(s: &str, flag: &str) -> Result<u64> {
    iozone::parse_kib_size(s, flag)
}

pub(crate) fn setup(a: &IozoneArgs) -> Result<Setup> {
    let opts = SizeOptions {
        auto: a.auto,
        sizes_kib: a
            .sizes
            .iter()
            .map(|s| kib(s, "-s"))
            .collect::<Result<_>>()?,
        records: a
            .records
            .iter()
            .map(|s| bytes(s, "-r"))
            .collect::<Result<_>>()?,
        min_file_kib: a.min_file.as_deref().map(|s| kib(s, "-n")).transpose()?,
        max_file_kib: a.max_file.as_deref().map(|s| kib(s, "-g")).transpose()?,
        min_record: a
            .min_record
            .as_deref()
            .map(|s| bytes(s, "-y"))
            .transpose()?,
        max_record: a
            .max_record
            .as_deref()
            .map(|s| bytes(s, "-q"))
            .transpose()?,
        no_crossover: a.no_crossover,
    };
    let requested: Vec<i64> = a
        .tests
        .iter()
        .map(|t| {
            t.trim().parse::<i64>().map_err(|_| {
                crate::error::usage(format!("-i {t}: not a test number; use -i with 0-7"))
            })
        })
        .collect::<Result<_>>()?;
    let (tests, note) = resolve_tests(&requested)?;
    let mut notes: Vec<String> = note.into_iter().collect();
    super::check_run_args(&a.run)?;
    crate::units::check_seconds(a.phase_pause, "--phase-pause").map_err(crate::error::usage)?;
    crate::workload::check_stride(a.stride, "-j")?;
    if a.verify == Some(0) {
        crate::bail_usage!("-V 0: the pattern byte must be 1-255 (or give -V alone for 165)");
    }
    let threads = a.threads.unwrap_or(1);
    let tmode = a.threads.is_some();
    if tmode {
        if a.auto
            || opts.sizes_kib.len() > 1
            || opts.records.len() > 1
            || a.min_file.is_some()
            || a.max_file.is_some()
            || a.min_record.is_some()
            || a.max_record.is_some()
            || a.no_crossover
        {
            crate::bail_usage!(
                "-t (throughput mode) cannot be mixed with auto-mode options (-a, -n, -g, -y, -q, -z, lists of -s/-r); drop one or the other"
            );
        }
        if a.file.is_some() {
            crate::bail_usage!(
                "-t takes one file per worker: use -F FILE… (as IOzone does) instead of -f"
            );
        }
        if tests.contains(&4) {
            notes.push(
                "-i 4 (record rewrite) is not part of IOzone's throughput mode and is skipped"
                    .into(),
            );
        }
    } else if !a.files.is_empty() {
        crate::bail_usage!("-F names one file per throughput worker; add -t N or use -f FILE");
    }
    if !tmode && a.no_stonewall {
        notes.push("-x (no stonewalling) only matters in throughput mode (-t)".into());
    }
    let plan = sweep::plan(&opts)?;
    if a.drop_caches && !crate::sysinfo::is_root() {
        crate::bail_usage!("--drop-caches writes /proc/sys/vm/drop_caches and needs root; run as root or use --fadvise");
    }
    // Where the files go.
    let (target_dir, file, thread_files) = if tmode && !a.files.is_empty() {
        let mut abs = Vec::new();
        for f in &a.files {
            let (dir, name) = split_file(f, "-F")?;
            abs.push(dir.join(name));
        }
        let dir = abs[0].parent().map(Path::to_path_buf).unwrap_or_default();
        (dir, PathBuf::from(iozone::DEFAULT_FILE), abs)
    } else {
        let f = a
            .file
            .clone()
            .unwrap_or_else(|| PathBuf::from(iozone::DEFAULT_FILE));
        let (dir, name) = split_file(&f, "-f")?;
        (dir, name, Vec::new())
    };
    let base = IozoneParams {
        tests,
        direct: a.direct,
        fsync: a.fsync,
        close: a.close,
        osync: a.osync,
        stride: a.stride,
        threads,
        throughput: tmode,
        stonewall: !a.no_stonewall,
        verify: a.verify.is_some(),
        pattern: a.verify.unwrap_or(iozone::DEFAULT_PATTERN),
        keep: a.keep,
        overwrite: a.overwrite,
        file,
        thread_files,
        drop_caches: a.drop_caches,
        fadvise: a.fadvise,
        phase_pause: a.phase_pause,
        space_check: !a.no_space_check,
        huge_buffer: a.huge_buffer,
        ..IozoneParams::default()
    };
    Ok(Setup {
        plan,
        base,
        target: Target::new(target_dir),
        notes,
    })
}

/// A file argument split into its (existing, writable, canonical) directory and its name.
fn split_file(f: &Path, flag: &str) -> Result<(PathBuf, PathBuf)> {
    let name = match f.file_name() {
        Some(n) => PathBuf::from(n),
        None => crate::bail_usage!(
            "{flag} {}: not a file name; give a path to a file",
            f.display()
        ),
    };
    let parent = match f.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    crate::workload::check_writable_dir(&parent, flag)?;
    let dir = std::fs::canonicalize(&parent)
        .with_context(|| format!("cannot resolve {}", parent.display()))?;
    if dir.join(&name).is_dir() {
        crate::bail_usage!(
            "{flag} {}: is a directory; give a file name inside it, e.g. {}/iozone.tmp",
            f.display(),
            f.display()
        );
    }
    Ok((dir, name))
}

pub(crate) fn point_params(base: &IozoneParams, p: Point) -> Result<IozoneParams> {
    let params = IozoneParams {
        file_kib: p.file_kib,
        record: p.record,
        ..base.clone()
    };
    params.validate().map_err(|e| in_words(e, FLAGS))?;
    Ok(params)
}

/// A sweep point's factor levels, sizes as people write them (`1 MiB`, `64 KiB`; they parse
/// back with the usual size suffixes).
pub(crate) fn factors(p: Point) -> Vec<(String, String)> {
    vec![
        (
            "file_size".into(),
            fmt_size(p.file_kib.saturating_mul(1024)),
        ),
        ("record_size".into(), fmt_size(p.record)),
    ]
}

/// A sweep point's label: `file_size=1 MiB record_size=64 KiB`.
pub(crate) fn point_label(p: Point) -> String {
    factors(p)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cache-effects warning, if the data set fits comfortably in RAM.
pub(crate) fn cache_warning(base: &IozoneParams, plan: &Plan) -> Option<String> {
    if base.direct {
        return None;
    }
    let ram = crate::sysinfo::total_ram();
    let largest = plan
        .points
        .iter()
        .map(|p| p.file_kib * 1024)
        .max()
        .unwrap_or(0);
    let data = largest.saturating_mul(base.threads.max(1) as u64);
    if ram == 0 || data >= 2 * ram {
        return None;
    }
    Some(format!(
        "the data set ({}) is smaller than twice the RAM ({}) and O_DIRECT is off: the results include page-cache effects; use -I, files of at least {} in total (-s), or --fadvise/--drop-caches for the reads",
        fmt_bytes(data),
        fmt_bytes(ram),
        fmt_bytes(2 * ram)
    ))
}

pub(crate) fn splash(a: &IozoneArgs, s: &Setup) -> String {
    let b = &s.base;
    let mut out = format!(
        "\tfslab {} iozone (IOzone 3.414 semantics) on {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        s.target.dir.display(),
        s.target.fs_type.as_deref().unwrap_or("unknown fs")
    );
    let mut line = |t: String| {
        out.push('\t');
        out.push_str(&t);
        out.push('\n');
    };
    if a.auto || s.plan.sweep {
        line("Auto Mode".into());
    }
    if a.no_crossover {
        line("Cross over of record size disabled.".into());
    }
    if b.direct {
        line("O_DIRECT feature enabled".into());
    }
    if b.huge_buffer {
        line("Record buffer in a transparent huge page (--huge-buffer)".into());
    }
    if b.close {
        line("Include close in write timing".into());
    }
    if b.fsync {
        line("Include fsync in write timing".into());
    }
    if b.osync {
        line("SYNC Mode. ".into());
    }
    if b.verify {
        line(format!(
            "Verify Mode. Pattern {:02x}{:02x}{:02x}{:02x}",
            b.pattern, b.pattern, b.pattern, b.pattern
        ));
    }
    if b.keep {
        line("Setting no_unlink".into());
    }
    if !b.stonewall && b.throughput {
        line("Stonewall disabled".into());
    }
    if !s.plan.sweep {
        let p = s.plan.points[0];
        line(format!("File size set to {} kB", p.file_kib));
        line(format!("Record Size {} kB", p.record / 1024));
    }
    line(format!("Command line used: {}", super::command_line()));
    line("Output is in kBytes/sec".into());
    if b.throughput {
        let p = s.plan.points[0];
        line(format!("Throughput test with {} threads", b.threads));
        line(format!(
            "Each thread writes a {} kByte file in {} kByte records",
            p.file_kib,
            p.record / 1024
        ));
    }
    out
}

/// Run `fslab iozone`.
pub fn run(a: IozoneArgs, db: Option<PathBuf>) -> Result<()> {
    a.mpi.refuse_outside_mpi()?;
    let s = setup(&a)?;
    let json = a.run.json;
    if a.dry_run {
        return dry_run::dry_run(&s, a.run.repeat, json);
    }
    let tmode = s.base.throughput;
    let mut cells = Vec::new();
    for &p in &s.plan.points {
        let params = point_params(&s.base, p)?;
        cells.push(AdhocCell {
            label: point_label(p),
            factors: factors(p),
            config: serde_json::json!({
                "target": s.target.dir, "fs_type": s.target.fs_type,
                "file_kib": p.file_kib, "record_bytes": p.record,
            }),
            workload: Iozone::new(params),
        });
    }
    // Check the largest point before anything runs (space, O_DIRECT, alignment).
    if let Some(c) = cells
        .iter_mut()
        .max_by_key(|c| c.workload.requirements().bytes)
    {
        c.workload.prepare(&s.target)?;
    }
    // Said once, with the other warnings at the end of the output (and in the JSON).
    let cache_warn = cache_warning(&s.base, &s.plan);
    if !json {
        for n in &s.notes {
            eprintln!("note: {n}");
        }
        crate::out!("{}", splash(&a, &s));
    }
    let mut store = if a.run.no_store {
        None
    } else {
        Some(super::open_store(db)?)
    };
    let records: Vec<u64> = s.plan.points.iter().map(|p| p.record).collect();
    let obs = ProgressObserver::new(!a.quiet && !json, "iozone")
        .with_units(move |_, point| RateUnit::Bytes(records.get(point).copied().unwrap_or(1)))
        .with_points(
            // Time grows with the bytes moved: the file size.
            s.plan.points.iter().map(|p| p.file_kib as f64).collect(),
            s.plan
                .points
                .iter()
                .map(|p| format!("{}k, {}", p.file_kib, iozone::fmt_record(p.record)))
                .collect(),
        );
    let repeat = a.run.repeat;
    let tests = s.base.tests.clone();
    let workers = s.base.threads;
    let points = s.plan.points.clone();
    let mut on_rep = |rep: u32, ci: usize, m: &[Metric], _w: &Iozone| {
        if json {
            return;
        }
        if ci == 0 {
            if repeat > 1 {
                crate::outln!("\n\trepetition {rep} of {repeat}");
            }
            if !tmode {
                crate::out!("\n{}", report::table_header());
            } else {
                crate::outln!();
            }
        }
        let p = points[ci];
        if tmode {
            crate::out!("{}", throughput_lines(m, workers, &tests));
        } else {
            crate::outln!(
                "{}",
                report::table_row(p.file_kib, p.record, &tests, &|t| rate_of(m, t))
            );
        }
    };
    let label = match s.plan.points.as_slice() {
        [p] => point_params(&s.base, *p)?.label(),
        ps => format!(
            "iozone sweep of {} points{}",
            ps.len(),
            s.base.flags_label()
        ),
    };
    let mut options = run_options(
        "iozone",
        serde_json::to_value(&s.base)?,
        label,
        &a.run,
        store.as_mut(),
        None,
    );
    options.steps = Some(&obs);
    let result = adhoc::run_cells(options, &mut cells, &s.target, &obs, &mut on_rep)?;
    let (sums, warnings) = summaries_and_warnings(
        &s.plan.points,
        &result.reps,
        a.run.min_phase,
        cache_warn.as_ref(),
    );
    let end = result.ending(JSON_SCHEMA, &warnings);
    let any = result.any_done();
    if json {
        end.print_json(
            subject(&s, repeat)?,
            (None, None),
            IozonePart {
                mode: if tmode { "throughput" } else { "single" },
                units: doc::Units::new(false),
                points: doc::points(&s.plan.points, &result.reps, &sums),
                skipped_points: s.plan.skipped.iter().map(Into::into).collect(),
                notes: &s.notes,
                per_rank: None,
            },
        )?;
    } else {
        if !tmode && any {
            crate::outln!("\niozone test complete.");
        }
        if any && repeat > 1 {
            crate::outln!();
            if s.plan.points.len() == 1 {
                crate::outln!(
                    "{}",
                    runsummary::render_table(&crate::app::finish::engine_only(&sums[0]))
                );
            } else {
                crate::outln!("{}", sweep_table(&s.plan.points, &sums));
            }
        }
        if a.excel && any {
            crate::out!("{}", excel_text(&s, &result.reps));
        }
        end.print_tail(StoredLine::Always, "", a.quiet);
    }
    write_biff(a.biff.as_deref(), &s, &result)?;
    match result.error {
        Some(e) => Err(crate::error::runtime(e)),
        None => Ok(()),
    }
}

/// `-b FILE.xls`: IOzone's `-R` blocks as a worksheet, when something was measured.
pub(super) fn write_biff(path: Option<&Path>, s: &Setup, result: &CellsResult) -> Result<()> {
    if let (Some(path), true) = (path, result.any_done()) {
        let blocks = blocks(s, &result.reps);
        std::fs::write(path, biff::workbook(&super::command_line(), &blocks))
            .with_context(|| format!("cannot write -b {}", path.display()))?;
    }
    Ok(())
}

/// Mean of `phase.name` over the repetitions of the single throughput-mode cell (the
/// `-R`/`-b` reports say "means of N repetitions").
fn mean_over_reps(reps: &[Vec<Vec<Metric>>], phase: &str, name: &str) -> f64 {
    let runs = reps.first().map(Vec::as_slice).unwrap_or_default();
    if runs.is_empty() {
        return 0.0;
    }
    runs.iter().map(|m| get(m, phase, name)).sum::<f64>() / runs.len() as f64
}

pub(crate) fn blocks(s: &Setup, reps: &[Vec<Vec<Metric>>]) -> Vec<report::ExcelBlock> {
    if s.base.throughput {
        // Throughput mode: one block per phase, the children's throughput as IOzone's -R.
        return throughput::phases(&s.base.tests)
            .into_iter()
            .map(|t| report::ExcelBlock {
                title: throughput::titles(t).0,
                records_kib: vec![s.plan.points[0].record / 1024],
                rows: vec![(
                    s.base.threads as u64,
                    vec![mean_over_reps(reps, t.phase(), "children_sum") as u64],
                )],
            })
            .collect();
    }
    report::excel_blocks(
        &s.base.tests,
        &s.plan.report_records,
        &s.plan.points,
        &s.plan.skipped,
        &means(&s.plan.points, reps),
    )
}

pub(crate) fn excel_text(s: &Setup, reps: &[Vec<Vec<Metric>>]) -> String {
    let mut out = String::new();
    let n = reps.iter().map(|r| r.len()).max().unwrap_or(0);
    if n > 1 {
        out.push_str(&format!(
            "\nfslab: the values below are means of {n} repetitions\n"
        ));
    }
    if s.base.throughput {
        let rows: Vec<(&str, f64)> = throughput::phases(&s.base.tests)
            .into_iter()
            .map(|t| {
                let v = mean_over_reps(reps, t.phase(), "children_sum");
                (throughput::titles(t).0, v)
            })
            .collect();
        out.push_str(&report::throughput_excel(s.plan.points[0].record, &rows));
        return out;
    }
    out.push_str(&report::excel_text(&blocks(s, reps)));
    out
}
