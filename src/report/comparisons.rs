//! Comparisons against a baseline and the observations written from them.
//!
//! By default every factor is compared one at a time: each cell whose level of factor F is
//! not F's baseline (its first level, or the level named by `--baseline`) is compared with
//! the cell that has F's baseline level and the same levels of all other factors. So with
//! `journal × fs`, `journal=64MB fs=xfs` is compared with `journal=16MB fs=xfs`, and
//! `journal=16MB fs=xfs` with `journal=16MB fs=ext4`. `--baseline CELL-LABEL` instead compares
//! every cell with that one cell. Only each phase's headline metric is compared unless
//! `--metric` selects metrics explicitly. The workloads' primary metrics (their capability:
//! `Caps::primary`, or the `--metric` selection) form the family Observations are drawn from;
//! the other headlines are exploratory and adjusted across every test of the report.

use super::draft::Draft;
use super::model::*;
use super::options::ReportOptions;
use super::verdict;
use crate::stats::compare::{benjamini_hochberg, mann_whitney};
use crate::stats::effect::effect;
use anyhow::Result;

/// What the comparisons are made against.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// Each factor against its baseline level (`Factor::baseline`).
    Factors,
    /// Every cell against this cell (index into cells).
    Cell(usize),
}

/// Resolve `--baseline` (a cell label, `factor=level`, or a level of exactly one factor),
/// setting the factor's baseline level; a usage error naming what exists otherwise.
pub fn resolve_baseline(
    spec: Option<&str>,
    cells: &[CellInfo],
    factors: &mut [Factor],
) -> Result<Baseline> {
    let Some(spec) = spec.map(str::trim) else {
        return Ok(Baseline::Factors);
    };
    if let Some(i) = cells.iter().position(|c| c.label == spec) {
        return Ok(Baseline::Cell(i));
    }
    // `factor=level`, or a level of any factor.
    let (factor, level) = match spec.split_once('=') {
        Some((f, l)) => (Some(f.trim()), l.trim()),
        None => (None, spec),
    };
    let candidates: Vec<usize> = (0..factors.len())
        .filter(|&i| factor.map_or(true, |f| factors[i].name == f))
        .filter(|&i| factors[i].levels.iter().any(|v| v == level))
        .collect();
    match candidates.as_slice() {
        [i] => {
            factors[*i].baseline = Some(level.to_string());
            Ok(Baseline::Factors)
        }
        [] => {
            let levels: Vec<String> = factors
                .iter()
                .flat_map(|f| f.levels.iter().map(move |l| format!("{}={l}", f.name)))
                .collect();
            let labels: Vec<&str> = cells.iter().take(20).map(|c| c.label.as_str()).collect();
            let levels = if levels.is_empty() {
                "none (no factors)".to_string()
            } else {
                levels.join(", ")
            };
            crate::bail_usage!(
                "no cell or factor level '{spec}' to use as --baseline; factor levels: {levels}; cells: {}",
                labels.join(", ")
            )
        }
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|&i| format!("{}={spec}", factors[i].name))
                .collect();
            crate::bail_usage!(
                "--baseline '{spec}' is a level of several factors; write one of {}",
                names.join(", ")
            )
        }
    }
}

/// (baseline cell, candidate cell, factor, from, to, context) pairs.
type Pair = (usize, usize, String, String, String, String);

