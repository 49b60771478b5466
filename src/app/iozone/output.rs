//! Output helpers of `fslab iozone`: IOzone's opening lines, reading rates back from metrics,
//! IOzone's throughput-mode lines, the sweep summary table and the warnings.

use super::Setup;
use crate::cli::IozoneArgs;
use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::report::verdict::{fmt_interval, fmt_opt};
use crate::stats::Thresholds;
use crate::workload::iozone::sweep::Point;
use crate::workload::iozone::{self, report, throughput, Test};
use std::collections::BTreeMap;

pub(super) fn rate_of(m: &[Metric], t: Test) -> u64 {
    get(m, t.phase(), "throughput") as u64
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
        for t in Test::ALL {
            let is_rate = |x: &&Metric| x.phase == t.phase() && x.name == "throughput";
            let xs: Vec<f64> = r
                .iter()
                .filter_map(|m| m.iter().find(is_rate))
                .map(|x| x.value)
                .collect();
            if !xs.is_empty() {
                v.insert((*p, t), (xs.iter().sum::<f64>() / xs.len() as f64) as u64);
            }
        }
    }
    v
}

/// The summary of a sweep with `--repeat`: one row per point and test, each test's rates in
/// the one unit that suits its typical mean over the points (`GiB/s`, `MiB/s`), as every
/// other fslab table prints them, so a test's rows compare at a glance.
pub(super) fn sweep_table(points: &[Point], sums: &[Vec<MetricSummary>]) -> String {
    use comfy_table::{presets, Cell, CellAlignment, Table};
    let mut scales: BTreeMap<&str, crate::units::Scale> = BTreeMap::new();
    for sum in sums {
        for m in sum.iter().filter(|m| m.name == "throughput") {
            scales.entry(m.phase.as_str()).or_insert_with(|| {
                m.unit.scale_for(
                    sums.iter()
                        .flatten()
                        .filter(|o| o.name == "throughput" && o.phase == m.phase)
                        .map(|o| o.summary.mean),
                )
            });
        }
    }
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "kB", "reclen", "test", "unit", "mean", "sd", "95% CI", "min", "max", "cv", "n",
    ]);
    let mut log = false;
    for (p, sum) in points.iter().zip(sums) {
        for m in sum.iter().filter(|m| m.name == "throughput") {
            let s = &m.summary;
            log |= s.ci95_method == crate::stats::IntervalMethod::LogT;
            let sc = scales
                .get(m.phase.as_str())
                .copied()
                .unwrap_or_else(|| m.unit.scale(s.mean));
            let r = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
            t.add_row(vec![
                r(p.file_kib.to_string()),
                r((p.record / 1024).to_string()),
                Cell::new(&m.phase),
                Cell::new(if sc.label.is_empty() {
                    m.unit.as_str()
                } else {
                    sc.label
                }),
                r(sc.num(s.mean)),
                r(fmt_opt(s.sd, &sc)),
                r(fmt_interval(s.ci95, &sc)),
                r(sc.num(s.min)),
                r(sc.num(s.max)),
                r(s.cv
                    .map(|c| format!("{:.1}%", c * 100.0))
                    .unwrap_or_else(|| "-".into())),
                r(s.n.to_string()),
            ]);
        }
    }
    if log {
        format!("{t}\n95% CI of rates: of the geometric mean, on the log scale")
    } else {
        t.to_string()
    }
}

/// Each point's summary over its repetitions, and the run's warnings: the cache warning (if
/// any) first, then too-short tests and high variation (`--min-phase`).
pub(crate) fn summaries_and_warnings(
    s: &Setup,
    reps: &[Vec<Vec<Metric>>],
    min_phase: f64,
) -> (Vec<Vec<MetricSummary>>, Vec<String>) {
    let sums: Vec<Vec<MetricSummary>> =
        reps.iter().map(|r| runsummary::summarize_reps(r)).collect();
    let thresholds = Thresholds {
        min_phase_seconds: min_phase,
        ..Thresholds::default()
    };
    let mut warns = warnings(&s.plan.points, &sums, &thresholds);
    // Said once, with the other warnings at the end of the output (and in the JSON).
    if let Some(w) = super::cache_warning(&s.base, &s.plan) {
        warns.insert(0, w);
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

/// IOzone's opening lines: the version, the target, the options in IOzone's words, the sizes
/// and the command line.
pub(crate) fn splash(a: &IozoneArgs, s: &Setup) -> String {
    let b = &s.base;
    let mut out = format!(
        "\tfslab {} iozone (IOzone 3.414 semantics) on {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        s.target.dir.display(),
        s.target.fs_type.as_deref().unwrap_or("unknown fs")
    );
    let mut line = |t: String| {
        out.push('\t');
        out.push_str(&t);
        out.push('\n');
    };
    let verify = format!(
        "Verify Mode. Pattern {:02x}{:02x}{:02x}{:02x}",
        b.pattern, b.pattern, b.pattern, b.pattern
    );
    // The options in effect, in IOzone's order and words.
    for (on, said) in [
        (a.auto || s.plan.sweep, "Auto Mode"),
        (a.no_crossover, "Cross over of record size disabled."),
        (b.direct, "O_DIRECT feature enabled"),
        (
            b.huge_buffer,
            "Record buffer in a transparent huge page (--huge-buffer)",
        ),
        (b.close, "Include close in write timing"),
        (b.fsync, "Include fsync in write timing"),
        (b.osync, "SYNC Mode. "),
        (b.verify, verify.as_str()),
        (b.keep, "Setting no_unlink"),
        (!b.stonewall && b.throughput, "Stonewall disabled"),
    ] {
        if on {
            line(said.into());
        }
    }
    if !s.plan.sweep {
        let p = s.plan.points[0];
        line(format!("File size set to {} kB", p.file_kib));
        line(format!("Record Size {} kB", p.record / 1024));
    }
    line(format!("Command line used: {}", crate::app::command_line()));
    line("Output is in kBytes/sec".into());
    if b.throughput {
        let p = s.plan.points[0];
        line(format!("Throughput test with {} threads", b.threads));
        line(format!(
            "Each thread writes a {} kByte file in {} kByte records",
            p.file_kib,
            p.record / 1024
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Unit;

    #[test]
    fn the_sweep_summary_is_scaled_per_test_like_every_table() {
        let rep = |w: f64, r: f64| {
            vec![
                Metric::new("write", "throughput", Unit::KiBPerSec, w),
                Metric::new("rewrite", "throughput", Unit::KiBPerSec, r),
            ]
        };
        let points = [Point::new(1024, 65536), Point::new(2048, 65536)];
        let sums = vec![
            runsummary::summarize_reps(&[rep(4_000_000.0, 900.0), rep(4_400_000.0, 1100.0)]),
            runsummary::summarize_reps(&[rep(5_000_000.0, 1000.0), rep(5_400_000.0, 1000.0)]),
        ];
        let t = sweep_table(&points, &sums);
        // 4,200,000 KiB/s is 4.01 GiB/s; the rewrite's 1000 KiB/s stays in KiB/s (its own
        // scale); the raw 4200000 is nowhere.
        assert!(t.contains("GiB/s") && t.contains("4.01"), "{t}");
        assert!(t.contains("KiB/s"), "{t}");
        assert!(!t.contains("4200000"), "{t}");
        let write_rows: Vec<&str> = t.lines().filter(|l| l.contains(" write ")).collect();
        assert_eq!(write_rows.len(), 2);
        assert!(write_rows.iter().all(|l| l.contains("GiB/s")), "{t}");
    }
}
