//! Small pieces every part of the HTML report uses: escaping, code spans, tables that scroll
//! inside their own box, and a chart in its figure. A leaf: it imports nothing of the
//! report's pages, so [`super::html`], [`super::html_parts`] and [`super::html_tail`] can all
//! use it without importing each other.

use super::charts::Chart;
use std::fmt::Write as _;

/// Escape text for HTML.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// `` `text` `` as `<code>text</code>` (in already escaped text).
pub(crate) fn code_spans(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split('`').enumerate() {
        if i > 0 {
            out.push_str(if i % 2 == 1 { "<code>" } else { "</code>" });
        }
        out.push_str(part);
    }
    if s.matches('`').count() % 2 == 1 {
        out.push_str("</code>");
    }
    out
}

/// Open a table inside a box that scrolls sideways when the table is wider than the page
/// (IOzone's 13 tests, many configurations); [`table_end`] closes both.
pub(crate) fn table_head(o: &mut String, cols: &[&str]) {
    o.push_str("<div class=\"scroll\"><table><thead><tr>");
    for c in cols {
        let _ = write!(o, "<th>{}</th>", esc(c));
    }
    o.push_str("</tr></thead><tbody>\n");
}

/// Close what [`table_head`] opened.
pub(crate) fn table_end(o: &mut String) {
    o.push_str("</tbody></table></div>\n");
}

/// A chart in its figure, with its caption.
pub(crate) fn chart_figure(o: &mut String, c: &Chart) {
    let _ = writeln!(
        o,
        "<figure class=\"chart chart-{}\">{}<figcaption>{}</figcaption></figure>",
        c.kind,
        c.svg,
        esc(&c.caption)
    );
}
