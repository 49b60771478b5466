//! The summary printed after an engine command (`fslab fdtree --repeat N`) and by
//! `fslab show`: one row per metric with mean, standard deviation, 95% interval (of the
//! geometric mean, on the log scale, for quantities that cannot be negative), min, max,
//! coefficient of variation and n, followed by the warnings — [`warning_lines`] words them
//! for the engine and groups them as reports do.

use super::advice::{self, Origin, Policy};
use super::draft::Draft;
use super::model::{ReportWarning, WarningKind};
use super::verdict::{fmt_interval, fmt_opt};
use crate::metric::{Metric, Unit};
use crate::stats::interval::INTERVAL_MIN_N;
use crate::stats::{self, metric_warnings, Quantity, Summary, Thresholds, Warning};
use crate::vocab::CachePolicy;
use crate::workload::WorkloadKind;
use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};
use serde::Serialize;

/// One metric summarized over repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct MetricSummary {
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// Statistics.
    pub summary: Summary,
    /// The raw values in repetition order.
    pub values: Vec<f64>,
}

/// Group metrics of several repetitions by `phase.name`, in order of first appearance.
pub fn summarize_reps(reps: &[Vec<Metric>]) -> Vec<MetricSummary> {
    let mut groups: Vec<((String, String, Unit), Vec<f64>)> = Vec::new();
    for m in reps.iter().flatten() {
        match groups
            .iter_mut()
            .find(|((p, n, _), _)| *p == m.phase && *n == m.name)
        {
            Some((_, v)) => v.push(m.value),
            None => groups.push(((m.phase.clone(), m.name.clone(), m.unit), vec![m.value])),
        }
    }
    groups
        .into_iter()
        .filter_map(|((phase, name, unit), v)| {
            // No stored quantity is negative, CPU shares included: no interval reaches below 0.
            stats::summarize_as(&v, Quantity::Positive).map(|summary| MetricSummary {
                phase,
                name,
                unit,
                summary,
                values: v,
            })
        })
        .collect()
}

/// Warnings for a set of summaries: short phases (from their `elapsed` metric) and high
/// variation of each phase's headline metric (`rate`, else `throughput`), once per phase, in
/// words that fit any engine. [`warning_lines`] gives the engine's own advice, grouped.
pub fn warnings(sums: &[MetricSummary], t: &Thresholds) -> Vec<Warning> {
    let has = |phase: &str, name: &str| sums.iter().any(|m| m.phase == phase && m.name == name);
    let mut out = Vec::new();
    for m in sums {
        let headline = m.name == "rate" || (m.name == "throughput" && !has(&m.phase, "rate"));
        if m.name == "elapsed" {
            out.extend(
                metric_warnings(&m.phase, &m.name, true, &m.summary, t)
                    .into_iter()
                    .filter(|w| matches!(w, Warning::TooShort { .. })),
            );
        } else if headline {
            out.extend(metric_warnings(&m.phase, &m.name, false, &m.summary, t));
        }
    }
    out
}

/// The warning lines of an engine command's run (cache policy `none`, or the engine's own
/// cache dropping from `params`): short phases and high variation of each phase's headline
/// metric ([`super::headline::pick`]), advised in the engine's flags (`-f, -l` for fdtree,
/// `-s` for IOzone, `-t` for dbench), one line per kind with the phases named, as reports
/// group them.
pub fn warning_lines(
    kind: Option<WorkloadKind>,
    params: &serde_json::Value,
    sums: &[MetricSummary],
    t: &Thresholds,
) -> Vec<String> {
    let policy = Policy::of(Some(CachePolicy::None), params);
    let caps = kind.map(WorkloadKind::caps);
    let mut out: Vec<ReportWarning> = Vec::new();
    for phase in super::distinct(sums.iter().map(|m| m.phase.as_str())) {
        let of_phase: Vec<&MetricSummary> = sums.iter().filter(|m| m.phase == phase).collect();
        let names: Vec<(&str, Unit)> = of_phase.iter().map(|m| (m.name.as_str(), m.unit)).collect();
        let headline = super::headline::pick(caps.as_ref(), phase, &names);
        // A phase too short to trust: its time's variation is the headline's (advised once).
        let short = of_phase
            .iter()
            .any(|m| m.name == "elapsed" && stats::too_short(&m.summary, t));
        for m in of_phase {
            let key = format!("{phase}.{}", m.name);
            let s = &m.summary;
            if m.name == "elapsed" && short {
                out.push(
                    Draft::new(WarningKind::TooShort, None, None, Some(key.clone())).finish(
                        phase.to_string(),
                        m.unit.fmt(s.mean),
                        match s.cv.filter(|_| s.n >= stats::warnings::VARIATION_MIN_N) {
                            Some(cv) => format!(
                                "took {} on average, under {} s, and varied by {:.1}%: too short to trust",
                                m.unit.fmt(s.mean),
                                t.min_phase_seconds,
                                cv * 100.0
                            ),
                            None => format!(
                                "took {} on average, under {} s, in {} repetition(s): {}; too short to trust",
                                m.unit.fmt(s.mean),
                                t.min_phase_seconds,
                                s.n,
                                stats::warnings::TOO_FEW_TO_TELL
                            ),
                        },
                        advice::too_short(kind, Origin::Run),
                    ),
                );
            }
            match stats::high_variation(s, t) {
                Some((cv, at_least)) if Some(m.name.as_str()) == headline && !short => out.push(
                    Draft::new(WarningKind::HighCv, None, None, Some(key.clone())).finish(
                        key,
                        format!("{:.1}%", cv * 100.0),
                        stats::variation_text(cv, at_least, t.max_cv),
                        advice::high_cv(policy, Origin::Run),
                    ),
                ),
                _ => {}
            }
        }
    }
    super::warngroups::group(&out, t)
        .into_iter()
        .map(|g| g.text)
        .collect()
}

