//! Telemetry per phase as stacked bars: in each phase one bar per configuration, stacked
//! from its parts — what the data and journal devices wrote, or the CPU's user, system,
//! iowait and steal shares — so where a configuration's bytes or time went reads at a glance.

use super::*;

/// One stacked chart: its title, axis unit and parts (telemetry metric, legend label).
struct Kind {
    title: &'static str,
    unit: crate::metric::Unit,
    parts: &'static [(&'static str, &'static str)],
}

const WRITES: Kind = Kind {
    title: "Device writes per phase",
    unit: crate::metric::Unit::Bytes,
    parts: &[
        ("dev.data.write_bytes", "data device"),
        ("dev.journal.write_bytes", "journal device"),
    ],
};

const CPU: Kind = Kind {
    title: "CPU per phase",
    unit: crate::metric::Unit::Percent,
    parts: &[
        ("cpu.user", "user"),
        ("cpu.sys", "system"),
        ("cpu.iowait", "iowait"),
        ("cpu.steal", "steal"),
    ],
};

/// The stacked telemetry charts of a workload (device writes, CPU), those it has data for.
pub fn charts(r: &ReportData, w: &WorkloadReport) -> anyhow::Result<Vec<Chart>> {
    let mut out = Vec::new();
    for k in [&WRITES, &CPU] {
        if let Some(c) = chart(r, w, k)? {
            out.push(c);
        }
    }
    Ok(out)
}

fn chart(r: &ReportData, w: &WorkloadReport, k: &Kind) -> anyhow::Result<Option<Chart>> {
    let find = |cell: usize, phase: &str, name: &str| {
        w.telemetry
            .iter()
            .find(|s| s.cell == cell && s.phase == phase && s.name == name)
            .map(|s| s.summary.mean.max(0.0))
    };
    let parts: Vec<&(&str, &str)> = k
        .parts
        .iter()
        .filter(|(m, _)| w.telemetry.iter().any(|s| s.name == *m))
        .collect();
    if parts.is_empty() {
        return Ok(None);
    }
    let mut phases: Vec<&str> = Vec::new();
    for s in &w.telemetry {
        if parts.iter().any(|(m, _)| *m == s.name) && !phases.contains(&s.phase.as_str()) {
            phases.push(&s.phase);
        }
    }
    let cells: Vec<usize> = ordered_cells(r, w)
        .into_iter()
        .filter(|&c| {
            phases
                .iter()
                .any(|p| parts.iter().any(|(m, _)| find(c, p, m).is_some()))
        })
        .collect();
    // (phase, bar, [part values])
    let mut bars: Vec<(usize, usize, Vec<f64>)> = Vec::new();
    for (pi, p) in phases.iter().enumerate() {
        for (bi, &c) in cells.iter().enumerate() {
            let values = parts
                .iter()
                .map(|(m, _)| find(c, p, m).unwrap_or(0.0))
                .collect();
            bars.push((pi, bi, values));
        }
    }
    let top = bars
        .iter()
        .map(|b| b.2.iter().sum::<f64>())
        .fold(0.0f64, f64::max);
    if top <= 0.0 {
        return Ok(None);
    }
    let sc = k.unit.scale(top);
    let ymax = top / sc.divisor * 1.1;
    let (ng, nb) = (phases.len(), cells.len().max(1));
    let entries: Vec<(String, RGBColor)> = parts
        .iter()
        .enumerate()
        .map(|(i, (_, l))| (l.to_string(), color(i)))
        .collect();
    let plot_w = (ng * (30 + 30 * nb) + 120).clamp(420, 1000) as u32;
    let legend_w = legend_width("part", &entries);
    let title = k.title.to_string();
    let unit = if sc.label.is_empty() { "%" } else { sc.label };
    let svg = svg(plot_w + legend_w, 360, |root| {
        let (plot, side) = root.split_horizontally(plot_w);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&title, font(16))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d(0f64..ng as f64, 0f64..ymax)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .max_light_lines(1)
            .y_label_formatter(&tick)
            .y_desc(format!("mean per repetition ({unit})"))
            .x_desc("phase")
            .label_style(font(12))
            .axis_desc_style(font(13))
            .draw()?;
        let bw = 0.8 / nb as f64;
        for (g, b, values) in &bars {
            let x0 = *g as f64 + 0.1 + *b as f64 * bw + bw * 0.08;
            let x1 = x0 + bw * 0.84;
            let mut base = 0.0;
            for (i, v) in values.iter().enumerate() {
                let v = v / sc.divisor;
                if v > 0.0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, base), (x1, base + v)],
                        color(i).filled(),
                    )))?;
                }
                base += v;
            }
        }
        let placed: Vec<(i32, String)> = phases
            .iter()
            .enumerate()
            .map(|(g, p)| {
                let label = super::super::grid::phase_label(&w.kind, p);
                (chart.backend_coord(&(g as f64 + 0.5, 0.0)).0, label)
            })
            .collect();
        let py = chart.backend_coord(&(0.0, 0.0)).1;
        for ((px, label), keep) in placed.iter().zip(thin_labels(&placed)) {
            if keep {
                plot.draw(&Text::new(label.clone(), (*px, py + 6), label_below(12)))?;
            }
        }
        legend(&side, "part", &entries)?;
        Ok(())
    })?;
    let order: Vec<String> = cells.iter().map(|&c| short_label(&r.cells[c])).collect();
    Ok(Some(Chart {
        kind: ChartKind::Telemetry,
        title,
        caption: format!(
            "Telemetry means per repetition; in each phase one bar per configuration, left to right: {}.",
            order.join(", ")
        ),
        svg,
    }))
}
