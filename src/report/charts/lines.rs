//! Line charts for numeric sweeps (journal size, record size, clients): the factor's levels
//! placed by value on the x axis (log₂ when they span 8× or more), one line per combination
//! of the other factors, the mean with a shaded band (95% CI or ± sd).

use super::*;

/// (x, mean, low, high) of one level.
type Point = (f64, f64, f64, f64);

/// Line chart of one phase's metric over numeric factor `fi`.
pub fn chart(
    r: &ReportData,
    w: &WorkloadReport,
    fi: usize,
    phase: &str,
    name: &str,
) -> anyhow::Result<Chart> {
    let f = &r.factors[fi];
    let values = f.numeric.clone().unwrap_or_default();
    let (vmin, vmax) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let log = vmin > 0.0 && vmax / vmin >= 8.0;
    let tx = |v: f64| if log { v.log2() } else { v };
    // series label → points (x, mean, lo, hi), in level order.
    let mut series: Vec<(String, Vec<Point>)> = Vec::new();
    let sc = axis_scale(
        ordered_cells(r, w)
            .into_iter()
            .filter_map(|c| w.stat(c, phase, name)),
    );
    let y = |v: f64| v / sc.divisor;
    let mut shown: Vec<&CellMetric> = Vec::new();
    for c in ordered_cells(r, w) {
        let Some(s) = w.stat(c, phase, name) else {
            continue;
        };
        let cell = &r.cells[c];
        let Some(pos) = f.position(cell) else {
            continue;
        };
        shown.push(s);
        let key = others(cell, &f.name);
        let (lo, hi) = whisker(s, r.options.error_bars);
        let point = (tx(values[pos]), y(s.summary.mean), y(lo), y(hi));
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, pts)) => pts.push(point),
            None => series.push((key, vec![point])),
        }
    }
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (x0, x1) = (tx(vmin), tx(vmax));
    let pad = ((x1 - x0) * 0.06).max(0.5);
    let ymax = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.3.max(q.1)))
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let entries: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, (k, _))| {
            let label = if k.is_empty() {
                "mean".to_string()
            } else {
                k.clone()
            };
            (label, color(i))
        })
        .collect();
    let title = format!(
        "{} · {} by {}",
        super::super::verdict::phase_label(phase),
        axis_label(name, &sc),
        f.name
    );
    let legend_title = other_factors(r, &f.name);
    let svg = svg_with_legend(470, 380, (&legend_title, &entries), |plot| {
        let mut chart =
            builder(plot, &title, 44).build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..ymax)?;
        let x_desc = if log {
            format!("{} (log scale)", f.name)
        } else {
            f.name.clone()
        };
        mesh(&mut chart, &x_desc, &axis_label(name, &sc), false)?;
        for (i, (_, pts)) in series.iter().enumerate() {
            let col = color(i);
            let mut band: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.3)).collect();
            band.extend(pts.iter().rev().map(|p| (p.0, p.2)));
            chart.draw_series(std::iter::once(Polygon::new(band, col.mix(0.18).filled())))?;
            // Each band's edges dashed in its line's colour, so overlapping bands stay
            // distinguishable where their fills mix.
            for edge in [
                pts.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
                pts.iter().map(|p| (p.0, p.3)).collect(),
            ] {
                chart.draw_series(DashedLineSeries::new(
                    edge,
                    6,
                    4,
                    col.mix(0.8).stroke_width(1),
                ))?;
            }
            chart.draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, p.1)),
                col.stroke_width(2),
            ))?;
            chart.draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 4, col.filled())))?;
        }
        // Ticks at the levels themselves, labelled as the study names them; labels that
        // would overlap (13 record sizes on a log axis) are left out, the ticks stay.
        let placed: Vec<(i32, String)> = f
            .levels
            .iter()
            .enumerate()
            .map(|(pos, label)| {
                (
                    chart.backend_coord(&(tx(values[pos]), 0.0)).0,
                    label.clone(),
                )
            })
            .collect();
        let py = chart.backend_coord(&(tx(values[0]), 0.0)).1;
        for ((px, label), keep) in placed.iter().zip(thin_labels(&placed)) {
            plot.draw(&PathElement::new(vec![(*px, py), (*px, py + 5)], BLACK))?;
            if keep {
                plot.draw(&Text::new(label.clone(), (*px, py + 7), label_below(12)))?;
            }
        }
        Ok(())
    })?;
    Ok(Chart {
        kind: ChartKind::Lines,
        caption: format!(
            "Mean per level of {}; shaded band: {}.",
            f.name,
            whisker_caption(&shown, r.options.error_bars)
        ),
        svg,
    })
}
