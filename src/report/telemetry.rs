//! Why configurations differ: the telemetry recorded around every phase (`doc/telemetry.md`)
//! as a table per workload — bytes each device wrote, write amplification, device
//! utilisation, the CPU split, journal commits — and, for each difference, the telemetry
//! that differs most between its two sides; plus the repetitions that other activity on the
//! machine disturbed.

use super::model::{CellInfo, CellMetric, Comparison, WorkloadReport};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    Bytes,
    Pct,
    Count,
}

fn show(v: f64, how: Show) -> String {
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

fn find<'a>(w: &'a WorkloadReport, cell: usize, phase: &str, name: &str) -> Option<&'a CellMetric> {
    w.telemetry
        .iter()
        .find(|s| s.cell == cell && s.phase == phase && s.name == name)
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
        .filter_map(|m| find(w, cell, phase, m))
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
    let mut phases: Vec<&str> = Vec::new();
    for s in &w.telemetry {
        if !phases.contains(&s.phase.as_str()) {
            phases.push(&s.phase);
        }
    }
    let any_wa = (0..cells.len()).any(|c| {
        phases
            .iter()
            .any(|p| write_amplification(w, c, p).is_some())
    });
    let mut header: Vec<String> = used.iter().map(|(h, _, _)| h.to_string()).collect();
    if any_wa {
        header.insert(
            used.iter().take_while(|c| c.2 == Show::Bytes).count(),
            "write ampl.".into(),
        );
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
                    find(w, ci, p, m)
                        .map_or_else(|| "-".to_string(), |s| show(s.summary.mean, *how))
                })
                .collect();
            if any_wa {
                let at = used.iter().take_while(|c| c.2 == Show::Bytes).count();
                values.insert(
                    at,
                    write_amplification(w, ci, p)
                        .map_or_else(|| "-".into(), |x| format!("{x:.2}×")),
                );
            }
            rows.push(Row {
                cell: cell.label.clone(),
                phase: p.to_string(),
                values,
            });
        }
    }
    Some(Table { header, rows })
}

/// What a telemetry metric measures, for an explanation.
fn words(name: &str) -> Option<(&'static str, Show)> {
    Some(match name {
        "dev.data.write_bytes" => ("data device wrote", Show::Bytes),
        "dev.journal.write_bytes" => ("journal device wrote", Show::Bytes),
        "dev.backing.write_bytes" => ("backing device wrote", Show::Bytes),
        "dev.data.read_bytes" => ("data device read", Show::Bytes),
        "dev.journal.read_bytes" => ("journal device read", Show::Bytes),
        "dev.data.util" => ("data device busy", Show::Pct),
        "dev.journal.util" => ("journal device busy", Show::Pct),
        "fs.journal.transactions" => ("journal commits", Show::Count),
        "fs.journal.blocks" => ("journal blocks", Show::Count),
        "fs.journal.wait_ms" => ("waiting for a journal transaction (ms)", Show::Count),
        "fs.log.writes" => ("log writes", Show::Count),
        "fs.log.noiclogs" => ("waits for a free log buffer", Show::Count),
        "cpu.iowait" => ("CPU in iowait", Show::Pct),
        "cpu.sys" => ("CPU in the kernel", Show::Pct),
        _ => return None,
    })
}

/// Below these a difference is noise, whatever its ratio: a megabyte, five points of
/// utilisation (a device idle 95% of a phase does not explain its speed), five events (a
/// journal commit is a discrete event: 5.7 against 1.3 per phase is the mechanism itself).
fn big_enough(v: f64, how: Show) -> bool {
    match how {
        Show::Bytes => v >= 1024.0 * 1024.0,
        Show::Pct => v >= 5.0,
        Show::Count => v >= 5.0,
    }
}

