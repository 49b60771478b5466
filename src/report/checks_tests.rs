//! Warnings that fit: advice by workload kind and cache policy, the page cache warned about
//! once, no outlier rule below five values, grouped output; and intervals that stay positive.

use super::super::tests::{
    default_report, has, lacks, no_warning, of_kind, only_of_kind, rendered, starts, study_of,
    Workload,
};
use crate::metric::{Metric, Unit};
use crate::report::model::*;
use crate::report::Format;
use crate::stats::IntervalMethod;

const TWO: [&[(&str, &str)]; 2] = [&[("journal", "16MB")], &[("journal", "64MB")]];

fn iozone(policy: &'static str) -> Workload {
    Workload {
        kind: "iozone",
        params: serde_json::json!({"file_size": "1m", "threads": 1}),
        policy,
    }
}

fn fdtree(policy: &'static str) -> Workload {
    Workload {
        policy,
        ..super::super::tests::fdtree()
    }
}

/// Short, noisy phases of `kind`'s metrics, five repetitions, on a machine with 1 MB of RAM
/// and a 1 GB/s device.
fn noisy(wl: &Workload) -> ReportData {
    default_report(study_of(
        wl,
        &TWO,
        5,
        &[
            ("ram_bytes", "1000000"),
            ("device_read_bytes_per_sec", "1000000000"),
        ],
        |c, rep| {
            let k = [1.0, 1.3, 0.7, 1.2, 0.8][rep as usize - 1] * (1.0 + c as f64);
            match wl.kind {
                "iozone" => vec![
                    Metric::new("write", "elapsed", Unit::Seconds, 0.1 * k),
                    Metric::new("write", "throughput", Unit::KiBPerSec, 1e5 * k),
                    Metric::new("read", "throughput", Unit::KiBPerSec, 5e6 * k),
                ],
                _ => vec![
                    Metric::new("file_create", "elapsed", Unit::Seconds, 0.1 * k),
                    Metric::new("file_create", "rate", Unit::FilesPerSec, 1e4 * k),
                ],
            }
        },
    ))
}

#[test]
fn an_fdtree_study_gets_tree_advice_and_no_page_cache_warning() {
    let r = noisy(&fdtree("cold"));
    no_warning(&r, WarningKind::CacheDataset);
    let short = only_of_kind(&r, WarningKind::TooShort);
    has(
        &short.advice,
        "more files or levels (files, levels in the study)",
    );
}

#[test]
fn an_iozone_phase_gets_no_tree_advice_and_one_page_cache_warning() {
    let r = noisy(&iozone("none"));
    let short = of_kind(&r, WarningKind::TooShort);
    assert!(!short.is_empty());
    for w in &short {
        lacks(&w.message, "levels");
        lacks(&w.message, "tree");
        has(&w.advice, "larger files (file_size in the study)");
    }
    // The data set (1 MiB) is under 2× RAM and the reads beat the device: one warning.
    let cache = only_of_kind(&r, WarningKind::CacheDataset);
    no_warning(&r, WarningKind::CacheDevice);
    has(
        &cache.message,
        "reads in 2 of 2 configurations are faster than the device",
    );
    assert!(cache.advice.starts_with("nothing drops the page cache"));
    assert!(cache.advice.contains("cache = \"cold\""));
}

/// A study under `policy`, which leaves nothing of the data cached when a repetition starts,
/// is told `statement` about its data set and never told to use a cold policy.
fn told_its_cache_starts_empty(policy: &'static str, statement: &str) {
    let r = noisy(&iozone(policy));
    let cache = of_kind(&r, WarningKind::CacheDataset);
    starts(&cache[0].advice, statement);
    assert!(!of_kind(&r, WarningKind::HighCv).is_empty());
    for w in &r.warnings {
        for text in [&w.message, &w.advice] {
            assert!(!text.contains("cache = \"cold\""), "{text}");
            assert!(!text.contains("cold cache policy"), "{text}");
            assert!(!text.contains("nothing drops"), "{text}");
        }
    }
}

#[test]
fn a_cold_study_is_not_told_to_use_a_cold_policy() {
    told_its_cache_starts_empty(
        "cold",
        "the cold policy drops the page cache before each repetition, but within a repetition a data set under 2× RAM is served from cache",
    );
    // The same study under no policy is told.
    let r = noisy(&iozone("none"));
    has(
        &of_kind(&r, WarningKind::HighCv)[0].advice,
        "cache = \"cold\"",
    );
}

#[test]
fn a_fresh_study_is_told_its_cache_starts_empty_and_not_to_use_cold() {
    // `fresh` makes a new file system before each repetition: nothing of the data is in the
    // page cache when one starts, as under `cold`.
    told_its_cache_starts_empty(
        "fresh",
        "the fresh policy makes a new file system before each repetition, but within a repetition a data set under 2× RAM is served from cache",
    );
}

