//! An engine command (`fslab fdtree`, `fslab iozone`, `fslab dbench`, `fslab fio`, …) run
//! `--repeat N` times against one directory: a study of kind `run` over that
//! directory, run by the study's own loop ([`super::Runner`]: scheduler, repetition, fate of
//! a disturbed repetition, store), every repetition stored as it completes.
//!
//! Its cells are the command's points (one for fdtree and dbench, one per (file size, record
//! size) for an IOzone sweep) with one workload and a fixed repetition rule (`--repeat`),
//! interleaved (repetition 1 of every cell, then repetition 2, …), so `fslab list`, `show` and
//! `report` treat it like any study. What differs from a study is where its cells stand (a
//! directory it was given, no file system made), how it speaks (the engine's counters on
//! stderr), and that its first failure ends it. While it runs it holds a claim on its row
//! (process id and start time), and every entry a repetition is about to create is recorded
//! before it exists ([`Owned`]): if the process is killed, `fslab cleanup` sees the dead
//! claim and removes exactly those entries.
//!
//! Unlike a study, an interrupted repetition is stored (as failed, with its error): an
//! engine command cannot be resumed, and the row says that a repetition was cut short.
//! `--no-store` runs the same way against a store in memory.

use super::super::progress::Steps;
use super::super::series::Series;
use super::super::telemetry::Sources;
pub use super::recording::Owned;
use super::{Ground, Runner, Show};
use crate::metric::Metric;
use crate::plan::{CachePolicy, Order, Repetitions};
use crate::stats::adaptive::{Disturbed, Fate};
use crate::store::{NewCell, NewStudy, SeriesStatus, Store};
use crate::telemetry::Devices;
use crate::workload::{Observer, Target, Workload, WorkloadKind};
use anyhow::Result;
use std::collections::BTreeMap;
use std::time::Instant;

/// How to run and record an engine command.
pub struct AdhocOptions<'a> {
    /// Repetitions (at least 1).
    pub repeat: u32,
    /// What to do with a disturbed repetition (`--disturbed`).
    pub disturbed: Disturbed,
    /// The store to record into; `None` records nothing (`--no-store`).
    pub store: Option<&'a mut Store>,
    /// Name of the run (the engine name).
    pub name: String,
    /// The command line as typed.
    pub command_line: String,
    /// Engine parameters, stored with the workload.
    pub params: serde_json::Value,
    /// Label of the workload.
    pub label: String,
    /// Before each repetition, wait up to this long for a quiet machine (zero: no wait).
    pub settle: std::time::Duration,
    /// Sample devices, CPU and progress once a second during each repetition.
    pub timeline: bool,
    /// Told where the run is, step by step (repetition and point), for counters and an ETA.
    pub steps: Option<&'a dyn Steps>,
}

/// One cell of an engine run (for example one (file size, record size) point of an IOzone
/// sweep): its label and factors in the store, and the engine that runs it.
pub struct AdhocCell<W> {
    /// Human label, e.g. `file_size=1 MiB record_size=64 KiB`.
    pub label: String,
    /// Factor name and level, e.g. `[("file_size", "1024k"), ("record_size", "64k")]`.
    pub factors: Vec<(String, String)>,
    /// The cell's resolved configuration, stored as JSON.
    pub config: serde_json::Value,
    /// The engine for this cell.
    pub workload: W,
}

/// What an engine command produced; `R` holds the metrics of every completed repetition, in
/// order: per cell ([`CellsResult`]) or of its one cell ([`AdhocResult`]).
#[derive(Debug)]
pub struct Ran<R> {
    /// The study id in the store, if recorded.
    pub study: Option<i64>,
    /// The repetitions other activity disturbed.
    pub disturbed: Disturbance,
    /// The metrics of every completed repetition.
    pub reps: R,
    /// Environment captured at the start.
    pub environment: Vec<(String, String)>,
    /// The error that ended the run early, if any (completed repetitions are kept).
    pub error: Option<anyhow::Error>,
}

/// What a many-cell engine command produced: per cell, its repetitions' metrics.
pub type CellsResult = Ran<Vec<Vec<Vec<Metric>>>>;

/// What a one-cell engine command produced.
pub type AdhocResult = Ran<Vec<Vec<Metric>>>;

