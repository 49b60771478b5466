//! Tests across the telemetry parts: the metrics of a real captured phase (fixtures from
//! `fixtures/capture.sh`) and devices that appear and disappear. Interference verdicts and
//! settle with an injected clock are tested beside `interference` (`interference_tests.rs`).

use super::*;
use crate::metric::{Metric, Unit};
use std::time::{Duration, Instant};

/// A device of the given role and numbers (also used by `interference`'s tests).
pub(super) fn dev(
    role: Role,
    major: u32,
    minor: u32,
    name: &str,
    dio: Option<bool>,
    by: Option<Role>,
) -> Device {
    Device {
        role,
        dev: BlockDev {
            major,
            minor,
            name: name.into(),
        },
        direct_io: dio,
        backed_by: by,
    }
}

/// The devices of the capture: devices.txt says ext4 data on loop0, its external journal
/// on loop1, both images on the root file system's vda.
fn captured_devices() -> Devices {
    Devices::from_list(vec![
        dev(Role::Data, 7, 0, "loop0", Some(true), Some(Role::Backing)),
        dev(
            Role::Journal,
            7,
            1,
            "loop1",
            Some(true),
            Some(Role::Backing),
        ),
        dev(Role::Backing, 254, 0, "vda", None, None),
    ])
}

fn fixture(name: &str) -> &'static str {
    match name {
        "diskstats-before" => include_str!("fixtures/diskstats-before"),
        "diskstats-after" => include_str!("fixtures/diskstats-after"),
        "stat-before" => include_str!("fixtures/stat-before"),
        "stat-after" => include_str!("fixtures/stat-after"),
        "loadavg-before" => include_str!("fixtures/loadavg-before"),
        "loadavg-after" => include_str!("fixtures/loadavg-after"),
        "meminfo-before" => include_str!("fixtures/meminfo-before"),
        "meminfo-after" => include_str!("fixtures/meminfo-after"),
        "jbd2-before" => include_str!("fixtures/jbd2-external-before.info"),
        "jbd2-after" => include_str!("fixtures/jbd2-external-after.info"),
        "xfs-before" => include_str!("fixtures/xfs-stats-before"),
        "xfs-after" => include_str!("fixtures/xfs-stats-after"),
        _ => panic!("no fixture {name}"),
    }
}

/// The capture's snapshot `which` (`before`, `after`) of [`captured_devices`], taken `secs`
/// seconds into the test's clock, with these diskstats and file-system counters.
fn captured(which: &str, secs: u64, diskstats: &str, fs: Option<FsSample>) -> Snapshot {
    static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let at = *T0.get_or_init(Instant::now) + Duration::from_secs(secs);
    let texts = Texts {
        diskstats,
        stat: fixture(&format!("stat-{which}")),
        loadavg: fixture(&format!("loadavg-{which}")),
        meminfo: fixture(&format!("meminfo-{which}")),
    };
    let (user_us, sys_us, max_rss) = if which == "before" {
        (1_000_000, 500_000, 10 << 20)
    } else {
        (1_250_000, 600_000, 12 << 20)
    };
    let usage = Usage {
        user_us,
        sys_us,
        max_rss,
    };
    let mut s = Snapshot::from_texts(at, &captured_devices(), texts, usage, fs).unwrap();
    s.ticks_per_second = 100;
    s
}

fn jbd2(which: &str) -> Option<FsSample> {
    Some(FsSample::Jbd2(
        super::jbd2::parse(fixture(&format!("jbd2-{which}"))).unwrap(),
    ))
}

fn get<'a>(m: &'a [Metric], name: &str) -> &'a Metric {
    m.iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

fn captured_phase() -> Vec<Metric> {
    let a = captured("before", 0, fixture("diskstats-before"), jbd2("before"));
    let b = captured("after", 2, fixture("diskstats-after"), jbd2("after"));
    delta("file_create", &a, &b)
}

#[test]
fn a_captured_phase_has_every_named_metric_with_its_unit() {
    let m = captured_phase();
    assert!(m.iter().all(|x| x.phase == "file_create"));
    let want = [
        ("dev.data.read_bytes", Unit::Bytes),
        ("dev.data.write_bytes", Unit::Bytes),
        ("dev.data.read_ios", Unit::Count),
        ("dev.data.write_ios", Unit::Count),
        ("dev.data.read_merges", Unit::Count),
        ("dev.data.write_merges", Unit::Count),
        ("dev.data.util", Unit::Percent),
        ("dev.data.queue_ms", Unit::Millis),
        ("dev.journal.write_bytes", Unit::Bytes),
        ("dev.backing.write_bytes", Unit::Bytes),
        ("cpu.user", Unit::Percent),
        ("cpu.sys", Unit::Percent),
        ("cpu.iowait", Unit::Percent),
        ("cpu.steal", Unit::Percent),
        ("cpu.idle", Unit::Percent),
        ("ctxt", Unit::Count),
        ("load.start", Unit::Count),
        ("load.end", Unit::Count),
        ("mem.dirty_writeback_peak", Unit::Bytes),
        ("proc.user", Unit::Seconds),
        ("proc.sys", Unit::Seconds),
        ("proc.max_rss", Unit::Bytes),
        ("fs.journal.transactions", Unit::Count),
        ("fs.journal.blocks", Unit::Count),
        ("fs.journal.handles", Unit::Count),
        ("fs.journal.blocks_per_transaction_limit", Unit::Count),
        ("fs.journal.commit_ms_avg", Unit::Millis),
        ("fs.journal.wait_ms", Unit::Millis),
        ("fs.journal.request_delay_ms", Unit::Millis),
    ];
    for (name, unit) in want {
        assert_eq!(get(&m, name).unit, unit, "{name}");
    }
    let mut names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "no name twice");
}

