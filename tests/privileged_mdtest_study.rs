//! A study with `kind = "mdtest"`: provisioned for real on loop devices (root), every phase
//! of every repetition stored with its rate and the telemetry around it, the report's
//! headline the phases' rates. Fails loudly without root unless FSLAB_SKIP_PRIVILEGED=1.

mod common;

use common::{fslab, require_root};

#[test]
fn privileged_an_mdtest_study_runs_with_telemetry_per_phase() {
    if !require_root("privileged_an_mdtest_study_runs_with_telemetry_per_phase") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("md.toml");
    std::fs::write(
        &study,
        r#"
name = "mdtest-study"
[repetitions]
min = 2
cache = "cold"
[device]
data = "loop:320M"
[[factor]]
name = "fs"
values = [{ label = "ext4", fs = "ext4" }, { label = "xfs", fs = "xfs" }]
[[workload]]
kind = "mdtest"
items = 600
depth = 1
branching = 3
write_bytes = 4096
read_bytes = 4096
"#,
    )
    .unwrap();
    let o = fslab(t.path())
        .args(["study", "run", "-q"])
        .arg(&study)
        .arg("--workdir")
        .arg(t.path().join("work"))
        .output()
        .unwrap();
    let so = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{so}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        so.contains("mdtest -n 600 -z 1 -b 3 -w 4096 -e 4096"),
        "{so}"
    );
    let db = rusqlite::Connection::open(t.path().join("results.db")).unwrap();
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    // 2 cells × 2 repetitions × 10 phases, each with its rate.
    assert_eq!(
        count("SELECT COUNT(*) FROM sample s JOIN trial t ON t.id = s.trial_id WHERE t.status = 'ok' AND s.metric = 'rate'"),
        40
    );
    // Telemetry per phase: the data device's writes around file creation.
    assert!(
        count("SELECT COUNT(*) FROM sample WHERE phase = 'file_create' AND metric = 'dev.data.write_bytes'") >= 4,
        "telemetry per phase"
    );
    let json = fslab(t.path())
        .args(["report", "mdtest-study", "--format", "json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let headlines: Vec<String> = r["workloads"][0]["stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["headline"] == true && s["cell"] == 0)
        .map(|s| {
            format!(
                "{}.{}",
                s["phase"].as_str().unwrap(),
                s["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(headlines.len(), 10, "{headlines:?}");
    assert!(
        headlines.iter().all(|h| h.ends_with(".rate")),
        "{headlines:?}"
    );
}
