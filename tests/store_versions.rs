//! Old stores keep working: `tests/fixtures/store-v2.db`, written by fslab at schema version 2
//! (the report fixtures' six studies, the real high-variance study `noisy-small-trees` — ext4
//! against xfs on loop devices with tiny fdtree trees — and an `fslab fdtree` run; see
//! doc/schema.md), is listed, shown and reported as it is by the commands that only read, and
//! migrated to the current version by the first command that writes, after which every report
//! is the same byte for byte.

mod common;

use common::fslab;
use std::path::Path;

/// The high-variance study of the fixture.
const NOISY: &str = "7";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `(user_version, application_id)` of a database file, read without fslab.
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

/// Runs fslab on the database `db` (through `FSLAB_DB`), which must succeed; its stdout.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = fslab(db.parent().unwrap()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Every read of the fixture that the test compares before and after the migration.
fn reads(db: &Path) -> Vec<String> {
    let mut out = vec![ok(db, &["show", NOISY]), ok(db, &["show", "8"])];
    for id in [NOISY, "1", "3", "8"] {
        for format in ["table", "json", "html"] {
            out.push(ok(db, &["report", id, "--format", format]));
        }
    }
    out
}

#[test]
fn a_version_2_store_is_read_as_is_then_migrated_by_the_first_write() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v2.db"),
        &db,
    )
    .unwrap();
    let app = fslab::store::APPLICATION_ID;
    assert_eq!(markers(&db), (2, app));

    let list: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fdtree",
            "noisy-small-trees",
            "broken",
            "fdtree",
            "fdtree",
            "xfs-log",
            "journal-iozone",
            "ext4-journal"
        ]
    );
    assert!(ok(&db, &["list"]).contains("noisy-small-trees"));
    let before = reads(&db);
    assert_eq!(markers(&db), (2, app), "reading migrates nothing");

    // The high-variance study's report says why in every format: two of its phases of a
    // millisecond or two are shown to vary by more than 10% (71% and 26% measured with four
    // repetitions) — too short to trust (the phases' variation is that warning's, not warned
    // about again). The other two vary by less than four repetitions can show to be above 10%
    // (the chi-square bound, `stats::cv_lower_bound`): not named.
    // Wide enough that no line wraps.
    let table = ok(&db, &["report", NOISY, "--width", "2000"]);
    // Grouped by kind in the terminal; every line with --warnings all.
    assert!(
        table.contains("Phases under 1 s whose time varies by more than 10%, too short to trust (2): dir_create (1.03 ms)"),
        "{table}"
    );
    let all = ok(
        &db,
        &["report", NOISY, "--warnings", "all", "--width", "2000"],
    );
    assert!(
        all.contains("- dir_create: mean time under 1 s and varying by more than 10% in 2 of 2 configurations (shortest 1.03 ms"),
        "{all}"
    );
    // Four repetitions: too few for the outlier rule (it needs five).
    assert!(!all.contains("outlier"), "{all}");
    assert!(
        table.contains("Caution: a phase too short to trust (dir_create)"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&db, &["report", NOISY, "--format", "json"])).unwrap();
    let kinds: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "too_short").count(),
        2,
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"outlier"), "n = 4: {kinds:?}");
    // Its few slow first repetitions are within chance for eight series of four (each has
    // its first the worst one time in four): not named (doc/reports.md, first repetition).
    assert!(!kinds.contains(&"first_slower"), "{kinds:?}");
    let html = ok(&db, &["report", NOISY, "--format", "html"]);
    assert!(
        html.contains("too short to trust (2): dir_create (1.03 ms)"),
        "{html}"
    );
    assert!(html.contains("<section id=\"environment\">"));

    // The first write migrates; nothing read changes.
    let o = t.path().join("o");
    std::fs::create_dir(&o).unwrap();
    let out = o.to_str().unwrap();
    ok(
        &db,
        &[
            "fdtree", "-q", "-d", "1", "-l", "1", "-f", "2", "-s", "1", "-o", out,
        ],
    );
    assert_eq!(markers(&db), (fslab::store::SCHEMA_VERSION, app));
    // Version 3 at least: the columns of the machine around each repetition are there, NULL
    // in the rows written before.
    assert!(markers(&db).0 >= 3);
    let c = rusqlite::Connection::open(&db).unwrap();
    let (n, unsettled, no_interference): (i64, i64, i64) = c
        .query_row(
            "SELECT COUNT(*), SUM(settle_seconds IS NULL), SUM(interference IS NULL) FROM trial",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (n, unsettled),
        (72, 72),
        "71 trials of version 2 and the new run's one, none settled"
    );
    // The 71 old rows have no interference; the new run's row has one when the machine was
    // busy during it (as it can be under a parallel test run).
    assert!(
        (71..=72).contains(&no_interference),
        "{no_interference} trials without interference"
    );
    drop(c);
    assert_eq!(
        reads(&db),
        before,
        "every report is the same after the migration"
    );
    let list: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 9);
    assert!(ok(&db, &["report", "9"]).contains("file_create"));

    // Version 7: ids are never reused. Remove the newest run; the next one gets 10, not 9.
    ok(&db, &["rm", "9"]);
    ok(
        &db,
        &[
            "fdtree", "-q", "-d", "1", "-l", "1", "-f", "2", "-s", "1", "-o", out,
        ],
    );
    let list: serde_json::Value = serde_json::from_str(&ok(&db, &["list", "--json"])).unwrap();
    let ids: Vec<i64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect();
    assert!(ids.contains(&10) && !ids.contains(&9), "{ids:?}");
    // The old studies kept their cells and trials through the remade study table.
    let c = rusqlite::Connection::open(&db).unwrap();
    let cells: i64 = c
        .query_row("SELECT COUNT(*) FROM cell WHERE study_id <= 8", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(cells >= 8, "{cells} cells of the fixture's eight studies");
}
