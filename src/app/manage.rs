//! `fslab rm`, `fslab export` and `fslab import`: managing stored results.

use crate::cli::{ExportArgs, ExportFormat, ImportArgs, RmArgs};
use crate::report::csv::field;
use crate::store::RawSample;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `fslab rm ID…`.
pub fn rm(a: RmArgs, db: Option<PathBuf>) -> Result<()> {
    let path = db.unwrap_or_else(crate::store::default_path);
    // Removing needs the file to exist: never create an empty store to remove from.
    if !path.exists() {
        crate::bail_usage!(
            "no results database at {}: nothing to remove; choose the file with --db",
            path.display()
        );
    }
    let mut store = crate::store::Store::open(&path)?;
    for r in store.remove_studies(&a.ids)? {
        crate::outln!(
            "removed {} {} '{}': {} cell(s), {} repetition(s), {} sample(s)",
            r.kind,
            r.id,
            r.name,
            r.cells,
            r.trials,
            r.samples
        );
    }
    Ok(())
}

/// `fslab import OTHER.db`.
pub fn import(a: ImportArgs, db: Option<PathBuf>) -> Result<()> {
    if !a.file.exists() {
        crate::bail_usage!(
            "{} does not exist; name an fslab results database to import",
            a.file.display()
        );
    }
    let mut store = super::open_store(db)?;
    let rep = store.import_from(&a.file)?;
    for (src, new, kind, name, host) in &rep.imported {
        crate::outln!(
            "imported {kind} {src} '{name}'{} as {new}",
            host.as_deref()
                .map(|h| format!(" (host {h})"))
                .unwrap_or_default()
        );
    }
    if !rep.skipped.is_empty() {
        crate::outln!(
            "skipped {} already here: {}",
            rep.skipped.len(),
            rep.skipped
                .iter()
                .map(|(s, h)| format!("{s} (as {h})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !rep.running.is_empty() {
        crate::outln!(
            "left out {} still running in {} (import again when they have ended): {}",
            rep.running.len(),
            a.file.display(),
            rep.running
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if rep.imported.is_empty() && rep.skipped.is_empty() && rep.running.is_empty() {
        crate::outln!("{} holds no runs or studies", a.file.display());
    }
    Ok(())
}

/// `fslab export ID [--raw]`.
pub fn export(a: ExportArgs, db: Option<PathBuf>) -> Result<()> {
    let store = super::open_store_read_only(db)?;
    let Some(study) = store.study(a.id)? else {
        crate::bail_usage!(
            "no run {} in {}; see `fslab list` for the ids",
            a.id,
            store.path().display()
        );
    };
    let samples = store.raw_samples(a.id)?;
    let factors = factor_names(&samples);
    let text = match (a.raw, a.format) {
        (true, ExportFormat::Csv) => raw_csv(&samples, &factors),
        (true, ExportFormat::Json) => {
            let doc = serde_json::json!({
                "schema": "fslab.export.raw.v1",
                "study": {"id": study.id, "kind": study.kind, "name": study.name},
                "factors": factors,
                "samples": samples.iter().map(|s| {
                    let mut v = serde_json::to_value(s).unwrap_or_default();
                    v["levels"] = serde_json::Value::Object(
                        s.levels.iter().map(|(k, l)| (k.clone(), l.clone().into())).collect(),
                    );
                    v
                }).collect::<Vec<_>>(),
            });
            serde_json::to_string_pretty(&doc)? + "\n"
        }
        (false, f) => per_repetition(&study, &samples, &factors, f)?,
    };
    match &a.out {
        Some(p) => std::fs::write(p, text).with_context(|| {
            format!("cannot write {}; choose another file with -o", p.display())
        })?,
        None => crate::out!("{text}"),
    }
    Ok(())
}

/// The factor names of the samples' cells, first seen first.
fn factor_names(samples: &[RawSample]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for (f, _) in samples.iter().flat_map(|s| &s.levels) {
        if !v.contains(f) {
            v.push(f.clone());
        }
    }
    v
}

fn level<'a>(s: &'a RawSample, f: &str) -> &'a str {
    s.levels
        .iter()
        .find(|(k, _)| k == f)
        .map_or("", |(_, l)| l.as_str())
}

/// A factor's column name: prefixed where it would clash with a fixed column.
fn factor_column(f: &str, fixed: &[&str]) -> String {
    if fixed.contains(&f) {
        format!("factor_{f}")
    } else {
        f.to_string()
    }
}

/// The raw export's columns before the factors; the store's
/// [`SAMPLE_COLUMNS`](crate::store::views::SAMPLE_COLUMNS) follow them.
const RAW_HEAD: [&str; 4] = ["study_id", "study", "cell_idx", "cell"];

fn raw_csv(samples: &[RawSample], factors: &[String]) -> String {
    use crate::store::views::SAMPLE_COLUMNS;
    let fixed: Vec<&str> = RAW_HEAD.iter().chain(&SAMPLE_COLUMNS).copied().collect();
    let mut head: Vec<String> = RAW_HEAD.iter().map(|s| s.to_string()).collect();
    head.extend(factors.iter().map(|f| field(&factor_column(f, &fixed))));
    head.extend(SAMPLE_COLUMNS.iter().map(|s| s.to_string()));
    let mut o = head.join(",") + "\n";
    for s in samples {
        let mut row = vec![
            s.study_id.to_string(),
            field(&s.study),
            s.cell_idx.to_string(),
            field(&s.cell),
        ];
        row.extend(factors.iter().map(|f| field(level(s, f))));
        row.extend([
            field(&s.workload_kind),
            field(&s.workload),
            s.repetition.to_string(),
            s.order_index.to_string(),
            field(&s.trial_status),
            field(&s.cache_policy),
            field(&s.phase),
            field(&s.metric),
            field(&s.unit),
            format!("{}", s.value),
        ]);
        o.push_str(&row.join(","));
        o.push('\n');
    }
    o
}

/// A repetition: order index, cell position, workload label.
type RepKey = (i64, i64, String);

/// One row per repetition (cell × workload × order index), a column per `phase.metric
/// [unit]`.
fn per_repetition(
    study: &crate::store::StudyRow,
    samples: &[RawSample],
    factors: &[String],
    format: ExportFormat,
) -> Result<String> {
    let mut metrics: Vec<String> = Vec::new();
    // Keyed by order index and cell, in execution order.
    let mut reps: BTreeMap<RepKey, (&RawSample, BTreeMap<String, f64>)> = BTreeMap::new();
    for s in samples {
        let col = format!("{}.{} [{}]", s.phase, s.metric, s.unit);
        if !metrics.contains(&col) {
            metrics.push(col.clone());
        }
        reps.entry((s.order_index, s.cell_idx, s.workload.clone()))
            .or_insert_with(|| (s, BTreeMap::new()))
            .1
            .insert(col, s.value);
    }
    const FIXED: [&str; 8] = [
        "cell",
        "workload",
        "repetition",
        "order_index",
        "trial_status",
        "cache_policy",
        "study_id",
        "study",
    ];
    if format == ExportFormat::Json {
        let rows: Vec<serde_json::Value> = reps
            .values()
            .map(|(s, vals)| {
                serde_json::json!({
                    "cell": s.cell, "levels": s.levels.iter().map(|(k, l)| (k.clone(), serde_json::Value::from(l.clone()))).collect::<serde_json::Map<_, _>>(),
                    "workload": s.workload, "repetition": s.repetition, "order_index": s.order_index,
                    "trial_status": s.trial_status, "cache_policy": s.cache_policy, "values": vals,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "schema": "fslab.export.repetitions.v1",
            "study": {"id": study.id, "kind": study.kind, "name": study.name},
            "factors": factors, "metrics": metrics, "repetitions": rows,
        });
        return Ok(serde_json::to_string_pretty(&doc)? + "\n");
    }
    let mut head: Vec<String> = vec!["cell".into()];
    head.extend(factors.iter().map(|f| field(&factor_column(f, &FIXED))));
    // workload, repetition, order_index, trial_status, cache_policy.
    head.extend(FIXED[1..6].iter().map(|c| c.to_string()));
    head.extend(metrics.iter().map(|m| field(m)));
    let mut o = head.join(",") + "\n";
    for (s, vals) in reps.values() {
        let mut row = vec![field(&s.cell)];
        row.extend(factors.iter().map(|f| field(level(s, f))));
        row.extend([
            field(&s.workload),
            s.repetition.to_string(),
            s.order_index.to_string(),
            field(&s.trial_status),
            field(&s.cache_policy),
        ]);
        row.extend(
            metrics
                .iter()
                .map(|m| vals.get(m).map(|v| format!("{v}")).unwrap_or_default()),
        );
        o.push_str(&row.join(","));
        o.push('\n');
    }
    Ok(o)
}