fn pairs(
    cells: &[CellInfo],
    factors: &[Factor],
    baseline: &Baseline,
    opts: &ReportOptions,
) -> Vec<Pair> {
    let mut out = Vec::new();
    if let Baseline::Cell(b) = *baseline {
        for (c, cell) in cells.iter().enumerate().filter(|(c, _)| *c != b) {
            out.push((
                b,
                c,
                "cell".to_string(),
                cells[b].label.clone(),
                cell.label.clone(),
                String::new(),
            ));
        }
        return out;
    }
    for f in factors {
        if let Some(only) = &opts.compare_factors {
            if !only.contains(&f.name) {
                continue;
            }
        }
        // A sweep is compared only against a level `--baseline` declares.
        let Some(baseline) = &f.baseline else {
            continue;
        };
        for (c, cell) in cells.iter().enumerate() {
            let Some(to) = level(cell, &f.name) else {
                continue;
            };
            if to == baseline {
                continue;
            }
            let others: Vec<&(String, String)> =
                cell.factors.iter().filter(|(n, _)| *n != f.name).collect();
            let base = cells.iter().position(|b| {
                level(b, &f.name) == Some(baseline.as_str())
                    && b.factors.len() == cell.factors.len()
                    && others.iter().all(|(n, l)| level(b, n) == Some(l.as_str()))
            });
            if let Some(b) = base {
                let context = others
                    .iter()
                    .map(|(n, l)| format!("{n}={l}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push((
                    b,
                    c,
                    f.name.clone(),
                    baseline.clone(),
                    to.to_string(),
                    context,
                ));
            }
        }
    }
    out
}

/// Comparisons of one workload, without their q, verdicts and explanations yet: those are
/// given by [`adjust`] once every workload of the report is compared.
pub fn compare(
    wr: &WorkloadReport,
    cells: &[CellInfo],
    factors: &[Factor],
    baseline: &Baseline,
    opts: &ReportOptions,
    all_metrics: bool,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (b, c, factor, from, to, context) in pairs(cells, factors, baseline, opts) {
        for cand in wr
            .stats
            .iter()
            .filter(|s| s.cell == c && (all_metrics || s.headline))
        {
            let Some(base) = wr.stat(b, &cand.phase, &cand.name) else {
                continue;
            };
            // The change, its interval and its test from one model (`stats::effect`).
            let (change, w) = match effect(&base.values, &cand.values) {
                Some((c, w)) => (Some(c), w),
                None => (None, None),
            };
            let mw = mann_whitney(&base.values, &cand.values);
            let significant = verdict::is_significant(change.as_ref(), w.as_ref());
            out.push(Comparison {
                explanation: None,
                factor: factor.clone(),
                baseline_cell: b,
                cell: c,
                from: from.clone(),
                to: to.clone(),
                context: context.clone(),
                phase: cand.phase.clone(),
                name: cand.name.clone(),
                unit: cand.unit,
                baseline_mean: base.summary.mean,
                mean: cand.summary.mean,
                change,
                welch: w,
                mann_whitney: mw,
                significant,
                primary: cand.primary,
                q: None,
                family: 0,
                better: None,
                verdict: String::new(),
                more: None,
            });
        }
    }
    out
}

/// Benjamini–Hochberg q for every comparison of the report, and then its verdict. Two
/// families: the primary comparisons (the workloads' headline capabilities, or what
/// `--metric` selected) are adjusted among themselves, across every workload, phase and
/// configuration pair of the report; an exploratory comparison is adjusted across every
/// comparison the report tests. Comparisons without a test (a side with one repetition) are
/// in no family.
pub fn adjust(workloads: &mut [WorkloadReport]) {
    let tested = |c: &Comparison| c.welch.is_some_and(|w| !w.p.is_nan());
    let mut primary: Vec<(usize, usize)> = Vec::new();
    let mut all: Vec<(usize, usize)> = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        for (ci, c) in w.comparisons.iter().enumerate() {
            if tested(c) {
                all.push((wi, ci));
                if c.primary {
                    primary.push((wi, ci));
                }
            }
        }
    }
    // Each family's distinct tests (a metric given twice is one), their q, and its size.
    let q_of = |ws: &[WorkloadReport], ids: &[(usize, usize)]| -> (Vec<f64>, usize) {
        let groups = same_tests(ws, ids);
        let p: Vec<f64> = groups
            .iter()
            .map(|g| {
                ws[g[0].0].comparisons[g[0].1]
                    .welch
                    .map_or(f64::NAN, |x| x.p)
            })
            .collect();
        let mut q = vec![f64::NAN; ids.len()];
        for (g, qg) in groups.iter().zip(benjamini_hochberg(&p)) {
            for id in g {
                if let Some(i) = ids.iter().position(|x| x == id) {
                    q[i] = qg;
                }
            }
        }
        (q, groups.len())
    };
    let (q_all, m_all) = q_of(workloads, &all);
    let (q_primary, m_primary) = q_of(workloads, &primary);
    for (&(w, c), q) in all.iter().zip(q_all) {
        let cmp = &mut workloads[w].comparisons[c];
        if !cmp.primary {
            cmp.q = Some(q);
            cmp.family = m_all;
        }
    }
    for (&(w, c), q) in primary.iter().zip(q_primary) {
        let cmp = &mut workloads[w].comparisons[c];
        cmp.q = Some(q);
        cmp.family = m_primary;
    }
    for w in workloads.iter_mut() {
        let sizes: Vec<usize> = w
            .comparisons
            .iter()
            .map(|c| {
                let n = |cell| {
                    w.stat(cell, &c.phase, &c.name)
                        .map_or(0, |s| s.values.len())
                };
                n(c.baseline_cell).min(n(c.cell))
            })
            .collect();
        for (c, n) in w.comparisons.iter_mut().zip(sizes) {
            let q = c.q.map(|q| (q, c.family));
            let (text, better) =
                verdict::verdict(c.unit, &c.name, c.change.as_ref(), c.welch.as_ref(), q, n);
            c.verdict = text;
            c.better = better;
            c.more = verdict::more_repetitions(c.change.as_ref(), c.welch.as_ref(), n);
        }
    }
}

