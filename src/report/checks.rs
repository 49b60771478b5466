//! The warnings section: results that should not be trusted as they are, each with what to
//! do in the words of its workload and cache policy ([`super::advice`]). Phases too short to
//! time, high variation, too few repetitions, outliers (from five values on, judged over the workload's series together, kept
//! in the statistics), a slow first repetition, drift across the execution order, the page
//! cache ([`super::cache_checks`]), series that stopped for a reason other than meeting their
//! target, and failures. Each warning carries its full line and the parts a group line lists
//! ([`super::warngroups`]).

use super::advice::{self, Origin, Policy, SetUp};
use super::cache_checks::{self, Machine};
use super::cpu_checks;
use super::draft::Draft;
use super::model::*;
use super::options::ReportOptions;
use crate::metric::Unit;
use crate::stats::adaptive::StopReason;
use crate::stats::{consistent, outliers, trend};
use crate::store::SeriesStatus;
use crate::vocab::Stored;
use crate::workload::WorkloadKind;

/// A first repetition this much worse than the median of the others is flagged (10%).
pub const FIRST_SLOWER_MIN: f64 = 0.10;
/// Drift is flagged at Mann–Kendall p below this …
pub const DRIFT_ALPHA: f64 = 0.05;
/// … when it changes the value by more than this over the series (5%).
pub const DRIFT_MIN: f64 = 0.05;
/// A slow first repetition or a drift is named only when the workload's headline series,
/// taken together, show it beyond chance at this level (`stats::consistent`).
pub const PATTERN_ALPHA: f64 = 0.05;

/// All warnings, in a stable order: per workload (aggregate checks, then per cell and
/// phase), then per series. `origin` says whether advice names study keys or flags.
pub fn warnings(
    cells: &[CellInfo],
    workloads: &[WorkloadReport],
    series: &[SeriesInfo],
    envs: &[Environment],
    origin: Origin,
    opts: &ReportOptions,
) -> Vec<ReportWarning> {
    let mut out = Vec::new();
    let machine = Machine::of(envs);
    let cpus = cpu_checks::usable_cpus(envs);
    let shared = cpu_checks::shared_tables(envs);
    let ctx = Context::of(envs, series, origin, opts);
    for (wi, w) in workloads.iter().enumerate() {
        too_short(w, cells, origin, opts, &mut out);
        few_repetitions(w, cells, series, workloads, origin, &mut out);
        out.extend(cache_checks::warnings((wi, w), cells, &machine, origin));
        out.extend(cpu_checks::warnings((wi, w), cells, cpus));
        out.extend(cpu_checks::shared_warnings(
            (wi, w),
            cells,
            shared.as_deref(),
        ));
        let pattern = Pattern::of(w);
        for s in w.stats.iter().filter(|s| s.headline) {
            per_metric((wi, w), &cells[s.cell], s, &ctx, &pattern, &mut out);
        }
    }
    for s in series {
        series_warnings(s, cells, workloads, &mut out);
    }
    out
}

/// Whether cell `cell`'s phase `phase` is too short to trust (`stats::too_short`: under the
/// minimum time and varying by more than the maximum coefficient of variation).
fn short_in(w: &WorkloadReport, cell: usize, phase: &str, opts: &ReportOptions) -> bool {
    w.stat(cell, phase, "elapsed").is_some_and(|s| {
        s.unit == Unit::Seconds && crate::stats::too_short(&s.summary, &opts.thresholds)
    })
}

