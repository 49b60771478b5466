//! Results a user can trust and explain (issue 12, points 4 and 5), end to end on the report
//! fixtures and a high-variance 2 × 2 × 3 study: no report format prints a negative bound
//! for a time, rate, throughput, size or count, and says which interval it printed; the
//! warnings are grouped, capped in the terminal, complete with `--warnings all`, and their
//! advice fits the workload and the cache policy.

mod common;
#[path = "common/report_fixtures.rs"]
mod fixtures;

use common::fslab;
use std::path::Path;

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = fslab(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "fslab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The number at the start of `s` (`-3009`, `0.2242`, `1.5e-3`).
fn leading_number(s: &str) -> Option<f64> {
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || (*i == 0 && *c == '-') || *c == 'e'))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().ok()
}

/// Lower bounds of the intervals a text format prints: `[lo – hi]` (terminal, Markdown) and
/// `95% CI lo – hi ·` (HTML entries).
fn printed_lower_bounds(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('[') {
        let rest = &text[i + 1..];
        if let Some(lo) = leading_number(rest).filter(|_| rest.contains(" – ")) {
            let upto = rest.find(']').unwrap_or(rest.len());
            if rest[..upto].contains(" – ") {
                out.push(lo);
            }
        }
    }
    for (i, m) in text.match_indices("95% CI ") {
        let rest = &text[i + m.len()..];
        // The entry ends at its sample size (` · n=`), its HTML element or its line.
        let upto = [" · n=", "<", "\n"]
            .iter()
            .filter_map(|end| rest.find(end))
            .min()
            .unwrap_or(0);
        let entry = &rest[..upto];
        if let Some(lo) = leading_number(rest) {
            if entry.contains(" – ") {
                out.push(lo);
            }
        }
    }
    out
}

/// The fields of one CSV row (RFC 4180 quoting, no line breaks inside fields).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Every (unit, lower bound, method) of the JSON report's statistics.
fn json_bounds(json: &str) -> Vec<(String, f64, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out = Vec::new();
    for w in v["workloads"].as_array().unwrap() {
        for s in w["stats"].as_array().unwrap() {
            let sm = &s["summary"];
            if let Some(lo) = sm["ci95"][0].as_f64() {
                let unit = s["unit"].as_str().unwrap().to_string();
                let method = sm["ci95_method"].as_str().unwrap_or("unnamed");
                out.push((unit, lo, method.to_string()));
            }
        }
    }
    out
}

