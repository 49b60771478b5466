//! The summary printed after an engine command (`fslab fdtree --repeat N`) and by
//! `fslab show`: one row per metric with mean, standard deviation, 95% interval, min, max,
//! coefficient of variation and n, followed by the warnings.

use crate::metric::{Metric, Unit};
use crate::stats::{self, metric_warnings, Summary, Thresholds, Warning};
use crate::units::fmt_num;
use comfy_table::{presets, Cell, CellAlignment, Table};
use serde::Serialize;

/// One metric summarized over repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct MetricSummary {
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// Statistics.
    pub summary: Summary,
    /// The raw values in repetition order.
    pub values: Vec<f64>,
}

/// Group metrics of several repetitions by `phase.name`, in order of first appearance.
pub fn summarize_reps(reps: &[Vec<Metric>]) -> Vec<MetricSummary> {
    let mut order: Vec<(String, String, Unit)> = Vec::new();
    let mut values: Vec<Vec<f64>> = Vec::new();
    for rep in reps {
        for m in rep {
            let i = match order
                .iter()
                .position(|(p, n, _)| *p == m.phase && *n == m.name)
            {
                Some(i) => i,
                None => {
                    order.push((m.phase.clone(), m.name.clone(), m.unit));
                    values.push(Vec::new());
                    order.len() - 1
                }
            };
            values[i].push(m.value);
        }
    }
    order
        .into_iter()
        .zip(values)
        .filter_map(|((phase, name, unit), v)| {
            stats::summarize(&v).map(|summary| MetricSummary {
                phase,
                name,
                unit,
                summary,
                values: v,
            })
        })
        .collect()
}

/// Warnings for a set of summaries: short phases (from their `elapsed` metric) and high
/// variation of each phase's headline metric (`rate`, else `throughput`), once per phase.
pub fn warnings(sums: &[MetricSummary], t: &Thresholds) -> Vec<Warning> {
    let has = |phase: &str, name: &str| sums.iter().any(|m| m.phase == phase && m.name == name);
    let mut out = Vec::new();
    for m in sums {
        let headline = m.name == "rate" || (m.name == "throughput" && !has(&m.phase, "rate"));
        if m.name == "elapsed" {
            out.extend(
                metric_warnings(&m.phase, &m.name, true, &m.summary, t)
                    .into_iter()
                    .filter(|w| matches!(w, Warning::TooShort { .. })),
            );
        } else if headline {
            out.extend(metric_warnings(&m.phase, &m.name, false, &m.summary, t));
        }
    }
    out
}

fn opt(v: Option<f64>) -> String {
    v.map(fmt_num).unwrap_or_else(|| "-".into())
}

/// The summary as a text table.
pub fn render_table(sums: &[MetricSummary]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "phase", "metric", "unit", "mean", "sd", "95% CI", "min", "max", "cv", "n",
    ]);
    for m in sums {
        let s = &m.summary;
        let ci = s
            .ci95
            .map(|(lo, hi)| format!("{} – {}", fmt_num(lo), fmt_num(hi)))
            .unwrap_or_else(|| "-".into());
        let cv =
            s.cv.map(|c| format!("{:.1}%", c * 100.0))
                .unwrap_or_else(|| "-".into());
        t.add_row(vec![
            Cell::new(&m.phase),
            Cell::new(&m.name),
            Cell::new(m.unit.as_str()),
            Cell::new(fmt_num(s.mean)).set_alignment(CellAlignment::Right),
            Cell::new(opt(s.sd)).set_alignment(CellAlignment::Right),
            Cell::new(ci).set_alignment(CellAlignment::Right),
            Cell::new(fmt_num(s.min)).set_alignment(CellAlignment::Right),
            Cell::new(fmt_num(s.max)).set_alignment(CellAlignment::Right),
            Cell::new(cv).set_alignment(CellAlignment::Right),
            Cell::new(s.n).set_alignment(CellAlignment::Right),
        ]);
    }
    t.to_string()
}

/// The summary as JSON: every metric with unit, statistics and raw values.
pub fn to_json(sums: &[MetricSummary]) -> serde_json::Value {
    serde_json::Value::Array(
        sums.iter()
            .map(|m| {
                serde_json::json!({
                    "phase": m.phase,
                    "metric": m.name,
                    "unit": m.unit.as_str(),
                    "n": m.summary.n,
                    "mean": m.summary.mean,
                    "sd": m.summary.sd,
                    "median": m.summary.median,
                    "min": m.summary.min,
                    "max": m.summary.max,
                    "cv": m.summary.cv,
                    "ci95": m.summary.ci95.map(|(a, b)| [a, b]),
                    "values": m.values,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps() -> Vec<Vec<Metric>> {
        (0..3)
            .map(|i| {
                vec![
                    Metric::new(
                        "dir_create",
                        "elapsed",
                        Unit::Seconds,
                        0.5 + i as f64 * 0.01,
                    ),
                    Metric::new("dir_create", "rate", Unit::DirsPerSec, 100.0 + i as f64),
                ]
            })
            .collect()
    }

    #[test]
    fn groups_by_metric_in_order() {
        let s = summarize_reps(&reps());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "elapsed");
        assert_eq!(s[1].values, vec![100.0, 101.0, 102.0]);
        assert_eq!(s[1].summary.mean, 101.0);
    }

    #[test]
    fn table_and_json_carry_the_numbers() {
        let s = summarize_reps(&reps());
        let t = render_table(&s);
        assert!(t.contains("dir_create"));
        assert!(t.contains("101.0"), "{t}");
        let j = to_json(&s);
        assert_eq!(j[1]["unit"], "dirs/s");
        assert_eq!(j[1]["n"], 3);
    }

    #[test]
    fn short_phase_warns() {
        let s = summarize_reps(&reps());
        let w = warnings(&s, &Thresholds::default());
        assert_eq!(w.len(), 1);
        assert!(matches!(w[0], Warning::TooShort { .. }));
    }
}
