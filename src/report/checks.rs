//! The warnings section: results that should not be trusted as they are, each with what to
//! do. Phases too short to time, high variation, too few repetitions, outliers (median/MAD,
//! kept in the statistics), a slow first repetition, drift across the execution order,
//! cache effects (a data set under twice the RAM; reads faster than the device), series that
//! stopped for a reason other than meeting their target, and failures.

use super::model::*;
use super::options::ReportOptions;
use crate::metric::Unit;
use crate::stats::adaptive::StopReason;
use crate::stats::{outliers, trend};
use crate::store::SeriesStatus;
use crate::units::{fmt_bytes, fmt_num, parse_size};
use crate::workload::WorkloadKind;

/// A first repetition this much worse than the median of the others is flagged (10%).
pub const FIRST_SLOWER_MIN: f64 = 0.10;
/// Drift is flagged at Mann–Kendall p below this …
pub const DRIFT_ALPHA: f64 = 0.05;
/// … when it changes the value by more than this over the series (5%).
pub const DRIFT_MIN: f64 = 0.05;
/// A data set under this multiple of the RAM can be served from the page cache.
pub const CACHE_FACTOR: f64 = 2.0;

fn warn(
    kind: WarningKind,
    w: Option<&WorkloadReport>,
    cell: Option<&CellInfo>,
    metric: Option<String>,
    message: String,
) -> ReportWarning {
    ReportWarning {
        kind,
        workload: w.map(|w| w.label.clone()),
        cell: cell.map(|c| c.label.clone()),
        metric,
        message,
    }
}

/// All warnings, in a stable order: per workload (aggregate checks, then per cell and
/// phase), then per series.
pub fn warnings(
    cells: &[CellInfo],
    workloads: &[WorkloadReport],
    series: &[SeriesInfo],
    envs: &[Environment],
    opts: &ReportOptions,
) -> Vec<ReportWarning> {
    let mut out = Vec::new();
    let ram = envs
        .iter()
        .filter_map(|e| env_value(&e.entries, "ram_bytes").and_then(|v| v.parse::<u64>().ok()))
        .max();
    let device_rate = envs
        .iter()
        .filter_map(|e| env_value(&e.entries, "device_read_bytes_per_sec"))
        .find_map(|v| v.parse::<f64>().ok());
    for w in workloads {
        too_short(w, cells, opts, &mut out);
        few_repetitions(w, cells, series, workloads, &mut out);
        if let (Some(ram), Some(bytes)) = (ram, dataset_bytes(&w.kind, &w.params)) {
            if (bytes as f64) < CACHE_FACTOR * ram as f64 {
                out.push(warn(
                    WarningKind::CacheDataset,
                    Some(w),
                    None,
                    None,
                    format!(
                        "the data set ({}) is smaller than {CACHE_FACTOR}× the RAM ({}): results include page-cache effects; use a data set over {} (or O_DIRECT for throughput tests) to measure the device",
                        fmt_bytes(bytes),
                        fmt_bytes(ram),
                        fmt_bytes((CACHE_FACTOR * ram as f64) as u64)
                    ),
                ));
            }
        }
        for s in w.stats.iter().filter(|s| s.headline) {
            per_metric(w, &cells[s.cell], s, opts, &mut out);
        }
        for s in w.stats.iter() {
            let rate = cells[s.cell]
                .config
                .get("device_read_bytes_per_sec")
                .and_then(|v| v.as_f64())
                .or(device_rate);
            if let Some(rate) = rate {
                faster_than_device(w, &cells[s.cell], s, rate, &mut out);
            }
        }
    }
    for s in series {
        series_warnings(s, cells, workloads, &mut out);
    }
    out
}

fn env_value<'a>(entries: &'a [(String, String)], key: &str) -> Option<&'a str> {
    entries
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Phases whose mean elapsed time is under the minimum, one warning per phase.
fn too_short(
    w: &WorkloadReport,
    cells: &[CellInfo],
    opts: &ReportOptions,
    out: &mut Vec<ReportWarning>,
) {
    let min = opts.thresholds.min_phase_seconds;
    for phase in &w.phases {
        let short: Vec<&CellMetric> = w
            .stats
            .iter()
            .filter(|s| &s.phase == phase && s.name == "elapsed" && s.unit == Unit::Seconds)
            .filter(|s| s.summary.mean < min)
            .collect();
        let Some(shortest) = short
            .iter()
            .min_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean))
        else {
            continue;
        };
        let total = w
            .stats
            .iter()
            .filter(|s| &s.phase == phase && s.name == "elapsed")
            .count();
        out.push(warn(
            WarningKind::TooShort,
            Some(w),
            None,
            Some(format!("{phase}.elapsed")),
            format!(
                "{phase}: mean time under {min} s in {} of {total} configurations (shortest {} s, {}): too short to trust; make the workload larger (more files, levels or bytes)",
                short.len(),
                fmt_num(shortest.summary.mean),
                cells[shortest.cell].label
            ),
        ));
    }
}