#[test]
fn no_format_prints_a_negative_bound_for_a_positive_quantity() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let ids = fixtures::build(&db);
    let noisy = fixtures::add_noisy(&db);
    let sources: Vec<Vec<String>> = [noisy, ids.journal, ids.iozone, ids.dbench, ids.run_a]
        .iter()
        .map(|id| vec!["report".to_string(), id.to_string()])
        .chain([vec![
            "compare".to_string(),
            ids.run_a.to_string(),
            ids.run_b.to_string(),
        ]])
        .collect();
    let mut checked = 0;
    for src in &sources {
        let args = |f: &str| -> Vec<String> {
            let mut a = src.clone();
            a.extend(["--format".to_string(), f.to_string()]);
            a
        };
        let run = |a: Vec<String>| {
            run_ok(
                dir.path(),
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        };
        // JSON: every statistic's interval, by unit; the method is named.
        let bounds = json_bounds(&run(args("json")));
        assert!(!bounds.is_empty());
        for (unit, lo, method) in &bounds {
            // The fixtures hold only quantities that cannot be negative, so every bound the
            // text formats print below must be ≥ 0 too.
            assert_ne!(unit, "%", "{src:?}");
            assert!(*lo > 0.0, "{src:?}: {unit} interval from {lo}");
            assert_eq!(method, "log_t", "{src:?} {unit}");
            checked += 1;
        }
        // CSV: ci95_low by its header, and the method column.
        let csv = run(args("csv"));
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let (low, method, unit) = (col("ci95_low"), col("ci95_method"), col("unit"));
        for l in lines {
            let f = csv_fields(l);
            // Telemetry percentages (device utilisation, CPU shares) keep Student t.
            if !f[low].is_empty() && f[unit] != "%" {
                assert!(f[low].parse::<f64>().unwrap() > 0.0, "{src:?}: {l}");
                assert_eq!(f[method], "log_t", "{src:?}: {l}");
                checked += 1;
            }
        }
        // Terminal, Markdown and HTML (both error-bar kinds), every table (`--all`: the
        // compact report leaves some intervals to the verdicts).
        for f in ["table", "markdown", "html"] {
            let mut a = args(f);
            a.push("--all".to_string());
            let text = run(a);
            let los = printed_lower_bounds(&text);
            assert!(!los.is_empty(), "{src:?} {f}: no interval found");
            for lo in &los {
                assert!(*lo >= 0.0, "{src:?} {f}: a printed interval starts at {lo}");
            }
            assert!(
                text.contains("95% CI of the geometric mean (log scale)"),
                "{src:?} {f}: the interval is not named"
            );
            checked += los.len();
        }
    }
    assert!(checked > 500, "{checked}");
    // The noisy study's Student-t intervals would have started below zero.
    let j = run_ok(
        dir.path(),
        &["report", &noisy.to_string(), "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let values = v["workloads"][0]["stats"][1]["values"].clone();
    let xs: Vec<f64> = serde_json::from_value(values).unwrap();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!(mean - 4.302653 * sd / n.sqrt() < 0.0, "{xs:?}");
}

#[test]
fn charts_state_their_error_bars_and_clip_sd_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let ids = fixtures::build(&db);
    let noisy = fixtures::add_noisy(&db).to_string();
    let ci = run_ok(dir.path(), &["report", &noisy, "--format", "html"]);
    assert!(ci.contains(
        "Mean of each configuration; error bars: 95% CI of the geometric mean (log scale).</figcaption>"
    ));
    let sweep = run_ok(
        dir.path(),
        &["report", &ids.iozone.to_string(), "--format", "html"],
    );
    assert!(sweep.contains(
        "Mean per level of journal; shaded band: 95% CI of the geometric mean (log scale).</figcaption>"
    ));
    let sd = run_ok(
        dir.path(),
        &["report", &noisy, "--format", "html", "--error-bars", "sd"],
    );
    assert!(
        sd.contains("error bars: ± one standard deviation, clipped at 0 (the quantity cannot be negative).</figcaption>"),
        "no clipped caption"
    );
}

#[test]
fn warnings_are_grouped_capped_and_fit_their_workload() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let ids = fixtures::build(&db);
    let noisy = fixtures::add_noisy(&db).to_string();
    let json = run_ok(dir.path(), &["report", &noisy, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let all = v["warnings"].as_array().unwrap();
    assert!(all.len() > 20, "{}", all.len());
    let section = |text: &str| -> Vec<String> {
        let s = text.split("== Warnings ==").nth(1).unwrap();
        let s = s.split("== Repetitions ==").next().unwrap();
        s.lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(str::to_string)
            .collect()
    };
    // Grouped by default: at most ten lines, one per kind and advice, the last saying how to
    // see every warning.
    // Wide enough that no warning wraps: one line each.
    let grouped = section(&run_ok(dir.path(), &["report", &noisy, "--width", "2000"]));
    assert!(grouped.len() <= 10, "{grouped:#?}");
    let last = grouped.last().unwrap();
    assert!(
        last.ends_with(&format!("`fslab report {noisy} --warnings all`")),
        "{last}"
    );
    let cv: Vec<&String> = grouped
        .iter()
        .filter(|l| l.starts_with("Coefficient of variation above 10% ("))
        .collect();
    assert_eq!(cv.len(), 1, "{grouped:#?}");
    assert!(cv[0].contains(" more; "), "{}", cv[0]);
    // --warnings all: every warning on its own line.
    let every = section(&run_ok(
        dir.path(),
        &["report", &noisy, "--warnings", "all", "--width", "2000"],
    ));
    assert_eq!(every.len(), all.len());
    let msg = |kind: &str| -> Vec<&str> {
        all.iter()
            .filter(|w| w["kind"] == kind)
            .map(|w| w["message"].as_str().unwrap())
            .collect()
    };
    // The page cache once, for IOzone only, in the cold policy's words.
    let cache = [msg("cache_dataset"), msg("cache_device")].concat();
    assert_eq!(cache.len(), 1, "{cache:#?}");
    assert!(
        cache[0].starts_with("files: data set 1.0 GiB, RAM 24.0 GiB"),
        "{}",
        cache[0]
    );
    assert!(cache[0].contains(
        "the cold policy drops the page cache before each repetition, but within a repetition a data set under 2× RAM is served from cache"
    ));
    // Tree-shape advice only for fdtree; IOzone's phases are told about file sizes.
    let short: Vec<&serde_json::Value> = all.iter().filter(|w| w["kind"] == "too_short").collect();
    assert!(short.iter().any(|w| w["workload"] == "files"), "{short:#?}");
    for w in short {
        let m = w["message"].as_str().unwrap();
        let tree = m.contains("more files or levels");
        assert_eq!(tree, w["workload"] == "tree", "{m}");
        assert_eq!(
            m.contains("larger files (file_size"),
            w["workload"] == "files",
            "{m}"
        );
    }
    // A cold study is never told to use a cold policy.
    for w in all {
        let m = w["message"].as_str().unwrap();
        assert!(
            !m.contains("cache = \"cold\"") && !m.contains("cold cache policy"),
            "{m}"
        );
    }
    // Three repetitions: no outliers.
    assert!(msg("outlier").is_empty());
    // The fdtree-only journal study has no page-cache warning at all.
    let j = run_ok(
        dir.path(),
        &["report", &ids.journal.to_string(), "--format", "json"],
    );
    assert!(!j.contains("\"cache_dataset\"") && !j.contains("page cache"));
}

/// Writes the fixtures and the noisy study to $FSLAB_FIXTURE_DB for looking at by hand.
#[test]
#[ignore]
fn noisy_fixture_db() {
    let path = std::env::var("FSLAB_FIXTURE_DB").expect("set FSLAB_FIXTURE_DB=PATH");
    let _ = std::fs::remove_file(&path);
    fixtures::build(Path::new(&path));
    eprintln!("noisy {}", fixtures::add_noisy(Path::new(&path)));
}
