//! Managing stored results from the command line: `list` filters and columns, `rm`,
//! `export --raw`, `import`, the SQL views, and their refusals (one line, exit 2, naming the
//! fix). Every test works on its own temporary directory and copies of the fixtures.

mod common;

use common::fslab;
use std::path::{Path, PathBuf};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Run fslab with `--db db` and these arguments; stdout, asserting success.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = fslab(db.parent().unwrap())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fslab {args:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Run fslab and expect a one-line refusal with exit code 2; the line.
fn refused(db: &Path, args: &[&str]) -> String {
    let out = fslab(db.parent().unwrap())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "fslab {args:?}: {}",
        text(&out.stderr)
    );
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

/// A copy of the version-2 fixture (studies 1–8) in `dir`.
fn fixture(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v2.db"),
        &p,
    )
    .unwrap();
    p
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn tiny_fdtree(db: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    ok(
        db,
        &[
            "fdtree",
            "-q",
            "-d",
            "1",
            "-l",
            "1",
            "-f",
            "1",
            "-s",
            "0",
            "-o",
            dir.to_str().unwrap(),
        ],
    );
}

fn ids(json: &str) -> Vec<i64> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn list_shows_target_and_fs_and_the_whole_command() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    let disk = t
        .path()
        .join("a-directory-with-a-rather-long-name-to-push-the-end-out");
    tiny_fdtree(&db, &disk);
    let shm = Path::new("/dev/shm");
    let mem = shm.is_dir().then(|| tempfile::tempdir_in(shm).unwrap());
    if let Some(m) = &mem {
        tiny_fdtree(&db, m.path());
    }
    let out = ok(&db, &["list"]);
    for col in ["fs", "command"] {
        assert!(out.contains(col), "{out}");
    }
    // One line per run, within 100 columns: the command line shortened in the middle, so
    // runs that differ only at its end (their target) are told apart.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + usize::from(mem.is_some()), "{out}");
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{out}");
    assert!(
        lines[1..].iter().any(|l| l.ends_with("push-the-end-out")),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    let rows = json.as_array().unwrap();
    let disk_row = rows
        .iter()
        .find(|r| r["target"].as_str() == Some(disk.to_str().unwrap()))
        .expect("the run on disk lists its target");
    assert!(!disk_row["fs"].as_str().unwrap().is_empty());
    if let Some(m) = &mem {
        let shm_row = rows
            .iter()
            .find(|r| r["target"].as_str() == m.path().to_str())
            .expect("the run on /dev/shm lists its target");
        assert_eq!(shm_row["fs"], "tmpfs");
        assert_ne!(shm_row["fs"], disk_row["fs"]);
    }
    // --format json is --json.
    assert_eq!(
        ok(&db, &["list", "--format", "json"]),
        ok(&db, &["list", "--json"])
    );
}

#[test]
fn list_filters_by_name_kind_since_and_limit() {
    let t = tempfile::tempdir().unwrap();
    let db = fixture(t.path(), "v2.db");
    assert_eq!(
        ids(&ok(&db, &["list", "--json"])),
        vec![8, 7, 6, 5, 4, 3, 2, 1]
    );
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--name", "fdtree"])),
        vec![8, 5, 4]
    );
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--name", "*journal*"])),
        vec![2, 1]
    );
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--kind", "study"])),
        vec![7, 6, 3, 2, 1]
    );
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--kind", "iozone"])),
        vec![2]
    );
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--kind", "dbench"])),
        vec![3]
    );
    // Studies 7 and 8 were made on 2026-11-24, the others on 2024-05-01.
    assert_eq!(
        ids(&ok(&db, &["list", "--json", "--since", "2025-01-01"])),
        vec![8, 7]
    );
    assert_eq!(
        ids(&ok(
            &db,
            &["list", "--json", "--since", "2026-11-24T02:36:05Z"]
        )),
        vec![8]
    );
    assert_eq!(
        ids(&ok(
            &db,
            &["list", "--json", "--kind", "run", "--limit", "2"]
        )),
        vec![8, 5]
    );
    assert!(ids(&ok(&db, &["list", "--json", "--since", "1h"])).is_empty());
    let none = ok(&db, &["list", "--since", "1h"]);
    assert!(none.contains("match"), "{none}");
    let err = refused(&db, &["list", "--since", "yesterday"]);
    assert!(err.contains("--since 7d"), "{err}");
}

