//! Recording a study in the store before it runs, or finding it again for `--resume`:
//! the study row, environment, cells, workloads and series (new studies in one
//! transaction), the checks that the file is unchanged, the claim that keeps every other
//! process off the study while this one runs it, and the series as earlier runs left them.

use super::super::env;
use super::super::series::{Series, SeriesState};
use crate::plan::{Order, Study};
use crate::provision::exec::Exec;
use crate::provision::state::WorkDir;
use crate::stats::adaptive::{Rule, StopReason};
use crate::store::TrialRow;
use crate::store::{self, Claim, NewCell, NewStudy, Store};
use crate::store::{SeriesStatus, StudyStatus};
use anyhow::Result;
use std::collections::BTreeMap;

/// Study id, cell ids by plan index, workload ids by index, seed, and whether resumed.
pub type Ids = (i64, Vec<i64>, Vec<i64>, u64, bool);

/// Record a new study with its cells, workloads and series in one transaction, so a kill
/// at any point leaves either nothing or a complete plan to resume. The study is claimed for
/// this process in the same transaction: no `--resume` can take it before this run starts.
pub fn create_new(
    st: &mut Store,
    exec: &dyn Exec,
    workdir: &WorkDir,
    study: &Study,
    command_line: &str,
) -> Result<(Ids, Claim)> {
    let environment = env::capture(exec, workdir.root(), study);
    st.immediate("recording the new study", |st| {
        let ids = create_rows(st, &environment, study, command_line)?;
        let claim = st.claim_in_transaction(ids.0)?;
        Ok((ids, claim))
    })
}

fn create_rows(
    st: &mut Store,
    environment: &[(String, String)],
    study: &Study,
    command_line: &str,
) -> Result<Ids> {
    let seed = study.repetitions.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
    });
    let id = st.begin_study(&NewStudy {
        kind: crate::vocab::StudyKind::Study,
        name: study.name().to_string(),
        description: study.file.description.clone(),
        command_line: command_line.to_string(),
        spec: study.text.clone(),
        spec_hash: study.hash.clone(),
        seed: (study.repetitions.order == Order::Randomized).then_some(seed),
    })?;
    st.set_environment(id, environment)?;
    let mut cells = Vec::new();
    for c in &study.cells {
        cells.push(st.add_cell(
            id,
            &NewCell {
                idx: c.idx,
                label: c.label.clone(),
                factors: c.factors.clone(),
                config: serde_json::json!({"fs": c.fs, "workloads": c.workloads}),
            },
        )?);
    }
    let mut wls = Vec::new();
    for w in &study.workloads {
        wls.push(st.add_workload(
            id,
            w.idx,
            w.spec.kind(),
            &w.spec.label(),
            &serde_json::to_value(&w.spec)?,
        )?);
    }
    for &c in &cells {
        for &w in &wls {
            st.set_series(c, w, SeriesStatus::Pending, None, None)?;
        }
    }
    Ok((id, cells, wls, seed, false))
}

