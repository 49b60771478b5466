//! Finding what to report in the store: a study or run by id or name, or one cell of it,
//! and for `fslab compare` the merge of two such sources into one data set whose cells carry
//! a `source` factor, so the ordinary comparison machinery pairs them.
//!
//! Source syntax (documented in `doc/reports.md`):
//! - `12` — study or run 12; `quickstart` — the newest study or run with that name;
//! - `12:3` — the cell with plan index 3 of study 12 (as `fslab show 12` lists them);
//! - `12/journal=64MB` or `12/journal=64MB,fs=xfs` — the one cell with those factor levels;
//! - `12/LABEL` — the cell with that exact label.

use super::model::{Environment, Source};
use crate::metric::Histogram;
use crate::store::{Store, StudyData, StudyRow};
use crate::store::{StudyStatus, TrialStatus};
use anyhow::Result;
use std::collections::BTreeMap;

/// A loaded source: its description, its data (restricted to the chosen cell), its
/// histograms by trial id.
pub struct Loaded {
    /// Description for the report.
    pub source: Source,
    /// The data.
    pub data: StudyData,
    /// Histograms of its counted trials.
    pub histograms: BTreeMap<i64, Vec<Histogram>>,
    /// Whether the spec chose one cell.
    pub is_cell: bool,
}

enum CellSel {
    Idx(i64),
    Named(String),
}

fn split_spec(spec: &str) -> (&str, Option<CellSel>) {
    if let Some((s, c)) = spec.split_once(':') {
        if let Ok(i) = c.trim().parse::<i64>() {
            return (s.trim(), Some(CellSel::Idx(i)));
        }
    }
    if let Some((s, c)) = spec.split_once('/') {
        if !s.trim().is_empty() {
            return (s.trim(), Some(CellSel::Named(c.trim().to_string())));
        }
    }
    (spec.trim(), None)
}

fn recent(store: &Store, only_with_results: bool) -> Result<String> {
    let shown: Vec<String> = store
        .list_studies()?
        .into_iter()
        .filter(|s| !(only_with_results && s.status == StudyStatus::Failed))
        .take(8)
        .map(|s| format!("{} {} ({})", s.id, s.name, s.kind))
        .collect();
    Ok(shown.join(", "))
}

/// Find a study or run by id or by name (the newest with that name).
pub fn find_study(store: &Store, what: &str) -> Result<StudyRow> {
    let found = match what.parse::<i64>() {
        Ok(id) => store.study(id)?,
        Err(_) => store.list_studies()?.into_iter().find(|s| s.name == what),
    };
    if let Some(s) = found {
        return Ok(s);
    }
    let list = recent(store, false)?;
    if list.is_empty() {
        crate::bail_usage!(
            "no study or run '{what}': the database {} is empty; run `fslab study run FILE` or an engine command such as `fslab fdtree` first",
            store.path().display()
        );
    }
    crate::bail_usage!(
        "no study or run '{what}' in {}; recent: {list} (see `fslab list`)",
        store.path().display()
    )
}

fn choose_cell(data: &StudyData, sel: &CellSel, spec: &str) -> Result<i64> {
    let ids = |keep: &dyn Fn(&crate::store::CellRow) -> bool| -> Vec<i64> {
        data.cells
            .iter()
            .filter(|c| keep(c))
            .map(|c| c.id)
            .collect()
    };
    let found = match sel {
        CellSel::Idx(i) => ids(&|c| c.idx == *i),
        CellSel::Named(name) => {
            let wanted: Vec<(String, String)> = name
                .split([',', ' '])
                .filter(|t| !t.is_empty())
                .filter_map(|t| t.split_once('='))
                .map(|(f, l)| (f.trim().to_string(), l.trim().to_string()))
                .collect();
            let by_label = ids(&|c| &c.label == name);
            if by_label.is_empty() && !wanted.is_empty() {
                ids(&|c| wanted.iter().all(|w| c.factors.contains(w)))
            } else {
                by_label
            }
        }
    };
    let listing = || {
        data.cells
            .iter()
            .take(20)
            .map(|c| format!("{}:{} ({})", data.study.id, c.idx, c.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found.as_slice() {
        [id] => Ok(*id),
        [] => crate::bail_usage!(
            "no cell '{spec}' in {} {} '{}'; cells: {}",
            data.study.kind,
            data.study.id,
            data.study.name,
            listing()
        ),
        _ => crate::bail_usage!(
            "'{spec}' matches {} cells of {} {}; name one with more factor levels or ID:INDEX; cells: {}",
            found.len(),
            data.study.kind,
            data.study.id,
            listing()
        ),
    }
}

/// Load a source by its spec, restricted to the chosen cell, and check that it has at least
/// one counted repetition.
pub fn load(store: &Store, spec: &str) -> Result<Loaded> {
    let (what, cell) = split_spec(spec);
    let row = find_study(store, what)?;
    let Some(mut data) = store.load(row.id)? else {
        crate::bail_usage!("study {} disappeared while reading it; try again", row.id);
    };
    let is_cell = cell.is_some();
    if let Some(sel) = cell {
        let id = choose_cell(&data, &sel, spec)?;
        data.cells.retain(|c| c.id == id);
        data.trials.retain(|t| t.cell_id == id);
        data.series.retain(|s| s.cell_id == id);
    }
    if !data.trials.iter().any(|t| t.status == TrialStatus::Ok) {
        let failed: Vec<&crate::store::TrialRow> = data
            .trials
            .iter()
            .filter(|t| t.status == TrialStatus::Failed)
            .collect();
        let why = match failed.first().and_then(|t| t.error.as_deref()) {
            Some(e) => format!("{} failed repetition(s), first: {e}", failed.len()),
            None => match data.cells.iter().find_map(|c| c.error.as_deref()) {
                Some(e) => format!("a cell failed: {e}"),
                None => "no repetition was recorded".to_string(),
            },
        };
        let others = recent(store, true)?;
        crate::bail_usage!(
            "{} {} '{}' ({spec}) has no completed repetitions (status {}; {why}); nothing to report; recent: {others}",
            row.kind,
            row.id,
            row.name,
            row.status
        );
    }
    let mut histograms = BTreeMap::new();
    for t in data.trials.iter().filter(|t| t.status == TrialStatus::Ok) {
        let h = store.histograms(t.id)?;
        if !h.is_empty() {
            histograms.insert(t.id, h);
        }
    }
    super::spelling::normalize(&mut data, &mut histograms);
    Ok(Loaded {
        source: Source {
            spec: spec.to_string(),
            id: row.id,
            kind: row.kind,
            name: row.name.clone(),
            description: row.description.clone(),
            status: row.status,
            command_line: row.command_line.clone(),
            tool_version: row.tool_version.clone(),
            created_at: row.created_at.clone(),
            finished_at: row.finished_at.clone(),
            resumed_at: {
                let mut at: Vec<(u32, String)> = data
                    .environment
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_prefix("resumed_at.")?.parse().ok()?, v.clone()))
                    })
                    .collect();
                at.sort();
                at.into_iter().map(|(_, v)| v).collect()
            },
        },
        data,
        histograms,
        is_cell,
    })
}

