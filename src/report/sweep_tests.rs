//! A sweep as `fslab iozone -a` stores it (one cell per file size × record size point, the
//! point's size in the cell, the run's `-s` in the workload): matrices, heatmaps instead of
//! per-point bars, no comparisons against the first point unless a baseline is declared,
//! one short warning for many points and the data set of the largest point.

use super::*;
use crate::metric::{Metric, Unit};
use crate::report::tests::{
    default_report, has, new_study, of_kind, only_of_kind, options, rendered, report, starts,
};
use crate::report::Format;
use crate::stats::adaptive::StopReason;
use crate::store::{NewCell, NewTrial, SeriesStatus, Store};
use crate::units::fmt_size;

/// File sizes (KiB) and record sizes (KiB) of the test sweep: records up to the file size,
/// as IOzone's `-a` runs them (34 points of 40).
const FILES: [u64; 5] = [64, 128, 256, 512, 1024];
const RECORDS: [u64; 8] = [4, 8, 16, 32, 64, 128, 256, 512];

/// Throughput of a point: grows with the record size, shrinks with the file size.
fn rate(file: u64, record: u64, rep: u32) -> f64 {
    1e6 * (record as f64).sqrt() / (file as f64).ln() * (1.0 + 0.01 * f64::from(rep))
}

/// A stored `fslab iozone -a` run of `reps` repetitions with write and read throughput and
/// the data device's writes per phase; the run's own `-s` is 512 KiB.
fn sweep(reps: u32, ram: &str) -> (Store, i64) {
    let (mut store, s) = new_study(crate::vocab::StudyKind::Run, "iozone", "fslab iozone -a");
    let mut cells = Vec::new();
    for &f in &FILES {
        for &r in RECORDS.iter().filter(|&&r| r <= f) {
            let (file, record) = (fmt_size(f * 1024), fmt_size(r * 1024));
            let config = serde_json::json!({
                "target": "/mnt/t", "fs_type": "ext4", "file_kib": f, "record_bytes": r * 1024,
            });
            let factors = [
                ("file_size", file.as_str()),
                ("record_size", record.as_str()),
            ];
            let id = store
                .add_cell(s, &NewCell::of(cells.len(), &factors, config))
                .unwrap();
            cells.push((id, f, r));
        }
    }
    let params =
        serde_json::json!({"file_kib": 512, "record": 4096, "threads": 1, "direct": false});
    let w = store
        .add_workload(s, 0, "iozone", "iozone sweep", &params)
        .unwrap();
    store
        .set_environment(s, &[("ram_bytes".to_string(), ram.to_string())])
        .unwrap();
    let mut order = 0;
    for rep in 1..=reps {
        for &(id, f, r) in &cells {
            let m = [
                Metric::new("write", "throughput", Unit::KiBPerSec, rate(f, r, rep)),
                Metric::new("read", "throughput", Unit::KiBPerSec, 3.0 * rate(f, r, rep)),
                Metric::new(
                    "write",
                    "dev.data.write_bytes",
                    Unit::Bytes,
                    f as f64 * 1024.0,
                ),
            ];
            store
                .record_trial(&NewTrial {
                    order_index: order,
                    ..NewTrial::counted(id, w, rep, &m)
                })
                .unwrap();
            order += 1;
        }
    }
    for &(id, _, _) in &cells {
        store
            .set_series(id, w, SeriesStatus::Complete, Some(StopReason::Fixed), None)
            .unwrap();
    }
    (store, s)
}

#[test]
fn a_sweep_is_not_compared_with_its_first_point() {
    let (store, id) = sweep(3, "1000000000000");
    let r = report(&store, id, &options(None)).unwrap();
    assert!(r.factors.iter().all(|f| f.sweep && f.baseline.is_none()));
    assert!(r.workloads[0].comparisons.is_empty());
    assert!(r.observations.is_empty());
    let note = r.observations_note.as_deref().unwrap();
    has(
        note,
        "a sweep over file_size (5 levels) and record_size (8 levels)",
    );
    has(note, "--baseline 'record_size=64 KiB'");
    // A declared baseline is compared with, along its own factor only.
    let r = report(&store, id, &options(Some("record_size=64 KiB"))).unwrap();
    let cs = &r.workloads[0].comparisons;
    assert!(!cs.is_empty());
    assert!(cs
        .iter()
        .all(|c| c.factor == "record_size" && c.from == "64 KiB"));
    // Beside 64 KiB records, each file size (64 KiB to 1 MiB) has 4, 5, 6, 7 and 7 other
    // records; two tests each.
    assert_eq!(cs.len(), 2 * (4 + 5 + 6 + 7 + 7));
}

