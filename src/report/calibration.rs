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
}

impl RatioRow {
    /// How much of the host's difference the guest keeps: ln(guest) / ln(host); None where
    /// the host shows no difference (within 2%).
    pub fn kept(&self) -> Option<f64> {
        let h = self.host_ratio.ln();
        (h.abs() > 0.02).then(|| self.guest_ratio.ln() / h)
    }
}

/// The guest warning's words for a calibration: the range of the guest's slowdown over the
/// calibrated metrics, e.g. `its calibration measured the guest 2.1× to 17.5× slower than
/// the host (median 4.0×) on ext4`.
pub fn factor_words(c: &GuestCalibration) -> String {
    let mut f: Vec<f64> = c.rows.iter().map(|r| r.slower).collect();
    f.sort_by(f64::total_cmp);
    let (lo, hi) = (f[0], f[f.len() - 1]);
    let median = if f.len() % 2 == 1 {
        f[f.len() / 2]
    } else {
        (f[f.len() / 2 - 1] + f[f.len() / 2]) / 2.0
    };
    let range = if (hi - lo).abs() < 0.05 {
        format!("{median:.1}×")
    } else {
        format!("{lo:.1}× to {hi:.1}× (median {median:.1}×)")
    };
    format!(
        "its calibration measured the guest {range} slower than the host on {} (see Guest calibration)",
        c.file_systems.join(" and ")
    )
}

/// What share of the host's difference the guest shows, in words.
fn kept_words(r: &RatioRow) -> String {
    match r.kept() {
        None => "no difference on the host".to_string(),
        Some(k) if k < 0.0 => "the guest reverses the host's difference".to_string(),
        Some(k) if k <= 1.0 => {
            format!("the guest shows {:.0}% of the host's difference", k * 100.0)
        }
        Some(k) => format!("the guest shows {k:.1}× the host's difference"),
    }
}

/// The text lines of the Guest calibration section: two lines of introduction, then per
/// workload its label and one line per metric and file system, then one per ratio.
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
    let mut workloads: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
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
                "    {:<width$}  host {}, guest {}: {:.1}× slower",
                what(&r.phase, &r.metric, &r.fs),
                sc.fmt(r.host),
                sc.fmt(r.guest),
                r.slower
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

    fn row(fs: &str, host: f64, guest: f64) -> CalibrationRow {
        CalibrationRow {
            workload: "fdtree".into(),
            phase: "file_create".into(),
            metric: "rate".into(),
            unit: Unit::FilesPerSec,
            fs: fs.into(),
            host,
            host_n: 3,
            guest,
            guest_n: 3,
            slower: host / guest,
        }
    }

    #[test]
    fn the_factor_and_what_the_guest_keeps_of_a_difference() {
        let c = GuestCalibration {
            host_study: 1,
            guest_study: 2,
            file_systems: vec!["ext4".into(), "xfs".into()],
            rows: vec![
                row("ext4", 57_900.0, 3_300.0),
                row("xfs", 47_070.0, 3_235.0),
            ],
            ratios: vec![RatioRow {
                workload: "fdtree".into(),
                phase: "file_create".into(),
                metric: "rate".into(),
                fs: "xfs".into(),
                against: "ext4".into(),
                host_ratio: 0.813,
                guest_ratio: 0.980,
            }],
        };
        let w = factor_words(&c);
        assert!(
            w.contains("14.6× to 17.5× (median 16.0×) slower than the host on ext4 and xfs"),
            "{w}"
        );
        let kept = c.ratios[0].kept().unwrap();
        assert!((kept - 0.098).abs() < 0.01, "{kept}");
        let l = lines(&c);
        assert!(l.iter().all(|l| l.chars().count() <= 100), "{l:#?}");
        assert_eq!(l[2], "  fdtree");
        assert!(l[3].starts_with("    file_create.rate, ext4 "), "{}", l[3]);
        assert!(l[3].ends_with(": 17.5× slower"), "{}", l[3]);
        assert!(
            l[5].ends_with("host 0.81, guest 0.98: the guest shows 10% of the host's difference"),
            "{}",
            l[5]
        );
        let flat = RatioRow {
            host_ratio: 1.01,
            ..c.ratios[0].clone()
        };
        assert!(flat.kept().is_none());
        let more = RatioRow {
            host_ratio: 1.09,
            guest_ratio: 1.32,
            ..c.ratios[0].clone()
        };
        assert_eq!(
            kept_words(&more),
            "the guest shows 3.2× the host's difference"
        );
        let flipped = RatioRow {
            host_ratio: 1.2,
            guest_ratio: 0.9,
            ..c.ratios[0].clone()
        };
        assert_eq!(
            kept_words(&flipped),
            "the guest reverses the host's difference"
        );
    }
}
