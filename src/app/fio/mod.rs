//! `fslab fio JOBFILE [fio options]`: the real fio run `--repeat N` times on a directory,
//! the chosen cache action before each run, every run stored, and mean ± sd with the 95%
//! interval per job and direction — hyperfine for fio.

use super::finish::{outcome, store_for, Recorded, StoredLine};
use super::rundoc::{self, Planned, Subject};
use crate::cli::{global_options, spellings, FioArgs, FioCacheArg};
use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::runner::progress::Progress;
use crate::safe::cage;
use crate::workload::fio::{read_job_file, Fio, FioParams, FIO_DIR};
use crate::workload::param::{in_words, Words};
use crate::workload::{Target, Workload, WorkloadKind};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Version of the JSON document printed by `--json`.
pub const JSON_SCHEMA: &str = "fslab.fio.v2";

/// The metrics the summary table shows per job and direction (all are stored).
const SHOWN: [&str; 6] = [
    "iops",
    "throughput",
    "clat_mean",
    "clat_p99",
    "lat_mean",
    "sys_cpu",
];

/// fslab's own options as typed (`--repeat`, `-q`), refused after the job file (where they
/// would go to fio, which does not know them): every option of `fslab fio` and the global ones
/// (`--db`), from their clap definition, but `-D`/`--directory`, which fio also takes after
/// the job file (its job option `directory`).
fn own_options() -> Vec<String> {
    let cmd = FioArgs::augment_args(clap::Command::new("fio")).args(global_options());
    spellings(&cmd, |a| !a.is_positional() && a.get_id() != "directory")
}

pub(crate) fn params_from(a: &FioArgs) -> Result<FioParams> {
    super::check_run_args(&a.run)?;
    let own = own_options();
    if let Some(o) = a.fio_args.iter().find_map(|x| {
        own.iter().find(|o| {
            x == *o
                || x.strip_prefix(o.as_str())
                    .is_some_and(|r| r.starts_with('='))
        })
    }) {
        crate::bail_usage!(
            "{o} is fslab's option, and everything after the job file goes to fio; put it before the job file (fslab fio {o} … JOBFILE)"
        );
    }
    if a.cache == FioCacheArg::Drop && !crate::sysinfo::is_root() {
        crate::bail_usage!(
            "--cache drop writes /proc/sys/vm/drop_caches and needs root; run as root or use --cache none"
        );
    }
    crate::workload::check_writable_dir(&a.directory, "-D")?;
    let mut allow_outside = Vec::new();
    for d in &a.allow_outside {
        if d.as_os_str().is_empty() {
            crate::bail_usage!(
                "--allow-outside names the directory fio may also write: --allow-outside=DIR (fio runs in a cage where everything else is read-only)"
            );
        }
        allow_outside.push(std::path::absolute(d)?);
    }
    let dir = std::fs::canonicalize(&a.directory)?;
    let cell = dir.join(FIO_DIR);
    // The cage binds a directory below /dev/shm into its own /dev (see safe::cage).
    let shm = cell.starts_with(cage::SHM) && cage::on_tmpfs(&dir);
    if (cell.starts_with("/dev") && !shm) || cell.starts_with("/proc") || cell.starts_with("/sys") {
        crate::bail_usage!(
            "-D {}: fio runs in a cage with its own /dev, /proc and /sys; choose a directory outside them, or one in the tmpfs of {}",
            a.directory.display(),
            cage::SHM
        );
    }
    let job = read_job_file(&a.job)?;
    let p = FioParams {
        job,
        source: a.job.display().to_string(),
        allow_outside,
        drop_caches: a.cache == FioCacheArg::Drop,
        extra_args: a.fio_args.clone(),
        cell: Some(cell),
    };
    p.validate()
        .map_err(|e| in_words(e, Words::of_args::<FioArgs>("fslab fio")))?;
    if !a.allow_fill {
        refuse_filling(&p, &a.directory)?;
    }
    Ok(p)
}

/// `fslab fio -D DIR` runs on whatever file system DIR is on (often the host's own disk), not
/// on one made for the test: a job that would fill it — `fill_device`/`fill_fs`, or sizes
/// beyond its free space less a reserve — is refused unless `--allow-fill` says so.
fn refuse_filling(p: &FioParams, dir: &std::path::Path) -> Result<()> {
    let fix = format!(
        "give fio a file system made for the test (a study cell), or pass --allow-fill if filling the file system of {} is what you want",
        dir.display()
    );
    for j in p.job.jobs() {
        for key in ["fill_device", "fill_fs"] {
            // Set bare (`fill_device`) or to anything but off.
            let off = |v: &str| matches!(v.trim(), "0" | "false" | "");
            if j.get(key).is_some_and(|v| !v.is_some_and(off)) {
                crate::bail_usage!(
                    "job [{}] sets {key}, which writes until the file system of -D {} is full; {fix}",
                    j.name,
                    dir.display()
                );
            }
        }
    }
    let free = crate::sysinfo::free_space(dir)?;
    let reserve = fill_reserve(free.total_bytes);
    let room = free.bytes.saturating_sub(reserve);
    let need = p.bytes();
    if need > room {
        crate::bail_usage!(
            "the job writes {} but -D {} has {} free, {} after a reserve of {}; use smaller sizes, or {fix}",
            crate::units::fmt_bytes(need),
            dir.display(),
            crate::units::fmt_bytes(free.bytes),
            crate::units::fmt_bytes(room),
            crate::units::fmt_bytes(reserve)
        );
    }
    Ok(())
}

