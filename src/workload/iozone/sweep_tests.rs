//! Unit tests of the sweep planner: IOzone's `-a` matrix with its crossover, bounds and
//! lists, and the usage errors of bad sizes.

use super::*;

/// The record sizes (KiB) planned for the file size `file_kib`.
fn records_kib(p: &Plan, file_kib: u64) -> Vec<u64> {
    p.points
        .iter()
        .filter(|x| x.file_kib == file_kib)
        .map(|x| x.record / 1024)
        .collect()
}

fn auto() -> SizeOptions {
    SizeOptions {
        auto: true,
        ..Default::default()
    }
}

#[test]
fn auto_mode_builds_iozones_matrix_with_the_crossover() {
    let p = plan(&auto()).unwrap();
    let files: std::collections::BTreeSet<u64> = p.points.iter().map(|x| x.file_kib).collect();
    assert_eq!(files.len(), 14);
    assert_eq!(files.first(), Some(&64));
    assert_eq!(files.last(), Some(&(512 * 1024)));
    // 64 KiB file: records 4..64 KiB.
    assert_eq!(records_kib(&p, 64), [4, 8, 16, 32, 64]);
    // 16 MiB is not above the crossover; 32 MiB starts at 64 KiB records.
    assert!(p.points.contains(&Point::new(16384, 4096)));
    assert_eq!(
        records_kib(&p, 32768),
        [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
    );
    assert!(p.skipped.contains(&Point::new(32768, 4096)));
    assert_eq!(p.report_records.len(), 13);
    // -z keeps the small records.
    let z = plan(&SizeOptions {
        no_crossover: true,
        ..auto()
    })
    .unwrap();
    assert!(z.points.contains(&Point::new(32768, 4096)));
    assert!(z.skipped.is_empty());
}

#[test]
fn sweep_bounds_and_lists() {
    let p = plan(&SizeOptions {
        min_file_kib: Some(1024),
        max_file_kib: Some(4096),
        min_record: Some(256 * 1024),
        ..auto()
    })
    .unwrap();
    assert_eq!(p.points.len(), 3 + 4 + 5);
    // Several -s: auto mode over the list, no crossover, record from -r.
    let l = plan(&SizeOptions {
        sizes_kib: vec![65536, 1024],
        records: vec![4096],
        ..Default::default()
    })
    .unwrap();
    assert!(l.sweep);
    assert_eq!(l.points, [Point::new(1024, 4096), Point::new(65536, 4096)]);
    // Several -r.
    let r = plan(&SizeOptions {
        sizes_kib: vec![16 << 20],
        records: vec![1 << 20, 4 << 20, 16 << 20],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(r.points.len(), 3);
    assert_eq!(r.report_records, [1 << 20, 4 << 20, 16 << 20]);
    // One point.
    let one = plan(&SizeOptions::default()).unwrap();
    assert_eq!(one.points, [Point::new(512, 4096)]);
    assert!(!one.sweep);
}

#[test]
fn bad_sizes_are_usage_errors() {
    let bad = [
        SizeOptions {
            sizes_kib: vec![64],
            records: vec![128 * 1024],
            ..Default::default()
        },
        SizeOptions {
            records: vec![64],
            ..Default::default()
        },
        SizeOptions {
            records: vec![32 << 20],
            ..Default::default()
        },
        SizeOptions {
            min_record: Some(64 << 10),
            max_record: Some(4 << 10),
            ..auto()
        },
        SizeOptions {
            max_file_kib: Some(64),
            ..Default::default()
        },
        SizeOptions {
            sizes_kib: vec![0],
            ..Default::default()
        },
    ];
    for o in bad {
        let e = plan(&o).unwrap_err();
        assert!(
            e.downcast_ref::<crate::error::UsageError>().is_some(),
            "{o:?}: {e}"
        );
    }
}