/// Phases too short to trust in some configuration (under the minimum time, and varying by
/// more than the maximum coefficient of variation), one warning per phase. Their headline's
/// variation is not warned about again.
fn too_short(
    w: &WorkloadReport,
    cells: &[CellInfo],
    origin: Origin,
    opts: &ReportOptions,
    out: &mut Vec<ReportWarning>,
) {
    let min = opts.thresholds.min_phase_seconds;
    for phase in &w.phases {
        let short: Vec<&CellMetric> = w
            .stats
            .iter()
            .filter(|s| &s.phase == phase && s.name == "elapsed")
            .filter(|s| short_in(w, s.cell, phase, opts))
            .collect();
        let Some(shortest) = short
            .iter()
            .min_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean))
        else {
            continue;
        };
        let total = w
            .stats
            .iter()
            .filter(|s| &s.phase == phase && s.name == "elapsed")
            .count();
        let (n, cv) = (shortest.summary.n, shortest.summary.cv);
        let message = match cv.filter(|_| n >= crate::stats::warnings::VARIATION_MIN_N) {
            Some(cv) => format!(
                "mean time under {min} s and varying by more than {:.0}% in {} of {total} configurations (shortest {}, varying by {:.1}%, {}): too short to trust",
                opts.thresholds.max_cv * 100.0,
                short.len(),
                shortest.unit.fmt(shortest.summary.mean),
                cv * 100.0,
                cells[shortest.cell].label
            ),
            None => format!(
                "mean time under {min} s in {} of {total} configurations (shortest {}, {}), {n} repetition(s): {}; too short to trust",
                short.len(),
                shortest.unit.fmt(shortest.summary.mean),
                cells[shortest.cell].label,
                crate::stats::warnings::TOO_FEW_TO_TELL
            ),
        };
        out.push(
            Draft::new(
                WarningKind::TooShort,
                Some(w),
                None,
                Some(format!("{phase}.elapsed")),
            )
            .finish(
                phase.clone(),
                shortest.unit.fmt(shortest.summary.mean),
                message,
                advice::too_short(WorkloadKind::of(&w.kind), origin),
            ),
        );
    }
}

/// Series with fewer than two counted repetitions.
fn few_repetitions(
    w: &WorkloadReport,
    cells: &[CellInfo],
    series: &[SeriesInfo],
    workloads: &[WorkloadReport],
    origin: Origin,
    out: &mut Vec<ReportWarning>,
) {
    let wi = workloads.iter().position(|x| x.id == w.id);
    let few: Vec<&SeriesInfo> = series
        .iter()
        .filter(|s| Some(s.workload) == wi && s.ok == 1)
        .collect();
    if few.is_empty() {
        return;
    }
    let labels: Vec<&str> = few.iter().map(|s| cells[s.cell].label.as_str()).collect();
    let place = few_places(
        &labels,
        series.iter().filter(|s| Some(s.workload) == wi).count(),
    );
    let how = match origin {
        Origin::Run => "--repeat",
        Origin::Study => "repetitions.min in the study",
        Origin::Both => "--repeat, or repetitions.min in a study",
    };
    out.push(
        Draft::new(WarningKind::FewRepetitions, Some(w), None, None).finish(
            format!("only one repetition in {place}"),
            String::new(),
            "no standard deviation, interval or test is possible".into(),
            format!("run at least 3 ({how})"),
        ),
    );
}

/// The configurations with one repetition, as one warning names them: each of a few, else
/// their count of the workload's and the first [`LISTED`](super::warngroups::LISTED) (a sweep
/// of 126 points is one line, not 55).
fn few_places(labels: &[&str], of: usize) -> String {
    let listed = super::warngroups::LISTED;
    if labels.len() <= listed + 1 {
        return labels.join(", ");
    }
    let all = if labels.len() == of {
        format!("all {of}")
    } else {
        format!("{} of {of}", labels.len())
    };
    format!(
        "{all} configurations ({} …and {} more)",
        labels[..listed].join(", "),
        labels.len() - listed
    )
}

/// What the per-metric checks need to know about the report as a whole.
struct Context<'a> {
    origin: Origin,
    opts: &'a ReportOptions,
    /// The target's file-system type of an engine run (`target_fs`), if recorded.
    target_fs: Option<&'a str>,
    /// When the study was resumed (`resumed_at.N`), in order.
    resumed: Vec<&'a str>,
    /// The series, for their discarded warm-ups.
    series: &'a [SeriesInfo],
}

impl<'a> Context<'a> {
    fn of(
        envs: &'a [Environment],
        series: &'a [SeriesInfo],
        origin: Origin,
        opts: &'a ReportOptions,
    ) -> Context<'a> {
        let get = |k: &str| {
            envs.iter()
                .flat_map(|e| &e.entries)
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        Context {
            origin,
            opts,
            target_fs: get("target_fs"),
            resumed: resumed_at(envs),
            series,
        }
    }
}

