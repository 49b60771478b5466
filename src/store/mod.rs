//! The results store: every raw sample in SQLite, one transaction per repetition.
//!
//! WAL mode, foreign keys on, schema versioned with `PRAGMA user_version` and marked as
//! fslab's with `PRAGMA application_id` (see `doc/schema.md`). Only raw samples are written;
//! every summary is computed when reporting, so a report can be remade without measuring
//! again. The store knows nothing about any particular workload: metrics are rows in long
//! format. Every error names the database file.
//!
//! Opening (create, migrate, refuse other programs' files, read-only) is in `open.rs`;
//! writes in `write.rs`, reads in `read.rs` (returning the rows of `rows.rs`); exclusive
//! claims on a study in `claim.rs`; the paths an engine run owns in `owned.rs`.

mod claim;
mod manage;
mod open;
mod owned;
mod read;
mod rows;
mod status;
pub mod views;
mod write;

pub use crate::metric::Histogram;
pub use claim::{Claim, ClaimError, ClaimInfo};
pub use manage::{ImportReport, ListFilter, ListedStudy, RawSample, Removed};
pub use open::{APPLICATION_ID, SCHEMA_VERSION};
pub use owned::{OwnedKind, OwnedPath, OwnedRecorder, OwnedState};
pub use rows::{CellRow, SeriesRow, StudyData, StudyRow, TrialRow, WorkloadRow};
pub use status::{CellStatus, SeriesStatus, StudyStatus, TrialStatus};

use crate::metric::Metric;
use rusqlite::{Connection, ErrorCode};
use std::fmt::Display;
use std::path::{Path, PathBuf};

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// What a second connection opens to reach the same database (claims release through
    /// their own connection): the path, or the shared in-memory URI of a test store.
    target: open::Target,
    /// The schema version of the file as opened: [`SCHEMA_VERSION`] once opened for writing
    /// (migrated), the file's own version when opened read-only (an older store is read as it
    /// is), 0 for a read-only open of a file that holds no tables yet (reads find nothing).
    version: i64,
}