/// The comparisons `ids` grouped into distinct tests: two are one test when they compare the
/// same pair of configurations in the same phase of the same workload and their Welch
/// statistics agree (|t| and df to 1e-9) — one metric given twice, or two names of one
/// measurement (`--metric rate,elapsed` of a phase of fixed work: on the log scale the rate
/// is minus the time plus a constant, so the test is the same). Groups in order of first
/// member.
fn same_tests(ws: &[WorkloadReport], ids: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let mut groups: Vec<Vec<(usize, usize)>> = Vec::new();
    for &(w, c) in ids {
        let x = &ws[w].comparisons[c];
        let same = |g: &Vec<(usize, usize)>| {
            let (gw, gc) = g[0];
            let y = &ws[gw].comparisons[gc];
            gw == w
                && (y.baseline_cell, y.cell) == (x.baseline_cell, x.cell)
                && y.phase == x.phase
                && match (x.welch, y.welch) {
                    (Some(a), Some(b)) => close(a.t.abs(), b.t.abs()) && close(a.df, b.df),
                    _ => false,
                }
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push((w, c)),
            None => groups.push(vec![(w, c)]),
        }
    }
    groups
}

/// Whether a comparison is reported as an observation: significant on its own and after the
/// adjustment for multiple comparisons.
pub fn holds_up(c: &Comparison) -> bool {
    c.significant && c.q.is_some_and(|q| q < verdict::ALPHA)
}

/// One warning per workload whose primary comparisons include differences with p < 0.05
/// that the adjustment for multiple comparisons does not keep, when there are more of them
/// than chance explains: with k tests and nothing real, each reaches p < 0.05 with
/// probability 0.05, so one of four does in 19% of such reports, and naming it would only
/// repeat what its verdict says (`… but not after adjusting for 4 tests (q = …)`). When the
/// count is beyond chance (its binomial tail under 0.05, `stats::consistent::at_least`),
/// some of them are likely real and more repetitions would confirm which.
pub fn multiple_comparison_warnings(workloads: &[WorkloadReport]) -> Vec<ReportWarning> {
    let mut out = Vec::new();
    for w in workloads {
        let primary: Vec<&Comparison> = w
            .comparisons
            .iter()
            .filter(|c| c.primary && c.welch.is_some())
            .collect();
        let raw = primary.iter().filter(|c| c.significant).count();
        let kept = primary.iter().filter(|c| holds_up(c)).count();
        let chance = crate::stats::consistent::at_least(
            std::iter::repeat(verdict::ALPHA).take(primary.len()),
            raw,
        );
        if raw == kept || chance >= verdict::ALPHA {
            continue;
        }
        let m = primary.first().map_or(0, |c| c.family);
        out.push(
            Draft::new(WarningKind::MultipleComparisons, Some(w), None, None).finish(
                w.label.clone(),
                format!("{} of {raw} with p < 0.05", raw - kept),
                format!(
                    "{raw} of its {} headline comparisons have p < 0.05, {kept} after adjusting for multiple comparisons (Benjamini–Hochberg over the report's {m} headline tests); Observations leave out the {} that do not hold up (were there no real differences, about {:.2} of {m} would reach p < 0.05 by chance; {raw} or more of {}: {})",
                    primary.len(),
                    raw - kept,
                    m as f64 * verdict::ALPHA,
                    primary.len(),
                    verdict::fmt_p(chance)
                ),
                "add repetitions or compare fewer configurations to confirm them".into(),
            ),
        );
    }
    out
}

