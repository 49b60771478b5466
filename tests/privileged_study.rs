//! A study run for real across file systems and knobs (root): ext2 with tune2fs features,
//! ext3 with a RAM-backed external journal, XFS with an external log, log buffers and a
//! scheduler, btrfs, and one cell that cannot mount. Checks what is stored: warm-up runs
//! discarded, the random order's seed, read-back dumps, the failed cell and its error,
//! exit code 1, and that nothing is left mounted or attached.

mod common;
mod testdev;

use common::{fslab, require_root};
use fslab::store::Store;

const STUDY: &str = r#"
name = "features"
[repetitions]
min = 2
order = "randomized"
seed = 11
cache = "warm"

[device]
data = "loop:320M"

[filesystem]
mount = ["noatime"]

[[factor]]
name = "fs"
values = [
  { label = "ext2", fs = "ext2", features = ["^dir_index"], block_size = 1024, inode_size = 256 },
  { label = "ext3-ram", fs = "ext3", journal = "ram:64M", journal_size = "16M" },
  { label = "xfs-log", fs = "xfs", journal = "loop:128M", journal_size = "64M", mount = ["logbufs=8", "logbsize=256k"], scheduler = "mq-deadline" },
  { label = "btrfs", fs = "btrfs" },
  { label = "broken", fs = "ext4", mount = ["no_such_option"] },
]

[[workload]]
kind = "fdtree"
dirs = 3
files = 3
size_blocks = 1
levels = 2
"#;

#[test]
fn privileged_study_across_file_systems_records_everything() {
    if !require_root("privileged_study_across_file_systems_records_everything") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("s.toml");
    std::fs::write(&file, STUDY).unwrap();
    let work = t.path().join("work");
    let out = fslab(t.path())
        .args(["study", "run", "-q"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{err}\n{stdout}");
    assert!(err.contains("1 of 5 cells failed"), "{err}");
    assert!(stdout.contains("FAILED cell fs=broken"), "{stdout}");

    let store = Store::open(&t.path().join("results.db")).unwrap();
    let id = store.list_studies().unwrap()[0].id;
    let d = store.load(id).unwrap().unwrap();
    assert_eq!(d.study.status, "partial");
    assert_eq!(d.study.seed, Some(11));
    let cell = |l: &str| {
        d.cells
            .iter()
            .find(|c| c.label == format!("fs={l}"))
            .unwrap()
    };

    let broken = cell("broken");
    assert_eq!(broken.status, "failed");
    assert!(
        broken.error.as_deref().unwrap_or("").contains("mount"),
        "{broken:?}"
    );

    let ext2 = cell("ext2");
    assert!(
        ext2.commands
            .iter()
            .any(|l| l.starts_with("tune2fs -O '^dir_index' /dev/loop")),
        "{:?}",
        ext2.commands
    );
    assert!(
        ext2.superblock.contains("Block size:               1024"),
        "{}",
        ext2.superblock
    );
    let ext3 = cell("ext3-ram");
    assert!(
        ext3.commands
            .iter()
            .any(|l| l.starts_with("mount -t tmpfs")),
        "{:?}",
        ext3.commands
    );
    assert!(
        ext3.superblock.contains("Total journal size:       16M"),
        "{}",
        ext3.superblock
    );
    let xfs = cell("xfs-log");
    assert!(
        xfs.commands
            .iter()
            .any(|l| l.starts_with("echo mq-deadline > /sys/block/loop")),
        "{:?}",
        xfs.commands
    );
    assert!(xfs
        .commands
        .iter()
        .any(|l| l.contains("logbufs=8,logbsize=256k,logdev=/dev/loop")));
    assert!(
        xfs.superblock.contains("log      =/dev/loop"),
        "{}",
        xfs.superblock
    );
    assert!(cell("btrfs").superblock.contains("sectorsize"));

    for c in d.cells.iter().filter(|c| c.label != "fs=broken") {
        assert_eq!(c.status, "complete", "{c:?}");
        let mine: Vec<_> = d.trials.iter().filter(|t| t.cell_id == c.id).collect();
        assert_eq!(
            mine.iter().filter(|t| t.status == "discarded").count(),
            1,
            "{}",
            c.label
        );
        assert_eq!(
            mine.iter().filter(|t| t.status == "ok").count(),
            2,
            "{}",
            c.label
        );
        assert!(mine.iter().all(|t| t.cache_policy == "warm"));
    }
    // The order is recorded: every trial has its own position.
    let mut order: Vec<i64> = d.trials.iter().map(|t| t.order_index).collect();
    order.sort();
    order.dedup();
    assert_eq!(order.len(), d.trials.len());
    let env: std::collections::BTreeMap<_, _> = d.environment.iter().cloned().collect();
    assert!(
        env.get("tool_mkfs.xfs")
            .is_some_and(|v| v.contains("mkfs.xfs")),
        "{env:?}"
    );
    assert_eq!(env.get("order").map(String::as_str), Some("randomized"));

    assert!(
        testdev::loops_under(&work).is_empty(),
        "{:?}",
        testdev::loops_under(&work)
    );
    assert!(testdev::mounts_under(&work).is_empty());
}

fn run_study(dir: &std::path::Path, text: &str) -> fslab::store::StudyData {
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let out = fslab(dir)
        .args(["study", "run", "-q"])
        .arg(&file)
        .arg("--workdir")
        .arg(dir.join("work"))
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&dir.join("results.db")).unwrap();
    let id = store.list_studies().unwrap()[0].id;
    store.load(id).unwrap().unwrap()
}

const SMALL: &str = r#"
[device]
data = "loop:64M"
[filesystem]
type = "ext4"
[[factor]]
name = "journal"
values = [{ label = "4M", journal_size = "4M" }, { label = "8M", journal_size = "8M" }]
[[workload]]
kind = "fdtree"
dirs = 3
files = 3
size_blocks = 1
levels = 2
"#;

#[test]
fn privileged_adaptive_repetitions_stop_by_ci_or_max_and_store_why() {
    if !require_root("privileged_adaptive_repetitions_stop_by_ci_or_max_and_store_why") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = run_study(
        t.path(),
        &format!("name = \"adaptive\"\n[repetitions]\nmin = 2\nmax = 4\ntarget_ci = 0.5\ncache = \"none\"\n{SMALL}"),
    );
    assert_eq!(d.series.len(), 2);
    for s in &d.series {
        let n = d
            .trials
            .iter()
            .filter(|t| t.cell_id == s.cell_id && t.status == "ok")
            .count();
        use fslab::stats::adaptive::StopReason;
        match s.stop_reason {
            Some(StopReason::CiMet) => assert!((2..=4).contains(&n), "{n}"),
            Some(StopReason::MaxReps) => assert_eq!(n, 4),
            other => panic!("unexpected stop reason {other:?}"),
        }
    }
}

#[test]
fn privileged_budget_stops_every_series() {
    if !require_root("privileged_budget_stops_every_series") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = run_study(
        t.path(),
        // A cold-cache cycle per repetition: 1000 of them cannot fit in three seconds.
        &format!("name = \"budget\"\n[repetitions]\nmin = 1000\nbudget = \"3s\"\ncache = \"cold\"\n{SMALL}"),
    );
    assert_eq!(d.study.status, "complete");
    for s in &d.series {
        assert_eq!(
            s.stop_reason,
            Some(fslab::stats::adaptive::StopReason::Budget),
            "{s:?}"
        );
    }
    assert!(d.trials.len() < 2000, "the budget did not stop anything");
}
