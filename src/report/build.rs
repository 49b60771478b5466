//! From the store's [`StudyData`] to the [`ReportData`] model: group the samples of counted
//! repetitions by workload, cell, phase and metric (values kept in execution order),
//! summarise them, lay out the tables, compare against the baselines and run the checks.
//! Pure: no I/O, the same input always gives the same model.

use super::advice::Origin;
use super::checks;
use super::comparisons;
use super::headline;
use super::latency;
use super::levels::numeric_levels;
use super::model::*;
use super::options::ReportOptions;
use super::warngroups;
use crate::metric::{Histogram, Unit};
use crate::stats::adaptive::Fate;
use crate::stats::{self, outliers, Quantity};
use crate::store::TrialStatus;
use crate::store::{StudyData, TrialRow};
use crate::vocab::{CachePolicy, Stored};
use crate::workload::WorkloadKind;
use anyhow::Result;
use std::collections::BTreeMap;

/// What the report is made from: the (possibly merged) study data, the histograms of its
/// trials, and a description of each source.
pub struct Input<'a> {
    /// Title of the report.
    pub title: String,
    /// The study or run (or both sides of a comparison).
    pub sources: Vec<Source>,
    /// Environment of each source.
    pub environments: Vec<Environment>,
    /// Everything stored about it.
    pub data: &'a StudyData,
    /// Histograms by trial id.
    pub histograms: &'a BTreeMap<i64, Vec<Histogram>>,
    /// What differs between the two sides of a comparison (`differences::differences`);
    /// empty otherwise.
    pub differences: Vec<super::differences::Difference>,
    /// The guest's measured cost, for a guest study with `[guest] calibrate`
    /// (`calibration_load::load`).
    pub guest_calibration: Option<super::calibration::GuestCalibration>,
}

