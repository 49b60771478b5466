//! Opening: other programs' databases refused and untouched, the unmarked version-1 store
//! migrated only when opened for writing, read-only opens that create nothing, errors that
//! name the file.

use crate::store::tests::sample_study;
use crate::store::*;
use std::path::Path;

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

fn side_files(p: &Path) -> Vec<String> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| format!("{}{s}", p.display()))
        .filter(|f| Path::new(f).exists())
        .collect()
}

fn is_usage(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<crate::error::UsageError>())
}

/// A path named `name` in a new temporary directory (kept while the first is).
fn temp_db(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    (dir, p)
}

/// The refusals of opening `p` for writing and read-only.
fn refusals(p: &Path) -> [anyhow::Error; 2] {
    [
        Store::open(p).err().unwrap(),
        Store::open_read_only(p).err().unwrap(),
    ]
}

/// A read-only connection to the file at `p`, beside any store.
fn peek(p: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

/// A database of another program: two tables, a row, rollback journal (SQLite's default).
fn foreign_db(p: &Path) {
    let c = rusqlite::Connection::open(p).unwrap();
    c.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);
         CREATE TABLE tags (note INTEGER, tag TEXT);
         INSERT INTO notes (text) VALUES ('keep me');",
    )
    .unwrap();
}

#[test]
fn a_foreign_database_is_refused_and_left_byte_for_byte_unchanged() {
    let (_dir, p) = temp_db("other.sqlite");
    foreign_db(&p);
    let before = bytes(&p);
    for e in refusals(&p) {
        let msg = format!("{e:#}");
        assert!(is_usage(&e), "{msg}");
        assert_eq!(
            msg,
            format!(
                "{} is not an fslab results database (it holds tables notes, tags); choose another file with --db",
                p.display()
            )
        );
    }
    assert_eq!(bytes(&p), before);
    assert!(side_files(&p).is_empty(), "{:?}", side_files(&p));
}

#[test]
fn a_file_marked_by_another_program_or_not_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let marked = dir.path().join("marked.db");
    rusqlite::Connection::open(&marked)
        .unwrap()
        .pragma_update(None, "application_id", 0x4750_4B47)
        .unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "not a database at all, just some text that is long enough to have a header\n".repeat(4),
    )
    .unwrap();
    for (p, why) in [
        (
            &marked,
            "its application_id is 0x47504b47, another program's",
        ),
        (&text, "it is not an SQLite file"),
    ] {
        let before = bytes(p);
        let e = Store::open(p).err().unwrap();
        assert!(is_usage(&e));
        assert!(format!("{e:#}").contains(why), "{e:#}");
        assert_eq!(bytes(p), before);
        assert!(side_files(p).is_empty());
    }
}

fn markers(p: &Path) -> (i64, i32, bool) {
    let c = peek(p);
    let v = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let a = c
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    let owned: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('claim', 'owned_path')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (v, a, owned == 2)
}

/// The columns of `trial` in a file, in table order.
fn trial_columns(p: &Path) -> Vec<String> {
    let c = peek(p);
    let mut st = c
        .prepare("SELECT name FROM pragma_table_info('trial') ORDER BY cid")
        .unwrap();
    let names = st.query_map([], |r| r.get(0)).unwrap();
    names.collect::<rusqlite::Result<_>>().unwrap()
}

/// The columns of `trial` at the current version (3 added `interference` and
/// `settle_seconds`, 6 `excluded`).
const TRIAL_COLUMNS: [&str; 14] = [
    "id",
    "cell_id",
    "workload_id",
    "repetition",
    "order_index",
    "status",
    "error",
    "cache_policy",
    "started_at",
    "finished_at",
    "wall_seconds",
    "interference",
    "settle_seconds",
    "excluded",
];

/// A copy of `tests/fixtures/NAME` in a temporary directory (kept while the first is).
fn fixture(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, p) = temp_db(name);
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::copy(src.join(name), &p).unwrap();
    (dir, p)
}

