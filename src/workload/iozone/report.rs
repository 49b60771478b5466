//! IOzone's report layouts, character for character as `iozone.c` prints them: the text table
//! (`print_header` and the `printf`s of each test), the `-R` "Excel" blocks (`dump_excel`,
//! `dump_report`) and the throughput-mode lines and `-R` summary (`dump_throughput`).

use super::passes::Test;
use super::sweep::Point;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The two header lines of the text table (IOzone's `CONTROL_STRING3`), in the widths of
/// IOzone 3.508: ten columns for every rate (3.414 had eight or nine, so a rate of
/// 10⁷ KiB/s — 10 GB/s, easily reached from the page cache — ran into its neighbour).
/// The header's own widths are IOzone's, `write` one column left of its values included.
pub fn table_header() -> String {
    let top = [
        " ", " ", " ", " ", " ", " ", "random", "random", "bkwd", "record", "stride", "", "", "",
        "",
    ];
    let names = [
        "kB", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read", "rewrite",
        "read", "fwrite", "frewrite", "fread", "freread",
    ];
    const WIDTHS: [usize; 15] = [16, 8, 9, 11, 10, 10, 10, 10, 10, 11, 11, 10, 10, 10, 10];
    let mut s = String::new();
    for line in [top, names] {
        for (text, width) in line.iter().zip(WIDTHS) {
            let _ = write!(s, "{text:>width$}");
        }
        s.push('\n');
    }
    s
}

/// The width of a rate column (IOzone 3.508's `%10ld`).
const RATE: usize = 10;

/// One row of the text table: file KiB, record KiB, then each selected test's KiB/s, in
/// IOzone 3.508's widths (`%16ld%8ld`, then `%10ld` per rate, `" %10ld"` for record rewrite
/// and stride read).
///
/// A test that was not selected is left blank over its columns' full width, so every later
/// value stays under its heading (IOzone pads with fixed strings that do not always match:
/// 3.510 with `-i 0 -i 1 -i 2` ends its rows with 64 spaces where the five columns take 72).
/// Where a value is as wide as its field or wider (10¹⁰ KiB/s and more), a space goes before
/// it, so the columns can always be read back.
pub fn table_row(file_kib: u64, record: u64, tests: &[u8], rate: &dyn Fn(Test) -> u64) -> String {
    let mut s = format!("{file_kib:>16}");
    field(&mut s, "", 8, record / 1024);
    for t in Test::ALL {
        // IOzone prints a space before record rewrite and stride read.
        let sep = if matches!(t.number(), 4 | 5) { " " } else { "" };
        if tests.contains(&t.number()) {
            field(&mut s, sep, RATE, rate(t));
        } else {
            s.push_str(&" ".repeat(sep.len() + RATE));
        }
    }
    s
}

/// Append `sep` and `v` right-aligned in `width`, with a space in front when nothing else
/// would separate it from the column before.
fn field(s: &mut String, sep: &str, width: usize, v: u64) {
    let text = v.to_string();
    s.push_str(sep);
    if sep.is_empty() && text.len() >= width {
        s.push(' ');
    }
    let _ = write!(s, "{text:>width$}");
}

/// One `-R` block: a title, the record sizes (KiB) heading the columns, and per file size
/// the value of every record size up to the file size (0 where the cell was skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct ExcelBlock {
    /// IOzone's title, e.g. `Writer report`.
    pub title: &'static str,
    /// Column headings: record sizes in KiB.
    pub records_kib: Vec<u64>,
    /// Rows: file size in KiB and the values.
    pub rows: Vec<(u64, Vec<u64>)>,
}

/// Build the `-R` blocks for the selected tests from per-cell KiB/s values.
/// `values[(point, test)]` holds the value of a measured cell; skipped cells are 0.
pub fn excel_blocks(
    tests: &[u8],
    report_records: &[u64],
    points: &[Point],
    skipped: &[Point],
    values: &BTreeMap<(Point, Test), u64>,
) -> Vec<ExcelBlock> {
    let mut files: Vec<u64> = points.iter().chain(skipped).map(|p| p.file_kib).collect();
    files.sort_unstable();
    files.dedup();
    let row = |t: Test, f: u64| {
        let vals = report_records
            .iter()
            .filter(|&&r| r <= f * 1024)
            .filter_map(|&r| {
                let p = Point::new(f, r);
                values
                    .get(&(p, t))
                    .copied()
                    .or(skipped.contains(&p).then_some(0))
            })
            .collect();
        (f, vals)
    };
    Test::ALL
        .into_iter()
        .filter(|t| tests.contains(&t.number()))
        .map(|t| ExcelBlock {
            title: t.excel_title(),
            records_kib: report_records.iter().map(|r| r / 1024).collect(),
            rows: files.iter().map(|&f| row(t, f)).collect(),
        })
        .collect()
}

