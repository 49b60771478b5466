//! Opening the results store: for writing (create the file, create or migrate the schema in
//! one `BEGIN IMMEDIATE` transaction, switch to WAL) or read-only (never creates, migrates or
//! changes the file, and works when its directory is read-only).
//!
//! The store writes only its own file. The path must be a regular file or absent: a device,
//! FIFO, directory or socket is refused after `stat`, before anything opens it (a FIFO cannot
//! hang the command, a block device cannot be taken for an empty store). A new store is made
//! whole under a temporary name beside the path, marked, and then linked into place, so a
//! file at the path is either absent or fslab's, never half-made. A file is fslab's when it
//! carries [`APPLICATION_ID`], or is an unmarked store of schema version 1 (written before the
//! marker existed; it is marked when first opened for writing). Anything else — another
//! program's tables or views, an empty SQLite file, a 0-byte file fslab did not make — is
//! refused before anything is written to it, so it stays byte-for-byte as it was.

use super::{db_error, Store};
use anyhow::{Context, Result};
use rand::Rng;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The schema version this build writes and reads (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 7;

/// `PRAGMA application_id` of an fslab results database: the bytes "FSLB".
pub const APPLICATION_ID: i32 = 0x4653_4C42;

/// Migrations: entry `i` takes a database from schema version `i` to `i + 1`. The view
/// `samples`, written once, is made by version 5 and made again by version 7.
const MIGRATIONS: [&str; 7] = [
    include_str!("schema.sql"),
    include_str!("schema_v2.sql"),
    include_str!("schema_v3.sql"),
    include_str!("schema_v4.sql"),
    concat!(
        include_str!("schema_v5.sql"),
        include_str!("samples_view.sql")
    ),
    include_str!("schema_v6.sql"),
    concat!(
        include_str!("schema_v7.sql"),
        include_str!("samples_view.sql")
    ),
];

/// The tables of schema version 1. A file with all of them, `user_version` 1 and no
/// application_id was written by an fslab from before the marker.
const V1_TABLES: [&str; 8] = [
    "cell",
    "environment",
    "histogram",
    "sample",
    "series",
    "study",
    "trial",
    "workload",
];

/// How long a statement waits for another process's lock before it fails.
pub(super) const BUSY: Duration = Duration::from_secs(30);

/// What a second connection opens to reach the same database.
pub(super) enum Target {
    /// A database file.
    File(PathBuf),
    /// A shared-cache in-memory database of this process (tests).
    Memory(String),
}

impl Target {
    /// A new read-write connection to the same database (it must exist).
    pub(super) fn connect(&self) -> rusqlite::Result<Connection> {
        let rw = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let c = match self {
            Target::File(p) => Connection::open_with_flags(p, rw)?,
            Target::Memory(uri) => {
                Connection::open_with_flags(uri, rw | OpenFlags::SQLITE_OPEN_URI)?
            }
        };
        c.busy_timeout(BUSY)?;
        c.pragma_update(None, "foreign_keys", "ON")?;
        Ok(c)
    }
}

/// What a database file holds, read before anything is written to it.
#[derive(Debug, PartialEq)]
enum Contents {
    /// Nothing in its schema, `user_version` 0, no application_id: a new file (fslab's only
    /// when fslab has just made it).
    Empty,
    /// fslab's, at this schema version.
    Fslab(i64),
    /// Another program's; says what it holds.
    Foreign(String),
}

/// Read the markers and table names in one statement, so one consistent snapshot is seen
/// even while another process creates the schema.
fn contents(conn: &Connection) -> rusqlite::Result<Contents> {
    let (app, version, names): (i32, i64, Option<String>) = conn.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id()),
                (SELECT user_version FROM pragma_user_version()),
                (SELECT group_concat(type || ' ' || name, char(31)) FROM (SELECT type, name
                  FROM sqlite_master WHERE name NOT LIKE 'sqlite^_%' ESCAPE '^'
                  ORDER BY type = 'table' DESC, name))",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    // Every schema entry (table, view, index, trigger) as "type name".
    let entries: Vec<(&str, &str)> = names.as_deref().map_or(Vec::new(), |n| {
        n.split('\u{1f}')
            .filter_map(|e| e.split_once(' '))
            .collect()
    });
    let tables: Vec<&str> = entries
        .iter()
        .filter(|(t, _)| *t == "table")
        .map(|(_, n)| *n)
        .collect();
    Ok(if app == APPLICATION_ID {
        Contents::Fslab(version)
    } else if app == 0 && version == 0 && entries.is_empty() {
        Contents::Empty
    } else if app == 0 && version == 1 && V1_TABLES.iter().all(|t| tables.contains(t)) {
        Contents::Fslab(1)
    } else if !entries.is_empty() {
        let (kind, names) = if tables.is_empty() {
            let views = entries.iter().all(|(t, _)| *t == "view");
            let kind = if views { "views" } else { "schema entries" };
            (kind, entries.iter().map(|(_, n)| *n).collect::<Vec<_>>())
        } else {
            ("tables", tables.clone())
        };
        let mut shown = names[..names.len().min(8)].join(", ");
        if names.len() > 8 {
            shown.push_str(", …");
        }
        Contents::Foreign(format!("it holds {kind} {shown}"))
    } else if app != 0 {
        Contents::Foreign(format!(
            "its application_id is {app:#010x}, another program's"
        ))
    } else {
        Contents::Foreign(format!(
            "its user_version is {version} but it holds no tables"
        ))
    })
}

