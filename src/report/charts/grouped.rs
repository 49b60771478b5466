//! The frame both bar charts draw in (`bars.rs`: a bar with error bars per configuration;
//! `stacked.rs`: a bar stacked from its parts): the plot with its legend pane at the right,
//! the caption, the y axis with its ticks and description, the x axis's description, each
//! bar's slot in its group, the group labels under the axis (thinned where they would
//! overlap) and the legend. The caller draws only the bars.

use super::*;
use plotters::coord::types::RangedCoordf64;

/// The chart the bars are drawn into: groups along x (group `g` spans `g..g + 1`), values
/// along y from zero.
pub(crate) type GroupedChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// What a grouped bar chart shows around its bars.
pub(crate) struct Frame<'a> {
    /// The caption.
    pub title: &'a str,
    /// Width of the plot (the legend pane is added to it).
    pub plot_width: u32,
    /// Height of the whole chart.
    pub height: u32,
    /// Bars per group (at least 1).
    pub bars: usize,
    /// The top of the y axis, in the axis's unit.
    pub ymax: f64,
    /// The y axis's description (metric and unit).
    pub y_desc: String,
    /// The x axis's description (what the groups are).
    pub x_desc: String,
    /// The label under each group, in order.
    pub groups: &'a [String],
    /// The legend's title and entries (none: no legend pane).
    pub legend: (&'a str, &'a [(String, RGBColor)]),
}

/// Where bar `b` of group `g` stands: the groups' inner 80 % shared by the bars, each bar
/// with a small gap on both sides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slots {
    /// The width of one bar's slot.
    pub width: f64,
}

impl Slots {
    /// The left and right x of bar `b` in group `g`.
    pub fn bar(&self, g: usize, b: usize) -> (f64, f64) {
        let x0 = g as f64 + 0.1 + b as f64 * self.width + self.width * 0.08;
        (x0, x0 + self.width * 0.84)
    }
}

/// Draw the frame, with `bars` drawing the bars into the chart, and return the SVG.
pub(crate) fn draw<F>(f: &Frame<'_>, bars: F) -> anyhow::Result<String>
where
    F: FnOnce(&mut GroupedChart<'_, '_>, Slots) -> anyhow::Result<()>,
{
    let ng = f.groups.len().max(1);
    svg_with_legend(f.plot_width, f.height, f.legend, |plot| {
        let mut chart =
            builder(plot, f.title, 44).build_cartesian_2d(0f64..ng as f64, 0f64..f.ymax)?;
        mesh(&mut chart, &f.x_desc, &f.y_desc, false)?;
        bars(
            &mut chart,
            Slots {
                width: 0.8 / f.bars.max(1) as f64,
            },
        )?;
        let placed: Vec<(i32, String)> = f
            .groups
            .iter()
            .enumerate()
            .map(|(g, label)| (chart.backend_coord(&(g as f64 + 0.5, 0.0)).0, label.clone()))
            .collect();
        let py = chart.backend_coord(&(0.0, 0.0)).1;
        for ((px, label), keep) in placed.iter().zip(thin_labels(&placed)) {
            if keep {
                plot.draw(&Text::new(label.clone(), (*px, py + 6), label_below(12)))?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_share_the_inner_part_of_their_group_without_touching() {
        let s = Slots { width: 0.8 / 2.0 };
        let (a0, a1) = s.bar(1, 0);
        let (b0, b1) = s.bar(1, 1);
        assert!((a0 - (1.0 + 0.1 + 0.4 * 0.08)).abs() < 1e-12, "{a0}");
        assert!(a0 < a1 && a1 < b0 && b0 < b1, "{a0} {a1} {b0} {b1}");
        assert!(b1 <= 1.9 + 1e-12, "inside the group's 80 %: {b1}");
    }

    #[test]
    fn the_frame_has_its_caption_axes_group_labels_and_legend() {
        let entries = [("ext4".to_string(), color(0))];
        let groups = ["1 MiB".to_string(), "4 MiB".to_string()];
        let mut drawn = Vec::new();
        let svg = draw(
            &Frame {
                title: "the title",
                plot_width: 420,
                height: 360,
                bars: 1,
                ymax: 10.0,
                y_desc: "y words".into(),
                x_desc: "x words".into(),
                groups: &groups,
                legend: ("legend title", &entries),
            },
            |_, slots| {
                drawn.push(slots.bar(0, 0));
                Ok(())
            },
        )
        .unwrap();
        for text in [
            "the title",
            "y words",
            "x words",
            "1 MiB",
            "4 MiB",
            "legend title",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert_eq!(drawn.len(), 1, "the bars are drawn once");
        assert!(
            svg.starts_with("<svg") && svg.contains("width=\"570\""),
            "legend pane"
        );
    }
}