/// Find the study to resume, claim it for this process before anything else is done (a
/// second `--resume` of the same study stops here), and check that it may be resumed.
pub fn open_existing(
    st: &mut Store,
    workdir: &WorkDir,
    exec: &dyn Exec,
    study: &Study,
) -> Result<(Ids, Claim)> {
    let Some(row) = st.latest_study_named(study.name())? else {
        crate::bail_usage!(
            "no study named '{}' to resume in {}",
            study.name(),
            st.path().display()
        );
    };
    let claim = st.claim(row.id)?;
    if row.spec_hash != study.hash {
        crate::bail_usage!(
            "the study file changed since study {} was started (its content hash differs); restore the file, or run without --resume to start a new study",
            row.id
        );
    }
    if row.status == StudyStatus::Complete {
        crate::bail_usage!(
            "study {} ('{}') is already complete; see `fslab show {}`, or run without --resume to start a new one",
            row.id,
            row.name,
            row.id
        );
    }
    // The claim above is what keeps runs apart; this also catches a run of an fslab from
    // before claims existed that works in the same directory.
    if let Some((_, pid)) = workdir
        .live_studies()
        .into_iter()
        .find(|(s, _)| *s == row.id)
    {
        crate::bail_usage!(
            "study {} is being run right now by process {pid}; wait for it or stop it first",
            row.id
        );
    }
    let cells = st.cells(row.id)?;
    let wls = st.workloads(row.id)?;
    if cells.len() != study.cells.len() || wls.len() != study.workloads.len() {
        crate::bail_usage!(
            "study {} has {} cells and {} workloads in the store but the file has {} and {}; run without --resume",
            row.id,
            cells.len(),
            wls.len(),
            study.cells.len(),
            study.workloads.len()
        );
    }
    note_changes(st, exec, workdir, study, row.id)?;
    st.set_study_status(row.id, StudyStatus::Running)?;
    let damaged = || {
        crate::error::usage(format!(
            "study {} in the store has cells or workloads out of order; run without --resume",
            row.id
        ))
    };
    // Each row's id at its position in the plan.
    let by_idx = |rows: Vec<(i64, i64)>| -> Result<Vec<i64>> {
        let mut ids = vec![0; rows.len()];
        for (idx, id) in rows {
            *usize::try_from(idx)
                .ok()
                .and_then(|i| ids.get_mut(i))
                .ok_or_else(damaged)? = id;
        }
        Ok(ids)
    };
    let cell_ids = by_idx(cells.iter().map(|c| (c.idx, c.id)).collect())?;
    let wl_ids = by_idx(wls.iter().map(|w| (w.idx, w.id)).collect())?;
    let seed = row.seed.map(|s| s as u64).unwrap_or(0);
    Ok(((row.id, cell_ids, wl_ids, seed, true), claim))
}

/// Store the environment as it is now where it differs from the study's first run (each
/// difference also said on stderr), with the time of this resume.
fn note_changes(
    st: &mut Store,
    exec: &dyn Exec,
    workdir: &WorkDir,
    study: &Study,
    id: i64,
) -> Result<()> {
    let before: BTreeMap<String, String> = st.environment(id)?.into_iter().collect();
    let n = before
        .keys()
        .filter(|k| k.starts_with("resumed_at"))
        .count()
        + 1;
    let mut diff = vec![(format!("resumed_at.{n}"), store::now())];
    for (k, v) in env::capture(exec, workdir.root(), study) {
        if before.get(&k).is_some_and(|b| *b != v) {
            eprintln!("fslab: warning: {k} changed since the study started: now '{v}'");
            diff.push((format!("{k}@resume.{n}"), v));
        }
    }
    st.set_environment(id, &diff)
}

/// Every series of the study (cell by cell, workload by workload) with the repetitions
/// earlier runs stored (`trials`): one their run marked complete stays done; one whose rule
/// is met by what is stored is marked complete now.
pub fn load_series(
    st: &mut Store,
    study: &Study,
    study_id: i64,
    (cell_ids, wl_ids): (&[i64], &[i64]),
    trials: &[TrialRow],
    (rule, design): (&Rule, &std::collections::BTreeMap<(usize, usize), u32>),
) -> Result<Vec<Series>> {
    let prior_series = st.series(study_id)?;
    let mut series = Vec::new();
    for c in &study.cells {
        for w in &study.workloads {
            let mut s = Series::new(c.idx, w.idx, w.spec.workload_kind());
            s.floor = design.get(&(c.idx, w.idx)).copied().unwrap_or(0);
            let (cid, wid) = (cell_ids[c.idx], wl_ids[w.idx]);
            let mine: Vec<_> = trials
                .iter()
                .filter(|t| t.cell_id == cid && t.workload_id == wid)
                .collect();
            s.load(&mine);
            let prior = prior_series
                .iter()
                .find(|p| p.cell_id == cid && p.workload_id == wid);
            if let Some(p) = prior.filter(|p| p.status == SeriesStatus::Complete) {
                s.state = SeriesState::Done(p.stop_reason.unwrap_or(StopReason::Fixed));
            } else if let Some(reason) = s.decide(rule) {
                st.set_series(cid, wid, SeriesStatus::Complete, Some(reason), None)?;
            }
            series.push(s);
        }
    }
    Ok(series)
}
