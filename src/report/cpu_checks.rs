//! The machine as the limit (issue 31): a workload with more workers on one host than the
//! CPUs fslab could use there measures the scheduler as much as the file system — workers
//! wait for a CPU, not for the disk. Said in one line per workload, naming the
//! configurations that are oversubscribed and the counts.
//!
//! Workers per host: the engine's workers in the whole job ([`crate::workload::Caps`]'s
//! `workers`), shared out over an MPI job's ranks in proportion to the ranks on its busiest
//! host. CPUs: `cpus_usable` in the environment (the affinity mask and cgroup quota taken
//! into account), or the count in the `cpu` entry of older runs (`AMD EPYC (2 CPUs)`).
//!
//! Beside it, the one other way the machine can make fslab measure itself: workers that had
//! to share one file-descriptor table because the system refused them their own
//! (`worker_file_tables` in the environment: a container's seccomp filter forbids
//! `unshare`). Several workers then take one table's lock for every open and close.

use super::draft::Draft;
use super::model::*;
use crate::workload::WorkloadKind;

/// The CPUs the run could use, from its environments (the smallest, when several sources
/// ran on different machines); `None` when no environment says.
pub fn usable_cpus(envs: &[Environment]) -> Option<u64> {
    envs.iter().filter_map(|e| cpus_of(&e.entries)).min()
}

fn cpus_of(entries: &[(String, String)]) -> Option<u64> {
    let get = |k: &str| entry(entries, k);
    get("cpus_usable")
        .and_then(|v| v.parse().ok())
        .or_else(|| {
            // `Model name (N CPUs)`, as every run recorded it.
            let cpu = get("cpu")?;
            let inner = cpu.rsplit_once('(')?.1.strip_suffix(" CPUs)")?;
            inner.parse().ok()
        })
        .filter(|&n| n > 0)
}

/// Why workers had to share one file-descriptor table, when an environment says so.
pub fn shared_tables(envs: &[Environment]) -> Option<String> {
    envs.iter().find_map(|e| {
        e.entries
            .iter()
            .find(|(k, v)| k == "worker_file_tables" && v.starts_with("shared"))
            .map(|(_, v)| v.trim_start_matches("shared: ").to_string())
    })
}

/// The line about workers sharing one table, when there are several of them.
pub fn shared_statement(workers: u64, why: &str) -> Option<String> {
    (workers > 1).then(|| {
        format!(
            "{workers} workers shared one file-descriptor table ({why}): every open and close took its lock, which on many cores caps the result; run fslab where unshare(2) is allowed (outside the container, or with seccomp=unconfined)"
        )
    })
}

/// Workers on the busiest host of a job with these stored parameters.
pub fn workers_per_host(kind: WorkloadKind, params: &serde_json::Value) -> u64 {
    let total = (kind.caps().workers)(params).max(1);
    let ranks = params
        .get("ranks")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let busiest = params
        .get("hosts")
        .and_then(serde_json::Value::as_array)
        .and_then(|hs| {
            hs.iter()
                .filter_map(|h| h.get("ranks").and_then(serde_json::Value::as_u64))
                .max()
        })
        .unwrap_or(ranks)
        .min(ranks);
    // The workers of `busiest` ranks out of `ranks`, rounded up.
    (total * busiest).div_ceil(ranks)
}

/// The line that says so, when `workers` outnumber `cpus`.
pub fn statement(workers: u64, cpus: u64) -> Option<String> {
    (workers > cpus).then(|| {
        format!(
            "{workers} workers on {cpus} CPUs: oversubscribed, the result measures scheduling as much as the file system"
        )
    })
}

/// The run summary's lines (an engine command, on this machine's `cpus`, its workers'
/// tables as `tables` says): workers outnumbering the CPUs, workers sharing one table.
pub fn run_lines(
    kind: WorkloadKind,
    params: &serde_json::Value,
    cpus: u64,
    tables: &str,
) -> Vec<String> {
    let workers = workers_per_host(kind, params);
    let mut out: Vec<String> = statement(workers, cpus)
        .map(|s| format!("{s}; {}", advice(cpus)))
        .into_iter()
        .collect();
    if let Some(why) = tables.strip_prefix("shared: ") {
        out.extend(shared_statement(workers, why));
    }
    out
}

/// What to do about it.
fn advice(cpus: u64) -> String {
    format!("use at most {cpus} clients or threads per host, or a machine with more CPUs")
}

/// The oversubscription warning of workload `wi` (at most one): every configuration whose
/// workers outnumber the CPUs, with the largest count as its figure.
pub fn warnings(
    (wi, w): (usize, &WorkloadReport),
    cells: &[CellInfo],
    cpus: Option<u64>,
) -> Vec<ReportWarning> {
    let (Some(cpus), Some(kind)) = (cpus, WorkloadKind::of(&w.kind)) else {
        return Vec::new();
    };
    let over: Vec<(&CellInfo, u64)> = cells
        .iter()
        .enumerate()
        .filter(|&(ci, _)| w.stats.iter().any(|s| s.cell == ci))
        .map(|(_, cell)| (cell, workers_per_host(kind, &w.params_in(cell, wi))))
        .filter(|&(_, n)| n > cpus)
        .collect();
    let Some(&(_, most)) = over.iter().max_by_key(|(_, n)| *n) else {
        return Vec::new();
    };
    let place = if over.len() == cells.len() || cells.len() == 1 {
        w.label.clone()
    } else {
        let names: Vec<&str> = over.iter().map(|(c, _)| c.label.as_str()).collect();
        format!("{} · {}", w.label, names.join(", "))
    };
    let mut text = statement(most, cpus).unwrap_or_default();
    if over.len() > 1 {
        text = format!("up to {text}");
    }
    vec![
        Draft::new(WarningKind::Oversubscribed, Some(w), None, None).finish(
            place,
            format!("{most} on {cpus} CPUs"),
            text,
            advice(cpus),
        ),
    ]
}

