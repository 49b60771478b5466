//! The end of the Markdown report: warnings, the guest calibration, repetitions, the
//! environment and each configuration's provisioning — compact as in the terminal report
//! ([`super::table_tail`]), every entry and command with `--all`.

use super::entries::{series_rows, SERIES_HEADER};
use super::markdown_kit::{esc, header, row, MarkdownExporter};
use super::model::*;
use super::view::Detail;
use std::fmt::Write as _;

/// Warnings to the end.
pub(crate) fn tail(r: &ReportData, exp: &MarkdownExporter, o: &mut String) {
    let _ = writeln!(o, "\n## Warnings\n");
    if r.warnings.is_empty() {
        let _ = writeln!(o, "None.");
    }
    for l in super::warngroups::lines(r, false) {
        let _ = writeln!(o, "- {}", l);
    }
    if let Some(c) = &r.guest_calibration {
        let _ = writeln!(o, "\n## Guest calibration\n");
        let lines = super::calibration::lines(c);
        let (intro, rows) = lines.split_at(2.min(lines.len()));
        let _ = writeln!(o, "{}\n", esc(&intro.join(" ")));
        for l in rows {
            let _ = writeln!(o, "- {}", esc(l.trim()));
        }
    }
    let _ = writeln!(o, "\n## Repetitions\n");
    let h: Vec<String> = SERIES_HEADER.iter().map(|s| s.to_string()).collect();
    header(o, &h, 2..5);
    for r in series_rows(r) {
        let cols: Vec<String> = r.iter().map(|c| esc(c)).collect();
        row(o, &cols);
    }
    let _ = writeln!(o, "\n## Environment\n");
    for e in &r.environments {
        if r.environments.len() > 1 {
            let _ = writeln!(o, "\n### {}\n", esc(&e.source));
        }
        match exp.detail {
            Detail::All => {
                header(o, &["key".into(), "value".into()], 0..0);
                for (k, v) in &e.entries {
                    row(o, &[esc(k), esc(&super::verdict::env_value(k, v))]);
                }
            }
            Detail::Compact => {
                let (lines, left) = super::envsummary::summary(e);
                header(o, &["".into(), "".into()], 0..0);
                for l in &lines {
                    row(o, &[l.label.to_string(), esc(&l.text)]);
                }
                if left > 0 {
                    let _ = writeln!(o, "\nAnd {left} more entries (`--all`).");
                }
            }
        }
    }
    for c in &r.cells {
        if c.commands.is_empty() && c.superblock.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n### Configuration {}\n", esc(&c.label));
        let shown = super::envsummary::shown_commands(c, exp.detail);
        if !shown.is_empty() {
            let _ = writeln!(o, "```sh");
            for cmd in &shown {
                let _ = writeln!(o, "{cmd}");
            }
            let _ = writeln!(o, "```");
        }
        if shown.len() < c.commands.len() {
            let _ = writeln!(
                o,
                "\nAnd {} more commands: images, loop devices, checks (`--all`).",
                c.commands.len() - shown.len()
            );
        }
        if !c.superblock.is_empty() && exp.superblocks {
            let _ = writeln!(
                o,
                "\nSuperblock:\n\n```text\n{}\n```",
                c.superblock.trim_end()
            );
        } else if !c.superblock.is_empty() {
            let _ = writeln!(
                o,
                "\nSuperblock: {} (whole: `--env full`)",
                esc(&super::superblock::summary(&c.superblock))
            );
        }
    }
}
