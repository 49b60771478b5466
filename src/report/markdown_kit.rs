//! The Markdown report's exporter settings and its table rows. A leaf of the Markdown
//! report: [`super::markdown`] and [`super::markdown_tail`] both use it without importing
//! each other.

use super::view::Detail;
use std::fmt::Write as _;

/// Renders [`ReportData`] as Markdown.
#[derive(Debug, Clone, Copy)]
pub struct MarkdownExporter {
    /// Print every configuration's superblock dump (`--env full`); else one line of it.
    pub superblocks: bool,
    /// The compact report or every table (`--all`).
    pub detail: Detail,
}

/// Escape text for a table cell.
pub(crate) fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn row(o: &mut String, cells: &[String]) {
    let _ = writeln!(o, "| {} |", cells.join(" | "));
}

/// A header row; columns in `right` are right-aligned (numbers).
pub(crate) fn header(o: &mut String, cells: &[String], right: std::ops::Range<usize>) {
    row(o, cells);
    let seps: Vec<String> = (0..cells.len())
        .map(|i| {
            if right.contains(&i) {
                "---:".into()
            } else {
                "---".into()
            }
        })
        .collect();
    row(o, &seps);
}
