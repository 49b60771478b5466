//! Exclusive claims on a study or engine run: at most one process runs it at a time.
//!
//! A claim is a `claim` row (study, pid, host, the process's start time, when) written inside
//! a `BEGIN IMMEDIATE` transaction, so processes racing for the same study are serialised by
//! SQLite's write lock and exactly one wins. The start time (field 22 of `/proc/<pid>/stat`,
//! clock ticks since boot) tells the holder from a later process that got the same pid. A
//! claim whose holder is gone from this host is taken over; one from another host cannot be
//! checked and is refused. The [`Claim`] guard deletes its row when released or dropped
//! (success, error, Ctrl-C); a killed process leaves a row that the next run takes over.

use super::{db_error, now, Store};
use anyhow::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::PathBuf;

/// Who holds (or held) a claim on a study.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// The study or run.
    pub study_id: i64,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name (uname nodename).
    pub host: String,
    /// The holder's start time: `/proc/<pid>/stat` field 22, clock ticks since boot.
    pub start_time: u64,
    /// When it was claimed (RFC 3339 UTC).
    pub claimed_at: String,
}

/// Why a study could not be claimed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// A live process on this host holds it.
    #[error(
        "study {} is being run by process {} on host {} since {}; wait for it or stop it",
        .0.study_id, .0.pid, .0.host, .0.claimed_at
    )]
    Held(ClaimInfo),
    /// A process on another host holds it; whether it still runs cannot be seen from here.
    #[error(
        "study {} is claimed by process {} on host {} since {}, which this host cannot check; wait for it to end there, or if it is gone, release it with `sqlite3 {} \"DELETE FROM claim WHERE study_id = {}\"`",
        .info.study_id, .info.pid, .info.host, .info.claimed_at, .db.display(), .info.study_id
    )]
    OtherHost {
        /// The holder.
        info: ClaimInfo,
        /// The database file.
        db: PathBuf,
    },
    /// There is no such study.
    #[error("no study or run {0} to claim; see `fslab list`")]
    NoStudy(i64),
}

/// A process's start time and whether it has exited: the one reading of
/// `/proc/<pid>/stat` (`safe::procs`).
pub(super) use crate::safe::procs::start_time as proc_start;

fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

impl ClaimInfo {
    /// The identity of this process, for a claim on `study`.
    fn mine(study_id: i64) -> Result<ClaimInfo> {
        let pid = std::process::id();
        let Some((start_time, _)) = proc_start(pid) else {
            anyhow::bail!("cannot read /proc/{pid}/stat to identify this process; mount /proc");
        };
        Ok(ClaimInfo {
            study_id,
            pid,
            host: host_name(),
            start_time,
            claimed_at: now(),
        })
    }

    /// Whether the holder still runs: `Some` when it is on this host, `None` when it is on
    /// another one (cannot be checked from here).
    pub fn is_alive(&self) -> Option<bool> {
        (self.host == host_name()).then(|| {
            proc_start(self.pid).is_some_and(|(start, exited)| start == self.start_time && !exited)
        })
    }

    /// The claim in the [`CLAIM_COLS`] of `r` from column `first` on.
    fn from_columns(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<ClaimInfo> {
        Ok(ClaimInfo {
            study_id: r.get(first)?,
            pid: r.get(first + 1)?,
            host: r.get(first + 2)?,
            start_time: r.get::<_, i64>(first + 3)? as u64,
            claimed_at: r.get(first + 4)?,
        })
    }
}

const CLAIM_COLS: &str = "study_id, pid, host, start_time, claimed_at";

/// An exclusive claim on a study, held until released or dropped.
#[must_use = "the claim is released when this guard is dropped"]
pub struct Claim {
    info: ClaimInfo,
    taken_over: Option<ClaimInfo>,
    /// Its own connection, so the claim can be released while the store is borrowed
    /// elsewhere (the runner holds it mutably until the end).
    conn: Option<Connection>,
    path: PathBuf,
}

impl Claim {
    /// This claim.
    pub fn info(&self) -> &ClaimInfo {
        &self.info
    }

    /// The claim of a process that was gone, if this one replaced it.
    pub fn taken_over(&self) -> Option<&ClaimInfo> {
        self.taken_over.as_ref()
    }