/// When the sources were resumed (`resumed_at.1`, `resumed_at.2`, … of their environments), in
/// order.
pub fn resumed_at(envs: &[Environment]) -> Vec<&str> {
    let mut at: Vec<(u32, &str)> = envs
        .iter()
        .flat_map(|e| &e.entries)
        .filter_map(|(k, v)| Some((k.strip_prefix("resumed_at.")?.parse().ok()?, v.as_str())))
        .collect();
    at.sort_unstable();
    at.into_iter().map(|(_, v)| v).collect()
}

/// What a workload's headline series show together: how many have their first repetition
/// the worst, and a trend combined over all of them, each with the chance of seeing it with
/// nothing wrong (`stats::consistent`). Per-series warnings of either kind are shown only
/// when their pattern is beyond chance, so a report of many series does not warn by chance.
struct Pattern {
    /// Series whose first repetition is the worst, of how many, and the chance of that many.
    first: (usize, usize, f64),
    /// The combined trend's two-sided p (1 without series).
    drift_p: f64,
}

impl Pattern {
    fn of(w: &WorkloadReport) -> Pattern {
        let heads: Vec<&CellMetric> = w
            .stats
            .iter()
            .filter(|s| s.headline && s.values.len() >= 3)
            .collect();
        let better = |s: &CellMetric| super::verdict::higher_is_better(s.unit, &s.name);
        let ns: Vec<usize> = heads.iter().map(|s| s.values.len()).collect();
        let worst = heads
            .iter()
            .filter(|s| trend::first_slower(&s.values, better(s), 0.0).is_some())
            .count();
        let trends: Vec<_> = heads
            .iter()
            .filter_map(|s| {
                let sign = if better(s) { 1.0 } else { -1.0 };
                trend::mann_kendall(&s.values).map(|t| (t, sign))
            })
            .collect();
        Pattern {
            first: (worst, heads.len(), consistent::first_worst_p(&ns, worst)),
            drift_p: consistent::combined_trend(&trends).map_or(1.0, |(_, p)| p),
        }
    }
}

