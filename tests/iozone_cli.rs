//! `fslab iozone` end to end with tiny files: output layouts, JSON, the store (one cell per
//! sweep point), and every bad-input case (exit code 2, one line naming the fix).

mod common;

use common::fslab;
use predicates::prelude::*;
use std::path::Path;

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = fslab(dir).arg("iozone").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `fslab iozone` with whitespace-separated flags followed by file paths; stdout.
fn run_words(dir: &Path, flags: &str, files: &[&Path]) -> String {
    let mut args: Vec<&str> = flags.split_whitespace().collect();
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    run_ok(dir, &args)
}

fn run_bad(dir: &Path, args: &[&str], needle: &str) {
    let out = fslab(dir).arg("iozone").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("note:")).collect();
    assert_eq!(lines.len(), 1, "one line for {args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
}

#[test]
fn all_thirteen_tests_print_iozones_table_and_remove_the_file() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("t.tmp");
    let o = fslab(d.path())
        .args(["iozone", "-s", "64k", "-r", "4k", "-f", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    // 64 KiB is far below twice the RAM: the page-cache warning, said once (at the end).
    let both = format!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(both.matches("page-cache effects").count(), 1, "{both}");
    // IOzone 3.508's widths: every row and the header are 156 columns.
    assert!(
        out.lines()
            .filter(|l| l.trim_start().starts_with("64 ") || l.trim_start().starts_with("kB"))
            .all(|l| l.len() == 156),
        "{out}"
    );
    assert!(out.contains("Output is in kBytes/sec"), "{out}");
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("kB"))
        .expect("table header");
    assert!(header.contains("freread"));
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("64 "))
        .expect("result row");
    let vals: Vec<u64> = row.split_whitespace().map(|v| v.parse().unwrap()).collect();
    assert_eq!(vals.len(), 15, "{row}");
    assert_eq!(&vals[..2], &[64, 4]);
    assert!(vals[2..].iter().all(|&v| v > 0), "{row}");
    assert!(!f.exists(), "the test file is removed without -w");
}

#[test]
fn w_keeps_the_file_and_bare_numbers_are_kib() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("keep.tmp");
    run_ok(
        d.path(),
        &[
            "-i",
            "0",
            "-s",
            "32",
            "-r",
            "4",
            "-w",
            "-f",
            f.to_str().unwrap(),
            "--no-store",
        ],
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 32 * 1024);
}

