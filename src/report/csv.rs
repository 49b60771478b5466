//! The CSV report: one row per workload × configuration × phase × metric with the same
//! statistics the tables show, at full precision (Rust's shortest round-trip form), one
//! column per factor; `ci95_low`/`ci95_high` by `ci95_method` (`log_t` for quantities that
//! cannot be negative), and the geometric mean `gmean`. Comparisons and warnings are in the
//! JSON, Markdown and HTML formats.

use super::model::*;
use super::Exporter;
use std::fmt::Write as _;

/// Renders [`ReportData`] as CSV (RFC 4180 quoting).
pub struct CsvExporter;

pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

impl Exporter for CsvExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut o = String::new();
        let mut head: Vec<String> =
            vec!["workload".into(), "engine".into(), "configuration".into()];
        head.extend(r.factors.iter().map(|f| field(&f.name)));
        head.extend(
            [
                "phase",
                "metric",
                "unit",
                "n",
                "mean",
                "sd",
                "ci95_low",
                "ci95_high",
                "median",
                "min",
                "max",
                "cv",
                "outliers",
                "ci95_method",
                "gmean",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        let _ = writeln!(o, "{}", head.join(","));
        for w in &r.workloads {
            // The tables' statistics in their order, then the telemetry (doc/telemetry.md).
            let mut rows: Vec<&super::model::CellMetric> = Vec::new();
            for t in &w.tables {
                for &c in &r.cells_with_data(w) {
                    for p in &t.phases {
                        rows.extend(w.stat(c, p, &t.metric));
                    }
                }
            }
            rows.extend(&w.telemetry);
            for s in rows {
                let cell = &r.cells[s.cell];
                let mut cols = vec![field(&w.label), field(&w.kind), field(&cell.label)];
                for f in &r.factors {
                    cols.push(field(level(cell, &f.name).unwrap_or("")));
                }
                let sm = &s.summary;
                cols.extend([
                    field(&s.phase),
                    field(&s.name),
                    field(s.unit.as_str()),
                    sm.n.to_string(),
                    num(Some(sm.mean)),
                    num(sm.sd),
                    num(sm.ci95.map(|c| c.0)),
                    num(sm.ci95.map(|c| c.1)),
                    num(Some(sm.median)),
                    num(Some(sm.min)),
                    num(Some(sm.max)),
                    num(sm.cv),
                    s.outliers.len().to_string(),
                    sm.ci95_method.as_str().to_string(),
                    num(sm.gmean),
                ]);
                let _ = writeln!(o, "{}", cols.join(","));
            }
        }
        Ok(o.into_bytes())
    }
}