/// Variation, outliers, slow first repetition and drift of one headline metric.
fn per_metric(
    (wi, w): (usize, &WorkloadReport),
    cell: &CellInfo,
    s: &CellMetric,
    ctx: &Context<'_>,
    pattern: &Pattern,
    out: &mut Vec<ReportWarning>,
) {
    let (origin, opts) = (ctx.origin, ctx.opts);
    let key = format!("{}.{}", s.phase, s.name);
    let place = format!("{} · {key}", cell.label);
    let policy = Policy::of(w.cache_policy.as_ref().and_then(Stored::known), &w.params);
    let draft = |kind| Draft::new(kind, Some(w), Some(cell), Some(key.clone()));
    if let Some((cv, at_least)) = crate::stats::high_variation(&s.summary, &opts.thresholds) {
        // Not a phase too short to trust, which has its own warning saying what to do about it.
        if !short_in(w, s.cell, &s.phase, opts) {
            out.push(draft(WarningKind::HighCv).finish(
                place.clone(),
                format!("{:.1}%", cv * 100.0),
                crate::stats::variation_text(cv, at_least, opts.thresholds.max_cv),
                advice::high_cv(policy, origin),
            ));
        }
    }
    if !s.outliers.is_empty() {
        let dev = outliers::deviations(&s.values, true).unwrap_or_default();
        let list: Vec<String> = s
            .outliers
            .iter()
            .map(|&i| match dev.get(i) {
                Some(d) => format!(
                    "repetition {} = {}, {} {} the others (t = {:.1}, {})",
                    s.repetitions[i],
                    s.unit.fmt(s.values[i]),
                    super::verdict::fmt_pct(d.relative.abs() * 100.0) + "%",
                    if d.relative < 0.0 { "below" } else { "above" },
                    d.t,
                    super::verdict::fmt_p(d.p)
                ),
                None => format!(
                    "repetition {} = {}",
                    s.repetitions[i],
                    s.unit.fmt(s.values[i])
                ),
            })
            .collect();
        let reps: Vec<String> = s
            .outliers
            .iter()
            .map(|&i| format!("repetition {}", s.repetitions[i]))
            .collect();
        out.push(draft(WarningKind::Outlier).finish(
            place.clone(),
            reps.join(", "),
            format!(
                "outlier, further from the other repetitions than their spread explains: {}; kept in the statistics",
                list.join(", ")
            ),
            "look for interference during that repetition".into(),
        ));
    }
    let higher_better = super::verdict::higher_is_better(s.unit, &s.name);
    let (worst, of, first_p) = pattern.first;
    let first_slower = trend::first_slower(&s.values, higher_better, FIRST_SLOWER_MIN)
        .filter(|_| first_p < PATTERN_ALPHA);
    if let Some(f) = first_slower {
        // After a resume every cell is made again: its first repetition since then is a
        // first repetition too, and this one may not be the one to blame.
        let resumed = match ctx.resumed.as_slice() {
            [] => String::new(),
            at => format!(
                "; the study was resumed (at {}), which made its file systems again, so its first repetition after that is a first one too",
                at.join(", ")
            ),
        };
        out.push(draft(WarningKind::FirstSlower).finish(
            place.clone(),
            format!("{:.0}% worse", f.worse_by * 100.0),
            format!(
                "the first repetition ({}) is {:.0}% worse than the median of the others ({}), and the first is the worst in {worst} of the workload's {of} series (by chance: {}){resumed}",
                s.unit.fmt(f.first),
                f.worse_by * 100.0,
                s.unit.fmt(f.median_rest),
                super::verdict::fmt_p(first_p)
            ),
            advice::first_slower(
                policy,
                origin,
                SetUp::of(&cell.commands, ctx.target_fs),
                ctx.series
                    .iter()
                    .any(|x| x.cell == s.cell && x.workload == wi && x.discarded > 0),
            ),
        ));
    }
    let drift =
        trend::drift(&s.values, DRIFT_ALPHA, DRIFT_MIN).filter(|_| pattern.drift_p < PATTERN_ALPHA);
    if let Some(d) = drift {
        let dir = if d.relative_change > 0.0 {
            "upward"
        } else {
            "downward"
        };
        out.push(draft(WarningKind::Drift).finish(
            place,
            format!("{dir} {:.0}%", d.relative_change.abs() * 100.0),
            format!(
                "values drift {dir} by {:.0}% over {} repetitions in execution order (Mann–Kendall {}; over all the workload's series {})",
                d.relative_change.abs() * 100.0,
                s.values.len(),
                super::verdict::fmt_p(d.trend.p),
                super::verdict::fmt_p(pattern.drift_p)
            ),
            "the file system may be ageing or filling, or the machine getting busier; give every repetition a new file system (cache = \"fresh\" in [repetitions]) and keep the order interleaved".into(),
        ));
    }
}

/// Stop reasons other than a fixed count or a met target, and failures.
fn series_warnings(
    s: &SeriesInfo,
    cells: &[CellInfo],
    workloads: &[WorkloadReport],
    out: &mut Vec<ReportWarning>,
) {
    let (cell, w) = (&cells[s.cell], &workloads[s.workload]);
    let place = format!("{} · {}", cell.label, w.label);
    let draft = |kind| Draft::new(kind, Some(w), Some(cell), None);
    let n = s.ok;
    let stopped = match s.stop_reason {
        None | Some(StopReason::Fixed | StopReason::CiMet | StopReason::PowerMet) => None,
        Some(StopReason::Budget) => Some((
            format!("time budget, {n} repetitions"),
            format!("stopped by the time budget after {n} repetitions, before the interval target was met"),
            "raise the budget or accept wider intervals",
        )),
        Some(StopReason::MaxReps) => Some((
            format!("maximum of {n} repetitions"),
            format!("reached the maximum of {n} repetitions before its rule was met (the interval target, or the power to detect the declared effect)"),
            "the result varies more than the rule allows; raise repetitions.max, or accept wider intervals (a larger detect)",
        )),
    };
    if let Some((figure, statement, advice)) = stopped {
        let d = draft(WarningKind::StopReason);
        out.push(d.finish(place.clone(), figure, statement, advice.into()));
    }
    if s.failed > 0 || s.status == SeriesStatus::Failed {
        let err = s.error.as_deref().unwrap_or("no error recorded");
        out.push(draft(WarningKind::Failed).finish(
            place,
            format!("{} failed", s.failed),
            format!("{} failed repetition(s), {} counted: {err}", s.failed, s.ok),
            "fix the cause of the error shown and run again".into(),
        ));
    }
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