#[test]
fn the_version_1_fixture_is_read_as_is_and_migrated_when_opened_for_writing() {
    let (_dir, p) = fixture("store-v1.db");
    assert_eq!(markers(&p), (1, 0, false));
    {
        let st = Store::open_read_only(&p).unwrap();
        let names: Vec<String> = st
            .list_studies()
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["iozone", "fdtree"]);
        assert_eq!(st.load(1).unwrap().unwrap().trials.len(), 2);
    }
    assert_eq!(markers(&p), (1, 0, false), "a read migrates nothing");
    {
        let st = Store::open(&p).unwrap();
        assert_eq!(st.list_studies().unwrap().len(), 2);
        let d = st.load(2).unwrap().unwrap();
        assert_eq!(d.trials.iter().filter(|t| t.status == "ok").count(), 2);
        assert!(!d.trials[0].samples.is_empty());
    }
    assert_eq!(markers(&p), (SCHEMA_VERSION, APPLICATION_ID, true));
    assert_eq!(trial_columns(&p), TRIAL_COLUMNS, "1 → current in one open");
    // Marked now, and still fslab's on the next open.
    assert_eq!(Store::open(&p).unwrap().list_studies().unwrap().len(), 2);
}

#[test]
fn a_new_store_is_marked_and_at_the_current_version() {
    let (_dir, p) = temp_db("new.db");
    Store::open(&p).unwrap();
    assert_eq!(markers(&p), (SCHEMA_VERSION, APPLICATION_ID, true));
}

#[test]
fn a_read_only_open_of_a_missing_file_creates_nothing_and_names_it() {
    let (dir, p) = temp_db("sub/none.db");
    let e = Store::open_read_only(&p).err().unwrap();
    assert!(is_usage(&e));
    let msg = format!("{e:#}");
    assert!(
        msg.contains(&p.display().to_string()) && msg.contains("--db"),
        "{msg}"
    );
    assert!(!p.exists() && !dir.path().join("sub").exists());
}

#[test]
fn an_empty_file_or_database_fslab_did_not_make_is_foreign() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("empty.db");
    std::fs::write(&zero, b"").unwrap();
    // An SQLite file with nothing in it, and one holding only a view.
    let blank = dir.path().join("blank.db");
    rusqlite::Connection::open(&blank)
        .unwrap()
        .execute_batch("VACUUM")
        .unwrap();
    let view = dir.path().join("view.db");
    rusqlite::Connection::open(&view)
        .unwrap()
        .execute_batch("CREATE VIEW answer AS SELECT 42 AS x")
        .unwrap();
    for (p, why) in [
        (&zero, "it is empty, and fslab did not make it"),
        (&blank, "it is empty, and fslab did not make it"),
        (&view, "it holds views answer"),
    ] {
        let before = bytes(p);
        for e in refusals(p) {
            assert!(is_usage(&e), "{e:#}");
            assert!(format!("{e:#}").contains(why), "{}: {e:#}", p.display());
        }
        assert_eq!(bytes(p), before, "{}", p.display());
        assert!(side_files(p).is_empty());
    }
}

#[test]
fn only_a_regular_file_or_nothing_can_be_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    crate::safe::input::mkfifo(&fifo);
    let sub = dir.path().join("a-dir.db");
    std::fs::create_dir(&sub).unwrap();
    let dangling = dir.path().join("dangling.db");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    for (p, kind) in [
        (&fifo, "is a FIFO"),
        (&sub, "is a directory"),
        (&dangling, "symbolic link to nothing"),
    ] {
        let t = std::time::Instant::now();
        for e in refusals(p) {
            assert!(is_usage(&e), "{e:#}");
            assert!(format!("{e:#}").contains(kind), "{e:#}");
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }
    assert!(
        !dir.path().join("nowhere").exists(),
        "nothing made where the link points"
    );
}