/// The `-R` text: "Excel output is below:" and one block per test.
pub fn excel_text(blocks: &[ExcelBlock]) -> String {
    let mut s = String::from("Excel output is below:\n");
    for b in blocks {
        let _ = writeln!(s, "\n\"{}\"", b.title);
        s.push_str("      ");
        for r in &b.records_kib {
            let _ = write!(s, "  \"{r}\"");
        }
        s.push('\n');
        for (f, vals) in &b.rows {
            let _ = write!(s, "\"{f}\"  ");
            for v in vals {
                let _ = write!(s, " {v} ");
            }
            s.push('\n');
        }
    }
    s
}

/// Throughput-mode figures of one phase, in IOzone's units (KiB, KiB/s).
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputLines {
    /// IOzone's phase title (`Initial write`, …).
    pub title: &'static str,
    /// The noun in "Children see throughput for N <noun>".
    pub noun: &'static str,
    /// Workers.
    pub workers: usize,
    /// Σ per-worker rates.
    pub children: f64,
    /// Σ KiB before the stop / parent's wall time.
    pub parent: f64,
    /// Slowest worker.
    pub min: f64,
    /// Fastest worker.
    pub max: f64,
    /// Mean worker.
    pub avg: f64,
    /// Fewest KiB any worker moved before the stop.
    pub min_xfer: f64,
    /// All bytes / (last finish − first start), KiB/s (fslab's addition).
    pub aggregate: f64,
}

/// IOzone's per-phase throughput lines, plus fslab's true aggregate.
pub fn throughput_text(l: &ThroughputLines) -> String {
    let mut s = String::new();
    let all = |who: &str| format!("{who} throughput for {:2} {} \t", l.workers, l.noun);
    for (label, value, unit) in [
        (all("Children see"), l.children, "kB/sec"),
        (all("Parent sees"), l.parent, "kB/sec"),
        ("Min throughput per thread \t\t\t".into(), l.min, "kB/sec "),
        ("Max throughput per thread \t\t\t".into(), l.max, "kB/sec"),
        ("Avg throughput per thread \t\t\t".into(), l.avg, "kB/sec"),
        ("Min xfer \t\t\t\t\t".into(), l.min_xfer, "kB"),
        (
            "Aggregate (all bytes, first start to last finish) \t".into(),
            l.aggregate,
            "kB/sec",
        ),
    ] {
        let _ = writeln!(s, "\t{label}= {value:10.2} {unit}");
    }
    s
}