/// Warnings about one cell's metric that put a difference in doubt, as a caution
/// (`Caution: drift in journal=64MB fs=ext4; see Warnings.`), if any.
fn caution(
    w: &WorkloadReport,
    c: &Comparison,
    cells: &[CellInfo],
    warnings: &[ReportWarning],
) -> String {
    let key = format!("{}.{}", c.phase, c.name);
    let mut found: Vec<String> = Vec::new();
    let elapsed = format!("{}.elapsed", c.phase);
    if warnings.iter().any(|x| {
        x.kind == WarningKind::TooShort
            && x.workload.as_deref() == Some(w.label.as_str())
            && x.metric.as_deref() == Some(elapsed.as_str())
    }) {
        found.push(format!("a phase too short to trust ({})", c.phase));
    }
    if c.factor == "source" {
        if let Some(p) = warnings
            .iter()
            .find(|x| x.kind == WarningKind::ParametersDiffer)
        {
            found.push(format!("different workload parameters ({})", p.subject));
        }
    }
    for cell in [c.baseline_cell, c.cell] {
        let label = &cells[cell].label;
        for wn in warnings.iter().filter(|x| {
            x.workload.as_deref() == Some(w.label.as_str())
                && x.cell.as_deref() == Some(label.as_str())
                && (x.metric.as_deref() == Some(key.as_str())
                    || (x.kind == WarningKind::Interference && x.metric.is_none()))
        }) {
            let what = match wn.kind {
                WarningKind::Interference => "disturbed repetitions",
                WarningKind::Drift => "drift",
                WarningKind::Outlier => "an outlier",
                WarningKind::FirstSlower => "a slow first repetition",
                WarningKind::HighCv => "high variation",
                _ => continue,
            };
            let text = format!("{what} in {label}");
            if !found.contains(&text) {
                found.push(text);
            }
        }
    }
    if found.is_empty() {
        String::new()
    } else {
        format!(" Caution: {}; see Warnings.", found.join(", "))
    }
}

/// Observations in the manner of the classic articles, one per difference of a primary metric
/// that is significant after the adjustment for multiple comparisons, with a caution where a
/// warning about either side's values (drift, outlier, slow first repetition, high variation,
/// disturbed repetitions) puts it in doubt.
///
/// `guest`: Some when every source was measured in a guest, with its calibration. Each
/// Observation then says it is a guest figure and what the calibration kept of the host's
/// difference on its metric; one whose metric the guest cannot rank is left out, and its
/// line returned second.
pub fn observations(
    workloads: &[WorkloadReport],
    cells: &[CellInfo],
    warnings: &[ReportWarning],
    guest: Option<Option<&super::calibration::GuestCalibration>>,
) -> (Vec<Observation>, Vec<String>) {
    let mut out = Vec::new();
    let mut unranked = Vec::new();
    for w in workloads {
        for c in w.comparisons.iter().filter(|c| c.primary && holds_up(c)) {
            let guest_words = match guest {
                None => String::new(),
                Some(cal) => {
                    match super::calibration::observation_words(cal, &w.label, &c.phase, &c.name) {
                        Ok(words) => words,
                        Err(why) => {
                            unranked
                                .push(format!("[{}] {} against {}, {why}", w.label, c.to, c.from));
                            continue;
                        }
                    }
                }
            };
            let change = if c.factor == "cell" || c.factor == "source" {
                format!("{} instead of {}", c.to, c.from)
            } else {
                format!("{} {} instead of {}", c.factor, c.to, c.from)
            };
            let text = if c.context.is_empty() {
                let mut s = change;
                if let Some(f) = s.get(..1) {
                    s = f.to_uppercase() + &s[1..];
                }
                s
            } else {
                format!("With {}, {change}", c.context)
            };
            out.push(Observation {
                workload: w.label.clone(),
                text: format!(
                    "{text}: {} {}.{guest_words}{}{}",
                    verdict::subject(&c.phase, &c.name),
                    c.verdict,
                    c.explanation
                        .as_ref()
                        .map(|e| format!(" Telemetry: {e}."))
                        .unwrap_or_default(),
                    caution(w, c, cells, warnings)
                ),
            });
        }
    }
    (out, unranked)
}

