//! Warnings grouped for reading: one line per kind of warning and advice, with a count, the
//! first few places named ("…and 7 more") and the advice once; the terminal shows at most
//! about ten lines and says how to see every warning (`--warnings all`). A group of one is
//! its warning's own line.

use super::model::*;
use crate::stats::Thresholds;

/// Places a group line names before "…and N more".
pub const LISTED: usize = 3;
/// Warning lines the terminal shows by default, the last one saying how to see the rest.
pub const TERMINAL_LINES: usize = 10;

/// What a group of this kind is about, for its line.
fn title(kind: WarningKind, t: &Thresholds) -> String {
    match kind {
        WarningKind::Failed => "Failed repetitions".into(),
        WarningKind::FewRepetitions => "One repetition only".into(),
        WarningKind::MultipleComparisons => {
            "Differences that do not hold up after adjusting for multiple comparisons".into()
        }
        WarningKind::CacheDataset => "Data set under 2× RAM".into(),
        WarningKind::CacheDevice => "Reads faster than the device".into(),
        WarningKind::TooShort => format!(
            "Phases under {} s whose time varies by more than {:.0}%, too short to trust",
            t.min_phase_seconds,
            t.max_cv * 100.0
        ),
        WarningKind::HighCv => format!("Coefficient of variation above {:.0}%", t.max_cv * 100.0),
        WarningKind::Drift => "Drift over the execution order".into(),
        WarningKind::FirstSlower => "First repetition much worse than the others".into(),
        WarningKind::Outlier => "Outlying repetitions, kept in the statistics".into(),
        WarningKind::StopReason => "Stopped before meeting the interval target".into(),
        WarningKind::Interference => {
            "Repetitions disturbed by other activity on the machine".into()
        }
        WarningKind::ParametersDiffer => "Workload parameters differ between the sides".into(),
        WarningKind::Guest => "Measured in a User-mode Linux guest".into(),
        WarningKind::Oversubscribed => "More workers than CPUs".into(),
        WarningKind::SharedTable => "Workers sharing one file-descriptor table".into(),
    }
}

/// A group's title: [`title`], except for short phases of which some ran too few times for
/// their variation to be measured — the title then does not claim it was.
fn group_title(kind: WarningKind, list: &[&ReportWarning], t: &Thresholds) -> String {
    if kind != WarningKind::TooShort {
        return title(kind, t);
    }
    let few = |w: &&ReportWarning| w.message.contains(crate::stats::warnings::TOO_FEW_TO_TELL);
    let n = crate::stats::warnings::VARIATION_MIN_N;
    if list.iter().all(few) {
        format!(
            "Phases under {} s, too short to trust (fewer than {n} repetitions: how their time varies is not measured)",
            t.min_phase_seconds
        )
    } else if list.iter().any(few) {
        format!(
            "Phases under {} s whose time varies by more than {:.0}% or that ran fewer than {n} times, too short to trust",
            t.min_phase_seconds,
            t.max_cv * 100.0
        )
    } else {
        title(kind, t)
    }
}

