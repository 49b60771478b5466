//! Text that fits a width: the terminal report's lines are at most as wide as the terminal
//! (100 columns when the output is not a terminal). Prose is word-wrapped with a hanging
//! indent ([`wrap`]), command lines are broken with shell continuations ([`wrap_command`]),
//! and tables ([`TextTable`]) are drawn without vertical borders (columns two spaces apart, a
//! rule under the header, as fio and hyperfine print theirs); a table wider than the width is
//! stacked — its value columns split into blocks, each repeating the label columns — and a
//! single column still too wide has its text wrapped.
//!
//! Widths are display columns (`unicode-width`: `±`, `–`, `µ` and `↳` are one column each).

use unicode_width::UnicodeWidthStr;

/// The width when the output is not a terminal (a file, a pipe).
pub const DEFAULT_WIDTH: usize = 100;
/// The narrowest width reports are laid out for (narrower terminals get this).
pub const MIN_WIDTH: usize = 40;
/// Spaces between two columns.
const GAP: usize = 2;

/// The display width of one line.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `text` word-wrapped to `width` columns: the first line starts with `first`, the others
/// with `rest` (a hanging indent). A word longer than a line is broken.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut has_word = false;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if has_word && self::width(&line) + 1 + self::width(word) > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            has_word = false;
        }
        if has_word {
            line.push(' ');
        }
        // A word wider than a whole line is broken at the width.
        let mut w = word;
        loop {
            let room = width.saturating_sub(self::width(&line)).max(1);
            if has_word || self::width(w) <= room {
                break;
            }
            let (head, tail) = split_at_width(w, room);
            line.push_str(head);
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            w = tail;
        }
        line.push_str(w);
        has_word = true;
    }
    if has_word || lines.is_empty() {
        lines.push(line);
    }
    lines.iter().map(|l| l.trim_end().to_string()).collect()
}

/// `s` cut to `w` columns, ending in `…` when it was longer.
pub fn truncate(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let (head, _) = split_at_width(s, w.saturating_sub(1).max(1));
    format!("{}…", head.trim_end())
}

/// The longest prefix of `s` at most `w` columns wide (at least one character), and the rest.
fn split_at_width(s: &str, w: usize) -> (&str, &str) {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw > w && i > 0 {
            return s.split_at(i);
        }
        used += cw;
    }
    (s, "")
}

/// A command line as `$ cmd`, broken at spaces with ` \\` at the end of every line but the
/// last and continuation lines indented further, so it can be pasted into a shell as it is.
/// A word longer than a line (a long path) is broken with a `\\` right after it and goes on
/// at the start of the next line, which the shell joins back into one word.
pub fn wrap_command(cmd: &str, width: usize, indent: &str) -> Vec<String> {
    let rest = format!("{indent}    ");
    let mut lines = Vec::new();
    let mut line = format!("{indent}$ ");
    let mut has_word = false;
    for word in cmd.split(' ').filter(|w| !w.is_empty()) {
        // Room for ` \\` on a continued line.
        if has_word && self::width(&line) + 1 + self::width(word) + 2 > width {
            lines.push(format!("{line} \\"));
            line = rest.clone();
            has_word = false;
        }
        if has_word {
            line.push(' ');
        }
        let mut w = word;
        while self::width(&line) + self::width(w) > width {
            let room = width.saturating_sub(self::width(&line) + 1).max(1);
            let (head, tail) = split_at_width(w, room);
            lines.push(format!("{line}{head}\\"));
            line = String::new();
            w = tail;
        }
        line.push_str(w);
        has_word = true;
    }
    lines.push(line);
    lines
}

/// How a column's text is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Labels.
    Left,
    /// Numbers.
    Right,
}

/// A row of a [`TextTable`].
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    /// One text per column; a `\n` starts another line of the same row.
    Cells(Vec<String>),
    /// A line across the table that heads the rows under it (a fio job, an operation).
    Group(String),
}

/// A table for the terminal: a header (a `\n` in a header starts its second line), rows,
/// and how many leading columns label the rows (repeated in every block when the table is
/// stacked).
#[derive(Debug, Clone, PartialEq)]
pub struct TextTable {
    /// Header text and alignment of each column.
    pub columns: Vec<(String, Align)>,
    /// The rows.
    pub rows: Vec<Row>,
    /// Leading label columns.
    pub keys: usize,
}

impl TextTable {
    /// A table with these headers and alignments and `keys` label columns.
    pub fn new(columns: Vec<(String, Align)>, keys: usize) -> TextTable {
        TextTable {
            columns,
            rows: Vec::new(),
            keys,
        }
    }

