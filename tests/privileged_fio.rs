//! The fio example study run for real (root, loop devices, the real fio):
//! `examples/studies/ext4-journal-fio.toml` as shipped (2 s fio runs, 3 cold repetitions per
//! cell, about a minute). Checks what is stored — per job and direction IOPS, throughput,
//! latency, the fsync direction, the large-sequential mark, completion-latency histograms,
//! fio's version in the environment — that the report compares each job's headline (IOPS,
//! throughput for the 1 MiB sequential writes) and charts latency percentiles from the
//! histograms, and that nothing is left mounted.

mod common;
mod testdev;

use common::{fslab, require_fio, require_root};
use fslab::store::Store;
use std::path::PathBuf;

#[test]
fn privileged_fio_example_study_runs_on_loop_devices() {
    if !require_root("privileged_fio_example_study_runs_on_loop_devices")
        || !require_fio("privileged_fio_example_study_runs_on_loop_devices")
    {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/studies/ext4-journal-fio.toml");
    let work = t.path().join("work");
    let out = fslab(t.path())
        .args(["study", "run", "-q"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}\n{stdout}");

    let store = Store::open(&t.path().join("results.db")).unwrap();
    let id = store.list_studies().unwrap()[0].id;
    let d = store.load(id).unwrap().unwrap();
    assert_eq!(d.study.status, "complete");
    assert_eq!(d.cells.len(), 2);
    let ok: Vec<_> = d.trials.iter().filter(|t| t.status == "ok").collect();
    assert_eq!(ok.len(), 2 * 2 * 3, "2 cells × 2 workloads × 3 repetitions");
    let has = |t: &fslab::store::TrialRow, phase: &str, name: &str| {
        t.samples
            .iter()
            .any(|s| s.phase == phase && s.name == name && s.value.is_finite())
    };
    let wl = |idx: i64| d.workloads.iter().find(|w| w.idx == idx).unwrap().id;
    let journal: Vec<_> = ok.iter().filter(|t| t.workload_id == wl(0)).collect();
    let sweep: Vec<_> = ok.iter().filter(|t| t.workload_id == wl(1)).collect();
    assert_eq!((journal.len(), sweep.len()), (6, 6));
    for t in &journal {
        for (phase, name) in [
            ("randwrite-fsync/write", "iops"),
            ("randwrite-fsync/write", "clat_p99"),
            ("randwrite-fsync/sync", "lat_mean"),
            ("seqwrite/write", "throughput"),
            ("seqwrite/write", "large_sequential"),
            ("randwrite-fsync", "sys_cpu"),
            ("disk_util", "data"),
        ] {
            assert!(has(t, phase, name), "trial {}: no {phase}.{name}", t.id);
        }
        assert!(!has(t, "randwrite-fsync/write", "large_sequential"));
        let hists = store.histograms(t.id).unwrap();
        assert!(
            hists
                .iter()
                .any(|h| h.phase == "randwrite-fsync/write" && h.name == "clat_ns"),
            "{hists:?}"
        );
    }
    for t in &sweep {
        for rs in ["0004k", "0064k", "1024k"] {
            assert!(has(t, &format!("1-write-{rs}/write"), "iops"));
            assert!(has(t, &format!("2-read-{rs}/read"), "iops"));
        }
        // Every read read what its write wrote: 16 MiB.
        let read = t
            .samples
            .iter()
            .find(|s| s.phase == "2-read-0064k/read" && s.name == "io_bytes")
            .unwrap();
        assert_eq!(read.value, 16.0 * 1024.0 * 1024.0);
    }
    assert!(
        d.environment
            .iter()
            .any(|(k, v)| k == "tool_fio" && v.starts_with("fio-")),
        "{:?}",
        d.environment
    );

    let report = fslab(t.path())
        .args(["report", &id.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    // Each job's headline is reported: among the verdicts (`job/dir.metric`), or, when its
    // difference holds up, among the Observations (`job/dir metric slower by …`), whose
    // sentence the report wraps wherever the line ends: words are compared, not lines.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "randwrite-fsync/write.iops",
        "seqwrite/write.throughput",
        "2-read-0004k/read.iops",
        "2-read-1024k/read.throughput",
    ] {
        let spoken = want.replace('.', " ");
        assert!(
            words.contains(want) || words.contains(&spoken),
            "report lacks {want}:\n{text}"
        );
    }
    for want in ["p50 latency", "p99 latency"] {
        assert!(words.contains(want), "report lacks {want}:\n{text}");
    }
    // The full percentile tables are behind --all.
    assert!(!text.contains("Latency percentiles"), "{text}");
    let all = fslab(t.path())
        .args(["report", &id.to_string(), "--all"])
        .output()
        .unwrap();
    let all_text = String::from_utf8_lossy(&all.stdout);
    assert!(all.status.success(), "{all_text}");
    assert!(all_text.contains("Latency percentiles"), "{all_text}");
    assert!(!text.contains("seqwrite/write.iops "), "{text}");
    assert!(testdev::mounts_under(&work).is_empty());
}
