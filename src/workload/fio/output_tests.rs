//! Parse-back: what fslab stores equals fio's own JSON, for recorded output of Debian's fio
//! 3.33 (json+ and json) and a hand-written document in the layout of fio 3.42's `stat.c`.
//! The expected numbers are read from the documents here with plain `serde_json`, not
//! through the parser under test.

use super::*;
use serde_json::Value;

const MIXED_333: &str = include_str!("../../../tests/fixtures/fio/fio-3.33-mixed.json+.json");
const MIXED_333_PLAIN: &str = include_str!("../../../tests/fixtures/fio/fio-3.33-mixed.json.json");
const NUMJOBS_333: &str = include_str!("../../../tests/fixtures/fio/fio-3.33-numjobs.json+.json");
const HAND_342: &str = include_str!("../../../tests/fixtures/fio/fio-3.42-handwritten.json+.json");

fn get(ms: &[Metric], phase: &str, name: &str) -> f64 {
    ms.iter()
        .find(|m| m.phase == phase && m.name == name)
        .unwrap_or_else(|| panic!("no {phase}.{name} among {ms:?}"))
        .value
}

fn has(ms: &[Metric], phase: &str, name: &str) -> bool {
    ms.iter().any(|m| m.phase == phase && m.name == name)
}

/// Every stored number of every (single-entry) job and direction against the document.
fn stored_equals_fio(text: &str) -> usize {
    let doc: Value = serde_json::from_str(text).unwrap();
    let run = parse(text).unwrap();
    let ms = run.metrics(&|_, _| false);
    let mut checked = 0;
    for j in doc["jobs"].as_array().unwrap() {
        let job = j["jobname"].as_str().unwrap();
        for dir in ["read", "write", "trim", "mixed"] {
            let d = &j[dir];
            if d.is_null() || d["total_ios"].as_u64() == Some(0) {
                assert!(
                    !has(&ms, &phase(job, dir), "iops"),
                    "{job}/{dir} did no I/O"
                );
                continue;
            }
            let ph = phase(job, dir);
            // Each stored metric is fio's key over a scale (bw_bytes in KiB/s, runtime in s).
            for (metric, key, scale) in [
                ("iops", "iops", 1.0),
                ("throughput", "bw_bytes", 1024.0),
                ("elapsed", "runtime", 1e3),
                ("io_bytes", "io_bytes", 1.0),
                ("total_ios", "total_ios", 1.0),
            ] {
                let fio = d[key].as_f64().unwrap();
                assert_eq!(get(&ms, &ph, metric), fio / scale, "{ph} {metric}");
            }
            // fio's `bw` is the same figure in whole KiB/s.
            assert_eq!(
                (get(&ms, &ph, "throughput")).floor(),
                d["bw"].as_f64().unwrap(),
                "{ph}"
            );
            for lat in ["slat", "clat", "lat"] {
                let l = &d[format!("{lat}_ns")];
                if l["N"].as_u64() == Some(0) {
                    assert!(!has(&ms, &ph, &format!("{lat}_mean")), "{ph} {lat}");
                    continue;
                }
                for stat in ["mean", "max"] {
                    let stored = get(&ms, &ph, &format!("{lat}_{stat}"));
                    assert_eq!(stored, l[stat].as_f64().unwrap() / 1e6, "{ph} {lat}_{stat}");
                }
                let Some(p) = l["percentile"].as_object() else {
                    continue;
                };
                for (key, name) in [
                    ("50.000000", "p50"),
                    ("90.000000", "p90"),
                    ("99.000000", "p99"),
                    ("99.900000", "p99_9"),
                    ("99.990000", "p99_99"),
                ] {
                    if let Some(v) = p.get(key) {
                        let stored = get(&ms, &ph, &format!("{lat}_{name}"));
                        assert_eq!(stored, v.as_f64().unwrap() / 1e6, "{ph} {lat} {key}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(get(&ms, job, "usr_cpu"), j["usr_cpu"].as_f64().unwrap());
        assert_eq!(get(&ms, job, "sys_cpu"), j["sys_cpu"].as_f64().unwrap());
    }
    for d in doc["disk_util"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        assert_eq!(get(&ms, "disk_util", name), d["util"].as_f64().unwrap());
    }
    checked
}

#[test]
fn fio_3_33_json_plus_is_stored_as_fio_wrote_it() {
    let run = parse(MIXED_333).unwrap();
    assert_eq!(run.version, "fio-3.33");
    let names: Vec<&str> = run.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["randwrite", "seqread"]);
    let dirs: Vec<&str> = run.jobs[0].dirs.iter().map(|d| d.dir.as_str()).collect();
    assert_eq!(dirs, ["write", "sync"], "fsync=1 gives a sync direction");
    assert!(stored_equals_fio(MIXED_333) >= 10);
    let ms = run.metrics(&|_, _| false);
    assert!(get(&ms, "randwrite/sync", "total_ios") > 0.0);
    assert!(has(&ms, "randwrite/sync", "lat_mean"));
}

#[test]
fn fio_3_33_plain_json_has_no_histograms_but_the_same_numbers() {
    assert!(stored_equals_fio(MIXED_333_PLAIN) >= 10);
    let run = parse(MIXED_333_PLAIN).unwrap();
    assert!(run.histograms().unwrap().is_empty());
}

#[test]
fn fio_3_42_layout_is_read_too() {
    let run = parse(HAND_342).unwrap();
    assert_eq!(run.version, "fio-3.42");
    assert!(stored_equals_fio(HAND_342) >= 10);
    let ms = run.metrics(&|_, _| false);
    // unified_rw_reporting=mixed: one `mixed` direction; per-priority stats ignored.
    assert_eq!(get(&ms, "mix/mixed", "total_ios"), 1000.0);
    assert_eq!(get(&ms, "seqwrite/sync", "total_ios"), 144.0);
    assert_eq!(get(&ms, "disk_util", "loop7"), 91.5);
    let mut named = run.clone();
    named.name_data_disk("loop7");
    let ms = named.metrics(&|_, _| false);
    assert_eq!(get(&ms, "disk_util", DATA_DISK), 91.5);
    assert!(!has(&ms, "disk_util", "loop7"));
    let hists = run.histograms().unwrap();
    let names: Vec<(&str, &str)> = hists
        .iter()
        .map(|h| (h.phase.as_str(), h.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("seqwrite/write", "clat_ns"),
            ("seqwrite/sync", "lat_ns"),
            ("mix/mixed", "clat_ns")
        ]
    );
}

#[test]
fn histograms_hold_every_completion_and_give_fios_percentiles() {
    for text in [MIXED_333, HAND_342] {
        let doc: Value = serde_json::from_str(text).unwrap();
        let run = parse(text).unwrap();
        for j in &run.jobs {
            for d in j.dirs.iter().filter(|d| d.dir != "sync") {
                let h = d.clat.hdr().unwrap().unwrap();
                let fio = &doc["jobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["jobname"] == j.name.as_str())
                    .unwrap()[&d.dir]["clat_ns"];
                assert_eq!(h.len(), fio["N"].as_u64().unwrap(), "{}", j.name);
                for (p, key) in [(50.0, "50.000000"), (99.0, "99.000000")] {
                    let want = fio["percentile"][key].as_f64().unwrap();
                    let got = h.value_at_percentile(p) as f64;
                    // Same bucket as fio's, within the HDR histogram's 3 significant digits.
                    assert!(
                        (got - want).abs() <= want * 0.002,
                        "{} {} p{p}: HDR {got} vs fio {want}",
                        j.name,
                        d.dir
                    );
                }
            }
        }
    }
}

#[test]
fn entries_of_one_job_are_combined_like_group_reporting() {
    let doc: Value = serde_json::from_str(NUMJOBS_333).unwrap();
    let entries = doc["jobs"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "numjobs=2 without group_reporting");
    let run = parse(NUMJOBS_333).unwrap();
    assert_eq!(run.jobs.len(), 1);
    assert_eq!(run.jobs[0].entries, 2);
    let ms = run.metrics(&|_, _| false);
    let sum = |k: &str| {
        entries
            .iter()
            .map(|e| e["read"][k].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(get(&ms, "rr/read", "iops"), sum("iops"));
    assert_eq!(get(&ms, "rr/read", "throughput") * 1024.0, sum("bw_bytes"));
    assert_eq!(get(&ms, "rr/read", "total_ios"), sum("total_ios"));
    let n = |e: &Value| e["read"]["clat_ns"]["N"].as_f64().unwrap();
    let mean = entries
        .iter()
        .map(|e| n(e) * e["read"]["clat_ns"]["mean"].as_f64().unwrap())
        .sum::<f64>()
        / entries.iter().map(n).sum::<f64>();
    assert!((get(&ms, "rr/read", "clat_mean") - mean / 1e6).abs() < 1e-12);
    // Percentiles of the merged bins: between the entries' own.
    let p99 = get(&ms, "rr/read", "clat_p99") * 1e6;
    let own: Vec<f64> = entries
        .iter()
        .map(|e| {
            e["read"]["clat_ns"]["percentile"]["99.000000"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let (lo, hi) = (own[0].min(own[1]), own[0].max(own[1]));
    assert!(p99 >= lo && p99 <= hi, "{p99} not in {lo}..{hi}");
}

#[test]
fn bin_percentiles_follow_fios_rule() {
    let bins = [(10, 1), (20, 1), (30, 8)];
    assert_eq!(bin_percentile(&bins, 10.0), Some(10));
    assert_eq!(bin_percentile(&bins, 20.0), Some(20));
    assert_eq!(bin_percentile(&bins, 20.1), Some(30));
    assert_eq!(bin_percentile(&[], 50.0), None);
}

#[test]
fn large_sequential_directions_are_marked_and_dots_leave_phase_names() {
    let run = parse(MIXED_333).unwrap();
    let ms = run.metrics(&|job, dir| job == "seqread" && dir == "read");
    assert!(has(&ms, "seqread/read", LARGE_SEQUENTIAL));
    assert!(!has(&ms, "randwrite/write", LARGE_SEQUENTIAL));
    assert_eq!(phase("job.1", "read"), "job_1/read");
}

#[test]
fn text_before_the_document_is_skipped_and_no_document_is_an_error() {
    let noisy = format!("fio: some warning\n{MIXED_333}");
    assert_eq!(parse(&noisy).unwrap(), parse(MIXED_333).unwrap());
    let e = parse("fio: nothing\n").unwrap_err().to_string();
    assert!(e.contains("no JSON"), "{e}");
    let e = parse("{\"fio version\": \"x\"}").unwrap_err().to_string();
    assert!(e.contains("'jobs'"), "{e}");
}
