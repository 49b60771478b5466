//! `mpiexec -n N fslab fdtree …`: checks agreed by all ranks, the run (stored by rank 0 only)
//! and rank 0's report.

use super::comm::Comm;
use super::fdtree::{DistFdtree, DistRep, Layout};
use crate::app::fdtree::{fdtree_report_counts, params_from, shape_flags};
use crate::cli::{FdtreeArgs, OutputFormat};
use crate::report::runsummary;
use crate::runner::adhoc::{self, AdhocOptions};
use crate::runner::progress::ProgressObserver;
use crate::stats::Thresholds;
use crate::units::fmt_bytes;
use crate::workload::fdtree::{Backend, FdtreeParams, Mode, PhaseTiming, RepOutcome};
use crate::workload::{Quiet, Target, Workload};
use anyhow::{Context, Result};
use comfy_table::{presets, Cell, CellAlignment, Table};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Version of the JSON document printed by `--format json` under MPI.
pub const JSON_SCHEMA: &str = "fslab.fdtree.mpi.v1";

/// Metrics shown in the text table (all are stored and in JSON).
const TABLE_METRICS: [&str; 11] = [
    "elapsed",
    "rate",
    "throughput",
    "items",
    "rank_rate_min",
    "rank_rate_max",
    "rank_rate_spread",
    "start_skew",
    "end_skew",
    "stonewall_rate",
    "stonewall_items",
];

fn validate(a: &FdtreeArgs) -> Result<FdtreeParams> {
    let p = params_from(a)?;
    if p.threads != 1 {
        crate::bail_usage!(
            "--threads {}: under mpiexec every rank is one worker; start more ranks (mpiexec -n) instead",
            p.threads
        );
    }
    if p.mode != Mode::Full {
        crate::bail_usage!(
            "-C/-R: under mpiexec fslab runs the full cycle (create, then remove, between barriers); drop -C/-R"
        );
    }
    Ok(p)
}

/// Every rank must run the same phases and repetitions, or the collectives would not match
/// (mpiexec's `A : B` syntax can give ranks different command lines). `-o` may differ: one
/// tree per rank can use per-node paths.
fn same_options_everywhere(comm: &Comm, a: &FdtreeArgs, p: &FdtreeParams) -> Result<()> {
    let mine = serde_json::json!({
        "params": p, "repeat": a.repeat, "dry_run": a.dry_run,
        "shared": a.mpi.shared, "stonewall": a.mpi.stonewall,
    })
    .to_string();
    let rank0 = comm.broadcast_text(&mine);
    let local = if mine == rank0 {
        Ok(())
    } else {
        Err(crate::error::usage(format!(
            "was started with other fdtree options than rank 0 (mine: {mine}; rank 0: {rank0}); give every rank the same command line"
        )))
    };
    comm.agree(local)
}

fn start_dir(a: &FdtreeArgs, backend: Backend) -> Result<PathBuf> {
    if backend == Backend::Null {
        return Ok(a.start_dir.clone());
    }
    crate::workload::check_writable_dir(&a.start_dir, "-o")?;
    std::fs::canonicalize(&a.start_dir)
        .with_context(|| format!("cannot resolve {}", a.start_dir.display()))
}

/// Does every rank see the directory rank 0 sees? Rank 0 creates a marker file in it, every
/// rank looks for it. `--shared` needs that; one tree per rank can also use node-local
/// directories (then the space check counts only the ranks on each node).
fn seen_by_all(comm: &Comm, dir: &Path, tag: &str, layout: Layout) -> Result<bool> {
    let marker = dir.join(format!(".fslab-mpi.{tag}"));
    let made = if comm.is_root() {
        std::fs::File::create(&marker)
            .map(drop)
            .with_context(|| format!("cannot create {}", marker.display()))
    } else {
        Ok(())
    };
    comm.agree(made)?;
    let sees = marker.symlink_metadata().is_ok();
    let all = comm.all(sees);
    if comm.is_root() {
        // Every rank has looked (the reduction above needs all of them).
        let _ = std::fs::remove_file(&marker);
    }
    let local = if layout == Layout::Shared && !sees {
        Err(crate::error::usage(format!(
            "does not see {}, which rank 0 created: --shared needs -o to be the same directory on every node (a shared file system)",
            marker.display()
        )))
    } else {
        Ok(())
    };
    comm.agree(local)?;
    Ok(all)
}