/// The environment of a loaded source.
pub fn environment(l: &Loaded) -> Environment {
    Environment {
        source: l.source.spec.clone(),
        entries: l.data.environment.clone(),
    }
}

/// Merge two sources for `fslab compare`: workloads paired by kind and label (or the only
/// workload of each side), cells tagged with a `source` factor (A's spec first, so A is the
/// baseline), cell ids kept (they are unique in the store).
pub fn merge(a: Loaded, b: Loaded) -> Result<(StudyData, BTreeMap<i64, Vec<Histogram>>)> {
    if let Some(c) = a
        .data
        .cells
        .iter()
        .find(|c| b.data.cells.iter().any(|d| d.id == c.id))
    {
        crate::bail_usage!(
            "'{}' and '{}' overlap (both contain cell {} '{}'); compare two different runs, studies or cells",
            a.source.spec,
            b.source.spec,
            c.idx,
            c.label
        );
    }
    // B workload id → A workload id.
    let map = pair_workloads(&a.data, &b.data);
    if map.is_empty() {
        let list = |d: &StudyData| {
            d.workloads
                .iter()
                .map(|w| format!("{} '{}'", w.kind, w.label))
                .collect::<Vec<_>>()
                .join(", ")
        };
        crate::bail_usage!(
            "'{}' and '{}' have no workload in common ({} has {}; {} has {}); compare runs of the same engine",
            a.source.spec,
            b.source.spec,
            a.source.spec,
            list(&a.data),
            b.source.spec,
            list(&b.data)
        );
    }
    let kept_a: Vec<i64> = map.values().copied().collect();
    let mut data = a.data.clone();
    data.study.name = format!("{} vs {}", a.source.spec, b.source.spec);
    data.workloads.retain(|w| kept_a.contains(&w.id));
    let tag = |l: &Loaded, cells: &mut Vec<crate::store::CellRow>, offset: i64| {
        for (i, c) in cells.iter_mut().enumerate() {
            let mut f = vec![("source".to_string(), l.source.spec.clone())];
            if !l.is_cell {
                f.extend(c.factors.iter().cloned());
            }
            c.factors = f;
            c.label = format!("{} · {}", l.source.spec, c.label);
            c.idx = offset + i as i64;
        }
    };
    tag(&a, &mut data.cells, 0);
    let mut cells_b = b.data.cells.clone();
    tag(&b, &mut cells_b, data.cells.len() as i64);
    data.cells.extend(cells_b);
    data.trials.retain(|t| kept_a.contains(&t.workload_id));
    data.series.retain(|s| kept_a.contains(&s.workload_id));
    data.trials.extend(b.data.trials.iter().filter_map(|t| {
        let workload_id = *map.get(&t.workload_id)?;
        Some(crate::store::TrialRow {
            workload_id,
            ..t.clone()
        })
    }));
    data.series.extend(b.data.series.iter().filter_map(|s| {
        let workload_id = *map.get(&s.workload_id)?;
        Some(crate::store::SeriesRow {
            workload_id,
            ..s.clone()
        })
    }));
    let mut hist = a.histograms;
    hist.extend(b.histograms);
    Ok((data, hist))
}

/// Pairs B's workloads with A's: same kind and label, or the only workload of each side when
/// they are of the same kind. B workload id → A workload id.
pub fn pair_workloads(a: &StudyData, b: &StudyData) -> BTreeMap<i64, i64> {
    let mut map = BTreeMap::new();
    for wa in &a.workloads {
        if let Some(wb) = b
            .workloads
            .iter()
            .find(|wb| wb.kind == wa.kind && wb.label == wa.label)
        {
            map.insert(wb.id, wa.id);
        }
    }
    if map.is_empty() && a.workloads.len() == 1 && b.workloads.len() == 1 {
        let (wa, wb) = (&a.workloads[0], &b.workloads[0]);
        if wa.kind == wb.kind {
            map.insert(wb.id, wa.id);
        }
    }
    map
}
