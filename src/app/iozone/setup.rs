//! `fslab iozone`'s flags onto the engine's parameters: IOzone's own (the study's keys,
//! [`IozoneSpec`](crate::workload::iozone::IozoneSpec)) and the command's (the sweep, the
//! files, verification, cache actions), checked together into a [`Setup`]: the plan of (file
//! size, record size) points, the parameters they share, and where the files go.

use crate::cli::IozoneArgs;
use crate::units::{fmt_bytes, fmt_size};
use crate::workload::iozone::sweep::{self, Plan, Point, SizeOptions};
use crate::workload::iozone::{self, resolve_tests, IozoneParams};
use crate::workload::param::in_words;
use crate::workload::param::Words;
use crate::workload::Target;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Parsed and checked command line.
pub(crate) struct Setup {
    /// The (file size, record size) points, in IOzone's order.
    pub(crate) plan: Plan,
    /// The parameters every point shares (sizes at their defaults).
    pub(crate) base: IozoneParams,
    /// The test file's directory.
    pub(crate) target: Target,
    /// Remarks said once before the run (`-i 0 added`, …).
    pub(crate) notes: Vec<String>,
}

/// The sweep's options: `-s` and `-r` (IOzone's, in the spec) with the auto-mode flags.
fn size_options(a: &IozoneArgs) -> Result<SizeOptions> {
    let (sizes_kib, records) = a.params.sizes(flags())?;
    // An optional bound, read by `parse` (file sizes or record sizes) under its flag.
    let bound = |v: &Option<String>, parse: fn(&str, &str) -> Result<u64>, flag: &str| {
        v.as_deref().map(|s| parse(s, flag)).transpose()
    };
    Ok(SizeOptions {
        auto: a.auto,
        sizes_kib,
        records,
        min_file_kib: bound(&a.min_file, iozone::parse_file_kib, "-n")?,
        max_file_kib: bound(&a.max_file, iozone::parse_file_kib, "-g")?,
        min_record: bound(&a.min_record, iozone::parse_kib_size, "-y")?,
        max_record: bound(&a.max_record, iozone::parse_kib_size, "-q")?,
        no_crossover: a.no_crossover,
    })
}

/// Check the command line and plan the run.
pub(crate) fn setup(a: &IozoneArgs) -> Result<Setup> {
    let opts = size_options(a)?;
    let (tests, note) = resolve_tests(&a.params.tests)?;
    let mut notes: Vec<String> = note.into_iter().collect();
    super::super::check_run_args(&a.run)?;
    crate::units::check_seconds(a.phase_pause, "--phase-pause").map_err(crate::error::usage)?;
    let base = a.params.base(tests, flags())?;
    if a.verify == Some(0) {
        crate::bail_usage!("-V 0: the pattern byte must be 1-255 (or give -V alone for 165)");
    }
    let tmode = a.params.threads.is_some();
    if tmode {
        let bounds = [&a.min_file, &a.max_file, &a.min_record, &a.max_record];
        let lists = opts.sizes_kib.len() > 1 || opts.records.len() > 1;
        if a.auto || a.no_crossover || lists || bounds.iter().any(|b| b.is_some()) {
            crate::bail_usage!(
                "-t (throughput mode) cannot be mixed with auto-mode options (-a, -n, -g, -y, -q, -z, lists of -s/-r); drop one or the other"
            );
        }
        if a.file.is_some() {
            crate::bail_usage!(
                "-t takes one file per worker: use -F FILE… (as IOzone does) instead of -f"
            );
        }
        if base.tests.contains(&4) {
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
    let (target_dir, file, thread_files) = files(a, tmode)?;
    let base = IozoneParams {
        threads: a.params.threads.unwrap_or(1),
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
        ..base
    };
    Ok(Setup {
        plan,
        base,
        target: Target::new(target_dir),
        notes,
    })
}

/// Where the files go: the directory, the file (`-f`, or IOzone's default name) and, in
/// throughput mode with `-F`, one file per worker.
fn files(a: &IozoneArgs, tmode: bool) -> Result<(PathBuf, PathBuf, Vec<PathBuf>)> {
    Ok(if tmode && !a.files.is_empty() {
        let mut abs = Vec::new();
        for f in &a.files {
            let (dir, name) = split_file(f, "-F")?;
            abs.push(dir.join(name));
        }
        let dir = abs[0].parent().map(Path::to_path_buf).unwrap_or_default();
        (dir, PathBuf::from(iozone::DEFAULT_FILE), abs)
    } else {
        let f = a.file.as_deref().unwrap_or(Path::new(iozone::DEFAULT_FILE));
        let (dir, name) = split_file(f, "-f")?;
        (dir, name, Vec::new())
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
    params.validate().map_err(|e| in_words(e, flags()))?;
    Ok(params)
}

/// A sweep point's factor levels, sizes as people write them (`1 MiB`, `64 KiB`; they parse
/// back with the usual size suffixes).
pub(crate) fn factors(p: Point) -> Vec<(String, String)> {
    let file = fmt_size(p.file_kib.saturating_mul(1024));
    vec![
        ("file_size".into(), file),
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
    let largest = plan.points.iter().map(|p| p.file_kib).max().unwrap_or(0) * 1024;
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

/// How `fslab iozone` names the parameters in its refusals, from its clap definition.
fn flags() -> Words {
    Words::of_args::<crate::cli::IozoneArgs>("fslab iozone")
}
