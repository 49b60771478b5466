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
    // Three seconds of run (and its set-up): a point about every second.
    assert!(times.len() >= 3, "{times:?}");
    for w in times.windows(2) {
        assert!((0.8..1.3).contains(&(w[1] - w[0])), "{times:?}");
    }
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