impl CellsResult {
    /// Whether any repetition of any cell completed.
    pub fn any_done(&self) -> bool {
        self.reps.iter().any(|r| !r.is_empty())
    }
}

/// The repetitions of a run other activity disturbed, as it went (its summary says how many,
/// `-q` included).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Disturbance {
    /// Repetitions run, counted or left out.
    pub run: u32,
    /// Disturbed and counted (`--disturbed keep`, or past the re-run limit).
    pub counted: u32,
    /// Disturbed, left out and run again (`--disturbed repeat`).
    pub rerun: u32,
    /// Disturbed and left out (`--disturbed drop`).
    pub dropped: u32,
    /// Each disturbed repetition's line, as stored.
    pub lines: Vec<String>,
}

impl Disturbance {
    /// Account for one repetition run, its interference line (if disturbed) and its fate.
    pub fn add(&mut self, interference: Option<&str>, fate: Fate) {
        self.run += 1;
        let Some(line) = interference else {
            return;
        };
        self.lines.push(line.to_string());
        match fate {
            Fate::Count => self.counted += 1,
            Fate::Rerun => self.rerun += 1,
            Fate::Drop => self.dropped += 1,
        }
    }

    /// Disturbed repetitions, however their policy treated them.
    pub fn disturbed(&self) -> u32 {
        self.counted + self.rerun + self.dropped
    }
}

/// Called after each completed (repetition, cell) with the repetition (1-based), the cell
/// index, its metrics and the cell's engine.
pub type CellHook<'a, W> = &'a mut dyn FnMut(u32, usize, &[Metric], &W);

/// An engine command's engines, one per cell, as the loop sees them: lent for a repetition,
/// and told of every counted one (the command prints its own report of it).
pub trait Engines {
    /// Cell `cell`'s engine.
    fn engine(&mut self, cell: usize) -> &mut dyn Workload;
    /// Repetition `rep` (1-based) of cell `cell` counted with `metrics`.
    fn counted(&mut self, rep: u32, cell: usize, metrics: &[Metric]);
}

/// The cells of a command with the hook its caller gave.
struct Typed<'c, 'h, W> {
    cells: &'c mut [AdhocCell<W>],
    hook: CellHook<'h, W>,
}

impl<W: Workload> Engines for Typed<'_, '_, W> {
    fn engine(&mut self, cell: usize) -> &mut dyn Workload {
        &mut self.cells[cell].workload
    }

    fn counted(&mut self, rep: u32, cell: usize, metrics: &[Metric]) {
        (self.hook)(rep, cell, metrics, &self.cells[cell].workload);
    }
}

/// Run `workload` `opts.repeat` times on `target`: a one-cell [`run_cells`] whose cell is
/// the target directory. `on_rep` gets the repetition number (1-based), its metrics and the
/// engine, after each completed repetition.
pub fn run<W: Workload>(
    opts: AdhocOptions<'_>,
    workload: &mut W,
    target: &Target,
    obs: &dyn Observer,
    on_rep: &mut dyn FnMut(u32, &[Metric], &W),
) -> Result<AdhocResult> {
    let label = match &target.fs_type {
        Some(fs) => format!("{} ({fs})", target.dir.display()),
        None => target.dir.display().to_string(),
    };
    let mut cells = [AdhocCell {
        label,
        factors: Vec::new(),
        config: serde_json::json!({"target": target.dir, "fs_type": target.fs_type}),
        workload,
    }];
    let r = run_cells(opts, &mut cells, target, obs, &mut |rep, _cell, m, w| {
        on_rep(rep, m, w)
    })?;
    Ok(Ran {
        study: r.study,
        disturbed: r.disturbed,
        reps: r.reps.into_iter().next().unwrap_or_default(),
        environment: r.environment,
        error: r.error,
    })
}

