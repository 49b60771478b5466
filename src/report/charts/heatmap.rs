//! A sweep over two numeric factors as one heatmap per test, as IOzone's users know it from
//! Generate_Graphs: IOzone's `-a` (file size × record size, 126 points × 13 tests) is 13
//! pictures instead of dozens of bar, line and strip charts. Rows are the first factor's
//! levels (file size), columns the second's (record size); each square is coloured by the
//! mean on a log scale (viridis, readable in grey and by the colour-blind) and carries its
//! value; a point that was not measured (a record larger than its file) is left blank.
//!
//! The SVG is written directly (one `<g>` carries the text style), so a hundred squares
//! cost a few kilobytes: an `iozone -a` report stays under a megabyte.

use super::*;
use std::fmt::Write as _;

/// Square size in pixels.
const CELL_W: u32 = 56;
const CELL_H: u32 = 24;
const LEFT: u32 = 84;
const TOP: u32 = 44;
const BOTTOM: u32 = 58;
const BAR: u32 = 120;

/// Viridis at five stops.
const VIRIDIS: [(f64, f64, f64); 5] = [
    (68.0, 1.0, 84.0),
    (59.0, 82.0, 139.0),
    (33.0, 145.0, 140.0),
    (94.0, 201.0, 98.0),
    (253.0, 231.0, 37.0),
];

/// The colour at `f` in 0..=1, and whether text on it should be white.
fn colour(f: f64) -> (String, bool) {
    let f = f.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (f.floor() as usize).min(VIRIDIS.len() - 2);
    let k = f - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * k).round() as u8;
    let (r, g, bl) = (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    // Dark squares (the first half of viridis) take white text.
    (format!("#{r:02x}{g:02x}{bl:02x}"), f < 2.0)
}

