//! How long a study will take, for the ETA of `fslab study plan` and the budget check of
//! `study run`: measured times of the newest study of the same name when the store has them
//! (mean wall time per repetition of each cell × workload), otherwise a stated model: 2 s to
//! provision a cell, 1 s per cold-cache cycle, 4 s per fresh file system, 20,000 metadata
//! operations/s and 150 MB/s for the data a workload writes and removes, or the duration a
//! time-based workload declares.

use crate::plan::{CachePolicy, Study};
use crate::units::fmt_duration;
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Seconds assumed to provision one cell when nothing was measured.
const MODEL_PROVISION_S: f64 = 2.0;
/// Seconds assumed for one cold-cache cycle.
const MODEL_COLD_S: f64 = 1.0;
/// Seconds assumed for a fresh file system before a repetition (teardown, mkfs, mount).
const MODEL_FRESH_S: f64 = 4.0;
/// Metadata operations per second assumed.
const MODEL_OPS: f64 = 20_000.0;
/// Bytes per second assumed.
pub(crate) const MODEL_BYTES: f64 = 150e6;

/// Seconds one repetition of `w` is expected to take by the model.
pub fn model_rep_seconds(w: &WorkloadSpec, cache: CachePolicy) -> f64 {
    let cold = match cache {
        CachePolicy::Cold => MODEL_COLD_S,
        CachePolicy::Fresh => MODEL_FRESH_S,
        CachePolicy::Warm | CachePolicy::None => 0.0,
    };
    if let Some(d) = w.expected_duration() {
        return d.as_secs_f64() + cold + 1.0;
    }
    let req = w.build().map(|e| e.requirements()).unwrap_or_default();
    // Created and removed: every item and byte twice.
    2.0 * req.inodes as f64 / MODEL_OPS + 2.0 * req.bytes as f64 / MODEL_BYTES + cold + 0.2
}

/// What an earlier study measured of one series: mean wall seconds per repetition, and the
/// spread the design rule watches (the largest standard deviation of the logs over its
/// headline metrics; `None` under two repetitions or with values that are not positive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    pub secs: f64,
    pub log_sd: Option<f64>,
}

/// What was measured per series keyed by (cell label, workload label), and the study id.
pub(crate) type History = (i64, BTreeMap<(String, String), Measured>);

/// Mean measured seconds per repetition from the newest study of this name that has completed
/// repetitions (a newer one that failed or was interrupted before its first is passed over),
/// and how many studies of this name the store holds.
pub(crate) fn history(study: &Study, db: Option<PathBuf>) -> (Option<History>, usize) {
    // A plan changes nothing: no database is created just to look for history.
    let path = db.unwrap_or_else(crate::store::default_path);
    if !path.exists() {
        return (None, 0);
    }
    let Ok(store) = crate::store::Store::open_read_only(&path) else {
        return (None, 0);
    };
    let rows = store.studies_named(study.name()).unwrap_or_default();
    let found = rows
        .iter()
        .find_map(|row| measured_times(&store, row.id).map(|h| (row.id, h)));
    (found, rows.len())
}

/// What study `id` measured of its counted repetitions per (cell, workload) label: mean wall
/// seconds, and the spread of the headline metrics the runner's rule watches; `None` when it
/// has none.
fn measured_times(
    store: &crate::store::Store,
    id: i64,
) -> Option<BTreeMap<(String, String), Measured>> {
    use crate::runner::series::Series;
    let d = store.load(id).ok()??;
    let mut acc: BTreeMap<(String, String), Series> = BTreeMap::new();
    for t in d
        .trials
        .iter()
        .filter(|t| t.status == crate::store::TrialStatus::Ok)
    {
        let c = d.cells.iter().find(|c| c.id == t.cell_id)?;
        let w = d.workloads.iter().find(|w| w.id == t.workload_id)?;
        let kind = crate::workload::WorkloadKind::ALL
            .into_iter()
            .find(|k| k.as_str() == w.kind)?;
        acc.entry((c.label.clone(), w.label.clone()))
            .or_insert_with(|| Series::new(0, 0, kind))
            .add(&t.samples, t.window.wall_seconds);
    }
    if acc.is_empty() {
        return None;
    }
    Some(
        acc.into_iter()
            .map(|(k, s)| {
                let values: Vec<Vec<f64>> = s.headlines.iter().map(|(_, v)| v.clone()).collect();
                let m = Measured {
                    secs: s.mean_duration().unwrap_or(0.0),
                    log_sd: crate::stats::power::worst_log_sd(&values),
                };
                (k, m)
            })
            .collect(),
    )
}