/// Record the run (study of kind `run`, environment, its one workload, its cells with their
/// series pending), claimed in the transaction that records it: no unclaimed `running` row
/// is ever seen. Returns the study, the claim, the workload and the cells' ids.
fn record<W: Workload>(
    store: &mut Store,
    opts: &AdhocOptions<'_>,
    cells: &[AdhocCell<W>],
    environment: &[(String, String)],
) -> Result<(i64, crate::store::Claim, i64, Vec<i64>)> {
    let new = NewStudy {
        kind: crate::vocab::StudyKind::Run,
        name: opts.name.clone(),
        description: String::new(),
        command_line: opts.command_line.clone(),
        spec: opts.params.to_string(),
        spec_hash: String::new(),
        seed: None,
    };
    let (study_id, claim) = store.immediate("recording the run", |st| {
        let study = st.begin_study(&new)?;
        Ok((study, st.claim_in_transaction(study)?))
    })?;
    store.set_environment(study_id, environment)?;
    let kind = cells.first().map_or("unknown", |c| c.workload.name());
    let workload = store.add_workload(study_id, 0, kind, &opts.label, &opts.params)?;
    let mut cell_ids = Vec::new();
    for (idx, c) in cells.iter().enumerate() {
        let id = store.add_cell(
            study_id,
            &NewCell {
                idx,
                label: c.label.clone(),
                factors: c.factors.clone(),
                config: c.config.clone(),
            },
        )?;
        store.set_series(id, workload, SeriesStatus::Pending, None, None)?;
        cell_ids.push(id);
    }
    Ok((study_id, claim, workload, cell_ids))
}

/// The repetition policy of an engine command: `repeat` counted repetitions per cell,
/// interleaved, no cache action, no warm-up of the loop's own.
fn fixed(opts: &AdhocOptions<'_>) -> Repetitions {
    let n = opts.repeat.max(1);
    Repetitions {
        min: n,
        max: n,
        target_ci: None,
        detect: None,
        extend: false,
        budget: None,
        order: Order::Interleaved,
        seed: None,
        cache: CachePolicy::None,
        warmup: 0,
        settle: opts.settle,
        timeline: opts.timeline,
        disturbed: opts.disturbed,
    }
}

/// Run every cell `opts.repeat` times, interleaved (repetition 1 of every cell, then
/// repetition 2, …), recording each (cell, repetition) as a trial as soon as it completes.
/// The first failure ends the run; completed trials stay stored. `on_rep` gets the
/// repetition number (1-based), the cell index, the metrics and the cell's engine.
pub fn run_cells<W: Workload>(
    mut opts: AdhocOptions<'_>,
    cells: &mut [AdhocCell<W>],
    target: &Target,
    obs: &dyn Observer,
    on_rep: CellHook<'_, W>,
) -> Result<CellsResult> {
    let environment = crate::sysinfo::environment(Some(target.dir()));
    let mut memory;
    let stored = opts.store.is_some();
    let store: &mut Store = match opts.store.take() {
        Some(st) => st,
        None => {
            memory = Store::open_in_memory()?;
            &mut memory
        }
    };
    let kind = cells.first().map_or("unknown", |c| c.workload.name());
    let (study_id, claim, workload, cell_ids) = record(store, &opts, cells, &environment)?;
    // Held until the run returns, however it returns; a killed run leaves it behind for
    // `fslab cleanup` to find.
    let _claim = claim;
    let reps = fixed(&opts);
    let wk = WorkloadKind::of(kind).unwrap_or(WorkloadKind::Fdtree);
    let cell_labels: Vec<String> = cells.iter().map(|c| c.label.clone()).collect();
    let mut engines = Typed {
        cells,
        hook: on_rep,
    };
    let mut runner = Runner {
        live: BTreeMap::new(),
        ground: Ground::Dir {
            target: target.clone(),
            sources: Sources::of(Devices::for_target(target.dir())),
            engines: &mut engines,
            owned: Owned::new(study_id),
        },
        name: opts.label.clone(),
        rule: reps.rule(),
        reps,
        cell_labels,
        store,
        study_id,
        series: (0..cell_ids.len()).map(|c| Series::new(c, 0, wk)).collect(),
        counted: vec![Vec::new(); cell_ids.len()],
        cell_ids,
        wl_ids: vec![workload],
        cell_errors: BTreeMap::new(),
        order_index: 0,
        show: Show::Command {
            obs,
            steps: opts.steps,
        },
        spent_before: 0.0,
        started: Instant::now(),
        leftovers: Vec::new(),
        disturbance: Disturbance::default(),
        failure: None,
    };
    let interrupted = runner.main_loop(0)?;
    runner.end(interrupted)?;
    Ok(Ran {
        study: stored.then_some(study_id),
        disturbed: std::mem::take(&mut runner.disturbance),
        reps: std::mem::take(&mut runner.counted),
        environment,
        error: runner.failure.take(),
    })
}