/// Build the report model.
pub fn build(input: &Input<'_>, opts: &ReportOptions) -> Result<ReportData> {
    let d = input.data;
    let cells: Vec<CellInfo> = d.cells.clone();
    let mut factors = factors_of(&cells);
    let selection = Selection::parse(&opts.metrics, d)?;
    let baseline = comparisons::resolve_baseline(opts.baseline.as_deref(), &cells, &mut factors)?;

    let mut workloads = Vec::new();
    for w in &d.workloads {
        let trials: Vec<&TrialRow> = d
            .trials
            .iter()
            .filter(|t| t.workload_id == w.id && t.status == TrialStatus::Ok)
            .collect();
        let mut wr = WorkloadReport {
            id: w.id,
            kind: w.kind.clone(),
            label: w.label.clone(),
            params: w.params.clone(),
            phases: Vec::new(),
            tables: Vec::new(),
            stats: Vec::new(),
            comparisons: Vec::new(),
            latency: Vec::new(),
            cache_policy: cache_policy(&trials),
            telemetry: Vec::new(),
            timelines: timelines(&trials, &cells),
        };
        // A workload without any counted repetition stays in the report (its series show
        // why), with empty tables.
        fill_stats(&mut wr, &trials, &cells, &selection);
        wr.tables = tables(&wr);
        wr.comparisons =
            comparisons::compare(&wr, &cells, &factors, &baseline, opts, !selection.is_all());
        wr.latency = latency::curves(&wr, &trials, &cells, input.histograms, |op| {
            selection.is_all()
                || wr
                    .stats
                    .iter()
                    .any(|s| s.phase == op && s.unit == Unit::Millis)
        })?;
        workloads.push(wr);
    }
    // q over the report's families, then the verdicts, then what may explain them.
    comparisons::adjust(&mut workloads);
    for wr in &mut workloads {
        let explained: Vec<Option<String>> = wr
            .comparisons
            .iter()
            .map(|c| super::explain::explain(wr, c))
            .collect();
        for (c, e) in wr.comparisons.iter_mut().zip(explained) {
            c.explanation = e;
        }
    }

    let series = series_info(d, &cells, &workloads);
    let origin = if input.sources.is_empty() {
        Origin::of([d.study.kind])
    } else {
        Origin::of(input.sources.iter().map(|s| s.kind))
    };
    let mut warnings = checks::warnings(
        &cells,
        &workloads,
        &series,
        &input.environments,
        origin,
        opts,
    );
    warnings.extend(comparisons::multiple_comparison_warnings(&workloads));
    let (disturbed, busy) = interference_warnings(d, &cells, &workloads);
    warnings.extend(disturbed);
    // A busy machine is not helped by more repetitions: the hint of an inconclusive verdict
    // with a busy side says so instead.
    for &(wi, ci) in &busy {
        for c in workloads[wi].comparisons.iter_mut() {
            if c.more.is_some() && (c.cell == ci || c.baseline_cell == ci) {
                c.more = Some(super::disturbed::BUSY_MORE.into());
            }
        }
        // Nor is its variation: the other work made it.
        let (wl, cell) = (Some(&workloads[wi].label), Some(&cells[ci].label));
        for w in warnings.iter_mut().filter(|w| {
            w.kind == WarningKind::HighCv && w.workload.as_ref() == wl && w.cell.as_ref() == cell
        }) {
            let head = w.message.strip_suffix(&w.advice).unwrap_or(&w.message);
            w.message = format!("{head}{}", super::disturbed::BUSY_CV_ADVICE);
            w.advice = super::disturbed::BUSY_CV_ADVICE.into();
        }
    }
    warnings.extend(guest_warnings(
        &input.environments,
        input.guest_calibration.as_ref(),
    ));
    if let [a, b] = input.sources.as_slice() {
        warnings.extend(super::differences::parameter_warning(
            &input.differences,
            &a.spec,
            &b.spec,
        ));
    }
    // Between cells measured in a guest, an Observation says so and what the calibration
    // found of the guest's rankings on its metric; where the guest cannot rank, none.
    let guest = (!input.environments.is_empty()
        && input
            .environments
            .iter()
            .all(|e| e.entries.iter().any(|(k, _)| k == "guest")))
    .then_some(input.guest_calibration.as_ref());
    let (mut observations, unranked) =
        comparisons::observations(&workloads, &cells, &warnings, guest);
    // Two sources run at different times: every Observation says that drift is in it.
    let timing = super::differences::timing(d, &input.sources);
    if timing.as_ref().is_some_and(|t| !t.interleaved) {
        for o in &mut observations {
            o.text.push(' ');
            o.text.push_str(super::differences::APART);
        }
    }
    if !unranked.is_empty() {
        warnings.push(unranked_warning(&unranked));
    }
    let compared = workloads.iter().any(|w| !w.comparisons.is_empty());
    let observations_note = super::sweep::note(&factors, compared)
        .or_else(|| comparisons::observations_note(&workloads, &observations));
    let warning_groups = warngroups::group(&warnings, &opts.thresholds);
    Ok(ReportData {
        schema: SCHEMA,
        title: input.title.clone(),
        sources: input.sources.clone(),
        options: opts.clone(),
        factors,
        cells,
        workloads,
        series,
        observations,
        observations_note,
        warnings,
        warning_groups,
        environments: input.environments.clone(),
        differences: input.differences.clone(),
        timing,
        guest_calibration: input.guest_calibration.clone(),
    })
}

/// The cache policy the trials ran under: their common stored word, `mixed` when they
/// differ, `None` without trials.
fn cache_policy(trials: &[&TrialRow]) -> Option<Stored<CachePolicy>> {
    let first = &trials.first()?.cache_policy;
    Some(if trials.iter().all(|t| &t.cache_policy == first) {
        first.clone()
    } else {
        Stored::Other("mixed".to_string())
    })
}

