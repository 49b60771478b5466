//! What the compact report shows and leaves out, on small studies written through the Store
//! API.

use super::*;
use crate::metric::{Metric, Unit};
use crate::report::tests::{default_report, has, options, report, study_of, Workload};

/// A fio workload on two journal sizes, three repetitions: a time-based job (its run time the
/// same every time), an fsync direction, a disk with no utilisation at all.
fn fio_study() -> ReportData {
    let wl = Workload::cold("fio", serde_json::json!({"job": "jobs/journal.fio"}));
    let cells: [&[(&str, &str)]; 2] = [&[("journal", "16MB")], &[("journal", "256MB")]];
    default_report(study_of(&wl, &cells, 3, &[], |c, rep| {
        let x = 1.0 + 0.1 * c as f64 + 0.01 * rep as f64;
        vec![
            Metric::new("rw/write", "iops", Unit::OpsPerSec, 3000.0 * x),
            Metric::new("rw/write", "throughput", Unit::KiBPerSec, 12000.0 * x),
            Metric::new("rw/write", "elapsed", Unit::Seconds, 2.0),
            Metric::new("rw/write", "clat_p50", Unit::Millis, 0.005 * x),
            Metric::new("rw/write", "clat_p99", Unit::Millis, 0.02 * x),
            Metric::new("rw/write", "clat_max", Unit::Millis, 0.2 * x),
            Metric::new("rw/sync", "lat_mean", Unit::Millis, 0.3 * x),
            Metric::new("rw/sync", "lat_p50", Unit::Millis, 0.25 * x),
            Metric::new("rw/sync", "lat_p99", Unit::Millis, 1.1 * x),
            Metric::new("rw", "sys_cpu", Unit::Percent, 8.0 * x),
            Metric::new("disk_util", "data", Unit::Percent, 0.0),
        ]
    }))
}

#[test]
fn fio_jobs_read_as_one_table_of_iops_bandwidth_and_latency() {
    let r = fio_study();
    let w = &r.workloads[0];
    let v = workload(&r, w, Detail::Compact);
    let m = v.metric_table.as_ref().expect("fio has its own table");
    assert_eq!(
        m.columns,
        ["IOPS", "bandwidth", "p50 latency", "p99 latency"]
    );
    let phases: Vec<&str> = m.groups.iter().map(|g| g.phase.as_str()).collect();
    // The job's CPU and the disk have none of these columns: not rows of it.
    assert_eq!(phases, ["rw/write", "rw/sync"]);
    let sync = &m.groups[1];
    assert!(sync.rows[0].1[0].is_none() && sync.rows[0].1[1].is_none());
    assert_eq!(sync.rows[0].1[2].unwrap().name, "lat_p50");
    // Latencies in the unit that suits them: µs for 5 µs, not 0.005 ms.
    assert_eq!(m.groups[0].scales[2].unwrap().label, "µs");
    assert_eq!(m.entry_rows(), 4);
    // No other table in the compact report; what is left out is named once.
    assert!(v.tables.is_empty());
    let also = v.also_line(w).unwrap();
    assert!(also.contains("clat max"), "{also}");
    assert!(!also.contains("iops"), "shown in the table: {also}");
    // The run time and the idle disk are the same in every repetition: their value, once.
    has(
        &also,
        "The same in every repetition: rw/write.elapsed 2.00 s; disk_util.data 0 %",
    );
    // With --all every table but the flat ones, and no metric table.
    let all = workload(&r, w, Detail::All);
    assert!(all.metric_table.is_none());
    let metrics: Vec<&str> = all.tables.iter().map(|t| t.metric.as_str()).collect();
    assert!(metrics.contains(&"clat_max") && metrics.contains(&"iops"));
    assert!(!metrics.contains(&"elapsed") && !metrics.contains(&"data"));
    assert!(all.latency && all.telemetry);
}

#[test]
fn flat_tables_are_found_only_when_every_value_is_the_same() {
    let r = fio_study();
    let flat = flat_tables(&r.workloads[0]);
    let names: Vec<(&str, f64)> = flat.iter().map(|f| (f.metric.as_str(), f.value)).collect();
    assert_eq!(names, [("elapsed", 2.0), ("data", 0.0)]);
}

