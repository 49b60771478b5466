//! The JSON report: the whole [`ReportData`] model, versioned by its `schema` field
//! (`fslab.report.v1`): sources, factors, cells with their provisioning, per-workload
//! statistics with every raw value in execution order, tables, comparisons, latency
//! percentiles, observations, warnings and environments. Non-finite numbers are `null`.

use super::model::ReportData;
use super::Exporter;

/// Renders [`ReportData`] as pretty-printed JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, r: &ReportData) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(r)?;
        v.push(b'\n');
        Ok(v)
    }
}
