//! A forest plot of the comparisons: one row per comparison, its percent change as a square
//! and its 95% interval as a line, on the scale the interval was computed on (the log of the
//! ratio for times, rates, sizes and counts, so a halving and a doubling are equally far
//! from 0), coloured by the verdict in the metric's own direction — better (more throughput,
//! less time, latency or CPU) green, worse vermillion, no significant difference grey.
//! Intervals beyond −95% or +1900% are cut at the edge with an arrow.

use super::*;

/// Changes are drawn between these percentages.
const P_MIN: f64 = -95.0;
const P_MAX: f64 = 1900.0;
/// The percentages that may carry a tick.
const TICKS: [f64; 15] = [
    -95.0, -90.0, -75.0, -50.0, -25.0, -10.0, 0.0, 10.0, 25.0, 50.0, 100.0, 200.0, 400.0, 900.0,
    1900.0,
];
const ROW: i32 = 22;
const TOP: i32 = 40;
const BOTTOM: i32 = 56;
const PLOT: i32 = 440;

/// Colours: better, worse, no significant difference (Okabe–Ito green and vermillion).
const BETTER: RGBColor = RGBColor(0, 158, 115);
const WORSE: RGBColor = RGBColor(213, 94, 0);
const NEUTRAL: RGBColor = RGBColor(110, 110, 110);

/// Position of a percent change on the axis: the log of the ratio, within the drawn range.
fn t(p: f64) -> f64 {
    (1.0 + p.clamp(P_MIN, P_MAX) / 100.0).ln()
}

/// A tick label: `+100%`, `0`, `−50%`.
fn tick_label(p: f64) -> String {
    match p {
        0.0 => "0".into(),
        p if p > 0.0 => format!("+{p}%"),
        p => format!("−{}%", -p),
    }
}

/// The forest plot of `rows` (each a label and its comparison); `None` when none has an
/// interval. `more` comparisons were left out of it (said in the caption).
pub fn chart(rows: &[(String, &Comparison)], more: usize) -> anyhow::Result<Option<Chart>> {
    let rows: Vec<(&str, &Comparison, (f64, f64))> = rows
        .iter()
        .filter_map(|(l, c)| Some((l.as_str(), *c, c.change.as_ref()?.ci95?)))
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = rows.iter().fold((0.0f64, 0.0f64), |(a, b), (_, c, ci)| {
        let p = c.change.as_ref().map_or(0.0, |x| x.percent);
        (a.min(t(ci.0)).min(t(p)), b.max(t(ci.1)).max(t(p)))
    });
    let pad = ((hi - lo) * 0.06).max(0.02);
    let (lo, hi) = (lo - pad, hi + pad);
    let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) as i32;
    let label_w = (16 + CHAR_PX as i32 * longest).min(560);
    let room = ((label_w - 16) / CHAR_PX as i32).max(8) as usize;
    let width = label_w + PLOT + 24;
    let height = TOP + ROW * rows.len() as i32 + BOTTOM;
    let x = |v: f64| label_w + ((v - lo) / (hi - lo) * PLOT as f64).round() as i32;
    let title = "Change against the baseline, with its 95% interval";
    let svg = svg(width as u32, height as u32, |root| {
        root.draw(&Text::new(title, (8, 12), font(15)))?;
        let bottom = TOP + ROW * rows.len() as i32;
        // Ticks, their grid lines and labels that do not overlap.
        let ticks: Vec<(i32, String)> = TICKS
            .iter()
            .filter(|p| (lo..=hi).contains(&t(**p)))
            .map(|p| (x(t(*p)), tick_label(*p)))
            .collect();
        let grey = RGBColor(225, 228, 232);
        for ((px, label), keep) in ticks.iter().zip(thin_labels(&ticks)) {
            root.draw(&PathElement::new(vec![(*px, TOP - 4), (*px, bottom)], grey))?;
            if keep {
                root.draw(&Text::new(
                    label.clone(),
                    (*px, bottom + 8),
                    label_below(12),
                ))?;
            }
        }
        root.draw(&PathElement::new(
            vec![(label_w, bottom), (label_w + PLOT, bottom)],
            BLACK,
        ))?;
        let zero = x(0.0);
        root.draw(&PathElement::new(
            vec![(zero, TOP - 6), (zero, bottom)],
            BLACK.stroke_width(1),
        ))?;
        root.draw(&Text::new(
            "percent change (log scale of the ratio)",
            (label_w + PLOT / 2, bottom + 30),
            label_below(12),
        ))?;
        for (i, (label, c, ci)) in rows.iter().enumerate() {
            let y = TOP + ROW * i as i32 + ROW / 2;
            let col = match c.better {
                Some(true) => BETTER,
                Some(false) => WORSE,
                None => NEUTRAL,
            };
            root.draw(&Text::new(
                elide(label, room),
                (label_w - 8, y),
                font(12).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
            let (x0, x1) = (x(t(ci.0)), x(t(ci.1)));
            root.draw(&PathElement::new(
                vec![(x0, y), (x1, y)],
                col.stroke_width(2),
            ))?;
            // Cut ends get an arrow.
            for (cut, xe, dir) in [(ci.0 < P_MIN, x0, -1), (ci.1 > P_MAX, x1, 1)] {
                if cut {
                    root.draw(&Polygon::new(
                        vec![(xe + 6 * dir, y), (xe, y - 4), (xe, y + 4)],
                        col.filled(),
                    ))?;
                }
            }
            let p = c.change.as_ref().map_or(0.0, |x| x.percent);
            let xp = x(t(p));
            root.draw(&Rectangle::new(
                [(xp - 4, y - 4), (xp + 4, y + 4)],
                col.filled(),
            ))?;
        }
        Ok(())
    })?;
    let mut caption = "Each comparison's percent change (square) and 95% interval (line), from the same model as its p; green: better, vermillion: worse, in the metric's own direction (more throughput and IOPS; less time, latency and CPU); grey: no significant difference.".to_string();
    if more > 0 {
        caption.push_str(&format!(
            " {more} more comparisons are in the table below, not drawn."
        ));
    }
    Ok(Some(Chart {
        kind: ChartKind::Forest,
        caption,
        svg,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_is_the_log_of_the_ratio_within_its_range() {
        assert_eq!(t(0.0), 0.0);
        // A halving and a doubling are equally far from no change.
        assert!((t(-50.0) + t(100.0)).abs() < 1e-12);
        assert_eq!(t(-100.0), t(P_MIN));
        assert_eq!(t(1e9), t(P_MAX));
        assert_eq!(tick_label(-50.0), "−50%");
        assert_eq!(tick_label(200.0), "+200%");
    }
}