#[test]
fn a_captured_phase_has_the_values_of_the_capture() {
    let m = captured_phase();
    let v = |n: &str| get(&m, n).value;
    assert_eq!(
        v("dev.data.write_bytes"),
        ((2_157_406 - 2_122_862) * 512) as f64
    );
    assert!(
        v("dev.data.write_bytes") >= (16 << 20) as f64,
        "the 16 MiB file"
    );
    assert_eq!(
        v("dev.journal.write_bytes"),
        ((1_893_640 - 1_893_336) * 512) as f64
    );
    assert_eq!(v("dev.data.util"), (3836.0 - 3824.0) / 2000.0 * 100.0);
    assert_eq!(v("dev.data.queue_ms"), (7329 - 7265) as f64);
    let cpu: f64 = ["cpu.user", "cpu.sys", "cpu.iowait", "cpu.steal", "cpu.idle"]
        .iter()
        .map(|n| v(n))
        .sum();
    assert!((cpu - 100.0).abs() < 1e-9, "{cpu}");
    // stat: system 36297 → 36326, idle 190177 → 190212, iowait 4692 → 4694: 66 ticks.
    assert!((v("cpu.sys") - 29.0 / 66.0 * 100.0).abs() < 1e-9);
    assert_eq!((v("load.start"), v("load.end")), (0.02, 0.10));
    assert_eq!(v("mem.dirty_writeback_peak"), (480 * 1024) as f64);
    assert!((v("proc.user") - 0.25).abs() < 1e-12);
    assert!((v("proc.sys") - 0.1).abs() < 1e-12);
    assert_eq!(v("proc.max_rss"), (12 << 20) as f64);
    let (jb, ja) = (
        super::jbd2::parse(fixture("jbd2-before")).unwrap(),
        super::jbd2::parse(fixture("jbd2-after")).unwrap(),
    );
    assert_eq!(
        v("fs.journal.transactions"),
        (ja.transactions - jb.transactions) as f64
    );
    assert!(v("fs.journal.transactions") > 0.0);
    assert_eq!(v("fs.journal.blocks_per_transaction_limit"), 5461.0);
}

#[test]
fn devices_that_appear_count_everything_and_those_that_vanish_give_nothing() {
    let without_loop1 = |t: &str| {
        t.lines()
            .filter(|l| !l.contains(" loop1 "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let a = captured(
        "before",
        0,
        &without_loop1(fixture("diskstats-before")),
        None,
    );
    let b = captured("after", 1, fixture("diskstats-after"), None);
    let m = delta("p", &a, &b);
    let end = b.disk(Role::Journal).unwrap();
    assert_eq!(
        get(&m, "dev.journal.write_bytes").value,
        (end.write_sectors * 512) as f64
    );
    let c = captured("after", 2, &without_loop1(fixture("diskstats-after")), None);
    let m = delta("p", &b, &c);
    assert!(m.iter().all(|x| !x.name.starts_with("dev.journal.")));
    assert!(m.iter().any(|x| x.name == "dev.data.write_bytes"));
    assert!(
        m.iter().all(|x| !x.name.starts_with("fs.")),
        "no counters, no fs metrics"
    );
}

#[test]
fn xfs_log_metrics_come_from_the_stats_file() {
    let x = |w: &str| {
        Some(FsSample::Xfs(
            super::xfs::parse(fixture(&format!("xfs-{w}"))).unwrap(),
        ))
    };
    let a = captured("before", 0, fixture("diskstats-before"), x("before"));
    let b = captured("after", 1, fixture("diskstats-after"), x("after"));
    let m = delta("p", &a, &b);
    for n in [
        "fs.log.writes",
        "fs.log.blocks",
        "fs.log.noiclogs",
        "fs.log.push_ail",
        "fs.log.transactions",
    ] {
        assert_eq!(get(&m, n).unit, Unit::Count, "{n}");
    }
    assert_eq!(
        get(&m, "fs.log.bytes").value,
        get(&m, "fs.log.blocks").value * 512.0
    );
    assert!(get(&m, "fs.log.blocks").value > 0.0);
    // Stats cleared between the reads: what was counted since is the phase's.
    let (mut a2, b2) = (a.clone(), b.clone());
    if let Some(FsSample::Xfs(s)) = &mut a2.fs {
        s.writes += 1_000;
    }
    let m2 = delta("p", &a2, &b2);
    let Some(FsSample::Xfs(e)) = b2.fs else {
        unreachable!()
    };
    assert_eq!(get(&m2, "fs.log.writes").value, e.writes as f64);
}
