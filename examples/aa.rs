//! Calibration of fslab's conclusions (`bench/aa.sh`): the report's own statistics — one
//! model per comparison, the primary family, Benjamini–Hochberg across the report,
//! Observations — run over simulated data sets whose truth is known.
//!
//! - **A/A:** every configuration draws from the same distribution, so every Observation is a
//!   false discovery; the false-discovery rate of Observations is the share of data sets with
//!   at least one (with no true difference, FDR = the chance of any false discovery).
//! - **Power:** one configuration is better by 10% in every primary metric; power is the
//!   share of those true differences that appear as Observations, and the share of data sets
//!   in which at least one does.
//!
//! Noise is normal or log-normal with a coefficient of variation of 2–30%, n = 3–10
//! repetitions per configuration, in the families of three example studies: the quickstart
//! (fdtree, 2 configurations), ext4-external-journal (fdtree, 4 journal sizes × 4 workloads)
//! and fio-block-size (fio, 3 block sizes, two jobs). The data sets go through
//! `fslab::report::build` exactly as stored studies do.
//!
//! `cargo run --release --example aa -- [SIMS] [SEED]` (defaults 1000 and 1).

use fslab::metric::{Metric, Unit};
use fslab::report::model::WarningKind;
use fslab::report::{build, Input, ReportOptions};
use fslab::runner::series::Series;
use fslab::stats::adaptive::Rule;
use fslab::store::*;
use fslab::workload::WorkloadKind;
use std::collections::BTreeMap;

use fslab::stats::rng::SplitMix64 as Rng;

#[derive(Clone, Copy, PartialEq)]
enum Noise {
    Normal,
    LogNormal,
    /// Log-normal with median `m` (geometric mean `m`) instead of mean `m`.
    LogNormalMedian,
}

impl Noise {
    /// A positive value with mean about `m` (median `m` for `LogNormalMedian`) and coefficient
    /// of variation `cv`.
    fn draw(self, r: &mut Rng, m: f64, cv: f64) -> f64 {
        match self {
            Noise::LogNormalMedian => {
                let s = (1.0 + cv * cv).ln().sqrt();
                m * (s * r.normal()).exp()
            }
            Noise::Normal => loop {
                let x = m * (1.0 + cv * r.normal());
                if x > 0.0 {
                    return x;
                }
            },
            Noise::LogNormal => {
                let s = (1.0 + cv * cv).ln().sqrt();
                m * (s * r.normal() - s * s / 2.0).exp()
            }
        }
    }
}

/// A simulated study: its configurations, workloads, and how one repetition's metrics are
/// drawn (`cell`, `workload`, the factor that multiplies the primary metrics).
struct Family {
    name: &'static str,
    kind: &'static str,
    cells: Vec<Vec<(String, String)>>,
    workloads: usize,
    metrics: fn(&mut Rng, Noise, &[f64], f64, usize) -> Vec<Metric>,
}

/// fdtree: per phase its rate (primary) and the time that follows from it, plus the sync time.
fn fdtree(r: &mut Rng, noise: Noise, cvs: &[f64], k: f64, _cell: usize) -> Vec<Metric> {
    let mut m = Vec::new();
    for (i, (phase, items, rate, unit)) in [
        ("dir_create", 11110.0, 47000.0, Unit::DirsPerSec),
        ("file_create", 44444.0, 41000.0, Unit::FilesPerSec),
        ("file_remove", 44444.0, 76000.0, Unit::FilesPerSec),
        ("dir_remove", 11110.0, 65000.0, Unit::DirsPerSec),
    ]
    .into_iter()
    .enumerate()
    {
        let cv = cvs[i];
        let x = noise.draw(r, rate * k, cv);
        m.push(Metric::new(phase, "elapsed", Unit::Seconds, items / x));
        m.push(Metric::new(phase, "rate", unit, x));
        if phase == "file_create" {
            m.push(Metric::new(phase, "throughput", Unit::KiBPerSec, x * 4.0));
        }
        m.push(Metric::new(
            phase,
            "sync_time",
            Unit::Seconds,
            noise.draw(r, 0.05, cv),
        ));
    }
    m
}