/// Series with fewer than two counted repetitions.
fn few_repetitions(
    w: &WorkloadReport,
    cells: &[CellInfo],
    series: &[SeriesInfo],
    workloads: &[WorkloadReport],
    out: &mut Vec<ReportWarning>,
) {
    let wi = workloads.iter().position(|x| x.id == w.id);
    let few: Vec<&SeriesInfo> = series
        .iter()
        .filter(|s| Some(s.workload) == wi && s.ok == 1)
        .collect();
    if few.is_empty() {
        return;
    }
    let labels: Vec<&str> = few.iter().map(|s| cells[s.cell].label.as_str()).collect();
    out.push(warn(
        WarningKind::FewRepetitions,
        Some(w),
        None,
        None,
        format!(
            "only one repetition in {}: no standard deviation, interval or test is possible; run at least 3 (--repeat, or repetitions.min in the study)",
            labels.join(", ")
        ),
    ));
}

/// Variation, outliers, slow first repetition and drift of one headline metric.
fn per_metric(
    w: &WorkloadReport,
    cell: &CellInfo,
    s: &CellMetric,
    opts: &ReportOptions,
    out: &mut Vec<ReportWarning>,
) {
    let key = format!("{}.{}", s.phase, s.name);
    if let Some(cv) = s.summary.cv {
        if cv > opts.thresholds.max_cv {
            out.push(warn(
                WarningKind::HighCv,
                Some(w),
                Some(cell),
                Some(key.clone()),
                format!(
                    "{} · {key}: coefficient of variation {:.1}% is above {:.0}%; run more repetitions, quiet the machine, or use a cold cache policy",
                    cell.label,
                    cv * 100.0,
                    opts.thresholds.max_cv * 100.0
                ),
            ));
        }
    }
    if !s.outliers.is_empty() {
        let z = outliers::modified_z_scores(&s.values);
        let list: Vec<String> = s
            .outliers
            .iter()
            .map(|&i| {
                format!(
                    "repetition {} = {} (modified z {:.1})",
                    s.repetitions[i],
                    fmt_num(s.values[i]),
                    z[i]
                )
            })
            .collect();
        out.push(warn(
            WarningKind::Outlier,
            Some(w),
            Some(cell),
            Some(key.clone()),
            format!(
                "{} · {key}: outlier by the median/MAD rule: {}; kept in the statistics; look for interference during that repetition",
                cell.label,
                list.join(", ")
            ),
        ));
    }
    if let Some(f) = trend::first_slower(&s.values, s.unit.higher_is_better(), FIRST_SLOWER_MIN) {
        out.push(warn(
            WarningKind::FirstSlower,
            Some(w),
            Some(cell),
            Some(key.clone()),
            format!(
                "{} · {key}: the first repetition ({}) is {:.0}% worse than the median of the others ({}); caches or lazy initialisation; use a cold cache policy or a discarded warm-up run",
                cell.label,
                fmt_num(f.first),
                f.worse_by * 100.0,
                fmt_num(f.median_rest)
            ),
        ));
    }
    if let Some(d) = trend::drift(&s.values, DRIFT_ALPHA, DRIFT_MIN) {
        out.push(warn(
            WarningKind::Drift,
            Some(w),
            Some(cell),
            Some(key),
            format!(
                "{} · {}.{}: values drift {} by {:.0}% over {} repetitions in execution order (Mann–Kendall {}); the file system may be ageing or filling, or the machine getting busier; use fresh file systems per repetition and interleaved order",
                cell.label,
                s.phase,
                s.name,
                if d.relative_change > 0.0 { "upward" } else { "downward" },
                d.relative_change.abs() * 100.0,
                s.values.len(),
                super::verdict::fmt_p(d.trend.p)
            ),
        ));
    }
}

