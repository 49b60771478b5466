//! Managing stored results: filtered listings with the target and file system of each run,
//! deletion of studies and runs (never one a live process is running), every raw sample of a
//! study with what it measured, and importing another store with new ids and provenance.

use super::rows::StudyRow;
use super::{now, ClaimInfo, Store, StudyStatus};
use crate::vocab::StudyKind;
use anyhow::{Context, Result};
use rusqlite::params;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `fslab list` shows.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only studies and runs with this name (`*` and `?` are wildcards).
    pub name: Option<String>,
    /// `study`, `run`, or an engine (`fdtree`, `iozone`, `dbench`): runs of that engine and
    /// studies with a workload of that kind.
    pub kind: Option<String>,
    /// Only those created at or after this RFC 3339 UTC time.
    pub since: Option<String>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

/// A listed study or run with what it ran on.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ListedStudy {
    /// The study row.
    #[serde(flatten)]
    pub study: StudyRow,
    /// A run's target directory; a study's work directory (or its number of cells).
    pub target: String,
    /// The file system(s): a run's `target_fs`, a study's configurations' file systems.
    pub fs: String,
    /// The engines of its workloads, in order.
    pub engines: Vec<String>,
    /// The file and id it was imported from (`PATH#ID`), if imported.
    pub imported_from: Option<String>,
}

/// One stored sample with everything that says what it measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RawSample {
    /// Study or run id.
    pub study_id: i64,
    /// Study or run name.
    pub study: String,
    /// Cell position in the plan.
    pub cell_idx: i64,
    /// Cell label.
    pub cell: String,
    /// Factor levels of the cell, in plan order.
    pub levels: Vec<(String, String)>,
    /// Workload engine.
    pub workload_kind: String,
    /// Workload label.
    pub workload: String,
    /// Repetition number (0: discarded warm-up or failed attempt).
    pub repetition: i64,
    /// Position in the study's execution order.
    pub order_index: i64,
    /// `ok`, `failed` or `discarded`.
    pub trial_status: String,
    /// Cache policy applied before it.
    pub cache_policy: String,
    /// Phase or test.
    pub phase: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Value.
    pub value: f64,
}

/// What `rm` removed of one study or run.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// Id.
    pub id: i64,
    /// A study or an engine run.
    pub kind: StudyKind,
    /// Name.
    pub name: String,
    /// Cells removed.
    pub cells: i64,
    /// Repetitions removed.
    pub trials: i64,
    /// Samples removed.
    pub samples: i64,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportReport {
    /// (source id, new id, kind, name, host) of every study copied.
    pub imported: Vec<(i64, i64, StudyKind, String, Option<String>)>,
    /// (source id, id here) of studies already present.
    pub skipped: Vec<(i64, i64)>,
    /// Source ids left out because they were still running there.
    pub running: Vec<i64>,
}

/// Whether a name filter uses wildcards.
fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

impl Store {
    /// Studies and runs matching `f`, newest first, with their target and file system.
    pub fn list_filtered(&self, f: &ListFilter) -> Result<Vec<ListedStudy>> {
        if self.version == 0 {
            return Ok(Vec::new());
        }
        let what = "listing studies";
        let mut rows: Vec<StudyRow> = match &f.name {
            Some(n) if is_glob(n) => {
                self.studies_where("WHERE name GLOB ?1 ORDER BY id DESC", params![n], what)?
            }
            Some(n) => self.studies_where("WHERE name = ?1 ORDER BY id DESC", params![n], what)?,
            None => self.list_studies()?,
        };
        if let Some(since) = &f.since {
            rows.retain(|s| s.created_at.as_str() >= since.as_str());
        }
        let mut out = Vec::new();
        for s in rows {
            let engines = self.engines_of(s.id)?;
            let keep = match f.kind.as_deref() {
                None => true,
                Some(k) if StudyKind::parse(k).is_some() => s.kind == k,
                Some(k) => engines.iter().any(|e| e == k),
            };
            if !keep {
                continue;
            }
            if f.limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let (target, fs) = self.target_and_fs(&s)?;
            let imported_from = self.provenance_of(s.id)?;
            out.push(ListedStudy {
                study: s,
                target,
                fs,
                engines,
                imported_from,
            });
        }
        Ok(out)
    }

    fn engines_of(&self, id: i64) -> Result<Vec<String>> {
        self.rows(
            "SELECT DISTINCT kind FROM workload WHERE study_id = ?1 ORDER BY idx",
            params![id],
            |r| r.get(0),
        )
        .map_err(self.fail(format_args!("reading the workloads of study {id}")))
    }

