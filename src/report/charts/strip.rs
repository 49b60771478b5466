//! Every repetition visible: one slot per configuration, its values as dots from left to
//! right in execution order (so drift shows as a slope and a slow first run as the leftmost
//! dot), outliers (`stats::outliers`) ringed in red, the mean as a horizontal bar.

use super::*;

/// Strip plot of one phase's metric.
pub fn chart(r: &ReportData, w: &WorkloadReport, phase: &str, name: &str) -> anyhow::Result<Chart> {
    let slots: Vec<(usize, &CellMetric)> = ordered_cells(r, w)
        .into_iter()
        .filter_map(|c| w.stat(c, phase, name).map(|s| (c, s)))
        .collect();
    let sc = axis_scale(slots.iter().map(|s| s.1));
    let y = |v: f64| v / sc.divisor;
    let (lo, hi) = slots
        .iter()
        .flat_map(|(_, s)| s.values.iter().map(|v| y(*v)))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let span = if hi > lo {
        hi - lo
    } else {
        hi.abs().max(1.0) * 0.1
    };
    let (ymin, ymax) = (
        (lo - span * 0.15).max(if lo >= 0.0 { 0.0 } else { f64::MIN }),
        hi + span * 0.15,
    );
    let n = slots.len().max(1);
    let width = (n * 90 + 140).clamp(420, 1100) as u32;
    // Labels that do not fit their slot are drawn vertically (plotters' text estimate is
    // about 0.56 em per character at 12 px).
    let labels: Vec<String> = slots
        .iter()
        .map(|(c, _)| short_label(&r.cells[*c]))
        .collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let slot_px = (width - 110) / n as u32;
    // About 7 px per character at 12 px.
    let vertical = longest * 7 > slot_px;
    let label_area = if vertical {
        (longest * 7 + 34).min(240)
    } else {
        44
    };
    let title = format!(
        "{} · {} · every repetition",
        super::super::verdict::phase_label(phase),
        axis_label(name, &sc)
    );
    let svg = svg(width, 316 + label_area, |root| {
        let mut chart =
            builder(root, &title, label_area).build_cartesian_2d(0f64..n as f64, ymin..ymax)?;
        mesh(
            &mut chart,
            "configuration (dots left to right in execution order)",
            &axis_label(name, &sc),
            false,
        )?;
        // Colours as in the bar charts: one per combination of the non-grouping factors.
        let gf = super::bars::group_factor(r)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        let mut keys: Vec<String> = Vec::new();
        for (i, (c, s)) in slots.iter().enumerate() {
            let key = others(&r.cells[*c], &gf);
            let ki = crate::report::index_in(&mut keys, key);
            let col = color(ki);
            let k = s.values.len();
            let x_of = |j: usize| {
                if k <= 1 {
                    i as f64 + 0.5
                } else {
                    i as f64 + 0.2 + 0.6 * j as f64 / (k - 1) as f64
                }
            };
            chart.draw_series(std::iter::once(PathElement::new(
                vec![
                    (i as f64 + 0.12, y(s.summary.mean)),
                    (i as f64 + 0.88, y(s.summary.mean)),
                ],
                BLACK.stroke_width(2),
            )))?;
            // Disturbed repetitions (other activity on the machine) as hollow squares.
            chart.draw_series(
                s.values
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| !s.disturbed.contains(j))
                    .map(|(j, v)| Circle::new((x_of(j), y(*v)), 4, col.filled())),
            )?;
            chart.draw_series(s.disturbed.iter().map(|&j| {
                let (x, yv) = (x_of(j), y(s.values[j]));
                EmptyElement::at((x, yv)) + Rectangle::new([(-5, -5), (5, 5)], col.stroke_width(2))
            }))?;
            chart.draw_series(
                s.outliers
                    .iter()
                    .map(|&j| Circle::new((x_of(j), y(s.values[j])), 8, RED.stroke_width(2))),
            )?;
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, ymin));
            let style = if vertical {
                font(12)
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center))
            } else {
                label_below(12)
            };
            root.draw(&Text::new(labels[i].clone(), (px, py + 6), style))?;
        }
        Ok(())
    })?;
    Ok(Chart {
        kind: ChartKind::Strip,
        caption: "Every counted repetition, left to right in execution order; black bar: mean; red ring: outlier, further from the others than their spread explains (judged from 5 repetitions on; kept in the statistics); hollow square: a repetition other activity on the machine disturbed (see Warnings; kept in the statistics).".into(),
        svg,
    })
}
