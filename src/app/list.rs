//! `fslab list` and `fslab show`.

use crate::cli::{ListArgs, ShowArgs, TextFormat};
use crate::report::runsummary;
use crate::store::TrialStatus;
use crate::store::{ListFilter, StudyData};
use anyhow::Result;
use crate::report::view::Detail;
use crate::report::{Format, Presentation};
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
    let rows: Vec<[String; 8]> = studies
        .into_iter()
        .map(|l| {
            let s = l.study;
            [
                s.id.to_string(),
                s.kind,
                s.name,
                s.status.to_string(),
                // To the minute: the id tells runs of the same minute apart.
                s.created_at
                    .replace('T', " ")
                    .trim_end_matches('Z')
                    .chars()
                    .take(16)
                    .collect(),
                l.fs,
                l.target,
                s.command_line,
            ]
        })
        .collect();
    let width = super::report::text_width(None, false);
    for line in list_lines(&rows, width) {
        crate::outln!("{line}");
    }
    Ok(())
}

/// The columns of `fslab list`.
const LIST_HEADER: [&str; 8] = [
    "id",
    "kind",
    "name",
    "status",
    "created (UTC)",
    "fs",
    "target",
    "command",
];

/// `s` in at most `w` columns: shortened in the middle with `…` (a path's start and its end
/// tell it apart).
fn elide(s: &str, w: usize) -> String {
    use crate::report::textfit::width;
    if width(s) <= w {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let keep = w.saturating_sub(1);
    let head = keep / 2;
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// One line per run or study, each within `width`: the columns as wide as their widest
/// entry (names, file systems and targets capped, shortened in the middle), the command line
/// in the rest, shortened at its end (`fslab show ID` prints it whole).
fn list_lines(rows: &[[String; 8]], width: usize) -> Vec<String> {
    use crate::report::textfit::width as w;
    const CAPS: [usize; 7] = [8, 6, 24, 12, 16, 10, 28];
    let widths: Vec<usize> = (0..7)
        .map(|c| {
            rows.iter()
                .map(|r| w(&r[c]))
                .chain([w(LIST_HEADER[c])])
                .max()
                .unwrap_or(0)
                .min(CAPS[c].max(w(LIST_HEADER[c])))
        })
        .collect();
    let fixed: usize = widths.iter().sum::<usize>() + 2 * 7;
    let command = width.saturating_sub(fixed).max(8);
    let line = |cells: [&str; 8]| {
        let mut l = String::new();
        for (c, text) in cells.iter().take(7).enumerate() {
            let t = elide(text, widths[c]);
            let pad = widths[c] - w(&t);
            if c == 0 {
                l.push_str(&" ".repeat(pad));
                l.push_str(&t);
            } else {
                l.push_str(&t);
                l.push_str(&" ".repeat(pad));
            }
            l.push_str("  ");
        }
        let cmd = cells[7];
        if w(cmd) <= command {
            l.push_str(cmd);
        } else {
            let cut: String = cmd.chars().take(command.saturating_sub(1)).collect();
            l.push_str(&cut);
            l.push('…');
        }
        l.trim_end().to_string()
    };
    let mut out = vec![line(LIST_HEADER)];
    for r in rows {
        out.push(line([
            &r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6], &r[7],
        ]));
    }
    out
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
    let p = Presentation {
        detail: if a.all { Detail::All } else { Detail::Compact },
        width: super::report::text_width(a.width, false),
        ..Presentation::default()
    };
    if d.trials.iter().any(|t| t.status == TrialStatus::Ok) {
        // The compact report of `fslab report ID`.
        let loaded = crate::report::select::load(&store, &a.id.to_string())?;
        let input = crate::report::Input {
            title: loaded.source.name.clone(),
            sources: vec![loaded.source.clone()],
            environments: vec![crate::report::select::environment(&loaded)],
            data: &loaded.data,
            histograms: &loaded.histograms,
            differences: Vec::new(),
            guest_calibration: crate::report::calibration_load::for_source(&store, &loaded),
        };
        let report = crate::report::build(&input, &crate::report::ReportOptions::default())?;
        let bytes = crate::report::exporter_for(Format::Table, &p).render(&report)?;
        crate::out!("{}", String::from_utf8_lossy(&bytes));
        return Ok(());
    }
    // Nothing completed: what was stored, and why nothing was counted.
    let s = &d.study;
    let fit = |text: &str, first: &str, rest: &str| {
        for l in crate::report::textfit::wrap(text, p.width, first, rest) {
            crate::outln!("{l}");
        }
    };
    fit(
        &format!("{} {}: {} [{}] — no completed repetitions", s.kind, s.id, s.name, s.status),
        "",
        "  ",
    );
    fit(
        &format!(
            "created {}, finished {}",
            s.created_at,
            s.finished_at.as_deref().unwrap_or("-")
        ),
        "  ",
        "    ",
    );
    fit(&format!("command: {}", s.command_line), "  ", "    ");
    for c in &d.cells {
        fit(
            &format!("cell {}:{} {} [{}]", d.study.id, c.idx, c.label, c.status),
            "  ",
            "    ",
        );
        if let Some(e) = &c.error {
            fit(&format!("error: {e}"), "    ", "      ");
        }
        for t in d
            .trials
            .iter()
            .filter(|t| t.cell_id == c.id && t.status == TrialStatus::Failed)
        {
            fit(
                &format!(
                    "failed repetition: {}",
                    t.error.as_deref().unwrap_or("no error recorded")
                ),
                "    ",
                "      ",
            );
        }
    }
    Ok(())
}

