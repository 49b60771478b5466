//! `fslab list` and `fslab show`.

use crate::cli::{ListArgs, ShowArgs};
use crate::report::runsummary;
use crate::report::view::Detail;
use crate::report::Presentation;
use crate::store::TrialStatus;
use crate::store::{ListFilter, StudyData};
use anyhow::Result;
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
    if a.output.is_json() {
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
    let rows: Vec<[String; 7]> = studies
        .into_iter()
        .map(|l| {
            let s = l.study;
            [
                s.id.to_string(),
                s.kind.to_string(),
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
                short_command(&s.command_line),
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
const LIST_HEADER: [&str; 7] = [
    "id",
    "kind",
    "name",
    "status",
    "created (UTC)",
    "fs",
    "command",
];

/// A stored command line as `fslab list` shows it: the program as `fslab`, without the
/// database option (the list is of that database), so what tells runs apart comes first.
fn short_command(cmd: &str) -> String {
    let mut words = cmd.split_whitespace();
    let mut out = vec!["fslab"];
    words.next();
    while let Some(w) = words.next() {
        if w == "--db" {
            words.next();
        } else if !w.starts_with("--db=") {
            out.push(w);
        }
    }
    out.join(" ")
}

/// `s` in at most `w` columns: shortened in the middle with `…` (a name's start and its end
/// tell it apart).
fn elide(s: &str, w: usize) -> String {
    elide_at(s, w, 1, 2)
}

/// `s` within `w` columns, shortened inside: `num/den` of the kept characters from its start.
fn elide_at(s: &str, w: usize, num: usize, den: usize) -> String {
    use crate::report::textfit::width;
    if width(s) <= w {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let keep = w.saturating_sub(1);
    let head = keep * num / den;
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// One line per run or study, each within `width`: the columns as wide as their widest
/// entry (names and file systems capped, shortened in the middle), the command line in the
/// rest, shortened in the middle (`fslab show ID` and `fslab list --json` have it whole, and
/// the target).
fn list_lines(rows: &[[String; 7]], width: usize) -> Vec<String> {
    use crate::report::textfit::width as w;
    const CAPS: [usize; 6] = [8, 6, 24, 12, 16, 12];
    let mut widths: Vec<usize> = (0..6)
        .map(|c| {
            rows.iter()
                .map(|r| w(&r[c]))
                .chain([w(LIST_HEADER[c])])
                .max()
                .unwrap_or(0)
                .min(CAPS[c].max(w(LIST_HEADER[c])))
        })
        .collect();
    // A narrow terminal: the date (without its year), then the name, then the file systems
    // give way, so the command keeps at least a few words.
    const MIN: [usize; 6] = [0, 0, 6, 0, 11, 4];
    const MIN_COMMAND: usize = 26;
    while widths.iter().sum::<usize>() + 2 * 6 + MIN_COMMAND > width {
        let Some(c) = [4, 2, 5].into_iter().find(|&c| widths[c] > MIN[c]) else {
            break;
        };
        widths[c] = if c == 4 { MIN[c] } else { widths[c] - 1 };
    }
    let fixed: usize = widths.iter().sum::<usize>() + 2 * 6;
    let command = width.saturating_sub(fixed).max(4);
    let line = |cells: [&str; 7]| {
        let mut l = String::new();
        for (c, text) in cells.iter().take(6).enumerate() {
            // A date too wide loses its year: `11-26 21:12`.
            let t = if c == 4
                && w(text) > widths[c]
                && text.starts_with(|d: char| d.is_ascii_digit())
            {
                text.chars().skip(5).collect()
            } else if c == 4 && w(text) > widths[c] {
                "created UTC".to_string()
            } else {
                elide(text, widths[c])
            };
            let pad = " ".repeat(widths[c] - w(&t));
            // The id to the right, every other column to the left.
            let cell = if c == 0 { pad + &t } else { t + &pad };
            l.push_str(&cell);
            l.push_str("  ");
        }
        // Shortened inside, more of its start kept (the subcommand): runs that differ only
        // at the end of their command line (another target) stay apart.
        l.push_str(&elide_at(cells[6], command, 3, 5));
        l.trim_end().to_string()
    };
    let rows = rows.iter().map(|r| line(r.each_ref().map(String::as_str)));
    std::iter::once(line(LIST_HEADER)).chain(rows).collect()
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
    if a.output.is_json() {
        return print_json(&d);
    }
    let p = Presentation {
        detail: if a.all { Detail::All } else { Detail::Compact },
        width: super::report::text_width(a.width, false),
        ..Presentation::default()
    };
    if d.trials.iter().any(|t| t.status == TrialStatus::Ok) {
        // The compact report of `fslab report ID`.
        return super::report::print_table(&store, a.id, &p);
    }
    print_unfinished(&d, p.width);
    Ok(())
}

/// `fslab show --format json`: the study, its environment, cells, workloads and series, and
/// each series' summary.
fn print_json(d: &crate::store::StudyData) -> Result<()> {
    let mut groups = Vec::new();
    for c in &d.cells {
        for w in &d.workloads {
            let sums = runsummary::summarize_reps(&reps_of(d, c.id, w.id));
            groups.push(serde_json::json!({"cell": c.label, "workload": w.label, "summary": runsummary::to_json(&sums)}));
        }
    }
    let doc = serde_json::json!({"schema": "fslab.show.v1", "study": d.study, "environment": crate::report::model::env_json(&d.environment),
        "cells": d.cells, "workloads": d.workloads, "series": d.series, "summaries": groups});
    crate::outln!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}

/// A run or study with no completed repetition: what was stored, and why nothing was
/// counted (each cell's status and error, and its failed repetitions' errors).
fn print_unfinished(d: &crate::store::StudyData, width: usize) {
    let s = &d.study;
    // A line `depth` levels in (two spaces each), wrapped one level deeper.
    let fit = |depth: usize, text: String| {
        let (first, rest) = ("  ".repeat(depth), "  ".repeat(depth + 1));
        for l in crate::report::textfit::wrap(&text, width, &first, &rest) {
            crate::outln!("{l}");
        }
    };
    let head = format!("{} {}: {} [{}]", s.kind, s.id, s.name, s.status);
    fit(0, format!("{head} — no completed repetitions"));
    let finished = s.finished_at.as_deref().unwrap_or("-");
    fit(1, format!("created {}, finished {finished}", s.created_at));
    fit(1, format!("command: {}", s.command_line));
    for c in &d.cells {
        let cell = format!("cell {}:{} {} [{}]", s.id, c.idx, c.label, c.status);
        fit(1, cell);
        if let Some(e) = &c.error {
            fit(2, format!("error: {e}"));
        }
        for t in &d.trials {
            if t.cell_id == c.id && t.status == TrialStatus::Failed {
                let e = t.error.as_deref().unwrap_or("no error recorded");
                fit(2, format!("failed repetition: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod list_tests {
    use super::*;

    #[test]
    fn one_line_per_run_within_the_width() {
        let row = |id: &str, name: &str, cmd: &str| {
            [
                id.to_string(),
                "study".to_string(),
                name.to_string(),
                "complete".to_string(),
                "2026-11-26 21:12".to_string(),
                "ext3,xfs,btrfs,jfs".to_string(),
                short_command(cmd),
            ]
        };
        let rows = [
            row("12", "a-very-long-study-name-that-goes-on-and-on", "./target/release/fslab --db /tmp/r.db study run examples/studies/dbench-logs.toml --workdir /tmp/w -q"),
            row("3", "quickstart", "fslab study run examples/studies/quickstart.toml"),
        ];
        for width in [60, 100, 200] {
            let lines = list_lines(&rows, width);
            assert_eq!(lines.len(), 3, "a header and one line per run: {lines:#?}");
            assert!(
                lines
                    .iter()
                    .all(|l| crate::report::textfit::width(l) <= width),
                "{width}: {lines:#?}"
            );
            assert!(lines[1].starts_with("12  study  a-"), "{lines:#?}");
            assert!(lines[2].starts_with(" 3  study  q"), "{lines:#?}");
            assert!(lines[0].contains("created"), "{lines:#?}");
        }
        assert!(list_lines(&rows, 100)[1].starts_with("12  study  a-very-long"));
        let wide = list_lines(&rows, 200);
        assert!(wide[1]
            .ends_with("fslab study run examples/studies/dbench-logs.toml --workdir /tmp/w -q"));
        // Too long for 100 columns: its start and its end are kept.
        let line = &list_lines(&rows, 100)[1];
        assert!(
            line.contains("fslab study run") && line.contains('…'),
            "{line}"
        );
        assert!(line.ends_with("/tmp/w -q"), "{line}");
    }

    #[test]
    fn commands_show_fslab_and_not_the_database() {
        assert_eq!(
            short_command("./target/release/fslab --db /tmp/r.db fdtree -l 3 --db=/x -o /mnt"),
            "fslab fdtree -l 3 -o /mnt"
        );
        assert_eq!(short_command("fslab list"), "fslab list");
    }
}