/// What `fslab fio` leaves free on -D's file system: a twentieth of it, at most 1 GiB (a
/// floor of 1 GiB refused a 16 MiB job on a 256 MiB file system made for the test).
fn fill_reserve(total: u64) -> u64 {
    (total / 20).min(1 << 30)
}

/// Run `fslab fio`.
pub fn run(a: FioArgs, db: Option<PathBuf>) -> Result<()> {
    let params = params_from(&a)?;
    let dir = std::fs::canonicalize(&a.directory)?;
    let target = Target::new(&dir);
    let mut engine = Fio::new(params.clone());
    let jobs: Vec<String> = params.job.jobs().into_iter().map(|j| j.name).collect();
    if a.run.dry_run {
        return dry_run(&a, &params, &engine, &target);
    }
    if !a.run.quiet {
        eprintln!("{}", header(&a, &jobs, &target));
    }
    // fio's status every second feeds the bar (on a terminal): percent, rate and ETA as fio
    // computes them; in a log, a line per repetition.
    let steps = Progress::new(!a.run.quiet, "fio")
        .with_units(|phase, _| crate::runner::phase_bar::rate_unit(WorkloadKind::Fio, phase, 1));
    let mut versions: Vec<String> = Vec::new();
    let mut fio_json: Vec<serde_json::Value> = Vec::new();
    let mut on_rep = |rep: u32, m: &[Metric], w: &Fio| {
        if let Some(r) = w.last.as_ref().filter(|r| !versions.contains(&r.version)) {
            versions.push(r.version.clone());
        }
        if a.run.json {
            fio_json.push(fio_document(w));
        }
        if !a.run.json && !a.run.quiet {
            eprintln!("run {rep}/{}: {}", a.run.repeat, rep_line(m));
        }
    };
    let label = format!("fio {}", a.job.display());
    let store = store_for(&a.run, db)?;
    let mut recorded = Recorded::new(WorkloadKind::Fio, &params, label, &a.run, store)?;
    let ran = recorded.run(&mut engine, &target, &steps, Some(&steps), &mut on_rep)?;
    let doc = || {
        let part = FioPart {
            job_file: &a.job,
            job: params.job.render(),
            fio_args: &a.fio_args,
            cache: cache_word(a.cache),
            fio_version: Some(versions),
            fio_json: Some(fio_json),
        };
        Ok((recorded.subject(&dir)?, part))
    };
    ran.print(JSON_SCHEMA, a.run.json, doc, |end| {
        print_summary(&ran.sums, ran.result.reps.len(), end.run_id);
        end.print_tail(StoredLine::OnSuccess, " --all (all metrics)", a.run.quiet);
    })?;
    outcome(ran.result.error)
}

/// fio's own document of the last repetition (for dashboards and for checking); null when
/// it printed none.
fn fio_document(w: &Fio) -> serde_json::Value {
    let doc = w.last_json.as_deref().and_then(|t| {
        let start = t.find('{')?;
        serde_json::from_str::<serde_json::Value>(&t[start..]).ok()
    });
    doc.unwrap_or(serde_json::Value::Null)
}

/// The line before the run: the job and its jobs, the directory and its file system, the
/// repetitions, the cache policy and fio's own options.
fn header(a: &FioArgs, jobs: &[String], target: &Target) -> String {
    format!(
        "fslab fio: {} ({}) in {} ({}), --repeat {}, cache {}{}",
        a.job.display(),
        jobs.join(", "),
        target.dir().display(),
        target.fs_type.as_deref().unwrap_or("unknown fs"),
        a.run.repeat,
        match a.cache {
            FioCacheArg::Drop => "dropped before every run",
            FioCacheArg::None => "untouched",
        },
        if a.fio_args.is_empty() {
            String::new()
        } else {
            format!(", fio options {}", a.fio_args.join(" "))
        }
    )
}

/// The summary of the repetitions shown (`fslab show N --all` has every metric).
fn print_summary(sums: &[MetricSummary], reps: usize, run_id: Option<i64>) {
    let shown = shown(sums);
    if !shown.is_empty() {
        // `fslab show N` alone is the compact report: every metric needs --all.
        let every = run_id.map_or(String::new(), |id| {
            format!("; every metric: fslab show {id} --all")
        });
        let s = if reps == 1 { "" } else { "s" };
        crate::outln!("fio over {reps} run{s} (mean, sd, 95% CI{every}):");
        crate::outln!("{}", runsummary::render_table(&shown));
    }
}

