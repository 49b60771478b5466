//! `[repetitions] warmup` (root): discarded repetitions run first in every series under the
//! cold policy, each prepared like a counted one, stored as discarded, left out of the
//! statistics, and announced by `study plan`.

mod common;
mod testdev;

use common::{fslab, require_root};
use fslab::store::Store;

const STUDY: &str = r#"
name = "warmed"
[repetitions]
min = 2
cache = "cold"
warmup = 2

[device]
data = "loop:128M"

[filesystem]
type = "ext4"

[[factor]]
name = "journal"
values = [
  { label = "8MB", journal_size = "8M" },
  { label = "16MB", journal_size = "16M" },
]

[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#;

#[test]
fn privileged_warmup_repetitions_run_first_and_are_discarded() {
    if !require_root("privileged_warmup_repetitions_run_first_and_are_discarded") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("s.toml");
    std::fs::write(&file, STUDY).unwrap();
    let work = t.path().join("work");

    let plan = fslab(t.path())
        .args(["study", "plan"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(plan.status.success(), "{text}");
    assert!(
        text.contains("2 discarded warm-up repetitions first in every series"),
        "{text}"
    );

    // stderr is a pipe: the log's lines, one per repetition, warm-ups included.
    let out = fslab(t.path())
        .args(["study", "run"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Each warm-up has its line (a log showed nothing while they ran), before the counted
    // repetitions of its cell, which it does not count: `[0/4] journal=8MB · … · warm-up
    // (discarded): 0.12 s`.
    for cell in ["journal=8MB", "journal=16MB"] {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with('[') && l.contains(&format!("] {cell} · ")))
            .collect();
        let warm: Vec<&&str> = lines
            .iter()
            .filter(|l| l.contains(" · warm-up (discarded): "))
            .collect();
        assert_eq!(warm.len(), 2, "{cell}: {err}");
        assert!(
            lines[0].contains("warm-up") && lines[1].contains("warm-up"),
            "{cell}: {err}"
        );
        assert!(lines.iter().skip(2).all(|l| l.contains(" · rep ")), "{err}");
    }
    assert_eq!(
        err.lines().filter(|l| l.starts_with("[4/4] ")).count(),
        1,
        "warm-ups leave the count of counted repetitions: {err}"
    );

    let store = Store::open(&t.path().join("results.db")).unwrap();
    let id = store.list_studies().unwrap()[0].id;
    let d = store.load(id).unwrap().unwrap();
    assert_eq!(d.study.status, "complete");
    for c in &d.cells {
        let mut mine: Vec<_> = d.trials.iter().filter(|t| t.cell_id == c.id).collect();
        mine.sort_by_key(|t| t.order_index);
        let statuses: Vec<&str> = mine.iter().map(|t| t.status.as_str()).collect();
        // Both warm-ups before the first counted repetition, each under the cold policy.
        assert_eq!(
            statuses,
            ["discarded", "discarded", "ok", "ok"],
            "{}",
            c.label
        );
        assert!(mine.iter().all(|t| t.cache_policy == "cold"), "{}", c.label);
    }
    // The report counts the discarded runs and computes its statistics from the counted two.
    let json = fslab(t.path())
        .args(["report", &id.to_string(), "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    for s in v["series"].as_array().unwrap() {
        assert_eq!(
            (s["ok"].as_u64(), s["discarded"].as_u64()),
            (Some(2), Some(2)),
            "{s}"
        );
    }
    let stat = v["workloads"][0]["stats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["phase"] == "file_create" && s["name"] == "rate")
        .unwrap()
        .clone();
    assert_eq!(stat["summary"]["n"].as_u64(), Some(2), "{stat}");
    assert!(testdev::mounts_under(&work).is_empty());
}