    fn provenance_of(&self, id: i64) -> Result<Option<String>> {
        if self.version < 5 {
            return Ok(None);
        }
        self.value(
            "SELECT source_path || '#' || source_id FROM provenance WHERE study_id = ?1",
            params![id],
            format_args!("reading the provenance of study {id}"),
        )
    }

    /// A run's target directory and file system; a study's work directory and the file
    /// systems of its configurations.
    fn target_and_fs(&self, s: &StudyRow) -> Result<(String, String)> {
        let what = format!("reading where study {} ran", s.id);
        let env = |k: &str| -> Result<Option<String>> {
            self.value(
                "SELECT value FROM environment WHERE study_id = ?1 AND key = ?2",
                params![s.id, k],
                &what,
            )
        };
        let sql = "SELECT config FROM cell WHERE study_id = ?1 ORDER BY idx";
        let rows = self.rows(sql, params![s.id], |r| r.get::<_, String>(0));
        let configs: Vec<serde_json::Value> = (rows.map_err(self.fail(&what))?.iter())
            .filter_map(|c| serde_json::from_str(c).ok())
            .collect();
        if s.kind == StudyKind::Run {
            let target = configs
                .iter()
                .find_map(|c| c.get("target").and_then(|t| t.as_str()).map(String::from))
                .unwrap_or_default();
            let fs = env("target_fs")?
                .or_else(|| {
                    configs
                        .iter()
                        .find_map(|c| c.get("fs_type").and_then(|t| t.as_str()).map(String::from))
                })
                .unwrap_or_default();
            return Ok((target, fs));
        }
        // A configuration's `fs` is its type, or an object with its type under `fs`.
        let fss = crate::stats::distinct(configs.iter().filter_map(|c| {
            let fs = c.get("fs")?;
            fs.as_str().or_else(|| fs.get("fs")?.as_str())
        }));
        let target = env("workdir")?.unwrap_or_else(|| format!("{} cells", configs.len()));
        Ok((target, fss.join(",")))
    }

    /// Remove studies and runs with everything under them, all in one transaction. Refuses
    /// (removing nothing) an id that does not exist, one a live process runs, and a killed
    /// run whose leftovers `fslab cleanup` has not removed yet.
    pub fn remove_studies(&mut self, ids: &[i64]) -> Result<Vec<Removed>> {
        self.immediate("removing studies", |st| {
            let mut out = Vec::new();
            for &id in ids {
                let Some(row) = st.study(id)? else {
                    crate::bail_usage!(
                        "no study or run {id} in {}; nothing was removed (see `fslab list`)",
                        st.path().display()
                    );
                };
                if let Some(c) = st.claim_of(id)? {
                    st.refuse_claimed(&c)?;
                }
                let count = |sql: &str| -> Result<i64> {
                    st.conn()
                        .query_row(sql, params![id], |r| r.get(0))
                        .map_err(st.fail(format_args!("counting the rows of study {id}")))
                };
                let cells = count("SELECT COUNT(*) FROM cell WHERE study_id = ?1")?;
                let trials = count(
                    "SELECT COUNT(*) FROM trial t JOIN cell c ON c.id = t.cell_id WHERE c.study_id = ?1",
                )?;
                let samples = count(
                    "SELECT COUNT(*) FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id WHERE c.study_id = ?1",
                )?;
                st.delete_study(id)?;
                out.push(Removed {
                    id,
                    kind: row.kind,
                    name: row.name,
                    cells,
                    trials,
                    samples,
                });
            }
            Ok(out)
        })
    }

    /// The refusal for removing a claimed study.
    fn refuse_claimed(&self, c: &ClaimInfo) -> Result<()> {
        let id = c.study_id;
        match c.is_alive() {
            Some(true) => crate::bail_usage!(
                "study/run {id} is running (process {} since {}); nothing was removed: wait for it or stop it, then remove it",
                c.pid,
                c.claimed_at
            ),
            None => crate::bail_usage!(
                "study/run {id} is claimed by process {} on host {}, which cannot be checked from here; nothing was removed: remove it there, or once it is gone there",
                c.pid,
                c.host
            ),
            Some(false) => crate::bail_usage!(
                "study/run {id} was killed (process {} is gone) and may have left files; nothing was removed: run `fslab cleanup` first",
                c.pid
            ),
        }
    }

