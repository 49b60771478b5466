//! Page-cache warnings: a throughput workload's data set under twice the RAM, and reads
//! faster than the device can deliver — one warning per workload, worded for the cache
//! policy in force ([`super::advice`]). When both apply to a workload, the device evidence is
//! folded into the data-set warning, so the page cache is warned about once.

use super::advice::{self, Origin, Policy};
use super::draft::Draft;
use super::model::*;
use crate::metric::Unit;
use crate::units::fmt_bytes;
use crate::vocab::Stored;
use crate::workload::WorkloadKind;

/// A data set under this multiple of the RAM can be served from the page cache.
pub const CACHE_FACTOR: f64 = 2.0;

/// The machine facts the cache checks need, from the environments.
pub struct Machine {
    /// The largest RAM that can cache the data: `ram_bytes` and, for a study run in a
    /// User-mode Linux guest, `host_ram_bytes` (the host's page cache holds the guest's
    /// image files).
    pub ram: Option<u64>,
    /// The first `device_read_bytes_per_sec` recorded.
    pub device_rate: Option<f64>,
}

impl Machine {
    /// Read them from the sources' environments.
    pub fn of(envs: &[Environment]) -> Machine {
        Machine {
            ram: envs
                .iter()
                .flat_map(|e| ["ram_bytes", "host_ram_bytes"].map(|k| entry(&e.entries, k)))
                .filter_map(|v| v?.parse::<u64>().ok())
                .max(),
            device_rate: envs.iter().find_map(|e| {
                entry(&e.entries, "device_read_bytes_per_sec")?
                    .parse::<f64>()
                    .ok()
            }),
        }
    }
}

/// The page-cache warnings of one workload: the data-set warning (with the device evidence
/// folded in) when its data set fits in the cache, else one warning per read faster than the
/// device.
pub fn warnings(
    (wi, w): (usize, &WorkloadReport),
    cells: &[CellInfo],
    machine: &Machine,
    origin: Origin,
) -> Vec<ReportWarning> {
    let policy = Policy::of(w.cache_policy.as_ref().and_then(Stored::known), &w.params);
    let fast = fast_reads(w, cells, machine);
    match small_dataset((wi, w), cells, machine) {
        Some(small) => vec![dataset_warning(w, cells, &small, &fast, policy, origin)],
        None => fast
            .iter()
            .map(|f| device_warning(w, &cells[f.stat.cell], f, policy, origin))
            .collect(),
    }
}

/// A data set that fits in twice the RAM.
struct SmallDataset {
    /// The data set in bytes: the largest of the configurations.
    bytes: u64,
    /// Whether the configurations' data sets differ (a sweep over file sizes).
    varies: bool,
    /// The RAM that can cache it.
    ram: u64,
}

/// The workload's data set, when it is under [`CACHE_FACTOR`] × the RAM in every
/// configuration that has results: each configuration's own (a factor or a sweep point sets
/// the file size), the largest named.
fn small_dataset(
    (wi, w): (usize, &WorkloadReport),
    cells: &[CellInfo],
    machine: &Machine,
) -> Option<SmallDataset> {
    let ram = machine.ram?;
    let sizes: Vec<u64> = cells
        .iter()
        .enumerate()
        .filter(|(ci, _)| w.stats.iter().any(|s| s.cell == *ci))
        .map(|(_, c)| dataset_bytes(&w.kind, &w.params_in(c, wi)))
        .collect::<Option<_>>()?;
    let bytes = match sizes.iter().max() {
        Some(&b) => b,
        None => dataset_bytes(&w.kind, &w.params)?,
    };
    let varies = sizes.iter().any(|&b| b != bytes);
    ((bytes as f64) < CACHE_FACTOR * ram as f64).then_some(SmallDataset { bytes, varies, ram })
}

