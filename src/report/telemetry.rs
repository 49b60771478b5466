//! Why configurations differ: the telemetry recorded around every phase (`doc/telemetry.md`)
//! as a table per workload — bytes each device wrote, write amplification, device
//! utilisation, the CPU split, journal commits (what may explain a difference is
//! [`super::explain`]; the repetitions other activity disturbed are [`super::disturbed`]).

use super::model::{CellInfo, WorkloadReport};
use crate::units::{fmt_bytes, fmt_num};

/// The telemetry table's columns: (header, metric, how to show it).
const COLUMNS: &[(&str, &str, Show)] = &[
    ("data written", "dev.data.write_bytes", Show::Bytes),
    ("journal written", "dev.journal.write_bytes", Show::Bytes),
    ("backing written", "dev.backing.write_bytes", Show::Bytes),
    ("data read", "dev.data.read_bytes", Show::Bytes),
    ("data util", "dev.data.util", Show::Pct),
    ("journal util", "dev.journal.util", Show::Pct),
    ("cpu user", "cpu.user", Show::Pct),
    ("cpu sys", "cpu.sys", Show::Pct),
    ("iowait", "cpu.iowait", Show::Pct),
    ("steal", "cpu.steal", Show::Pct),
    ("journal commits", "fs.journal.transactions", Show::Count),
    ("log writes", "fs.log.writes", Show::Count),
    ("no iclog", "fs.log.noiclogs", Show::Count),
];

/// How a telemetry metric's value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Show {
    /// A size (`3.1 GiB`).
    Bytes,
    /// A share in percent.
    Pct,
    /// A count per repetition.
    Count,
}

/// A telemetry metric's value as `how` reads it.
pub(super) fn show(v: f64, how: Show) -> String {
    match how {
        Show::Bytes => fmt_bytes(v.max(0.0).round() as u64),
        Show::Pct => format!("{v:.1}%"),
        // Counts per repetition are whole numbers; their means keep one decimal at most.
        Show::Count if v >= 10.0 => format!("{v:.0}"),
        Show::Count => fmt_num(v),
    }
}

/// One row: a configuration's phase, means per repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Index of the configuration in the report's cells.
    pub index: usize,
    /// Configuration label.
    pub cell: String,
    /// Phase.
    pub phase: String,
    /// One value per column of [`Table::header`] (`-` where not measured).
    pub values: Vec<String>,
}

/// The telemetry table of a workload: only columns with a value somewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names after configuration and phase.
    pub header: Vec<String>,
    /// Rows by configuration, then phase.
    pub rows: Vec<Row>,
}

/// Bytes the workload itself moved in a phase, per repetition on average: its throughput
/// (KiB/s) times its time, repetition by repetition.
fn workload_bytes(w: &WorkloadReport, cell: usize, phase: &str) -> Option<f64> {
    let tp = w.stat(cell, phase, "throughput")?;
    let el = w.stat(cell, phase, "elapsed")?;
    if tp.unit != crate::metric::Unit::KiBPerSec || tp.values.len() != el.values.len() {
        return None;
    }
    let per: Vec<f64> = tp
        .values
        .iter()
        .zip(&el.values)
        .map(|(t, e)| t * 1024.0 * e)
        .collect();
    (!per.is_empty()).then(|| per.iter().sum::<f64>() / per.len() as f64)
}

/// Device bytes written (data and journal) per byte the workload wrote.
fn write_amplification(w: &WorkloadReport, cell: usize, phase: &str) -> Option<f64> {
    let work = workload_bytes(w, cell, phase).filter(|b| *b > 0.0)?;
    let dev: f64 = ["dev.data.write_bytes", "dev.journal.write_bytes"]
        .iter()
        .filter_map(|m| w.telemetry_stat(cell, phase, m))
        .map(|s| s.summary.mean)
        .sum();
    (dev > 0.0).then_some(dev / work)
}

/// The telemetry table of `w`, if it has telemetry.
pub fn table(w: &WorkloadReport, cells: &[CellInfo]) -> Option<Table> {
    if w.telemetry.is_empty() {
        return None;
    }
    let used: Vec<&(&str, &str, Show)> = COLUMNS
        .iter()
        .filter(|(_, m, _)| w.telemetry.iter().any(|s| s.name == *m))
        .collect();
    let phases = super::distinct(w.telemetry.iter().map(|s| s.phase.as_str()));
    let any_wa = (0..cells.len()).any(|c| {
        phases
            .iter()
            .any(|p| write_amplification(w, c, p).is_some())
    });
    let mut header: Vec<String> = used.iter().map(|(h, _, _)| h.to_string()).collect();
    // Write amplification stands after the byte counts.
    let at = used.iter().take_while(|c| c.2 == Show::Bytes).count();
    if any_wa {
        header.insert(at, "write ampl.".into());
    }
    let mut rows = Vec::new();
    for (ci, cell) in cells.iter().enumerate() {
        for p in &phases {
            if !w.telemetry.iter().any(|s| s.cell == ci && s.phase == *p) {
                continue;
            }
            let mut values: Vec<String> = used
                .iter()
                .map(|(_, m, how)| {
                    w.telemetry_stat(ci, p, m)
                        .map_or_else(|| "-".to_string(), |s| show(s.summary.mean, *how))
                })
                .collect();
            if any_wa {
                values.insert(
                    at,
                    write_amplification(w, ci, p)
                        .map_or_else(|| "-".into(), |x| format!("{x:.2}×")),
                );
            }
            rows.push(Row {
                index: ci,
                cell: cell.label.clone(),
                phase: p.to_string(),
                values,
            });
        }
    }
    Some(Table { header, rows })
}
