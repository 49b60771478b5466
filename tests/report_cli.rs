//! `fslab report` and `fslab compare` end to end on synthetic studies written through the
//! Store API (tests/common/report_fixtures.rs): every format as a snapshot, byte-for-byte
//! determinism, the options, and bad input (one line, exit code 2).

mod common;
#[path = "common/report_fixtures.rs"]
mod fixtures;

use common::fslab;
use std::path::Path;
use tempfile::TempDir;

/// A temporary directory holding the fixture database (as `results.db`, FSLAB_DB's name).
fn db() -> (TempDir, fixtures::Ids) {
    let dir = tempfile::tempdir().unwrap();
    let ids = fixtures::build(&dir.path().join("results.db"));
    (dir, ids)
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = fslab(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "fslab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail with exit code 2 and one line on stderr; returns that line.
fn run_usage_error(dir: &Path, args: &[&str]) -> String {
    let out = fslab(dir).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "fslab {args:?}: {out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(out.stdout.is_empty());
    err
}

#[test]
fn snapshots_of_every_format() {
    let (dir, ids) = db();
    let j = ids.journal.to_string();
    for format in ["table", "markdown", "csv", "json"] {
        let out = run_ok(dir.path(), &["report", &j, "--format", format]);
        if format != "csv" {
            // One drifting series and one slow first repetition among the workload's 16
            // are within chance: no caution or warning names them.
            assert!(!out.contains("drift"), "{out}");
            assert!(!out.contains("slow first"), "{out}");
        }
        insta::assert_snapshot!(format!("journal_{format}"), out);
    }
    let out = run_ok(dir.path(), &["report", "xfs-log", "--format", "markdown"]);
    insta::assert_snapshot!("dbench_markdown", out);
    let out = run_ok(dir.path(), &["report", "journal-iozone", "--format", "csv"]);
    insta::assert_snapshot!("iozone_csv", out);
    let run = ids.run_a.to_string();
    let out = run_ok(dir.path(), &["report", &run, "--format", "html"]);
    insta::assert_snapshot!("run_html", out);
}

#[test]
fn same_store_gives_the_same_bytes() {
    // Two databases written separately from the same fixture, every format and study.
    let (a, ids) = db();
    let (b, _) = db();
    for id in [ids.journal, ids.iozone, ids.dbench, ids.run_a] {
        for format in ["table", "markdown", "csv", "json", "html"] {
            let args = ["report", &id.to_string(), "--format", format];
            let x = run_ok(a.path(), &args);
            assert_eq!(x, run_ok(b.path(), &args), "study {id} {format}");
        }
    }
}

#[test]
fn html_is_self_contained_with_charts() {
    let (dir, ids) = db();
    let out = dir.path().join("r.html");
    run_ok(
        dir.path(),
        &[
            "report",
            &ids.iozone.to_string(),
            "--format",
            "html",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // `-o` as export takes it (issue 35: it was refused): the same file.
    let short = dir.path().join("short.html");
    run_ok(
        dir.path(),
        &[
            "report",
            &ids.iozone.to_string(),
            "--format",
            "html",
            "-o",
            short.to_str().unwrap(),
        ],
    );
    assert_eq!(std::fs::read_to_string(&short).unwrap(), html);
    // Bars per test, lines over the four journal sizes, strips; no scripts, no fetches.
    assert_eq!(html.matches("class=\"chart chart-bars\"").count(), 2);
    assert_eq!(html.matches("class=\"chart chart-lines\"").count(), 2);
    assert_eq!(html.matches("class=\"chart chart-strip\"").count(), 2);
    for forbidden in ["<script", "http://", "https://", "src="] {
        let hits: Vec<&str> = html
            .match_indices(forbidden)
            .map(|(i, _)| &html[i.saturating_sub(20)..(i + 40).min(html.len())])
            .filter(|s| !s.contains("http://www.w3.org/2000/svg"))
            .collect();
        assert!(hits.is_empty(), "{forbidden}: {hits:?}");
    }
    // dbench: one latency chart per operation.
    let html = run_ok(
        dir.path(),
        &["report", &ids.dbench.to_string(), "--format", "html"],
    );
    assert_eq!(html.matches("class=\"chart chart-latency\"").count(), 3);
    assert!(html.contains("NTCreateX · latency percentiles (ms)"));
}

#[test]
fn name_resolves_to_the_newest_and_cells_can_be_chosen() {
    let (dir, ids) = db();
    // Two runs are named fdtree: the newest (run_b) is reported.
    let out = run_ok(dir.path(), &["report", "fdtree", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "fslab.report.v1");
    assert_eq!(v["sources"][0]["id"], ids.run_b);
    // One cell by index and by factor levels.
    let spec = format!("{}:2", ids.journal);
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(dir.path(), &["report", &spec, "--format", "json"])).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 1);
    assert_eq!(v["cells"][0]["label"], "journal=64MB fs=ext4");
    let spec = format!("{}/journal=64MB,fs=ext4", ids.journal);
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(dir.path(), &["report", &spec, "--format", "json"])).unwrap();
    assert_eq!(v["cells"][0]["idx"], 2);
}

#[test]
fn options_shape_the_report() {
    let (dir, ids) = db();
    let j = ids.journal.to_string();
    let md = run_ok(
        dir.path(),
        &[
            "report",
            &j,
            "--format",
            "markdown",
            "--metric",
            "dir_remove.rate",
            "--baseline",
            "64MB",
        ],
    );
    // The selection is the primary family: its difference is an Observation, and with --all
    // its verdict is in the table too.
    assert!(
        md.contains("With fs=ext4, journal 16MB instead of 64MB: directory removal 4.8× slower"),
        "{md}"
    );
    assert!(!md.contains("| file_create") && !md.contains("### Time"));
    let all = run_ok(
        dir.path(),
        &[
            "report",
            &j,
            "--format",
            "markdown",
            "--metric",
            "dir_remove.rate",
            "--baseline",
            "64MB",
            "--all",
        ],
    );
    assert!(
        all.contains(
            "journal 64MB → 16MB (fs=ext4) | dir_remove.rate | 4.8× slower (95% CI 3.5×–6.6×"
        ),
        "{all}"
    );
    let json = run_ok(
        dir.path(),
        &["report", &j, "--format", "json", "--error-bars", "sd"],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["options"]["error_bars"], "sd");
    let html = run_ok(
        dir.path(),
        &["report", &j, "--format", "html", "--error-bars", "sd"],
    );
    assert!(html.contains("error bars: ± one standard deviation"));
}

#[test]
fn compare_two_runs_and_two_cells() {
    let (dir, ids) = db();
    let (a, b) = (ids.run_a.to_string(), ids.run_b.to_string());
    let out = run_ok(dir.path(), &["compare", &a, &b]);
    insta::assert_snapshot!("compare_runs_table", out);
    assert!(
        out.contains("- 5 instead of 4: file creation faster by 30% (95% CI "),
        "{out}"
    );
    // Two runs ten minutes apart: said under the header, and every Observation carries it.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("4 and 5 ran at different times (4 10:00:00–10:00:02, 5 10:10:00–10:10:02 UTC), not interleaved: drift cannot be told from a difference"),
        "{out}"
    );
    assert!(
        flat.contains(
            "q < 0.001 of 4). Run at different times: drift cannot be told from a difference."
        ),
        "{out}"
    );
    let json = run_ok(dir.path(), &["compare", &a, &b, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["timing"]["interleaved"], false);
    assert_eq!(
        v["timing"]["spans"][1]["first_start"],
        "2024-05-01T10:10:00.000Z"
    );
    let a = format!("{}:0", ids.journal);
    let b = format!("{}/journal=64MB,fs=ext4", ids.journal);
    let out = run_ok(dir.path(), &["compare", &a, &b, "--format", "markdown"]);
    // The significant difference is an Observation (the verdict table counts it); two cells
    // of one interleaved study ran interleaved, and their Observations say nothing of drift.
    assert!(
        out.contains(&format!(
            "{b} instead of {a}: directory removal 4.8× faster"
        )),
        "{out}"
    );
    assert!(out.contains("ran interleaved"), "{out}");
    assert!(!out.contains("Run at different times"), "{out}");
}

#[test]
fn bad_input_is_one_line_with_exit_code_2() {
    let (dir, ids) = db();
    let p = dir.path();
    let e = run_usage_error(p, &["report", "999"]);
    assert!(
        e.contains("no study or run '999'") && e.contains("recent: 6 broken (study)"),
        "{e}"
    );
    let e = run_usage_error(p, &["report", "nonesuch"]);
    assert!(e.contains("no study or run 'nonesuch'"), "{e}");
    let j = ids.journal.to_string();
    let e = run_usage_error(p, &["report", &j, "--baseline", "2GB"]);
    assert!(
        e.contains("no cell or factor level '2GB'") && e.contains("journal=64MB"),
        "{e}"
    );
    let e = run_usage_error(p, &["report", &j, "--metric", "file_create.speed"]);
    assert!(
        e.contains("no metric 'file_create.speed'") && e.contains("file_create.rate"),
        "{e}"
    );
    let e = run_usage_error(p, &["report", &ids.broken.to_string()]);
    assert!(
        e.contains("has no completed repetitions")
            && e.contains("Device or resource busy")
            && e.contains("recent: 5 fdtree (run)"),
        "{e}"
    );
    let e = run_usage_error(p, &["report", &format!("{j}:9")]);
    assert!(
        e.contains("no cell") && e.contains(&format!("{j}:0 (journal=16MB fs=ext4)")),
        "{e}"
    );
    let e = run_usage_error(p, &["report", &format!("{j}/fs=xfs")]);
    assert!(e.contains("matches 2 cells"), "{e}");
    let e = run_usage_error(
        p,
        &["compare", &ids.run_a.to_string(), &ids.dbench.to_string()],
    );
    assert!(e.contains("no workload in common"), "{e}");
    let e = run_usage_error(p, &["compare", &j, &j]);
    assert!(e.contains("two different sources"), "{e}");
    let e = run_usage_error(p, &["compare", &j, &format!("{j}:1")]);
    assert!(e.contains("overlap"), "{e}");
    let e = run_usage_error(p, &["report", &j, "--max-cv", "0"]);
    assert!(e.contains("--max-cv"), "{e}");
    let out = p.join("no/such/dir/r.html");
    let e = run_usage_error(p, &["report", &j, "--out", out.to_str().unwrap()]);
    assert!(e.contains("cannot write the report"), "{e}");
}

#[test]
fn empty_database_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // No file at all: the error names it, and reading creates none.
    let e = run_usage_error(dir.path(), &["report", "1"]);
    assert!(
        e.contains(&format!("no results database at {}", db.display())),
        "{e}"
    );
    assert!(!db.exists());
    // A store with nothing in it.
    fslab::store::Store::open(&db).unwrap();
    let e = run_usage_error(dir.path(), &["report", "1"]);
    assert!(e.contains("is empty"), "{e}");
}

/// Writes the fixture database to $FSLAB_FIXTURE_DB for looking at reports by hand:
/// `FSLAB_FIXTURE_DB=/tmp/f.db cargo test --test report_cli -- --ignored fixture_db`.
#[test]
#[ignore]
fn fixture_db() {
    let path = std::env::var("FSLAB_FIXTURE_DB").expect("set FSLAB_FIXTURE_DB=PATH");
    let _ = std::fs::remove_file(&path);
    let ids = fixtures::build(Path::new(&path));
    eprintln!(
        "journal {} iozone {} dbench {} runs {} {} broken {}",
        ids.journal, ids.iozone, ids.dbench, ids.run_a, ids.run_b, ids.broken
    );
}

#[test]
fn telemetry_explains_differences_and_interference_is_marked() {
    let (dir, ids) = db();
    let id = ids.journal.to_string();
    let json: serde_json::Value =
        serde_json::from_str(&run_ok(dir.path(), &["report", &id, "--format", "json"])).unwrap();
    let w = &json["workloads"][0];
    // Telemetry is kept apart: not among the compared statistics, in its own list.
    let stats = w["stats"].as_array().unwrap();
    assert!(stats
        .iter()
        .all(|s| !s["name"].as_str().unwrap().starts_with("dev.")));
    let tele = w["telemetry"].as_array().unwrap();
    assert!(tele
        .iter()
        .any(|s| s["name"] == "dev.journal.write_bytes" && s["phase"] == "file_create"));
    // The 16MB → 64MB difference on ext4 is explained by the journal's commits.
    let c = w["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["factor"] == "journal" && c["context"] == "fs=ext4" && c["phase"] == "dir_remove"
        })
        .unwrap();
    assert_eq!(
        c["explanation"],
        "journal commits 180 in dir_remove at 16MB vs 41 at 64MB"
    );
    // Repetitions 2 and 3 of the first cell were disturbed: marked, warned about, cautioned.
    let s = stats
        .iter()
        .find(|s| s["cell"] == 0 && s["phase"] == "file_create" && s["name"] == "rate")
        .unwrap();
    assert_eq!(s["disturbed"], serde_json::json!([1, 2]));
    assert!(json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["kind"] == "interference"
            && x["message"].as_str().unwrap().starts_with(
                "repetition 2 of journal=16MB fs=ext4: 2.1 GiB of other I/O on vda — 2 of 5 disturbed, 4.2 GiB of other I/O in all"
            )));
    let table = run_ok(dir.path(), &["report", &id]);
    let obs = table.find("== Observations ==").unwrap();
    let first = table.find("== small files, deep tree").unwrap();
    assert!(obs < first, "the answer comes first");
    assert!(table.contains("disturbed repetitions in journal=16MB fs=ext4"));
    // The telemetry table is behind --all, and said to be.
    assert!(!table.contains("write ampl."), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("Also measured, shown with --all:") && l.contains("telemetry")),
        "{table}"
    );
    let all = run_ok(dir.path(), &["report", &id, "--all", "--width", "300"]);
    assert!(all.contains("write ampl."), "{all}");
    let csv = run_ok(dir.path(), &["report", &id, "--format", "csv"]);
    assert!(csv.contains(",dev.journal.write_bytes,B,"));
    let html = run_ok(dir.path(), &["report", &id, "--format", "html", "--all"]);
    assert!(html.contains("<h3>Telemetry</h3>") && html.contains("hollow square"));
}