/// Under `[repetitions] detect`, the repetitions each series needs for 80% power at the
/// spread an earlier study of this name measured of it (`hist`), between the study's `min`
/// and `max`, keyed by (cell index, workload index); series nothing measured are left out
/// (they run `min`, the design's n at the assumed cv). The spread comes from other data than
/// the study's own, so the choice cannot favour a difference the study then tests.
pub(crate) fn design(study: &Study, hist: Option<&History>) -> BTreeMap<(usize, usize), u32> {
    let r = &study.repetitions;
    let mut out = BTreeMap::new();
    let (Some(effect), Some((_, h))) = (r.detect, hist) else {
        return out;
    };
    for c in &study.cells {
        for (wi, w) in study.workloads.iter().enumerate() {
            let Some(s) = h
                .get(&(c.label.clone(), w.spec.label()))
                .and_then(|m| m.log_sd)
            else {
                continue;
            };
            let n = match s {
                0.0 => r.min,
                s => crate::stats::power::n_for_power(s, effect).unwrap_or(r.max),
            };
            out.insert((c.idx, wi), n.clamp(r.min, r.max));
        }
    }
    out
}

/// Refuse a `[repetitions] budget` shorter than one repetition of the study's quickest
/// workload by the plan's model: such a study would stop before it measured anything.
pub(crate) fn check_budget(study: &Study, file: &std::path::Path) -> Result<()> {
    let r = &study.repetitions;
    let Some(budget) = r.budget else {
        return Ok(());
    };
    let one = study
        .workloads
        .iter()
        .map(|w| model_rep_seconds(&w.spec, r.cache))
        .fold(f64::INFINITY, f64::min);
    if one.is_finite() && budget.as_secs_f64() < one {
        crate::bail_usage!(
            "{}: [repetitions] budget ({}) is shorter than one repetition (about {} by the plan's model); give a budget of at least that, or leave budget out",
            file.display(),
            crate::units::fmt_duration(budget),
            crate::units::fmt_duration(std::time::Duration::from_secs_f64(one))
        );
    }
    Ok(())
}

/// The ETA line after "ETA: ": a range of wall time from the measured history of the same
/// study when there is one, else from the model, capped by the budget. Never panics, however
/// large the repetitions and durations (saturating conversion).
/// `earlier`: how many studies of this name the store holds (for the model's reason); `extra`:
/// seconds (low, high) of what runs before the study (a guest's calibration), added.
pub(crate) fn eta_text(
    study: &Study,
    hist: Option<&History>,
    earlier: usize,
    extra: (f64, f64),
) -> String {
    let series = study.cells.len() * study.workloads.len();
    let (lo, hi, measured) = estimate(study, hist);
    let (lo, hi) = (lo + extra.0, hi + extra.1);
    let how = match hist {
        Some((id, _)) if measured > 0 => format!("from the times measured in study {id} ({measured} of {series} series)"),
        Some((id, _)) => format!("from a model (study {id}, the newest of this name with completed repetitions, ran other configurations or workloads)"),
        None if earlier > 0 => format!("from a model (none of the {earlier} earlier studies of this name in the store completed a repetition; later plans use measured times)"),
        None => "from a model (no earlier study of this name in the store; later plans use measured times)".into(),
    };
    format!("{}, {how}", range_text(lo, hi))
}

