//! Unit tests of the sweep planner, IOzone's report layouts, the BIFF writer and the study form.

use super::super::report;
use super::super::sweep::{plan, Point, SizeOptions};
use super::super::*;

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
    let small: Vec<u64> = p
        .points
        .iter()
        .filter(|x| x.file_kib == 64)
        .map(|x| x.record / 1024)
        .collect();
    assert_eq!(small, [4, 8, 16, 32, 64]);
    // 16 MiB is not above the crossover; 32 MiB starts at 64 KiB records.
    assert!(p.points.contains(&Point {
        file_kib: 16384,
        record: 4096
    }));
    let big: Vec<u64> = p
        .points
        .iter()
        .filter(|x| x.file_kib == 32768)
        .map(|x| x.record / 1024)
        .collect();
    assert_eq!(big, [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]);
    assert!(p.skipped.contains(&Point {
        file_kib: 32768,
        record: 4096
    }));
    assert_eq!(p.report_records.len(), 13);
    // -z keeps the small records.
    let z = plan(&SizeOptions {
        no_crossover: true,
        ..auto()
    })
    .unwrap();
    assert!(z.points.contains(&Point {
        file_kib: 32768,
        record: 4096
    }));
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
    assert_eq!(
        l.points,
        [
            Point {
                file_kib: 1024,
                record: 4096
            },
            Point {
                file_kib: 65536,
                record: 4096
            }
        ]
    );
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
    assert_eq!(
        one.points,
        [Point {
            file_kib: 512,
            record: 4096
        }]
    );
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

#[test]
fn text_table_matches_iozones_columns() {
    let h = report::table_header();
    let lines: Vec<&str> = h.lines().collect();
    // From IOzone 3.414's output ("KB" there; current IOzone prints "kB").
    assert_eq!(
        lines[0],
        "                                                            random  random    bkwd   record   stride                                   "
    );
    assert_eq!(
        lines[1],
        "              kB  reclen   write rewrite    read    reread    read   write    read  rewrite     read   fwrite frewrite   fread  freread"
    );
    let row = report::table_row(64, 32 * 1024, &[0, 1], &|t| match t {
        Test::Write => 571375,
        Test::Rewrite => 1780008,
        Test::Read => 6421025,
        _ => 8182586,
    });
    assert_eq!(
        row,
        "              64      32  571375 1780008  6421025  8182586                                                                          "
    );
    let all = report::table_row(1024, 4096, &[0, 1, 2, 3, 4, 5, 6, 7], &|_| 1);
    assert_eq!(all.len(), h.lines().nth(1).unwrap().len());
}

#[test]
fn excel_report_matches_iozones_layout() {
    let points = [
        Point {
            file_kib: 64,
            record: 32768,
        },
        Point {
            file_kib: 64,
            record: 65536,
        },
        Point {
            file_kib: 128,
            record: 32768,
        },
        Point {
            file_kib: 128,
            record: 65536,
        },
    ];
    let mut v = std::collections::BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        v.insert((*p, Test::Write), 100 + i as u64);
        v.insert((*p, Test::Rewrite), 200 + i as u64);
    }
    let b = report::excel_blocks(&[0], &[32768, 65536], &points, &[], &v);
    assert_eq!(
        report::excel_text(&b),
        "Excel output is below:\n\n\"Writer report\"\n        \"32\"  \"64\"\n\"64\"   100  101 \n\"128\"   102  103 \n\n\"Re-writer report\"\n        \"32\"  \"64\"\n\"64\"   200  201 \n\"128\"   202  203 \n"
    );
    // Skipped crossover cells are 0, records above the file size are absent.
    let skipped = [Point {
        file_kib: 128,
        record: 32768,
    }];
    v.retain(|(p, _), _| p.file_kib == 64);
    let b = report::excel_blocks(&[0], &[32768, 65536, 262144], &points[..2], &skipped, &v);
    assert_eq!(b[0].rows, [(64, vec![100, 101]), (128, vec![0])]);
}

#[test]
fn biff_worksheet_round_trips() {
    let blocks = vec![report::ExcelBlock {
        title: "Writer report",
        records_kib: vec![4, 8],
        rows: vec![(64, vec![1000, 2000])],
    }];
    let bytes = biff::workbook("iozone -a", &blocks);
    assert_eq!(&bytes[..8], &[0x09, 0, 4, 0, 2, 0, 0x10, 0]);
    assert_eq!(&bytes[bytes.len() - 4..], &[0x0A, 0, 0, 0]);
    let cells = biff::parse(&bytes).unwrap();
    assert!(cells.contains(&(0, 0, "iozone -a".into())));
    assert!(cells.contains(&(3, 0, "Writer report".into())));
    assert!(cells.contains(&(4, 2, "8".into())));
    assert!(cells.contains(&(5, 0, "64".into())));
    assert!(cells.contains(&(5, 2, "2000".into())));
}

#[test]
fn study_spec_defaults_and_unknown_keys() {
    let s: IozoneSpec = toml::from_str("file_size = \"1g\"\nrecord_size = \"1m\"").unwrap();
    let p = s.to_params().unwrap();
    assert_eq!((p.file_kib, p.record), (1 << 20, 1 << 20));
    assert_eq!(p.tests, [0, 1]);
    assert_eq!((p.stride, p.threads), (17, 1));
    assert!(toml::from_str::<IozoneSpec>("record = \"1m\"").is_err());
    let bare: IozoneSpec = toml::from_str("file_size = \"2048\"\nrecord_size = \"64\"").unwrap();
    let p = bare.to_params().unwrap();
    assert_eq!(
        (p.file_kib, p.record),
        (2048, 65536),
        "bare numbers are KiB"
    );
    let bad: IozoneSpec = toml::from_str("file_size = \"4k\"\nrecord_size = \"1m\"").unwrap();
    assert!(bad.to_params().is_err());
    let w = crate::workload::WorkloadSpec::Iozone(s);
    assert_eq!(w.kind(), "iozone");
    assert!(w.build().is_ok());
    let round: crate::workload::WorkloadSpec =
        toml::from_str("kind = \"iozone\"\nfile_size = \"64k\"\ntests = [0, 2]").unwrap();
    assert_eq!(round.label(), "iozone -s 64k -r 4k -i 0 -i 2");
}