/// fio-block-size's shape: random and sequential reads; IOPS (randread) and throughput
/// (seqread, marked large sequential in the third cell, as the 1 MiB cell is) are primary, CPU
/// use and utilisation exploratory. Every cell draws from the same distribution (A/A).
fn fio(r: &mut Rng, noise: Noise, cvs: &[f64], k: f64, cell: usize) -> Vec<Metric> {
    let bs = 64.0;
    let marked = cell == 2;
    let mut m = Vec::new();
    for (i, (job, base_iops)) in [
        ("randread", 3000.0 / (1.0 + bs / 64.0)),
        ("seqread", 20000.0 / (1.0 + bs / 16.0)),
    ]
    .into_iter()
    .enumerate()
    {
        let cv = cvs[i];
        let ph = format!("{job}/read");
        let iops = noise.draw(r, base_iops * k, cv);
        m.push(Metric::new(&ph, "iops", Unit::OpsPerSec, iops));
        m.push(Metric::new(&ph, "throughput", Unit::KiBPerSec, iops * bs));
        m.push(Metric::new(&ph, "elapsed", Unit::Seconds, 2.0));
        m.push(Metric::new(
            &ph,
            "io_bytes",
            Unit::Bytes,
            iops * bs * 2048.0,
        ));
        m.push(Metric::new(&ph, "clat_mean", Unit::Millis, 1000.0 / iops));
        m.push(Metric::new(
            &ph,
            "clat_p99",
            Unit::Millis,
            noise.draw(r, 3000.0 / iops, cv),
        ));
        if job == "seqread" && marked {
            m.push(Metric::new(&ph, "large_sequential", Unit::Count, 1.0));
        }
        m.push(Metric::new(
            job,
            "usr_cpu",
            Unit::Percent,
            noise.draw(r, 2.0, cv),
        ));
        m.push(Metric::new(
            job,
            "sys_cpu",
            Unit::Percent,
            noise.draw(r, 20.0, cv),
        ));
    }
    m.push(Metric::new(
        "disk_util",
        "data",
        Unit::Percent,
        noise.draw(r, 60.0, cvs[0]),
    ));
    m
}

fn families() -> Vec<Family> {
    let levels = |f: &str, ls: &[&str]| -> Vec<Vec<(String, String)>> {
        ls.iter()
            .map(|l| vec![(f.to_string(), l.to_string())])
            .collect()
    };
    vec![
        Family {
            name: "quickstart (fdtree, 2 configurations)",
            kind: "fdtree",
            cells: levels("journal", &["16MB", "256MB"]),
            workloads: 1,
            metrics: fdtree,
        },
        Family {
            name: "ext4-external-journal (fdtree, 4 × 4 workloads)",
            kind: "fdtree",
            cells: levels("journal", &["16MB", "64MB", "256MB", "1GB"]),
            workloads: 4,
            metrics: fdtree,
        },
        Family {
            name: "fio-block-size (fio, 3 configurations)",
            kind: "fio",
            cells: levels("bs", &["4k", "64k", "1m"]),
            workloads: 1,
            metrics: fio,
        },
    ]
}

/// How the noise of a data set's series relates: the same coefficient of variation in every
/// series, or each series (configuration × phase or job) its own, drawn once per data set
/// log-uniformly from a third to three times the nominal one (variances up to 81 times
/// apart: a ramdisk journal beside a loop image, a quiet phase beside a noisy one). With
/// unequal variances, equal means are not equal geometric means (a log-normal series with a
/// cv of 90% has its geometric mean 26% under its mean), and the geometric means are what a
/// report compares; so series of unequal spread are drawn with equal medians
/// (`Noise::LogNormalMedian`), the null hypothesis of the log-scale model.
#[derive(Clone, Copy, PartialEq)]
enum Spread {
    Same,
    Varying,
}