#[test]
fn a_small_study_keeps_its_comparisons() {
    // Three levels of two numeric factors: a study, not a sweep.
    let cells: Vec<[(&str, &str); 2]> = ["16MB", "64MB", "256MB"]
        .iter()
        .flat_map(|j| ["1", "2", "4"].map(|c| [("journal", *j), ("clients", c)]))
        .collect();
    let slices: Vec<&[(&str, &str)]> = cells.iter().map(|c| c.as_slice()).collect();
    let r = default_report(crate::report::tests::study(&slices, 3, &[], |c, rep| {
        let v = 1000.0 + 10.0 * c as f64 + f64::from(rep);
        vec![Metric::new("file_create", "rate", Unit::FilesPerSec, v)]
    }));
    assert!(r.factors.iter().all(|f| !f.sweep && f.baseline.is_some()));
    assert_eq!(r.workloads[0].comparisons.len(), 6 + 6);
    assert!(matrix_axes(&r).is_none());
    let text = rendered(&r, Format::Table);
    assert!(!text.contains("one matrix per phase"), "{text}");
}

#[test]
fn a_sweep_reads_as_one_matrix_per_phase() {
    let r = default_report(sweep(3, "1000000000000"));
    let w = &r.workloads[0];
    let t = w.tables.iter().find(|t| t.metric == "throughput").unwrap();
    let ms = matrices(&r, w, t);
    assert_eq!(
        ms.iter().map(|m| m.phase.as_str()).collect::<Vec<_>>(),
        ["write", "read"]
    );
    let m = &ms[0];
    assert_eq!((m.entries.len(), m.entries[0].len()), (5, 8));
    // Row 1 MiB, column 8 KiB; a record larger than its file is not measured.
    let mean = m.entries[4][1].unwrap().summary.mean;
    let want = (1..=3).map(|rep| rate(1024, 8, rep)).sum::<f64>() / 3.0;
    assert!((mean - want).abs() < 1e-6 * want, "{mean} {want}");
    assert!(
        m.entries[0][5].is_none(),
        "128 KiB records in a 64 KiB file"
    );
    assert!(m.entries[0][4].is_some());
    let (head, rows) = text(&r, m);
    let want = "file_size 4k 8k 16k 32k 64k 128k 256k 512k";
    assert_eq!(head, want.split(' ').collect::<Vec<_>>());
    assert_eq!(rows[0][0], "64 KiB");
    assert_eq!(rows[0][6], "");

    let out = rendered(&r, Format::Table);
    assert!(out.contains("write · throughput (MiB/s)"), "{out}");
    assert!(out.contains("rows file_size, columns record_size"), "{out}");
    // No configuration rows (`1 MiB   512 KiB   …`) in the compact report.
    let config_row = |l: &str| l.starts_with("1 MiB") && l.contains("512 KiB");
    assert!(!out.lines().any(config_row), "{out}");
    for l in out.lines() {
        assert!(l.chars().count() <= 100, "{l}");
    }
    // --all adds the configuration rows.
    let all = crate::report::Presentation {
        detail: crate::report::view::Detail::All,
        ..Default::default()
    };
    let all = crate::report::exporter_for(Format::Table, &all)
        .render(&r)
        .unwrap();
    let all = String::from_utf8(all).unwrap();
    assert!(all.contains("write · throughput (MiB/s)"), "{all}");
    assert!(all.lines().any(config_row), "{all}");
    let md = rendered(&r, Format::Markdown);
    has(
        &md,
        "| file_size | 4k | 8k | 16k | 32k | 64k | 128k | 256k | 512k |",
    );
}

#[test]
fn html_of_a_sweep_draws_heatmaps_not_a_bar_per_point() {
    let r = default_report(sweep(3, "1000000000000"));
    assert!(!r.workloads[0].telemetry.is_empty());
    let html = rendered(&r, Format::Html);
    let count = |k: &str| html.matches(&format!("class=\"chart chart-{k}\"")).count();
    assert_eq!(count("heatmap"), 2, "one per test");
    for k in ["bars", "stacked", "strip", "lines"] {
        assert_eq!(count(k), 0, "{k}");
    }
    assert!(html.contains("<h4>read · throughput (GiB/s)</h4>"));
}

#[test]
fn many_points_with_one_repetition_are_one_short_warning() {
    let r = default_report(sweep(1, "1000000000000"));
    let m = &only_of_kind(&r, WarningKind::FewRepetitions).message;
    starts(
        m,
        "only one repetition in all 34 configurations (file_size=64 KiB record_size=4 KiB, ",
    );
    has(m, "…and 31 more)");
    assert!(m.chars().count() < 300, "{m}");
}

#[test]
fn the_data_set_is_the_largest_points() {
    // 1 GiB of RAM: every point (up to 1 MiB) fits; the run's -s (512 KiB) is not the figure.
    let r = default_report(sweep(3, "1073741824"));
    let w = of_kind(&r, WarningKind::CacheDataset)[0];
    has(&w.message, "data set up to 1.0 MiB, RAM 1.0 GiB");
    // 512 KiB of RAM: the 1 MiB points are not under twice the RAM, though the run's -s is.
    let r = default_report(sweep(3, "524288"));
    let cache = of_kind(&r, WarningKind::CacheDataset);
    assert!(cache.is_empty(), "the 1 MiB points are twice the RAM");
}