/// The warnings of a sweep's points (`fslab iozone -a`: 126 points × 13 tests), one line
/// per kind instead of one per point and test: how many, the worst few with their point, and
/// what to do once. `items` are (point label, warning) in sweep order.
pub fn point_warning_lines(items: &[(String, Warning)]) -> Vec<String> {
    let mut varied: Vec<(&str, &str, f64, f64)> = Vec::new();
    let mut out = Vec::new();
    for (point, w) in items {
        match w {
            Warning::HighVariation {
                metric,
                cv,
                threshold,
                ..
            } => varied.push((point, metric, *cv, *threshold)),
            other => out.push(format!("{point}: {other}")),
        }
    }
    if let Some(&(_, _, _, threshold)) = varied.first() {
        let mut worst = varied.clone();
        worst.sort_by(|a, b| b.2.total_cmp(&a.2));
        let listed: Vec<String> = worst
            .iter()
            .take(super::warngroups::LISTED)
            .map(|(p, m, cv, _)| format!("{p} {m} ({:.1}%)", cv * 100.0))
            .collect();
        let points = {
            let mut p: Vec<&str> = varied.iter().map(|v| v.0).collect();
            p.dedup();
            p.len()
        };
        let more = varied.len().saturating_sub(listed.len());
        out.push(format!(
            "Coefficient of variation above {:.0}% in {} results at {points} points, the worst: {}{}; run more repetitions or quiet the machine",
            threshold * 100.0,
            varied.len(),
            listed.join("; "),
            if more > 0 {
                format!(" …and {more} more")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// The summary as a text table.
pub fn render_table(sums: &[MetricSummary]) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    // Text reports fit 100 columns: a wide row wraps its widest cells.
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(super::textfit::DEFAULT_WIDTH as u16);
    t.set_header(vec![
        "phase", "metric", "unit", "mean", "sd", "95% CI", "min", "max", "cv", "n",
    ]);
    for m in sums {
        let s = &m.summary;
        // Each row in the unit that suits its mean: 1.48 ms, not 0.001481 s.
        let sc = m.unit.scale(s.mean);
        let ci = fmt_interval(s.ci95, &sc);
        let cv =
            s.cv.map(|c| format!("{:.1}%", c * 100.0))
                .unwrap_or_else(|| "-".into());
        t.add_row(vec![
            Cell::new(&m.phase),
            Cell::new(&m.name),
            Cell::new(if sc.label.is_empty() {
                m.unit.as_str()
            } else {
                sc.label
            }),
            Cell::new(sc.num(s.mean)).set_alignment(CellAlignment::Right),
            Cell::new(fmt_opt(s.sd, &sc)).set_alignment(CellAlignment::Right),
            Cell::new(ci).set_alignment(CellAlignment::Right),
            Cell::new(sc.num(s.min)).set_alignment(CellAlignment::Right),
            Cell::new(sc.num(s.max)).set_alignment(CellAlignment::Right),
            Cell::new(cv).set_alignment(CellAlignment::Right),
            Cell::new(s.n).set_alignment(CellAlignment::Right),
        ]);
    }
    // Two spaces between columns, not three.
    for c in t.column_iter_mut().skip(1) {
        c.set_padding((0, 1));
    }
    let mut out = t.to_string();
    if sums
        .iter()
        .any(|m| m.summary.ci95.is_some() && m.summary.ci95_method == stats::IntervalMethod::LogT)
    {
        out.push_str("\n95% CI of times, rates, sizes, counts and shares: of the geometric mean, on the log scale");
    }
    if sums
        .iter()
        .any(|m| (2..INTERVAL_MIN_N).contains(&m.summary.n))
    {
        out.push_str(&format!(
            "\n95% CI: none from fewer than {INTERVAL_MIN_N} repetitions; min and max are beside it"
        ));
    }
    out
}

/// The summary as JSON: every metric with unit, statistics and raw values.
pub fn to_json(sums: &[MetricSummary]) -> serde_json::Value {
    serde_json::Value::Array(
        sums.iter()
            .map(|m| {
                serde_json::json!({
                    "phase": m.phase,
                    "metric": m.name,
                    "unit": m.unit.as_str(),
                    "n": m.summary.n,
                    "mean": m.summary.mean,
                    "sd": m.summary.sd,
                    "median": m.summary.median,
                    "min": m.summary.min,
                    "max": m.summary.max,
                    "cv": m.summary.cv,
                    "ci95": m.summary.ci95.map(|(a, b)| [a, b]),
                    "ci95_method": m.summary.ci95_method.as_str(),
                    "gmean": m.summary.gmean,
                    "values": m.values,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{ends, starts};

    /// The summaries of one repetition per value, `rep(value)` its metrics.
    fn summarized(values: &[f64], rep: impl Fn(f64) -> Vec<Metric>) -> Vec<MetricSummary> {
        summarize_reps(&values.iter().map(|&v| rep(v)).collect::<Vec<_>>())
    }

    fn three() -> Vec<MetricSummary> {
        summarized(&[0.0, 1.0, 2.0], |i| {
            let (elapsed, rate) = (0.5 + i * 0.01, 100.0 + i);
            vec![
                Metric::new("dir_create", "elapsed", Unit::Seconds, elapsed),
                Metric::new("dir_create", "rate", Unit::DirsPerSec, rate),
            ]
        })
    }

    #[test]
    fn groups_by_metric_in_order() {
        let s = three();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "elapsed");
        assert_eq!(s[1].values, vec![100.0, 101.0, 102.0]);
        assert_eq!(s[1].summary.mean, 101.0);
    }

    #[test]
    fn table_and_json_carry_the_numbers() {
        let s = three();
        let t = render_table(&s);
        assert!(t.contains("dir_create"));
        assert!(t.contains("101.0"), "{t}");
        let j = to_json(&s);
        assert_eq!(j[1]["unit"], "dirs/s");
        assert_eq!(j[1]["n"], 3);
    }

    #[test]
    fn a_short_phase_warns_when_its_time_varies() {
        // 0.5 s repeating within 2%: timed well enough.
        let s = three();
        assert!(warnings(&s, &Thresholds::default()).is_empty());
        // The same mean varying by 40%: too short to trust.
        let noisy = summarized(&[0.3, 0.5, 0.7], |e| {
            vec![Metric::new("dir_create", "elapsed", Unit::Seconds, e)]
        });
        let w = warnings(&noisy, &Thresholds::default());
        assert!(matches!(w.as_slice(), [Warning::TooShort { .. }]), "{w:?}");
    }

    #[test]
    fn intervals_of_positive_metrics_stay_positive_and_say_so() {
        // Rates of 100, 5000 and 200 dirs/s: the Student-t interval would start at -4800.
        let s = summarized(&[100.0, 5000.0, 200.0], |r| {
            vec![Metric::new("dir_create", "rate", Unit::DirsPerSec, r)]
        });
        assert!(s[0].summary.ci95.unwrap().0 > 0.0);
        let j = to_json(&s);
        assert_eq!(j[0]["ci95_method"], "log_t");
        assert!(j[0]["gmean"].as_f64().unwrap() > 0.0);
        assert!(render_table(&s).ends_with("of the geometric mean, on the log scale"));
    }

    #[test]
    fn two_repetitions_give_no_interval_and_cpu_shares_none_below_zero() {
        // `fslab fio --repeat 2`: a latency 14× apart printed `0.0000006940 – 214159036`, a
        // CPU share a negative bound (a Student-t interval with t(1) = 12.7).
        let rep = |lat: f64, cpu: f64| {
            vec![
                Metric::new("randread/read", "clat_mean", Unit::Millis, lat),
                Metric::new("randread", "sys_cpu", Unit::Percent, cpu),
            ]
        };
        let s = summarize_reps(&[rep(0.5, 3.0), rep(7.0, 9.0)]);
        assert!(s.iter().all(|m| m.summary.ci95.is_none()));
        let t = render_table(&s);
        ends(
            &t,
            "95% CI: none from fewer than 3 repetitions; min and max are beside it",
        );
        let negative = t
            .chars()
            .zip(t.chars().skip(1))
            .any(|(a, b)| a == '-' && b.is_ascii_digit());
        assert!(
            !negative && t.lines().all(|l| l.chars().count() <= 100),
            "{t}"
        );
        // Three repetitions of a share with a zero and a wide spread: an interval, never
        // below zero.
        let s = summarize_reps(&[rep(0.5, 0.0), rep(7.0, 40.0), rep(1.0, 2.0)]);
        let cpu = s.iter().find(|m| m.name == "sys_cpu").unwrap();
        assert_eq!(cpu.summary.ci95.unwrap().0, 0.0);
        let (lo, _) = s[0].summary.ci95.unwrap();
        assert!(lo > 0.0);
        assert!(!render_table(&s).contains("none from fewer"));
        let wide = summarized(&[0.4812345, 7.123456, 1.0098765], |k| {
            let job = "random-read-job/read";
            vec![
                Metric::new(job, "clat_mean", Unit::Millis, k),
                Metric::new(job, "throughput", Unit::KiBPerSec, 1e7 * k),
            ]
        });
        let t = render_table(&wide);
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
    }

    /// Four short, noisy phases of an engine run.
    fn noisy_reps(phases: &[&str], unit: Unit, name: &str) -> Vec<MetricSummary> {
        summarized(&[1.0, 2.0, 0.5], |k| {
            phases
                .iter()
                .flat_map(|p| {
                    [
                        Metric::new(*p, "elapsed", Unit::Seconds, 0.2 * k),
                        Metric::new(*p, name, unit, 1000.0 / k),
                    ]
                })
                .collect()
        })
    }

    #[test]
    fn engine_warnings_are_grouped_in_the_engines_words() {
        let t = Thresholds::default();
        let fd = noisy_reps(
            &["dir_create", "file_create", "file_remove", "dir_remove"],
            Unit::FilesPerSec,
            "rate",
        );
        let lines = warning_lines(Some(WorkloadKind::Fdtree), &serde_json::json!({}), &fd, &t);
        // Short and noisy: the phases are too short, and their rates' variation is that (it
        // is not warned about again, with other advice).
        assert_eq!(lines.len(), 1, "{lines:#?}");
        starts(
            &lines[0],
            "Phases under 1 s whose time varies by more than 10%, too short to trust (4): dir_create (233.3 ms); file_create (233.3 ms); file_remove (233.3 ms) …and 1 more; make the phases longer with a larger tree: more files or levels (-f, -l)",
        );
        // Long but noisy: the variation, with the advice for it.
        let long: Vec<MetricSummary> = fd
            .iter()
            .cloned()
            .map(|mut m| {
                if m.name == "elapsed" {
                    m.summary.mean *= 10.0;
                }
                m
            })
            .collect();
        let lines = warning_lines(
            Some(WorkloadKind::Fdtree),
            &serde_json::json!({}),
            &long,
            &t,
        );
        assert_eq!(lines.len(), 1, "{lines:#?}");
        starts(
            &lines[0],
            "Coefficient of variation above 10% (4): dir_create.rate (",
        );
        assert!(lines[0].ends_with("run more repetitions (--repeat) or quiet the machine; a study with cache = \"cold\" also drops the caches before each repetition"));
        // IOzone: file sizes, never the tree.
        let io = noisy_reps(&["write", "read"], Unit::KiBPerSec, "throughput");
        let lines = warning_lines(Some(WorkloadKind::Iozone), &serde_json::json!({}), &io, &t);
        ends(&lines[0], "make the phases longer with larger files (-s)");
        assert!(lines.iter().all(|l| !l.contains("levels")));
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    #[test]
    fn a_sweeps_variation_is_one_line_with_the_worst_points() {
        let w = |metric: &str, cv: f64| Warning::HighVariation {
            metric: metric.into(),
            cv,
            at_least: cv * 0.6,
            threshold: 0.1,
        };
        let mut items = Vec::new();
        for (i, point) in ["64k/4k", "64k/8k", "128k/4k"].iter().enumerate() {
            for (j, test) in ["write", "read"].iter().enumerate() {
                let cv = 0.2 + 0.1 * i as f64 + 0.01 * j as f64;
                items.push((point.to_string(), w(&format!("{test}.throughput"), cv)));
            }
        }
        let lines = point_warning_lines(&items);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert_eq!(
            lines[0],
            "Coefficient of variation above 10% in 6 results at 3 points, the worst: 128k/4k read.throughput (41.0%); 128k/4k write.throughput (40.0%); 64k/8k read.throughput (31.0%) …and 3 more; run more repetitions or quiet the machine"
        );
        assert!(point_warning_lines(&[]).is_empty());
    }
}