/// A fixed count of `n` repetitions per series.
fn fixed(n: u32) -> Rule {
    Rule {
        min: n,
        max: n,
        target_ci: None,
        detect: None,
    }
}

/// One simulated study as stored: `better` is the cell whose primary metrics are 10% better;
/// every series repeats by `rule` (the runner's own stopping rule, round by round in
/// interleaved order, each series deciding from its own headline values).
fn study(
    f: &Family,
    r: &mut Rng,
    (noise, spread): (Noise, Spread),
    cv: f64,
    rule: Rule,
    better: Option<usize>,
) -> StudyData {
    let cells: Vec<CellRow> = f
        .cells
        .iter()
        .enumerate()
        .map(|(i, fs)| CellRow {
            id: i as i64 + 1,
            idx: i as i64,
            label: fs
                .iter()
                .map(|(a, b)| format!("{a}={b}"))
                .collect::<Vec<_>>()
                .join(" "),
            factors: fs.clone(),
            config: serde_json::json!({}),
            commands: Vec::new(),
            superblock: String::new(),
            status: CellStatus::Complete,
            error: None,
        })
        .collect();
    let workloads: Vec<WorkloadRow> = (0..f.workloads)
        .map(|w| WorkloadRow {
            id: w as i64 + 1,
            idx: w as i64,
            kind: f.kind.into(),
            label: format!("w{w}"),
            params: serde_json::json!({}),
        })
        .collect();
    let cvs: Vec<Vec<f64>> = (0..cells.len() * f.workloads)
        .map(|_| {
            (0..4)
                .map(|_| match spread {
                    Spread::Same => cv,
                    Spread::Varying => cv * ((2.0 * r.uniform() - 1.0) * 3f64.ln()).exp(),
                })
                .collect()
        })
        .collect();
    let mut trials = Vec::new();
    let mut series = Vec::new();
    for c in &cells {
        for w in &workloads {
            series.push(SeriesRow {
                cell_id: c.id,
                workload_id: w.id,
                status: SeriesStatus::Complete,
                stop_reason: None,
                error: None,
            });
        }
    }
    let kind = WorkloadKind::ALL
        .into_iter()
        .find(|k| k.as_str() == f.kind)
        .expect("a registered engine");
    let mut runs: Vec<Series> = (0..cells.len() * f.workloads)
        .map(|slot| Series::new(slot / f.workloads, slot % f.workloads, kind))
        .collect();
    for rep in 1..=rule.max {
        for c in &cells {
            for w in &workloads {
                let k = if better == Some(c.idx as usize) {
                    1.1
                } else {
                    1.0
                };
                let slot = c.idx as usize * f.workloads + w.idx as usize;
                if !runs[slot].is_active() {
                    continue;
                }
                let samples = (f.metrics)(r, noise, &cvs[slot], k, c.idx as usize);
                runs[slot].add(&samples, 1.0);
                runs[slot].decide(&rule);
                trials.push(TrialRow {
                    id: trials.len() as i64 + 1,
                    cell_id: c.id,
                    workload_id: w.id,
                    repetition: rep.into(),
                    order_index: trials.len() as i64,
                    status: TrialStatus::Ok,
                    error: None,
                    cache_policy: "cold".into(),
                    window: RunWindow {
                        wall_seconds: 1.0,
                        ..RunWindow::default()
                    },
                    excluded: None,
                    samples,
                    timeline: Vec::new(),
                });
            }
        }
    }
    StudyData {
        study: StudyRow {
            id: 1,
            kind: fslab::vocab::StudyKind::Study,
            name: "aa".into(),
            description: String::new(),
            command_line: String::new(),
            spec: String::new(),
            spec_hash: String::new(),
            tool_version: String::new(),
            seed: None,
            status: StudyStatus::Complete,
            created_at: String::new(),
            finished_at: None,
        },
        environment: Vec::new(),
        cells,
        workloads,
        series,
        trials,
    }
}