    /// Every sample of a study or run, in execution order, with its cell, factor levels,
    /// workload, repetition and order index.
    pub fn raw_samples(&self, id: i64) -> Result<Vec<RawSample>> {
        let what = format!("reading the samples of study {id}");
        let rows = self
            .rows(
                "SELECT st.id, st.name, c.idx, c.label, c.factors, w.kind, w.label, t.repetition,
                        t.order_index, t.status, t.cache_policy, s.phase, s.metric, s.unit, s.value
                 FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id
                 JOIN workload w ON w.id = t.workload_id JOIN study st ON st.id = c.study_id
                 WHERE st.id = ?1 ORDER BY t.order_index, t.id, s.rowid",
                params![id],
                |r| {
                    Ok((
                        RawSample {
                            study_id: r.get(0)?,
                            study: r.get(1)?,
                            cell_idx: r.get(2)?,
                            cell: r.get(3)?,
                            levels: Vec::new(),
                            workload_kind: r.get(5)?,
                            workload: r.get(6)?,
                            repetition: r.get(7)?,
                            order_index: r.get(8)?,
                            trial_status: r.get(9)?,
                            cache_policy: r.get(10)?,
                            phase: r.get(11)?,
                            metric: r.get(12)?,
                            unit: r.get(13)?,
                            value: r.get(14)?,
                        },
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .map_err(self.fail(&what))?;
        rows.into_iter()
            .map(|(mut s, factors)| {
                s.levels = serde_json::from_str(&factors).with_context(|| {
                    self.at(format_args!("cell.factors of study {id} is not valid JSON"))
                })?;
                Ok(s)
            })
            .collect()
    }

    /// The identity of a study wherever it travels: the `origin` of its provenance if it was
    /// imported, else its host, creation time, id and name here.
    fn origin_of(&self, s: &StudyRow) -> Result<String> {
        if self.version >= 5 {
            let o: Option<String> = self.value(
                "SELECT origin FROM provenance WHERE study_id = ?1",
                params![s.id],
                "reading provenance",
            )?;
            if let Some(o) = o {
                return Ok(o);
            }
        }
        let host = self.host_of(s.id)?.unwrap_or_default();
        Ok(format!("{host}|{}|{}|{}", s.created_at, s.id, s.name))
    }

    fn host_of(&self, id: i64) -> Result<Option<String>> {
        self.value(
            "SELECT value FROM environment WHERE study_id = ?1 AND key = 'host'",
            params![id],
            format_args!("reading the host of study {id}"),
        )
    }

    /// The study here that is the measurement `origin`, if any (imported or native).
    fn study_with_origin(&self, origin: &str) -> Result<Option<i64>> {
        let found: Option<i64> = self.value(
            "SELECT study_id FROM provenance WHERE origin = ?1",
            params![origin],
            "reading provenance",
        )?;
        if found.is_some() {
            return Ok(found);
        }
        // A native study of this store (a copy of it being imported back).
        // `host|created_at|id|name` (see `origin_of`).
        let id = match origin.splitn(4, '|').collect::<Vec<_>>()[..] {
            [_, _, id, _] => id.parse::<i64>().ok(),
            _ => None,
        };
        let Some(id) = id else {
            return Ok(None);
        };
        match self.study(id)? {
            Some(row) if self.origin_of(&row)? == origin => Ok(Some(id)),
            _ => Ok(None),
        }
    }

    /// Copy every finished study and run of the store at `source` into this one with new
    /// ids, recording where each came from (`provenance`). Studies already here (imported
    /// before, or this store's own) are skipped; all is one transaction.
    pub fn import_from(&mut self, source: &Path) -> Result<ImportReport> {
        let src = Store::open_read_only_as(source, super::open::IMPORT_FIX)?;
        let abs: PathBuf = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
        if let Ok(mine) = std::fs::canonicalize(&self.path) {
            if mine == abs {
                crate::bail_usage!(
                    "{} is the database being imported into; name another store to import",
                    source.display()
                );
            }
        }
        let mut studies = src.list_studies()?;
        studies.reverse(); // oldest first: ids here keep the source's order
        self.immediate("importing studies", |st| {
            let mut rep = ImportReport::default();
            for s in studies {
                if s.status == StudyStatus::Running {
                    rep.running.push(s.id);
                    continue;
                }
                let origin = src.origin_of(&s)?;
                if let Some(here) = st.study_with_origin(&origin)? {
                    rep.skipped.push((s.id, here));
                    continue;
                }
                let new = st.copy_study(&src, &s)?;
                let host = src.host_of(s.id)?;
                st.conn()
                    .execute(
                        "INSERT INTO provenance (study_id, origin, source_path, source_id, source_host, imported_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![new, origin, abs.to_string_lossy(), s.id, host, now()],
                    )
                    .map_err(st.fail("recording provenance"))?;
                super::views::make_study_view(st.conn(), new)
                    .map_err(st.fail(format_args!("making the view of study {new}")))?;
                rep.imported.push((s.id, new, s.kind, s.name, host));
            }
            Ok(rep)
        })
    }

    /// Copy one study with everything under it from `src`; its new id.
    fn copy_study(&self, src: &Store, s: &StudyRow) -> Result<i64> {
        let d = src
            .load(s.id)?
            .with_context(|| src.at(format_args!("study {} vanished while importing", s.id)))?;
        let fail = |what: &str| self.fail(format!("{what} of imported study {}", s.id));
        let c = self.conn();
        c.execute(
            "INSERT INTO study (kind, name, description, command_line, spec, spec_hash, tool_version, seed, status, created_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![s.kind, s.name, s.description, s.command_line, s.spec, s.spec_hash, s.tool_version,
                    s.seed, s.status, s.created_at, s.finished_at],
        )
        .map_err(fail("copying the study row"))?;
        let id = c.last_insert_rowid();
        for (k, v) in &d.environment {
            c.execute(
                "INSERT INTO environment (study_id, key, value) VALUES (?1, ?2, ?3)",
                params![id, k, v],
            )
            .map_err(fail("copying the environment"))?;
        }
        let mut cells = std::collections::HashMap::new();
        for cell in &d.cells {
            c.execute(
                "INSERT INTO cell (study_id, idx, label, factors, config, commands, superblock, status, error)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![id, cell.idx, cell.label, serde_json::to_string(&cell.factors)?,
                        cell.config.to_string(), serde_json::to_string(&cell.commands)?,
                        cell.superblock, cell.status, cell.error],
            )
            .map_err(fail("copying a cell"))?;
            cells.insert(cell.id, c.last_insert_rowid());
        }
        let mut workloads = std::collections::HashMap::new();
        for w in &d.workloads {
            c.execute(
                "INSERT INTO workload (study_id, idx, kind, label, params) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, w.idx, w.kind, w.label, w.params.to_string()],
            )
            .map_err(fail("copying a workload"))?;
            workloads.insert(w.id, c.last_insert_rowid());
        }
        let map = |m: &std::collections::HashMap<i64, i64>, k: i64| {
            m.get(&k)
                .copied()
                .with_context(|| src.at(format_args!("study {} refers to a missing row {k}", s.id)))
        };
        for se in &d.series {
            c.execute(
                "INSERT INTO series (cell_id, workload_id, status, stop_reason, error) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![map(&cells, se.cell_id)?, map(&workloads, se.workload_id)?, se.status,
                        se.stop_reason, se.error],
            )
            .map_err(fail("copying a series"))?;
        }
        for t in &d.trials {
            c.execute(
                "INSERT INTO trial (cell_id, workload_id, repetition, order_index, status, error, cache_policy,
                                    started_at, finished_at, wall_seconds, interference, settle_seconds, excluded)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![map(&cells, t.cell_id)?, map(&workloads, t.workload_id)?, t.repetition,
                        t.order_index, t.status, t.error, t.cache_policy, t.window.started_at, t.window.finished_at,
                        t.window.wall_seconds, t.window.interference, t.window.settle_seconds, t.excluded],
            )
            .map_err(fail("copying a repetition"))?;
            let tid = c.last_insert_rowid();
            for m in &t.samples {
                c.execute(
                    "INSERT INTO sample (trial_id, phase, metric, unit, value) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![tid, m.phase, m.name, m.unit.as_str(), m.value],
                )
                .map_err(fail("copying a sample"))?;
            }
            for h in src.histograms(t.id)? {
                c.execute(
                    "INSERT INTO histogram (trial_id, phase, name, encoding, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![tid, h.phase, h.name, h.encoding, h.data],
                )
                .map_err(fail("copying a histogram"))?;
            }
            for p in &t.timeline {
                c.execute(
                    "INSERT OR REPLACE INTO timeline (trial_id, t, metric, unit, value) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![tid, p.t, p.name, p.unit.as_str(), p.value],
                )
                .map_err(fail("copying a time series"))?;
            }
        }
        Ok(id)
    }
}

#[cfg(test)]
#[path = "manage_tests.rs"]
mod tests;
