//! One engine command (`fslab fdtree`, `fslab iozone`, `fslab dbench`) run `--repeat N`
//! times against one directory, every repetition stored as it completes.
//!
//! The run is recorded as a study of kind `run` with one cell (the target) and one
//! workload, so `fslab list`, `show` and `report` treat it like any study.

use crate::metric::Metric;
use crate::store::{self, NewCell, NewStudy, NewTrial, Store};
use crate::workload::{Observer, Target, Workload};
use anyhow::Result;
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

/// Run `workload` `opts.repeat` times on `target`.
pub fn run(
    mut opts: AdhocOptions<'_>,
    workload: &mut dyn Workload,
    target: &Target,
    obs: &dyn Observer,
    on_rep: RepHook<'_>,
) -> Result<AdhocResult> {
    let environment = crate::sysinfo::environment(Some(target.dir()));
    let mut ids = None;
    if let Some(st) = opts.store.as_deref_mut() {
        let study = st.begin_study(&NewStudy {
            kind: "run",
            name: opts.name.clone(),
            description: String::new(),
            command_line: opts.command_line.clone(),
            spec: opts.params.to_string(),
            spec_hash: String::new(),
            seed: None,
        })?;
        st.set_environment(study, &environment)?;
        let label = match &target.fs_type {
            Some(fs) => format!("{} ({fs})", target.dir.display()),
            None => target.dir.display().to_string(),
        };
        let cell = st.add_cell(
            study,
            &NewCell {
                idx: 0,
                label,
                factors: Vec::new(),
                config: serde_json::json!({"target": target.dir, "fs_type": target.fs_type}),
            },
        )?;
        let wl = st.add_workload(study, 0, workload.name(), &opts.label, &opts.params)?;
        st.set_cell_status(cell, "running", None)?;
        st.set_series(cell, wl, "running", None, None)?;
        ids = Some((study, cell, wl));
    }

    let mut reps = Vec::new();
    let mut error = None;
    for rep in 1..=opts.repeat.max(1) {
        let started_at = store::now();
        let t = Instant::now();
        let result = workload
            .prepare(target)
            .and_then(|_| workload.run(target, obs));
        let cleaned = workload.cleanup(target);
        let result = match (result, cleaned) {
            (Ok(m), Ok(())) => Ok(m),
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
        };
        let wall = t.elapsed().as_secs_f64();
        let histograms = if result.is_ok() {
            workload.take_histograms()
        } else {
            Vec::new()
        };
        if let (Some(st), Some((_, cell, wl))) = (opts.store.as_deref_mut(), ids) {
            let (status, err_text, metrics): (&str, Option<String>, &[Metric]) = match &result {
                Ok(m) => ("ok", None, m),
                Err(e) => ("failed", Some(format!("{e:#}")), &[]),
            };
            st.record_trial(&NewTrial {
                cell,
                workload: wl,
                repetition: if status == "ok" { rep } else { 0 },
                order_index: rep - 1,
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
        match result {
            Ok(m) => {
                on_rep(rep, &m, workload);
                reps.push(m);
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }

    if let (Some(st), Some((study, cell, wl))) = (opts.store.as_deref_mut(), ids) {
        let interrupted = error
            .as_ref()
            .is_some_and(|e| e.chain().any(|c| c.is::<crate::signal::Interrupted>()));
        let (status, cell_status) = match (&error, interrupted) {
            (None, _) => ("complete", "complete"),
            (Some(_), true) => ("interrupted", "failed"),
            (Some(_), false) if !reps.is_empty() => ("partial", "failed"),
            (Some(_), false) => ("failed", "failed"),
        };
        let msg = error.as_ref().map(|e| format!("{e:#}"));
        st.set_series(cell, wl, cell_status, Some("fixed"), msg.as_deref())?;
        st.set_cell_status(cell, cell_status, msg.as_deref())?;
        st.set_study_status(study, status)?;
    }
    Ok(AdhocResult {
        study: ids.map(|i| i.0),
        reps,
        environment,
        error,
    })
}
