//! `fslab list` and `fslab show`.

use crate::cli::{ListArgs, ShowArgs, TextFormat};
use crate::report::runsummary;
use crate::store::TrialStatus;
use crate::store::{ListFilter, StudyData};
use anyhow::Result;
use comfy_table::{presets, Table};
use std::path::PathBuf;

/// `--since`: a date (UTC midnight), an RFC 3339 time, or a while ago (`12h`, `7d`); as the
/// store's RFC 3339 UTC text with milliseconds, which compares as text.
pub(crate) fn parse_since(s: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String> {
    use chrono::{NaiveDate, SecondsFormat, TimeZone, Utc};
    let t = s.trim();
    let at = if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        d.and_hms_opt(0, 0, 0).map(|n| Utc.from_utc_datetime(&n))
    } else if let Ok(d) = chrono::DateTime::parse_from_rfc3339(t) {
        Some(d.with_timezone(&Utc))
    } else if let Ok(ago) = crate::units::parse_duration(t) {
        chrono::Duration::from_std(ago)
            .ok()
            .and_then(|a| now.checked_sub_signed(a))
    } else {
        None
    };
    match at {
        Some(at) => Ok(at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        None => crate::bail_usage!(
            "--since {s}: not a date, time or duration; use e.g. --since 2026-11-24, --since 2026-11-24T08:00:00Z or --since 7d"
        ),
    }
}

/// `fslab list`.
pub fn list(a: ListArgs, db: Option<PathBuf>) -> Result<()> {
    let filter = ListFilter {
        name: a.name.clone(),
        kind: a.kind.clone(),
        since: a
            .since
            .as_deref()
            .map(|s| parse_since(s, chrono::Utc::now()))
            .transpose()?,
        limit: a.limit,
    };
    let store = super::open_store_read_only(db)?;
    let studies = store.list_filtered(&filter)?;
    if a.json || a.format == TextFormat::Json {
        crate::outln!("{}", serde_json::to_string_pretty(&studies)?);
        return Ok(());
    }
    if studies.is_empty() {
        let filtered = a.name.is_some() || a.kind.is_some() || a.since.is_some();
        if filtered && !store.list_studies()?.is_empty() {
            crate::outln!(
                "no runs or studies in {} match; `fslab list` without --name, --kind and --since shows them all",
                store.path().display()
            );
        } else {
            crate::outln!(
                "no runs stored in {} yet; run e.g. `fslab fdtree -o DIR`",
                store.path().display()
            );
        }
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
        "target",
        "fs",
        "command",
    ]);
    for l in studies {
        let s = l.study;
        // The whole command line: two runs that differ only at its end must not look alike.
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
            l.target,
            l.fs,
            s.command_line,
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
    if a.json || a.format == TextFormat::Json {
        let mut groups = Vec::new();
        for c in &d.cells {
            for w in &d.workloads {
                let sums = runsummary::summarize_reps(&reps_of(&d, c.id, w.id));
                groups.push(serde_json::json!({"cell": c.label, "workload": w.label, "summary": runsummary::to_json(&sums)}));
            }
        }
        let doc = serde_json::json!({"schema": "fslab.show.v1", "study": d.study, "environment": crate::report::model::env_json(&d.environment),
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
        crate::outln!("  {k:<22} {}", crate::report::verdict::env_value(k, v));
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
            guest_calibration: crate::report::calibration_load::load(
                &store,
                &d.environment,
                &s.created_at,
            )
            .unwrap_or(None),
        },
        &crate::report::ReportOptions::default(),
    )?;
    crate::out!("{}", crate::report::table::summary_text(&report));
    Ok(())
}
