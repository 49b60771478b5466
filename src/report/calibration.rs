//! The guest's cost for one study, from its `[guest] calibrate` (doc/guest.md): the same
//! workloads on plain file systems both kernels have, measured on the host and in the
//! guest as two studies of their own. Per headline metric: how much slower the guest is,
//! and with two file systems, the ratio between them on each side (a guest that compresses
//! differences towards 1 shows a smaller one).

use super::build::{build, Input};
use super::model::CellInfo;
use super::select;
use crate::metric::Unit;
use crate::store::{Store, StudyRow, TrialStatus};
use anyhow::Result;
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

/// The calibration the main study's environment names (`guest_calibration_host`,
/// `guest_calibration_guest`): the newest study of each name made before the main study.
/// None when it has none, or either side has no completed repetition.
pub fn load(
    store: &Store,
    env: &[(String, String)],
    created_at: &str,
) -> Result<Option<GuestCalibration>> {
    let get = |k: &str| {
        env.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let (Some(host), Some(guest)) = (
        get("guest_calibration_host"),
        get("guest_calibration_guest"),
    ) else {
        return Ok(None);
    };
    let studies = store.list_studies()?;
    let newest = |name: &str| -> Option<StudyRow> {
        studies
            .iter()
            .filter(|s| s.name == name && s.created_at.as_str() <= created_at)
            .max_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)))
            .cloned()
    };
    let (Some(h), Some(g)) = (newest(host), newest(guest)) else {
        return Ok(None);
    };
    let (Some(hm), Some(gm)) = (means(store, &h)?, means(store, &g)?) else {
        return Ok(None);
    };
    let mut file_systems: Vec<String> = Vec::new();
    for m in &hm {
        if !file_systems.contains(&m.fs) {
            file_systems.push(m.fs.clone());
        }
    }
    let rows: Vec<CalibrationRow> = hm
        .iter()
        .filter_map(|a| {
            let b = gm.iter().find(|b| b.same(a))?;
            let slower = if a.unit.higher_is_better() {
                a.mean / b.mean
            } else {
                b.mean / a.mean
            };
            slower.is_finite().then(|| CalibrationRow {
                workload: a.workload.clone(),
                phase: a.phase.clone(),
                metric: a.metric.clone(),
                unit: a.unit,
                fs: a.fs.clone(),
                host: a.mean,
                host_n: a.n,
                guest: b.mean,
                guest_n: b.n,
                slower,
            })
        })
        .collect();
    let mut ratios = Vec::new();
    if let Some(first) = file_systems.first() {
        for r in rows.iter().filter(|r| &r.fs != first) {
            let Some(base) = rows.iter().find(|b| {
                &b.fs == first
                    && b.workload == r.workload
                    && b.phase == r.phase
                    && b.metric == r.metric
            }) else {
                continue;
            };
            let (hr, gr) = (r.host / base.host, r.guest / base.guest);
            if hr.is_finite() && gr.is_finite() && hr > 0.0 && gr > 0.0 {
                ratios.push(RatioRow {
                    workload: r.workload.clone(),
                    phase: r.phase.clone(),
                    metric: r.metric.clone(),
                    fs: r.fs.clone(),
                    against: first.clone(),
                    host_ratio: hr,
                    guest_ratio: gr,
                });
            }
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(GuestCalibration {
        host_study: h.id,
        guest_study: g.id,
        file_systems,
        rows,
        ratios,
    }))
}

/// [`load`] for a loaded source; a calibration that cannot be read is left out of the report
/// (and said on stderr), it never stops the report.
pub fn for_source(store: &Store, l: &select::Loaded) -> Option<GuestCalibration> {
    match load(store, &l.data.environment, &l.source.created_at) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fslab: note: the guest calibration could not be read: {e:#}");
            None
        }
    }
}

/// One headline mean of a calibration study.
struct Mean {
    workload: String,
    phase: String,
    metric: String,
    unit: Unit,
    fs: String,
    mean: f64,
    n: usize,
}

impl Mean {
    fn same(&self, o: &Mean) -> bool {
        self.workload == o.workload
            && self.phase == o.phase
            && self.metric == o.metric
            && self.fs == o.fs
    }
}

/// The file system of a calibration cell: its `fs` level, or its label without factors.
fn fs_of(c: &CellInfo) -> String {
    c.factors
        .iter()
        .find(|(k, _)| k == "fs")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| c.label.clone())
}

/// The headline means of a study, per workload, phase, metric and file system (None when it
/// has no completed repetition).
fn means(store: &Store, row: &StudyRow) -> Result<Option<Vec<Mean>>> {
    let Some(data) = store.load(row.id)? else {
        return Ok(None);
    };
    if !data.trials.iter().any(|t| t.status == TrialStatus::Ok) {
        return Ok(None);
    }
    let loaded = select::load(store, &row.id.to_string())?;
    let input = Input {
        title: loaded.source.name.clone(),
        sources: vec![loaded.source.clone()],
        environments: vec![select::environment(&loaded)],
        data: &loaded.data,
        histograms: &loaded.histograms,
        differences: Vec::new(),
        guest_calibration: None,
    };
    let r = build(&input, &super::ReportOptions::default())?;
    let mut out = Vec::new();
    for w in &r.workloads {
        for m in w.stats.iter().filter(|m| m.headline && m.summary.n > 0) {
            out.push(Mean {
                workload: w.label.clone(),
                phase: m.phase.clone(),
                metric: m.name.clone(),
                unit: m.unit,
                fs: fs_of(&r.cells[m.cell]),
                mean: m.summary.mean,
                n: m.summary.n,
            });
        }
    }
    Ok(Some(out))
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
