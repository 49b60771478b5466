//! Per-study SQL views: `study_<id>_samples`, one row per sample of that study with each
//! factor's level in its own column, so `sqlite3` and pandas users need no `json_extract`.
//! Made (again) whenever a cell is recorded, for every study when a store is migrated to
//! schema version 5, and for every imported study; dropped with the study.

use rusqlite::{params, Connection};

/// The columns a per-study view has before the factors; [`SAMPLE_COLUMNS`] follow them. A
/// factor named like one of either gets a `factor_` prefix.
const FIXED: [&str; 4] = ["trial_id", "cell_idx", "cell", "workload_idx"];

/// The columns of a sample that every per-study view and `fslab export --raw` end with: what
/// ran, which repetition, and the value.
pub const SAMPLE_COLUMNS: [&str; 10] = [
    "workload_kind",
    "workload",
    "repetition",
    "order_index",
    "trial_status",
    "cache_policy",
    "phase",
    "metric",
    "unit",
    "value",
];

/// The name of the view of study `id`.
pub fn view_name(id: i64) -> String {
    format!("study_{id}_samples")
}

fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The factor names of a study's cells, in plan order (first seen first).
fn factor_names(conn: &Connection, study: i64) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(
        "SELECT json_extract(f.value, '$[0]') FROM cell c, json_each(c.factors) f
         WHERE c.study_id = ?1 ORDER BY c.idx, f.key",
    )?;
    let rows = st.query_map(params![study], |r| r.get::<_, Option<String>>(0))?;
    let names = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(crate::stats::distinct(names.into_iter().flatten()))
}

/// (Re)make the view of study `id` with one column per factor its cells have now.
pub fn make_study_view(conn: &Connection, study: i64) -> rusqlite::Result<()> {
    let mut cols = Vec::new();
    let fixed = FIXED.iter().chain(&SAMPLE_COLUMNS);
    let mut used: Vec<String> = fixed.map(|s| s.to_string()).collect();
    for f in factor_names(conn, study)? {
        let mut col = f.clone();
        while used.iter().any(|u| u.eq_ignore_ascii_case(&col)) {
            col = format!("factor_{col}");
        }
        used.push(col.clone());
        cols.push(format!(
            "(SELECT json_extract(f.value, '$[1]') FROM json_each(c.factors) f
              WHERE json_extract(f.value, '$[0]') = {}) AS {},",
            literal(&f),
            ident(&col)
        ));
    }
    let name = ident(&view_name(study));
    conn.execute_batch(&format!(
        "DROP VIEW IF EXISTS {name};
         CREATE VIEW {name} AS
         SELECT t.id AS trial_id, c.idx AS cell_idx, c.label AS cell, {}
                w.idx AS workload_idx, w.kind AS workload_kind, w.label AS workload,
                t.repetition, t.order_index, t.status AS trial_status, t.cache_policy,
                s.phase, s.metric, s.unit, s.value
         FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id
         JOIN workload w ON w.id = t.workload_id
         WHERE c.study_id = {study};",
        cols.join(" ")
    ))
}

/// Drop the view of study `id` (if any).
pub fn drop_study_view(conn: &Connection, study: i64) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "DROP VIEW IF EXISTS {};",
        ident(&view_name(study))
    ))
}

/// Make the view of every study (the migration to schema version 5).
pub fn make_all_views(conn: &Connection) -> rusqlite::Result<()> {
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM study ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in ids {
        make_study_view(conn, id)?;
    }
    Ok(())
}
