//! The `[[workload]]` tables of a study file as the matrix merges factor levels into them:
//! which keys a workload's kind takes (from the engine's own list of study keys, never from
//! serde's error text), relative paths made relative to the study file, and one table read
//! into a [`WorkloadSpec`] with an error that names the key of a value of the wrong type.

use super::file::StudyFile;
use crate::workload::{WorkloadKind, WorkloadSpec};

/// Whether the workload table `base` has `key` among its kind's study keys (the value's type
/// is checked when the cell's workload is read).
pub(super) fn accepts(base: &toml::Table, key: &str) -> bool {
    base.get("kind")
        .and_then(|k| k.as_str())
        .and_then(WorkloadKind::of)
        .is_some_and(|k| k.keys().contains(&key))
}

/// The first line of a (possibly multi-line) serde/toml message.
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(s)
        .to_string()
}

/// Make the relative `job = "…"` paths of fio workloads, and the `include` files of inline
/// jobs, relative to `base` (the study file's directory), as the study file means them.
pub fn resolve_job_paths(f: &mut StudyFile, base: &std::path::Path) {
    if base.as_os_str().is_empty() {
        return;
    }
    for t in f.workloads.iter_mut() {
        if t.get("kind").and_then(|k| k.as_str()) != Some("fio") {
            continue;
        }
        let absolute = |v: &str| {
            let p = std::path::Path::new(v);
            p.is_relative().then(|| base.join(p).display().to_string())
        };
        match t.get_mut("job") {
            Some(toml::Value::String(job)) => {
                if let Some(joined) = absolute(job) {
                    *job = joined;
                }
            }
            // An inline job's `include = "x.fio"` is relative to the study file too.
            Some(toml::Value::Table(sections)) => {
                for (_, s) in sections.iter_mut() {
                    let inc = s.as_table_mut().and_then(|s| s.get_mut("include"));
                    if let Some(toml::Value::String(inc)) = inc {
                        if let Some(joined) = absolute(inc.as_str()) {
                            *inc = joined;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Deserialize one workload table. A value of the wrong type is named by its key
/// (`dirs: invalid type: string "1", expected u64`).
pub fn workload_spec(t: &toml::Table) -> Result<WorkloadSpec, String> {
    toml::Value::Table(t.clone())
        .try_into::<WorkloadSpec>()
        .map_err(|e| {
            let msg = one_line(&e.to_string());
            match key_of_wrong_type(t, &msg) {
                Some(k) => format!("{k}: {msg}"),
                None => msg,
            }
        })
}

/// The key of `t` whose value serde's "invalid type: …" message shows (`string "1"`,
/// `integer `5``, `boolean `true``, `floating point `1.5``), when exactly one key holds it.
pub fn key_of_wrong_type(t: &toml::Table, msg: &str) -> Option<String> {
    let shown = msg
        .strip_prefix("invalid type: ")?
        .split(", expected")
        .next()?;
    let render = |v: &toml::Value| match v {
        toml::Value::String(s) => Some(format!("string {s:?}")),
        toml::Value::Integer(i) => Some(format!("integer `{i}`")),
        toml::Value::Boolean(b) => Some(format!("boolean `{b}`")),
        toml::Value::Float(f) => Some(format!("floating point `{f}`")),
        _ => None,
    };
    let mut keys = t
        .iter()
        .filter(|(_, v)| render(v).as_deref() == Some(shown))
        .map(|(k, _)| k.clone());
    let first = keys.next()?;
    keys.next().is_none().then_some(first)
}
