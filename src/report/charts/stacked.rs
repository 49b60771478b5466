//! Telemetry per phase as stacked bars: in each phase one bar per configuration, stacked
//! from its parts — what the data and journal devices wrote, or the CPU's user, system,
//! iowait and steal shares — so where a configuration's bytes or time went reads at a glance.

use super::grouped::{self, Frame};
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
    [&WRITES, &CPU]
        .into_iter()
        .filter_map(|k| chart(r, w, k).transpose())
        .collect()
}

fn chart(r: &ReportData, w: &WorkloadReport, k: &Kind) -> anyhow::Result<Option<Chart>> {
    let find = |cell: usize, phase: &str, name: &str| {
        w.telemetry_stat(cell, phase, name)
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
    let measured = w
        .telemetry
        .iter()
        .filter(|s| parts.iter().any(|(m, _)| *m == s.name));
    let phases = crate::report::distinct(measured.map(|s| s.phase.as_str()));
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
    let unit = if sc.label.is_empty() { "%" } else { sc.label };
    let labels: Vec<String> = phases
        .iter()
        .map(|p| super::super::grid::phase_label(&w.kind, p))
        .collect();
    let frame = Frame {
        title: k.title,
        plot_width: plot_w,
        height: 360,
        bars: nb,
        ymax,
        y_desc: format!("mean per repetition ({unit})"),
        x_desc: "phase".into(),
        groups: &labels,
        legend: ("part", &entries),
    };
    let svg = grouped::draw(&frame, |chart, slots| {
        for (g, b, values) in &bars {
            let (x0, x1) = slots.bar(*g, *b);
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
        Ok(())
    })?;
    let order: Vec<String> = cells.iter().map(|&c| short_label(&r.cells[c])).collect();
    Ok(Some(Chart {
        kind: ChartKind::Telemetry,
        caption: format!(
            "Telemetry means per repetition; in each phase one bar per configuration, left to right: {}.",
            order.join(", ")
        ),
        svg,
    }))
}
