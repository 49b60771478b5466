//! Latency percentiles of one operation: the percentile on a "nines" axis
//! (x = −log₁₀(1 − p): 50%, 90%, 99%, 99.9%, 99.99%, then the maximum), latency in ms on the
//! y axis (log scale when it spans more than 20×), one line per configuration.

use super::*;

/// Position of a percentile on the nines axis; the maximum sits half a step right of 99.99%.
fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        4.5
    } else {
        (-(1.0 - p / 100.0).log10()).min(4.0)
    }
}

/// Percentile chart of one operation.
pub fn chart(r: &ReportData, w: &WorkloadReport, op: &str) -> anyhow::Result<Chart> {
    let curves: Vec<&LatencyCurve> = w.latency.iter().filter(|l| l.op == op).collect();
    let all: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0f64, f64::max);
    let (lo, hi) = if all.is_empty() {
        (0.001, 1.0)
    } else {
        (lo, hi)
    };
    let log = hi / lo > 20.0;
    let from_hist = curves.iter().all(|c| c.from == "histogram");
    // Stored in ms, drawn in the unit that suits them (µs for a 3 µs fsync, not 0.003 ms).
    let sc = super::super::grid::latency_scale(w, op);
    let (lo, hi) = (lo / sc.divisor, hi / sc.divisor);
    let title = format!(
        "{} · latency percentiles ({})",
        super::super::grid::phase_label(&w.kind, op),
        sc.label
    );
    let entries: Vec<(String, RGBColor)> = curves
        .iter()
        .enumerate()
        .map(|(i, c)| (short_label(&r.cells[c.cell]), color(i)))
        .collect();
    let ticks: [(f64, &str); 6] = [
        (50.0, "p50"),
        (90.0, "p90"),
        (99.0, "p99"),
        (99.9, "p99.9"),
        (99.99, "p99.99"),
        (100.0, "max"),
    ];
    let svg = svg_with_legend(470, 340, ("configuration", &entries), |plot| {
        let xr = 0.0f64..4.7;
        let to_xy = |pts: &[(f64, f64)]| -> Vec<(f64, f64)> {
            pts.iter()
                .map(|p| {
                    let v = p.1 / sc.divisor;
                    (nines(p.0), if log { v.max(lo) } else { v })
                })
                .collect()
        };
        let y_desc = if log {
            format!("latency ({}, log scale)", sc.label)
        } else {
            format!("latency ({})", sc.label)
        };
        macro_rules! body {
            ($chart:ident, $ybase:expr) => {{
                mesh(&mut $chart, "percentile", &y_desc, false)?;
                for (i, c) in curves.iter().enumerate() {
                    let pts = to_xy(&c.points);
                    $chart.draw_series(LineSeries::new(pts.clone(), color(i).stroke_width(2)))?;
                    $chart
                        .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color(i).filled())))?;
                }
                for (p, label) in ticks {
                    let (px, py) = $chart.backend_coord(&(nines(p), $ybase));
                    plot.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK))?;
                    plot.draw(&Text::new(label, (px, py + 7), label_below(12)))?;
                }
            }};
        }
        let mut b = builder(plot, &title, 44);
        if log {
            let (y0, y1) = (lo * 0.8, hi * 1.25);
            let mut chart = b.build_cartesian_2d(xr, (y0..y1).log_scale())?;
            body!(chart, y0);
        } else {
            let mut chart = b.build_cartesian_2d(xr, 0.0..hi * 1.1)?;
            body!(chart, 0.0);
        }
        Ok(())
    })?;
    Ok(Chart {
        kind: ChartKind::Latency,
        caption: if from_hist {
            "Latency at each percentile, all repetitions merged exactly (HDR histograms).".into()
        } else {
            "Latency at each percentile: means over repetitions of the per-repetition percentiles."
                .into()
        },
        svg,
    })
}
