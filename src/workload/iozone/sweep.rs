//! IOzone's file-size × record-size matrix: auto mode (`-a`, with `-n -g -y -q -z`) and lists
//! of sizes (several `-s` or `-r`), as `auto_test`, `init_file_sizes` and
//! `init_record_sizes` in `iozone.c` build it.
//!
//! Auto mode doubles the file size from 64 KiB to 512 MiB and the record size from 4 KiB to
//! 16 MiB, skipping records larger than the file. Above 16 MiB files (`CROSSOVER`) records
//! start at 64 KiB unless `-z` is given or any of `-s -r -y -q` fixes the range; those skipped
//! cells appear as 0 in the `-R` report. Several `-s` or `-r` values turn auto mode on with the
//! listed sizes and no crossover.

use super::{DEFAULT_FILE_KIB, DEFAULT_RECORD, MAX_RECORD, MIN_RECORD};
use anyhow::Result;
use serde::Serialize;

/// Auto mode's smallest file (`KILOBYTES_START`, KiB).
pub const AUTO_MIN_FILE_KIB: u64 = 64;
/// Auto mode's largest file (`KILOBYTES_END`, KiB): 512 MiB.
pub const AUTO_MAX_FILE_KIB: u64 = 512 * 1024;
/// Auto mode's smallest record (`RECLEN_START`).
pub const AUTO_MIN_RECORD: u64 = 4096;
/// Files larger than this (KiB) start at [`LARGE_RECORD`] (`CROSSOVER`): 16 MiB.
pub const CROSSOVER_KIB: u64 = 16 * 1024;
/// The first record size above the crossover (`LARGE_REC`).
pub const LARGE_RECORD: u64 = 65536;

/// The size options as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeOptions {
    /// `-a`.
    pub auto: bool,
    /// Every `-s`, in KiB, in the order given.
    pub sizes_kib: Vec<u64>,
    /// Every `-r`, in bytes.
    pub records: Vec<u64>,
    /// `-n`, KiB.
    pub min_file_kib: Option<u64>,
    /// `-g`, KiB.
    pub max_file_kib: Option<u64>,
    /// `-y`, bytes.
    pub min_record: Option<u64>,
    /// `-q`, bytes.
    pub max_record: Option<u64>,
    /// `-z`: keep small records for large files.
    pub no_crossover: bool,
}

/// One (file size, record size) cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub struct Point {
    /// File size in KiB.
    pub file_kib: u64,
    /// Record size in bytes (`record_bytes` in the run document).
    #[serde(rename = "record_bytes")]
    pub record: u64,
}

impl Point {
    /// The cell of `file_kib` KiB files in records of `record` bytes.
    pub const fn new(file_kib: u64, record: u64) -> Point {
        Point { file_kib, record }
    }
}

/// The planned matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Cells to run, in IOzone's order (file size, then record size, ascending).
    pub points: Vec<Point>,
    /// Record sizes heading the `-R` report (IOzone's original min..max range or list).
    pub report_records: Vec<u64>,
    /// Whether this is a sweep (auto mode or lists) rather than one cell.
    pub sweep: bool,
    /// Cells skipped by the crossover rule (reported as 0 in `-R`).
    pub skipped: Vec<Point>,
}

