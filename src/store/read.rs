//! Read queries of the results store: studies, cells, workloads, trials and their samples.

use super::rows::{CellRow, SeriesRow, StudyData, StudyRow, TrialRow, WorkloadRow};
use super::{Histogram, Store};
use crate::metric::{Metric, Unit};
use anyhow::{Context, Result};
use rusqlite::{params, Row};

fn study_from_row(r: &Row<'_>) -> rusqlite::Result<StudyRow> {
    Ok(StudyRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        name: r.get(2)?,
        description: r.get(3)?,
        command_line: r.get(4)?,
        spec: r.get(5)?,
        spec_hash: r.get(6)?,
        tool_version: r.get(7)?,
        seed: r.get(8)?,
        status: r.get(9)?,
        created_at: r.get(10)?,
        finished_at: r.get(11)?,
    })
}

const STUDY_COLS: &str =
    "id, kind, name, description, command_line, spec, spec_hash, tool_version, seed, status, created_at, finished_at";

impl Store {
    /// Run the read `f`; its error names what was read and the database file.
    fn reading<T>(&self, what: impl std::fmt::Display, f: impl FnOnce() -> Result<T>) -> Result<T> {
        f().with_context(|| self.at(what))
    }

    /// The studies `filter` (SQL after `FROM study`) selects with `p`, as their rows; none
    /// in a store without tables. `what` names the read in its error.
    pub(super) fn studies_where(
        &self,
        filter: &str,
        p: &[&dyn rusqlite::ToSql],
        what: &str,
    ) -> Result<Vec<StudyRow>> {
        if self.version == 0 {
            return Ok(Vec::new());
        }
        let sql = format!("SELECT {STUDY_COLS} FROM study {filter}");
        self.rows(&sql, p, study_from_row).map_err(self.fail(what))
    }

    /// The rows `sql` selects with `p`, each made by `f`.
    pub(super) fn rows<T>(
        &self,
        sql: &str,
        p: impl rusqlite::Params,
        f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        self.conn().prepare(sql)?.query_map(p, f)?.collect()
    }

    /// All studies and runs, newest first.
    pub fn list_studies(&self) -> Result<Vec<StudyRow>> {
        self.studies_where("ORDER BY id DESC", &[], "listing studies")
    }

    /// One study by id.
    pub fn study(&self, id: i64) -> Result<Option<StudyRow>> {
        let what = format!("reading study {id}");
        Ok(self
            .studies_where("WHERE id = ?1", params![id], &what)?
            .pop())
    }

    /// The newest study with this name and kind `study`.
    pub fn latest_study_named(&self, name: &str) -> Result<Option<StudyRow>> {
        let what = format!("looking up study '{name}'");
        let filter = "WHERE name = ?1 AND kind = 'study' ORDER BY id DESC LIMIT 1";
        Ok(self.studies_where(filter, params![name], &what)?.pop())
    }

    /// Every study (kind `study`) with this name, newest first.
    pub fn studies_named(&self, name: &str) -> Result<Vec<StudyRow>> {
        self.studies_where(
            "WHERE name = ?1 AND kind = 'study' ORDER BY id DESC",
            params![name],
            &format!("looking up studies named '{name}'"),
        )
    }

