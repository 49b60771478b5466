//! What differs between the two sides of `fslab compare`, so that a comparison cannot hide
//! it: the workloads' parameters and the configurations (the cells' resolved settings) above
//! the verdicts, the environments after them — only the entries whose values differ, as the
//! Phoronix Test Suite lists system differences between results. A difference in the
//! workloads' parameters also becomes a warning: the verdicts then measure the parameters as
//! well as the configurations. And whether the two sides ran interleaved: two runs made at
//! different times cannot tell a drift of the machine from a difference.

pub use super::model::{DiffSection, Difference, SourceTiming, Span};
use super::model::{ReportWarning, WarningKind};
use super::select::{pair_workloads, Loaded};
use crate::store::StudyData;
use serde_json::Value;
use std::collections::BTreeMap;

/// A JSON value as flat `key.sub` → text pairs (arrays as one compact JSON value).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    let text = match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
            return;
        }
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    };
    out.insert(prefix.to_string(), text);
}

/// A JSON value as a new flat map ([`flatten`]).
fn flat(v: &Value) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    flatten("", v, &mut m);
    m
}

/// The entries that differ between two flat maps, in key order.
fn diff(
    section: DiffSection,
    prefix: &str,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    out: &mut Vec<Difference>,
) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x != y {
            out.push(Difference {
                section,
                key: format!("{prefix}{k}"),
                a: x.cloned(),
                b: y.cloned(),
            });
        }
    }
}

/// The settings every cell of a side shares (a setting that varies within a side is a
/// factor of that side, shown in the cells' labels).
fn common_config(d: &StudyData) -> BTreeMap<String, String> {
    let mut cells = d.cells.iter().map(|c| flat(&c.config));
    let Some(mut common) = cells.next() else {
        return BTreeMap::new();
    };
    for m in cells {
        common.retain(|k, v| m.get(k) == Some(v));
    }
    common
}

/// Everything that differs between A and B: parameters of each paired workload, the settings
/// common to each side's configurations, and the environment.
pub fn differences(a: &Loaded, b: &Loaded) -> Vec<Difference> {
    let mut out = Vec::new();
    let pairs = pair_workloads(&a.data, &b.data);
    let several = pairs.len() > 1;
    for (wb, wa) in &pairs {
        let (Some(wa), Some(wb)) = (
            a.data.workloads.iter().find(|w| w.id == *wa),
            b.data.workloads.iter().find(|w| w.id == *wb),
        ) else {
            continue;
        };
        let (pa, pb) = (flat(&wa.params), flat(&wb.params));
        let prefix = if several {
            format!("{}: ", wa.label)
        } else {
            String::new()
        };
        diff(DiffSection::Parameters, &prefix, &pa, &pb, &mut out);
    }
    let env =
        |d: &StudyData| -> BTreeMap<String, String> { d.environment.iter().cloned().collect() };
    for (section, of) in [
        (
            DiffSection::Configuration,
            common_config as fn(&StudyData) -> _,
        ),
        (DiffSection::Environment, env),
    ] {
        diff(section, "", &of(&a.data), &of(&b.data), &mut out);
    }
    out
}

/// What every Observation of two sources run at different times carries.
pub const APART: &str = "Run at different times: drift cannot be told from a difference.";

/// When the two sides of a comparison ran, from the merged data (each cell's first factor
/// is its `source`, [`super::select::merge`]): each side's first start and last end over its
/// counted repetitions, and whether the two spans overlap — as the cells of one study run in
/// interleaved order do, and two separate runs do not. `None` unless both sides have counted
/// repetitions with timestamps that parse.
pub fn timing(d: &StudyData, sources: &[super::model::Source]) -> Option<SourceTiming> {
    use crate::store::TrialStatus;
    let [a, b] = sources else {
        return None;
    };
    let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let mut spans = Vec::new();
    let mut bounds = Vec::new();
    for s in [a, b] {
        let cells: Vec<i64> = d
            .cells
            .iter()
            .filter(|c| {
                c.factors
                    .first()
                    .is_some_and(|(f, l)| f == "source" && *l == s.spec)
            })
            .map(|c| c.id)
            .collect();
        // Each counted repetition's (start, end), every timestamp parsed.
        let times = d
            .trials
            .iter()
            .filter(|t| t.status == TrialStatus::Ok && cells.contains(&t.cell_id))
            .map(|t| {
                let (s, e) = (&t.window.started_at, &t.window.finished_at);
                Some(((at(s)?, s.as_str()), (at(e)?, e.as_str())))
            })
            .collect::<Option<Vec<_>>>()?;
        // The earliest start and the latest end, the first of equals.
        let first = times.iter().map(|t| t.0).min_by_key(|x| x.0)?;
        let last = times.iter().rev().map(|t| t.1).max_by_key(|x| x.0)?;
        bounds.push((first.0, last.0));
        spans.push(Span {
            source: s.spec.clone(),
            first_start: first.1.to_string(),
            last_end: last.1.to_string(),
        });
    }
    let interleaved = bounds[0].0 <= bounds[1].1 && bounds[1].0 <= bounds[0].1;
    Some(SourceTiming { interleaved, spans })
}