/// IOzone's `-R` summary in throughput mode (`dump_throughput`): one row per phase with the
/// children's throughput.
pub fn throughput_excel(record: u64, rows: &[(&str, f64)]) -> String {
    let mut s = String::from(
        "\n\"Throughput report Y-axis is type of test X-axis is number of threads\"\n",
    );
    let _ = writeln!(s, "\"Record size = {} kBytes \"", record / 1024);
    s.push_str("\"Output is in kBytes/sec\"\n\n");
    for (title, v) in rows {
        let _ = writeln!(s, "\"{title:>15} \" {v:10.2} \n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::iozone::sweep::Point;

    #[test]
    fn text_table_matches_iozone_3_508s_columns() {
        let h = table_header();
        let lines: Vec<&str> = h.lines().collect();
        // The column ends of IOzone 3.506 and 3.510's header lines and rows (identical in
        // both): 16, 24, then 34 … 94 by tens, 105, 116, then 126 … 156 by tens; the header's
        // `write` ends at 33.
        let ends = |l: &str| -> Vec<usize> {
            let b = l.as_bytes();
            (1..=b.len())
                .filter(|&e| b[e - 1] != b' ' && (e == b.len() || b[e] == b' '))
                .collect()
        };
        assert_eq!(lines[0].len(), 156);
        assert_eq!(ends(lines[0]), [74, 84, 94, 105, 116]);
        assert_eq!(
            lines[1],
            "              kB  reclen    write    rewrite      read    reread      read     write      read    rewrite       read    fwrite  frewrite     fread   freread"
        );
        let all = table_row(1_048_576, 1024 * 1024, &[0, 1, 2, 3, 4, 5, 6, 7], &|t| {
            1_000_000 + t as u64
        });
        assert_eq!(all.len(), 156);
        assert_eq!(
            ends(&all),
            [16, 24, 34, 44, 54, 64, 74, 84, 94, 105, 116, 126, 136, 146, 156]
        );
        // IOzone 3.510's own row for `-i 0 -i 1 -i 2` (values from a published run), up to
        // its last value: fslab's is the same to the byte.
        let row = table_row(1_048_576, 1024 * 1024, &[0, 1, 2], &|t| match t {
            Test::Write => 859037,
            Test::Rewrite => 1358016,
            Test::Read => 1449306,
            Test::Reread => 16421172,
            Test::RandomRead => 15936521,
            _ => 1087545,
        });
        assert_eq!(
            row.trim_end(),
            "         1048576    1024    859037   1358016   1449306  16421172  15936521   1087545"
        );
        // A test left out is blank over its columns: the next one stays under its heading.
        let row = table_row(64, 32 * 1024, &[0, 2], &|t| match t {
            Test::RandomRead => 123,
            _ => 1,
        });
        assert_eq!(ends(&row)[4], 74, "{row:?}");
        assert_eq!(row.len(), 156);
    }

    #[test]
    fn huge_rates_stay_separated_and_parse_back() {
        let every = [0u8, 1, 2, 3, 4, 5, 6, 7];
        // Each test a different value, so a swapped or merged column shows.
        let value = |t: Test, scale: u64| scale + t.number() as u64 * 1000 + t as u64;
        for scale in [
            1u64,
            99_999,
            9_999_999,
            10_000_000,
            123_456_789,
            10_000_000_000,
        ] {
            for tests in [&every[..], &[0, 1][..], &[0, 2, 4, 6][..], &[5][..]] {
                let row = table_row(1_048_576, 16 * 1024 * 1024, tests, &|t| value(t, scale));
                let got: Vec<u64> = row.split_whitespace().map(|f| f.parse().unwrap()).collect();
                let mut want = vec![1_048_576, 16 * 1024];
                let selected = Test::ALL
                    .into_iter()
                    .filter(|t| tests.contains(&t.number()));
                want.extend(selected.map(|t| value(t, scale)));
                assert_eq!(got, want, "scale {scale}, tests {tests:?}: {row:?}");
            }
        }
        // 35 GB/s from the page cache fits IOzone 3.508's columns (it ran into the next
        // column in 3.414's eight); only a value that fills its field (10¹⁰ KiB/s) gets a
        // space before it and shifts the rest of its row.
        let fits = table_row(1024, 4096, &[0], &|t| match t {
            Test::Write => 35_395_291,
            _ => 1_276_042,
        });
        assert_eq!(
            fits,
            format!(
                "{:>16}{:>8}{:>10}{:>10}{}",
                1024,
                4,
                35_395_291,
                1_276_042,
                " ".repeat(156 - 44)
            )
        );
        let full = table_row(1024, 4096, &[0], &|t| match t {
            Test::Write => 1_234_567_890,
            _ => 1,
        });
        assert!(
            full.starts_with("            1024       4 1234567890         1"),
            "{full:?}"
        );
    }

    #[test]
    fn throughput_lines_are_iozones() {
        let l = ThroughputLines {
            title: "Initial write",
            noun: "initial writers",
            workers: 2,
            children: 1234.5,
            parent: 1000.0,
            min: 600.0,
            max: 634.5,
            avg: 617.25,
            min_xfer: 512.0,
            aggregate: 1100.0,
        };
        assert_eq!(
            throughput_text(&l),
            "\tChildren see throughput for  2 initial writers \t=    1234.50 kB/sec\n\
             \tParent sees throughput for  2 initial writers \t=    1000.00 kB/sec\n\
             \tMin throughput per thread \t\t\t=     600.00 kB/sec \n\
             \tMax throughput per thread \t\t\t=     634.50 kB/sec\n\
             \tAvg throughput per thread \t\t\t=     617.25 kB/sec\n\
             \tMin xfer \t\t\t\t\t=     512.00 kB\n\
             \tAggregate (all bytes, first start to last finish) \t=    1100.00 kB/sec\n"
        );
    }

    #[test]
    fn excel_report_matches_iozones_layout() {
        let points = [
            Point::new(64, 32768),
            Point::new(64, 65536),
            Point::new(128, 32768),
            Point::new(128, 65536),
        ];
        let mut v = std::collections::BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            v.insert((*p, Test::Write), 100 + i as u64);
            v.insert((*p, Test::Rewrite), 200 + i as u64);
        }
        let b = excel_blocks(&[0], &[32768, 65536], &points, &[], &v);
        assert_eq!(
            excel_text(&b),
            "Excel output is below:\n\n\"Writer report\"\n        \"32\"  \"64\"\n\"64\"   100  101 \n\"128\"   102  103 \n\n\"Re-writer report\"\n        \"32\"  \"64\"\n\"64\"   200  201 \n\"128\"   202  203 \n"
        );
        // Skipped crossover cells are 0, records above the file size are absent.
        let skipped = [Point::new(128, 32768)];
        v.retain(|(p, _), _| p.file_kib == 64);
        let b = excel_blocks(&[0], &[32768, 65536, 262144], &points[..2], &skipped, &v);
        assert_eq!(b[0].rows, [(64, vec![100, 101]), (128, vec![0])]);
    }
}