/// Turn what [`contents`] found into an error unless this fslab may use the file, naming
/// `fix` as the way out; else the file's schema version (0: empty). An empty database is
/// usable only when fslab has just made it (`made_here`).
fn usable(
    path: &Path,
    found: rusqlite::Result<Contents>,
    made_here: bool,
    fix: &str,
) -> Result<i64> {
    let not_ours = |why: &str| {
        crate::error::usage(format!(
            "{} is not an fslab results database ({why}); {fix}",
            path.display()
        ))
    };
    match found {
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
            Err(not_ours("it is not an SQLite file"))
        }
        Err(e) => Err(db_error(path, "reading the schema", e)),
        Ok(Contents::Foreign(why)) => Err(not_ours(&why)),
        Ok(Contents::Empty) if !made_here => Err(not_ours(
            "it is empty, and fslab did not make it: fslab makes a new store whole under a temporary name",
        )),
        Ok(Contents::Fslab(v)) if v > SCHEMA_VERSION => Err(crate::error::usage(format!(
            "results database {} has schema version {v}, newer than this fslab ({SCHEMA_VERSION}); upgrade fslab or {fix}",
            path.display()
        ))),
        Ok(Contents::Fslab(v)) => Ok(v),
        Ok(Contents::Empty) => Ok(0),
    }
}