/// Run `fslab fdtree` as one rank of the job.
pub fn run(comm: &Rc<Comm>, a: FdtreeArgs, db: Option<PathBuf>) -> Result<()> {
    let format = if a.json { OutputFormat::Json } else { a.format };
    let params = comm.agree(validate(&a))?;
    same_options_everywhere(comm, &a, &params)?;
    let layout = if a.mpi.shared {
        Layout::Shared
    } else {
        Layout::Private
    };
    let tag = comm.broadcast_text(&format!(
        "{}.{}",
        crate::sysinfo::short_hostname(),
        std::process::id()
    ));
    let dir = comm.agree(start_dir(&a, params.backend))?;
    let all_see = match params.backend {
        Backend::Fs => seen_by_all(comm, &dir, &tag, layout)?,
        Backend::Null => true,
    };
    let fit_ranks = if all_see {
        u64::from(comm.size())
    } else {
        comm.ranks_on_my_host()
    };
    let mut engine = DistFdtree::new(
        Rc::clone(comm),
        params.clone(),
        layout,
        a.mpi.stonewall,
        tag.clone(),
        fit_ranks,
    );
    let info = JobInfo {
        comm,
        params: &params,
        layout,
        stonewall: a.mpi.stonewall,
        dir: &dir,
        all_see,
        tag: &tag,
    };
    if a.dry_run {
        if comm.is_root() {
            dry_run(&info, &engine);
        }
        return Ok(());
    }
    let mut store = comm.agree(if comm.is_root() && !a.no_store {
        super::super::app::open_store(db).map(Some)
    } else {
        Ok(None)
    })?;
    let target = Target::new(&dir);
    let bar = ProgressObserver::new(
        comm.is_root() && !a.quiet && format != OutputFormat::Json,
        "fdtree rank 0",
    );
    let obs: &dyn crate::workload::Observer = if comm.is_root() { &bar } else { &Quiet };
    let counts = engine.job_counts();
    let fdtree_fmt = format == OutputFormat::Fdtree && comm.is_root();
    let root0 = format!(
        "LEVEL0.{tag}.{}",
        if layout == Layout::Shared {
            "shared"
        } else {
            "r0"
        }
    );
    let start_display = a.start_dir.clone();
    let mut on_rep = |_rep: u32, _m: &[crate::metric::Metric], w: &dyn Workload| {
        let last = w
            .as_any()
            .downcast_ref::<DistFdtree>()
            .and_then(|e| e.reps.last());
        if let (true, Some(rep)) = (fdtree_fmt, last) {
            let out = rep_outcome(rep, &root0);
            crate::out!(
                "{}",
                fdtree_report_counts(&params, counts, &start_display, &out)
            );
        }
    };
    let result = adhoc::run(
        AdhocOptions {
            repeat: a.repeat,
            store: store.as_mut(),
            name: "fdtree".into(),
            command_line: format!("mpiexec -n {} {}", comm.size(), crate::app::command_line()),
            params: info.params_json()?,
            label: format!(
                "{} ×{} ranks{}",
                label(&params),
                comm.size(),
                match layout {
                    Layout::Shared => " shared",
                    Layout::Private => "",
                }
            ),
        },
        &mut engine,
        &target,
        obs,
        &mut on_rep,
    )?;
    if comm.is_root() {
        report(&info, &engine, &result, format, a.min_phase, a.mpi.per_rank)?;
    }
    match result.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn label(p: &FdtreeParams) -> String {
    format!("fdtree {}", shape_flags(p))
}

/// What rank 0 says about the job.
struct JobInfo<'a> {
    comm: &'a Comm,
    params: &'a FdtreeParams,
    layout: Layout,
    stonewall: bool,
    dir: &'a Path,
    all_see: bool,
    tag: &'a str,
}

