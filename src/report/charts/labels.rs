//! Chart text that has to fit: the legend pane at the right of a chart (as wide as its
//! labels need, within bounds; longer labels shortened in the middle) and the category labels
//! under an axis, thinned so that none overlaps another. Widths are estimated per character:
//! the SVG leaves the font to the browser.

use super::font;
use plotters::prelude::*;

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
