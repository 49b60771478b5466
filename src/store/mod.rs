//! The results store: every raw sample in SQLite, one transaction per repetition.
//!
//! WAL mode, foreign keys on, schema versioned with `PRAGMA user_version` (see
//! `doc/schema.md`). Only raw samples are written; every summary is computed when reporting,
//! so a report can be remade without measuring again. The store knows nothing about any
//! particular workload: metrics are rows in long format.

mod read;

pub use crate::metric::Histogram;
pub use read::{CellRow, SeriesRow, StudyData, StudyRow, TrialRow, WorkloadRow};

use crate::metric::Metric;
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA_V1: &str = include_str!("schema.sql");

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A new study or engine run to record.
#[derive(Debug, Clone, Default)]
pub struct NewStudy {
    /// `run` for one engine command (`fslab fdtree`), `study` for a study file.
    pub kind: &'static str,
    /// Short name (the study's `name`, or the engine command).
    pub name: String,
    /// Free text.
    pub description: String,
    /// The command line as typed.
    pub command_line: String,
    /// The study file text or the engine parameters as JSON.
    pub spec: String,
    /// A hash of `spec`, used by `--resume` to check that the study did not change.
    pub spec_hash: String,
    /// Random seed used for ordering, if any.
    pub seed: Option<u64>,
}

/// A new cell (one configuration) of a study.
#[derive(Debug, Clone, Default)]
pub struct NewCell {
    /// Position in the plan (0-based).
    pub idx: usize,
    /// Human label, e.g. `journal=16MB fs=ext4`.
    pub label: String,
    /// Factor name and level label, in plan order.
    pub factors: Vec<(String, String)>,
    /// The resolved configuration as JSON.
    pub config: serde_json::Value,
}

/// One repetition of one workload on one cell, ready to be written.
#[derive(Debug, Clone)]
pub struct NewTrial<'a> {
    /// The cell id.
    pub cell: i64,
    /// The workload id.
    pub workload: i64,
    /// 1-based repetition number among counted repetitions; 0 for a discarded warm-up run.
    pub repetition: u32,
    /// Position in the study's execution order (0-based).
    pub order_index: u32,
    /// `ok`, `failed` or `discarded`.
    pub status: &'static str,
    /// The error, if it failed.
    pub error: Option<String>,
    /// The cache policy applied before it (`cold`, `warm`, `none`).
    pub cache_policy: &'a str,
    /// Start time (RFC 3339, UTC).
    pub started_at: String,
    /// End time (RFC 3339, UTC).
    pub finished_at: String,
    /// Wall-clock seconds of the whole repetition including untimed set-up.
    pub wall_seconds: f64,
    /// The measured values.
    pub metrics: &'a [Metric],
    /// Latency histograms, if the engine produced any.
    pub histograms: &'a [Histogram],
}

/// The current time as RFC 3339 UTC with millisecond precision.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The default database path: `$FSLAB_DB`, else `$XDG_DATA_HOME/fslab/results.db`
/// (`~/.local/share/fslab/results.db`).
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("FSLAB_DB") {
        return PathBuf::from(p);
    }
    directories::ProjectDirs::from("", "", "fslab")
        .map(|d| d.data_dir().join("results.db"))
        .unwrap_or_else(|| PathBuf::from("fslab-results.db"))
}