/// The shared-table warning of workload `wi` (at most one), when `why` says workers had to
/// share and some configuration has several.
pub fn shared_warnings(
    (wi, w): (usize, &WorkloadReport),
    cells: &[CellInfo],
    why: Option<&str>,
) -> Vec<ReportWarning> {
    let (Some(why), Some(kind)) = (why, WorkloadKind::of(&w.kind)) else {
        return Vec::new();
    };
    let most = cells
        .iter()
        .enumerate()
        .filter(|(ci, _)| w.stats.iter().any(|s| s.cell == *ci))
        .map(|(_, c)| workers_per_host(kind, &w.params_in(c, wi)))
        .max()
        .unwrap_or(1);
    let Some(text) = shared_statement(most, why) else {
        return Vec::new();
    };
    let (statement, advice) = text.split_once("; ").unwrap_or((&text, ""));
    vec![
        Draft::new(WarningKind::SharedTable, Some(w), None, None).finish(
            w.label.clone(),
            format!("{most} workers"),
            statement.to_string(),
            advice.to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cpus_come_from_the_usable_count_or_the_cpu_entry() {
        let env = Environment::of;
        assert_eq!(usable_cpus(&[env(&[("cpus_usable", "16")])]), Some(16));
        assert_eq!(
            usable_cpus(&[env(&[("cpu", "AMD EPYC (2 CPUs)")])]),
            Some(2)
        );
        // The usable count wins over the machine's.
        assert_eq!(
            usable_cpus(&[env(&[("cpu", "X (64 CPUs)"), ("cpus_usable", "4")])]),
            Some(4)
        );
        assert_eq!(usable_cpus(&[env(&[("host", "vm")])]), None);
        assert_eq!(
            usable_cpus(&[env(&[("cpus_usable", "8")]), env(&[("cpus_usable", "4")])]),
            Some(4)
        );
    }

    #[test]
    fn workers_per_host_follow_each_engine_and_the_ranks() {
        let dbench = WorkloadKind::of("dbench").unwrap();
        let fdtree = WorkloadKind::of("fdtree").unwrap();
        let iozone = WorkloadKind::of("iozone").unwrap();
        assert_eq!(workers_per_host(dbench, &json!({"clients": 16})), 16);
        assert_eq!(workers_per_host(fdtree, &json!({"threads": 8})), 8);
        assert_eq!(workers_per_host(iozone, &json!({"threads": 1})), 1);
        // MPI: 16 dbench clients over 4 ranks, 3 of them on one host: 12 there.
        let job = json!({"clients": 16, "ranks": 4,
            "hosts": [{"host": "a", "ranks": 3}, {"host": "b", "ranks": 1}]});
        assert_eq!(workers_per_host(dbench, &job), 12);
        // fdtree's ranks each run their threads, all 8 on one host.
        let job = json!({"ranks": 8, "hosts": [{"host": "a", "ranks": 8}], "threads": 1});
        assert_eq!(workers_per_host(fdtree, &job), 8);
    }

    #[test]
    fn run_lines_name_the_counts_and_the_fixes() {
        let dbench = WorkloadKind::of("dbench").unwrap();
        assert!(run_lines(dbench, &json!({"clients": 2}), 2, "own").is_empty());
        assert_eq!(
            run_lines(dbench, &json!({"clients": 3}), 2, "own"),
            ["3 workers on 2 CPUs: oversubscribed, the result measures scheduling as much as the file system; use at most 2 clients or threads per host, or a machine with more CPUs"]
        );
        let shared = "shared: unshare(CLONE_FILES) refused (Operation not permitted)";
        let lines = run_lines(dbench, &json!({"clients": 2}), 2, shared);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("2 workers shared one file-descriptor table (unshare(CLONE_FILES) refused (Operation not permitted))"), "{}", lines[0]);
        // One worker has nobody to share with.
        assert!(run_lines(dbench, &json!({"clients": 1}), 2, shared).is_empty());
    }

    #[test]
    fn shared_tables_come_from_the_environment() {
        let env = Environment::of;
        assert_eq!(
            shared_tables(&[env(&[("worker_file_tables", "own")])]),
            None
        );
        assert_eq!(
            shared_tables(&[env(&[("worker_file_tables", "shared: refused (EPERM)")])]).as_deref(),
            Some("refused (EPERM)")
        );
    }

    #[test]
    fn the_statement_only_when_workers_outnumber_the_cpus() {
        assert_eq!(statement(2, 2), None);
        assert_eq!(
            statement(16, 2).unwrap(),
            "16 workers on 2 CPUs: oversubscribed, the result measures scheduling as much as the file system"
        );
    }
}
