//! IOzone's "Excel" reports of `fslab iozone`: the `-R` text blocks and the `-b` worksheet,
//! from the means of the repetitions.

use super::output::{get, means};
use super::Setup;
use crate::metric::Metric;
use crate::runner::adhoc::CellsResult;
use crate::workload::iozone::{biff, report, throughput, Test};
use anyhow::{Context, Result};
use std::path::Path;

/// `-b FILE.xls`: IOzone's `-R` blocks as a worksheet, when something was measured.
pub(crate) fn write_biff(path: Option<&Path>, s: &Setup, result: &CellsResult) -> Result<()> {
    if let (Some(path), true) = (path, result.any_done()) {
        let blocks = blocks(s, &result.reps);
        std::fs::write(path, biff::workbook(&crate::app::command_line(), &blocks))
            .with_context(|| format!("cannot write -b {}", path.display()))?;
    }
    Ok(())
}

/// Mean of `phase.name` over the repetitions of the single throughput-mode cell (the
/// `-R`/`-b` reports say "means of N repetitions").
fn mean_over_reps(reps: &[Vec<Vec<Metric>>], phase: &str, name: &str) -> f64 {
    let runs = reps.first().map(Vec::as_slice).unwrap_or_default();
    if runs.is_empty() {
        return 0.0;
    }
    runs.iter().map(|m| get(m, phase, name)).sum::<f64>() / runs.len() as f64
}

/// Throughput mode's `-R` rows: per phase, IOzone's title and the children's throughput.
fn throughput_rows(s: &Setup, reps: &[Vec<Vec<Metric>>]) -> Vec<(&'static str, f64)> {
    let mean = |t: Test| mean_over_reps(reps, t.phase(), "children_sum");
    let phases = throughput::phases(&s.base.tests).into_iter();
    phases.map(|t| (throughput::titles(t).0, mean(t))).collect()
}

pub(crate) fn blocks(s: &Setup, reps: &[Vec<Vec<Metric>>]) -> Vec<report::ExcelBlock> {
    if s.base.throughput {
        // Throughput mode: one block per phase, the children's throughput as IOzone's -R.
        return throughput_rows(s, reps)
            .into_iter()
            .map(|(title, v)| report::ExcelBlock {
                title,
                records_kib: vec![s.plan.points[0].record / 1024],
                rows: vec![(s.base.threads as u64, vec![v as u64])],
            })
            .collect();
    }
    report::excel_blocks(
        &s.base.tests,
        &s.plan.report_records,
        &s.plan.points,
        &s.plan.skipped,
        &means(&s.plan.points, reps),
    )
}

pub(crate) fn excel_text(s: &Setup, reps: &[Vec<Vec<Metric>>]) -> String {
    let mut out = String::new();
    let n = reps.iter().map(|r| r.len()).max().unwrap_or(0);
    if n > 1 {
        out = format!("\nfslab: the values below are means of {n} repetitions\n");
    }
    if s.base.throughput {
        let rows = throughput_rows(s, reps);
        out.push_str(&report::throughput_excel(s.plan.points[0].record, &rows));
    } else {
        out.push_str(&report::excel_text(&blocks(s, reps)));
    }
    out
}
