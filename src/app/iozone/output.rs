//! Output helpers of `fslab iozone`: reading rates back from metrics, IOzone's throughput-mode
//! lines, the sweep summary table and the warnings.

use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::stats::Thresholds;
use crate::workload::iozone::sweep::Point;
use crate::workload::iozone::{self, report, throughput, Test};
use std::collections::BTreeMap;

pub(super) fn rate_of(m: &[Metric], t: Test) -> u64 {
    m.iter()
        .find(|x| x.phase == t.phase() && x.name == "throughput")
        .map_or(0, |x| x.value as u64)
}

pub(crate) fn get(m: &[Metric], phase: &str, name: &str) -> f64 {
    m.iter()
        .find(|x| x.phase == phase && x.name == name)
        .map_or(0.0, |x| x.value)
}

pub(crate) fn throughput_lines(m: &[Metric], workers: usize, tests: &[u8]) -> String {
    let mut s = String::new();
    for t in throughput::phases(tests) {
        let ph = t.phase();
        let (title, noun) = throughput::titles(t);
        s.push_str(&report::throughput_text(&report::ThroughputLines {
            title,
            noun,
            workers,
            children: get(m, ph, "children_sum"),
            parent: get(m, ph, "parent"),
            min: get(m, ph, "min_worker"),
            max: get(m, ph, "max_worker"),
            avg: get(m, ph, "avg_worker"),
            min_xfer: get(m, ph, "min_xfer") / 1024.0,
            aggregate: get(m, ph, "aggregate"),
        }));
        s.push('\n');
    }
    s
}

/// Mean IOzone rate per (point, test) over the repetitions, truncated as IOzone prints.
pub(super) fn means(points: &[Point], reps: &[Vec<Vec<Metric>>]) -> BTreeMap<(Point, Test), u64> {
    let mut v = BTreeMap::new();
    for (p, r) in points.iter().zip(reps) {
        if r.is_empty() {
            continue;
        }
        for t in Test::ALL {
            let xs: Vec<f64> = r
                .iter()
                .filter_map(|m| {
                    m.iter()
                        .find(|x| x.phase == t.phase() && x.name == "throughput")
                        .map(|x| x.value)
                })
                .collect();
            if !xs.is_empty() {
                v.insert((*p, t), (xs.iter().sum::<f64>() / xs.len() as f64) as u64);
            }
        }
    }
    v
}

/// Summary of a sweep: one row per (point, test) with the throughput statistics.
pub(super) fn sweep_table(points: &[Point], sums: &[Vec<MetricSummary>]) -> String {
    use comfy_table::{presets, Cell, CellAlignment, Table};
    let num = crate::units::fmt_num;
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "kB",
        "reclen",
        "test",
        "mean kB/s",
        "sd",
        "95% CI",
        "min",
        "max",
        "cv",
        "n",
    ]);
    for (p, sum) in points.iter().zip(sums) {
        for m in sum.iter().filter(|m| m.name == "throughput") {
            let s = &m.summary;
            let r = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
            t.add_row(vec![
                r(p.file_kib.to_string()),
                r((p.record / 1024).to_string()),
                Cell::new(&m.phase),
                r(num(s.mean)),
                r(s.sd.map(num).unwrap_or_else(|| "-".into())),
                r(s.ci95
                    .map(|(a, b)| format!("{} – {}", num(a), num(b)))
                    .unwrap_or_else(|| "-".into())),
                r(num(s.min)),
                r(num(s.max)),
                r(s.cv
                    .map(|c| format!("{:.1}%", c * 100.0))
                    .unwrap_or_else(|| "-".into())),
                r(s.n.to_string()),
            ]);
        }
    }
    t.to_string()
}

/// Each point's summary over its repetitions, and the run's warnings: the cache warning (if
/// any) first, then too-short tests and high variation (`--min-phase`).
pub(crate) fn summaries_and_warnings(
    points: &[Point],
    reps: &[Vec<Vec<Metric>>],
    min_phase: f64,
    cache_warn: Option<&String>,
) -> (Vec<Vec<MetricSummary>>, Vec<String>) {
    let sums: Vec<Vec<MetricSummary>> =
        reps.iter().map(|r| runsummary::summarize_reps(r)).collect();
    let thresholds = Thresholds {
        min_phase_seconds: min_phase,
        ..Thresholds::default()
    };
    let mut warns = warnings(points, &sums, &thresholds);
    if let Some(w) = cache_warn {
        warns.insert(0, w.clone());
    }
    (sums, warns)
}

/// Warnings: per point for one point; for a sweep, short tests are counted in one line.
pub(crate) fn warnings(
    points: &[Point],
    sums: &[Vec<MetricSummary>],
    t: &Thresholds,
) -> Vec<String> {
    use crate::stats::Warning;
    let mut short = 0;
    let mut total = 0;
    let mut out = Vec::new();
    let mut swept = Vec::new();
    for (p, sum) in points.iter().zip(sums) {
        for w in runsummary::warnings(&crate::app::finish::engine_only(sum), t) {
            match w {
                Warning::TooShort { .. } => short += 1,
                other if points.len() == 1 => out.push(other.to_string()),
                other => swept.push((
                    format!("{}k/{}", p.file_kib, iozone::fmt_record(p.record)),
                    other,
                )),
            }
        }
        total += sum.iter().filter(|m| m.name == "elapsed").count();
    }
    // A sweep's variation in one line, not one per point and test.
    out.extend(runsummary::point_warning_lines(&swept));
    if short > 0 {
        out.insert(
            0,
            format!(
                "{short} of {total} timed tests took less than {} s on average: too short to trust; use larger files (-s, -n/-g)",
                t.min_phase_seconds
            ),
        );
    }
    out
}
