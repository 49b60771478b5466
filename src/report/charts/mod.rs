//! Charts as SVG, drawn with plotters' SVG backend (no font files: text is left to the
//! browser, sizes are estimated), deterministic for the same model.
//!
//! Per workload: grouped bars with error bars for each phase's headline metric (groups by
//! the first factor, one bar per level of the others, as the classic articles drew them),
//! line charts with error bands for every numeric factor of three or more levels (journal
//! size, record size, clients), a strip plot showing every repetition in execution order with outliers ringed,
//! latency-percentile curves per operation, the time series of a `--timeline` run and the
//! telemetry per phase as stacked bars; a sweep over two numeric factors (IOzone's `-a`) as
//! one heatmap per phase instead of bars, lines and strips. Per report: a forest plot of the
//! comparisons.

pub(crate) mod bars;
pub mod forest;
mod grouped;
pub mod heatmap;
mod latency;
mod lines;
mod stacked;
mod strip;
mod timeline;

use super::model::*;
use crate::units::{fmt_num, Scale};
use plotters::prelude::*;
pub(crate) use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What a chart shows; its name is the HTML class suffix (`chart-bars`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Grouped bars with error bars of a phase's headline metric.
    Bars,
    /// A line with an error band over a numeric factor.
    Lines,
    /// Every repetition in execution order, outliers ringed.
    Strip,
    /// Latency-percentile curves of one operation.
    Latency,
    /// One metric of a repetition over time (`--timeline`).
    Timeline,
    /// Percent changes with their intervals, one row per comparison.
    Forest,
    /// A sweep over two numeric factors, one square per point (IOzone's `-a`).
    Heatmap,
    /// Telemetry per phase as stacked bars.
    Telemetry,
}

impl ChartKind {
    /// The kind's name (`bars`, `lines`, `strip`, `latency`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ChartKind::Bars => "bars",
            ChartKind::Lines => "lines",
            ChartKind::Strip => "strip",
            ChartKind::Latency => "latency",
            ChartKind::Timeline => "timeline",
            ChartKind::Forest => "forest",
            ChartKind::Heatmap => "heatmap",
            ChartKind::Telemetry => "telemetry",
        }
    }
}

impl std::fmt::Display for ChartKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// What it shows.
    pub kind: ChartKind,
    /// Title (also drawn in the SVG).
    pub title: String,
    /// What the marks mean, for a caption.
    pub caption: String,
    /// The SVG document.
    pub svg: String,
}

/// The Okabe–Ito colour-blind-safe palette (its yellow late: weakest on white), then darker
/// and lighter variants and greys, so up to 16 series get distinct colours.
const PALETTE: [RGBColor; 16] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
    RGBColor(128, 128, 128),
    RGBColor(136, 34, 85),
    RGBColor(17, 119, 51),
    RGBColor(51, 34, 136),
    RGBColor(153, 153, 51),
    RGBColor(102, 204, 238),
    RGBColor(170, 68, 153),
    RGBColor(187, 187, 187),
];