    /// Cells of a study in plan order.
    pub fn cells(&self, study: i64) -> Result<Vec<CellRow>> {
        self.reading(format_args!("reading the cells of study {study}"), || {
            let sql = "SELECT id, idx, label, factors, config, commands, superblock, status, error FROM cell WHERE study_id = ?1 ORDER BY idx";
            // The JSON columns (factors, config, commands) are parsed below, naming the bad one.
            let rows: Vec<(CellRow, String, String, String)> = self.rows(sql, params![study], |r| {
                Ok((
                    CellRow {
                        id: r.get(0)?,
                        idx: r.get(1)?,
                        label: r.get(2)?,
                        factors: Vec::new(),
                        config: serde_json::Value::Null,
                        commands: Vec::new(),
                        superblock: r.get(6)?,
                        status: r.get(7)?,
                        error: r.get(8)?,
                    },
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?;
            rows.into_iter()
                .map(|(mut c, f, cfg, cmds)| {
                    c.factors = serde_json::from_str(&f).context("cell.factors is not valid JSON")?;
                    c.config = serde_json::from_str(&cfg).context("cell.config is not valid JSON")?;
                    c.commands = serde_json::from_str(&cmds).context("cell.commands is not valid JSON")?;
                    Ok(c)
                })
                .collect()
        })
    }

    /// Workloads of a study in order.
    pub fn workloads(&self, study: i64) -> Result<Vec<WorkloadRow>> {
        self.reading(format_args!("reading the workloads of study {study}"), || {
            let rows: Vec<(i64, i64, String, String, String)> = self.rows(
                "SELECT id, idx, kind, label, params FROM workload WHERE study_id = ?1 ORDER BY idx",
                params![study],
                |r| r.try_into(),
            )?;
            rows.into_iter()
                .map(|(id, idx, kind, label, p)| {
                    let params = serde_json::from_str(&p).context("workload.params is not valid JSON")?;
                    Ok(WorkloadRow { id, idx, kind, label, params })
                })
                .collect()
        })
    }

    /// Series outcomes of a study.
    pub fn series(&self, study: i64) -> Result<Vec<SeriesRow>> {
        self.reading(format_args!("reading the series of study {study}"), || {
            Ok(self.rows(
                "SELECT s.cell_id, s.workload_id, s.status, s.stop_reason, s.error FROM series s
                 JOIN cell c ON c.id = s.cell_id WHERE c.study_id = ?1 ORDER BY c.idx, s.workload_id",
                params![study],
                |r| {
                    Ok(SeriesRow {
                        cell_id: r.get(0)?,
                        workload_id: r.get(1)?,
                        status: r.get(2)?,
                        stop_reason: r.get(3)?,
                        error: r.get(4)?,
                    })
                },
            )?)
        })
    }

    /// Trials of a study in execution order, each with its samples.
    pub fn trials(&self, study: i64) -> Result<Vec<TrialRow>> {
        self.reading(format_args!("reading the repetitions of study {study}"), || {
            // A store older than version 3 (read-only opens do not migrate) has no columns
            // for the machine around a repetition: read them as unknown.
            let around = if self.version >= 3 {
                "t.interference, t.settle_seconds"
            } else {
                "NULL, NULL"
            };
            // Before version 6 no completed repetition was left out.
            let excluded = if self.version >= 6 {
                "t.excluded"
            } else {
                "NULL"
            };
            let mut trials: Vec<TrialRow> = self.rows(&format!(
                "SELECT t.id, t.cell_id, t.workload_id, t.repetition, t.order_index, t.status, t.error, t.cache_policy,
                        t.started_at, t.finished_at, t.wall_seconds, {around}, {excluded}
                 FROM trial t JOIN cell c ON c.id = t.cell_id WHERE c.study_id = ?1 ORDER BY t.order_index, t.id",
            ), params![study], |r| {
                Ok(TrialRow {
                    id: r.get(0)?,
                    cell_id: r.get(1)?,
                    workload_id: r.get(2)?,
                    repetition: r.get(3)?,
                    order_index: r.get(4)?,
                    status: r.get(5)?,
                    error: r.get(6)?,
                    cache_policy: r.get(7)?,
                    window: super::RunWindow {
                        started_at: r.get(8)?,
                        finished_at: r.get(9)?,
                        wall_seconds: r.get(10)?,
                        interference: r.get(11)?,
                        settle_seconds: r.get(12)?,
                    },
                    excluded: r.get(13)?,
                    samples: Vec::new(),
                    timeline: Vec::new(),
                })
            })?;
            let index: std::collections::HashMap<i64, usize> =
                trials.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
            let samples: Vec<(i64, String, String, String, f64)> = self.rows(
                "SELECT s.trial_id, s.phase, s.metric, s.unit, s.value FROM sample s
                 JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id
                 WHERE c.study_id = ?1 ORDER BY s.trial_id, s.rowid",
                params![study],
                |r| r.try_into(),
            )?;
            for (tid, phase, name, unit, value) in samples {
                let unit = Unit::parse(&unit)
                    .with_context(|| format!("unknown unit '{unit}' in sample of trial {tid}"))?;
                if let Some(&i) = index.get(&tid) {
                    trials[i].samples.push(Metric {
                        phase,
                        name,
                        unit,
                        value,
                    });
                }
            }
            if self.version >= 4 {
                let points: Vec<(i64, f64, String, String, f64)> = self.rows(
                    "SELECT l.trial_id, l.t, l.metric, l.unit, l.value FROM timeline l
                     JOIN trial t ON t.id = l.trial_id JOIN cell c ON c.id = t.cell_id
                     WHERE c.study_id = ?1 ORDER BY l.trial_id, l.t, l.metric",
                    params![study],
                    |r| r.try_into(),
                )?;
                for (tid, t, name, unit, value) in points {
                    if let (Some(&i), Some(unit)) = (index.get(&tid), Unit::parse(&unit)) {
                        trials[i].timeline.push(crate::metric::TimePoint {
                            t,
                            name,
                            unit,
                            value,
                        });
                    }
                }
            }
            Ok(trials)
        })
    }

    /// Histograms of one trial.
    pub fn histograms(&self, trial: i64) -> Result<Vec<Histogram>> {
        self.reading(format_args!("reading the histograms of repetition {trial}"), || {
            Ok(self.rows(
                "SELECT phase, name, encoding, data FROM histogram WHERE trial_id = ?1 ORDER BY phase, name",
                params![trial],
                |r| {
                    Ok(Histogram {
                        phase: r.get(0)?,
                        name: r.get(1)?,
                        encoding: r.get(2)?,
                        data: r.get(3)?,
                    })
                },
            )?)
        })
    }

    /// The time series of a repetition (`--timeline`), by time then metric; none in stores
    /// older than schema version 4.
    pub fn timeline(&self, trial: i64) -> Result<Vec<crate::metric::TimePoint>> {
        if self.version < 4 {
            return Ok(Vec::new());
        }
        self.reading(format_args!("reading the timeline of repetition {trial}"), || {
            Ok(self.rows(
                "SELECT t, metric, unit, value FROM timeline WHERE trial_id = ?1 ORDER BY t, metric",
                params![trial],
                |r| {
                    let unit: String = r.get(2)?;
                    Ok(crate::metric::TimePoint {
                        t: r.get(0)?,
                        name: r.get(1)?,
                        unit: Unit::parse(&unit).unwrap_or(Unit::Count),
                        value: r.get(3)?,
                    })
                },
            )?)
        })
    }

    /// Environment of a study, sorted by key.
    pub fn environment(&self, study: i64) -> Result<Vec<(String, String)>> {
        let sql = "SELECT key, value FROM environment WHERE study_id = ?1 ORDER BY key";
        self.reading(
            format_args!("reading the environment of study {study}"),
            || Ok(self.rows(sql, params![study], |r| Ok((r.get(0)?, r.get(1)?)))?),
        )
    }

    /// Everything about one study, or `None` if the id does not exist.
    pub fn load(&self, id: i64) -> Result<Option<StudyData>> {
        let Some(study) = self.study(id)? else {
            return Ok(None);
        };
        Ok(Some(StudyData {
            environment: self.environment(id)?,
            cells: self.cells(id)?,
            workloads: self.workloads(id)?,
            series: self.series(id)?,
            trials: self.trials(id)?,
            study,
        }))
    }
}
