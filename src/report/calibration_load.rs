//! Reading a study's guest calibration back from the store (`[guest] calibrate`,
//! doc/guest.md): the two calibration studies its environment names, their headline means
//! per file system through the ordinary report model, matched host against guest.

use super::build::{build, Input};
use super::calibration::{CalibrationRow, GuestCalibration, Mean, RatioRow};
use super::model::{entry, level, CellInfo};
use super::select;
use super::{ReportData, ReportOptions};
use crate::store::{Store, StudyRow, TrialStatus};
use anyhow::Result;

/// The calibration the main study's environment names (`guest_calibration_host`,
/// `guest_calibration_guest`): the newest study of each name made before the main study.
/// None when it has none, or either side has no completed repetition.
pub fn load(
    store: &Store,
    env: &[(String, String)],
    created_at: &str,
) -> Result<Option<GuestCalibration>> {
    let get = |k: &str| entry(env, k);
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
    let file_systems = super::distinct(hm.iter().map(|m| m.fs.clone()));
    let rows: Vec<CalibrationRow> = hm
        .iter()
        .filter_map(|a| CalibrationRow::of(a, gm.iter().find(|b| b.same(a))?))
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
            let ratio = RatioRow::of(r, base);
            let (hr, gr) = (ratio.host_ratio, ratio.guest_ratio);
            if hr.is_finite() && gr.is_finite() && hr > 0.0 && gr > 0.0 {
                ratios.push(ratio);
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

/// The report of one stored run, study or cell (`source` as `fslab report` takes it), titled
/// by its name, with the guest calibration its environment names when `calibrated`
/// ([`for_source`]).
pub(crate) fn report_of(
    store: &Store,
    source: &str,
    opts: &ReportOptions,
    calibrated: bool,
) -> Result<ReportData> {
    let loaded = select::load(store, source)?;
    let input = Input {
        title: loaded.source.name.clone(),
        sources: vec![loaded.source.clone()],
        environments: vec![select::environment(&loaded)],
        data: &loaded.data,
        histograms: &loaded.histograms,
        differences: Vec::new(),
        guest_calibration: calibrated.then(|| for_source(store, &loaded)).flatten(),
    };
    build(&input, opts)
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
    level(c, "fs").unwrap_or(&c.label).to_string()
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
    let r = report_of(store, &row.id.to_string(), &ReportOptions::default(), false)?;
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
                values: m.values.clone(),
            });
        }
    }
    Ok(Some(out))
}
