//! One engine command (`fslab fdtree`, `fslab iozone`, `fslab dbench`) run `--repeat N`
//! times against one directory, every repetition stored as it completes.
//!
//! The run is recorded as a study of kind `run` with one cell (the target) and one
//! workload, so `fslab list`, `show` and `report` treat it like any study. While it runs it
//! holds a claim on that row (process id and start time), and every entry a repetition is
//! about to create in the target is recorded before it exists (`owned_path`): if the process
//! is killed, `fslab cleanup` sees the dead claim and removes exactly those entries.

use crate::metric::Metric;
use crate::store::{self, NewCell, NewStudy, NewTrial, OwnedKind, Store};
use crate::workload::{Creates, Observer, Target, Workload};
use anyhow::Result;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Instant;

/// How to run and record an engine command.
pub struct AdhocOptions<'a> {
    /// Repetitions (at least 1).
    pub repeat: u32,
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
}

/// What an engine command produced.
#[derive(Debug)]
pub struct AdhocResult {
    /// The study id in the store, if recorded.
    pub study: Option<i64>,
    /// Metrics of every completed repetition, in order.
    pub reps: Vec<Vec<Metric>>,
    /// Environment captured at the start.
    pub environment: Vec<(String, String)>,
    /// The error that ended the run early, if any (completed repetitions are kept).
    pub error: Option<anyhow::Error>,
}

/// Called after each completed repetition with its number (1-based) and metrics.
pub type RepHook<'a> = &'a mut dyn FnMut(u32, &[Metric], &dyn Workload);

/// Run `workload` `opts.repeat` times on `target`: a one-cell [`run_cells`] whose cell is
/// the target directory.
pub fn run(
    opts: AdhocOptions<'_>,
    workload: &mut dyn Workload,
    target: &Target,
    obs: &dyn Observer,
    on_rep: RepHook<'_>,
) -> Result<AdhocResult> {
    let label = match &target.fs_type {
        Some(fs) => format!("{} ({fs})", target.dir.display()),
        None => target.dir.display().to_string(),
    };
    let mut cells = [AdhocCell {
        label,
        factors: Vec::new(),
        config: serde_json::json!({"target": target.dir, "fs_type": target.fs_type}),
        workload: Box::new(workload),
    }];
    let r = run_cells(opts, &mut cells, target, obs, &mut |rep, _cell, m, w| {
        on_rep(rep, m, w)
    })?;
    Ok(AdhocResult {
        study: r.study,
        reps: r.reps.into_iter().next().unwrap_or_default(),
        environment: r.environment,
        error: r.error,
    })
}

/// One cell of a multi-cell engine run (for example one (file size, record size) point of an
/// IOzone sweep): its label and factors in the store, and the engine that runs it.
pub struct AdhocCell<'a> {
    /// Human label, e.g. `file_size=1024k record_size=64k`.
    pub label: String,
    /// Factor name and level, e.g. `[("file_size", "1024k"), ("record_size", "64k")]`.
    pub factors: Vec<(String, String)>,
    /// The cell's resolved configuration, stored as JSON.
    pub config: serde_json::Value,
    /// The engine for this cell.
    pub workload: Box<dyn Workload + 'a>,
}

/// What a multi-cell engine command produced.
#[derive(Debug)]
pub struct CellsResult {
    /// The study id in the store, if recorded.
    pub study: Option<i64>,
    /// Per cell, the metrics of every completed repetition, in order.
    pub reps: Vec<Vec<Vec<Metric>>>,
    /// Environment captured at the start.
    pub environment: Vec<(String, String)>,
    /// The error that ended the run early, if any (completed repetitions are kept).
    pub error: Option<anyhow::Error>,
}

/// Record, before they exist, the entries the next repetition will create.
fn record_intended(
    st: &Store,
    study: i64,
    made: &[Creates],
    owned: &mut HashMap<PathBuf, i64>,
) -> Result<()> {
    for c in made {
        if owned.contains_key(&c.path) {
            continue;
        }
        let kind = match c.kind {
            "fdtree_tree" => OwnedKind::FdtreeTree,
            "iozone_file" => OwnedKind::IozoneFile,
            "dbench_dir" => OwnedKind::DbenchDir,
            other => anyhow::bail!("internal: unknown kind of created entry '{other}'"),
        };
        let path = std::path::absolute(&c.path)?;
        let id = st.add_owned_path(study, &path, kind, &c.detail)?;
        owned.insert(c.path.clone(), id);
    }
    Ok(())
}

/// After a repetition's cleanup: what it made is either gone (`removed`) or kept on purpose
/// (`-C`, `-w`, `--keep`, or left because it holds a user's files): then its device and
/// inode numbers are recorded, so only that very entry is ever taken for fslab's.
/// A removed entry is forgotten, so a later repetition that makes it again records it anew.
fn record_outcome(st: &Store, made: &[Creates], owned: &mut HashMap<PathBuf, i64>) -> Result<()> {
    for c in made {
        let Some(&id) = owned.get(&c.path) else {
            continue;
        };
        match std::fs::symlink_metadata(&c.path) {
            Ok(md) => st.set_owned_created(id, md.dev(), md.ino())?,
            Err(_) => {
                st.set_owned_removed(id)?;
                owned.remove(&c.path);
            }
        }
    }
    Ok(())
}

/// Called after each completed (repetition, cell) with the repetition (1-based), the cell
/// index and its metrics.
pub type CellHook<'a> = &'a mut dyn FnMut(u32, usize, &[Metric], &dyn Workload);