/// Factors in plan order with their levels in order of first appearance.
fn factors_of(cells: &[CellInfo]) -> Vec<Factor> {
    let mut out: Vec<Factor> = Vec::new();
    for c in cells {
        for (name, level) in &c.factors {
            let f = match out.iter_mut().position(|f| &f.name == name) {
                Some(i) => &mut out[i],
                None => {
                    out.push(Factor {
                        name: name.clone(),
                        levels: Vec::new(),
                        numeric: None,
                        is_size: false,
                        baseline: Some(level.clone()),
                        sweep: false,
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            if !f.levels.contains(level) {
                f.levels.push(level.clone());
            }
        }
    }
    for f in &mut out {
        if let Some((v, size)) = numeric_levels(&f.levels) {
            f.numeric = Some(v);
            f.is_size = size;
        }
    }
    super::sweep::mark(&mut out);
    out
}

/// The `--metric` selection.
struct Selection(Vec<String>);

impl Selection {
    fn parse(tokens: &[String], d: &StudyData) -> Result<Selection> {
        let toks: Vec<String> = tokens
            .iter()
            .flat_map(|t| t.split(','))
            .map(|t| super::spelling::metric_token(t.trim()))
            .filter(|t| !t.is_empty())
            .collect();
        let ok = d.trials.iter().filter(|t| t.status == TrialStatus::Ok);
        let samples = ok.flat_map(|t| &t.samples);
        let keys = super::distinct(samples.map(|m| (m.phase.clone(), m.name.clone())));
        for tok in &toks {
            if !keys.iter().any(|(p, n)| Self::matches(tok, p, n)) {
                let names: Vec<String> = keys.iter().map(|(p, n)| format!("{p}.{n}")).collect();
                let shown = names[..names.len().min(40)].join(", ");
                let more = if names.len() > 40 { ", …" } else { "" };
                crate::bail_usage!(
                    "no metric '{tok}' in this study; --metric takes phase.metric, a metric or a phase; available: {shown}{more}"
                );
            }
        }
        Ok(Selection(toks))
    }

    fn matches(tok: &str, phase: &str, name: &str) -> bool {
        match tok.split_once('.') {
            Some((p, n)) => p == phase && n == name,
            None => tok == phase || tok == name,
        }
    }

    fn is_all(&self) -> bool {
        self.0.is_empty()
    }

    fn keeps(&self, phase: &str, name: &str) -> bool {
        self.is_all() || self.0.iter().any(|t| Self::matches(t, phase, name))
    }
}

/// Per cell, the time series of its first counted repetition (in execution order) that has
/// one, metric by metric.
fn timelines(trials: &[&TrialRow], cells: &[CellInfo]) -> Vec<TimelineSeries> {
    let mut out = Vec::new();
    for (ci, c) in cells.iter().enumerate() {
        let Some(t) = trials
            .iter()
            .filter(|t| t.cell_id == c.id && !t.timeline.is_empty())
            .min_by_key(|t| (t.order_index, t.id))
        else {
            continue;
        };
        for p in &t.timeline {
            match out
                .iter_mut()
                .find(|s: &&mut TimelineSeries| s.cell == ci && s.name == p.name)
            {
                Some(s) => s.points.push((p.t, p.value)),
                None => out.push(TimelineSeries {
                    cell: ci,
                    repetition: t.repetition,
                    name: p.name.clone(),
                    unit: p.unit,
                    points: vec![(p.t, p.value)],
                }),
            }
        }
    }
    // An engine that counts no progress (fio) stored its progress rate as 0 every second
    // before such series were left out: a flat line it never measured.
    out.retain(|s| s.name != crate::metric::PROGRESS_SERIES || s.points.iter().any(|p| p.1 != 0.0));
    out
}

/// One warning per workload and cell whose counted repetitions other activity disturbed,
/// naming the worst with its figure and summing them: `repetition 4 of journal=16MB: 2.4 GiB
/// of other I/O on vda — 5 of 6 disturbed, 5.1 GiB of other I/O in all`. Its advice reads
/// the disturbed policy the repetitions ran under ([`super::disturbed::policy_of`]); where
/// most repetitions of a series were disturbed it says the machine was busy and to quiet it,
/// not to add repetitions. Returns the warnings and the busy series (workload, cell index).
fn interference_warnings(
    d: &StudyData,
    cells: &[CellInfo],
    workloads: &[WorkloadReport],
) -> (Vec<ReportWarning>, Vec<(usize, usize)>) {
    use super::disturbed;
    use crate::stats::adaptive::Disturbed;
    let mut out = Vec::new();
    let mut busy = Vec::new();
    let policy = disturbed::policy_of(d.trials.iter().filter_map(|t| t.excluded.as_deref()));
    for (wi, (w, wr)) in d.workloads.iter().zip(workloads).enumerate() {
        for (ci, c) in cells.iter().enumerate() {
            let counted: Vec<&TrialRow> = d
                .trials
                .iter()
                .filter(|t| {
                    t.workload_id == w.id && t.cell_id == c.id && t.status == TrialStatus::Ok
                })
                .collect();
            let reps: Vec<(i64, String)> = counted
                .iter()
                .filter_map(|t| Some((t.repetition, t.window.interference.clone()?)))
                .collect();
            let left_out: Vec<(i64, String, &str)> = d
                .trials
                .iter()
                .filter(|t| t.workload_id == w.id && t.cell_id == c.id)
                .filter_map(|t| {
                    Some((
                        t.repetition,
                        t.window.interference.clone()?,
                        t.excluded.as_deref()?,
                    ))
                })
                .collect();
            let warn = |subject: String, message: String, advice: String| ReportWarning {
                kind: WarningKind::Interference,
                workload: Some(wr.label.clone()),
                cell: Some(c.label.clone()),
                metric: None,
                message,
                subject,
                advice,
            };
            if let Some(line) = disturbed::left_out_line(&c.label, &left_out) {
                let advice = if reps.is_empty() {
                    "nothing to do: the counted repetitions are the quiet ones (fslab show ID --all lists every repetition)".to_string()
                } else {
                    format!(
                        "the re-run limit was reached: {} of the {} counted repetitions are disturbed too (the next warning)",
                        reps.len(),
                        counted.len()
                    )
                };
                out.push(warn(
                    line.clone(),
                    format!("{line}; they are stored but not in the statistics"),
                    advice,
                ));
            }
            let all = counted.len() + left_out.len();
            let is_busy = disturbed::busy(reps.len() + left_out.len(), all);
            if is_busy {
                busy.push((wi, ci));
            }
            if let Some(line) = disturbed::disturbed_line(&c.label, &reps, counted.len()) {
                let (message, advice) = if is_busy {
                    let advice = disturbed::BUSY_ADVICE.to_string();
                    (
                        format!(
                            "the machine was busy: {} of {all} repetitions disturbed; {line} — {advice}",
                            reps.len() + left_out.len()
                        ),
                        advice,
                    )
                } else {
                    let advice = match policy {
                        Disturbed::Repeat => "the re-run limit (as many re-runs as repetitions) was reached, so these were kept: quiet the machine, or let each repetition wait for quiet ([repetitions] settle, --settle)",
                        Disturbed::Keep | Disturbed::Drop => "quiet the machine, let each repetition wait for quiet ([repetitions] settle, --settle), or re-run disturbed repetitions ([repetitions] disturbed = \"repeat\", --disturbed repeat)",
                    };
                    (
                        format!("{line}; their values are kept in the statistics — {advice}"),
                        advice.to_string(),
                    )
                };
                out.push(warn(line, message, advice));
            }
        }
    }
    (out, busy)
}

/// Group the samples of the workload's counted trials into per-cell statistics; telemetry
/// goes to `telemetry` unless `--metric` selects it.
fn fill_stats(wr: &mut WorkloadReport, trials: &[&TrialRow], cells: &[CellInfo], sel: &Selection) {
    // (phase, name) in first-appearance order with their unit.
    let mut keys: Vec<(String, String, Unit)> = Vec::new();
    for t in trials {
        for m in &t.samples {
            if sel.keeps(&m.phase, &m.name)
                && !keys.iter().any(|(p, n, _)| *p == m.phase && *n == m.name)
            {
                keys.push((m.phase.clone(), m.name.clone(), m.unit));
            }
            let shown = !m.is_telemetry() || !sel.is_all();
            if shown && !wr.phases.contains(&m.phase) && sel.keeps(&m.phase, &m.name) {
                wr.phases.push(m.phase.clone());
            }
        }
    }
    let caps = WorkloadKind::of(&wr.kind).map(WorkloadKind::caps);
    let headline: BTreeMap<&str, &str> = wr
        .phases
        .iter()
        .filter_map(|p| {
            let names: Vec<(&str, Unit)> = keys
                .iter()
                .filter(|k| &k.0 == p && !(crate::metric::is_telemetry(&k.1) && sel.is_all()))
                .map(|k| (k.1.as_str(), k.2))
                .collect();
            Some((p.as_str(), headline::pick(caps.as_ref(), p, &names)?))
        })
        .collect();
    for (ci, cell) in cells.iter().enumerate() {
        let mut ts: Vec<&&TrialRow> = trials.iter().filter(|t| t.cell_id == cell.id).collect();
        ts.sort_by_key(|t| (t.order_index, t.id));
        for (phase, name, unit) in &keys {
            let mut values = Vec::new();
            let mut reps = Vec::new();
            let mut order = Vec::new();
            let mut disturbed = Vec::new();
            for t in &ts {
                if let Some(m) = t
                    .samples
                    .iter()
                    .find(|m| &m.phase == phase && &m.name == name && m.unit == *unit)
                {
                    if t.window.interference.is_some() {
                        disturbed.push(values.len());
                    }
                    values.push(m.value);
                    reps.push(t.repetition);
                    order.push(t.order_index);
                }
            }
            // Times, rates, sizes, counts and shares cannot be negative: their intervals are
            // computed on the log scale (clipped at zero where a value is zero).
            let Some(summary) = stats::summarize_as(&values, Quantity::Positive) else {
                continue;
            };
            let telemetry = crate::metric::is_telemetry(name) && sel.is_all();
            let is_headline = !telemetry && headline.get(phase.as_str()) == Some(&name.as_str());
            let cm = CellMetric {
                cell: ci,
                phase: phase.clone(),
                name: name.clone(),
                unit: *unit,
                summary,
                // Judged below, over the workload's series together.
                outliers: Vec::new(),
                disturbed,
                values,
                repetitions: reps,
                order,
                headline: is_headline,
                // With `--metric`, the selection is the primary family.
                primary: if sel.is_all() {
                    is_headline && headline::is_primary(caps.as_ref(), name)
                } else {
                    !telemetry
                },
            };
            if telemetry {
                wr.telemetry.push(cm);
            } else {
                wr.stats.push(cm);
            }
        }
    }
    mark_outliers(&mut wr.stats);
}

/// Each series' outliers, judged over the workload's series together
/// ([`outliers::judge`]: a candidate is named when the headline series show more of them
/// than chance explains, or when it is extreme on its own).
fn mark_outliers(stats: &mut [CellMetric]) {
    let devs: Vec<Option<Vec<outliers::Deviation>>> = stats
        .iter()
        .map(|s| outliers::deviations(&s.values, true))
        .collect();
    let series: Vec<outliers::Series<'_>> = stats
        .iter()
        .zip(&devs)
        .map(|(s, d)| outliers::Series {
            deviations: d.as_deref(),
            headline: s.headline,
        })
        .collect();
    for (s, o) in stats.iter_mut().zip(outliers::judge(&series)) {
        s.outliers = o;
    }
}

/// A table title for a metric name and its units: (`Time`, `Time (s)`).
fn title(name: &str, units: &[Unit]) -> (String, String) {
    let us = super::distinct(units.iter().map(|u| u.as_str()));
    let words = match name {
        "elapsed" => "Time".to_string(),
        "rate" => "Rate".to_string(),
        "throughput" => "Throughput".to_string(),
        other => super::entries::upper_first(&super::verdict::metric_label(other)),
    };
    let title = format!("{words} ({})", us.join(", "));
    (words, title)
}

/// One table per metric name: times first, then rates, then the rest, each in order of
/// first appearance.
fn tables(wr: &WorkloadReport) -> Vec<TableSpec> {
    // The marks an engine stores to pick a headline (fio's `large_sequential = 1`) are not
    // results: no table of their own.
    let marks: Vec<&str> = WorkloadKind::of(&wr.kind)
        .map(|k| k.caps().headline_marked.iter().map(|m| m.0).collect())
        .unwrap_or_default();
    let mut names: Vec<(String, Unit)> = Vec::new();
    for s in &wr.stats {
        if marks.contains(&s.name.as_str()) {
            continue;
        }
        if !names.iter().any(|(n, _)| *n == s.name) {
            names.push((s.name.clone(), s.unit));
        }
    }
    let rank = |u: Unit| match u {
        Unit::Seconds => 0,
        u if u.is_rate() => 1,
        _ => 2,
    };
    names.sort_by_key(|(_, u)| rank(*u));
    names
        .into_iter()
        .map(|(name, _)| {
            let mut phases = Vec::new();
            let mut units = Vec::new();
            for p in &wr.phases {
                if let Some(s) = wr.stats.iter().find(|s| &s.phase == p && s.name == name) {
                    phases.push(p.clone());
                    units.push(s.unit);
                }
            }
            TableSpec {
                heading: title(&name, &units).0,
                title: title(&name, &units).1,
                metric: name,
                phases,
                units,
            }
        })
        .collect()
}

/// Repetitions, failures and stop reason of every cell × workload that has any trial or
/// series row.
fn series_info(d: &StudyData, cells: &[CellInfo], workloads: &[WorkloadReport]) -> Vec<SeriesInfo> {
    let mut out = Vec::new();
    for (ci, c) in cells.iter().enumerate() {
        for (wi, w) in workloads.iter().enumerate() {
            let ts: Vec<&TrialRow> = d
                .trials
                .iter()
                .filter(|t| t.cell_id == c.id && t.workload_id == w.id)
                .collect();
            let row = d
                .series
                .iter()
                .find(|s| s.cell_id == c.id && s.workload_id == w.id);
            if ts.is_empty() && row.is_none() && c.error.is_none() {
                continue;
            }
            let count = |st: TrialStatus| ts.iter().filter(|t| t.status == st).count();
            let excluded = |why: Fate| {
                ts.iter()
                    .filter(|t| t.excluded.as_deref() == why.excluded())
                    .count()
            };
            let error = row
                .and_then(|r| r.error.clone())
                .or_else(|| ts.iter().find_map(|t| t.error.clone()))
                .or_else(|| c.error.clone());
            out.push(SeriesInfo {
                cell: ci,
                workload: wi,
                ok: count(TrialStatus::Ok),
                failed: count(TrialStatus::Failed),
                discarded: ts
                    .iter()
                    .filter(|t| t.status == TrialStatus::Discarded && t.excluded.is_none())
                    .count(),
                rerun: excluded(Fate::Rerun),
                dropped: excluded(Fate::Drop),
                status: row.map_or_else(|| c.status.into(), |r| r.status),
                stop_reason: row.and_then(|r| r.stop_reason),
                error,
            });
        }
    }
    out
}

/// The differences between guest cells left out of the Observations because the guest's
/// calibration shows it cannot rank file systems on their metric.
fn unranked_warning(unranked: &[String]) -> ReportWarning {
    let subject = format!(
        "{} significant difference(s) between guest cells",
        unranked.len()
    );
    let advice = "rank these configurations on the host where their file systems exist, or calibrate on the file systems compared".to_string();
    ReportWarning {
        kind: WarningKind::Guest,
        workload: None,
        cell: None,
        metric: None,
        message: format!(
            "Not ranked, measured in a guest that cannot rank file systems on their metric: {}; {advice}",
            unranked.join("; ")
        ),
        subject,
        advice,
    }
}

/// One warning per source measured in a User-mode Linux guest (environment key `guest`).
fn guest_warnings(
    envs: &[Environment],
    calibration: Option<&super::calibration::GuestCalibration>,
) -> Vec<ReportWarning> {
    envs.iter()
        .filter_map(|e| {
            let get = |k: &str| entry(&e.entries, k);
            get("guest")?;
            // What the calibration supports, or fslab's own measurement and how to get one.
            let advice = format!(
                "{} (doc/guest.md)",
                super::calibration::advice(calibration)
            );
            let subject = format!(
                "{} (guest kernel {}, {} of memory, host kernel {})",
                e.source,
                get("guest_kernel").unwrap_or("unknown"),
                get("guest_mem").unwrap_or("unknown"),
                get("host_kernel").unwrap_or("unknown")
            );
            Some(ReportWarning {
                kind: WarningKind::Guest,
                workload: None,
                cell: None,
                metric: None,
                message: format!(
                    "Measured in a User-mode Linux guest: {subject}; its system calls, page cache and devices are the guest's, so {advice}"
                ),
                subject,
                advice,
            })
        })
        .collect()
}
