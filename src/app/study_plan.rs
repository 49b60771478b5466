//! `fslab study plan FILE`: the cells, the exact commands each runs, the space and RAM the
//! study needs and an ETA. Changes nothing, needs no root.
//!
//! The ETA comes from the last study of the same name in the store when there is one (mean
//! wall time per repetition of each cell × workload, as measured); otherwise from a stated
//! model: 2 s to provision a cell, 1 s per cold-cache cycle, 20,000 metadata operations/s and
//! 150 MB/s for the data a workload writes and removes, or the duration a time-based
//! workload declares.

use crate::cli::StudyPlanArgs;
use crate::plan::space::Space;
use crate::plan::{CachePolicy, Study};
use crate::provision::plan::{check_named_device, named_devices};
use crate::provision::state::{default_workdir, WorkDir};
use crate::provision::{Journal, Provisioner};
use crate::runner::cache;
use crate::units::{fmt_bytes, fmt_duration};
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Seconds assumed to provision one cell when nothing was measured.
const MODEL_PROVISION_S: f64 = 2.0;
/// Seconds assumed for one cold-cache cycle.
const MODEL_COLD_S: f64 = 1.0;
/// Seconds assumed for a fresh file system before a repetition (teardown, mkfs, mount).
const MODEL_FRESH_S: f64 = 4.0;
/// Metadata operations per second assumed.
const MODEL_OPS: f64 = 20_000.0;
/// Bytes per second assumed.
pub(crate) const MODEL_BYTES: f64 = 150e6;

/// Seconds one repetition of `w` is expected to take by the model.
pub fn model_rep_seconds(w: &WorkloadSpec, cache: CachePolicy) -> f64 {
    let cold = match cache {
        CachePolicy::Cold => MODEL_COLD_S,
        CachePolicy::Fresh => MODEL_FRESH_S,
        CachePolicy::Warm | CachePolicy::None => 0.0,
    };
    if let Some(d) = w.expected_duration() {
        return d.as_secs_f64() + cold + 1.0;
    }
    let req = w.build().map(|e| e.requirements()).unwrap_or_default();
    // Created and removed: every item and byte twice.
    2.0 * req.inodes as f64 / MODEL_OPS + 2.0 * req.bytes as f64 / MODEL_BYTES + cold + 0.2
}

/// Mean seconds per repetition keyed by (cell label, workload label), and the study id.
type History = (i64, BTreeMap<(String, String), f64>);

/// Mean measured seconds per repetition from the newest study of this name that has completed
/// repetitions (a newer one that failed or was interrupted before its first is passed over),
/// and how many studies of this name the store holds.
fn history(study: &Study, db: Option<PathBuf>) -> (Option<History>, usize) {
    // A plan changes nothing: no database is created just to look for history.
    let path = db.unwrap_or_else(crate::store::default_path);
    if !path.exists() {
        return (None, 0);
    }
    let Ok(store) = crate::store::Store::open_read_only(&path) else {
        return (None, 0);
    };
    let rows = store.studies_named(study.name()).unwrap_or_default();
    let found = rows
        .iter()
        .find_map(|row| measured_times(&store, row.id).map(|h| (row.id, h)));
    (found, rows.len())
}

/// Mean wall seconds of the counted repetitions of study `id` per (cell, workload) label;
/// `None` when it has none.
fn measured_times(store: &crate::store::Store, id: i64) -> Option<BTreeMap<(String, String), f64>> {
    let d = store.load(id).ok()??;
    let mut acc: BTreeMap<(String, String), (f64, u32)> = BTreeMap::new();
    for t in d
        .trials
        .iter()
        .filter(|t| t.status == crate::store::TrialStatus::Ok)
    {
        let c = d.cells.iter().find(|c| c.id == t.cell_id)?;
        let w = d.workloads.iter().find(|w| w.id == t.workload_id)?;
        let e = acc.entry((c.label.clone(), w.label.clone())).or_default();
        e.0 += t.wall_seconds;
        e.1 += 1;
    }
    if acc.is_empty() {
        return None;
    }
    Some(
        acc.into_iter()
            .map(|(k, (s, n))| (k, s / f64::from(n)))
            .collect(),
    )
}

/// Refuse a `[repetitions] budget` shorter than one repetition of the study's quickest
/// workload by the plan's model: such a study would stop before it measured anything.
pub(crate) fn check_budget(study: &Study, file: &std::path::Path) -> Result<()> {
    let r = &study.repetitions;
    let Some(budget) = r.budget else {
        return Ok(());
    };
    let one = study
        .workloads
        .iter()
        .map(|w| model_rep_seconds(&w.spec, r.cache))
        .fold(f64::INFINITY, f64::min);
    if one.is_finite() && budget.as_secs_f64() < one {
        crate::bail_usage!(
            "{}: [repetitions] budget ({}) is shorter than one repetition (about {} by the plan's model); give a budget of at least that, or leave budget out",
            file.display(),
            crate::units::fmt_duration(budget),
            crate::units::fmt_duration(std::time::Duration::from_secs_f64(one))
        );
    }
    Ok(())
}