/// A connection to `target` (the database at `path`, or a URI for it) with `flags`, that
/// waits [`BUSY`] for another process's lock; an error names `path`.
fn connect(path: &Path, target: &Path, flags: OpenFlags) -> Result<Connection> {
    Connection::open_with_flags(target, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .and_then(|c| c.busy_timeout(BUSY).map(|_| c))
        .map_err(|e| db_error(path, "opening", e))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// `file:` URI of an existing file, opened immutable (see [`Store::open_read_only`]).
fn immutable_uri(path: &Path) -> Result<String> {
    let abs = std::fs::canonicalize(path)
        .with_context(|| format!("cannot resolve {}; check the path", path.display()))?;
    let mut uri = String::from("file:");
    for c in abs.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    Ok(uri)
}

/// Whether the `-wal` file beside `path` holds no transactions (missing, or at most its
/// 32-byte header).
fn wal_is_empty(path: &Path) -> bool {
    std::fs::metadata(beside(path, "-wal")).map_or(true, |m| m.len() <= 32)
}

/// SQLite's own files beside a database: its rollback journal, write-ahead log and index.
const SIDE_FILES: [&str; 3] = ["-journal", "-wal", "-shm"];

/// The file SQLite names `path` + `suffix` (`-wal`, …).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// The way out the store's errors name: the results database is chosen with `--db`.
const DB_FIX: &str = "choose another file with --db";

/// The way out when the file is one to import (`fslab import OTHER.db`).
pub const IMPORT_FIX: &str = "name another fslab results database to import";

/// Whether a results database exists at `path`: `false` when absent; `true` for a regular
/// file (also through symbolic links); a usage error naming `fix` as the way out for anything
/// else — a device, FIFO, directory, socket or dangling link — decided by `stat` alone, so
/// nothing is opened.
fn check_kind(path: &Path, fix: &str) -> Result<bool> {
    let exists = check_main_kind(path, fix)?;
    check_side_files(path, fix)?;
    Ok(exists)
}

/// SQLite's own files beside the database (`-journal`, `-wal`, `-shm`), which it opens by
/// name and writes: each must be absent or a regular file with one link, owned by the
/// database's owner (or, for a new database, by this user). A hard link planted under such a
/// name would have SQLite write through it into another file; a symbolic link, into
/// wherever it points.
fn check_side_files(path: &Path, fix: &str) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let owner =
        std::fs::symlink_metadata(path).map_or_else(|_| unsafe { libc::geteuid() }, |m| m.uid());
    for side in SIDE_FILES {
        let p = beside(path, side);
        let md = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => crate::bail_usage!(
                "cannot check {} beside the results database: {e}; {fix}",
                p.display()
            ),
        };
        let wrong = if md.file_type().is_symlink() {
            "a symbolic link".to_string()
        } else if !md.file_type().is_file() {
            "not a regular file".to_string()
        } else if md.nlink() != 1 {
            format!(
                "a file with {} links (a hard link to another file)",
                md.nlink()
            )
        } else if md.uid() != owner {
            format!(
                "owned by uid {}, not by the database's owner (uid {owner})",
                md.uid()
            )
        } else {
            continue;
        };
        crate::bail_usage!(
            "{} beside results database {} is {wrong}; SQLite would write through it. It is not fslab's: remove it if you know what it is, or {fix}",
            p.display(),
            path.display()
        );
    }
    Ok(())
}

/// The main file's kind (see [`check_kind`]).
fn check_main_kind(path: &Path, fix: &str) -> Result<bool> {
    // Another fslab process may link a new store into place between the two looks below
    // (`create_whole`): a name that was missing and is now a regular file is looked at again,
    // never mistaken for a link to nothing.
    let mut looks = 0;
    let md = loop {
        looks += 1;
        match std::fs::metadata(path) {
            Ok(m) => break m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::symlink_metadata(path) {
                    Err(_) => return Ok(false),
                    Ok(l) if l.file_type().is_symlink() && std::fs::metadata(path).is_err() => {
                        crate::bail_usage!(
                            "results database {} is a symbolic link to nothing; fslab does not create a file where a link points; {fix}",
                            path.display()
                        );
                    }
                    Ok(_) if looks < 5 => continue,
                    Ok(_) => crate::bail_usage!(
                        "results database {} keeps changing while fslab looks at it; {fix}",
                        path.display()
                    ),
                }
            }
            Err(e) => crate::bail_usage!(
                "cannot reach results database {}: {e}; check the path and its permissions, or {fix}",
                path.display()
            ),
        }
    };
    let ft = md.file_type();
    if ft.is_file() {
        return Ok(true);
    }
    let kind = crate::safe::input::kind_of(&ft).unwrap_or("not a regular file");
    crate::bail_usage!(
        "results database {} is {kind}; the results database is a regular file (or a path that does not exist yet): {fix}",
        path.display()
    )
}

/// Make a new store at `path`, whole: created exclusively under a temporary name in the same
/// directory, given fslab's schema and marks, then linked to `path` (which fails if another
/// process got there first: then its store is used). A file at `path` is never half-made.
fn create_whole(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results.db".into());
    let tmp = dir.join(format!(
        ".{name}.new-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    let cant = |e: &dyn std::fmt::Display| {
        crate::error::usage(format!(
            "cannot make results database {} ({e}); choose a writable directory with --db",
            path.display()
        ))
    };
    crate::safe::create_new(&tmp, 0o644).map_err(|e| cant(&e))?;
    let made = (|| -> Result<()> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&tmp, flags)
            .map_err(|e| db_error(&tmp, "making a new store", e))?;
        let mut st = Store::in_file(conn, &tmp, SCHEMA_VERSION);
        st.migrate(true)?;
        drop(st);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            // Another process made it meanwhile: use that one.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(cant(&e)),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    for side in SIDE_FILES {
        let _ = std::fs::remove_file(beside(&tmp, side));
    }
    made
}