/// The i-th series colour.
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A cell's short label for axes and legends: its factor levels (`16MB ext4`), or its label
/// shortened to 28 characters.
pub(crate) fn short_label(c: &CellInfo) -> String {
    if c.factors.is_empty() {
        let s: String = c.label.chars().take(28).collect();
        if c.label.chars().count() > 28 {
            format!("{s}…")
        } else {
            s
        }
    } else {
        c.factors
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The (low, high) whisker of a mean: the 95% interval (positive for quantities that cannot
/// be negative: [`crate::stats::interval`]) or ± one sd, clipped at 0 for those quantities;
/// the mean itself when there is no spread.
pub(crate) fn whisker(s: &CellMetric, bars: ErrorBars) -> (f64, f64) {
    let m = s.summary.mean;
    match bars {
        ErrorBars::Ci => s.summary.ci95.unwrap_or((m, m)),
        ErrorBars::Sd => match s.summary.sd {
            Some(sd) if s.unit.is_positive() => ((m - sd).max(0.0), m + sd),
            Some(sd) => (m - sd, m + sd),
            None => (m, m),
        },
    }
}

/// What the whiskers (or bands) of these statistics show, for a caption: the interval's
/// method, or ± sd and whether any was clipped at 0; with one repetition each, that there are
/// none.
pub(crate) fn whisker_caption(stats: &[&CellMetric], bars: ErrorBars) -> String {
    if !stats.is_empty() && stats.iter().all(|s| s.summary.n < 2) {
        return "none (one repetition each: no spread or interval)".into();
    }
    match bars {
        ErrorBars::Ci => super::entries::ci_words(stats.iter().copied()),
        ErrorBars::Sd => {
            let clipped = stats.iter().any(|s| {
                s.unit.is_positive() && s.summary.sd.is_some_and(|sd| s.summary.mean - sd < 0.0)
            });
            if clipped {
                "± one standard deviation, clipped at 0 (the quantity cannot be negative)".into()
            } else {
                "± one standard deviation".into()
            }
        }
    }
}

/// What the whiskers show in general, for the page's footer.
pub(crate) fn whisker_words(bars: ErrorBars) -> &'static str {
    match bars {
        ErrorBars::Ci => "error bars: 95% confidence intervals (of the geometric mean, on the log scale, for times, rates, sizes and counts; of the mean, Student t, otherwise)",
        ErrorBars::Sd => "error bars: ± one standard deviation (clipped at 0 for times, rates, sizes and counts)",
    }
}

/// The y-axis description of a metric in the scale it is drawn in: `throughput (GiB/s)`.
pub(crate) fn axis_label(name: &str, scale: &Scale) -> String {
    format!("{}{}", super::verdict::metric_label(name), scale.suffix())
}

/// The scale an axis of these statistics is drawn in, from the typical magnitude of their
/// means (values are divided by its divisor before they are plotted, so the ticks are
/// round numbers in the unit shown: 2, 4, 6 GiB/s, not 2097152 KiB/s).
pub(crate) fn axis_scale<'a>(stats: impl IntoIterator<Item = &'a CellMetric>) -> Scale {
    let stats: Vec<&CellMetric> = stats.into_iter().collect();
    let unit = stats
        .first()
        .map(|s| s.unit)
        .unwrap_or(crate::metric::Unit::Count);
    unit.scale_for(stats.iter().map(|s| s.summary.mean))
}

/// Tick labels: whole numbers without decimals, others formatted like the tables.
pub(crate) fn tick(v: &f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = fmt_num(*v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// Text style for titles, labels and legends.
///
/// `size` is the font size in CSS pixels as the page renders it: plotters' SVG backend
/// writes `font-size` as the size it is given divided by 1.24 (its line height), so a 12 px
/// label asks plotters for 12 × 1.24.
pub(crate) fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", f64::from(size) * PLOTTERS_LINE_HEIGHT)
        .into_font()
        .color(&BLACK)
}

/// The ratio of the size plotters is given to the `font-size` its SVG backend writes.
const PLOTTERS_LINE_HEIGHT: f64 = 1.24;

/// Centred text below a point (category labels under the x axis).
pub(crate) fn label_below(size: u32) -> TextStyle<'static> {
    font(size).pos(Pos::new(HPos::Center, VPos::Top))
}

/// Render with a fresh SVG string of the given size.
pub(crate) fn svg<F>(w: u32, h: u32, draw: F) -> anyhow::Result<String>
where
    F: FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> anyhow::Result<()>,
{
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(s)
}

/// Cells with values of a metric, ordered for display: by the numeric value of their factor
/// levels where the factor is numeric, else in plan order.
pub(crate) fn ordered_cells(r: &ReportData, w: &WorkloadReport) -> Vec<usize> {
    let mut cells = r.cells_with_data(w);
    let key = |c: usize| -> Vec<f64> {
        r.factors
            .iter()
            .map(|f| {
                let level = r.cells[c]
                    .factors
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map(|(_, l)| l.as_str());
                let pos = level.and_then(|l| f.levels.iter().position(|x| x == l));
                match (pos, &f.numeric) {
                    (Some(p), Some(v)) => v[p],
                    (Some(p), None) => p as f64,
                    (None, _) => f64::INFINITY,
                }
            })
            .collect()
    };
    cells.sort_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        ka.iter()
            .zip(&kb)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    cells
}

/// All charts of one workload, in display order (every headline metric's).
pub fn workload_charts(r: &ReportData, w: &WorkloadReport) -> anyhow::Result<Vec<Chart>> {
    workload_charts_for(r, w, false)
}

/// The charts of one workload, in display order: with `primary_only` (the compact HTML
/// report), bars, lines and strips only for the primary metrics (fio's IOPS and throughput,
/// not every job's CPU and fsync latency).
pub fn workload_charts_for(
    r: &ReportData,
    w: &WorkloadReport,
    primary_only: bool,
) -> anyhow::Result<Vec<Chart>> {
    let mut out = Vec::new();
    if r.cells_with_data(w).is_empty() {
        return Ok(out);
    }
    let bars_ok = |s: &&CellMetric| {
        s.headline && s.unit != crate::metric::Unit::Millis && (s.primary || !primary_only)
    };
    let mut phases: Vec<(&str, &str)> = Vec::new();
    for s in w.stats.iter().filter(bars_ok) {
        if !phases.contains(&(s.phase.as_str(), s.name.as_str())) {
            phases.push((s.phase.as_str(), s.name.as_str()));
        }
    }
    // A sweep over two numeric factors (IOzone's -a): one heatmap per phase instead of
    // bars, lines and strips for each.
    if let Some(axes) = heatmap::axes(r) {
        for (phase, name) in &phases {
            for fixed in heatmap::others(r, axes) {
                out.push(heatmap::chart(r, w, phase, name, axes, &fixed)?);
            }
        }
        phases.clear();
    }
    for (phase, name) in &phases {
        out.push(bars::chart(r, w, phase, name)?);
    }
    for (fi, f) in r.factors.iter().enumerate() {
        // A sweep needs at least three levels; two are read better as bars.
        if f.numeric.is_none() || f.levels.len() < 3 {
            continue;
        }
        for (phase, name) in &phases {
            out.push(lines::chart(r, w, fi, phase, name)?);
        }
    }
    for (phase, name) in &phases {
        out.push(strip::chart(r, w, phase, name)?);
    }
    let mut ops: Vec<&str> = Vec::new();
    for l in &w.latency {
        if !ops.contains(&l.op.as_str()) {
            ops.push(&l.op);
        }
    }
    for op in ops {
        out.push(latency::chart(r, w, op)?);
    }
    for name in TIMELINE_CHARTS {
        if w.timelines.iter().any(|s| s.name == name) {
            out.push(timeline::chart(r, w, name)?);
        }
    }
    out.extend(stacked::charts(r, w)?);
    Ok(out)
}

/// The timeline metrics charted, in order (the JSON has every sampled one).
const TIMELINE_CHARTS: [&str; 4] = [
    "progress",
    "dev.data.write_rate",
    "dev.data.util",
    "cpu.iowait",
];

/// Pixels per character of 12 px chart text (plotters estimates about 0.56 em; a little
/// more keeps labels apart in every browser's sans-serif).
pub(crate) const CHAR_PX: u32 = 7;

/// The narrowest and widest legend pane at the right of a chart.
const LEGEND_MIN: u32 = 150;
const LEGEND_MAX: u32 = 340;

/// The width of a legend pane that fits its title and labels (within [`LEGEND_MAX`]; longer
/// labels are shortened in the middle).
pub(crate) fn legend_width(title: &str, entries: &[(String, RGBColor)]) -> u32 {
    if entries.is_empty() {
        return 0;
    }
    let chars = entries
        .iter()
        .map(|(l, _)| l.chars().count() as u32 + 4)
        .chain([title.chars().count() as u32 + 2])
        .max()
        .unwrap_or(0);
    (16 + CHAR_PX * chars).clamp(LEGEND_MIN, LEGEND_MAX)
}

/// `s` in at most `n` characters, shortened in the middle with `…` (both ends of a path or a
/// label tell it apart).
pub(crate) fn elide(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= n {
        return s.to_string();
    }
    let keep = n.saturating_sub(1);
    let head = keep / 2;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - (keep - head)..]);
    out
}