    /// Add a row of cells.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(Row::Cells(cells));
    }

    /// Add a group line.
    pub fn group(&mut self, label: impl Into<String>) {
        self.rows.push(Row::Group(label.into()));
    }

    /// The natural width of column `c`: its widest header or cell line; with `narrow`, its
    /// header may wrap at spaces (only its longest word counts).
    fn natural(&self, c: usize, narrow: bool) -> usize {
        let header = if narrow {
            self.columns[c].0.split_whitespace().map(width).max()
        } else {
            self.columns[c].0.lines().map(width).max()
        }
        .unwrap_or(0);
        let cells = self
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Cells(cells) => cells.get(c),
                Row::Group(_) => None,
            })
            .flat_map(|t| t.lines().map(width))
            .max()
            .unwrap_or(0);
        header.max(cells)
    }

    /// The table in lines at most `max` columns wide: one block when it fits, else blocks of
    /// value columns, each with the label columns, separated by an empty line.
    pub fn render(&self, max: usize) -> Vec<String> {
        let max = max.max(MIN_WIDTH);
        let n = self.columns.len();
        let keys = self.keys.min(n);
        let mut widths: Vec<usize> = (0..n).map(|c| self.natural(c, false)).collect();
        if widths.iter().sum::<usize>() + GAP * n.saturating_sub(1) > max {
            // Too wide: headers wrap at their spaces (`dir_create` over `(dirs/s)`).
            widths = (0..n).map(|c| self.natural(c, true)).collect();
        }
        // Label columns take at most half the width; longer labels wrap.
        let key_room = max / 2;
        let key_total = |w: &[usize]| w[..keys].iter().sum::<usize>() + GAP * keys;
        while keys > 0 && key_total(&widths) > key_room + GAP * keys {
            let widest = (0..keys).max_by_key(|&c| widths[c]).unwrap_or(0);
            let over = key_total(&widths) - key_room - GAP * keys;
            widths[widest] = widths[widest].saturating_sub(over).max(8);
            if widths[..keys].iter().all(|&w| w <= 8) {
                break;
            }
        }
        let room = max.saturating_sub(key_total(&widths)).max(8);
        // A value column wider than the room left beside the labels wraps.
        for w in widths.iter_mut().skip(keys) {
            *w = (*w).min(room);
        }
        let mut blocks: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        let mut used = 0;
        for (c, &w) in widths.iter().enumerate().take(n).skip(keys) {
            let add = w + if current.is_empty() { 0 } else { GAP };
            if !current.is_empty() && used + add > room {
                blocks.push(std::mem::take(&mut current));
                used = 0;
            }
            used += w + if current.is_empty() { 0 } else { GAP };
            current.push(c);
        }
        if !current.is_empty() || blocks.is_empty() {
            blocks.push(current);
        }
        let mut out = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                out.push(String::new());
            }
            let cols: Vec<usize> = (0..keys).chain(block.iter().copied()).collect();
            self.render_block(&cols, &widths, max, &mut out);
        }
        out
    }

    /// One block: the columns `cols` at `widths`.
    fn render_block(&self, cols: &[usize], widths: &[usize], max: usize, out: &mut Vec<String>) {
        let header: Vec<Vec<String>> = cols
            .iter()
            .map(|&c| cell_lines(&self.columns[c].0, widths[c]))
            .collect();
        emit(&header, cols, widths, &self.columns, out);
        out.push(
            cols.iter()
                .map(|&c| "─".repeat(widths[c]))
                .collect::<Vec<_>>()
                .join(&" ".repeat(GAP)),
        );
        for r in &self.rows {
            match r {
                Row::Group(label) => out.extend(wrap(label, max, "", "  ")),
                Row::Cells(cells) => {
                    let lines: Vec<Vec<String>> = cols
                        .iter()
                        .map(|&c| cell_lines(cells.get(c).map_or("", String::as_str), widths[c]))
                        .collect();
                    emit(&lines, cols, widths, &self.columns, out);
                }
            }
        }
    }
}

/// A cell's lines, each wrapped to `w`.
fn cell_lines(text: &str, w: usize) -> Vec<String> {
    text.lines()
        .flat_map(|l| {
            if width(l) <= w {
                vec![l.to_string()]
            } else {
                let lead: String = l.chars().take_while(|c| *c == ' ').collect();
                wrap(l, w, &lead, &lead)
            }
        })
        .collect()
}

/// The lines of one row (or the header) whose cells have these lines.
fn emit(
    cells: &[Vec<String>],
    cols: &[usize],
    widths: &[usize],
    spec: &[(String, Align)],
    out: &mut Vec<String>,
) {
    let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
    for i in 0..height {
        let mut line = String::new();
        for (k, &c) in cols.iter().enumerate() {
            if k > 0 {
                line.push_str(&" ".repeat(GAP));
            }
            let text = cells[k].get(i).map_or("", String::as_str);
            let pad = widths[c].saturating_sub(width(text));
            match spec[c].1 {
                Align::Left => {
                    line.push_str(text);
                    line.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(text);
                }
            }
        }
        out.push(line.trim_end().to_string());
    }
}

#[cfg(test)]
#[path = "textfit_tests.rs"]
mod tests;
