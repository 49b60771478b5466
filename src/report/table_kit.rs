//! The terminal report's exporter settings and its output, lines that fit the width. A leaf
//! of the text report: [`super::table`] and [`super::table_tail`] both write through it
//! without importing each other.

use super::textfit::{wrap, TextTable};
use super::view::Detail;
use std::fmt::Write as _;

/// Renders [`ReportData`] as text for a terminal.
#[derive(Debug, Clone, Copy)]
pub struct TableExporter {
    /// Print every configuration's superblock dump (`--env full`); else one line of it.
    pub superblocks: bool,
    /// The compact report or every table (`--all`).
    pub detail: Detail,
    /// The width every line fits in.
    pub width: usize,
}

/// Lines of text, each within the width.
pub(crate) struct Text {
    pub(crate) out: String,
    pub(crate) width: usize,
}

impl Text {
    /// A line as it is (the caller made it fit).
    pub(crate) fn line(&mut self, l: &str) {
        let _ = writeln!(self.out, "{l}");
    }

    /// Prose wrapped to the width: the first line starts with `first`, the others with
    /// `rest`.
    pub(crate) fn para(&mut self, text: &str, first: &str, rest: &str) {
        for l in wrap(text, self.width, first, rest) {
            self.line(&l);
        }
    }

    /// A section heading, after an empty line.
    pub(crate) fn heading(&mut self, h: &str) {
        self.line("");
        self.para(&format!("== {h} =="), "", "   ");
    }

    /// A table fitted to the width.
    pub(crate) fn table(&mut self, t: &TextTable) {
        for l in t.render(self.width) {
            self.line(&l);
        }
    }
}
