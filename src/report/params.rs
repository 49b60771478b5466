//! A workload's stored parameters laid out as tables for Markdown and HTML, never as raw
//! JSON: plain values as `parameter | value` rows (strings without quotes, lists joined), and
//! a parameter whose value is a set of named sections — fio's inline job: `[global]` and one
//! table per job — as one row per section with a column per option, the way a job file
//! reads.

use serde_json::Value;

/// A set of sections (fio's jobs): one row per section, one column per option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sections {
    /// The parameter (`job`).
    pub key: String,
    /// The options, in order of first appearance.
    pub columns: Vec<String>,
    /// Each section's name and its value of every option (empty where unset).
    pub rows: Vec<(String, Vec<String>)>,
}

/// A workload's parameters as tables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Params {
    /// `parameter → value`, with nested plain objects as `key.sub`.
    pub values: Vec<(String, String)>,
    /// Parameters made of sections.
    pub sections: Vec<Sections>,
}

/// A value as it would be written: strings without quotes, lists joined with `, `.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// Flat `key.sub → value` rows of an object of plain values (or deeper objects).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                flatten(&format!("{prefix}.{k}"), x, out);
            }
        }
        other => out.push((prefix.to_string(), text(other))),
    }
}

/// The tables of `params` (an object; anything else is one value named `parameters`).
pub fn layout(params: &Value) -> Params {
    let mut p = Params::default();
    let Some(map) = params.as_object() else {
        if !params.is_null() {
            p.values.push(("parameters".into(), text(params)));
        }
        return p;
    };
    for (k, v) in map {
        match v.as_object() {
            Some(inner) if !inner.is_empty() && inner.values().all(Value::is_object) => {
                let sections = inner.values().filter_map(Value::as_object);
                let columns = super::distinct(sections.flat_map(|s| s.keys().cloned()));
                // fio's `[global]` section first, as in a job file.
                let mut names: Vec<&String> = inner.keys().collect();
                names.sort_by_key(|n| *n != "global");
                let rows = names
                    .into_iter()
                    .map(|name| {
                        let s = &inner[name.as_str()];
                        let values = columns
                            .iter()
                            .map(|c| s.get(c).map(text).unwrap_or_default())
                            .collect();
                        (name.clone(), values)
                    })
                    .collect();
                p.sections.push(Sections {
                    key: k.clone(),
                    columns,
                    rows,
                });
            }
            _ => flatten(k, v, &mut p.values),
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_inline_fio_job_is_a_table_of_its_sections() {
        let p = layout(&json!({
            "kind": "fio",
            "label": "record-size sweep",
            "job": {
                "2-read-0004k": {"bs": "4k", "rw": "read"},
                "global": {"ioengine": "psync", "size": "16m", "stonewall": true},
                "1-write-0004k": {"bs": "4k", "rw": "write", "end_fsync": 1},
            }
        }));
        assert_eq!(
            p.values,
            [
                ("kind".to_string(), "fio".to_string()),
                ("label".into(), "record-size sweep".into())
            ]
        );
        let s = &p.sections[0];
        assert_eq!(s.key, "job");
        assert_eq!(s.rows[0].0, "global");
        assert_eq!(
            s.columns,
            ["bs", "end_fsync", "rw", "ioengine", "size", "stonewall"]
        );
        let row = |name: &str| &s.rows.iter().find(|r| r.0 == name).unwrap().1;
        assert_eq!(row("global"), &["", "", "", "psync", "16m", "true"]);
        assert_eq!(row("1-write-0004k"), &["4k", "1", "write", "", "", ""]);
    }

    #[test]
    fn plain_values_read_as_written() {
        let p = layout(&json!({
            "tests": [0, 1, 2], "file": "iozone.tmp", "direct": false,
            "limits": {"size": "1g", "deep": {"x": 1}}, "none": null
        }));
        assert_eq!(
            p.values,
            [
                ("direct".to_string(), "false".to_string()),
                ("file".into(), "iozone.tmp".into()),
                ("limits.deep.x".into(), "1".into()),
                ("limits.size".into(), "1g".into()),
                ("none".into(), "none".into()),
                ("tests".into(), "0, 1, 2".into()),
            ]
        );
        assert!(p.sections.is_empty());
        assert_eq!(
            layout(&json!("x")).values,
            [("parameters".into(), "x".into())]
        );
    }
}
