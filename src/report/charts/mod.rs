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
mod labels;
mod latency;
mod lines;
mod stacked;
mod strip;
mod timeline;
mod whisker;

use super::model::*;
use crate::units::{fmt_num, Scale};
pub(crate) use labels::{elide, legend, legend_width, thin_labels, CHAR_PX};
use plotters::prelude::*;
pub(crate) use plotters::style::text_anchor::{HPos, Pos, VPos};
pub(crate) use whisker::{whisker, whisker_caption, whisker_words};

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

/// An SVG of a plot `plot_w` pixels wide and `h` high that `draw` draws, with the legend
/// `title` and `entries` beside it.
pub(crate) fn svg_with_legend<F>(
    plot_w: u32,
    h: u32,
    (title, entries): (&str, &[(String, RGBColor)]),
    draw: F,
) -> anyhow::Result<String>
where
    F: FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> anyhow::Result<()>,
{
    svg(plot_w + legend_width(title, entries), h, |root| {
        let (plot, side) = root.split_horizontally(plot_w);
        draw(&plot)?;
        legend(&side, title, entries)
    })
}

/// A chart builder on `area` with the caption `title` and room for the axes' labels
/// (`x_area` pixels below, 72 to the left).
pub(crate) fn builder<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
    x_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, font(16))
        .margin(12)
        .x_label_area_size(x_area)
        .y_label_area_size(72);
    b
}

/// Draws a chart's mesh as every chart here has it: 6 y ticks written by [`tick`] with one
/// light line between, the axes described by `x_desc` and `y_desc`; the x axis has 8 ticks
/// of its own when `x_ticks` (a time axis), else none and no vertical lines (the chart
/// labels its slots itself).
pub(crate) fn mesh<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
    x_ticks: bool,
) -> anyhow::Result<()>
where
    X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut m = chart.configure_mesh();
    if x_ticks {
        m.x_labels(8).x_label_formatter(&tick);
    } else {
        m.disable_x_mesh().x_labels(0);
    }
    m.y_labels(6)
        .max_light_lines(1)
        .y_label_formatter(&tick)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font(12))
        .axis_desc_style(font(13))
        .draw()?;
    Ok(())
}

/// Cells with values of a metric, ordered for display: by the numeric value of their factor
/// levels where the factor is numeric, else in plan order.
pub(crate) fn ordered_cells(r: &ReportData, w: &WorkloadReport) -> Vec<usize> {
    let mut cells = r.cells_with_data(w);
    let key = |c: usize| -> Vec<f64> {
        r.factors
            .iter()
            .map(|f| match (f.position(&r.cells[c]), &f.numeric) {
                (Some(p), Some(v)) => v[p],
                (Some(p), None) => p as f64,
                (None, _) => f64::INFINITY,
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
    let bars = w.stats.iter().filter(bars_ok);
    let mut phases = super::distinct(bars.map(|s| (s.phase.as_str(), s.name.as_str())));
    // A sweep over two numeric factors (IOzone's -a): one heatmap per phase instead of
    // bars, lines and strips for each.
    if let Some(axes) = heatmap::axes(&r.factors) {
        for (phase, name) in &phases {
            for fixed in heatmap::others(r, axes) {
                out.push(heatmap::chart(r, w, phase, name, axes, &fixed)?);
            }
        }
        phases.clear();
    }
    // A sweep's points are not bars or lines of their own: one bar (or time series) per
    // point of 126 says nothing; its telemetry is in the tables and the JSON.
    let sweep = crate::report::sweep::matrix_axes(r).is_some();
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
    for op in super::distinct(w.latency.iter().map(|l| l.op.as_str())) {
        out.push(latency::chart(r, w, op)?);
    }
    if sweep {
        return Ok(out);
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

/// The names of the report's factors except `skip`, for a legend's title.
pub(crate) fn other_factors(r: &ReportData, skip: &str) -> String {
    let mut names: Vec<&str> = r.factors.iter().map(|f| f.name.as_str()).collect();
    names.retain(|n| *n != skip);
    names.join(", ")
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