/// What the Observations section says when it has none: that nothing could be tested, or
/// how many headline comparisons were tested and how many of them were inconclusive.
pub fn observations_note(
    workloads: &[WorkloadReport],
    observations: &[Observation],
) -> Option<String> {
    if !observations.is_empty() {
        return None;
    }
    let primary: Vec<&Comparison> = workloads
        .iter()
        .flat_map(|w| &w.comparisons)
        .filter(|c| c.primary)
        .collect();
    if primary.is_empty() {
        return Some("no comparisons: nothing to compare against a baseline".into());
    }
    let untested = primary.iter().filter(|c| c.welch.is_none()).count();
    let tested = primary.len() - untested;
    let min_n = |c: &&&Comparison| {
        workloads
            .iter()
            .flat_map(|w| {
                w.stat(c.cell, &c.phase, &c.name).into_iter().chain(w.stat(
                    c.baseline_cell,
                    &c.phase,
                    &c.name,
                ))
            })
            .map(|s| s.values.len())
            .min()
            .unwrap_or(0)
    };
    if tested == 0 {
        let n = primary.iter().map(|c| min_n(&c)).min().unwrap_or(0);
        return Some(format!(
            "nothing could be tested: a configuration of every comparison has a single repetition (n = {n}); run more repetitions"
        ));
    }
    let inconclusive = primary
        .iter()
        .filter(|c| c.verdict.starts_with("inconclusive"))
        .count();
    let plural = if tested == 1 { "" } else { "s" };
    // Differences with p < 0.05 that the adjustment did not keep: "none significant" would
    // contradict their verdicts.
    let unadjusted = primary
        .iter()
        .filter(|c| c.significant && !holds_up(c))
        .count();
    let held = primary.iter().filter(|c| holds_up(c)).count();
    let family = primary.iter().map(|c| c.family).max().unwrap_or(tested);
    let mut text = if unadjusted > 0 && held == 0 {
        format!(
            "no significant differences among the {tested} headline comparison{plural} tested after adjusting for {family} tests ({unadjusted} had p < 0.05 before)"
        )
    } else {
        format!("no significant differences among the {tested} headline comparison{plural} tested")
    };
    let busy = primary
        .iter()
        .filter(|c| c.more.as_deref() == Some(super::disturbed::BUSY_MORE))
        .count();
    if inconclusive > 0 && busy == 0 {
        text.push_str(&format!(
            "; {inconclusive} inconclusive (an interval wider than the ±{}% precision target: more repetitions would tell)",
            verdict::fmt_pct(100.0 * crate::stats::effect::RESOLUTION)
        ));
    } else if inconclusive > 0 {
        text.push_str(&format!(
            "; {inconclusive} inconclusive, {busy} of them on a machine busy during most repetitions (Warnings): quiet it and run again, more repetitions would not tell"
        ));
    }
    if untested > 0 {
        text.push_str(&format!(
            "; {untested} not tested (a side with a single repetition)"
        ));
    }
    Some(text)
}