#[test]
fn json_has_units_points_and_metrics_per_test() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("j.tmp");
    let out = run_ok(
        d.path(),
        &[
            "-i",
            "0",
            "-i",
            "2",
            "-s",
            "64k",
            "-r",
            "8k",
            "-f",
            f.to_str().unwrap(),
            "--json",
            "--repeat",
            "2",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "fslab.iozone.v2");
    assert_eq!(v["units"]["throughput"], "KiB/s");
    let p = &v["points"][0];
    assert_eq!(
        (p["file_kib"].as_u64(), p["record_bytes"].as_u64()),
        (Some(64), Some(8192))
    );
    assert_eq!(p["repetitions"].as_array().unwrap().len(), 2);
    let phases: Vec<&str> = p["summary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metric"] == "throughput")
        .map(|m| m["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["write", "rewrite", "random_read", "random_write"]);
    assert!(v["warnings"][0].as_str().unwrap().contains("page-cache"));
}

#[test]
fn sweep_points_are_cells_with_file_and_record_factors() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.tmp");
    let out = run_ok(
        d.path(),
        &[
            "-a",
            "-n",
            "64k",
            "-g",
            "128k",
            "-y",
            "32k",
            "-q",
            "64k",
            "-i",
            "0",
            "-R",
            "-f",
            f.to_str().unwrap(),
        ],
    );
    assert!(out.contains("Excel output is below:"), "{out}");
    assert!(
        out.contains("\"Writer report\"\n        \"32\"  \"64\"\n\"64\"   "),
        "{out}"
    );
    let shown = fslab(d.path())
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let db = rusqlite::Connection::open(d.path().join("results.db")).unwrap();
    let mut st = db.prepare("SELECT factors FROM cell ORDER BY idx").unwrap();
    let factors: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(factors.len(), 4);
    // Sizes as people write them (and as `parse_size` reads them back).
    assert_eq!(
        factors[0],
        r#"[["file_size","64 KiB"],["record_size","32 KiB"]]"#
    );
    assert_eq!(
        factors[3],
        r#"[["file_size","128 KiB"],["record_size","64 KiB"]]"#
    );
    let label: String = db
        .query_row("SELECT label FROM cell ORDER BY idx LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(label, "file_size=64 KiB record_size=32 KiB");
    let samples: i64 = db
        .query_row(
            "SELECT count(*) FROM sample WHERE phase = 'write' AND metric = 'throughput' AND unit = 'KiB/s'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(samples, 4);
}

#[test]
fn b_writes_a_biff_worksheet() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("b.tmp");
    let xls = d.path().join("out.xls");
    run_ok(
        d.path(),
        &[
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "16k",
            "-f",
            f.to_str().unwrap(),
            "-b",
            xls.to_str().unwrap(),
            "--no-store",
        ],
    );
    let bytes = std::fs::read(&xls).unwrap();
    let cells = fslab::workload::iozone::biff::parse(&bytes).expect("a BIFF2 worksheet");
    assert!(cells.iter().any(|c| c.2 == "Writer report"));
    assert!(cells.iter().any(|c| c.2 == "Re-writer report"));
}

#[test]
fn throughput_mode_reports_iozones_figures_and_the_aggregate() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let b = d.path().join("b");
    let out = run_ok(
        d.path(),
        &[
            "-t",
            "2",
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "-i",
            "1",
            "--phase-pause",
            "0",
            "-F",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
    );
    assert!(
        out.contains("Children see throughput for  2 initial writers"),
        "{out}"
    );
    assert!(
        out.contains("Parent sees throughput for  2 re-readers"),
        "{out}"
    );
    assert!(out.contains("Min xfer"), "{out}");
    assert!(
        out.contains("Aggregate (all bytes, first start to last finish)"),
        "{out}"
    );
    assert!(!a.exists() && !b.exists());
    let j = run_ok(
        d.path(),
        &[
            "-t",
            "2",
            "-x",
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "--phase-pause",
            "0",
            "--json",
            "-F",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let s = v["points"][0]["summary"].as_array().unwrap();
    let get = |ph: &str, m: &str| {
        s.iter()
            .find(|x| x["phase"] == ph && x["metric"] == m)
            .map(|x| x["mean"].as_f64().unwrap())
            .unwrap()
    };
    // -x: no stonewall, every byte counts.
    assert_eq!(get("write", "bytes_before_stop"), 2.0 * 65536.0);
    assert_eq!(get("write", "bytes_total"), 2.0 * 65536.0);
    assert!(get("rewrite", "children_sum") > 0.0 && get("rewrite", "aggregate") > 0.0);
}

#[test]
fn one_worker_is_still_throughput_mode_with_real_figures() {
    // IOzone's -t 1 is throughput mode with one child (the 1 of a 1-vs-N scaling run), not
    // the single-file mode, and its figures must be measured values, never zeros.
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let j = run_words(
        d.path(),
        "-t 1 -s 64k -r 4k -i 0 -i 1 --phase-pause 0 --json -F",
        &[&a],
    );
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let s = v["points"][0]["summary"].as_array().unwrap();
    for ph in ["write", "rewrite", "read", "reread"] {
        let cs = s
            .iter()
            .find(|x| x["phase"] == ph && x["metric"] == "children_sum")
            .unwrap_or_else(|| panic!("{ph}.children_sum missing: {j}"));
        assert!(cs["mean"].as_f64().unwrap() > 0.0, "{ph}: {j}");
    }
    let text = run_words(d.path(), "-t 1 -s 64k -r 4k -i 0 --phase-pause 0 -F", &[&a]);
    assert!(
        text.contains("Children see throughput for  1 initial writers"),
        "{text}"
    );
    assert!(!text.contains("=       0.00 kB/sec"), "{text}");
}

#[test]
fn excel_report_in_throughput_mode_shows_the_mean_of_the_repetitions() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let text = run_words(
        d.path(),
        "-t 1 -s 64k -r 4k -i 0 --phase-pause 0 --repeat 3 -R -F",
        &[&a],
    );
    assert!(text.contains("means of 3 repetitions"), "{text}");
    // Each repetition prints IOzone's children figure; the -R row must be their mean.
    let reps: Vec<f64> = text
        .lines()
        .filter(|l| l.contains("Children see throughput for  1 initial writers"))
        .map(|l| {
            l.split('=')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(reps.len(), 3, "{text}");
    let mean = reps.iter().sum::<f64>() / 3.0;
    let row: f64 = text
        .lines()
        .find(|l| l.contains("\"  Initial write \""))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no Initial write row: {text}"));
    assert!(
        (row - mean).abs() <= 0.01 + mean * 1e-9,
        "row {row}, repetitions {reps:?}"
    );
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.tmp");
    let fs = f.to_str().unwrap();
    run_bad(
        d.path(),
        &["-s", "64k", "-r", "128k", "-f", fs],
        "larger than the file size",
    );
    run_bad(d.path(), &["-i", "9", "-f", fs], "-i 9");
    run_bad(d.path(), &["-i", "8", "-f", fs], "throughput mode");
    run_bad(d.path(), &["-i", "42", "-f", fs], "unknown test");
    run_bad(d.path(), &["-i", "x", "-f", fs], "not a test number");
    run_bad(
        d.path(),
        &["-r", "64", "-s", "64", "-r", "32m", "-f", fs],
        "16 MiB",
    );
    run_bad(d.path(), &["-s", "12q", "-f", fs], "not a size");
    run_bad(d.path(), &["-s", "1500b", "-f", fs], "whole KiB");
    run_bad(d.path(), &["-t", "2", "-a", "-f", fs], "auto-mode");
    run_bad(d.path(), &["-t", "2", "-f", fs], "-F");
    run_bad(d.path(), &["-t", "300", "-s", "64k"], "256");
    run_bad(d.path(), &["-n", "1m", "-f", fs], "auto mode");
    run_bad(
        d.path(),
        &["-s", "64k", "-f", "/nonexistent/dir/f"],
        "does not exist",
    );
    run_bad(
        d.path(),
        &["-s", "64k", "-f", d.path().to_str().unwrap()],
        "is a directory",
    );
    run_bad(d.path(), &["--repeat", "0", "-f", fs], "--repeat 0");
    // O_DIRECT on tmpfs: refused (memory copies, not a device).
    if Path::new("/dev/shm").is_dir() {
        let shm = tempfile::tempdir_in("/dev/shm").unwrap();
        let sf = shm.path().join("f");
        run_bad(
            d.path(),
            &["-I", "-s", "64k", "-f", sf.to_str().unwrap()],
            "tmpfs",
        );
    }
    // Not enough space: refused before anything is written.
    run_bad(
        d.path(),
        &["-s", "1000000g", "-r", "16m", "-i", "0", "-f", fs],
        "--no-space-check",
    );
    assert!(!f.exists());
}

#[test]
fn io_direct_alignment_is_checked_on_a_disk_file_system() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let fs_type = fslab::sysinfo::fs_type_of(d.path()).unwrap_or_default();
    if matches!(fs_type.as_str(), "tmpfs" | "ramfs" | "overlay" | "") {
        eprintln!(
            "SKIPPED: {} is {fs_type}, not a disk file system",
            d.path().display()
        );
        return;
    }
    let f = d.path().join("d.tmp");
    run_bad(
        d.path(),
        &["-I", "-s", "64k", "-r", "640b", "-f", f.to_str().unwrap()],
        "multiple of",
    );
    run_ok(
        d.path(),
        &[
            "-I",
            "-i",
            "0",
            "-i",
            "1",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
            f.to_str().unwrap(),
            "--no-store",
        ],
    );
}

#[test]
fn help_lists_iozones_flags() {
    let d = tempfile::tempdir().unwrap();
    fslab(d.path())
        .args(["iozone", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("-V [<PATTERN>]").and(predicate::str::contains("IOzone -x")),
        );
}

#[test]
fn piped_progress_counts_the_points_of_a_sweep() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("p.tmp");
    let out = fslab(d.path())
        .args([
            "iozone", "-a", "-n", "64k", "-g", "128k", "-y", "32k", "-q", "64k",
        ])
        .args(["-i", "0", "--repeat", "2", "--no-store", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("iozone rep "))
        .collect();
    // 2 file sizes × 2 record sizes, twice, interleaved: rep 1 of every point, then rep 2.
    let want = [
        "iozone rep 1/2 · point 1/4 (64k, 32k): ",
        "iozone rep 1/2 · point 2/4 (64k, 64k): ",
        "iozone rep 1/2 · point 3/4 (128k, 32k): ",
        "iozone rep 1/2 · point 4/4 (128k, 64k): ",
        "iozone rep 2/2 · point 1/4 (64k, 32k): ",
        "iozone rep 2/2 · point 2/4 (64k, 64k): ",
        "iozone rep 2/2 · point 3/4 (128k, 32k): ",
        "iozone rep 2/2 · point 4/4 (128k, 64k): ",
    ];
    assert_eq!(lines.len(), want.len(), "{err}");
    for (l, w) in lines.iter().zip(want) {
        assert!(l.starts_with(w), "{l} should start with {w}");
    }
    assert!(lines[0].contains(" · ETA "), "{}", lines[0]);
    assert!(!lines[7].contains("ETA"), "{}", lines[7]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("point 1/4"));
}