/// Run `fslab study plan`.
pub fn plan(a: StudyPlanArgs, db: Option<PathBuf>) -> Result<()> {
    let study = Study::load(&a.file)?;
    check_budget(&study, &a.file)?;
    let guest = match &a.guest {
        Some(g) => Some(
            crate::plan::GuestSpec::parse(g)
                .map_err(|e| crate::error::usage(format!("--guest {g}: {e}")))?,
        ),
        None => study
            .guest()
            .map_err(|e| crate::error::usage(format!("{}: {e}", a.file.display())))?,
    };
    study
        .check_machine_for(guest.is_some())
        .map_err(crate::error::usage)?;
    if let Some(g) = guest {
        crate::outln!(
            "in a User-mode Linux guest with {} of memory (doc/guest.md): the host makes each loop:/ram: device as an image file and the guest sees it as /dev/ubdX, in plan order; the commands below run inside the guest",
            g.mem_word()
        );
    }
    let work = WorkDir::new(a.workdir.unwrap_or_else(default_workdir));
    let root = crate::sysinfo::is_root();
    let r = &study.repetitions;
    let f = &study.file;
    let series = study.cells.len() * study.workloads.len();
    crate::outln!(
        "study {}{}",
        f.name,
        if f.description.is_empty() {
            String::new()
        } else {
            format!(": {}", f.description)
        }
    );
    let reps = match r.target_ci {
        None => format!("{} repetitions each (fixed)", r.min),
        Some(t) => format!(
            "{} to {} repetitions each, until the 95% CI of every primary metric is within {:.1}% of its mean",
            r.min,
            r.max,
            t * 100.0
        ),
    };
    crate::outln!(
        "  {} cell(s) × {} workload(s) = {series} series; {reps}",
        study.cells.len(),
        study.workloads.len()
    );
    let cache_text = match r.cache {
        CachePolicy::Cold => "cold (sync, umount, drop caches, mount before every repetition)",
        CachePolicy::Warm => "warm (caches kept between repetitions)",
        CachePolicy::None => "none",
        CachePolicy::Fresh => "fresh (a new file system, mkfs and mount, before every repetition)",
    };
    crate::outln!(
        "  order {}{}, cache {cache_text}{}",
        r.order.as_str(),
        match (r.order, r.seed) {
            (crate::plan::Order::Randomized, Some(s)) => format!(" (seed {s})"),
            (crate::plan::Order::Randomized, None) => " (seed drawn at start and stored)".into(),
            _ => String::new(),
        },
        r.budget
            .map(|b| format!(", budget {}", fmt_duration(b)))
            .unwrap_or_default()
    );
    if r.warmup > 0 {
        crate::outln!(
            "  {} discarded warm-up repetition{} first in every series and after every provisioning (warmup)",
            r.warmup,
            if r.warmup == 1 { "" } else { "s" }
        );
    }
    if !r.settle.is_zero() {
        crate::outln!(
            "  before every repetition: wait up to {} for a quiet machine (settle)",
            fmt_duration(r.settle)
        );
    }
    match r.disturbed {
        crate::stats::adaptive::Disturbed::Keep => {}
        crate::stats::adaptive::Disturbed::Repeat => crate::outln!(
            "  a disturbed repetition is stored, left out and run again (disturbed = \"repeat\"; at most {} re-runs per series)",
            r.max
        ),
        crate::stats::adaptive::Disturbed::Drop => crate::outln!(
            "  a disturbed repetition is stored and left out (disturbed = \"drop\")"
        ),
    }
    crate::outln!(
        "  $RUN = {}/runs/<pid>-<time>, made when the study runs; $DATA and $JOURNAL are the loop devices losetup picks",
        work.root().display()
    );

    let planner = Provisioner::planner(study.allow_format(), study.ram_bytes());
    for c in &study.cells {
        crate::outln!();
        crate::outln!("cell {}  {}", c.idx, c.label);
        let fs = &c.fs;
        let mut desc = format!("  {} on {}", fs.fs, fs.data);
        match (&fs.journal, fs.journal_size) {
            (Journal::Internal, Some(j)) => desc += &format!(", internal journal {}", fmt_bytes(j)),
            (Journal::Internal, None) => {}
            (Journal::External(d), j) => {
                desc += &format!(
                    ", external journal on {d}{}",
                    j.map(|j| format!(" ({})", fmt_bytes(j)))
                        .unwrap_or_default()
                )
            }
        }
        if !fs.mount.is_empty() {
            desc += &format!(", mount {}", fs.mount.join(","));
        }
        crate::outln!("{desc}");
        for dev in named_devices(fs) {
            check_named_device(dev, &study.allow_format(), root)
                .map_err(|e| crate::error::usage(e.to_string()))?;
            if !root {
                crate::outln!("  ({} passes the checks possible without root; the busy and signature checks run as root before mkfs)", dev.display());
            }
        }
        let planned = planner
            .plan(c.idx, fs)
            .map_err(|e| crate::error::usage(e.to_string()))?;
        for l in &planned.commands {
            crate::outln!("  $ {l}");
        }
        let per_rep = cache::plan_lines(r.cache, &planned.mount);
        if !per_rep.is_empty() {
            crate::outln!("  before every repetition:");
            for l in per_rep {
                crate::outln!("  $ {l}");
            }
        }
        crate::outln!("  workloads:");
        for w in &c.workloads {
            let req = w.build().map(|e| e.requirements()).unwrap_or_default();
            crate::outln!(
                "    {} ({}): {} files and directories, {} of data",
                w.label(),
                w.kind(),
                req.inodes,
                fmt_bytes(req.bytes)
            );
            if w.workload_kind() == crate::workload::WorkloadKind::Fio {
                // The real fio runs on the cell; its job comes on standard input.
                let dir = planned
                    .mount
                    .mountpoint()
                    .join(crate::workload::fio::FIO_DIR);
                crate::outln!(
                    "    $ cd {0} && fio --output-format=json+ --directory={0} - < job",
                    dir.display()
                );
            }
        }
        crate::outln!("  teardown:");
        for l in &planned.teardown {
            crate::outln!("  $ {l}");
        }
    }

    crate::outln!();
    let space = Space::of(&study, work.root());
    crate::outln!(
        "space: loop images {} apparent (sparse); about {} written at the peak if every cell is mounted at once; {} free under {}",
        fmt_bytes(study.loop_bytes()),
        fmt_bytes(space.written),
        fmt_bytes(space.free),
        work.root().display()
    );
    if study.ram_bytes() > 0 {
        crate::outln!(
            "RAM: {} for ram: devices (tmpfs), of {} total",
            fmt_bytes(study.ram_bytes()),
            fmt_bytes(crate::sysinfo::total_ram())
        );
    }
    if let Some(line) = space.shortfall(work.root()) {
        // `study run` refuses with this line before it provisions anything.
        crate::outln!("warning: {line}");
    }

    let (hist, earlier) = history(&study, db);
    crate::outln!("ETA: {}", eta_text(&study, hist.as_ref(), earlier));
    if !root {
        crate::outln!("run it as root: fslab study run {}", a.file.display());
    }
    Ok(())
}