/// The data-set warning, worded for the policy in force, with the reads that outran the
/// device as its evidence.
fn dataset_warning(
    w: &WorkloadReport,
    cells: &[CellInfo],
    small: &SmallDataset,
    fast: &[FastRead<'_>],
    policy: Policy,
    origin: Origin,
) -> ReportWarning {
    let need = fmt_bytes((CACHE_FACTOR * small.ram as f64) as u64);
    let (statement, advice) = advice::dataset(policy, origin, &need);
    let evidence = match fast {
        [] => String::new(),
        [f, ..] => format!(
            " (reads in {} of {} configurations are faster than the device: up to {}/s in {}, the device delivers {}/s)",
            fast.len(),
            cells_with_reads(w),
            fmt_bytes(f.rate as u64),
            cells[f.stat.cell].label,
            fmt_bytes(f.device as u64)
        ),
    };
    let figure = format!(
        "data set {}{}, RAM {}",
        if small.varies { "up to " } else { "" },
        fmt_bytes(small.bytes),
        fmt_bytes(small.ram)
    );
    // The policy's statement goes with the advice, so a group line keeps it.
    Draft::new(WarningKind::CacheDataset, Some(w), None, None).finish(
        w.label.clone(),
        figure.clone(),
        format!("{figure}{evidence}"),
        format!("{statement}; {advice}"),
    )
}

/// The warning about one read faster than the device.
fn device_warning(
    w: &WorkloadReport,
    cell: &CellInfo,
    f: &FastRead<'_>,
    policy: Policy,
    origin: Origin,
) -> ReportWarning {
    Draft::new(
        WarningKind::CacheDevice,
        Some(w),
        Some(cell),
        Some(f.key.clone()),
    )
    .finish(
        format!("{} · {}", cell.label, f.key),
        format!("{}/s", fmt_bytes(f.rate as u64)),
        format!(
            "reads at {}/s, faster than the device can deliver ({}/s): served from the page cache",
            fmt_bytes(f.rate as u64),
            fmt_bytes(f.device as u64)
        ),
        advice::faster_than_device(policy, origin),
    )
}

/// A read metric streaming faster than the device.
struct FastRead<'a> {
    /// `phase.metric`.
    key: String,
    /// Its statistics.
    stat: &'a CellMetric,
    /// Its mean in bytes per second.
    rate: f64,
    /// What the device delivers, bytes per second.
    device: f64,
}

/// The read metrics of a workload that stream faster than their configuration's device
/// (`device_read_bytes_per_sec` of the cell, else of the environment).
fn fast_reads<'a>(
    w: &'a WorkloadReport,
    cells: &[CellInfo],
    machine: &Machine,
) -> Vec<FastRead<'a>> {
    w.stats
        .iter()
        .filter(|s| is_read(s))
        .filter_map(|s| {
            let device = cells[s.cell]
                .config
                .get("device_read_bytes_per_sec")
                .and_then(serde_json::Value::as_f64)
                .or(machine.device_rate)?;
            let rate = bytes_per_sec(s)?;
            (rate > device).then(|| FastRead {
                key: format!("{}.{}", s.phase, s.name),
                stat: s,
                rate,
                device,
            })
        })
        .collect()
}

fn is_read(s: &CellMetric) -> bool {
    s.phase.to_ascii_lowercase().contains("read")
}

fn bytes_per_sec(s: &CellMetric) -> Option<f64> {
    match s.unit {
        Unit::KiBPerSec => Some(s.summary.mean * 1024.0),
        Unit::MBPerSec => Some(s.summary.mean * 1e6),
        _ => None,
    }
}

/// Configurations with a read throughput.
fn cells_with_reads(w: &WorkloadReport) -> usize {
    let mut cells: Vec<usize> = w
        .stats
        .iter()
        .filter(|s| is_read(s) && bytes_per_sec(s).is_some())
        .map(|s| s.cell)
        .collect();
    cells.dedup();
    cells.len()
}

/// Bytes a workload whose data set is weighed against the RAM keeps on disk, as its engine
/// reads them from its stored parameters ([`crate::workload::Caps::dataset`]); `None` for
/// other workloads and when unknown.
pub fn dataset_bytes(kind: &str, p: &serde_json::Value) -> Option<u64> {
    (WorkloadKind::of(kind)?.caps().dataset?)(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_guest_counts_the_hosts_ram() {
        let env = Environment::of;
        let host = Machine::of(&[env(&[("ram_bytes", "1000")])]);
        assert_eq!(host.ram, Some(1000));
        let guest = Machine::of(&[env(&[
            ("ram_bytes", "500"),
            ("guest", "uml"),
            ("host_ram_bytes", "24000"),
        ])]);
        assert_eq!(guest.ram, Some(24000), "the host's cache holds the images");
    }

    #[test]
    fn dataset_sizes_only_for_throughput_workloads() {
        let p = json!({"file_size": "1g", "threads": 4});
        assert_eq!(dataset_bytes("iozone", &p), Some(4 << 30));
        // An engine command's stored parameters.
        let p = json!({"file_kib": 512, "threads": 2});
        assert_eq!(dataset_bytes("iozone", &p), Some(1 << 20));
        let p = json!({"file_size": 1024, "direct": true});
        assert_eq!(dataset_bytes("iozone", &p), None);
        assert_eq!(
            dataset_bytes("iozone", &json!({"dataset_bytes": 7})),
            Some(7)
        );
        // fdtree's tree and dbench's load are not weighed against the RAM.
        let p = json!({"dirs": 2, "files": 3, "size_blocks": 1, "levels": 2, "threads": 1});
        assert_eq!(dataset_bytes("fdtree", &p), None);
        assert_eq!(dataset_bytes("dbench", &json!({"dataset_bytes": 7})), None);
    }
}
