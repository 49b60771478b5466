//! `mpiexec -n 2 fslab mdtest …`: one shared tree and one tree per rank (`-u`), every rank's
//! items counted in the rates, stored once by rank 0, the test directories removed.
//!
//!     cargo test --features mpi --test mpi_mdtest
//!
//! Without mpiexec these tests fail; they never pass silently.
#![cfg(feature = "mpi")]

mod common;

use common::mpi::{json, run, scratch, text};

fn items(doc: &serde_json::Value, phase: &str) -> f64 {
    doc["repetitions"][0]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["phase"] == phase && m["metric"] == "items")
        .unwrap_or_else(|| panic!("no {phase}.items"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn shared_and_unique_trees_count_every_ranks_items() {
    for unique in [false, true] {
        let s = scratch();
        let d = s.path().join("md");
        // The unique run gets a -d of the user's; the shared one makes its own.
        if unique {
            std::fs::create_dir(&d).unwrap();
        }
        let mut args: Vec<String> = ["mdtest", "-n", "500", "--format", "json", "-d"]
            .map(String::from)
            .to_vec();
        args.push(d.display().to_string());
        if unique {
            args.push("-u".into());
        }
        let out = run(s.path(), &[(2, args)]);
        let doc = json(&out);
        assert_eq!(doc["ranks"], 2, "unique {unique}");
        // -n 500: 500 directories and 500 files per rank, both ranks counted.
        assert_eq!(items(&doc, "file_create"), 1000.0, "unique {unique}");
        assert_eq!(items(&doc, "dir_create"), 1000.0, "unique {unique}");
        assert!(doc["run_id"].as_i64().is_some(), "stored once, by rank 0");
        if unique {
            assert_eq!(
                std::fs::read_dir(&d).unwrap().count(),
                0,
                "test directory removed, the user's -d kept"
            );
        } else {
            assert!(!d.exists(), "-d made by the run removed with its contents");
        }
        let db = rusqlite::Connection::open(s.path().join("results.db")).unwrap();
        let runs: i64 = db
            .query_row("SELECT COUNT(*) FROM study", [], |r| r.get(0))
            .unwrap();
        assert_eq!(runs, 1, "unique {unique}");
    }
}

#[test]
fn a_dry_run_makes_nothing() {
    let s = scratch();
    let d = s.path().join("never");
    let args: Vec<String> = ["mdtest", "-n", "50", "-u", "--dry-run", "-d"]
        .map(String::from)
        .into_iter()
        .chain([d.display().to_string()])
        .collect();
    let out = run(s.path(), &[(2, args)]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(said.contains("dry run: nothing created"), "{said}");
    assert!(!d.exists());
}

#[test]
fn several_directories_go_to_the_ranks_in_turn() {
    let s = scratch();
    let (a, b) = (s.path().join("a"), s.path().join("b"));
    let args: Vec<String> = ["mdtest", "-n", "40", "-u", "-F", "--format", "json", "-d"]
        .map(String::from)
        .into_iter()
        .chain([format!("{}@{}", a.display(), b.display())])
        .collect();
    // Three ranks over two directories: ranks 0 and 2 in a, rank 1 in b; every rank's files
    // counted, both directories made by the run and removed again.
    let doc = json(&run(s.path(), &[(3, args.clone())]));
    assert_eq!(items(&doc, "file_create"), 120.0);
    assert!(!a.exists() && !b.exists());
    // More directories than ranks: mdtest's rule, in one line, before anything is made.
    let mut three = args;
    let last = three.len() - 1;
    three[last] = format!(
        "{}@{}@{}",
        a.display(),
        b.display(),
        s.path().join("c").display()
    );
    let out = run(s.path(), &[(2, three)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("3 directories for 2 ranks"),
        "{}",
        text(&out.stderr)
    );
    assert!(!a.exists());
}

/// Each rank judges its own repetitions, so a policy that re-runs or drops them is refused
/// under MPI for mdtest as for the other engines (it ran, unrefused, before).
#[test]
fn disturbed_repeat_and_drop_are_refused_under_mpi() {
    for policy in ["repeat", "drop"] {
        let s = scratch();
        let mut args: Vec<String> = ["mdtest", "-n", "20", "-q", "--disturbed", policy, "-d"]
            .map(String::from)
            .to_vec();
        args.push(s.path().join("md").display().to_string());
        let out = run(s.path(), &[(2, args)]);
        assert!(!out.status.success(), "{policy}: ran");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "--disturbed {policy} is not available in MPI mode"
            )),
            "{err}"
        );
    }
}