#[test]
fn no_outliers_among_three_values() {
    // [100, 100.2, 103]: three values are too few to judge one against the others.
    let r = default_report(study_of(&fdtree("cold"), &TWO[..1], 3, &[], |_, rep| {
        let v = [100.0, 100.2, 103.0][rep as usize - 1];
        vec![Metric::new("file_create", "rate", Unit::FilesPerSec, v)]
    }));
    assert!(r.workloads[0].stats[0].outliers.is_empty());
    no_warning(&r, WarningKind::Outlier);
}

#[test]
fn intervals_of_positive_quantities_stay_above_zero() {
    // A spread the Student-t interval cannot hold: [100, 5000, 200] files/s.
    let r = default_report(study_of(&fdtree("cold"), &TWO[..1], 3, &[], |_, rep| {
        let v = [100.0, 5000.0, 200.0][rep as usize - 1];
        vec![
            Metric::new("file_create", "rate", Unit::FilesPerSec, v),
            Metric::new("file_create", "cpu", Unit::Percent, v / 100.0),
        ]
    }));
    let rate = r.workloads[0].stat(0, "file_create", "rate").unwrap();
    assert_eq!(rate.summary.ci95_method, IntervalMethod::LogT);
    assert!(rate.summary.ci95.unwrap().0 > 0.0);
    // A percentage is a share (CPU use): positive too, never a negative bound.
    let cpu = r.workloads[0].stat(0, "file_create", "cpu").unwrap();
    assert_eq!(cpu.summary.ci95_method, IntervalMethod::LogT);
    assert!(cpu.summary.ci95.unwrap().0 > 0.0);
    let table = rendered(&r, Format::Table);
    has(
        &table,
        "Rate — mean ± sd, the 95% CI of the geometric mean (log scale) under it; n = 3 each",
    );
    let csv = rendered(&r, Format::Csv);
    assert!(csv.lines().next().unwrap().ends_with(",ci95_method,gmean"));
    assert!(csv.contains(",log_t,"), "{csv}");
}

#[test]
fn reports_group_warnings_unless_asked_for_all() {
    // Three noisy throughputs in two configurations: six warnings of one kind.
    let r = default_report(study_of(
        &iozone("warm"),
        &TWO,
        5,
        &[("ram_bytes", "1000000")],
        |c, rep| {
            let k = [1.0, 1.3, 0.7, 1.2, 0.8][rep as usize - 1] * (1.0 + c as f64);
            ["write", "rewrite", "read"]
                .iter()
                .map(|p| Metric::new(*p, "throughput", Unit::KiBPerSec, 1e5 * k))
                .collect()
        },
    ));
    let table = rendered(&r, Format::Table);
    let section = table.split("== Warnings ==").nth(1).unwrap();
    let section = section.split("== Repetitions ==").next().unwrap();
    let lines: Vec<&str> = section.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(lines.len() < r.warnings.len(), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- Coefficient of variation above 10% (")),
        "{lines:#?}"
    );
    let mut every = r.clone();
    every.options.warnings = WarningsMode::All;
    let table = rendered(&every, Format::Markdown);
    for w in &r.warnings {
        assert!(table.contains(&w.message), "{}", w.message);
    }
}

/// A dbench study of `levels` client counts on a machine whose fslab could use `cpus` CPUs.
fn clients_study(levels: &[&[(&str, &str)]], cpus: &str) -> ReportData {
    let wl = Workload {
        kind: "dbench",
        params: serde_json::json!({"clients": 1, "duration": 10.0}),
        policy: "none",
    };
    default_report(study_of(
        &wl,
        levels,
        3,
        &[("cpus_usable", cpus)],
        |c, rep| {
            let v = 100.0 * (1.0 + c as f64) + rep as f64;
            vec![Metric::new("total", "throughput", Unit::MBPerSec, v)]
        },
    ))
}

#[test]
fn more_clients_than_cpus_is_said_once_naming_the_configurations() {
    let levels: [&[(&str, &str)]; 3] = [
        &[("clients", "1")],
        &[("clients", "4")],
        &[("clients", "16")],
    ];
    let r = clients_study(&levels, "2");
    let m = &only_of_kind(&r, WarningKind::Oversubscribed).message;
    assert!(m.contains("clients=4, clients=16"), "{m}");
    assert!(!m.contains("clients=1,"), "{m}");
    has(
        m,
        "up to 16 workers on 2 CPUs: oversubscribed, the result measures scheduling as much as the file system",
    );
    has(m, "use at most 2 clients or threads per host");
    // Enough CPUs: nothing to say.
    let r = clients_study(&levels, "16");
    no_warning(&r, WarningKind::Oversubscribed);
}
