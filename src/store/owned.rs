//! Paths an ad-hoc engine run created or is about to create (`owned_path` rows), so that
//! `fslab cleanup` and `fdtree -R` can prove a leftover is fslab's own before removing it.
//!
//! A path is recorded `intended` before it is made, `created` with its device and inode once
//! it exists (a later directory at the same path with another inode is not ours), and
//! `removed` when the run took it away.

use super::{now, Store};
use crate::vocab::{words, EntryKind};
use anyhow::{Context, Result};
use rusqlite::params;
use std::path::{Path, PathBuf};

/// What an engine run made at a path: the engine (its stored name, `fdtree`) and the kind of
/// entry. Stored in `owned_path.kind` as `ENGINE_ENTRY` (`fdtree_tree`, `iozone_file`,
/// `dbench_dir`, `fio_dir`); the store knows no engine, only the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedKind {
    /// The engine's stored name.
    pub engine: String,
    /// What the entry is.
    pub entry: EntryKind,
}

impl OwnedKind {
    /// `engine`'s entry of kind `entry`.
    pub fn new(engine: impl Into<String>, entry: EntryKind) -> OwnedKind {
        OwnedKind {
            engine: engine.into(),
            entry,
        }
    }

    /// The name stored in `owned_path.kind`.
    pub fn stored(&self) -> String {
        format!("{}_{}", self.engine, self.entry.as_str())
    }

    fn parse(s: &str) -> Option<OwnedKind> {
        let (engine, entry) = s.rsplit_once('_')?;
        (!engine.is_empty()).then_some(())?;
        Some(OwnedKind::new(engine, EntryKind::parse(entry)?))
    }
}

words! {
    /// How far an owned path got.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum OwnedState {
        /// Recorded before it was made; it may or may not exist.
        Intended => "intended",
        /// Made; `dev` and `ino` identify it.
        Created => "created",
        /// Removed by fslab.
        Removed => "removed",
    }
    /// The name stored in `owned_path.state`.
    as_str;
}

/// A row of `owned_path`.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedPath {
    /// Id.
    pub id: i64,
    /// The absolute path.
    pub path: PathBuf,
    /// What it is.
    pub kind: OwnedKind,
    /// Engine-specific description (shape of a tree, …).
    pub detail: serde_json::Value,
    /// `st_dev` once created.
    pub dev: Option<u64>,
    /// `st_ino` once created.
    pub ino: Option<u64>,
    /// How far it got.
    pub state: OwnedState,
    /// When it was recorded (RFC 3339 UTC).
    pub created_at: String,
}

const OWNED_COLS: &str = "id, path, kind, detail, dev, ino, state, created_at, study_id";

/// A row as read, before the text columns are checked.
type RawOwned = (OwnedPath, String, String, String, i64);

