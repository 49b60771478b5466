//! The end of the HTML report: warnings, the guest calibration, repetitions, the environment
//! (its summary, every entry folded under it) and each configuration's provisioning (the
//! commands that made its file system, every command and the whole superblock folded).

use super::entries::{series_rows, SERIES_HEADER};
use super::html_kit::{code_spans, esc, table_end, table_head};
use super::model::*;
use super::view::Detail;
use std::fmt::Write as _;

/// Warnings to the end.
pub(crate) fn tail(r: &ReportData, detail: Detail, o: &mut String) {
    o.push_str("<section id=\"warnings\"><h2>Warnings</h2>\n");
    if r.warnings.is_empty() {
        o.push_str("<p>None.</p>\n");
    } else {
        o.push_str("<ul class=\"warnings\">\n");
        for l in super::warngroups::lines(r, false) {
            let _ = writeln!(o, "<li>{}</li>", code_spans(&esc(&l)));
        }
        o.push_str("</ul>\n");
    }
    if let Some(c) = &r.guest_calibration {
        o.push_str("</section>\n<section id=\"guest-calibration\"><h2>Guest calibration</h2>\n");
        let lines = super::calibration::lines(c);
        let (intro, rows) = lines.split_at(2.min(lines.len()));
        let _ = writeln!(o, "<p>{}</p>\n<ul>", esc(&intro.join(" ")));
        for l in rows {
            let _ = writeln!(o, "<li>{}</li>", esc(l.trim()));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</section>\n<section id=\"repetitions\"><h2>Repetitions</h2>\n");
    table_head(o, &SERIES_HEADER);
    for row in series_rows(r) {
        o.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if (2..5).contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(o, "<td{class}>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    table_end(o);
    environment(r, detail, o);
}

/// Every entry of an environment as a table.
fn entries(e: &Environment, o: &mut String) {
    table_head(o, &["key", "value"]);
    for (k, v) in &e.entries {
        let _ = writeln!(
            o,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(&super::verdict::env_value(k, v))
        );
    }
    table_end(o);
}

fn environment(r: &ReportData, detail: Detail, o: &mut String) {
    o.push_str("</section>\n<section id=\"environment\"><h2>Environment</h2>\n");
    for e in &r.environments {
        if r.environments.len() > 1 {
            let _ = writeln!(o, "<h3>{}</h3>", esc(&e.source));
        }
        if detail == Detail::All {
            entries(e, o);
            continue;
        }
        let (lines, _) = super::envsummary::summary(e);
        o.push_str("<div class=\"scroll\"><table><tbody>\n");
        for l in &lines {
            let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", l.label, esc(&l.text));
        }
        table_end(o);
        let _ = writeln!(
            o,
            "<details><summary>All {} entries</summary>",
            e.entries.len()
        );
        entries(e, o);
        o.push_str("</details>\n");
    }
    for c in &r.cells {
        if c.commands.is_empty() && c.superblock.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<h3>Configuration {}</h3>", esc(&c.label));
        let key = super::envsummary::shown_commands(c, detail);
        if !key.is_empty() {
            let text: Vec<&str> = key.iter().map(|s| s.as_str()).collect();
            let _ = writeln!(o, "<pre>{}</pre>", esc(&text.join("\n")));
        }
        if key.len() < c.commands.len() {
            let _ = writeln!(
                o,
                "<details><summary>All {} commands</summary><pre>{}</pre></details>",
                c.commands.len(),
                esc(&c.commands.join("\n"))
            );
        }
        if !c.superblock.is_empty() {
            let _ = writeln!(
                o,
                "<details><summary>Superblock: {}</summary><pre>{}</pre></details>",
                esc(&super::superblock::summary(&c.superblock)),
                esc(c.superblock.trim_end())
            );
        }
    }
    o.push_str("</section>\n");
}