/// Draw a legend (title, then one colour swatch and label per entry) into `area`, each label
/// shortened to fit the area's width.
pub(crate) fn legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    entries: &[(String, RGBColor)],
) -> anyhow::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let room = (area.dim_in_pixel().0.saturating_sub(36) / CHAR_PX) as usize;
    area.draw(&Text::new(elide(title, room + 3), (8, 44), font(13)))?;
    for (i, (label, col)) in entries.iter().enumerate() {
        let y = 66 + 20 * i as i32;
        area.draw(&Rectangle::new([(8, y), (22, y + 12)], col.filled()))?;
        area.draw(&Text::new(elide(label, room), (28, y), font(12)))?;
    }
    Ok(())
}

/// Which of these labels (x positions in pixels, texts) to draw so that none overlaps
/// another: the first, then each that starts clear of the last drawn one; the last label is
/// kept in place of the one before it when they would collide.
pub(crate) fn thin_labels(labels: &[(i32, String)]) -> Vec<bool> {
    let half = |t: &str| (t.chars().count() as i32 * CHAR_PX as i32) / 2 + 4;
    let mut keep = vec![false; labels.len()];
    let mut last: Option<usize> = None;
    for (i, (x, t)) in labels.iter().enumerate() {
        let clear = last.map_or(true, |j| {
            let (lx, lt) = &labels[j];
            x - half(t) >= lx + half(lt)
        });
        if clear {
            keep[i] = true;
            last = Some(i);
        } else if i + 1 == labels.len() {
            // The end of the axis is worth more than the label before it.
            if let Some(j) = last.filter(|&j| j > 0) {
                keep[j] = false;
                keep[i] = true;
            }
        }
    }
    keep
}