/// The line that says whether the two sides were interleaved, with their spans: `4 and 5 ran
/// at different times (4 10:00:00–10:00:02, 5 10:14:10–10:14:12 UTC), not interleaved: drift
/// cannot be told from a difference`.
pub fn timing_line(r: &super::model::ReportData) -> Option<String> {
    let t = r.timing.as_ref()?;
    let day = t.spans.first().map(|s| s.first_start.as_str());
    let spans = t
        .spans
        .iter()
        .map(|s| {
            format!(
                "{} {}–{}",
                s.source,
                crate::units::short_time(&s.first_start, day),
                crate::units::short_time(&s.last_end, day)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let names = t
        .spans
        .iter()
        .map(|s| s.source.as_str())
        .collect::<Vec<_>>()
        .join(" and ");
    Some(if t.interleaved {
        format!("{names} ran interleaved ({spans} UTC): drift touched both alike")
    } else {
        format!(
            "{names} ran at different times ({spans} UTC), not interleaved: drift cannot be told from a difference"
        )
    })
}

/// `false → true`, `(none) → 4k`.
pub fn change_text(d: &Difference) -> String {
    // Byte counts of the environment with their size beside them, as the environment
    // section prints them: `274877906944 (256.0 GiB)`.
    let side = |v: &Option<String>| match v {
        Some(v) => super::verdict::env_value(&d.key, v),
        None => "(none)".into(),
    };
    format!("{} → {}", side(&d.a), side(&d.b))
}

/// A difference as a table's row: its section, its key and each side's value (`(none)`
/// where a side has none).
pub fn cells(d: &Difference) -> [String; 4] {
    let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
    [
        d.section.as_str().into(),
        d.key.clone(),
        side(&d.a),
        side(&d.b),
    ]
}

/// The warning when the workloads' parameters differ: the verdicts then measure them too.
pub fn parameter_warning(diffs: &[Difference], a: &str, b: &str) -> Option<ReportWarning> {
    let params: Vec<&Difference> = diffs
        .iter()
        .filter(|d| d.section == DiffSection::Parameters)
        .collect();
    if params.is_empty() {
        return None;
    }
    let list = params
        .iter()
        .map(|d| format!("{} {}", d.key, change_text(d)))
        .collect::<Vec<_>>()
        .join(", ");
    let advice = format!(
        "the verdicts measure these parameters as well as the configurations; run {b} again with {a}'s parameters to compare the configurations alone"
    );
    Some(ReportWarning {
        kind: WarningKind::ParametersDiffer,
        workload: None,
        cell: None,
        metric: None,
        message: format!("The workloads' parameters differ between {a} and {b}: {list}; {advice}"),
        subject: list,
        advice,
    })
}

/// The differences shown before the answer — the workloads' parameters and the
/// configurations, which the verdicts measure along with the sides — or (`after`) those of
/// the environment, listed after the verdicts so that a dozen machine lines do not stand
/// before the answer.
pub fn part(r: &super::model::ReportData, after: bool) -> Vec<&Difference> {
    r.differences
        .iter()
        .filter(|d| (d.section == DiffSection::Environment) == after)
        .collect()
}

/// The line that stands for the environment's differences before the answer.
pub fn later_line(r: &super::model::ReportData) -> Option<String> {
    match part(r, true).len() {
        0 => None,
        1 => Some("environment: 1 entry differs (listed after the verdicts)".into()),
        n => Some(format!(
            "environment: {n} entries differ (listed after the verdicts)"
        )),
    }
}

/// The heading of the differences shown before the answer, `What differs (1 → 2)`, or
/// (`after`) of the environment's after the verdicts, `What differs in the environment (1 →
/// 2)`; `None` for a report of one source, and after the verdicts when the environment is
/// the same.
pub fn heading(r: &super::model::ReportData, after: bool) -> Option<String> {
    match r.sources.as_slice() {
        [a, b] if !after => Some(format!("What differs ({} → {})", a.spec, b.spec)),
        [a, b] if !part(r, true).is_empty() => Some(format!(
            "What differs in the environment ({} → {})",
            a.spec, b.spec
        )),
        _ => None,
    }
}

/// What the section says when nothing differs.
pub const NOTHING: &str =
    "nothing: the same parameters, configuration settings and environment on both sides";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::has;
    use serde_json::json;

    #[test]
    fn only_differing_entries_are_listed_with_both_sides() {
        let a = flat(&json!({"sync": false, "files": 5, "fs": {"type": "tmpfs"}, "roots": []}));
        let b = flat(
            &json!({"sync": true, "files": 5, "fs": {"type": "ext4"}, "roots": [], "x": "4k"}),
        );
        let mut out = Vec::new();
        diff(DiffSection::Parameters, "", &a, &b, &mut out);
        let got: Vec<(String, String)> = out
            .iter()
            .map(|d| (d.key.clone(), change_text(d)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("fs.type".to_string(), "tmpfs → ext4".to_string()),
                ("sync".to_string(), "false → true".to_string()),
                ("x".to_string(), "(none) → 4k".to_string()),
            ]
        );
    }

    #[test]
    fn the_warning_names_each_parameter_and_only_parameters_warn() {
        let d = |section, key: &str, a: &str, b: &str| Difference {
            section,
            key: key.into(),
            a: Some(a.into()),
            b: Some(b.into()),
        };
        let env_only = vec![d(DiffSection::Environment, "target_fs", "tmpfs", "ext4")];
        assert!(parameter_warning(&env_only, "1", "2").is_none());
        let both = vec![
            d(DiffSection::Parameters, "sync", "false", "true"),
            env_only[0].clone(),
        ];
        let w = parameter_warning(&both, "1", "2").unwrap();
        assert_eq!(w.kind, WarningKind::ParametersDiffer);
        has(&w.message, "differ between 1 and 2: sync false → true;");
        assert!(!w.message.contains("target_fs"));
    }

    #[test]
    fn byte_counts_show_their_size() {
        let d = Difference {
            section: DiffSection::Environment,
            key: "target_device_bytes".into(),
            a: Some("274877906944".into()),
            b: None,
        };
        assert_eq!(change_text(&d), "274877906944 (256.0 GiB) → (none)");
    }
}
