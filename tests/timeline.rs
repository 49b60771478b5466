//! `--timeline`: a repetition sampled once a second is stored with it and charted in the
//! HTML report.

mod common;

use common::fslab;

const LOAD: &str = "NTCreateX \"\\clients\\client1\\a\" 0x0 0x2 1 NT_STATUS_OK\n\
WriteX 1 0 65536 65536 NT_STATUS_OK\n\
Close 1 NT_STATUS_OK\n\
Unlink \"\\clients\\client1\\a\" 0x6 NT_STATUS_OK\n";

#[test]
fn a_timeline_is_sampled_once_a_second_stored_and_charted() {
    let d = tempfile::tempdir().unwrap();
    let load = d.path().join("load.txt");
    std::fs::write(
        &load,
        format!(
            "Mkdir \"\\clients\" NT_STATUS_OK\nMkdir \"\\clients\\client1\" NT_STATUS_OK\n{LOAD}"
        ),
    )
    .unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    fslab(d.path())
        .args([
            "dbench",
            "--quiet",
            "--timeline",
            "-t",
            "3",
            "--warmup",
            "0",
            "-c",
        ])
        .arg(&load)
        .arg("-D")
        .arg(&target)
        .arg("1")
        .assert()
        .success();
    let c = rusqlite::Connection::open(d.path().join("results.db")).unwrap();
    let times: Vec<f64> = c
        .prepare("SELECT t FROM timeline WHERE metric = 'progress' ORDER BY t")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    // Three seconds of run (and its set-up): a point about every second. A busy machine may
    // wake the sampler late once (a gap of 1.32 s was seen at load 9), so each gap is held to
    // a loose bound and their mean to a tight one: sampling every 0.1 s or every 3 s fails.
    assert!(times.len() >= 3, "{times:?}");
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    for g in &gaps {
        assert!((0.5..2.0).contains(g), "{times:?}");
    }
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((0.8..1.25).contains(&mean), "{times:?}");
    let progress_rates: Vec<f64> = c
        .prepare("SELECT value FROM timeline WHERE metric = 'progress' ORDER BY t")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(
        progress_rates.iter().any(|&v| v > 0.0),
        "{progress_rates:?}"
    );
    let cpu: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM timeline WHERE metric = 'cpu.sys' AND unit = '%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(cpu >= 3);
    let html = fslab(d.path())
        .args(["report", "1", "--format", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(
        html.contains("engine progress over time"),
        "no timeline chart"
    );
}

/// dbench's per-second progress lines are stored as a time series with every run, with or
/// without `--timeline` (issue 13, item 6): MB/s so far in the phase, the largest latency of
/// the second, the clients running.
#[test]
fn dbench_progress_lines_are_stored_as_a_time_series() {
    let d = tempfile::tempdir().unwrap();
    let load = d.path().join("load.txt");
    std::fs::write(
        &load,
        format!(
            "Mkdir \"\\clients\" NT_STATUS_OK\nMkdir \"\\clients\\client1\" NT_STATUS_OK\n{LOAD}"
        ),
    )
    .unwrap();
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    fslab(d.path())
        .args(["dbench", "--quiet", "-t", "3", "--warmup", "2", "-c"])
        .arg(&load)
        .arg("-D")
        .arg(&target)
        .arg("2")
        .assert()
        .success();
    let c = rusqlite::Connection::open(d.path().join("results.db")).unwrap();
    let series = |metric: &str| -> Vec<(f64, String, f64)> {
        c.prepare("SELECT t, unit, value FROM timeline WHERE metric = ?1 ORDER BY t")
            .unwrap()
            .query_map([metric], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let warm = series("dbench.warmup_mbps");
    let exec = series("dbench.execute_mbps");
    assert!(!warm.is_empty(), "two seconds of warm-up: {warm:?}");
    assert!(exec.len() >= 2, "three seconds of execution: {exec:?}");
    assert!(
        exec.iter().all(|(_, u, v)| u == "MB/s" && *v > 0.0),
        "{exec:?}"
    );
    assert!(
        warm.last().unwrap().0 < exec[0].0,
        "warm-up first: {warm:?} {exec:?}"
    );
    let clients = series("dbench.clients");
    assert!(clients.iter().all(|(_, _, v)| *v <= 2.0), "{clients:?}");
    assert_eq!(clients.first().map(|p| p.2), Some(2.0), "{clients:?}");
    let lat = series("dbench.max_latency");
    assert!(
        lat.iter().all(|(_, u, v)| u == "ms" && *v >= 0.0),
        "{lat:?}"
    );
    // No --timeline: the sampler's own series are not there.
    assert!(series("progress").is_empty());
}
