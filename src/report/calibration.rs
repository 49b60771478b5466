//! The guest's cost for one study, from its `[guest] calibrate` (doc/guest.md): the same
//! workloads on plain file systems both kernels have, measured on the host and in the
//! guest as two studies of their own. Per headline metric: how much slower the guest is,
//! and with two file systems, the ratio between them on each side (a guest that compresses
//! differences towards 1 shows a smaller one).

use crate::metric::Unit;
use serde::Serialize;

/// The calibration of one guest study.
#[derive(Debug, Clone, Serialize)]
pub struct GuestCalibration {
    /// The host side's study id.
    pub host_study: i64,
    /// The guest side's study id.
    pub guest_study: i64,
    /// The file systems calibrated on, in study order.
    pub file_systems: Vec<String>,
    /// One row per workload, phase, headline metric and file system.
    pub rows: Vec<CalibrationRow>,
    /// With two or more file systems: each against the first, on both sides.
    pub ratios: Vec<RatioRow>,
}

/// One metric on one file system, on the host and in the guest.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationRow {
    /// Workload label.
    pub workload: String,
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: Unit,
    /// File system.
    pub fs: String,
    /// Host mean and repetitions.
    pub host: f64,
    /// Repetitions on the host.
    pub host_n: usize,
    /// Guest mean.
    pub guest: f64,
    /// Repetitions in the guest.
    pub guest_n: usize,
    /// How many times slower the guest is (rates: host / guest; times: guest / host); below
    /// 1 when the guest is faster.
    pub slower: f64,
    /// The host's repetitions' values (for the kept share's interval).
    #[serde(skip)]
    pub host_values: Vec<f64>,
    /// The guest's.
    #[serde(skip)]
    pub guest_values: Vec<f64>,
}

/// One headline mean of a calibration study (one side), per workload, phase, metric and file
/// system.
pub(crate) struct Mean {
    pub workload: String,
    pub phase: String,
    pub metric: String,
    pub unit: Unit,
    pub fs: String,
    pub mean: f64,
    pub n: usize,
    pub values: Vec<f64>,
}

impl CalibrationRow {
    /// The host's mean `h` against the guest's `g` of the same metric and file system; None
    /// where the slowdown is not a number.
    pub(crate) fn of(h: &Mean, g: &Mean) -> Option<CalibrationRow> {
        let slower = if h.unit.higher_is_better() {
            h.mean / g.mean
        } else {
            g.mean / h.mean
        };
        slower.is_finite().then(|| CalibrationRow {
            workload: h.workload.clone(),
            phase: h.phase.clone(),
            metric: h.metric.clone(),
            unit: h.unit,
            fs: h.fs.clone(),
            host: h.mean,
            host_n: h.n,
            guest: g.mean,
            guest_n: g.n,
            slower,
            host_values: h.values.clone(),
            guest_values: g.values.clone(),
        })
    }
}

/// One file system against the first on both sides, for one metric.
#[derive(Debug, Clone, Serialize)]
pub struct RatioRow {
    /// Workload label.
    pub workload: String,
    /// Phase.
    pub phase: String,
    /// Metric name.
    pub metric: String,
    /// The file system compared.
    pub fs: String,
    /// The one it is compared with (the first calibrated).
    pub against: String,
    /// fs / against on the host.
    pub host_ratio: f64,
    /// fs / against in the guest.
    pub guest_ratio: f64,
    /// The 95% interval of [`RatioRow::kept`] (a bootstrap over each side's repetitions);
    /// None with fewer than two repetitions on a side or no difference on the host.
    pub kept_ci: Option<(f64, f64)>,
}

impl RatioRow {
    /// `r`'s file system against `base`'s (the first calibrated) on the same metric.
    pub fn of(r: &CalibrationRow, base: &CalibrationRow) -> RatioRow {
        RatioRow {
            workload: r.workload.clone(),
            phase: r.phase.clone(),
            metric: r.metric.clone(),
            fs: r.fs.clone(),
            against: base.fs.clone(),
            host_ratio: r.host / base.host,
            guest_ratio: r.guest / base.guest,
            kept_ci: kept_interval(
                &r.host_values,
                &base.host_values,
                &r.guest_values,
                &base.guest_values,
            ),
        }
    }