fn doubling(min: u64, max: u64) -> Vec<u64> {
    std::iter::successors(Some(min.max(1)), |x| x.checked_mul(2))
        .take_while(|&x| x <= max)
        .collect()
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

fn check_record(r: u64, flag: &str) -> Result<()> {
    if !(MIN_RECORD..=MAX_RECORD).contains(&r) {
        crate::bail_usage!(
            "{flag} {}: IOzone's records are 128 bytes to 16 MiB; choose a size in that range",
            super::fmt_record(r)
        );
    }
    Ok(())
}

/// Build the matrix from the size options.
pub fn plan(o: &SizeOptions) -> Result<Plan> {
    let given = o.records.iter().map(|&r| (r, "-r"));
    let bounds = [(o.min_record, "-y"), (o.max_record, "-q")];
    for (r, flag) in given.chain(bounds.into_iter().filter_map(|(r, f)| Some((r?, f)))) {
        check_record(r, flag)?;
    }
    if o.sizes_kib.contains(&0) {
        crate::bail_usage!("-s 0: the file must hold at least one record");
    }
    let s_list = o.sizes_kib.len() > 1;
    let r_list = o.records.len() > 1;
    let auto = o.auto || s_list || r_list;
    let sflag = o.sizes_kib.len() == 1;
    let rflag = o.records.len() == 1;

    // Record range as IOzone has it after option parsing (-r sets both ends; -y/-q override).
    let (first, last) = (o.records.first().copied(), o.records.last().copied());
    let min_rec = o.min_record.or(first).unwrap_or(AUTO_MIN_RECORD);
    let max_rec = o.max_record.or(last).unwrap_or(MAX_RECORD);
    if min_rec > max_rec {
        crate::bail_usage!(
            "minimum record size {} is greater than maximum record size {}; fix -y/-q/-r",
            super::fmt_record(min_rec),
            super::fmt_record(max_rec)
        );
    }
    let report_records = if r_list {
        sorted(o.records.clone())
    } else {
        doubling(min_rec, max_rec)
    };

    if !auto {
        if o.min_file_kib.is_some() || o.max_file_kib.is_some() || o.no_crossover {
            crate::bail_usage!("-n, -g and -z only apply to auto mode; add -a or drop them");
        }
        let file_kib = o.sizes_kib.first().copied().unwrap_or(DEFAULT_FILE_KIB);
        let record = o.records.first().copied().unwrap_or(DEFAULT_RECORD);
        if record > file_kib * 1024 {
            crate::bail_usage!(
                "record size {} is larger than the file size {}k; use a smaller -r or a larger -s",
                super::fmt_record(record),
                file_kib
            );
        }
        return Ok(Plan {
            points: vec![Point { file_kib, record }],
            report_records,
            sweep: false,
            skipped: Vec::new(),
        });
    }

    // File sizes: the list, or min..max doubling (-s fixes both ends, -n/-g override).
    let files = if s_list {
        sorted(o.sizes_kib.clone())
    } else {
        // -n/-g are at least one smallest record.
        let bound = |b: Option<u64>| b.map(|k| k.max(AUTO_MIN_RECORD / 1024));
        let given = o.sizes_kib.first().copied();
        let min_f = bound(o.min_file_kib).or(given).unwrap_or(AUTO_MIN_FILE_KIB);
        let max_f = bound(o.max_file_kib).or(given).unwrap_or(AUTO_MAX_FILE_KIB);
        if min_f > max_f {
            crate::bail_usage!(
                "minimum file size {min_f}k is greater than maximum file size {max_f}k; fix -n/-g/-s"
            );
        }
        doubling(min_f, max_f)
    };
    let smallest = files.first().copied().unwrap_or(AUTO_MIN_FILE_KIB);
    if min_rec > smallest * 1024 && !r_list {
        crate::bail_usage!(
            "record length {} is greater than the smallest file size {smallest}k; raise -n/-s or lower -y/-r",
            super::fmt_record(min_rec)
        );
    }
    let crossover_on = !(o.no_crossover || s_list || r_list || rflag || sflag)
        && o.min_record.is_none()
        && o.max_record.is_none();

    let mut points = Vec::new();
    let mut skipped = Vec::new();
    for &f in &files {
        let large = crossover_on && f > CROSSOVER_KIB;
        for &r in &report_records {
            if r > f * 1024 {
                break;
            }
            let p = Point::new(f, r);
            if large && r < LARGE_RECORD {
                skipped.push(p);
            } else {
                points.push(p);
            }
        }
    }
    if points.is_empty() {
        crate::bail_usage!(
            "the size options leave no (file size, record size) pair to run: every record is larger than every file; fix -s/-r/-n/-g/-y/-q"
        );
    }
    Ok(Plan {
        points,
        report_records,
        sweep: true,
        skipped,
    })
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