/// `fslab fio --dry-run`: the job as fio would get it, fio's command line, the directory,
/// the repetitions and the space needed; runs nothing and creates nothing.
fn dry_run(a: &FioArgs, params: &FioParams, engine: &Fio, target: &Target) -> Result<()> {
    let req = engine.requirements();
    let free = crate::sysinfo::free_space(target.dir())?;
    let plan = Planned::new(req.into(), Some(free), None);
    let job = params.job.render();
    if a.run.json {
        return rundoc::print_dry_run(
            JSON_SCHEMA,
            Subject::new(WorkloadKind::Fio, target.dir(), params, a.run.repeat)?,
            plan,
            FioPart {
                job_file: &a.job,
                job,
                fio_args: &a.fio_args,
                cache: cache_word(a.cache),
                fio_version: None,
                fio_json: None,
            },
        );
    }
    let cell = target.dir().join(FIO_DIR);
    let fio = crate::workload::fio::engine::fio_binary()?;
    let line = std::iter::once(fio.display().to_string())
        .chain(engine.args(&cell))
        .map(|w| crate::provision::exec::shell_quote(&w))
        .collect::<Vec<_>>()
        .join(" ");
    crate::outln!(
        "fslab fio {}, dry run: nothing run, nothing created",
        a.job.display()
    );
    crate::outln!("  fio command  {line} < job (in fio's cage)");
    crate::outln!(
        "  directory    {} ({}; made before every repetition, removed after it)",
        cell.display(),
        target.fs_type.as_deref().unwrap_or("unknown fs")
    );
    crate::outln!(
        "  repetitions  {} (--repeat), cache {} before each",
        a.run.repeat,
        match a.cache {
            FioCacheArg::Drop => "dropped",
            FioCacheArg::None => "untouched",
        }
    );
    crate::outln!(
        "  needs about  {} and {} inodes ({} free: {})",
        crate::units::fmt_bytes(req.bytes),
        req.inodes,
        crate::units::fmt_bytes(free.bytes),
        match plan.fits {
            Some(true) => "fits",
            _ => "DOES NOT FIT",
        }
    );
    crate::outln!("  the job file as fslab hands it to fio:");
    for l in job.lines() {
        crate::outln!("    {l}");
    }
    Ok(())
}

/// The keys only fio's run document has.
#[derive(Debug, serde::Serialize)]
struct FioPart<'a> {
    /// The job file as given.
    job_file: &'a std::path::Path,
    /// The job file as fslab reads it (includes and `${VAR}` resolved), the text fio gets.
    job: String,
    /// The options passed to fio after the job file.
    fio_args: &'a [String],
    /// What happens before each repetition: `drop` or `none` (`--cache`).
    cache: &'static str,
    /// The fio versions that ran (one unless fio changed during the run); absent in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    fio_version: Option<Vec<String>>,
    /// fio's own JSON document of every repetition; absent in a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    fio_json: Option<Vec<serde_json::Value>>,
}

/// `--cache` in a word.
fn cache_word(c: FioCacheArg) -> &'static str {
    match c {
        FioCacheArg::Drop => "drop",
        FioCacheArg::None => "none",
    }
}

/// The summary rows shown: per job and direction the [`SHOWN`] metrics.
fn shown(sums: &[MetricSummary]) -> Vec<MetricSummary> {
    super::finish::engine_only(sums)
        .into_iter()
        .filter(|m| SHOWN.contains(&m.name.as_str()))
        .collect()
}

/// One repetition in a line: each job and direction's IOPS and MiB/s.
fn rep_line(m: &[Metric]) -> String {
    let mut parts = Vec::new();
    for x in m.iter().filter(|x| x.name == "iops") {
        let bw = m
            .iter()
            .find(|y| y.phase == x.phase && y.name == "throughput")
            .map(|y| y.value / 1024.0)
            .unwrap_or(0.0);
        parts.push(format!("{} {:.0} IOPS {:.1} MiB/s", x.phase, x.value, bw));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Unit;

    #[test]
    fn rep_line_names_each_job_and_direction() {
        let m = vec![
            Metric::new("rr/read", "iops", Unit::OpsPerSec, 1000.4),
            Metric::new("rr/read", "throughput", Unit::KiBPerSec, 4096.0),
            Metric::new("rr", "sys_cpu", Unit::Percent, 3.0),
        ];
        assert_eq!(rep_line(&m), "rr/read 1000 IOPS 4.0 MiB/s");
    }

    #[test]
    fn the_fill_reserve_is_a_twentieth_at_most_one_gib() {
        assert_eq!(fill_reserve(256 << 20), (256 << 20) / 20);
        assert_eq!(fill_reserve(20 << 30), 1 << 30);
        assert_eq!(fill_reserve(2 << 40), 1 << 30);
    }
}