impl JobInfo<'_> {
    fn hosts(&self) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = Vec::new();
        for h in self.comm.hosts() {
            match v.iter_mut().find(|(n, _)| n == h) {
                Some(e) => e.1 += 1,
                None => v.push((h.clone(), 1)),
            }
        }
        v
    }

    fn mpi_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ranks": self.comm.size(),
            "hosts": self.hosts().into_iter().map(|(h, n)| serde_json::json!({"host": h, "ranks": n})).collect::<Vec<_>>(),
            "library": self.comm.library(),
            "layout": self.layout,
            "stonewall": self.stonewall,
            "target_seen_by_all_ranks": self.all_see,
            "tag": self.tag,
        })
    }

    fn params_json(&self) -> Result<serde_json::Value> {
        let mut v = serde_json::to_value(self.params)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("mpi".into(), self.mpi_json());
        }
        Ok(v)
    }

    fn header(&self, engine: &DistFdtree) -> String {
        let t = engine.job_counts();
        let hosts = self.hosts();
        let host_list: Vec<String> = hosts
            .iter()
            .take(4)
            .map(|(h, n)| format!("{h} ×{n}"))
            .collect();
        let more = if hosts.len() > 4 { ", …" } else { "" };
        let layout = match self.layout {
            Layout::Private => "one tree per rank".to_string(),
            Layout::Shared => "one shared tree, every rank's files in every directory".into(),
        };
        let target = match self.params.backend {
            Backend::Fs => format!(
                "{} ({}{})",
                self.dir.display(),
                crate::sysinfo::fs_type_of(self.dir).unwrap_or_else(|| "unknown fs".into()),
                if self.all_see {
                    ", seen by all ranks"
                } else {
                    ", NOT the same directory on every node"
                }
            ),
            Backend::Null => "null backend (no system calls)".into(),
        };
        let sync = if self.params.sync {
            "syncfs timed per rank"
        } else {
            "syncfs not timed"
        };
        format!(
            "fdtree {} under MPI: {} ranks on {} host(s) ({}{more}); {layout}; {target}\n\
             per repetition: {} dirs, {} files, {}; {sync}; stonewall {}",
            shape_flags(self.params),
            self.comm.size(),
            hosts.len(),
            host_list.join(", "),
            t.dirs,
            t.files,
            fmt_bytes(t.bytes),
            if self.stonewall { "on" } else { "off" }
        )
    }
}

/// fdtree's report structure filled with the aggregated phases.
fn rep_outcome(rep: &DistRep, root: &str) -> RepOutcome {
    RepOutcome {
        phases: rep
            .phases
            .iter()
            .map(|p| PhaseTiming {
                phase: p.phase,
                items: p.agg.items,
                elapsed: p.agg.elapsed,
                sync: (p.agg.sync_max > 0.0).then_some(p.agg.sync_max),
                per_thread: p.ranks.iter().map(|r| r.elapsed()).collect(),
                start_skew: p.agg.start_skew,
                t_in: p.agg.first_start,
                t_out: p.agg.last_end,
            })
            .collect(),
        roots: vec![root.to_string()],
        started: rep.started,
    }
}

fn dry_run(info: &JobInfo, engine: &DistFdtree) {
    let t = engine.job_counts();
    let n = info.comm.size();
    crate::outln!(
        "fdtree {} under MPI ({n} ranks), dry run: nothing created",
        shape_flags(info.params)
    );
    let per_rank_dirs: Vec<u64> = (0..n).map(|r| engine.items_of("dir_create", r)).collect();
    let lo = per_rank_dirs.iter().min().copied().unwrap_or(0);
    let hi = per_rank_dirs.iter().max().copied().unwrap_or(0);
    let per = if lo == hi {
        format!("{lo} per rank")
    } else {
        format!("{lo}–{hi} per rank")
    };
    crate::outln!("  directories: {} ({per})", t.dirs);
    crate::outln!(
        "  files:       {} ({} per rank, {} KiB each)",
        t.files,
        engine.items_of("file_create", 0),
        info.params.size_blocks * 4
    );
    crate::outln!("  file data:   {}", fmt_bytes(t.bytes));
    let req = engine.requirements();
    crate::outln!(
        "  rank 0's file system must hold about {} and {} inodes ({})",
        fmt_bytes(req.bytes),
        req.inodes,
        if info.all_see {
            "all ranks write to it"
        } else {
            "the ranks on its node write to it"
        }
    );
}