/// What one data set's report found.
struct Found {
    /// Observations.
    obs: usize,
    /// Observations of a true difference.
    true_obs: usize,
    /// True differences simulated (primary comparisons of the better cell).
    truths: usize,
    /// Of those, significant on their own (before the adjustment for multiple comparisons).
    true_significant: usize,
    /// Primary tests in the report.
    tests: usize,
    /// Primary comparisons significant on their own (before the adjustment), of any cell.
    significant: usize,
    /// The kinds of warning the report shows (once each).
    warned: Vec<WarningKind>,
}

/// What the report of one data set found; `better` is the cell made better, if any.
fn judge(d: &StudyData, better: Option<usize>) -> Found {
    let h = BTreeMap::new();
    let input = Input {
        title: "aa".into(),
        sources: Vec::new(),
        environments: Vec::new(),
        data: d,
        histograms: &h,
        differences: Vec::new(),
        guest_calibration: None,
    };
    let r = build(&input, &ReportOptions::default()).expect("report");
    let primary: Vec<_> = r
        .workloads
        .iter()
        .flat_map(|w| &w.comparisons)
        .filter(|c| c.primary)
        .collect();
    let is_true = |c: &fslab::report::model::Comparison| better == Some(c.cell);
    let found: Vec<_> = primary
        .iter()
        .filter(|c| c.significant && c.q.is_some_and(|q| q < 0.05))
        .collect();
    assert_eq!(
        found.len(),
        r.observations.len(),
        "Observations are the primary comparisons that hold up"
    );
    Found {
        obs: found.len(),
        true_obs: found.iter().filter(|c| is_true(c)).count(),
        truths: primary.iter().filter(|c| is_true(c)).count(),
        true_significant: primary
            .iter()
            .filter(|c| is_true(c) && c.significant)
            .count(),
        tests: primary.len(),
        significant: primary.iter().filter(|c| c.significant).count(),
        warned: {
            let mut k: Vec<WarningKind> = r.warnings.iter().map(|w| w.kind).collect();
            k.sort_by_key(|k| format!("{k:?}"));
            k.dedup();
            k
        },
    }
}

/// A share with its 95% Wilson interval, in percent.
fn pct(k: usize, n: usize) -> String {
    let (p, n) = (k as f64 / n as f64, n as f64);
    let z = 1.959964;
    let c = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let h = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    format!(
        "{:.2}% [{:.2}–{:.2}]",
        100.0 * p,
        100.0 * (c - h).max(0.0),
        100.0 * (c + h).min(1.0)
    )
}