#[test]
fn a_new_store_is_made_whole_and_leaves_no_temporary_file() {
    let (dir, p) = temp_db("fresh.db");
    drop(Store::open(&p).unwrap());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("fresh.db"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(markers(&p), (SCHEMA_VERSION, APPLICATION_ID, true));
    // Opened again, it is fslab's.
    Store::open(&p).unwrap();
    Store::open_read_only(&p).unwrap();
}

#[test]
fn store_errors_name_the_database_file() {
    let (_dir, p) = temp_db("r.db");
    sample_study(&Store::open(&p).unwrap());
    let ro = Store::open_read_only(&p).unwrap();
    assert!(ro.is_read_only());
    let e = ro.set_study_status(1, StudyStatus::Complete).err().unwrap();
    let msg = format!("{e:#}");
    assert!(
        msg.starts_with(&format!(
            "setting study 1 to complete in results database {} (the file or its directory is read-only",
            p.display()
        )),
        "{msg}"
    );
    // A read of a damaged row names the file too.
    Store::open(&p)
        .unwrap()
        .conn()
        .execute("UPDATE cell SET factors = 'oops'", [])
        .unwrap();
    let msg = format!("{:#}", ro.load(1).err().unwrap());
    assert!(
        msg.starts_with(&format!(
            "reading the cells of study 1 in results database {}",
            p.display()
        )),
        "{msg}"
    );
}

/// Row counts of every table and the names and SQL of every index, to compare a file before
/// and after a migration.
#[derive(Debug, PartialEq)]
struct Inventory {
    rows: Vec<(String, i64)>,
    indexes: Vec<(String, String)>,
}

fn inventory(p: &Path) -> Inventory {
    let c = peek(p);
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let counts = tables
        .into_iter()
        .map(|t| {
            let n = c
                .query_row(&format!("SELECT COUNT(*) FROM \"{t}\""), [], |r| r.get(0))
                .unwrap();
            (t, n)
        })
        .collect();
    let indexes = c
        .prepare(
            "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    Inventory {
        rows: counts,
        indexes,
    }
}

/// `tests/fixtures/store-v2.db` was written by fslab at schema version 2 (see doc/schema.md):
/// the report fixtures' six studies, a real high-variance study (7) and an engine run (8).
#[test]
fn the_version_2_fixture_is_read_as_is_and_migrated_to_3_keeping_every_row() {
    let (_dir, p) = fixture("store-v2.db");
    assert_eq!(markers(&p), (2, APPLICATION_ID, true));
    let before = inventory(&p);
    assert!(before.rows.iter().any(|(t, n)| t == "owned_path" && *n > 0));
    let read = {
        let st = Store::open_read_only(&p).unwrap();
        assert_eq!(st.schema_version(), 2);
        assert_eq!(st.list_studies().unwrap().len(), 8);
        let d = st.load(7).unwrap().unwrap();
        assert_eq!(d.study.name, "noisy-small-trees");
        assert!(d.trials.iter().all(|t| t.window.interference.is_none()
            && t.window.settle_seconds.is_none()
            && t.excluded.is_none()));
        d
    };
    assert_eq!(
        markers(&p),
        (2, APPLICATION_ID, true),
        "a read migrates nothing"
    );
    assert_eq!(trial_columns(&p).len(), 11);

    let mut st = Store::open(&p).unwrap();
    assert_eq!(st.schema_version(), SCHEMA_VERSION);
    assert_eq!(markers(&p), (SCHEMA_VERSION, APPLICATION_ID, true));
    assert_eq!(trial_columns(&p), TRIAL_COLUMNS);
    // Every row and index kept; version 4 adds the (empty) timeline table and its key,
    // version 5 the (empty) provenance table with its keys and a view per study, version 7
    // SQLite's `sqlite_sequence` with the largest study id (AUTOINCREMENT).
    let mut after = inventory(&p);
    assert!(after.rows.contains(&("timeline".to_string(), 0)));
    assert!(after.rows.contains(&("provenance".to_string(), 0)));
    assert!(after.rows.contains(&("sqlite_sequence".to_string(), 1)));
    let count = |sql: &str| -> i64 {
        let conn = rusqlite::Connection::open(&p).unwrap();
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    };
    let seq = count("SELECT seq FROM sqlite_sequence WHERE name = 'study'");
    assert_eq!(seq, 8, "the largest id of the fixture");
    after
        .rows
        .retain(|(t, _)| t != "timeline" && t != "provenance" && t != "sqlite_sequence");
    after.indexes.retain(|(i, _)| {
        i != "sqlite_autoindex_timeline_1" && !i.starts_with("sqlite_autoindex_provenance")
    });
    assert_eq!(after, before, "every row and index kept");
    let views = count(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name LIKE 'study^_%^_samples' ESCAPE '^'",
    );
    assert_eq!(views, 8, "one view per study");
    assert_eq!(st.load(7).unwrap().unwrap(), read, "read back the same");
    // The migrated file takes the new fields, and the unique index of counted repetitions
    // still holds.
    let (cell, workload) = (read.cells[0].id, read.workloads[0].id);
    let new = NewTrial {
        order_index: 99,
        cache_policy: "fresh",
        ..NewTrial::counted(cell, workload, 5, &[]).around(
            Some("vda: 3 MB written by other processes".into()),
            Some(4.0),
        )
    };
    st.record_trial(&new).unwrap();
    let last = st.load(7).unwrap().unwrap().trials.pop().unwrap();
    assert_eq!(
        (
            last.window.interference.as_deref(),
            last.window.settle_seconds
        ),
        (Some("vda: 3 MB written by other processes"), Some(4.0))
    );
    assert!(st
        .record_trial(&NewTrial {
            order_index: 100,
            ..new
        })
        .is_err());
}
