//! A sweep laid out as IOzone's users read it: one matrix per test, rows the first numeric
//! factor's levels (file size), columns the second's (record size), each entry a mean — the
//! layout of IOzone's `-R` report and of Generate_Graphs' surfaces. The text and HTML
//! reports print these matrices and the HTML draws each as a heatmap
//! ([`super::charts::heatmap`]); a point that was not measured (a record larger than its
//! file) is empty. Also what a report says when its only factors are sweeps that no
//! `--baseline` declared a level of (no comparisons are made: see `Factor::sweep`).

use super::model::*;
use crate::units::Scale;

/// One phase and metric of a sweep as a matrix.
pub struct Matrix<'a> {
    /// The phase (an IOzone test).
    pub phase: String,
    /// The metric (`throughput`).
    pub name: String,
    /// Index into the report's factors of the rows' factor and the columns'.
    pub axes: (usize, usize),
    /// The levels of the other factors this matrix holds (one matrix per combination).
    pub fixed: Vec<(String, String)>,
    /// Statistics by row level, then column level; `None` where nothing was measured.
    pub entries: Vec<Vec<Option<&'a CellMetric>>>,
    /// One scale for every entry, from their typical magnitude.
    pub scale: Option<Scale>,
}

impl Matrix<'_> {
    /// Every statistic in it.
    pub fn stats(&self) -> impl Iterator<Item = &CellMetric> {
        self.entries.iter().flatten().flatten().copied()
    }
}

/// Mark the sweeps among a report's factors ([`Factor::sweep`]): a numeric factor of at
/// least [`SWEEP_LEVELS`] levels, and with it the other axis of its matrix (IOzone's file
/// sizes beside its record sizes). A sweep has no baseline until `--baseline` names one.
pub fn mark(factors: &mut [Factor]) {
    let long = |f: &Factor| f.numeric.is_some() && f.levels.len() >= SWEEP_LEVELS;
    for f in factors.iter_mut() {
        f.sweep = long(f);
    }
    if let Some((a, b)) = axes(factors) {
        let either = factors[a].sweep || factors[b].sweep;
        factors[a].sweep = either;
        factors[b].sweep = either;
    }
    for f in factors.iter_mut().filter(|f| f.sweep) {
        f.baseline = None;
    }
}

/// The two numeric factors of at least three levels a heatmap or matrix lays out (rows,
/// columns): the first two in plan order.
pub fn axes(factors: &[Factor]) -> Option<(usize, usize)> {
    let mut numeric = factors
        .iter()
        .enumerate()
        .filter(|(_, f)| f.numeric.is_some() && f.levels.len() >= 3)
        .map(|(i, _)| i);
    Some((numeric.next()?, numeric.next()?))
}

/// The axes when the report is a sweep: two numeric factors of three or more levels of which
/// at least one is a sweep ([`Factor::sweep`]). A 3 × 3 study keeps its configuration rows.
pub fn matrix_axes(r: &ReportData) -> Option<(usize, usize)> {
    axes(&r.factors).filter(|&(a, b)| r.factors[a].sweep || r.factors[b].sweep)
}

/// The combinations of the other factors' levels (one matrix each), in plan order.
pub fn others(r: &ReportData, axes: (usize, usize)) -> Vec<Vec<(String, String)>> {
    super::distinct(r.cells.iter().map(|c| {
        c.factors
            .iter()
            .filter(|(n, _)| *n != r.factors[axes.0].name && *n != r.factors[axes.1].name)
            .cloned()
            .collect::<Vec<_>>()
    }))
}

/// The matrix of `phase.name` of workload `w` over `axes`, for the configurations whose
/// other factors are `fixed`.
pub fn matrix<'a>(
    r: &ReportData,
    w: &'a WorkloadReport,
    phase: &str,
    name: &str,
    axes: (usize, usize),
    fixed: &[(String, String)],
) -> Matrix<'a> {
    let (fr, fc) = (&r.factors[axes.0], &r.factors[axes.1]);
    let mut entries = vec![vec![None; fc.levels.len()]; fr.levels.len()];
    for (ci, cell) in r.cells.iter().enumerate() {
        if !fixed
            .iter()
            .all(|(n, l)| level(cell, n) == Some(l.as_str()))
        {
            continue;
        }
        let (i, j) = (fr.position(cell), fc.position(cell));
        if let (Some(i), Some(j), Some(s)) = (i, j, w.stat(ci, phase, name)) {
            entries[i][j] = Some(s);
        }
    }
    let means: Vec<&CellMetric> = entries.iter().flatten().flatten().copied().collect();
    let scale = means
        .first()
        .map(|s| s.unit.scale_for(means.iter().map(|s| s.summary.mean)));
    Matrix {
        phase: phase.to_string(),
        name: name.to_string(),
        axes,
        fixed: fixed.to_vec(),
        entries,
        scale,
    }
}

