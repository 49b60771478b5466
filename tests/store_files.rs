//! The results file: another program's SQLite database is refused by every command and left
//! byte-for-byte unchanged; commands that only read create no file; a version-1 store made
//! by an earlier fslab lists, shows and reports as it is, and the first command that writes
//! migrates it.

mod common;

use common::fslab;
use std::path::{Path, PathBuf};

fn side_files(p: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| PathBuf::from(format!("{}{s}", p.display())))
        .filter(|f| f.exists())
        .collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tiny_fdtree(out: &Path) -> Vec<String> {
    let mut a: Vec<String> = [
        "fdtree", "-q", "-d", "1", "-l", "1", "-f", "1", "-s", "0", "-o",
    ]
    .map(String::from)
    .to_vec();
    a.push(out.display().to_string());
    a
}

#[test]
fn another_programs_database_is_refused_by_every_command_and_left_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("other.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);
             CREATE TABLE tags (note INTEGER, tag TEXT);
             INSERT INTO notes (text) VALUES ('keep me');",
        )
        .unwrap();
    }
    // The whole file is compared, which is stronger than comparing a hash of it.
    let before = std::fs::read(&db).unwrap();
    let out_dir = t.path().join("o");
    std::fs::create_dir(&out_dir).unwrap();
    let commands: Vec<Vec<String>> = vec![
        vec!["list".into()],
        vec!["show".into(), "1".into()],
        vec!["report".into(), "1".into()],
        vec!["compare".into(), "1".into(), "2".into()],
        tiny_fdtree(&out_dir),
    ];
    for args in commands {
        let out = fslab(t.path())
            .arg("--db")
            .arg(&db)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stderr),
            format!(
                "fslab: {} is not an fslab results database (it holds tables notes, tags); choose another file with --db\n",
                db.display()
            ),
            "{args:?}"
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{args:?} changed the file"
        );
        assert!(
            side_files(&db).is_empty(),
            "{args:?}: {:?}",
            side_files(&db)
        );
    }
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        0,
        "fdtree made nothing"
    );
}

#[test]
fn read_commands_on_a_missing_database_create_nothing_and_name_it() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("sub/none.db");
    for args in [
        vec!["list"],
        vec!["show", "1"],
        vec!["report", "1"],
        vec!["compare", "1", "2"],
    ] {
        let out = fslab(t.path())
            .arg("--db")
            .arg(&db)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!("fslab: no results database at {}", db.display()))
                && err.contains("choose another file with --db")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!db.exists() && !t.path().join("sub").exists(), "{args:?}");
    }
}

fn markers(db: &Path) -> (i64, i32) {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    (
        c.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap(),
        c.pragma_query_value(None, "application_id", |r| r.get(0))
            .unwrap(),
    )
}

fn ok(db: &Path, args: &[&str]) -> String {
    let out = fslab(db.parent().unwrap())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_version_1_store_lists_shows_and_reports_and_is_migrated_by_the_first_write() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("v1.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v1.db"),
        &db,
    )
    .unwrap();
    assert_eq!(markers(&db), (1, 0));
    let list: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["iozone", "fdtree"]);
    assert!(ok(&db, &["show", "1"]).contains("file_create"));
    let report = ok(&db, &["report", "2"]);
    assert!(report.contains("Throughput — mean ± sd"), "{report}");
    assert!(report.contains("write (GiB/s)"), "{report}");
    assert_eq!(markers(&db), (1, 0), "reading migrates nothing");

    let o = t.path().join("o");
    std::fs::create_dir(&o).unwrap();
    let args = tiny_fdtree(&o);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&db, &args);
    assert_eq!(
        markers(&db),
        (fslab::store::SCHEMA_VERSION, fslab::store::APPLICATION_ID)
    );
    let list: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    assert!(ok(&db, &["report", "1"]).contains("file_create"));
    assert!(ok(&db, &["show", "3"]).contains("file_create"));
}

/// SQLite's side files are opened by name and written: a hard link or a symbolic link planted
/// under `<db>-wal`, `<db>-shm` or `<db>-journal` would carry its writes into another file.
/// Every command refuses the database instead (exit 2, one line), and the other file keeps
/// every byte — for a store that exists and for one about to be made.
#[test]
fn planted_side_files_are_refused_and_what_they_point_at_is_untouched() {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().unwrap();
    let out_dir = t.path().join("o");
    std::fs::create_dir(&out_dir).unwrap();
    let victim = t.path().join("victim");
    let precious = b"a user's file, not fslab's".to_vec();
    for existing in [true, false] {
        for side in ["-wal", "-shm", "-journal"] {
            for hard in [true, false] {
                let db = t.path().join(format!("r-{existing}-{side}-{hard}.db"));
                if existing {
                    let out = fslab(t.path())
                        .arg("--db")
                        .arg(&db)
                        .args(tiny_fdtree(&out_dir))
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{}", text(&out.stderr));
                    for f in side_files(&db) {
                        std::fs::remove_file(f).unwrap();
                    }
                }
                std::fs::write(&victim, &precious).unwrap();
                let planted = PathBuf::from(format!("{}{side}", db.display()));
                if hard {
                    std::fs::hard_link(&victim, &planted).unwrap();
                } else {
                    symlink(&victim, &planted).unwrap();
                }
                for args in [tiny_fdtree(&out_dir), vec!["list".to_string()]] {
                    let out = fslab(t.path())
                        .arg("--db")
                        .arg(&db)
                        .args(&args)
                        .output()
                        .unwrap();
                    let err = text(&out.stderr);
                    assert_eq!(
                        out.status.code(),
                        Some(2),
                        "{args:?} {side} hard={hard}: {err}"
                    );
                    assert_eq!(err.trim().lines().count(), 1, "{err}");
                    assert!(
                        err.contains(&format!("{side} beside results database")),
                        "{err}"
                    );
                    assert!(err.contains("SQLite would write through it"), "{err}");
                }
                assert_eq!(
                    std::fs::read(&victim).unwrap(),
                    precious,
                    "{side} hard={hard}"
                );
                std::fs::remove_file(&planted).unwrap();
            }
        }
    }
}