#[test]
fn rm_removes_every_row_of_a_run_in_one_go_and_refuses_what_it_must_not() {
    let t = tempfile::tempdir().unwrap();
    let db = fixture(t.path(), "v2.db");
    let samples_of_1 = count(
        &db,
        "SELECT COUNT(*) FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id WHERE c.study_id = 1",
    );
    let all = count(&db, "SELECT COUNT(*) FROM sample");
    // An unknown id among known ones: nothing is removed.
    let err = refused(&db, &["rm", "1", "99"]);
    assert!(
        err.contains("no study or run 99") && err.contains("fslab list"),
        "{err}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sample"), all);
    let out = ok(&db, &["rm", "1", "4"]);
    assert!(out.contains("removed study 1 'ext4-journal'"), "{out}");
    assert!(out.contains("removed run 4 'fdtree'"), "{out}");
    assert!(out.contains(&format!("{samples_of_1} sample(s)")), "{out}");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM study WHERE id IN (1, 4)"),
        0
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM cell WHERE study_id IN (1, 4)"),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM trial WHERE cell_id NOT IN (SELECT id FROM cell)"
        ),
        0
    );
    assert!(count(&db, "SELECT COUNT(*) FROM sample") < all);
    assert_eq!(ids(&ok(&db, &["list", "--json"])), vec![8, 7, 6, 5, 3, 2]);

    // A run this (live) process holds is refused.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let start: i64 = rest.split_whitespace().nth(19).unwrap().parse().unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO claim (study_id, pid, host, start_time, claimed_at) VALUES (5, ?1, ?2, ?3, '2026-11-24T00:00:00Z')",
            rusqlite::params![std::process::id(), host.trim(), start],
        )
        .unwrap();
    let err = refused(&db, &["rm", "5"]);
    assert!(
        err.contains("is running") && err.contains("wait for it"),
        "{err}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM study WHERE id = 5"), 1);
}