/// Read throughput above what the device can deliver.
fn faster_than_device(
    w: &WorkloadReport,
    cell: &CellInfo,
    s: &CellMetric,
    device_bytes_per_sec: f64,
    out: &mut Vec<ReportWarning>,
) {
    let bytes_per_sec = match s.unit {
        Unit::KiBPerSec => s.summary.mean * 1024.0,
        Unit::MBPerSec => s.summary.mean * 1e6,
        _ => return,
    };
    if !s.phase.to_ascii_lowercase().contains("read") || bytes_per_sec <= device_bytes_per_sec {
        return;
    }
    out.push(warn(
        WarningKind::CacheDevice,
        Some(w),
        Some(cell),
        Some(format!("{}.{}", s.phase, s.name)),
        format!(
            "{} · {}.{}: reads at {}/s, faster than the device can deliver ({}/s): served from the page cache; drop caches before reading (cold cache policy) or use O_DIRECT",
            cell.label,
            s.phase,
            s.name,
            fmt_bytes(bytes_per_sec as u64),
            fmt_bytes(device_bytes_per_sec as u64)
        ),
    ));
}

/// Stop reasons other than a fixed count or a met target, and failures.
fn series_warnings(
    s: &SeriesInfo,
    cells: &[CellInfo],
    workloads: &[WorkloadReport],
    out: &mut Vec<ReportWarning>,
) {
    let (cell, w) = (&cells[s.cell], &workloads[s.workload]);
    let what = format!("{} · {}", cell.label, w.label);
    match s.stop_reason {
        None | Some(StopReason::Fixed) | Some(StopReason::CiMet) => {}
        Some(StopReason::Budget) => out.push(warn(
            WarningKind::StopReason,
            Some(w),
            Some(cell),
            None,
            format!("{what}: stopped by the time budget after {} repetitions, before the interval target was met; raise the budget or accept wider intervals", s.ok),
        )),
        Some(StopReason::MaxReps) => out.push(warn(
            WarningKind::StopReason,
            Some(w),
            Some(cell),
            None,
            format!("{what}: reached the maximum of {} repetitions without meeting the interval target; the result varies more than the target allows", s.ok),
        )),
    }
    if s.failed > 0 || s.status == SeriesStatus::Failed {
        let err = s.error.as_deref().unwrap_or("no error recorded");
        out.push(warn(
            WarningKind::Failed,
            Some(w),
            Some(cell),
            None,
            format!(
                "{what}: {} failed repetition(s), {} counted: {err}",
                s.failed, s.ok
            ),
        ));
    }
}

/// Bytes a workload keeps on disk, from its stored parameters: `dataset_bytes` where an
/// engine records it, else the fdtree tree size or the IOzone file size × threads.
/// `None` when unknown or when the workload bypasses the cache (`direct`/`o_direct`).
pub fn dataset_bytes(kind: &str, p: &serde_json::Value) -> Option<u64> {
    let num = |k: &str| p.get(k).and_then(serde_json::Value::as_u64);
    let size = |k: &str| match p.get(k)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => parse_size(s).ok(),
        _ => None,
    };
    let direct = ["direct", "o_direct"]
        .iter()
        .any(|k| p.get(*k).and_then(serde_json::Value::as_bool) == Some(true));
    if direct {
        return None;
    }
    if let Some(b) = num("dataset_bytes") {
        return Some(b);
    }
    let threads = num("threads")
        .or_else(|| num("workers"))
        .unwrap_or(1)
        .max(1);
    match WorkloadKind::of(kind)? {
        WorkloadKind::Fdtree => {
            let (d, f, s, l) = (
                num("dirs")?,
                num("files")?,
                num("size_blocks")?,
                num("levels")?,
            );
            let mut dirs: u128 = 0;
            for _ in 0..=l {
                dirs = dirs.checked_mul(u128::from(d))?.checked_add(1)?;
            }
            let bytes = dirs * u128::from(f) * u128::from(s) * 4096 * u128::from(threads);
            u64::try_from(bytes).ok()
        }
        WorkloadKind::Iozone => {
            let file = size("file_size").or_else(|| size("size"))?;
            file.checked_mul(threads)
        }
        WorkloadKind::Dbench => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dataset_sizes() {
        // fdtree -d 2 -f 3 -s 1 -l 2: 1+2+4 = 7 dirs, 21 files of 4 KiB.
        let p = json!({"dirs": 2, "files": 3, "size_blocks": 1, "levels": 2, "threads": 1});
        assert_eq!(dataset_bytes("fdtree", &p), Some(21 * 4096));
        let p = json!({"file_size": "1g", "threads": 4});
        assert_eq!(dataset_bytes("iozone", &p), Some(4 << 30));
        let p = json!({"file_size": 1024, "direct": true});
        assert_eq!(dataset_bytes("iozone", &p), None);
        assert_eq!(
            dataset_bytes("dbench", &json!({"dataset_bytes": 7})),
            Some(7)
        );
        assert_eq!(dataset_bytes("dbench", &json!({})), None);
    }
}