fn raw(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawOwned> {
    let path: String = r.get(1)?;
    Ok((
        OwnedPath {
            id: r.get(0)?,
            path: PathBuf::from(path),
            kind: OwnedKind::new("", EntryKind::Tree),
            detail: serde_json::Value::Null,
            // SQLite integers are signed: st_dev and st_ino are stored bit for bit.
            dev: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
            ino: r.get::<_, Option<i64>>(5)?.map(|v| v as u64),
            state: OwnedState::Intended,
            created_at: r.get(7)?,
        },
        r.get(2)?,
        r.get(3)?,
        r.get(6)?,
        r.get(8)?,
    ))
}

impl Store {
    /// Record that the run `study` is about to make `path` (absolute) of `kind`; state
    /// `intended`. Returns the record's id.
    pub fn add_owned_path(
        &self,
        study: i64,
        path: &Path,
        kind: OwnedKind,
        detail: &serde_json::Value,
    ) -> Result<i64> {
        if !path.is_absolute() {
            anyhow::bail!(
                "owned path {} is relative; record the absolute path (std::path::absolute)",
                path.display()
            );
        }
        let text = path.to_str().with_context(|| {
            format!(
                "owned path {} is not UTF-8; choose a directory with a UTF-8 name",
                path.display()
            )
        })?;
        self.exec(
            "INSERT INTO owned_path (study_id, path, kind, detail, state, created_at)
                 VALUES (?1, ?2, ?3, ?4, 'intended', ?5)",
            params![study, text, kind.stored(), detail.to_string(), now()],
            format_args!("recording owned path {} of study {study}", path.display()),
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Mark owned path `id` as made, with its `st_dev` and `st_ino`.
    pub fn set_owned_created(&self, id: i64, dev: u64, ino: u64) -> Result<()> {
        self.set_owned(
            id,
            OwnedState::Created,
            "UPDATE owned_path SET state = 'created', dev = ?2, ino = ?3 WHERE id = ?1",
            params![id, dev as i64, ino as i64],
        )
    }

    /// A recorder of made entries on a connection of its own, for a thread that watches a
    /// run's entries come into being while the store is busy elsewhere.
    pub fn owned_recorder(&self) -> Result<OwnedRecorder> {
        let what = "opening a connection to record made entries";
        let conn = self.target.connect().map_err(self.fail(what))?;
        Ok(OwnedRecorder {
            conn,
            path: self.path.clone(),
        })
    }

    /// Mark owned path `id` as removed by fslab.
    pub fn set_owned_removed(&self, id: i64) -> Result<()> {
        self.set_owned(
            id,
            OwnedState::Removed,
            "UPDATE owned_path SET state = 'removed' WHERE id = ?1",
            params![id],
        )
    }

    fn set_owned(
        &self,
        id: i64,
        state: OwnedState,
        sql: &str,
        p: &[&dyn rusqlite::ToSql],
    ) -> Result<()> {
        let what = format!("marking owned path {id} {}", state.as_str());
        let n = self.conn.execute(sql, p).map_err(self.fail(&what))?;
        if n == 0 {
            anyhow::bail!("{}: there is no such record", self.at(&what));
        }
        Ok(())
    }

    /// The owned paths of `study`, in the order they were recorded.
    pub fn owned_paths(&self, study: i64) -> Result<Vec<OwnedPath>> {
        let rows = self.owned_query(
            &format!("SELECT {OWNED_COLS} FROM owned_path WHERE study_id = ?1 ORDER BY id"),
            params![study],
            &format!("reading the owned paths of study {study}"),
        )?;
        Ok(rows.into_iter().map(|(o, _)| o).collect())
    }

    /// Every record of the absolute `path`, newest first, each with its study id.
    pub fn owned_paths_at(&self, path: &Path) -> Result<Vec<(OwnedPath, i64)>> {
        self.owned_query(
            &format!("SELECT {OWNED_COLS} FROM owned_path WHERE path = ?1 ORDER BY id DESC"),
            params![path.to_string_lossy()],
            &format!("reading the records of owned path {}", path.display()),
        )
    }

    fn owned_query(
        &self,
        sql: &str,
        p: &[&dyn rusqlite::ToSql],
        what: &str,
    ) -> Result<Vec<(OwnedPath, i64)>> {
        let rows = self.rows(sql, p, raw).map_err(self.fail(what))?;
        let mut out = Vec::new();
        for (mut o, kind, detail, state, study) in rows {
            let id = o.id;
            let bad = |col: &str, v: &str| {
                anyhow::anyhow!(
                    "{}: owned path {id} has {col} '{v}', unknown to this fslab; upgrade fslab",
                    self.at(what)
                )
            };
            o.kind = OwnedKind::parse(&kind).ok_or_else(|| bad("kind", &kind))?;
            o.state = OwnedState::parse(&state).ok_or_else(|| bad("state", &state))?;
            o.detail = serde_json::from_str(&detail).with_context(|| {
                self.at(format_args!("owned path {}: detail is not JSON", o.id))
            })?;
            out.push((o, study));
        }
        Ok(out)
    }
}

/// Records, on its own connection, that an owned path was made (see
/// [`Store::owned_recorder`]).
pub struct OwnedRecorder {
    conn: rusqlite::Connection,
    path: PathBuf,
}

impl OwnedRecorder {
    /// Mark owned path `id` as made, with its `st_dev` and `st_ino`.
    pub fn created(&self, id: i64, dev: u64, ino: u64) -> Result<()> {
        let what = format_args!("marking owned path {id} created");
        self.conn
            .execute(
                "UPDATE owned_path SET state = 'created', dev = ?2, ino = ?3 WHERE id = ?1",
                params![id, dev as i64, ino as i64],
            )
            .map(drop)
            .map_err(|e| super::db_error(&self.path, what, e))
    }
}

#[cfg(test)]
#[path = "owned_tests.rs"]
mod tests;