#[test]
fn export_raw_has_every_sample_with_its_levels_repetition_and_order() {
    let t = tempfile::tempdir().unwrap();
    let db = fixture(t.path(), "v2.db");
    let csv = ok(&db, &["export", "1", "--raw"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "study_id,study,cell_idx,cell,journal,fs,workload_kind,workload,repetition,order_index,trial_status,cache_policy,phase,metric,unit,value"
    );
    let n = count(
        &db,
        "SELECT COUNT(*) FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id WHERE c.study_id = 1",
    );
    assert_eq!(lines.clone().count() as i64, n);
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &first[..6],
        [
            "1",
            "ext4-journal",
            "0",
            "journal=16MB fs=ext4",
            "16MB",
            "ext4"
        ]
    );
    // JSON, to a file.
    let out = t.path().join("raw.json");
    ok(
        &db,
        &[
            "export",
            "1",
            "--raw",
            "--format",
            "json",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["samples"].as_array().unwrap().len() as i64, n);
    assert_eq!(v["samples"][0]["levels"]["fs"], "ext4");
    assert!(v["samples"][0]["order_index"].is_i64());
    // Without --raw: one row per repetition.
    let reps = ok(&db, &["export", "1"]);
    let trials = count(
        &db,
        "SELECT COUNT(*) FROM trial t JOIN cell c ON c.id = t.cell_id WHERE c.study_id = 1 AND EXISTS (SELECT 1 FROM sample s WHERE s.trial_id = t.id)",
    );
    assert_eq!(reps.lines().count() as i64, trials + 1);
    assert!(reps
        .lines()
        .next()
        .unwrap()
        .contains("file_create.rate [files/s]"));
    let err = refused(&db, &["export", "42", "--raw"]);
    assert!(err.contains("fslab list"), "{err}");
}

#[test]
fn import_copies_with_new_ids_keeps_provenance_and_is_idempotent() {
    let t = tempfile::tempdir().unwrap();
    let other = fixture(t.path(), "other.db");
    let db = t.path().join("results.db");
    // Two runs of this machine first, so the imported ids must differ from the source's.
    tiny_fdtree(&db, &t.path().join("a"));
    tiny_fdtree(&db, &t.path().join("b"));
    let out = ok(&db, &["import", other.to_str().unwrap()]);
    assert!(
        out.contains("imported study 7 'noisy-small-trees' (host"),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM study"), 10);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM provenance"), 8);
    let new7: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT study_id FROM provenance WHERE source_id = 7",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_ne!(new7, 7);
    let src = std::fs::canonicalize(&other).unwrap();
    assert_eq!(
        count(
            &db,
            &format!(
                "SELECT COUNT(*) FROM provenance WHERE source_path = '{}'",
                src.display()
            )
        ),
        8
    );
    // Every sample came along.
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM samples WHERE study_id > 2"),
        count(&other, "SELECT COUNT(*) FROM sample")
    );
    // Again, and from a copy of the file: nothing new.
    let again = ok(&db, &["import", other.to_str().unwrap()]);
    assert!(again.contains("skipped 8 already here"), "{again}");
    let copy = fixture(t.path(), "copy.db");
    ok(&db, &["import", copy.to_str().unwrap()]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM study"), 10);
    // The imported study reports the same as in its source, and compares with a local run.
    let here = ok(&db, &["report", &new7.to_string(), "--format", "csv"]);
    let there = ok(&other, &["report", "7", "--format", "csv"]);
    assert_eq!(here, there);
    let new8: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT study_id FROM provenance WHERE source_id = 8",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let cmp = ok(&db, &["compare", "1", &new8.to_string()]);
    assert!(cmp.contains("file_create"), "{cmp}");
}

#[test]
fn import_refuses_what_is_not_an_fslab_store() {
    let t = tempfile::tempdir().unwrap();
    let db = fixture(t.path(), "results.db");
    let foreign = t.path().join("notes.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);")
        .unwrap();
    let before = std::fs::read(&foreign).unwrap();
    let err = refused(&db, &["import", foreign.to_str().unwrap()]);
    assert!(err.contains("not an fslab results database"), "{err}");
    // The file to import is the positional argument, not --db: the advice says so.
    assert!(
        err.contains("name another fslab results database to import") && !err.contains("--db"),
        "{err}"
    );
    let err = refused(&db, &["import", t.path().to_str().unwrap()]);
    assert!(
        err.contains("is a directory") && err.contains("to import") && !err.contains("--db"),
        "{err}"
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    let err = refused(
        &db,
        &["import", t.path().join("missing.db").to_str().unwrap()],
    );
    assert!(err.contains("does not exist"), "{err}");
    let err = refused(&db, &["import", db.to_str().unwrap()]);
    assert!(err.contains("being imported into"), "{err}");
}

#[test]
fn views_give_one_row_per_sample_with_levels_as_columns() {
    let t = tempfile::tempdir().unwrap();
    let db = fixture(t.path(), "v2.db");
    // The first command that writes migrates the store and makes the views.
    tiny_fdtree(&db, &t.path().join("x"));
    let c = rusqlite::Connection::open(&db).unwrap();
    let (journal, fs, rep, order): (String, String, i64, i64) = c
        .query_row(
            "SELECT journal, fs, repetition, order_index FROM study_1_samples
             WHERE phase = 'file_create' AND metric = 'rate' ORDER BY order_index LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((journal.as_str(), fs.as_str()), ("16MB", "ext4"));
    assert!(rep >= 0 && order >= 0);
    let levels: String = c
        .query_row(
            "SELECT levels FROM samples WHERE study_id = 1 ORDER BY order_index LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(levels, "journal=16MB,fs=ext4");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM samples"),
        count(&db, "SELECT COUNT(*) FROM sample")
    );
    // The new run has its view too.
    assert!(count(&db, "SELECT COUNT(*) FROM study_9_samples") > 0);
}