/// fdtree on `cells` levels of one factor; `rate(cell, rep)`.
fn fdtree(levels: &[&str], rate: impl Fn(usize, u32) -> f64) -> ReportData {
    let wl = Workload::cold("fdtree", serde_json::json!({"files": 3}));
    let cells: Vec<Vec<(&str, &str)>> = levels.iter().map(|l| vec![("journal", *l)]).collect();
    let cells: Vec<&[(&str, &str)]> = cells.iter().map(Vec::as_slice).collect();
    let (store, id) = study_of(&wl, &cells, 4, &[], |c, rep| {
        ["dir_create", "file_create"]
            .iter()
            .map(|p| Metric::new(*p, "rate", Unit::FilesPerSec, rate(c, rep)))
            .collect()
    });
    // The first level declared: a journal sweep of eight or more levels has no default one.
    report(&store, id, &options(Some(levels[0]))).unwrap()
}

#[test]
fn every_primary_verdict_is_listed_but_observations_are_not_repeated() {
    // 16MB vs 64MB: a clear difference (an Observation); 16MB vs 256MB: noise.
    let noise = [1000.0, 1100.0, 900.0, 1050.0];
    let r = fdtree(&["16MB", "64MB", "256MB"], |c, rep| match c {
        1 => 2000.0 + rep as f64,
        2 => noise[rep as usize - 1] * 1.01,
        _ => noise[rep as usize - 1],
    });
    assert_eq!(r.observations.len(), 2, "{:#?}", r.observations);
    let v = workload(&r, &r.workloads[0], Detail::Compact);
    let listed: Vec<(&str, &str)> = v
        .comparisons
        .iter()
        .map(|c| (c.to.as_str(), c.phase.as_str()))
        .collect();
    assert_eq!(listed, [("256MB", "dir_create"), ("256MB", "file_create")]);
    assert_eq!(
        v.left_out_line().unwrap(),
        "2 more comparisons: 2 significant, under Observations (--all lists them)."
    );
    let all = workload(&r, &r.workloads[0], Detail::All);
    assert_eq!(all.comparisons.len(), 4);
    assert!(all.left_out_line().is_none());
}

#[test]
fn a_long_list_of_verdicts_keeps_the_significant_ones_and_counts_the_rest() {
    // 25 levels against the first: 48 primary comparisons, none significant but level 24's.
    let names: Vec<String> = (0..25).map(|i| format!("{}MB", 16 * (i + 1))).collect();
    let levels: Vec<&str> = names.iter().map(String::as_str).collect();
    let noise = [1000.0, 1100.0, 900.0, 1050.0];
    let r = fdtree(&levels, |c, rep| {
        noise[(rep as usize + c) % 4] * if c == 24 { 1.3 } else { 1.0 }
    });
    let v = workload(&r, &r.workloads[0], Detail::Compact);
    assert!(v.comparisons.len() <= VERDICTS_SHOWN);
    assert!(
        v.comparisons.iter().all(|c| c.significant),
        "{:#?}",
        v.comparisons
    );
    let line = v.left_out_line().unwrap();
    has(&line, "primary without a significant difference");
    let total: usize = v.left_out.iter().map(|x| x.0).sum();
    assert_eq!(
        total + v.comparisons.len(),
        r.workloads[0].comparisons.len(),
        "every comparison is listed or counted: {line}"
    );
}

#[test]
fn one_factor_names_the_column_and_its_levels_the_rows() {
    let r = fdtree(&["16MB", "64MB"], |c, rep| 1000.0 + c as f64 + rep as f64);
    assert_eq!(cell_corner(&r), "journal");
    assert_eq!(cell_name(&r, 1), "64MB");
    let r = default_report(study_of(
        &Workload::cold("fdtree", serde_json::json!({})),
        &[
            &[("journal", "16MB"), ("fs", "ext4")],
            &[("journal", "16MB"), ("fs", "xfs")],
        ],
        2,
        &[],
        |_, rep| vec![Metric::new("p", "rate", Unit::FilesPerSec, rep as f64)],
    ));
    assert_eq!(cell_corner(&r), "configuration");
    assert_eq!(cell_name(&r, 1), "journal=16MB fs=xfs");
}

#[test]
fn observations_beyond_ten_are_counted() {
    let names: Vec<String> = (0..13).map(|i| format!("{}MB", 16 * (i + 1))).collect();
    let levels: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = fdtree(&levels, |c, rep| 1000.0 * (1.0 + c as f64) + rep as f64);
    assert!(r.observations.len() > OBSERVATIONS_SHOWN);
    let (shown, more) = observations(&r, Detail::Compact);
    assert_eq!(shown.len(), OBSERVATIONS_SHOWN);
    assert_eq!(more, r.observations.len() - OBSERVATIONS_SHOWN);
    let (shown, more) = observations(&r, Detail::All);
    assert_eq!((shown.len(), more), (r.observations.len(), 0));
}