/// A new study or engine run to record.
#[derive(Debug, Clone, Default)]
pub struct NewStudy {
    /// `run` for one engine command (`fslab fdtree`), `study` for a study file.
    pub kind: crate::vocab::StudyKind,
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

/// When a repetition ran and how quiet the machine was around it: what the runner measured
/// besides the engine's metrics, kept with the repetition and stored with its trial.
#[derive(Debug, Clone, Default, serde::Serialize, PartialEq)]
pub struct RunWindow {
    /// Start time (RFC 3339, UTC).
    pub started_at: String,
    /// End time (RFC 3339, UTC).
    pub finished_at: String,
    /// Wall-clock seconds of the whole repetition, including its untimed set-up and cleanup.
    pub wall_seconds: f64,
    /// Why the machine was not quiet during it (other I/O, steal, load, other CPU), in one
    /// line (stored with line breaks folded to `; `); `None` when it was quiet, nobody
    /// measured, or it was stored before schema version 3.
    pub interference: Option<String>,
    /// Seconds the runner waited for a quiet machine before it (`[repetitions] settle`,
    /// `--settle`); `None` when not asked (or stored before schema version 3).
    pub settle_seconds: Option<f64>,
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
    pub status: TrialStatus,
    /// The error, if it failed.
    pub error: Option<String>,
    /// The cache policy applied before it (`cold`, `warm`, `fresh`, `none`).
    pub cache_policy: &'a str,
    /// When it ran, and how quiet the machine was.
    pub window: RunWindow,
    /// The measured values.
    pub metrics: &'a [Metric],
    /// Latency histograms, if the engine produced any.
    pub histograms: &'a [Histogram],
    /// Its time series (`--timeline`); empty when not asked.
    pub timeline: &'a [crate::metric::TimePoint],
    /// Why a completed repetition is left out of the statistics (`rerun`, `dropped`: it was
    /// disturbed); store it with status `discarded` and its repetition number. `None`
    /// otherwise.
    pub excluded: Option<&'a str>,
}

#[cfg(test)]
impl NewStudy {
    /// For tests: a study or run of `kind` named `name`, typed as `command_line`.
    pub(crate) fn named(kind: crate::vocab::StudyKind, name: &str, command_line: &str) -> NewStudy {
        NewStudy {
            kind,
            name: name.into(),
            command_line: command_line.into(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
impl<'a> NewTrial<'a> {
    /// For tests: repetition `repetition` (also its place in the order) of `workload` on
    /// `cell`, counted and quiet, under no cache policy, with `metrics`.
    pub(crate) fn counted(
        cell: i64,
        workload: i64,
        repetition: u32,
        metrics: &'a [Metric],
    ) -> NewTrial<'a> {
        NewTrial {
            cell,
            workload,
            repetition,
            order_index: repetition,
            status: TrialStatus::Ok,
            error: None,
            cache_policy: "none",
            window: RunWindow {
                started_at: "t".into(),
                finished_at: "t".into(),
                wall_seconds: 1.0,
                ..RunWindow::default()
            },
            metrics,
            histograms: &[],
            timeline: &[],
            excluded: None,
        }
    }

    /// For tests: the same trial, with the machine disturbed by `why` around it (`None`:
    /// quiet) and `settled` seconds waited before it.
    pub(crate) fn around(mut self, why: Option<String>, settled: Option<f64>) -> NewTrial<'a> {
        self.window.interference = why;
        self.window.settle_seconds = settled;
        self
    }
}

#[cfg(test)]
impl Store {
    /// For tests: the first column of the one row `sql` selects with `p`.
    pub(crate) fn one<T: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        p: impl rusqlite::Params,
    ) -> T {
        self.conn.query_row(sql, p, |r| r.get(0)).unwrap()
    }
}

#[cfg(test)]
impl NewCell {
    /// For tests: cell `idx` with `factors`, labelled by them (`journal=16MB fs=ext4`).
    pub(crate) fn of(idx: usize, factors: &[(&str, &str)], config: serde_json::Value) -> NewCell {
        NewCell {
            idx,
            label: factors
                .iter()
                .map(|(a, b)| format!("{a}={b}"))
                .collect::<Vec<_>>()
                .join(" "),
            factors: factors
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            config,
        }
    }
}

/// The current time as RFC 3339 UTC with millisecond precision.
pub use crate::units::timestamp_now as now;

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

/// An SQLite error as one line that names what was being done, the database file and,
/// where the kind of failure tells it, the fix.
pub(crate) fn db_error(path: &Path, what: impl Display, e: rusqlite::Error) -> anyhow::Error {
    let hint = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            " (another process kept it locked too long; retry when that one is done)"
        }
        Some(ErrorCode::ReadOnly) => {
            " (the file or its directory is read-only; choose another file with --db)"
        }
        Some(ErrorCode::DiskFull) => " (its file system is full; free space or choose another file with --db)",
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            " (the file is damaged or not an SQLite file; choose another file with --db)"
        }
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            " (check that it and its directory exist and are accessible, or choose another file with --db)"
        }
        _ => "",
    };
    anyhow::Error::new(e).context(format!(
        "{what} in results database {}{hint}",
        path.display()
    ))
}

impl Store {
    /// Where this database lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the file as opened (see `doc/schema.md`): [`SCHEMA_VERSION`]
    /// after an open for writing, possibly older after a read-only open, 0 for an empty file.
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// Whether this store was opened with [`Store::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.conn
            .is_readonly(rusqlite::DatabaseName::Main)
            .unwrap_or(true)
    }

    /// The context of a non-SQLite error (JSON, …): what was being done, in which file.
    fn at(&self, what: impl Display) -> String {
        format!("{what} in results database {}", self.path.display())
    }

    /// Execute `sql` with `p`; an error names `what` and the file.
    fn exec(&self, sql: &str, p: impl rusqlite::Params, what: impl Display) -> anyhow::Result<()> {
        self.conn.execute(sql, p).map(drop).map_err(self.fail(what))
    }

    /// The first column of the row `sql` selects with `p`, if there is one; an error names
    /// `what` and the file.
    fn value<T: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        p: impl rusqlite::Params,
        what: impl Display,
    ) -> anyhow::Result<Option<T>> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(sql, p, |r| r.get(0))
            .optional()
            .map_err(self.fail(what))
    }

    /// Map an SQLite error of `what` to one that names the file (see [`db_error`]).
    fn fail<'a>(
        &'a self,
        what: impl Display + 'a,
    ) -> impl FnOnce(rusqlite::Error) -> anyhow::Error + 'a {
        move |e| db_error(&self.path, what, e)
    }

    /// Run `f` inside one `BEGIN IMMEDIATE` transaction: the write lock is taken first (with
    /// the busy timeout), so what `f` reads cannot change before it writes. Rolled back when
    /// `f` or the commit fails.
    pub fn immediate<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Store) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(self.fail(what))?;
        let done = f(self).and_then(|v| {
            self.conn.execute_batch("COMMIT").map_err(self.fail(what))?;
            Ok(v)
        });
        if done.is_err() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        done
    }

    /// Direct access for the queries in this module.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