/// The matrices of table `t` of workload `w` when the report is a sweep: one per phase (and
/// per combination of the other factors' levels) that has values; empty otherwise.
pub fn matrices<'a>(r: &ReportData, w: &'a WorkloadReport, t: &TableSpec) -> Vec<Matrix<'a>> {
    let Some(axes) = matrix_axes(r) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for phase in &t.phases {
        for fixed in others(r, axes) {
            let m = matrix(r, w, phase, &t.metric, axes, &fixed);
            if m.stats().next().is_some() {
                out.push(m);
            }
        }
    }
    out
}

/// A matrix's title: `write · throughput (GiB/s)`, with the other factors' levels.
pub fn title(w: &WorkloadReport, m: &Matrix<'_>) -> String {
    let mut t = format!(
        "{} · {}",
        super::grid::phase_label(&w.kind, &m.phase),
        m.name
    );
    if let Some(s) = m.scale.filter(|s| !s.label.is_empty()) {
        t.push_str(&format!(" ({})", s.label));
    }
    if !m.fixed.is_empty() {
        let f: Vec<String> = m.fixed.iter().map(|(n, l)| format!("{n}={l}")).collect();
        t.push_str(&format!(", {}", f.join(", ")));
    }
    t
}

/// What a table's matrices hold and how they are laid out (`means of n = 3 each; a sweep,
/// …`), the words after its heading.
pub fn words(r: &ReportData, ms: &[Matrix<'_>]) -> String {
    let what = match super::entries::common_n(ms.iter().flat_map(|m| m.stats())) {
        Some(1) => "one repetition each, no spread".to_string(),
        Some(n) => format!("means of n = {n} each"),
        None => "means".to_string(),
    };
    let (rows, cols) = ms.first().map_or((0, 0), |m| m.axes);
    format!(
        "{what}; a sweep, one matrix per phase: rows {}, columns {} (every statistic: --all)",
        r.factors[rows].name, r.factors[cols].name
    )
}

/// The label of a matrix's column: a size level as IOzone's flags write it (`4k`, `16m`), so
/// fifteen record sizes fit a terminal; any other level as it is.
pub fn column_label(f: &Factor, i: usize) -> String {
    let level = f.levels[i].clone();
    let Some(v) = f
        .numeric
        .as_ref()
        .and_then(|v| v.get(i))
        .filter(|_| f.is_size)
    else {
        return level;
    };
    let bytes = *v as u64;
    for (unit, suffix) in [(1u64 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    level
}

/// A matrix as text cells, for every format: the header (the rows' factor, then a label per
/// column) and per row its level and entries — the mean in the matrix's scale, marked when
/// disturbed repetitions are in it, empty where nothing was measured.
pub fn text(r: &ReportData, m: &Matrix<'_>) -> (Vec<String>, Vec<Vec<String>>) {
    let (fr, fc) = (&r.factors[m.axes.0], &r.factors[m.axes.1]);
    let mut header = vec![fr.name.clone()];
    header.extend((0..fc.levels.len()).map(|i| column_label(fc, i)));
    let rows = fr
        .levels
        .iter()
        .zip(&m.entries)
        .map(|(level, row)| {
            let mut cells = vec![level.clone()];
            cells.extend(row.iter().map(|s| match (s, m.scale) {
                (Some(s), Some(sc)) => format!(
                    "{}{}",
                    sc.num(s.summary.mean),
                    super::entries::disturbed_mark(s)
                ),
                _ => String::new(),
            }));
            cells
        })
        .collect();
    (header, rows)
}

/// Whether any entry of these matrices includes disturbed repetitions.
pub fn any_disturbed(ms: &[Matrix<'_>]) -> bool {
    ms.iter()
        .flat_map(|m| m.stats())
        .any(|s| !s.disturbed.is_empty())
}

/// What the Observations say when nothing was compared because every factor is a sweep
/// without a declared baseline: which sweeps, and how to declare one.
pub fn note(factors: &[Factor], compared: bool) -> Option<String> {
    if compared {
        return None;
    }
    let sweeps: Vec<&Factor> = factors
        .iter()
        .filter(|f| f.sweep && f.baseline.is_none())
        .collect();
    let example = sweeps.last()?;
    let mid = &example.levels[example.levels.len() / 2];
    let names: Vec<String> = sweeps
        .iter()
        .map(|f| format!("{} ({} levels)", f.name, f.levels.len()))
        .collect();
    let arg = format!("{}={mid}", example.name);
    let quoted = if arg.contains(' ') {
        format!("'{arg}'")
    } else {
        arg
    };
    Some(format!(
        "no comparisons: a sweep over {} is reported as it was measured, not as changes against \
         its first point; to compare against a point, name it: --baseline {quoted}",
        names.join(" and ")
    ))
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