fn report(
    info: &JobInfo,
    engine: &DistFdtree,
    result: &adhoc::AdhocResult,
    format: OutputFormat,
    min_phase: f64,
    per_rank: bool,
) -> Result<()> {
    let sums = runsummary::summarize_reps(&result.reps);
    let thresholds = Thresholds {
        min_phase_seconds: min_phase,
        ..Thresholds::default()
    };
    let mut warnings: Vec<String> = runsummary::warnings(&sums, &thresholds)
        .iter()
        .map(|w| w.to_string())
        .collect();
    if let Some(rep) = engine.reps.last() {
        for p in &rep.phases {
            warnings.extend(super::aggregate::warnings(p.phase, &p.agg));
        }
    }
    if format == OutputFormat::Json {
        let doc = serde_json::json!({
            "schema": JSON_SCHEMA,
            "fslab_version": env!("CARGO_PKG_VERSION"),
            "run_id": result.study,
            "params": info.params,
            "mpi": info.mpi_json(),
            "counts": {"total": engine.job_counts(), "units": {"dirs": "count", "files": "count", "bytes": "B"}},
            "start_dir": info.dir,
            "fs_type": crate::sysinfo::fs_type_of(info.dir),
            "sync_timed": info.params.sync,
            "repetitions": result.reps.iter().map(|r| r.iter().map(|m| serde_json::json!({
                "phase": m.phase, "metric": m.name, "unit": m.unit.as_str(), "value": m.value
            })).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "per_rank": engine.reps,
            "per_rank_units": {"start": "s", "end": "s", "sync": "s", "items": "count", "bytes": "B", "rate": "items/s"},
            "summary": runsummary::to_json(&sums),
            "warnings": warnings,
            "environment": result.environment.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "error": result.error.as_ref().map(|e| format!("{e:#}")),
        });
        crate::outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    if format == OutputFormat::Table && !result.reps.is_empty() {
        crate::outln!("{}", info.header(engine));
        if let Some(rep) = engine.reps.last() {
            crate::outln!("{}", clock_line(rep));
        }
        let shown: Vec<_> = sums
            .into_iter()
            .filter(|m| TABLE_METRICS.contains(&m.name.as_str()))
            .collect();
        crate::outln!("{}", runsummary::render_table(&shown));
    }
    if per_rank {
        if let Some(rep) = engine.reps.last() {
            crate::outln!("{}", per_rank_table(info, rep));
        }
    }
    for w in &warnings {
        crate::outln!("warning: {w}");
    }
    if let Some(id) = result.study {
        eprintln!("stored as run {id}: fslab show {id} (all metrics)");
    }
    Ok(())
}

fn clock_line(rep: &DistRep) -> String {
    let c = &rep.clock;
    let tick = format!("MPI_Wtime, resolution {:.0} ns", c.tick * 1e9);
    if c.max_uncertainty() == 0.0 {
        format!("clock: {tick}; every rank on rank 0's node (one clock, no correction)")
    } else {
        format!(
            "clock: {tick}; offsets to rank 0 up to {:.1} µs, each known to ±{:.1} µs (ping-pong), corrected",
            c.max_offset() * 1e6,
            c.max_uncertainty() * 1e6
        )
    }
}

fn per_rank_table(info: &JobInfo, rep: &DistRep) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    let mut head = vec![
        "phase",
        "rank",
        "host",
        "items",
        "start +ms",
        "elapsed s",
        "rate/s",
    ];
    if info.stonewall {
        head.push("items at stonewall");
    }
    t.set_header(head);
    let hosts = info.comm.hosts();
    for p in &rep.phases {
        for r in &p.ranks {
            let mut row = vec![
                Cell::new(p.phase),
                Cell::new(r.rank).set_alignment(CellAlignment::Right),
                Cell::new(hosts.get(r.rank as usize).map_or("?", |h| h.as_str())),
                Cell::new(r.items).set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.3}", (r.start - p.agg.first_start) * 1e3))
                    .set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.6}", r.elapsed())).set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.1}", r.rate())).set_alignment(CellAlignment::Right),
            ];
            if let Some(s) = r.stonewall {
                row.push(Cell::new(s.items).set_alignment(CellAlignment::Right));
            }
            t.add_row(row);
        }
    }
    t.to_string()
}