/// The ETA line after "ETA: ": a range of wall time from the measured history of the same
/// study when there is one, else from the model, capped by the budget. Never panics, however
/// large the repetitions and durations (saturating conversion).
/// `earlier`: how many studies of this name the store holds (for the model's reason).
pub(crate) fn eta_text(study: &Study, hist: Option<&History>, earlier: usize) -> String {
    let r = &study.repetitions;
    let series = study.cells.len() * study.workloads.len();
    let mut lo = 0.0;
    let mut hi = 0.0;
    let mut measured = 0usize;
    for c in &study.cells {
        lo += MODEL_PROVISION_S;
        hi += MODEL_PROVISION_S;
        for (i, w) in c.workloads.iter().enumerate() {
            let base = study.workloads[i].spec.label();
            let per = match hist.and_then(|(_, h)| h.get(&(c.label.clone(), base))) {
                Some(&s) => {
                    measured += 1;
                    s
                }
                None => model_rep_seconds(w, r.cache),
            };
            let warm = f64::from(r.warmup) * per;
            lo += f64::from(r.min) * per + warm;
            hi += f64::from(r.max) * per + warm;
        }
    }
    if let Some(b) = r.budget {
        lo = lo.min(b.as_secs_f64());
        hi = hi.min(b.as_secs_f64());
    }
    let how = match hist {
        Some((id, _)) if measured > 0 => format!("from the times measured in study {id} ({measured} of {series} series)"),
        Some((id, _)) => format!("from a model (study {id}, the newest of this name with completed repetitions, ran other configurations or workloads)"),
        None if earlier > 0 => format!("from a model (none of the {earlier} earlier studies of this name in the store completed a repetition; later plans use measured times)"),
        None => "from a model (no earlier study of this name in the store; later plans use measured times)".into(),
    };
    let d = |s: f64| fmt_duration(crate::units::duration_from_secs_saturating(s));
    let range = if (hi - lo).abs() < 1.0 {
        d(lo)
    } else {
        format!("{} to {}", d(lo), d(hi))
    };
    format!("{range}, {how}")
}
