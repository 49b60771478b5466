//! Grouped bars with error bars: groups by one factor (the first; for `compare`, the first
//! that is not `source`), one bar per combination of the other factors, a legend, labelled
//! axes with units. The chart the classic articles drew per test.

use super::grouped::{self, Frame};
use super::*;
use crate::report::index_in;

/// The factor to group by, if any.
pub(crate) fn group_factor(r: &ReportData) -> Option<&Factor> {
    match r.factors.as_slice() {
        [] => None,
        [only] => Some(only),
        [first, second, ..] if first.name == "source" => Some(second),
        [first, ..] => Some(first),
    }
}

/// Grouped bar chart of one phase's metric.
pub fn chart(r: &ReportData, w: &WorkloadReport, phase: &str, name: &str) -> anyhow::Result<Chart> {
    let gf = group_factor(r);
    let mut groups: Vec<String> = Vec::new();
    let mut bars: Vec<String> = Vec::new();
    // (group, bar, stat)
    let mut items: Vec<(usize, usize, &CellMetric)> = Vec::new();
    for c in ordered_cells(r, w) {
        let Some(s) = w.stat(c, phase, name) else {
            continue;
        };
        let cell = &r.cells[c];
        let (g, b) = match gf {
            None => (String::new(), short_label(cell)),
            Some(f) => (
                level(cell, &f.name).unwrap_or("-").to_string(),
                others(cell, &f.name),
            ),
        };
        let (gi, bi) = (index_in(&mut groups, g), index_in(&mut bars, b));
        items.push((gi, bi, s));
    }
    let sc = axis_scale(items.iter().map(|i| i.2));
    let y = |v: f64| v / sc.divisor;
    let ymax = items
        .iter()
        .map(|(_, _, s)| y(whisker(s, r.options.error_bars).1.max(s.summary.mean)))
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let (ng, nb) = (groups.len().max(1), bars.len().max(1));
    let legend_entries: Vec<(String, RGBColor)> = if nb > 1 || gf.is_none() {
        bars.iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), color(i)))
            .collect()
    } else {
        Vec::new()
    };
    let plot_w = (ng * (30 + 34 * nb) + 120).clamp(420, 1000) as u32;
    let legend_title = gf.map_or_else(|| "configuration".into(), |f| other_factors(r, &f.name));
    let title = format!(
        "{} · {}",
        super::super::verdict::phase_label(phase),
        axis_label(name, &sc)
    );
    let frame = Frame {
        title: &title,
        plot_width: plot_w,
        height: 380,
        bars: nb,
        ymax,
        y_desc: axis_label(name, &sc),
        x_desc: gf
            .map(|f| f.name.clone())
            .unwrap_or_else(|| "configuration".into()),
        groups: &groups,
        legend: (&legend_title, &legend_entries),
    };
    let svg = grouped::draw(&frame, |chart, slots| {
        for (g, b, s) in &items {
            let (x0, x1) = slots.bar(*g, *b);
            let col = if gf.is_some() && nb == 1 {
                color(0)
            } else {
                color(*b)
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x1, y(s.summary.mean))],
                col.filled(),
            )))?;
            let (lo, hi) = whisker(s, r.options.error_bars);
            let (lo, hi) = (y(lo), y(hi));
            if hi > lo {
                let xc = (x0 + x1) / 2.0;
                let cap = slots.width * 0.18;
                let black = BLACK.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(xc, lo), (xc, hi)], black),
                    PathElement::new(vec![(xc - cap, lo), (xc + cap, lo)], black),
                    PathElement::new(vec![(xc - cap, hi), (xc + cap, hi)], black),
                ])?;
            }
        }
        Ok(())
    })?;
    Ok(Chart {
        kind: ChartKind::Bars,
        caption: format!(
            "Mean of each configuration; error bars: {}.",
            whisker_caption(
                &items.iter().map(|i| i.2).collect::<Vec<_>>(),
                r.options.error_bars
            )
        ),
        svg,
    })
}