impl Store {
    /// Open the database at `path` for writing: make the file (and its directory) if missing,
    /// create or migrate fslab's schema, switch to WAL. A file that is not fslab's is refused
    /// (a usage error) before anything is written to it.
    pub fn open(path: &Path) -> Result<Store> {
        if !check_kind(path, DB_FIX)? {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).with_context(|| {
                    format!(
                        "cannot create {}; choose another file with --db",
                        parent.display()
                    )
                })?;
            }
            create_whole(path)?;
            check_kind(path, DB_FIX)?;
        }
        // The file exists and is fslab's or refused below: never created by this open.
        let conn = connect(path, path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        // SQLite falls back to read-only when the file or its file system cannot be written;
        // say so now rather than fail at the first write.
        if conn
            .is_readonly(rusqlite::DatabaseName::Main)
            .unwrap_or(false)
        {
            crate::bail_usage!(
                "results database {} cannot be written (the file or its file system is read-only) and this command stores its results there; choose a writable file with --db",
                path.display()
            );
        }
        let mut store = Store::in_file(conn, path, SCHEMA_VERSION);
        if usable(path, contents(&store.conn), false, DB_FIX)? != SCHEMA_VERSION {
            store.migrate(false)?;
        }
        store.use_wal()?;
        store
            .conn
            .pragma_update(None, "foreign_keys", "ON")
            .and_then(|_| store.conn.pragma_update(None, "synchronous", "NORMAL"))
            .map_err(|e| db_error(path, "setting up the connection", e))?;
        Ok(store)
    }

    /// Open the database at `path` for reading only (`fslab list`, `show`, `report`,
    /// `compare`). It is never created, migrated or changed; a missing file is a usage error.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        Store::open_read_only_as(path, DB_FIX)
    }

    /// [`Store::open_read_only`] for a file named on the command line rather than by `--db`
    /// (`fslab import OTHER.db`): its errors name `fix` ([`IMPORT_FIX`]) as the way out.
    pub fn open_read_only_as(path: &Path, fix: &str) -> Result<Store> {
        if !check_kind(path, fix)? {
            crate::bail_usage!(
                "no results database at {}: nothing has been stored there; {}",
                path.display(),
                if fix == DB_FIX {
                    "record a run first (e.g. `fslab fdtree -o DIR`) or choose another file with --db"
                } else {
                    fix
                }
            );
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY;
        let mut conn = connect(path, path, flags)?;
        let mut found = contents(&conn);
        if let Err(e) = &found {
            // A WAL database is read through its `-shm` index, which a read-only connection
            // still has to create (and the `-wal` file with it) when they are missing; in a
            // read-only directory it cannot, and SQLite fails with CANTOPEN. When no `-wal`
            // file holds transactions, every committed one is in the main file (the last
            // writer checkpointed on close), so `immutable=1` — read the main file alone, no
            // locks, no side files — sees exactly what a normal open would. With a non-empty
            // `-wal` it would hide those transactions, so the error stands then.
            let cannot = matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
            );
            if cannot && wal_is_empty(path) {
                let uri = immutable_uri(path)?;
                conn = connect(path, Path::new(&uri), flags | OpenFlags::SQLITE_OPEN_URI)?;
                found = contents(&conn);
            }
        }
        // An older version is read as it is: the reads leave out what it cannot hold.
        let version = usable(path, found, false, fix)?;
        Ok(Store::in_file(conn, path, version))
    }

    /// The store of the database file at `path`, open as `conn`, at schema `version`.
    fn in_file(conn: Connection, path: &Path, version: i64) -> Store {
        Store {
            conn,
            path: path.to_path_buf(),
            target: Target::File(path.to_path_buf()),
            version,
        }
    }

    /// An in-memory store (tests, and engine commands run with `--no-store`). Shared-cache,
    /// so a claim's own connection reaches it.
    pub fn open_in_memory() -> Result<Store> {
        static N: AtomicU64 = AtomicU64::new(0);
        let uri = format!(
            "file:fslab-mem-{}-{}?mode=memory&cache=shared",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let path = PathBuf::from(":memory:");
        let conn =
            Connection::open_with_flags(&uri, flags).map_err(|e| db_error(&path, "opening", e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| db_error(&path, "setting up the connection", e))?;
        let mut store = Store {
            conn,
            path,
            target: Target::Memory(uri),
            version: SCHEMA_VERSION,
        };
        store.migrate(true)?;
        Ok(store)
    }

    /// Create or migrate the schema in one `BEGIN IMMEDIATE` transaction. What the file holds
    /// is read again inside it: a concurrent opener may have done the work meanwhile.
    ///
    /// Foreign keys are off meanwhile (SQLite ignores the pragma inside a transaction): the
    /// migration to version 7 makes the `study` table again, and dropping the old one must
    /// not cascade to what refers to it; the references to `study` are checked before the
    /// commit. The connection's setting is restored afterwards.
    fn migrate(&mut self, made_here: bool) -> Result<()> {
        let path = self.path.clone();
        let fk: bool = self
            .conn
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .map_err(|e| db_error(&path, "reading the foreign-key setting", e))?;
        self.conn
            .pragma_update(None, "foreign_keys", "OFF")
            .map_err(|e| db_error(&path, "turning foreign keys off to migrate", e))?;
        let done = self.migrate_keys_off(made_here);
        let restored = self
            .conn
            .pragma_update(None, "foreign_keys", if fk { "ON" } else { "OFF" })
            .map_err(|e| db_error(&path, "turning foreign keys back on", e));
        done.and(restored)
    }

    /// [`Store::migrate`] with foreign keys off.
    fn migrate_keys_off(&mut self, made_here: bool) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| db_error(&path, "locking the database to create its schema", e))?;
        let from = usable(&path, contents(&tx), made_here, DB_FIX)?;
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            tx.execute_batch(sql).map_err(|e| {
                db_error(
                    &path,
                    format_args!("migrating the schema from version {v} to {}", v + 1),
                    e,
                )
            })?;
        }
        if (1..5).contains(&from) {
            // Version 5 has a view per study (`study_<id>_samples`); make them for the
            // studies already stored.
            super::views::make_all_views(&tx).map_err(|e| {
                db_error(&path, "making the per-study views of schema version 5", e)
            })?;
        }
        if from < 7 {
            // The study table was made again: every row that refers to a study still must.
            let orphans: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM pragma_foreign_key_check WHERE \"parent\" = 'study'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| db_error(&path, "checking the references to studies", e))?;
            if orphans != 0 {
                return Err(anyhow::anyhow!(
                    "migrating {} to schema version 7 would leave {orphans} rows without their study; nothing was changed; report this as a bug",
                    path.display()
                ));
            }
        }
        if from < SCHEMA_VERSION {
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .and_then(|_| tx.pragma_update(None, "application_id", APPLICATION_ID))
                .map_err(|e| db_error(&path, "marking the schema version", e))?;
        }
        tx.commit()
            .map_err(|e| db_error(&path, "committing the schema", e))
    }

    /// Switch to WAL. That needs an exclusive lock, and SQLite answers SQLITE_BUSY at once —
    /// without waiting in the busy handler — when another connection holds a shared lock
    /// while this one wants to upgrade (it could deadlock otherwise). Concurrent first
    /// openers of a new file (several runs started together) do exactly that, so retry with
    /// a random pause until [`BUSY`] has passed.
    fn use_wal(&self) -> Result<()> {
        let deadline = Instant::now() + BUSY;
        let mut pause_ms = 2u64;
        loop {
            let mode: rusqlite::Result<String> =
                self.conn
                    .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0));
            match mode {
                Ok(m) if m.eq_ignore_ascii_case("wal") => return Ok(()),
                Err(e) if !is_busy(&e) || Instant::now() >= deadline => {
                    return Err(db_error(&self.path, "switching to WAL mode", e));
                }
                Ok(m) if Instant::now() >= deadline => anyhow::bail!(
                    "results database {} stays in {m} journal mode instead of WAL; its file system may not support shared memory: choose another file with --db",
                    self.path.display()
                ),
                _ => {}
            }
            let jitter = rand::thread_rng().gen_range(0..=pause_ms);
            std::thread::sleep(Duration::from_millis(pause_ms + jitter));
            pause_ms = (pause_ms * 2).min(64);
        }
    }
}

#[cfg(test)]
#[path = "open_tests.rs"]
mod tests;