/// "A to B" (or "A" when they are within a second) of wall time.
pub(crate) fn range_text(lo: f64, hi: f64) -> String {
    let d = |s: f64| fmt_duration(crate::units::duration_from_secs_saturating(s));
    if (hi - lo).abs() < 1.0 {
        d(lo)
    } else {
        format!("{} to {}", d(lo), d(hi))
    }
}

/// Seconds (low, high) the study takes by its history where measured, else the model,
/// capped by its budget; and how many series were measured.
pub(crate) fn estimate(study: &Study, hist: Option<&History>) -> (f64, f64, usize) {
    let r = &study.repetitions;
    let planned = design(study, hist);
    let mut lo = 0.0;
    let mut hi = 0.0;
    let mut measured = 0usize;
    for c in &study.cells {
        lo += MODEL_PROVISION_S;
        hi += MODEL_PROVISION_S;
        for (i, w) in c.workloads.iter().enumerate() {
            let base = study.workloads[i].spec.label();
            let per = match hist.and_then(|(_, h)| h.get(&(c.label.clone(), base))) {
                Some(m) => {
                    measured += 1;
                    m.secs
                }
                None => model_rep_seconds(w, r.cache),
            };
            let warm = f64::from(r.warmup) * per;
            let n = planned.get(&(c.idx, i)).copied().unwrap_or(r.min);
            let most = if r.target_ci.is_some() || r.extend {
                r.max
            } else {
                n
            };
            lo += f64::from(n) * per + warm;
            hi += f64::from(most) * per + warm;
        }
    }
    if let Some(b) = r.budget {
        lo = lo.min(b.as_secs_f64());
        hi = hi.min(b.as_secs_f64());
    }
    (lo, hi, measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study(reps: &str) -> Study {
        Study::parse(&format!(
            "name = \"d\"\n{reps}[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"ext4\"\n[[factor]]\nname = \"j\"\nvalues = [{{ label = \"a\", journal_size = \"16M\" }}, {{ label = \"b\", journal_size = \"64M\" }}]\n[[workload]]\nkind = \"fdtree\"\nlevels = 2\n"
        ))
        .unwrap()
    }

    #[test]
    fn a_spread_measured_before_sets_that_series_n() {
        let s = study("");
        let w = s.workloads[0].spec.label();
        let cv15 = crate::stats::power::log_sd(0.15);
        let ten_seconds = |log_sd| Measured {
            secs: 10.0,
            log_sd: Some(log_sd),
        };
        let mut h = BTreeMap::new();
        // Cell a measured noisy, cell b quiet; only a needs more than the design's 6.
        h.insert(("j=a".to_string(), w.clone()), ten_seconds(cv15));
        h.insert(("j=b".to_string(), w), ten_seconds(0.001));
        let hist: History = (7, h);
        let d = design(&s, Some(&hist));
        let need = crate::stats::power::n_for_power(cv15, 0.10).unwrap();
        assert!(need > 6, "{need}");
        assert_eq!(d.get(&(0, 0)), Some(&need.min(30)));
        assert_eq!(d.get(&(1, 0)), Some(&6));
        // The ETA counts those repetitions: a's n and b's 6, ten seconds each, plus
        // provisioning.
        let (lo, hi, measured) = estimate(&s, Some(&hist));
        assert_eq!(measured, 2);
        let want = 2.0 * MODEL_PROVISION_S + 10.0 * f64::from(need.min(30) + 6);
        assert!(
            (lo - want).abs() < 1e-9 && (hi - want).abs() < 1e-9,
            "{lo} {hi} {want}"
        );
        // A fixed count is a fixed count; without history, the study's min.
        assert!(design(&study("[repetitions]\nmin = 3\n"), Some(&hist)).is_empty());
        assert!(design(&s, None).is_empty());
    }
}