impl Store {
    /// Open (and create or migrate) the database at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).with_context(|| {
                    format!(
                        "cannot create {}; choose another file with --db",
                        parent.display()
                    )
                })?;
            }
        }
        let conn = Connection::open(path).with_context(|| {
            format!(
                "cannot open results database {}; choose another file with --db",
                path.display()
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// An in-memory store (tests).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = Store {
            conn,
            path: PathBuf::from(":memory:"),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Where this database lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> Result<()> {
        let v: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?;
        if v > SCHEMA_VERSION {
            bail!(
                "results database {} has schema version {v}, newer than this fslab ({SCHEMA_VERSION}); upgrade fslab or use another file with --db",
                self.path.display()
            );
        }
        if v == 0 {
            let tx = self.conn.transaction()?;
            tx.execute_batch(SCHEMA_V1)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Record a new study or run; its status starts as `running`.
    pub fn begin_study(&self, s: &NewStudy) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO study (kind, name, description, command_line, spec, spec_hash, tool_version, seed, status, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9)",
            params![
                s.kind,
                s.name,
                s.description,
                s.command_line,
                s.spec,
                s.spec_hash,
                env!("CARGO_PKG_VERSION"),
                s.seed.map(|x| x as i64),
                now()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Store the environment of a study (replacing keys already there).
    pub fn set_environment(&self, study: i64, env: &[(String, String)]) -> Result<()> {
        let mut st = self.conn.prepare(
            "INSERT INTO environment (study_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (study_id, key) DO UPDATE SET value = excluded.value",
        )?;
        for (k, v) in env {
            st.execute(params![study, k, v])?;
        }
        Ok(())
    }

    /// Set the final (or current) status of a study.
    pub fn set_study_status(&self, study: i64, status: &str) -> Result<()> {
        let finished = if status == "running" {
            None
        } else {
            Some(now())
        };
        self.conn.execute(
            "UPDATE study SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![study, status, finished],
        )?;
        Ok(())
    }

    /// Add a cell (configuration) to a study; status `pending`.
    pub fn add_cell(&self, study: i64, c: &NewCell) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO cell (study_id, idx, label, factors, config, status) VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
            params![
                study,
                c.idx as i64,
                c.label,
                serde_json::to_string(&c.factors)?,
                c.config.to_string()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Set a cell's status and error.
    pub fn set_cell_status(&self, cell: i64, status: &str, error: Option<&str>) -> Result<()> {
        self.conn.execute(
            "UPDATE cell SET status = ?2, error = ?3 WHERE id = ?1",
            params![cell, status, error],
        )?;
        Ok(())
    }

    /// Store the exact provisioning commands and the superblock dump of a cell.
    pub fn set_cell_provisioning(
        &self,
        cell: i64,
        commands: &[String],
        superblock: &str,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE cell SET commands = ?2, superblock = ?3 WHERE id = ?1",
            params![cell, serde_json::to_string(commands)?, superblock],
        )?;
        Ok(())
    }

    /// Add a workload to a study.
    pub fn add_workload(
        &self,
        study: i64,
        idx: usize,
        kind: &str,
        label: &str,
        params: &serde_json::Value,
    ) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO workload (study_id, idx, kind, label, params) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![study, idx as i64, kind, label, params.to_string()],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Create or update the series (cell × workload): status, stop reason, error.
    pub fn set_series(
        &self,
        cell: i64,
        workload: i64,
        status: &str,
        stop_reason: Option<&str>,
        error: Option<&str>,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT INTO series (cell_id, workload_id, status, stop_reason, error) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (cell_id, workload_id) DO UPDATE
             SET status = excluded.status, stop_reason = excluded.stop_reason, error = excluded.error",
            params![cell, workload, status, stop_reason, error],
        )?;
        Ok(())
    }

    /// Write one repetition and all its samples in one transaction.
    pub fn record_trial(&mut self, t: &NewTrial<'_>) -> Result<i64> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO trial (cell_id, workload_id, repetition, order_index, status, error, cache_policy, started_at, finished_at, wall_seconds)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                t.cell,
                t.workload,
                t.repetition,
                t.order_index,
                t.status,
                t.error,
                t.cache_policy,
                t.started_at,
                t.finished_at,
                t.wall_seconds
            ],
        )
        .with_context(|| format!("storing repetition {} of cell {}", t.repetition, t.cell))?;
        let id = tx.last_insert_rowid();
        {
            let mut st = tx.prepare("INSERT INTO sample (trial_id, phase, metric, unit, value) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for m in t.metrics {
                st.execute(params![id, m.phase, m.name, m.unit.as_str(), m.value])
                    .with_context(|| format!("storing sample {}", m.key()))?;
            }
            let mut hs = tx.prepare("INSERT INTO histogram (trial_id, phase, name, encoding, data) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for h in t.histograms {
                hs.execute(params![id, h.phase, h.name, h.encoding, h.data])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Number of counted (`ok`) repetitions already stored for a series.
    pub fn completed_repetitions(&self, cell: i64, workload: i64) -> Result<u32> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM trial WHERE cell_id = ?1 AND workload_id = ?2 AND status = 'ok'",
            params![cell, workload],
            |r| r.get(0),
        )?;
        Ok(n as u32)
    }

    /// The next free order index of a study (one past the largest used).
    pub fn next_order_index(&self, study: i64) -> Result<u32> {
        let n: Option<i64> = self
            .conn
            .query_row(
                "SELECT MAX(t.order_index) FROM trial t JOIN cell c ON c.id = t.cell_id WHERE c.study_id = ?1",
                params![study],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(n.map(|x| x as u32 + 1).unwrap_or(0))
    }

    /// Delete a study and everything under it.
    pub fn delete_study(&self, study: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM study WHERE id = ?1", params![study])?;
        Ok(())
    }

    /// Direct access for the read queries in this module.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

#[cfg(test)]
mod tests;