    /// How much of the host's difference the guest keeps: ln(guest) / ln(host); None where
    /// the host shows no difference (within 2%).
    pub fn kept(&self) -> Option<f64> {
        let h = self.host_ratio.ln();
        (h.abs() > 0.02).then(|| self.guest_ratio.ln() / h)
    }

    /// Whether the guest can rank `fs` against `against` on this metric: the interval of the
    /// kept share lies above 0 (the guest keeps the host's difference in its direction).
    pub fn ranks(&self) -> bool {
        self.kept().is_some() && self.kept_ci.is_some_and(|(lo, _)| lo > 0.0)
    }
}

/// Bootstrap rounds for the kept share's interval.
const ROUNDS: usize = 4000;

/// The 95% percentile-bootstrap interval of the kept share, resampling each side's
/// repetitions (host fs, host baseline, guest fs, guest baseline) with replacement; the same
/// numbers every time (a fixed seed). None with fewer than two values on any side.
pub fn kept_interval(
    host_fs: &[f64],
    host_base: &[f64],
    guest_fs: &[f64],
    guest_base: &[f64],
) -> Option<(f64, f64)> {
    let sides = [host_fs, host_base, guest_fs, guest_base];
    if sides.iter().any(|v| v.len() < 2) {
        return None;
    }
    // Small, fast, and fixed: the same interval on every machine.
    let mut rng = crate::stats::rng::SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next_u64();
    let mut resample = |v: &[f64]| -> f64 {
        let n = v.len() as u64;
        (0..v.len()).map(|_| v[(next() % n) as usize]).sum::<f64>() / v.len() as f64
    };
    let mut k: Vec<f64> = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let m: Vec<f64> = sides.iter().map(|v| resample(v)).collect();
        let (hr, gr) = (m[0] / m[1], m[2] / m[3]);
        let h = hr.ln();
        // A resample without a host difference has no share to keep: counted as keeping
        // none of it (it pulls the interval towards 0, never past it).
        let share = if h.abs() < 1e-12 { 0.0 } else { gr.ln() / h };
        if share.is_finite() {
            k.push(share);
        }
    }
    if k.len() < ROUNDS / 2 {
        return None;
    }
    k.sort_by(f64::total_cmp);
    let at = |q: f64| k[((k.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// A slowdown in words: `4.0× slower`, or `2.5× faster` where the guest was faster.
pub fn slower_words(x: f64) -> String {
    super::verdict::fmt_factor(x, "slower", "faster")
}

/// The range of a set of slowdowns: `2.1× to 17.5× slower (median 4.0×)`, or with the guest
/// faster somewhere `from 2.5× faster to 380× slower (median 11.4× slower)`.
fn span_words(f: &mut [f64]) -> String {
    f.sort_by(f64::total_cmp);
    let (lo, hi) = (f[0], f[f.len() - 1]);
    let median = crate::stats::summary::median_sorted(f);
    if (hi - lo).abs() < 0.05 {
        slower_words(median)
    } else if lo >= 1.0 {
        format!("{lo:.1}× to {hi:.1}× slower (median {median:.1}×)")
    } else {
        format!(
            "from {} to {} (median {})",
            slower_words(lo),
            slower_words(hi),
            slower_words(median)
        )
    }
}

/// The guest warning's words for a calibration: the guest's slowdown over the calibrated
/// metrics, rates and throughput apart from times and latencies (a latency and a rate
/// measure different things), e.g. `its calibration on ext4 and xfs measured the guest: rates
/// and throughput 2.1× to 17.5× slower (median 4.0×); times and latencies 1.3× to 9.0×
/// slower (median 2.2×)`, then what it found of the guest's rankings.
pub fn factor_words(c: &GuestCalibration) -> String {
    let mut parts = Vec::new();
    for (kind, rates) in [
        ("rates and throughput", true),
        ("times and latencies", false),
    ] {
        let mut f: Vec<f64> = c
            .rows
            .iter()
            .filter(|r| r.unit.higher_is_better() == rates)
            .map(|r| r.slower)
            .collect();
        if !f.is_empty() {
            parts.push(format!("{kind} {}", span_words(&mut f)));
        }
    }
    let measured = if parts.is_empty() {
        String::new()
    } else {
        format!(" measured the guest: {}", parts.join("; "))
    };
    let mut words = format!(
        "its calibration on {}{measured} (see Guest calibration)",
        c.file_systems.join(" and "),
    );
    let cannot = c.ratios.iter().filter(|r| !r.ranks()).count();
    if c.ratios.is_empty() {
        words.push_str("; with one file system it could not measure what the guest keeps of a difference between two (calibrate = [\"ext4\", \"xfs\"])");
    } else if cannot > 0 {
        words.push_str(&format!(
            "; on {cannot} of its {} comparisons between file systems the guest cannot rank them (what it keeps of the host's difference may be nothing): Observations of a ranking on those metrics are left out",
            c.ratios.len()
        ));
    } else {
        words.push_str("; the guest kept the host's difference between file systems on every calibrated metric");
    }
    words
}

/// The guest's advice, as far as its calibration supports it.
pub fn advice(c: Option<&GuestCalibration>) -> String {
    match c {
        Some(c) if !c.ratios.is_empty() && c.ratios.iter().all(RatioRow::ranks) => format!(
            "compare its configurations with each other, never with figures measured on the host; {}",
            factor_words(c)
        ),
        Some(c) => format!(
            "never compare it with figures measured on the host, and rank its configurations only where the calibration shows the guest keeps the host's differences; {}",
            factor_words(c)
        ),
        None => "never compare it with figures measured on the host, and rank its configurations with care: fslab's own measurement (bench/guest.sh, bench/RESULTS.md) found fdtree's rates 6.0× slower in the guest, dbench 16×, IOzone 4.3×, fio's direct I/O 1.6×, and dbench's and IOzone's xfs/ext4 differences all but gone; add [guest] calibrate = [\"ext4\", \"xfs\"] to measure this study's".to_string(),
    }
}

/// What an Observation between guest cells on `workload`'s `phase`.`metric` adds (Ok), or
/// why it is left out (Err): the guest cannot rank file systems on that metric.
pub fn observation_words(
    c: Option<&GuestCalibration>,
    workload: &str,
    phase: &str,
    metric: &str,
) -> Result<String, String> {
    let Some(c) = c else {
        return Ok(" A guest figure: without a calibration, how much of a host's difference the guest keeps is unmeasured.".into());
    };
    let mine: Vec<&RatioRow> = c
        .ratios
        .iter()
        .filter(|r| r.workload == workload && r.phase == phase && r.metric == metric)
        .collect();
    let Some(worst) = mine.iter().min_by(|a, b| {
        let lo = |r: &RatioRow| r.kept_ci.map_or(f64::NEG_INFINITY, |(l, _)| l);
        lo(a).total_cmp(&lo(b))
    }) else {
        return Ok(" A guest figure: the calibration compared no two file systems on this metric, so how much of a difference the guest keeps is unmeasured.".into());
    };
    let what = format!(
        "{phase}.{metric}: on its calibration's {}/{} difference,",
        worst.fs, worst.against
    );
    if worst.ranks() {
        Ok(format!(
            " A guest figure; the guest kept {} of the host's difference on this metric ({}).",
            pct(worst.kept().unwrap_or(0.0)),
            kept_interval_words(worst)
        ))
    } else {
        Err(format!("{what} {}", kept_words(worst)))
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn kept_interval_words(r: &RatioRow) -> String {
    match r.kept_ci {
        Some((lo, hi)) => format!("95% interval {} to {}", pct(lo), pct(hi)),
        None => "no interval: fewer than two repetitions on a side".into(),
    }
}

/// What share of the host's difference the guest shows, in words, with its interval; where
/// the interval includes 0, that the guest cannot rank the two on this metric.
fn kept_words(r: &RatioRow) -> String {
    let Some(k) = r.kept() else {
        return "no difference on the host".to_string();
    };
    let share = if (0.0..=1.0).contains(&k) {
        format!("the guest shows {} of the host's difference", pct(k))
    } else if k > 1.0 {
        format!("the guest shows {k:.1}× the host's difference")
    } else {
        format!(
            "the guest shows {} of the host's difference, the other way",
            pct(-k)
        )
    };
    match r.kept_ci {
        Some((lo, _)) if lo > 0.0 => format!("{share} ({})", kept_interval_words(r)),
        Some((_, hi)) if hi < 0.0 => format!(
            "{share} ({}): the guest reverses the host's ranking",
            kept_interval_words(r)
        ),
        _ => format!(
            "the guest cannot rank them here ({share}, {})",
            kept_interval_words(r)
        ),
    }
}

/// The text lines of the Guest calibration section: two lines of introduction, then per
/// workload its label and one line per metric and file system, then one per ratio (which may
/// be longer than a line: the text report wraps it under its `host` column).
pub fn lines(c: &GuestCalibration) -> Vec<String> {
    let mut v = vec![
        format!(
            "The study's workloads on {} (default options) on the host (study {}) and in the",
            c.file_systems.join(" and "),
            c.host_study
        ),
        format!(
            "guest (study {}): how many times slower the guest is, per headline metric.",
            c.guest_study
        ),
    ];
    for w in super::distinct(c.rows.iter().map(|r| r.workload.as_str())) {
        v.push(format!("  {w}"));
        let rows: Vec<&CalibrationRow> = c.rows.iter().filter(|r| r.workload == w).collect();
        let ratios: Vec<&RatioRow> = c.ratios.iter().filter(|r| r.workload == w).collect();
        let what = |p: &str, m: &str, fs: &str| format!("{p}.{m}, {fs}");
        let width = rows
            .iter()
            .map(|r| what(&r.phase, &r.metric, &r.fs).chars().count())
            .chain(ratios.iter().map(|r| {
                what(&r.phase, &r.metric, &format!("{}/{}", r.fs, r.against))
                    .chars()
                    .count()
            }))
            .max()
            .unwrap_or(0);
        for r in rows {
            let sc = r.unit.scale_for([r.host, r.guest]);
            v.push(format!(
                "    {:<width$}  host {}, guest {}: {}",
                what(&r.phase, &r.metric, &r.fs),
                sc.fmt(r.host),
                sc.fmt(r.guest),
                slower_words(r.slower)
            ));
        }
        for r in ratios {
            v.push(format!(
                "    {:<width$}  host {:.2}, guest {:.2}: {}",
                what(&r.phase, &r.metric, &format!("{}/{}", r.fs, r.against)),
                r.host_ratio,
                r.guest_ratio,
                kept_words(r)
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{has, starts};

    fn row(fs: &str, unit: Unit, host: &[f64], guest: &[f64]) -> CalibrationRow {
        let side = |v: &[f64]| Mean {
            workload: "fdtree".into(),
            phase: "file_create".into(),
            metric: "rate".into(),
            unit,
            fs: fs.into(),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            n: v.len(),
            values: v.to_vec(),
        };
        CalibrationRow::of(&side(host), &side(guest)).unwrap()
    }

    #[test]
    fn the_factor_and_what_the_guest_keeps_of_a_difference() {
        let ext4 = row(
            "ext4",
            Unit::FilesPerSec,
            &[57_000.0, 58_000.0, 58_700.0],
            &[3_250.0, 3_300.0, 3_350.0],
        );
        // xfs as the host measured it, against what a guest measured.
        let xfs_host = [47_000.0, 47_070.0, 47_140.0];
        let xfs_in = |guest: &[f64]| row("xfs", Unit::FilesPerSec, &xfs_host, guest);
        let xfs = xfs_in(&[3_180.0, 3_235.0, 3_290.0]);
        let r = RatioRow::of(&xfs, &ext4);
        let c = GuestCalibration {
            host_study: 1,
            guest_study: 2,
            file_systems: vec!["ext4".into(), "xfs".into()],
            rows: vec![ext4.clone(), xfs.clone()],
            ratios: vec![r.clone()],
        };
        let w = factor_words(&c);
        starts(
            &w,
            "its calibration on ext4 and xfs measured the guest: rates and throughput 14.6× to 17.5× slower (median 16.0×)",
        );
        let kept = r.kept().unwrap();
        assert!((kept - 0.098).abs() < 0.01, "{kept}");
        // The guest's 2% against the host's 19%, with this spread: its interval holds 0.
        let (lo, hi) = r.kept_ci.unwrap();
        assert!(lo < 0.0 && hi > 0.0, "{lo} {hi}");
        assert!(!r.ranks());
        has(
            &w,
            "on 1 of its 1 comparisons between file systems the guest cannot rank them",
        );
        let l = lines(&c);
        assert!(l[..5].iter().all(|l| l.chars().count() <= 100), "{l:#?}");
        assert_eq!(l[2], "  fdtree");
        assert!(l[3].starts_with("    file_create.rate, ext4 "), "{}", l[3]);
        assert!(l[3].ends_with(": 17.5× slower"), "{}", l[3]);
        let flat = l[5..]
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        has(
            &flat,
            "host 0.81, guest 0.98: the guest cannot rank them here (the guest shows 10% of the host's difference, 95% interval -",
        );
        // An Observation on that metric is left out, with the reason.
        let why = observation_words(Some(&c), "fdtree", "file_create", "rate").unwrap_err();
        has(
            &why,
            "on its calibration's xfs/ext4 difference, the guest cannot rank them here",
        );
        assert!(!advice(Some(&c)).starts_with("compare its configurations"));

        // A guest that keeps a clear difference ranks, and says so with its interval.
        let xfs_kept = xfs_in(&[2_700.0, 2_720.0, 2_740.0]);
        let k = RatioRow::of(&xfs_kept, &ext4);
        assert!(k.ranks(), "{:?}", k.kept_ci);
        let c2 = GuestCalibration {
            ratios: vec![k],
            ..c.clone()
        };
        let said = observation_words(Some(&c2), "fdtree", "file_create", "rate").unwrap();
        starts(&said, " A guest figure; the guest kept ");
        assert!(said.contains("95% interval "), "{said}");
        assert!(advice(Some(&c2)).starts_with("compare its configurations with each other"));
        // Other metrics and no calibration: a guest figure, said as such.
        has(
            &observation_words(Some(&c2), "fdtree", "dir_create", "rate").unwrap(),
            "compared no two file systems",
        );
        has(
            &observation_words(None, "fdtree", "file_create", "rate").unwrap(),
            "without a calibration",
        );
        assert!(advice(None).contains("dbench 16×"));

        let flat = RatioRow {
            host_ratio: 1.01,
            ..c.ratios[0].clone()
        };
        assert!(flat.kept().is_none());
        assert!(!flat.ranks());
    }

    #[test]
    fn slowdowns_are_said_per_metric_kind_and_faster_is_faster() {
        assert_eq!(slower_words(4.0), "4.0× slower");
        assert_eq!(slower_words(0.4), "2.5× faster");
        let lat = row("ext4", Unit::Millis, &[1.0, 1.0], &[0.4, 0.4]);
        let rate = row("ext4", Unit::FilesPerSec, &[100.0, 100.0], &[10.0, 10.0]);
        let c = GuestCalibration {
            host_study: 1,
            guest_study: 2,
            file_systems: vec!["ext4".into()],
            rows: vec![
                lat.clone(),
                rate,
                row("ext4", Unit::Millis, &[1.0, 1.0], &[30.0, 30.0]),
            ],
            ratios: vec![],
        };
        let w = factor_words(&c);
        has(
            &w,
            "rates and throughput 10.0× slower; times and latencies from 2.5× faster to 30.0× slower (median ",
        );
        assert!(!w.contains("0.4×"), "{w}");
        has(&w, "with one file system it could not measure");
    }

    #[test]
    fn the_kept_interval_needs_two_repetitions_a_side_and_is_reproducible() {
        let a = [1.0, 1.1];
        assert_eq!(kept_interval(&a, &a, &a, &[1.0]), None);
        let interval = || {
            kept_interval(
                &[2.0, 2.1, 1.9],
                &[1.0, 1.05, 0.95],
                &[1.5, 1.6, 1.4],
                &[1.0, 1.0, 1.0],
            )
        };
        let i = interval();
        assert_eq!(i, interval());
        let (lo, hi) = i.unwrap();
        // ln 1.5 / ln 2 = 0.58: inside, and the guest clearly keeps some of it.
        assert!(lo > 0.0 && lo < 0.58 && hi > 0.58, "{lo} {hi}");
    }
}