/// Of `(metric, baseline mean, candidate mean)` triples, the known one whose means differ
/// most relative to the larger (at least 20%, and the larger above [`big_enough`]).
fn most_different<'a>(pairs: &[(&'a str, f64, f64)]) -> Option<(&'a str, f64, f64)> {
    let mut best: Option<(f64, (&'a str, f64, f64))> = None;
    for &(name, x, y) in pairs {
        let Some((_, how)) = words(name) else {
            continue;
        };
        let hi = x.max(y);
        if !big_enough(hi, how) || hi <= 0.0 {
            continue;
        }
        let rel = (x - y).abs() / hi;
        if rel < 0.2 || best.as_ref().is_some_and(|(r, _)| *r >= rel) {
            continue;
        }
        best = Some((rel, (name, x, y)));
    }
    best.map(|(_, p)| p)
}

/// The telemetry that differs most between the two sides of `c`, as one line, e.g.
/// `journal device wrote 3.1 GiB in file_create at 16MB vs 912.0 MiB at 1GB`.
pub fn explain(w: &WorkloadReport, c: &Comparison) -> Option<String> {
    // The engine's phase, or (dbench) the one phase its telemetry has.
    let mut phase = c.phase.as_str();
    if !w.telemetry.iter().any(|s| s.phase == phase) {
        let mut ps = w.telemetry.iter().map(|s| s.phase.as_str());
        let first = ps.next()?;
        if ps.any(|p| p != first) {
            return None;
        }
        phase = first;
    }
    let pairs: Vec<(&str, f64, f64)> = w
        .telemetry
        .iter()
        .filter(|s| s.cell == c.baseline_cell && s.phase == phase)
        .filter_map(|a| {
            let b = find(w, c.cell, phase, &a.name)?;
            Some((a.name.as_str(), a.summary.mean, b.summary.mean))
        })
        .collect();
    let (name, x, y) = most_different(&pairs)?;
    let (what, how) = words(name)?;
    Some(format!(
        "{what} {} in {phase} at {} vs {} at {}",
        show(x, how),
        c.from,
        show(y, how),
        c.to
    ))
}

/// Disturbed repetitions of one cell, as `repetitions 1–3 of journal=16MB: <reason>`.
pub fn disturbed_line(cell: &str, reps: &[(i64, String)]) -> Option<String> {
    if reps.is_empty() {
        return None;
    }
    let mut nums: Vec<u64> = reps.iter().map(|(n, _)| (*n).max(0) as u64).collect();
    nums.sort_unstable();
    nums.dedup();
    let word = if nums.len() == 1 {
        "repetition"
    } else {
        "repetitions"
    };
    Some(format!(
        "{word} {} of {cell}: {}",
        crate::units::fmt_ranges(&nums),
        reps[0].1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explanation_is_the_largest_clear_relative_difference() {
        // ext4-external-journal, small files, file_create, 16 MiB vs 256 MiB journal
        // (bench/results/studies.md): the commits, not the nearly idle journal device.
        let pairs = [
            ("dev.journal.util", 2.9, 1.4),
            ("fs.journal.transactions", 5.7, 1.3),
            ("dev.journal.write_bytes", 16.5e6, 10.6e6),
            ("dev.data.write_bytes", 101.8e6, 101.6e6),
            ("made.up.metric", 100.0, 1.0),
        ];
        assert_eq!(
            most_different(&pairs),
            Some(("fs.journal.transactions", 5.7, 1.3))
        );
        // Without the commits, the journal's bytes (36% apart); the device that was idle
        // 97% of the phase explains nothing.
        assert_eq!(
            most_different(&pairs[..1]),
            None,
            "utilisation under 5% is noise"
        );
        assert_eq!(
            most_different(&[pairs[0], pairs[2], pairs[3]]),
            Some(("dev.journal.write_bytes", 16.5e6, 10.6e6))
        );
        // Under 20% apart is no explanation; a busy device that differs is one.
        assert_eq!(most_different(&[("dev.data.util", 45.4, 38.2)]), None);
        assert_eq!(
            most_different(&[
                ("dev.journal.util", 7.4, 3.6),
                ("fs.journal.transactions", 3.3, 2.0)
            ]),
            Some(("dev.journal.util", 7.4, 3.6))
        );
    }

    #[test]
    fn ranges_of_disturbed_repetitions() {
        let r = vec![
            (1, "2.1 GiB of other I/O on vda".to_string()),
            (2, "x".into()),
            (3, "y".into()),
            (5, "z".into()),
        ];
        assert_eq!(
            disturbed_line("journal=16MB", &r).unwrap(),
            "repetitions 1–3, 5 of journal=16MB: 2.1 GiB of other I/O on vda"
        );
        assert_eq!(
            disturbed_line("c", &[(4, "steal".into())]).unwrap(),
            "repetition 4 of c: steal"
        );
        assert!(disturbed_line("c", &[]).is_none());
    }
}
