//! A repetition over time (`--timeline`): one metric sampled once a second — the data
//! device's write throughput, its utilisation, the engine's progress rate — one line per
//! configuration (its first counted repetition with a time series), seconds since the run
//! began on the x axis.

use super::*;

/// The chart of one timeline metric.
pub fn chart(r: &ReportData, w: &WorkloadReport, name: &str) -> anyhow::Result<Chart> {
    let series: Vec<&TimelineSeries> = w.timelines.iter().filter(|s| s.name == name).collect();
    let unit = series
        .first()
        .map_or(crate::metric::Unit::Count, |s| s.unit);
    let tmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let sc = unit.scale_for(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1 / sc.divisor))
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let title = format!("{} over time", timeline_label(name));
    let entries: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                format!("{} (rep {})", short_label(&r.cells[s.cell]), s.repetition),
                color(i),
            )
        })
        .collect();
    let svg = svg_with_legend(470, 300, ("configuration", &entries), |plot| {
        let mut chart = builder(plot, &title, 40).build_cartesian_2d(0.0..tmax, 0.0..ymax)?;
        let y_desc = format!("{}{}", timeline_label(name), sc.suffix());
        mesh(&mut chart, "seconds since the run began", &y_desc, true)?;
        for (i, s) in series.iter().enumerate() {
            chart.draw_series(LineSeries::new(
                s.points.iter().map(|p| (p.0, p.1 / sc.divisor)),
                color(i).stroke_width(2),
            ))?;
        }
        Ok(())
    })?;
    Ok(Chart {
        kind: ChartKind::Timeline,
        caption: "Sampled once a second during the run (--timeline, timeline = true); each point is the second that ends there. One repetition per configuration: its first with a time series.".into(),
        svg,
    })
}

/// Words for a timeline metric.
pub fn timeline_label(name: &str) -> String {
    match name {
        "dev.data.write_rate" => "data device writes".into(),
        "dev.data.read_rate" => "data device reads".into(),
        "dev.journal.write_rate" => "journal device writes".into(),
        "dev.data.util" => "data device utilisation".into(),
        "cpu.iowait" => "CPU iowait".into(),
        "progress" => "engine progress".into(),
        other => other.to_string(),
    }
}
