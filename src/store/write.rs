//! Writes of the results store: studies, environment, cells, workloads, series and one
//! transaction per repetition with all its samples. Every error names the database file.

use super::{
    db_error, now, CellStatus, NewCell, NewStudy, NewTrial, SeriesStatus, Store, StudyStatus,
};
use crate::stats::adaptive::StopReason;
use anyhow::{Context, Result};
use rusqlite::params;

/// An interference reason as one line: lines trimmed, empty ones dropped, the rest joined
/// with `; `. Nothing left is `None` (NULL means quiet or not measured).
fn one_line(reason: &str) -> Option<String> {
    let parts: Vec<&str> = reason
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

impl Store {
    /// Record a new study or run; its status starts as `running`.
    pub fn begin_study(&self, s: &NewStudy) -> Result<i64> {
        self.exec(
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
            format_args!("recording a new {} '{}'", s.kind, s.name),
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Store the environment of a study (replacing keys already there).
    pub fn set_environment(&self, study: i64, env: &[(String, String)]) -> Result<()> {
        let what = format!("storing the environment of study {study}");
        let mut st = self
            .conn
            .prepare(
                "INSERT INTO environment (study_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (study_id, key) DO UPDATE SET value = excluded.value",
            )
            .map_err(self.fail(&what))?;
        for (k, v) in env {
            st.execute(params![study, k, v]).map_err(self.fail(&what))?;
        }
        Ok(())
    }

    /// Set the final (or current) status of a study.
    pub fn set_study_status(&self, study: i64, status: StudyStatus) -> Result<()> {
        let finished = (status != StudyStatus::Running).then(now);
        self.exec(
            "UPDATE study SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![study, status, finished],
            format_args!("setting study {study} to {status}"),
        )
    }

    /// Add a cell (configuration) to a study; status `pending`.
    pub fn add_cell(&self, study: i64, c: &NewCell) -> Result<i64> {
        let factors = serde_json::to_string(&c.factors)
            .with_context(|| self.at(format_args!("encoding the factors of cell {}", c.label)))?;
        self.exec(
            "INSERT INTO cell (study_id, idx, label, factors, config, status) VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
            params![study, c.idx as i64, c.label, factors, c.config.to_string()],
            format_args!("adding cell {} to study {study}", c.label),
        )?;
        let id = self.conn.last_insert_rowid();
        // The study's view gains this cell's factors as columns.
        super::views::make_study_view(&self.conn, study)
            .map_err(self.fail(format_args!("making the view of study {study}")))?;
        Ok(id)
    }

    /// Set a cell's status and error.
    pub fn set_cell_status(
        &self,
        cell: i64,
        status: CellStatus,
        error: Option<&str>,
    ) -> Result<()> {
        self.exec(
            "UPDATE cell SET status = ?2, error = ?3 WHERE id = ?1",
            params![cell, status, error],
            format_args!("setting cell {cell} to {status}"),
        )
    }

    /// Store the exact provisioning commands and the superblock dump of a cell.
    pub fn set_cell_provisioning(
        &self,
        cell: i64,
        commands: &[String],
        superblock: &str,
    ) -> Result<()> {
        let commands = serde_json::to_string(commands)
            .with_context(|| self.at(format_args!("encoding the commands of cell {cell}")))?;
        self.exec(
            "UPDATE cell SET commands = ?2, superblock = ?3 WHERE id = ?1",
            params![cell, commands, superblock],
            format_args!("storing the provisioning of cell {cell}"),
        )
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
        self.exec(
            "INSERT INTO workload (study_id, idx, kind, label, params) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![study, idx as i64, kind, label, params.to_string()],
            format_args!("adding workload {label} to study {study}"),
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Create or update the series (cell × workload): status, stop reason, error.
    pub fn set_series(
        &self,
        cell: i64,
        workload: i64,
        status: SeriesStatus,
        stop_reason: Option<StopReason>,
        error: Option<&str>,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO series (cell_id, workload_id, status, stop_reason, error) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (cell_id, workload_id) DO UPDATE
             SET status = excluded.status, stop_reason = excluded.stop_reason, error = excluded.error",
            params![cell, workload, status, stop_reason, error],
            format_args!("setting the series of cell {cell} and workload {workload} to {status}"),
        )
    }

    /// Write one repetition and all its samples in one transaction.
    pub fn record_trial(&mut self, t: &NewTrial<'_>) -> Result<i64> {
        let what = format!("storing repetition {} of cell {}", t.repetition, t.cell);
        self.immediate(&what, |st| {
            let path = &st.path;
            let fail = |e: rusqlite::Error| db_error(path, &what, e);
            let tx = &st.conn;
            tx.execute(
                "INSERT INTO trial (cell_id, workload_id, repetition, order_index, status, error, cache_policy, started_at, finished_at, wall_seconds, interference, settle_seconds, excluded)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    t.cell,
                    t.workload,
                    t.repetition,
                    t.order_index,
                    t.status,
                    t.error,
                    t.cache_policy,
                    t.window.started_at,
                    t.window.finished_at,
                    t.window.wall_seconds,
                    t.window.interference.as_deref().and_then(one_line),
                    t.window.settle_seconds,
                    t.excluded
                ],
            )
            .map_err(fail)?;
            let id = tx.last_insert_rowid();
            let mut st = tx
                .prepare("INSERT INTO sample (trial_id, phase, metric, unit, value) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(fail)?;
            for m in t.metrics {
                st.execute(params![id, m.phase, m.name, m.unit.as_str(), m.value])
                    .map_err(|e| db_error(path, format_args!("{what}: sample {}", m.key()), e))?;
            }
            let mut hs = tx
                .prepare("INSERT INTO histogram (trial_id, phase, name, encoding, data) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(fail)?;
            for h in t.histograms {
                hs.execute(params![id, h.phase, h.name, h.encoding, h.data])
                    .map_err(fail)?;
            }
            let mut tl = tx
                .prepare("INSERT OR REPLACE INTO timeline (trial_id, t, metric, unit, value) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(fail)?;
            for p in t.timeline {
                tl.execute(params![id, p.t, p.name, p.unit.as_str(), p.value])
                    .map_err(fail)?;
            }
            Ok(id)
        })
    }

    /// Number of counted (`ok`) repetitions already stored for a series.
    pub fn completed_repetitions(&self, cell: i64, workload: i64) -> Result<u32> {
        let n: Option<i64> = self.value(
            "SELECT COUNT(*) FROM trial WHERE cell_id = ?1 AND workload_id = ?2 AND status = 'ok'",
            params![cell, workload],
            format_args!("counting the repetitions of cell {cell} and workload {workload}"),
        )?;
        Ok(n.unwrap_or(0) as u32)
    }

    /// The next free order index of a study (one past the largest used).
    pub fn next_order_index(&self, study: i64) -> Result<u32> {
        let n: Option<Option<i64>> = self.value(
            "SELECT MAX(t.order_index) FROM trial t JOIN cell c ON c.id = t.cell_id WHERE c.study_id = ?1",
            params![study],
            format_args!("reading the execution order of study {study}"),
        )?;
        Ok(n.flatten().map(|x| x as u32 + 1).unwrap_or(0))
    }

    /// End the cells and series of a killed study or run that are still `running`: back to
    /// `pending` when `resumable` (a study, continued by `--resume`), else `failed`.
    pub fn end_running_cells(&self, study: i64, resumable: bool) -> Result<()> {
        let (status, error): (&str, Option<&str>) = if resumable {
            ("pending", None)
        } else {
            ("failed", Some("the process running it was killed"))
        };
        for sql in [
            "UPDATE series SET status = ?2, error = COALESCE(error, ?3)
             WHERE status = 'running' AND cell_id IN (SELECT id FROM cell WHERE study_id = ?1)",
            "UPDATE cell SET status = ?2, error = COALESCE(error, ?3)
             WHERE status = 'running' AND study_id = ?1",
        ] {
            let what = format_args!("ending the running cells of study {study}");
            self.exec(sql, params![study, status, error], what)?;
        }
        Ok(())
    }

    /// Delete a study and everything under it.
    pub fn delete_study(&self, study: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM study WHERE id = ?1", params![study])
            .map_err(self.fail(format_args!("deleting study {study}")))?;
        super::views::drop_study_view(&self.conn, study)
            .map_err(self.fail(format_args!("dropping the view of study {study}")))?;
        Ok(())
    }
}