    /// Delete the claim row now (dropping the guard does the same, reporting errors on
    /// stderr instead).
    pub fn release(mut self) -> Result<()> {
        self.delete()
    }

    fn delete(&mut self) -> Result<()> {
        let Some(conn) = self.conn.take() else {
            return Ok(());
        };
        let i = &self.info;
        let what = format_args!(
            "releasing the claim on study {} (the next run takes it over)",
            i.study_id
        );
        conn.execute(
            "DELETE FROM claim WHERE study_id = ?1 AND pid = ?2 AND host = ?3 AND start_time = ?4",
            params![i.study_id, i.pid, i.host, i.start_time as i64],
        )
        .map(drop)
        .map_err(|e| db_error(&self.path, what, e))
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Err(e) = self.delete() {
            eprintln!("fslab: warning: {e:#}");
        }
    }
}

impl Store {
    /// Claim `study` (kind `study` or `run`) for this process in its own `BEGIN IMMEDIATE`
    /// transaction. Fails with a [`ClaimError`] when a live process holds it or when the
    /// holder is on another host; takes over the claim of a process that is gone (see
    /// [`Claim::taken_over`]).
    pub fn claim(&mut self, study: i64) -> Result<Claim> {
        self.immediate(&format!("claiming study {study}"), |st| {
            st.claim_in_transaction(study)
        })
    }

    /// [`Store::claim`] for a caller that already holds a `BEGIN IMMEDIATE` transaction (see
    /// [`Store::immediate`]); the claim takes effect when that transaction commits.
    pub fn claim_in_transaction(&self, study: i64) -> Result<Claim> {
        let what = format!("claiming study {study}");
        let exists: Option<i64> =
            self.value("SELECT 1 FROM study WHERE id = ?1", params![study], &what)?;
        if exists.is_none() {
            return Err(ClaimError::NoStudy(study).into());
        }
        let me = ClaimInfo::mine(study)?;
        let held = self.claim_of(study)?;
        let conn = self.target.connect().map_err(self.fail(&what))?;
        if let Some(h) = &held {
            match h.is_alive() {
                Some(true) => return Err(ClaimError::Held(h.clone()).into()),
                None => {
                    return Err(ClaimError::OtherHost {
                        info: h.clone(),
                        db: self.path.clone(),
                    }
                    .into())
                }
                // Gone: taken over below.
                Some(false) => {}
            }
        }
        self.exec(
            &format!("INSERT OR REPLACE INTO claim ({CLAIM_COLS}) VALUES (?1, ?2, ?3, ?4, ?5)"),
            params![
                me.study_id,
                me.pid,
                me.host,
                me.start_time as i64,
                me.claimed_at
            ],
            &what,
        )?;
        Ok(Claim {
            info: me,
            taken_over: held,
            conn: Some(conn),
            path: self.path.clone(),
        })
    }

    /// The current claim on `study`, if any.
    pub fn claim_of(&self, study: i64) -> Result<Option<ClaimInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {CLAIM_COLS} FROM claim WHERE study_id = ?1"),
                params![study],
                |r| ClaimInfo::from_columns(r, 0),
            )
            .optional()
            .map_err(self.fail(format_args!("reading the claim on study {study}")))
    }

    /// Studies and runs whose status is `running`, oldest first, each with its claim if any
    /// (no claim, or a claim whose holder [`ClaimInfo::is_alive`] says is gone: a killed
    /// run).
    pub fn unfinished_runs(&self) -> Result<Vec<(i64, Option<ClaimInfo>)>> {
        self.rows(
            "SELECT s.id, c.study_id, c.pid, c.host, c.start_time, c.claimed_at
             FROM study s LEFT JOIN claim c ON c.study_id = s.id
             WHERE s.status = 'running' ORDER BY s.id",
            [],
            |r| {
                // The claim's study is the study (the join's key), when there is a claim.
                let claimed: Option<i64> = r.get(1)?;
                let info = claimed.map(|_| ClaimInfo::from_columns(r, 1));
                Ok((r.get(0)?, info.transpose()?))
            },
        )
        .map_err(self.fail("listing unfinished runs"))
    }
}

#[cfg(test)]
#[path = "claim_tests.rs"]
mod tests;
