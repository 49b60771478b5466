//! `fslab list` and `fslab show`.

use crate::cli::{ListArgs, ShowArgs};
use crate::report::runsummary;
use crate::store::StudyData;
use crate::store::TrialStatus;
use anyhow::Result;
use comfy_table::{presets, Table};
use std::path::PathBuf;

/// `fslab list`.
pub fn list(a: ListArgs, db: Option<PathBuf>) -> Result<()> {
    let store = super::open_store_read_only(db)?;
    let studies = store.list_studies()?;
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&studies)?);
        return Ok(());
    }
    if studies.is_empty() {
        crate::outln!(
            "no runs stored in {} yet; run e.g. `fslab fdtree -o DIR`",
            store.path().display()
        );
        return Ok(());
    }
    let mut t = Table::new();
    t.load_preset(presets::UTF8_HORIZONTAL_ONLY);
    t.set_header(vec![
        "id",
        "kind",
        "name",
        "status",
        "created (UTC)",
        "command",
    ]);
    for s in studies {
        let cmd: String = s.command_line.chars().take(60).collect();
        t.add_row(vec![
            s.id.to_string(),
            s.kind,
            s.name,
            s.status.to_string(),
            s.created_at
                .replace('T', " ")
                .trim_end_matches('Z')
                .chars()
                .take(19)
                .collect(),
            cmd,
        ]);
    }
    crate::outln!("{t}");
    Ok(())
}

/// Samples of the `ok` trials of one cell × workload, grouped per repetition.
pub fn reps_of(d: &StudyData, cell: i64, workload: i64) -> Vec<Vec<crate::metric::Metric>> {
    d.trials
        .iter()
        .filter(|t| t.cell_id == cell && t.workload_id == workload && t.status == TrialStatus::Ok)
        .map(|t| t.samples.clone())
        .collect()
}

/// `fslab show ID`.
pub fn show(a: ShowArgs, db: Option<PathBuf>) -> Result<()> {
    let store = super::open_store_read_only(db)?;
    let Some(d) = store.load(a.id)? else {
        let ids: Vec<String> = store
            .list_studies()?
            .iter()
            .take(10)
            .map(|s| s.id.to_string())
            .collect();
        if ids.is_empty() {
            crate::bail_usage!(
                "no run {} in {}: the database is empty",
                a.id,
                store.path().display()
            );
        }
        crate::bail_usage!(
            "no run {} in {}; recent ids: {} (see `fslab list`)",
            a.id,
            store.path().display(),
            ids.join(", ")
        );
    };
    if a.json {
        let mut groups = Vec::new();
        for c in &d.cells {
            for w in &d.workloads {
                let sums = runsummary::summarize_reps(&reps_of(&d, c.id, w.id));
                groups.push(serde_json::json!({"cell": c.label, "workload": w.label, "summary": runsummary::to_json(&sums)}));
            }
        }
        let doc = serde_json::json!({"schema": "fslab.show.v1", "study": d.study, "environment": d.environment,
            "cells": d.cells, "workloads": d.workloads, "series": d.series, "summaries": groups});
        crate::outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    let s = &d.study;
    crate::outln!("{} {}: {} [{}]", s.kind, s.id, s.name, s.status);
    crate::outln!(
        "  created  {}  finished {}",
        s.created_at,
        s.finished_at.as_deref().unwrap_or("-")
    );
    crate::outln!("  command  {}", s.command_line);
    if !s.description.is_empty() {
        crate::outln!("  about    {}", s.description);
    }
    for (k, v) in &d.environment {
        crate::outln!("  {k:<22} {v}");
    }
    crate::outln!();
    for c in &d.cells {
        let idx = format!("{}:{}", d.study.id, c.idx);
        crate::outln!("  cell {idx:<8} {} [{}]", c.label, c.status);
        if let Some(e) = &c.error {
            crate::outln!("    error: {e}");
        }
        for t in d
            .trials
            .iter()
            .filter(|t| t.cell_id == c.id && t.status == TrialStatus::Failed)
        {
            crate::outln!(
                "    failed repetition: {}",
                t.error.as_deref().unwrap_or("no error recorded")
            );
        }
    }
    // The per-workload tables, comparisons and warnings of `fslab report`.
    let report = crate::report::build(
        &crate::report::Input {
            title: s.name.clone(),
            sources: Vec::new(),
            environments: vec![crate::report::model::Environment {
                source: s.id.to_string(),
                entries: d.environment.clone(),
            }],
            data: &d,
            histograms: &std::collections::BTreeMap::new(),
            differences: Vec::new(),
        },
        &crate::report::ReportOptions::default(),
    )?;
    crate::out!("{}", crate::report::table::summary_text(&report));
    Ok(())
}