/// Run every cell `opts.repeat` times, interleaved (repetition 1 of every cell, then
/// repetition 2, …), recording each (cell, repetition) as a trial as soon as it completes.
/// The first failure ends the run; completed trials stay stored.
pub fn run_cells(
    mut opts: AdhocOptions<'_>,
    cells: &mut [AdhocCell<'_>],
    target: &Target,
    obs: &dyn Observer,
    on_rep: CellHook<'_>,
) -> Result<CellsResult> {
    let environment = crate::sysinfo::environment(Some(target.dir()));
    let mut ids: Option<(i64, Vec<i64>, i64)> = None;
    // Held until this function returns, however it returns; a killed run leaves it behind
    // for `fslab cleanup` to find. Taken in the transaction that records the run, so no
    // unclaimed `running` row is ever visible.
    let mut _claim = None;
    if let Some(st) = opts.store.as_deref_mut() {
        let new = NewStudy {
            kind: "run",
            name: opts.name.clone(),
            description: String::new(),
            command_line: opts.command_line.clone(),
            spec: opts.params.to_string(),
            spec_hash: String::new(),
            seed: None,
        };
        let (study, claim) = st.immediate("recording the run", |st| {
            let study = st.begin_study(&new)?;
            Ok((study, st.claim_in_transaction(study)?))
        })?;
        _claim = Some(claim);
        st.set_environment(study, &environment)?;
        let kind = cells.first().map_or("unknown", |c| c.workload.name());
        let wl = st.add_workload(study, 0, kind, &opts.label, &opts.params)?;
        let mut cell_ids = Vec::new();
        for (idx, c) in cells.iter().enumerate() {
            let id = st.add_cell(
                study,
                &NewCell {
                    idx,
                    label: c.label.clone(),
                    factors: c.factors.clone(),
                    config: c.config.clone(),
                },
            )?;
            st.set_cell_status(id, "running", None)?;
            st.set_series(id, wl, "running", None, None)?;
            cell_ids.push(id);
        }
        ids = Some((study, cell_ids, wl));
    }
    let mut owned: HashMap<PathBuf, i64> = HashMap::new();

    let mut reps: Vec<Vec<Vec<Metric>>> = vec![Vec::new(); cells.len()];
    let mut error = None;
    let mut order_index = 0u32;
    let mut failed_cell = None;
    'outer: for rep in 1..=opts.repeat.max(1) {
        for (ci, cell) in cells.iter_mut().enumerate() {
            let workload = cell.workload.as_mut();
            let started_at = store::now();
            let t = Instant::now();
            let prepared = workload.prepare(target);
            let made = workload.creates(target);
            let result = match (prepared, opts.store.as_deref_mut(), &ids) {
                (Ok(()), Some(st), Some((study, _, _))) => {
                    record_intended(st, *study, &made, &mut owned)
                }
                (r, _, _) => r,
            }
            .and_then(|_| workload.run(target, obs));
            let cleaned = workload.cleanup(target);
            if let Some(st) = opts.store.as_deref_mut() {
                record_outcome(st, &made, &mut owned)?;
            }
            let result = match (result, cleaned) {
                (Ok(m), Ok(())) => Ok(m),
                (Err(e), Ok(())) => Err(e),
                (Err(e), Err(c)) => {
                    // The run's error decides the outcome; what cleanup left is said too.
                    eprintln!("fslab: warning: {c:#}");
                    Err(e)
                }
                (Ok(_), Err(e)) => Err(e),
            };
            let wall = t.elapsed().as_secs_f64();
            let histograms = if result.is_ok() {
                workload.take_histograms()
            } else {
                Vec::new()
            };
            if let (Some(st), Some((_, cell_ids, wl))) = (opts.store.as_deref_mut(), &ids) {
                let (status, err_text, metrics): (&str, Option<String>, &[Metric]) = match &result {
                    Ok(m) => ("ok", None, m),
                    Err(e) => ("failed", Some(format!("{e:#}")), &[]),
                };
                st.record_trial(&NewTrial {
                    cell: cell_ids[ci],
                    workload: *wl,
                    repetition: if status == "ok" { rep } else { 0 },
                    order_index,
                    status,
                    error: err_text,
                    cache_policy: "none",
                    started_at,
                    finished_at: store::now(),
                    wall_seconds: wall,
                    metrics,
                    histograms: &histograms,
                })?;
            }
            order_index += 1;
            match result {
                Ok(m) => {
                    on_rep(rep, ci, &m, workload);
                    reps[ci].push(m);
                }
                Err(e) => {
                    error = Some(e);
                    failed_cell = Some(ci);
                    break 'outer;
                }
            }
        }
    }

    if let (Some(st), Some((study, cell_ids, wl))) = (opts.store.as_deref_mut(), &ids) {
        let interrupted = error
            .as_ref()
            .is_some_and(|e| e.chain().any(|c| c.is::<crate::signal::Interrupted>()));
        let msg = error.as_ref().map(|e| format!("{e:#}"));
        let any_done = reps.iter().any(|r| !r.is_empty());
        for (ci, &cell) in cell_ids.iter().enumerate() {
            let full = reps[ci].len() as u32 == opts.repeat.max(1);
            let (cs, m) = if failed_cell == Some(ci) {
                ("failed", msg.as_deref())
            } else if full {
                ("complete", None)
            } else {
                (
                    "failed",
                    Some("not run: the run stopped at an earlier error"),
                )
            };
            st.set_series(cell, *wl, cs, Some("fixed"), m)?;
            st.set_cell_status(cell, cs, m)?;
        }
        let status = match (&error, interrupted) {
            (None, _) => "complete",
            (Some(_), true) => "interrupted",
            (Some(_), false) if any_done => "partial",
            (Some(_), false) => "failed",
        };
        st.set_study_status(*study, status)?;
    }
    Ok(CellsResult {
        study: ids.map(|i| i.0),
        reps,
        environment,
        error,
    })
}