/// The text formats print one line of each configuration's superblock unless `--env full`
/// asks for the whole dump.
#[test]
fn superblocks_are_one_line_unless_env_full() {
    let (dir, ids) = db();
    let j = ids.journal.to_string();
    for format in ["table", "markdown"] {
        let short = run_ok(dir.path(), &["report", &j, "--format", format]);
        assert!(!short.contains("Filesystem volume name:"), "{short}");
        if format == "table" {
            // One line within 100 columns, cut before its end; the whole: --env full.
            assert!(
                short.contains("  superblock: block size 4096 · journal 16MB · features has_journal ext_attr dir_index extent\n"),
                "{short}"
            );
            assert!(short.contains("the whole superblocks (--env"), "{short}");
        } else {
            assert!(
                short.contains("block size 4096 · journal 16MB · features has_journal ext_attr dir_index extent (whole: `--env full`)"),
                "{short}"
            );
        }
        let full = run_ok(
            dir.path(),
            &["report", &j, "--format", format, "--env", "full"],
        );
        assert!(full.contains("Filesystem volume name:   <none>"), "{full}");
        assert!(!full.contains("(whole: `--env full`)"), "{full}");
        assert!(full.len() > short.len());
    }
    let e = run_usage_error(dir.path(), &["report", &j, "--env", "everything"]);
    assert!(e.contains("summary") && e.contains("full"), "{e}");
}
