//! Several fslab processes started at once on one new results database: every one creates
//! the schema or finds it made, switches to WAL or finds it switched, and stores its run.

mod common;

use std::process::{Command, Stdio};

const PROCESSES: usize = 6;
const ROUNDS: usize = 4;

#[test]
fn concurrent_runs_on_a_new_database_all_succeed_and_are_all_listed() {
    for round in 0..ROUNDS {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("p.db");
        let children: Vec<_> = (0..PROCESSES)
            .map(|i| {
                let dir = t.path().join(format!("t{i}"));
                std::fs::create_dir(&dir).unwrap();
                Command::new(assert_cmd::cargo::cargo_bin("fslab"))
                    .arg("--db")
                    .arg(&db)
                    .args([
                        "fdtree", "-q", "-d", "1", "-l", "1", "-f", "1", "-s", "0", "-o",
                    ])
                    .arg(&dir)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("fslab runs")
            })
            .collect();
        for (i, c) in children.into_iter().enumerate() {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}, process {i}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = common::fslab(t.path())
            .arg("--db")
            .arg(&db)
            .args(["list", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let runs = runs.as_array().unwrap();
        assert_eq!(runs.len(), PROCESSES, "round {round}: {runs:?}");
        assert!(runs.iter().all(|r| r["status"] == "complete"), "{runs:?}");
    }
}