/// The level of `factor` in a cell.
pub(crate) fn level<'a>(c: &'a CellInfo, factor: &str) -> Option<&'a str> {
    c.factors
        .iter()
        .find(|(n, _)| n == factor)
        .map(|(_, l)| l.as_str())
}

/// The levels of a cell's factors except `skip`, for legends: the bare level when one
/// factor remains (the legend title names it), else `name=level` pairs; empty if none.
pub(crate) fn others(c: &CellInfo, skip: &str) -> String {
    let rest: Vec<&(String, String)> = c.factors.iter().filter(|(n, _)| n != skip).collect();
    match rest.as_slice() {
        [(_, l)] => l.clone(),
        _ => rest
            .iter()
            .map(|(n, l)| format!("{n}={l}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Unit;
    use crate::stats::{summarize_as, Quantity};

    fn stat(unit: Unit, values: &[f64]) -> CellMetric {
        let q = if unit.is_positive() {
            Quantity::Positive
        } else {
            Quantity::Signed
        };
        CellMetric {
            cell: 0,
            phase: "p".into(),
            name: "rate".into(),
            unit,
            summary: summarize_as(values, q).unwrap(),
            values: values.to_vec(),
            repetitions: vec![1; values.len()],
            order: vec![0; values.len()],
            outliers: Vec::new(),
            disturbed: Vec::new(),
            headline: true,
            primary: true,
        }
    }

    #[test]
    fn whiskers_of_positive_quantities_never_go_below_zero() {
        // Mean 1766.7, sd 2829.7: mean − sd < 0, and the Student-t interval too.
        let s = stat(Unit::FilesPerSec, &[100.0, 5000.0, 200.0]);
        for bars in [ErrorBars::Ci, ErrorBars::Sd] {
            let (lo, hi) = whisker(&s, bars);
            assert!(lo >= 0.0 && hi > lo, "{bars:?}: {lo} {hi}");
        }
        assert_eq!(whisker(&s, ErrorBars::Sd).0, 0.0);
        assert_eq!(
            whisker_caption(&[&s], ErrorBars::Sd),
            "± one standard deviation, clipped at 0 (the quantity cannot be negative)"
        );
        assert_eq!(
            whisker_caption(&[&s], ErrorBars::Ci),
            "95% CI of the geometric mean (log scale)"
        );
        // A signed quantity keeps its whole bar.
        let d = stat(Unit::Percent, &[-50.0, 40.0, 10.0]);
        assert!(whisker(&d, ErrorBars::Sd).0 < 0.0);
        assert_eq!(
            whisker_caption(&[&d], ErrorBars::Sd),
            "± one standard deviation"
        );
        assert_eq!(
            whisker_caption(&[&d], ErrorBars::Ci),
            "95% CI of the mean (Student t)"
        );
    }
}
