//! `fslab study plan FILE`: the cells, the exact commands each runs, the space and RAM the
//! study needs and an ETA. Changes nothing, needs no root.
//!
//! This module prints the plan: the study's rules, then cell by cell its file system, the
//! commands it runs and its workloads, then space, RAM and the ETA, which `eta.rs` works out
//! (measured times of an earlier study of the same name, else a stated model).

mod eta;

pub(crate) use eta::{check_budget, design, estimate, eta_text, history, range_text, MODEL_BYTES};

use crate::cli::StudyPlanArgs;
use crate::plan::calibration::Side;
use crate::plan::space::Space;
use crate::plan::{CachePolicy, Cell, Study};
use crate::provision::plan::{check_named_device, named_devices};
use crate::provision::state::{default_workdir, WorkDir};
use crate::provision::{Journal, Provisioner};
use crate::runner::cache;
use crate::units::{fmt_bytes, fmt_duration};
use crate::workload::fio::FIO_DIR;
use anyhow::Result;
use std::path::PathBuf;

/// Run `fslab study plan`.
pub fn plan(a: StudyPlanArgs, db: Option<PathBuf>) -> Result<()> {
    let study = Study::load(&a.file)?;
    check_budget(&study, &a.file)?;
    let guest = super::study::guest_spec(a.guest.as_deref(), &a.file, &study)?;
    study
        .check_machine_for(guest.is_some())
        .map_err(crate::error::usage)?;
    // The calibration runs before the study, on the host and in the guest.
    let mut calibration = Vec::new();
    if let Some(g) = &guest {
        crate::outln!(
            "in a User-mode Linux guest with {} of memory (doc/guest.md): the host makes each loop:/ram: device as an image file and the guest sees it as /dev/ubdX, in plan order; the commands below run inside the guest",
            g.mem_word()
        );
        for side in [Side::Host, Side::Guest] {
            if let Some(cal) = study.calibration(side).map_err(crate::error::usage)? {
                calibration.push(cal);
            }
        }
    }
    let work = WorkDir::new(a.workdir.unwrap_or_else(default_workdir));
    let root = crate::sysinfo::is_root();
    let (hist, earlier) = eta::history(&study, db.clone());
    print_rules(&study, &work, hist.as_ref());
    let planner = Provisioner::planner(study.allow_format(), study.ram_bytes());
    for c in &study.cells {
        print_cell(&study, &planner, c, root)?;
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

    let mut extra = (0.0, 0.0);
    for cal in &calibration {
        let (h, _) = eta::history(cal, db.clone());
        let (lo, hi, _) = estimate(cal, h.as_ref());
        extra = (extra.0 + lo, extra.1 + hi);
    }
    if let Some(host) = calibration.first() {
        crate::outln!(
            "guest calibration, before the study: its workloads on {} ({} cell(s), {} repetitions each) on the host, then the same in the guest (studies '{}' and '{}'): about {} of the ETA",
            host.fs_words(),
            host.cells.len(),
            host.repetitions.min,
            host.name(),
            calibration.last().map_or("", |c| c.name()),
            range_text(extra.0, extra.1)
        );
    }
    crate::outln!("ETA: {}", eta_text(&study, hist.as_ref(), earlier, extra));
    if !root {
        crate::outln!("run it as root: fslab study run {}", a.file.display());
    }
    Ok(())
}

/// A percentage with at most one decimal: `10%`, `9.1%`.
fn fmt_pct(f: f64) -> String {
    let p = 100.0 * f;
    if (p - p.round()).abs() < 0.05 {
        format!("{:.0}%", p)
    } else {
        format!("{:.1}%", p)
    }
}

/// What the design detects, at the spread an earlier study of this name measured (the
/// largest over the series it shares with this one) or else at the assumed
/// [`crate::plan::ASSUMED_CV`]: the effect found with 80% power at `min` repetitions, and under
/// `detect` the repetitions that spread needs.
fn power_words(study: &Study, hist: Option<&eta::History>) -> String {
    use crate::stats::power;
    let r = &study.repetitions;
    let measured = hist.and_then(|(id, h)| {
        let sds = study.cells.iter().flat_map(|c| {
            study.workloads.iter().filter_map(|w| {
                h.get(&(c.label.clone(), w.spec.label()))
                    .and_then(|m| m.log_sd)
            })
        });
        sds.fold(None, |a: Option<f64>, s| Some(a.map_or(s, |a| a.max(s))))
            .map(|s| (*id, s))
    });
    let (s, source) = match measured {
        Some((id, s)) => (
            s,
            format!(
                "the spread measured in study {id} (cv up to {})",
                fmt_pct(power::cv_of_log_sd(s))
            ),
        ),
        None => (
            power::log_sd(crate::plan::ASSUMED_CV),
            format!(
                "an assumed cv of {} (no earlier study of this name measured one)",
                fmt_pct(crate::plan::ASSUMED_CV)
            ),
        ),
    };
    let found = match power::detectable(r.min, s) {
        Some(e) if e.is_finite() => format!(
            "{} repetitions detect a change of {} with 80% power at {source}",
            r.min,
            fmt_pct(e)
        ),
        _ => format!(
            "{} repetition(s) cannot test a difference (a comparison needs two on each side)",
            r.min
        ),
    };
    match (r.detect, s > 0.0) {
        (Some(d), true) if r.target_ci.is_none() => match power::n_for_power(s, d) {
            Some(n) if n > r.min => format!(
                "{found}; for {} a series needs about {n} (at most {} run)",
                fmt_pct(d),
                r.max
            ),
            _ => found,
        },
        _ => found,
    }
}

/// How many repetitions each series runs, in words: a precision target, a design for power
/// (with or without each series' own extension), or a fixed count.
fn rule_words(r: &crate::plan::Repetitions) -> String {
    match (r.target_ci, r.detect) {
        (Some(t), _) => format!(
            "{} to {} repetitions each, until the 95% CI of every primary metric is within {:.1}% of its mean (a precision target)",
            r.min,
            r.max,
            t * 100.0
        ),
        (None, Some(d)) if r.extend => format!(
            "{} to {} repetitions each, by design: 80% power to detect a change of {} (two-sided Welch on logs, α = 0.05 before adjustment); each series fixes its n from the spread of its first {}",
            r.min,
            r.max,
            fmt_pct(d),
            r.min
        ),
        (None, Some(d)) => format!(
            "{} repetitions each by design: 80% power to detect a change of {} (two-sided Welch on logs, α = 0.05 before adjustment); more, at most {}, for a series whose spread an earlier study of this name measured needs them",
            r.min,
            fmt_pct(d),
            r.max
        ),
        (None, None) => format!("{} repetitions each (fixed)", r.min),
    }
}

/// The study's rules: series, repetitions, order, cache policy, warm-ups, settling, the
/// disturbed-repetition policy, and where `$RUN` will be.
fn print_rules(study: &Study, work: &WorkDir, hist: Option<&eta::History>) {
    let r = &study.repetitions;
    let f = &study.file;
    let series = study.cells.len() * study.workloads.len();
    let description = Some(&f.description).filter(|d| !d.is_empty());
    let description = description.map(|d| format!(": {d}")).unwrap_or_default();
    crate::outln!("study {}{description}", f.name);
    let reps = rule_words(r);
    crate::outln!(
        "  {} cell(s) × {} workload(s) = {series} series; {reps}",
        study.cells.len(),
        study.workloads.len()
    );
    crate::outln!("  power: {}", power_words(study, hist));
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
}

/// One cell: its file system, the commands that make it, what runs before every
/// repetition, its workloads and its teardown. A named device that fails the checks possible
/// here is refused as bad input.
fn print_cell(study: &Study, planner: &Provisioner, c: &Cell, root: bool) -> Result<()> {
    crate::outln!();
    crate::outln!("cell {}  {}", c.idx, c.label);
    let fs = &c.fs;
    let mut desc = format!("  {} on {}", fs.fs, fs.data);
    match (&fs.journal, fs.journal_size) {
        (Journal::Internal, Some(j)) => desc += &format!(", internal journal {}", fmt_bytes(j)),
        (Journal::Internal, None) => {}
        (Journal::External(d), j) => {
            let size = j.map(|j| format!(" ({})", fmt_bytes(j)));
            desc += &format!(", external journal on {d}{}", size.unwrap_or_default())
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
    let per_rep = cache::plan_lines(study.repetitions.cache, &planned.mount);
    if !per_rep.is_empty() {
        crate::outln!("  before every repetition:");
        for l in per_rep {
            crate::outln!("  $ {l}");
        }
    }
    crate::outln!("  workloads:");
    for w in &c.workloads {
        let (req, data) = w
            .build()
            .map(|e| (e.requirements(), e.data_bytes()))
            .unwrap_or_default();
        crate::outln!(
            "    {} ({}): {} files and directories, {} of data",
            w.label(),
            w.kind(),
            req.inodes,
            fmt_bytes(data)
        );
        if w.workload_kind() == crate::workload::WorkloadKind::Fio {
            // The real fio runs on the cell; its job comes on standard input.
            let dir = planned.mount.mountpoint().join(FIO_DIR);
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
    Ok(())
}
