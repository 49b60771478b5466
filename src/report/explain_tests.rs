//! Tests of the telemetry lines: tied by mechanism, per unit of work, undisturbed, significant
//! and pointing the same way — or no line at all.

use super::*;
use crate::metric::{Metric, Unit};
use crate::report::model::ReportData;
use crate::report::tests::{
    default_report, ends, fdtree, starts, study_disturbed, study_of, Workload,
};

const TWO: [&[(&str, &str)]; 2] = [&[("journal", "16MB")], &[("journal", "256MB")]];

/// The telemetry of a phase in one repetition: (metric, unit, value) each.
type Tele = Vec<(&'static str, Unit, f64)>;

/// The report of a two-cell fio study of four repetitions, `metrics(cell, rep)` each.
fn fio_report(metrics: impl Fn(usize, u32) -> Vec<Metric>) -> ReportData {
    let fio = Workload::cold("fio", serde_json::json!({}));
    default_report(study_of(&fio, &TWO, 4, &[], metrics))
}

/// [`explained_disturbed`] with no repetition disturbed.
fn explained(wl: &Workload, phase: &str, tele: impl Fn(usize, u32) -> Tele) -> Option<String> {
    explained_disturbed(wl, phase, tele, |_, _| false)
}

/// The explanation of the one comparison of a two-cell study whose cell 1 is faster, with
/// `tele(cell, rep)` as the telemetry of the phase, `disturbed(cell, rep)` marking
/// repetitions.
fn explained_disturbed(
    wl: &Workload,
    phase: &str,
    tele: impl Fn(usize, u32) -> Tele,
    disturbed: impl Fn(usize, u32) -> bool,
) -> Option<String> {
    let r = default_report(study_disturbed(
        wl,
        &TWO,
        5,
        &[],
        |c, rep| {
            let r = [100.0, 150.0][c] + f64::from(rep);
            // A timed run takes the same time whatever it does; the others do a fixed amount
            // of work.
            let elapsed = if wl.kind == "dbench" {
                10.0
            } else {
                1000.0 / r
            };
            let mut m = vec![
                Metric::new(phase, "elapsed", Unit::Seconds, elapsed),
                Metric::new(phase, "rate", Unit::FilesPerSec, r),
                Metric::new(phase, "throughput", Unit::KiBPerSec, r),
            ];
            for (name, unit, v) in tele(c, rep) {
                m.push(Metric::new(phase, name, unit, v));
            }
            m
        },
        |c, rep| disturbed(c, rep).then(|| "2.0 GiB of other I/O on vda".to_string()),
    ));
    let c = &r.workloads[0].comparisons[0];
    assert!(c.significant && c.better == Some(true), "{c:?}");
    c.explanation.clone()
}

fn commits(fewer_on_the_faster_side: bool) -> impl Fn(usize, u32) -> Tele {
    move |c, rep| {
        let base = if (c == 1) == fewer_on_the_faster_side {
            5.0
        } else {
            20.0
        };
        vec![(
            "fs.journal.transactions",
            Unit::Count,
            base + f64::from(rep % 2),
        )]
    }
}

#[test]
fn fewer_journal_commits_explain_a_faster_metadata_phase() {
    let e = explained(&fdtree(), "file_create", commits(true));
    assert_eq!(
        e.as_deref(),
        Some("journal commits 21 in file_create at 16MB vs 5.60 at 256MB")
    );
}

#[test]
fn telemetry_pointing_the_other_way_explains_nothing() {
    assert_eq!(explained(&fdtree(), "file_create", commits(false)), None);
}

#[test]
fn a_difference_that_is_not_significant_explains_nothing() {
    let noisy = |c: usize, rep: u32| {
        let v = [[20.0, 5.0, 30.0, 8.0, 12.0], [10.0, 25.0, 6.0, 18.0, 7.0]][c][rep as usize - 1];
        vec![("fs.journal.transactions", Unit::Count, v)]
    };
    assert_eq!(explained(&fdtree(), "file_create", noisy), None);
}

#[test]
fn disturbed_repetitions_are_left_out() {
    // The commits differ only in repetitions 2–5 of the slower side, and those are disturbed:
    // what is left does not differ.
    let tele = |c: usize, rep: u32| {
        let v = if c == 0 && rep > 1 { 40.0 } else { 6.0 } + f64::from(rep % 2);
        vec![("fs.journal.transactions", Unit::Count, v)]
    };
    let disturbed = |c: usize, rep: u32| c == 0 && rep > 1;
    assert_eq!(
        explained_disturbed(&fdtree(), "file_create", tele, disturbed),
        None
    );
    // The same numbers, undisturbed, explain.
    assert!(explained(&fdtree(), "file_create", tele).is_some());
}

#[test]
fn writes_never_explain_a_read_and_the_backing_device_explains_nothing() {
    let iozone = Workload::cold("iozone", serde_json::json!({}));
    let writes = |c: usize, rep: u32| {
        let big = if c == 0 { 900e6 } else { 60e6 } + f64::from(rep);
        vec![
            ("dev.backing.write_bytes", Unit::Bytes, big),
            ("dev.data.write_bytes", Unit::Bytes, big),
        ]
    };
    assert_eq!(explained(&iozone, "random_read", writes), None);
    // Writes can explain a write.
    let e = explained(&iozone, "random_write", writes).unwrap();
    starts(&e, "data device wrote 858.3 MiB in random_write");
    // Reads the device had to serve explain a read.
    let reads = |c: usize, rep: u32| {
        let v = if c == 0 { 400e6 } else { 100e6 } + f64::from(rep) * 1e6;
        vec![("dev.data.read_bytes", Unit::Bytes, v)]
    };
    let e = explained(&iozone, "random_read", reads).unwrap();
    starts(&e, "data device read 384.3 MiB in random_read at 16MB");
}

#[test]
fn a_timed_run_is_judged_per_unit_of_work() {
    let dbench = Workload::cold("dbench", serde_json::json!({}));
    // The faster side (throughput about 150 against 100 over the same 10 s) committed more in
    // total (15 against 12) but fewer per MB it moved (0.010 against 0.012).
    // Commits of `per_mb` per MB moved in each cell, over the run's 10 s.
    let commits = |per_mb: [f64; 2]| {
        move |c: usize, rep: u32| {
            let r = [100.0, 150.0][c] + f64::from(rep);
            let per_mb = per_mb[c] * (1.0 + 0.01 * f64::from(rep % 2));
            vec![("fs.journal.transactions", Unit::Count, per_mb * r * 10.0)]
        }
    };
    let e = explained(&dbench, "total", commits([0.012, 0.009])).unwrap();
    assert_eq!(
        e,
        "journal commits 25% fewer per unit of work in total at 256MB than at 16MB"
    );
    // More commits per unit of work on the faster side: no line, although its larger total
    // would have pointed the "right" way for a fixed amount of work.
    let fewer_in_total = commits([0.012, 0.016]);
    assert_eq!(explained(&dbench, "total", fewer_in_total), None);
}

#[test]
fn classes_and_ties() {
    use WorkloadKind::*;
    assert_eq!(class(Some(Fio), "randread/read"), Class::Read);
    assert_eq!(class(Some(Fio), "seq/write"), Class::Write);
    assert_eq!(class(Some(Fio), "randread"), Class::Unexplained);
    assert_eq!(class(Some(Fdtree), "dir_remove"), Class::Metadata);
    assert_eq!(class(Some(Dbench), "total"), Class::Mixed);
    assert!(!ties(Class::Read).iter().any(|t| t.contains("write")));
    for c in [
        Class::Metadata,
        Class::Write,
        Class::Read,
        Class::Sync,
        Class::Mixed,
    ] {
        assert!(!ties(c)
            .iter()
            .any(|t| t.contains("backing") || t.starts_with("cpu.")));
        assert!(ties(c).iter().all(|t| words(t).is_some()), "{c:?}");
    }
    assert!(ties(Class::Metadata).contains(&"fs.journal.transactions"));
}

#[test]
fn the_explanation_is_the_largest_clear_relative_difference() {
    let e = |name, x: f64, y: f64| (name, x.max(y), x, y);
    let entries = [
        e("fs.journal.transactions", 5.7, 1.3),
        e("dev.journal.write_bytes", 16.5e6, 10.6e6),
        e("dev.data.write_bytes", 101.8e6, 101.6e6),
        e("made.up.metric", 100.0, 1.0),
    ];
    assert_eq!(most_different(&entries), Some("fs.journal.transactions"));
    assert_eq!(
        most_different(&entries[1..]),
        Some("dev.journal.write_bytes")
    );
    // Under 20% apart, or under the floor, is no explanation.
    assert_eq!(
        most_different(&[e("dev.data.write_bytes", 45.4e6, 38.2e6)]),
        None
    );
    assert_eq!(
        most_different(&[e("fs.journal.transactions", 3.3, 2.0)]),
        None
    );
    // Per unit of work the figures are small; the floor applies to what was measured.
    assert_eq!(
        most_different(&[("fs.journal.transactions", 150.0, 0.012, 0.009)]),
        Some("fs.journal.transactions")
    );
}

#[test]
fn a_read_only_fio_job_is_not_explained_by_writes() {
    // The case: a read-only fio job faster at 4k than at 64k, and the backing device
    // (another process's writes) and the data device wrote far more at 4k in the run's one
    // telemetry phase. Neither is tied to a read; the device reads (O_DIRECT: what fio read,
    // the same per byte on both sides) do not differ per unit of work.
    // A read-only job, faster at 16MB, and the device metrics `device(cell, rep, bytes read)`.
    let job = |device: fn(usize, u32, f64) -> Vec<Metric>| {
        fio_report(move |c, rep| {
            let iops = [1000.0, 600.0][c] * (1.0 + 0.01 * f64::from(rep % 2));
            let bytes = iops * 4096.0 * 2.0;
            let mut m = vec![
                Metric::new("randread/read", "iops", Unit::OpsPerSec, iops),
                Metric::new("randread/read", "elapsed", Unit::Seconds, 2.0),
                Metric::new("randread/read", "io_bytes", Unit::Bytes, bytes),
            ];
            m.extend(device(c, rep, bytes));
            m
        })
    };
    let r = job(|c, rep, bytes| {
        let written =
            |name, v: [f64; 2]| Metric::new("fio", name, Unit::Bytes, v[c] + f64::from(rep));
        vec![
            written("dev.backing.write_bytes", [959.9e6, 64.1e6]),
            written("dev.data.write_bytes", [900e6, 60e6]),
            Metric::new("fio", "dev.data.read_bytes", Unit::Bytes, bytes),
        ]
    });
    let c = &r.workloads[0].comparisons[0];
    assert_eq!(c.phase, "randread/read");
    assert!(c.significant && c.better == Some(false), "{c:?}");
    assert_eq!(c.explanation, None);
    // Reads the device had to serve beyond what fio read (a cache miss per I/O at 64k) do
    // explain it.
    let r = job(|c, _, bytes| {
        let v = bytes * [1.0, 16.0][c];
        vec![Metric::new("fio", "dev.data.read_bytes", Unit::Bytes, v)]
    });
    let e = r.workloads[0].comparisons[0].explanation.clone().unwrap();
    starts(&e, "data device read ");
    ends(&e, "more per unit of work in fio at 256MB than at 16MB");
}

#[test]
fn a_read_job_beside_a_write_job_is_judged_per_byte_it_read() {
    // The case: a read job faster at 256MB, a write job beside it writing six times
    // as much at 256MB, and the device reading exactly one byte per byte read in both cells.
    // Per byte of all jobs' work the reads looked 35% and more lower; per byte read they are
    // the same, so nothing explains the read job's speed-up.
    // `per_byte`: the device's reads per byte the job read, in each cell.
    let run = |per_byte: [f64; 2]| {
        let r = fio_report(|c, rep| {
            let iops = [600.0, 1000.0][c] * (1.0 + 0.01 * f64::from(rep % 2));
            let read = iops * 4096.0 * 2.0;
            let written = [100e6, 600e6][c] + f64::from(rep) * 1e6;
            vec![
                Metric::new("r/read", "iops", Unit::OpsPerSec, iops),
                Metric::new("r/read", "elapsed", Unit::Seconds, 2.0),
                Metric::new("r/read", "io_bytes", Unit::Bytes, read),
                Metric::new("w/write", "elapsed", Unit::Seconds, 2.0),
                Metric::new("w/write", "io_bytes", Unit::Bytes, written),
                Metric::new(
                    "fio",
                    "dev.data.read_bytes",
                    Unit::Bytes,
                    read * per_byte[c],
                ),
            ]
        });
        let c = r.workloads[0]
            .comparisons
            .iter()
            .find(|c| c.phase == "r/read")
            .unwrap()
            .clone();
        assert!(c.significant && c.better == Some(true), "{c:?}");
        c.explanation
    };
    assert_eq!(run([1.0, 1.0]), None);
    // Reads the device served beyond what the job read (cache misses) on the slower side do
    // explain it, per byte read.
    let e = run([4.0, 1.0]).unwrap();
    assert_eq!(
        e,
        "data device read 75% less per unit of work in fio at 256MB than at 16MB"
    );
}

#[test]
fn a_client_loads_telemetry_is_the_metadata_and_the_reads() {
    assert_eq!([METADATA, READ].concat(), MIXED);
}