/// A value in three significant digits (it fits its square): `12.3`, `4.56`, `0.71`.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Text escaped for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The heatmap of `phase.name` over factors `rows` × `cols` (indices into the report's
/// factors), for the configurations whose other factors are `fixed`.
pub fn chart(
    r: &ReportData,
    w: &WorkloadReport,
    phase: &str,
    name: &str,
    (rows, cols): (usize, usize),
    fixed: &[(String, String)],
) -> anyhow::Result<Chart> {
    let (fr, fc) = (&r.factors[rows], &r.factors[cols]);
    let m = crate::report::sweep::matrix(r, w, phase, name, (rows, cols), fixed);
    let grid = &m.entries;
    let stats: Vec<&CellMetric> = grid.iter().flatten().flatten().copied().collect();
    let sc = axis_scale(stats.iter().copied());
    let means: Vec<f64> = stats
        .iter()
        .map(|s| s.summary.mean)
        .filter(|m| *m > 0.0)
        .collect();
    let (lo, hi) = means
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), m| (a.min(*m), b.max(*m)));
    let frac = |m: f64| {
        if hi > lo && m > 0.0 {
            (m.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            0.5
        }
    };
    let width = LEFT + CELL_W * fc.levels.len() as u32 + BAR;
    let height = TOP + CELL_H * fr.levels.len() as u32 + BOTTOM;
    let mut title = format!(
        "{} · {}",
        super::super::grid::phase_label(&w.kind, phase),
        axis_label(name, &sc)
    );
    if !fixed.is_empty() {
        let f: Vec<String> = fixed.iter().map(|(n, l)| format!("{n}={l}")).collect();
        title.push_str(&format!(" ({})", f.join(", ")));
    }
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><rect width="{width}" height="{height}" fill="#fff"/><g font-family="sans-serif" font-size="12" fill="#000">"##
    );
    let _ = write!(
        s,
        r#"<text x="8" y="20" font-size="15">{}</text>"#,
        esc(&title)
    );
    let grid_w = CELL_W * fc.levels.len() as u32;
    let grid_h = CELL_H * fr.levels.len() as u32;
    // Row labels (right-aligned) and column labels (centred; the ones that would overlap
    // are left out).
    for (i, l) in fr.levels.iter().enumerate() {
        let y = TOP + CELL_H * i as u32 + CELL_H / 2 + 4;
        let _ = write!(
            s,
            r#"<text x="{}" y="{y}" text-anchor="end">{}</text>"#,
            LEFT - 6,
            esc(l)
        );
    }
    let placed: Vec<(i32, String)> = fc
        .levels
        .iter()
        .enumerate()
        .map(|(j, l)| ((LEFT + CELL_W * j as u32 + CELL_W / 2) as i32, l.clone()))
        .collect();
    for ((x, l), keep) in placed.iter().zip(thin_labels(&placed)) {
        if keep {
            let _ = write!(
                s,
                r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                TOP + grid_h + 16,
                esc(l)
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text x="14" y="{}" text-anchor="middle" transform="rotate(-90 14 {})">{}</text>"#,
        LEFT + grid_w / 2,
        TOP + grid_h + 40,
        esc(&fc.name),
        TOP + grid_h / 2,
        TOP + grid_h / 2,
        esc(&fr.name)
    );
    // The squares, each with its mean.
    for (i, row) in grid.iter().enumerate() {
        for (j, cell) in row.iter().enumerate() {
            let (x, y) = (LEFT + CELL_W * j as u32, TOP + CELL_H * i as u32);
            let Some(st) = cell else {
                let _ = write!(
                    s,
                    r##"<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="#f4f6f8"/>"##
                );
                continue;
            };
            let (fill, white) = colour(frac(st.summary.mean));
            let _ = write!(
                s,
                r##"<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{fill}" stroke="#fff"/><text x="{}" y="{}" text-anchor="middle"{}>{}</text>"##,
                x + CELL_W / 2,
                y + CELL_H / 2 + 4,
                if white { r##" fill="#fff""## } else { "" },
                short(st.summary.mean / sc.divisor)
            );
        }
    }
    // The colour scale: ten steps from the smallest mean (bottom) to the largest (top).
    let bx = LEFT + grid_w + 24;
    let step = grid_h / 10;
    for k in 0..10u32 {
        let (fill, _) = colour(1.0 - (k as f64 + 0.5) / 10.0);
        let _ = write!(
            s,
            r#"<rect x="{bx}" y="{}" width="16" height="{step}" fill="{fill}"/>"#,
            TOP + step * k
        );
    }
    if hi > 0.0 {
        for (v, y) in [(hi, TOP + 10), (lo, TOP + step * 10)] {
            let _ = write!(
                s,
                r#"<text x="{}" y="{y}">{}</text>"#,
                bx + 22,
                tick(&(v / sc.divisor))
            );
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}">{}</text>"#,
            bx,
            TOP + step * 10 + 20,
            esc(sc.label)
        );
    }
    s.push_str("</g></svg>");
    let disturbed = if stats.iter().any(|s| !s.disturbed.is_empty()) {
        " Some points include repetitions other activity disturbed (marked * in the table; see Warnings)."
    } else {
        ""
    };
    Ok(Chart {
        kind: ChartKind::Heatmap,
        caption: format!(
            "Mean of each {} × {} point, in three digits (colour on a log scale; the table has the spread); blank: not measured.{disturbed}",
            fr.name, fc.name
        ),
        svg: s,
    })
}

pub use crate::report::sweep::{axes, others};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fit_their_square() {
        assert_eq!(short(0.70541), "0.71");
        assert_eq!(short(12.345), "12.3");
        assert_eq!(short(1234.5), "1234");
    }

    #[test]
    fn viridis_from_dark_to_light() {
        assert_eq!(colour(0.0), ("#440154".to_string(), true));
        assert_eq!(colour(1.0), ("#fde725".to_string(), false));
        assert_eq!(colour(0.5).0, "#21918c");
        assert_eq!(colour(7.0), colour(1.0));
    }
}