/// The warnings grouped by kind and advice, most serious kind first (then in order of first
/// appearance).
pub fn group(warnings: &[ReportWarning], t: &Thresholds) -> Vec<WarningGroup> {
    let several = super::distinct(warnings.iter().filter_map(|w| w.workload.as_deref())).len() > 1;
    let named = |w: &ReportWarning, text: &str| match w.workload.as_deref() {
        Some(label) if several && !text.contains(label) => format!("[{label}] {text}"),
        _ => text.to_string(),
    };
    let mut members: Vec<(WarningKind, &str, Vec<&ReportWarning>)> = Vec::new();
    for w in warnings {
        match members
            .iter_mut()
            .find(|(k, a, _)| *k == w.kind && *a == w.advice)
        {
            Some((_, _, list)) => list.push(w),
            None => members.push((w.kind, w.advice.as_str(), vec![w])),
        }
    }
    members.sort_by_key(|(k, _, _)| k.rank());
    members
        .into_iter()
        .map(|(kind, advice, list)| {
            let subjects: Vec<String> = list.iter().map(|w| named(w, &w.subject)).collect();
            let text = match list.as_slice() {
                [one] => named(one, &one.message),
                _ => {
                    let mut items = subjects[..LISTED.min(subjects.len())].join("; ");
                    if subjects.len() > LISTED {
                        items.push_str(&format!(" …and {} more", subjects.len() - LISTED));
                    }
                    format!(
                        "{} ({}): {items}; {advice}",
                        group_title(kind, &list, t),
                        list.len()
                    )
                }
            };
            WarningGroup {
                kind,
                // The same title as `text`'s, for the lines that name fewer places.
                title: group_title(kind, &list, t),
                count: list.len(),
                subjects,
                advice: advice.to_string(),
                text,
            }
        })
        .collect()
}

/// The command that prints this report with every warning on its own line.
pub fn all_command(r: &ReportData) -> String {
    let quote = |s: &str| {
        if s.contains(char::is_whitespace) {
            format!("'{s}'")
        } else {
            s.to_string()
        }
    };
    match r.sources.as_slice() {
        [a, b] => format!(
            "fslab compare {} {} --warnings all",
            quote(&a.spec),
            quote(&b.spec)
        ),
        [one] => format!("fslab report {} --warnings all", one.id),
        _ => match r.environments.first() {
            Some(e) => format!("fslab report {} --warnings all", quote(&e.source)),
            None => "fslab report ID --warnings all".into(),
        },
    }
}

/// A group's line naming at most `listed` places: its own line when it was built with as
/// many (or has one warning), else `title (count): places …and N more; advice`.
fn line(g: &WarningGroup, listed: usize) -> String {
    if g.count == 1 || listed >= LISTED || g.subjects.len() <= listed {
        return g.text.clone();
    }
    format!(
        "{} ({}): {} …and {} more; {}",
        g.title,
        g.count,
        g.subjects[..listed].join("; "),
        g.subjects.len() - listed,
        g.advice
    )
}

/// The warning lines of a text format: every warning with `--warnings all`, else one per
/// group — at most [`TERMINAL_LINES`] when `cap` is set (the terminal), the last then saying
/// how many more there are and how to see them. A closing note says how to list each warning
/// when the groups merged any.
pub fn lines(r: &ReportData, cap: bool) -> Vec<String> {
    lines_listing(r, cap, LISTED)
}

/// [`lines`], each group naming at most `listed` of its places (the compact terminal report
/// names one).
pub fn lines_listing(r: &ReportData, cap: bool, listed: usize) -> Vec<String> {
    if r.options.warnings == WarningsMode::All {
        return r.warnings.iter().map(|w| w.message.clone()).collect();
    }
    let groups = &r.warning_groups;
    let merged = groups.iter().any(|g| g.count > 1);
    let fits = groups.len() + usize::from(merged) <= TERMINAL_LINES;
    if !cap || fits {
        let mut out: Vec<String> = groups.iter().map(|g| line(g, listed)).collect();
        if merged {
            out.push(format!(
                "{} warnings in {} {}; each on its own line: `{}`",
                r.warnings.len(),
                groups.len(),
                if groups.len() == 1 { "line" } else { "lines" },
                all_command(r)
            ));
        }
        return out;
    }
    let shown = TERMINAL_LINES - 1;
    let mut out: Vec<String> = groups[..shown].iter().map(|g| line(g, listed)).collect();
    let hidden: usize = groups[shown..].iter().map(|g| g.count).sum();
    let noun = if hidden == 1 { "warning" } else { "warnings" };
    out.push(format!("{hidden} more {noun}: `{}`", all_command(r)));
    out
}

#[cfg(test)]
#[path = "warngroups_tests.rs"]
mod tests;
