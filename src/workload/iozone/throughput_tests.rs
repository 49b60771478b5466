//! Unit tests of throughput mode: stonewalling, the figures, the phase order (workers on
//! recording layers, one of them slowed down).

use super::super::recording::RecordingIo;
use super::super::*;
use crate::workload::Quiet;
use std::path::Path;
use std::time::Duration;

fn throughput_run(stonewall: bool) -> throughput::ThroughputOutcome {
    let p = IozoneParams {
        file_kib: 256,
        record: 4096,
        tests: vec![0, 1],
        threads: 2,
        throughput: true,
        stonewall,
        phase_pause: 0.0,
        ..IozoneParams::default()
    };
    let files = p.files(Path::new("/t"));
    // Worker 1 is slow: 64 records × 2 ms ≈ 130 ms per phase against ~0 for worker 0.
    let io = |w| {
        let mut io = RecordingIo::new();
        io.delay = Duration::from_millis(if w == 1 { 2 } else { 0 });
        io
    };
    throughput::run_with(&p, &files, &Quiet, io, |_| {}).unwrap()
}

#[test]
fn stonewalling_stops_slow_readers_and_counts_writers_only_before_the_stop() {
    let out = throughput_run(true);
    let names: Vec<&str> = out.phases.iter().map(|p| p.test.phase()).collect();
    assert_eq!(names, ["write", "rewrite", "read", "reread"]);
    let full = 256 * 1024;
    let w = &out.phases[0];
    // The initial writer finishes its file but counts only what it wrote before the stop.
    assert_eq!(w.workers[1].total, full);
    assert!(w.workers[1].stopped && w.workers[1].counted < full, "{w:?}");
    assert_eq!(w.workers[0].counted, full);
    // Readers stop at once.
    let r = &out.phases[2];
    assert!(r.workers[1].stopped && r.workers[1].total < full, "{r:?}");
    let l = r.lines();
    assert!((l.children - (r.workers[0].rate() + r.workers[1].rate())).abs() < 1e-6);
    assert!(l.min <= l.max && l.min_xfer < 256.0);
    let m = out.metrics();
    assert!(m.iter().any(|x| x.key() == "read.bytes_before_stop"));
    assert!(m.iter().any(|x| x.key() == "read.children_sum"));
}

#[test]
fn without_stonewalling_every_worker_counts_its_whole_file() {
    let out = throughput_run(false);
    for p in &out.phases {
        for w in &p.workers {
            assert_eq!(
                (w.counted, w.total, w.stopped),
                (256 * 1024, 256 * 1024, false)
            );
        }
        // All bytes over first start to last finish.
        let l = p.lines();
        let expect = 512.0 / p.span();
        assert!((l.aggregate - expect).abs() / expect < 1e-9);
    }
}

#[test]
fn throughput_phases_follow_iozones_order() {
    let names: Vec<&str> = throughput::phases(&[0, 1, 2, 3, 4, 5, 6, 7])
        .iter()
        .map(|t| t.phase())
        .collect();
    assert_eq!(
        names,
        [
            "write",
            "rewrite",
            "read",
            "reread",
            "backward_read",
            "stride_read",
            "random_read",
            "random_write",
            "fwrite",
            "fread"
        ]
    );
}
