//! The end of the terminal report: warnings, the guest calibration, repetitions, the
//! environment and each configuration's provisioning. Compact, repetitions that went as
//! planned are one line, the environment a few lines ([`super::envsummary`]) and each
//! configuration its `mkfs` and `mount` lines; `--all` prints every entry and command.

use super::entries::{series_rows, SERIES_HEADER};
use super::model::*;
use super::table_kit::{TableExporter, Text};
use super::textfit::{wrap_command, Align, TextTable};
use super::view::Detail;

/// Warnings to the end.
pub(crate) fn tail(r: &ReportData, exp: &TableExporter, o: &mut Text) {
    o.heading("Warnings");
    if r.warnings.is_empty() {
        o.line("none");
    }
    let listed = match exp.detail {
        Detail::All => super::warngroups::LISTED,
        Detail::Compact => 1,
    };
    for l in super::warngroups::lines_listing(r, true, listed) {
        o.para(&l, "- ", "  ");
    }
    if let Some(c) = &r.guest_calibration {
        o.heading("Guest calibration");
        // Its lines are aligned in columns: as they are where they fit.
        for l in super::calibration::lines(c) {
            if super::textfit::width(&l) <= o.width {
                o.line(&l);
            } else if let Some(at) = l.find("  host ") {
                // A ratio's words wrap under its `host` column.
                let (label, text) = l.split_at(at + 2);
                o.para(text, label, &" ".repeat(super::textfit::width(label)));
            } else {
                let indent: String = l.chars().take_while(|c| *c == ' ').collect();
                o.para(l.trim_start(), &indent, &format!("{indent}  "));
            }
        }
    }
    repetitions(r, exp.detail, o);
    environment(r, exp, o);
}

/// Whether a series went as planned: every repetition counted, nothing failed, discarded
/// or left out, stopped by its rule.
fn plain(s: &SeriesInfo) -> bool {
    use crate::stats::adaptive::StopReason;
    s.failed == 0
        && s.discarded == 0
        && s.rerun == 0
        && s.dropped == 0
        && s.error.is_none()
        && s.status == crate::store::SeriesStatus::Complete
        && matches!(
            s.stop_reason,
            None | Some(StopReason::Fixed | StopReason::CiMet | StopReason::PowerMet)
        )
}

fn repetitions(r: &ReportData, detail: Detail, o: &mut Text) {
    o.heading("Repetitions");
    let all_plain = r.series.iter().all(plain);
    if detail == Detail::Compact && all_plain && !r.series.is_empty() {
        let mut ns: Vec<usize> = r.series.iter().map(|s| s.ok).collect();
        ns.sort_unstable();
        ns.dedup();
        let n = match ns.as_slice() {
            [n] => n.to_string(),
            [lo, .., hi] => format!("{lo} to {hi}"),
            [] => "0".into(),
        };
        o.para(
            &format!(
                "{n} of each workload in each of {} configurations, all counted and complete (the table: --all)",
                r.cells.len()
            ),
            "",
            "  ",
        );
        return;
    }
    let mut t = TextTable::new(
        SERIES_HEADER
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let align = if (2..5).contains(&i) {
                    Align::Right
                } else {
                    Align::Left
                };
                (h.to_string(), align)
            })
            .collect(),
        2,
    );
    for (s, row) in r.series.iter().zip(series_rows(r)) {
        if detail == Detail::Compact && plain(s) {
            continue;
        }
        t.row(row.to_vec());
    }
    o.table(&t);
    if detail == Detail::Compact {
        let hidden = r.series.iter().filter(|s| plain(s)).count();
        if hidden > 0 {
            o.para(&format!("{hidden} more as planned (all: --all)"), "", "  ");
        }
    }
}

fn environment(r: &ReportData, exp: &TableExporter, o: &mut Text) {
    o.heading("Environment");
    for e in &r.environments {
        if r.environments.len() > 1 {
            o.line(&format!("[{}]", e.source));
        }
        match exp.detail {
            Detail::All => {
                let key_w = e
                    .entries
                    .iter()
                    .map(|(k, _)| k.len())
                    .max()
                    .unwrap_or(0)
                    .min(28);
                for (k, v) in &e.entries {
                    let value = super::verdict::env_value(k, v);
                    let first = format!("  {k:<key_w$} ");
                    let rest = " ".repeat(key_w + 3);
                    o.para(&value, &first, &rest);
                }
            }
            Detail::Compact => {
                let (lines, left) = super::envsummary::summary(e);
                for l in &lines {
                    o.para(&l.text, &format!("  {:<9} ", l.label), &" ".repeat(12));
                }
                if left > 0 {
                    o.line(&format!("  and {left} more entries (--all)"));
                }
            }
        }
    }
    let mut hidden_all = Vec::new();
    let mut cut = false;
    for c in &r.cells {
        if c.commands.is_empty() && c.superblock.is_empty() {
            continue;
        }
        o.line("");
        o.para(&format!("-- configuration {} --", c.label), "", "   ");
        let mut hidden = 0;
        for cmd in &c.commands {
            if exp.detail == Detail::Compact && !super::envsummary::is_key_command(cmd) {
                hidden += 1;
                continue;
            }
            for l in wrap_command(cmd, o.width, "  ") {
                o.line(&l);
            }
        }
        if !c.superblock.is_empty() && exp.superblocks {
            o.line("  superblock:");
            for l in c.superblock.lines() {
                let l = l.trim_end();
                if super::textfit::width(l) + 4 <= o.width {
                    o.line(&format!("    {l}"));
                } else {
                    o.para(l, "    ", "      ");
                }
            }
        } else if !c.superblock.is_empty() && exp.detail == Detail::All {
            o.para(
                &format!(
                    "superblock: {} (whole: `--env full`)",
                    super::superblock::summary(&c.superblock)
                ),
                "  ",
                "    ",
            );
        } else if !c.superblock.is_empty() {
            // One line: the facts come first (block size, inodes, journal), the features last.
            let summary = super::superblock::summary(&c.superblock);
            let line = format!("  superblock: {summary} (whole: `--env full`)");
            if super::textfit::width(&line) <= o.width {
                o.line(&line);
            } else {
                let line = format!("  superblock: {summary}");
                o.line(&super::textfit::truncate(&line, o.width));
                cut = true;
            }
        }
        hidden_all.push(hidden);
    }
    let hidden: usize = hidden_all.iter().sum();
    let mut not_shown = Vec::new();
    if hidden > 0 {
        not_shown.push(format!(
            "{hidden} more commands (images, loop devices, checks: --all)"
        ));
    }
    if cut {
        not_shown.push("the whole superblocks (--env full)".to_string());
    }
    if !not_shown.is_empty() {
        o.line("");
        o.para(&format!("Not shown: {}.", not_shown.join("; ")), "", "  ");
    }
}
