//! One engine command (`fslab fdtree`, `fslab iozone`, `fslab dbench`) run `--repeat N`
//! times against one directory, every repetition stored as it completes.
//!
//! The run is recorded as a study of kind `run` whose cells are the command's points (one
//! for fdtree and dbench, one per (file size, record size) for an IOzone sweep) with one
//! workload and a fixed repetition rule, so `fslab list`, `show` and `report` treat it like
//! any study. Every repetition follows the one protocol of [`super::repetition`]. While it
//! runs it holds a claim on its row (process id and start time), and every entry a
//! repetition is about to create is recorded before it exists (`owned_path`), and its device
//! and inode within milliseconds of the engine making it: if the process is killed,
//! `fslab cleanup` sees the dead claim and removes exactly those entries.
//!
//! Unlike a study, an interrupted repetition is stored (as failed, with its error): an
//! engine command cannot be resumed, and the row says that a repetition was cut short.
//!
//! The store side (the claim, the entries recorded before they exist, the final statuses) is
//! `recording.rs`.

mod recording;

use super::progress::Steps;
use super::progress_text::Position;
use super::repetition;
use super::telemetry::{run_observed, Observe, Sources};
use crate::metric::Metric;
use crate::stats::adaptive::{Disturbed, Fate};
use crate::store::Store;
use crate::workload::{Observer, Target, Workload};
use anyhow::Result;
use recording::Recording;

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

/// What an engine command produced.
#[derive(Debug)]
pub struct CellsResult {
    /// The study id in the store, if recorded.
    pub study: Option<i64>,
    /// The repetitions other activity disturbed.
    pub disturbed: Disturbance,
    /// Per cell, the metrics of every completed repetition, in order.
    pub reps: Vec<Vec<Vec<Metric>>>,
    /// Environment captured at the start.
    pub environment: Vec<(String, String)>,
    /// The error that ended the run early, if any (completed repetitions are kept).
    pub error: Option<anyhow::Error>,
}

impl CellsResult {
    /// Whether any repetition of any cell completed.
    pub fn any_done(&self) -> bool {
        self.reps.iter().any(|r| !r.is_empty())
    }
}

/// What a one-cell engine command produced.
#[derive(Debug)]
pub struct AdhocResult {
    /// The study id in the store, if recorded.
    pub study: Option<i64>,
    /// The repetitions other activity disturbed.
    pub disturbed: Disturbance,
    /// Metrics of every completed repetition, in order.
    pub reps: Vec<Vec<Metric>>,
    /// Environment captured at the start.
    pub environment: Vec<(String, String)>,
    /// The error that ended the run early, if any (completed repetitions are kept).
    pub error: Option<anyhow::Error>,
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
    Ok(AdhocResult {
        study: r.study,
        disturbed: r.disturbed,
        reps: r.reps.into_iter().next().unwrap_or_default(),
        environment: r.environment,
        error: r.error,
    })
}

/// Called after each completed (repetition, cell) with the repetition (1-based), the cell
/// index, its metrics and the cell's engine.
pub type CellHook<'a, W> = &'a mut dyn FnMut(u32, usize, &[Metric], &W);

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
    let mut rec = match opts.store.take() {
        Some(st) => Some(Recording::begin(st, &opts, cells, &environment)?),
        None => None,
    };
    let mut reps: Vec<Vec<Vec<Metric>>> = vec![Vec::new(); cells.len()];
    let mut failure: Option<(usize, anyhow::Error)> = None;
    let mut order_index = 0u32;
    let sources = Sources::for_target(target.dir());
    let (reps_n, points) = (opts.repeat.max(1), cells.len());
    // Per cell: disturbed repetitions re-run, and repetitions that took their place (counted
    // or dropped).
    let mut reruns = vec![0u32; points];
    let mut placed = vec![0u32; points];
    let mut disturbance = Disturbance::default();
    'outer: for rep in 1..=reps_n {
        for (ci, cell) in cells.iter_mut().enumerate() {
            let at = Position {
                rep,
                reps: reps_n,
                point: ci + 1,
                points,
            };
            // Under `--disturbed repeat`, until the repetition is quiet (or the limit).
            loop {
                if let Some(s) = opts.steps {
                    s.step_started(at);
                }
                let t0 = std::time::Instant::now();
                let how = Observe {
                    sources: &sources,
                    settle: opts.settle,
                    timeline: opts.timeline,
                };
                let around = rec.as_mut().map(|r| r as &mut dyn repetition::Around);
                let r = run_observed(&mut cell.workload, target, obs, &how, around);
                for w in &r.warnings {
                    eprintln!("fslab: warning: {w}");
                }
                let fate = r.fate(opts.disturbed, true, reruns[ci], reps_n);
                disturbance.add(r.interference.as_deref(), fate);
                if let Some(rec) = rec.as_mut() {
                    let trial = r.row(
                        fate,
                        rec.cells[ci],
                        rec.workload,
                        rep,
                        order_index,
                        "none",
                        true,
                    );
                    rec.store.record_trial(&trial)?;
                }
                order_index += 1;
                let why = r.interference.clone().unwrap_or_default();
                match fate {
                    Fate::Rerun => {
                        reruns[ci] += 1;
                        eprintln!(
                            "fslab: repetition {rep} was disturbed ({why}); stored, left out, and run again (--disturbed repeat)"
                        );
                        continue;
                    }
                    Fate::Drop => {
                        eprintln!(
                            "fslab: repetition {rep} was disturbed ({why}); stored and left out (--disturbed drop)"
                        );
                        placed[ci] += 1;
                        if let Some(s) = opts.steps {
                            s.step_finished(at, t0.elapsed().as_secs_f64());
                        }
                        break;
                    }
                    Fate::Count => {
                        if opts.disturbed == Disturbed::Repeat && !why.is_empty() {
                            eprintln!(
                                "fslab: repetition {rep} was disturbed ({why}); kept: {} repetitions were re-run already, the limit",
                                reruns[ci]
                            );
                        }
                    }
                }
                match r.outcome {
                    repetition::Outcome::Done { metrics, .. } => {
                        if let Some(s) = opts.steps {
                            s.step_finished(at, t0.elapsed().as_secs_f64());
                        }
                        placed[ci] += 1;
                        on_rep(rep, ci, &metrics, &cell.workload);
                        reps[ci].push(metrics);
                    }
                    repetition::Outcome::Failed(e) | repetition::Outcome::Interrupted(e) => {
                        failure = Some((ci, e));
                        break 'outer;
                    }
                }
                break;
            }
        }
    }
    if let Some(rec) = rec.as_mut() {
        rec.finish(
            &reps,
            &placed,
            opts.repeat,
            failure.as_ref().map(|(c, e)| (*c, e)),
        )?;
    }
    Ok(CellsResult {
        study: rec.as_ref().map(|r| r.study),
        disturbed: disturbance,
        reps,
        environment,
        error: failure.map(|(_, e)| e),
    })
}
