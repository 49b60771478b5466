//! Grouping, the terminal's cap and `--warnings all`, on hand-made warnings.

use super::*;
use crate::report::tests::{source, starts};
use WarningKind::*;

fn warning(kind: WarningKind, workload: &str, subject: &str, advice: &str) -> ReportWarning {
    ReportWarning {
        kind,
        workload: Some(workload.into()),
        cell: Some(subject.into()),
        metric: None,
        message: format!("{subject}: something is wrong; {advice}"),
        subject: subject.into(),
        advice: advice.into(),
    }
}

fn report(warnings: Vec<ReportWarning>, mode: WarningsMode, sources: Vec<Source>) -> ReportData {
    ReportData {
        schema: SCHEMA,
        title: "t".into(),
        sources,
        options: crate::report::ReportOptions {
            warnings: mode,
            ..Default::default()
        },
        factors: Vec::new(),
        cells: Vec::new(),
        workloads: Vec::new(),
        series: Vec::new(),
        observations: Vec::new(),
        observations_note: None,
        warning_groups: group(&warnings, &Thresholds::default()),
        warnings,
        environments: Vec::new(),
        differences: Vec::new(),
        timing: None,
        guest_calibration: None,
    }
}

#[test]
fn one_line_per_kind_and_advice_with_a_count_and_the_cells() {
    let cv = |i| {
        let subject = format!("cell{i} · a.rate (12.0%)");
        warning(HighCv, "w", &subject, "run more")
    };
    let ws: Vec<ReportWarning> = std::iter::once(warning(Failed, "w", "cell3 · w", "fix it"))
        .chain((0..5).map(cv))
        .chain([
            warning(Outlier, "w", "cell0 · a.rate (repetition 2)", "look"),
            warning(HighCv, "w", "cell9 · a.rate (30.0%)", "other advice"),
        ])
        .collect();
    let g = group(&ws, &Thresholds::default());
    let kinds: Vec<(WarningKind, usize)> = g.iter().map(|g| (g.kind, g.count)).collect();
    assert_eq!(
        kinds,
        vec![(Failed, 1), (HighCv, 5), (HighCv, 1), (Outlier, 1),]
    );
    assert_eq!(
        g[1].text,
        "Coefficient of variation above 10% (5): cell0 · a.rate (12.0%); cell1 · a.rate (12.0%); cell2 · a.rate (12.0%) …and 2 more; run more"
    );
    assert_eq!(g[1].subjects.len(), 5);
    // A group of one is the warning's own line.
    assert_eq!(g[0].text, "cell3 · w: something is wrong; fix it");
}

#[test]
fn several_workloads_are_named_in_the_places() {
    let ws = vec![
        warning(HighCv, "fdtree small", "c1 · a.rate (20%)", "more"),
        warning(HighCv, "iozone 1g", "c1 · write.throughput (30%)", "more"),
    ];
    let g = group(&ws, &Thresholds::default());
    assert_eq!(
        g[0].subjects,
        vec![
            "[fdtree small] c1 · a.rate (20%)",
            "[iozone 1g] c1 · write.throughput (30%)"
        ]
    );
}

#[test]
fn the_terminal_shows_at_most_ten_lines() {
    // 14 groups (distinct advice), 2 warnings each: 28 warnings.
    let ws: Vec<ReportWarning> = (0..28)
        .map(|i| {
            warning(
                Drift,
                "w",
                &format!("cell{i}"),
                &format!("advice {}", i / 2),
            )
        })
        .collect();
    let r = report(ws, WarningsMode::Grouped, vec![source(7, "7")]);
    let term = lines(&r, true);
    assert_eq!(term.len(), TERMINAL_LINES);
    assert_eq!(term[9], "10 more warnings: `fslab report 7 --warnings all`");
    // Markdown and HTML list every group, and how to see each warning.
    let all_groups = lines(&r, false);
    assert_eq!(all_groups.len(), 15);
    assert_eq!(
        all_groups[14],
        "28 warnings in 14 lines; each on its own line: `fslab report 7 --warnings all`"
    );
    // --warnings all: every warning, no cap.
    let r = report(r.warnings, WarningsMode::All, vec![source(7, "7")]);
    let every = lines(&r, true);
    assert_eq!(every.len(), 28);
    assert_eq!(every[3], "cell3: something is wrong; advice 1");
}

#[test]
fn few_groups_need_no_note_and_commands_name_the_sources() {
    let ws = vec![warning(Drift, "w", "c", "a")];
    let r = report(ws, WarningsMode::Grouped, vec![source(3, "3")]);
    assert_eq!(lines(&r, true), vec!["c: something is wrong; a"]);
    let r = report(
        Vec::new(),
        WarningsMode::Grouped,
        vec![source(1, "12:0"), source(1, "12/journal=64MB fs=xfs")],
    );
    assert_eq!(
        all_command(&r),
        "fslab compare 12:0 '12/journal=64MB fs=xfs' --warnings all"
    );
}

#[test]
fn a_line_naming_one_place_keeps_the_groups_own_title() {
    // Short phases of a one-repetition sweep: their variation was not measured, and the
    // compact terminal line (one place named) must not claim it was.
    let few = crate::stats::warnings::TOO_FEW_TO_TELL;
    let ws: Vec<ReportWarning> = ["write", "read"]
        .iter()
        .map(|p| ReportWarning {
            message: format!("{p}: mean time under 1 s, 1 repetition(s): {few}; too short"),
            ..warning(TooShort, "w", &format!("{p} (5 µs)"), "use larger files")
        })
        .collect();
    let r = report(ws, WarningsMode::Grouped, Vec::new());
    let line = &lines_listing(&r, true, 1)[0];
    starts(
        line,
        "Phases under 1 s, too short to trust (fewer than 3 repetitions",
    );
    assert!(!line.contains("varies by more than"), "{line}");
}