/// The default design (`[repetitions]` without `min`: `detect = "10%"`, n from 80% power at
/// an assumed cv of 5%) and its opt-in extension (`max` given: each series fixes its n from
/// the spread of its own first `min` values), run through the runner's rule: power for a true
/// 10% change at cv 5%, and false discoveries on A/A data with equal and with unequal spreads.
fn design(rng: &mut Rng, sims: usize, seed: u64) {
    let reps_of = |extra: &str| {
        fslab::plan::Study::parse(&format!(
            "name = \"d\"\n{extra}[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"ext4\"\n[[workload]]\nkind = \"fdtree\"\nlevels = 2\n"
        ))
        .expect("a study")
        .repetitions
    };
    let (plain, extended) = (reps_of(""), reps_of("[repetitions]\nmax = 30\n"));
    println!("# The default design and A/A calibration ({sims} data sets per row, seed {seed})\n");
    println!("Command: `cargo run --release --example aa -- {sims} {seed}` (bench/aa.sh)\n");
    println!(
        "## Power by design: detect = {:.0}%, {} repetitions per series\n",
        100.0 * plain.detect.unwrap_or(0.0),
        plain.min
    );
    println!("**default**: a study without `min` runs the design's n for 80% power to detect a 10% change at an assumed cv of 5% (two-sided Welch on logs, α = 0.05 before adjustment; a series whose spread an earlier study measured runs the n that spread needs). **extend** (`max = {}` given): each series also fixes its n from the spread of its own first {} values, by the runner's own rule. Power is per true comparison (one configuration 10% better in every primary metric); the A/A rows count primary comparisons significant before the adjustment (per comparison) and data sets with any Observation (after it).\n", extended.max, extended.min);
    println!("| family | design | noise | truth, cv | mean n per series | significant before adjustment (per comparison) | in Observations |");
    println!("|---|---|---|---|---:|---|---|");
    let varying = "A/A, each series its own cv (⅓–3× of 5%)";
    for f in families() {
        let rows = [
            (
                "default",
                Noise::LogNormal,
                Spread::Same,
                Some(1),
                "10% better, cv 5%",
                plain.rule(),
            ),
            (
                "default",
                Noise::Normal,
                Spread::Same,
                Some(1),
                "10% better, cv 5%",
                plain.rule(),
            ),
            (
                "default",
                Noise::LogNormal,
                Spread::Same,
                None,
                "A/A, cv 5%",
                plain.rule(),
            ),
            (
                "default",
                Noise::LogNormalMedian,
                Spread::Varying,
                None,
                varying,
                plain.rule(),
            ),
            (
                "extend",
                Noise::LogNormal,
                Spread::Same,
                Some(1),
                "10% better, cv 5%",
                extended.rule(),
            ),
            (
                "extend",
                Noise::LogNormal,
                Spread::Same,
                None,
                "A/A, cv 5%",
                extended.rule(),
            ),
            (
                "extend",
                Noise::LogNormalMedian,
                Spread::Varying,
                None,
                varying,
                extended.rule(),
            ),
        ];
        for (how, noise, spread, better, truth, rule) in rows {
            let (mut sig, mut tests, mut obs, mut any, mut reps, mut series) = (0, 0, 0, 0, 0, 0);
            for _ in 0..sims {
                let d = study(&f, rng, (noise, spread), 0.05, rule, better);
                reps += d.trials.len();
                series += d.series.len();
                let x = judge(&d, better);
                match better {
                    Some(_) => {
                        sig += x.true_significant;
                        tests += x.truths;
                        obs += x.true_obs;
                    }
                    None => {
                        sig += x.significant;
                        tests += x.tests;
                        obs += x.obs;
                        any += usize::from(x.obs > 0);
                    }
                }
            }
            let nm = match noise {
                Noise::Normal => "normal",
                _ => "log-normal",
            };
            let last = match better {
                Some(_) => format!("{} of true differences", pct(obs, tests)),
                None => format!("{} of data sets (FDR)", pct(any, sims)),
            };
            println!(
                "| {} | {how} | {nm} | {truth} | {:.2} | {} | {last} |",
                f.name,
                reps as f64 / series as f64,
                pct(sig, tests)
            );
        }
    }
    println!();
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sims: usize = args
        .next()
        .map_or(1000, |s| s.parse().expect("SIMS: a number"));
    let seed: u64 = args
        .next()
        .map_or(1, |s| s.parse().expect("SEED: a number"));
    let only_design = args.next().as_deref() == Some("design");
    let mut rng = Rng(seed);
    design(&mut rng, sims, seed);
    if only_design {
        return;
    }
    let cvs = [0.02, 0.05, 0.10, 0.20, 0.30];
    let ns = [3u32, 4, 5, 7, 10];
    println!(
        "# A/A calibration of Observations ({sims} data sets per cell of the grid, seed {seed})\n"
    );
    println!("## False-discovery rate of Observations (A/A: no true difference)\n");
    println!("| family | primary tests | noise | data sets | with an Observation (FDR), 95% CI | worst grid cell |");
    println!("|---|---:|---|---:|---|---|");
    let mut total = (0, 0);
    for f in families() {
        for (noise, spread) in [
            (Noise::Normal, Spread::Same),
            (Noise::LogNormal, Spread::Same),
            (Noise::LogNormalMedian, Spread::Varying),
        ] {
            let (mut any, mut all, mut worst, mut tests) = (0, 0, (0.0, String::new()), 0);
            for &cv in &cvs {
                for &n in &ns {
                    let mut hit = 0;
                    for _ in 0..sims {
                        let found = judge(
                            &study(&f, &mut rng, (noise, spread), cv, fixed(n), None),
                            None,
                        );
                        tests = found.tests;
                        hit += usize::from(found.obs > 0);
                    }
                    let share = hit as f64 / sims as f64;
                    if share > worst.0 {
                        worst = (
                            share,
                            format!("{:.1}% at cv {:.0}%, n = {n}", 100.0 * share, 100.0 * cv),
                        );
                    }
                    any += hit;
                    all += sims;
                }
            }
            total.0 += any;
            total.1 += all;
            let nm = match (noise, spread) {
                (Noise::Normal, _) => "normal",
                (_, Spread::Same) => "log-normal",
                (_, Spread::Varying) => "log-normal, each series its own cv (⅓–3×), equal medians",
            };
            println!(
                "| {} | {tests} | {nm} | {all} | {} | {} |",
                f.name,
                pct(any, all),
                worst.1
            );
        }
    }
    println!(
        "| **all** | | | {} | **{}** | |\n",
        total.1,
        pct(total.0, total.1)
    );
    println!("## Power: one configuration 10% better in every primary metric, cv 5%\n");
    println!("| family | noise | n | true differences in Observations (per comparison) | significant before the adjustment | data sets with one in Observations | false Observations |");
    println!("|---|---|---:|---|---|---|---|");
    for f in families() {
        for noise in [Noise::Normal, Noise::LogNormal] {
            for n in [3u32, 5, 7, 10] {
                let (mut found, mut truths, mut sig, mut any, mut wrong) = (0, 0, 0, 0, 0);
                for _ in 0..sims {
                    let d = study(&f, &mut rng, (noise, Spread::Same), 0.05, fixed(n), Some(1));
                    let x = judge(&d, Some(1));
                    found += x.true_obs;
                    truths += x.truths;
                    sig += x.true_significant;
                    any += usize::from(x.true_obs > 0);
                    wrong += x.obs - x.true_obs;
                }
                let nm = if noise == Noise::Normal {
                    "normal"
                } else {
                    "log-normal"
                };
                println!(
                    "| {} | {nm} | {n} | {} | {} | {} | {wrong} |",
                    f.name,
                    pct(found, truths),
                    pct(sig, truths),
                    pct(any, sims)
                );
            }
        }
    }
    println!();
    println!("## Warnings on A/A data (no true difference, nothing wrong with the machine)\n");
    println!("Share of data sets whose report shows at least one warning of each kind: the false-alarm rate of the warnings section when every repetition is an independent draw (normal noise; fdtree phases of about 0.3 s at the simulated rates, so too-short warnings follow the noise rule).\n");
    let kinds = [
        WarningKind::TooShort,
        WarningKind::HighCv,
        WarningKind::Outlier,
        WarningKind::FirstSlower,
        WarningKind::Drift,
        WarningKind::MultipleComparisons,
    ];
    println!("| family | cv | n | any warning | too short | high variation | outlier | slow first | drift | multiple comparisons |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for f in families().into_iter().take(1) {
        for cv in [0.02, 0.05, 0.10] {
            for n in [5u32, 10] {
                let (mut any, mut by) = (0, [0usize; 6]);
                for _ in 0..sims {
                    let x = judge(
                        &study(
                            &f,
                            &mut rng,
                            (Noise::Normal, Spread::Same),
                            cv,
                            fixed(n),
                            None,
                        ),
                        None,
                    );
                    let mut hit = false;
                    for (i, k) in kinds.iter().enumerate() {
                        if x.warned.contains(k) {
                            by[i] += 1;
                            hit = true;
                        }
                    }
                    any += usize::from(hit);
                }
                let cols: Vec<String> = by.iter().map(|&b| pct(b, sims)).collect();
                println!(
                    "| {} | {:.0}% | {n} | {} | {} |",
                    f.name,
                    cv * 100.0,
                    pct(any, sims),
                    cols.join(" | ")
                );
            }
        }
    }
}
