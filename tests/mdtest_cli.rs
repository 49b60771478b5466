//! `fslab mdtest`: mdtest's flags and SUMMARY table with all ten operations, fslab's options
//! among mdtest's, one JSON document, a dry run that makes nothing, refusals in one line, the
//! test directories removed by provenance (a user's file inside one keeps it), and a killed
//! run's test directory removed by `fslab cleanup` — only it. Every path is the test's own.

mod common;

use common::fslab;
use std::process::Stdio;
use std::time::{Duration, Instant};

const OPERATIONS: [&str; 10] = [
    "Directory creation",
    "Directory stat",
    "Directory rename",
    "Directory removal",
    "File creation",
    "File stat",
    "File read",
    "File removal",
    "Tree creation",
    "Tree removal",
];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_summary_table_has_all_ten_operations_and_the_run_is_stored() {
    let t = tempfile::tempdir().unwrap();
    let out_dir = t.path().join("out");
    let o = fslab(t.path())
        .args(["mdtest", "-n", "10000", "-d"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let (so, se) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{so}\n{se}");
    assert!(
        so.contains("SUMMARY rate (in ops/sec): (of 1 iterations)"),
        "{so}"
    );
    assert!(so.contains("1 tasks, 10000 files/directories"), "{so}");
    for op in OPERATIONS {
        let line = so
            .lines()
            .find(|l| l.trim_start().starts_with(op))
            .unwrap_or_else(|| panic!("no {op}: {so}"));
        // Max, Min, Mean, Std Dev: four numbers, the rate positive.
        let nums: Vec<f64> = line[op.len() + 3..]
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(nums.len(), 4, "{line}");
        assert!(nums[2] > 0.0, "{line}");
    }
    assert!(se.contains("stored as run 1"), "{se}");
    // The test directory is gone, and -d too: this run made it (as mdtest does).
    assert!(!out_dir.exists());
    let list = fslab(t.path()).args(["list"]).output().unwrap();
    assert!(
        text(&list.stdout).contains("mdtest -n 10000"),
        "{}",
        text(&list.stdout)
    );
}

#[test]
fn fslab_options_mix_with_mdtests_and_json_is_one_document() {
    let t = tempfile::tempdir().unwrap();
    let o = fslab(t.path())
        .args([
            "mdtest", "-n", "300", "--format", "json", "-z", "1", "-b", "3", "-i", "3", "-F",
        ])
        .arg("-d")
        .arg(t.path().join("o"))
        .args(["--no-store", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], "fslab.mdtest.v2");
    assert_eq!(doc["run_id"], serde_json::Value::Null);
    assert_eq!(doc["iterations"].as_array().unwrap().len(), 3);
    assert_eq!(doc["repetitions"].as_array().unwrap().len(), 3);
    assert_eq!(doc["params"]["files_only"], true);
    // Files only: no directory phases.
    let phases: Vec<&str> = doc["repetitions"][0]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metric"] == "rate")
        .map(|m| m["phase"].as_str().unwrap())
        .collect();
    assert!(
        phases.contains(&"file_create") && !phases.contains(&"dir_create"),
        "{phases:?}"
    );
}

#[test]
fn a_dry_run_makes_nothing_and_bad_input_is_one_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("never");
    let o = fslab(t.path())
        .args(["mdtest", "-n", "1000", "--dry-run", "-d"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("dry run: nothing created"));
    assert!(!d.exists());
    for (args, needle) in [
        (vec!["-n", "ten"], "-n ten"),
        (
            vec!["-n", "10", "-i", "2", "--repeat", "3"],
            "give one of them",
        ),
        (
            vec!["-n", "10", "-S"],
            "-S: mdtest option not supported by fslab (shared-file",
        ),
        (
            vec!["-n", "10", "-u", "-d", "a@b"],
            "-d a@b: 2 directories for 1 rank",
        ),
        (vec!["-n", "10", "-k", "-w", "8"], "-k with -w 8"),
        (vec!["-n", "10", "--repeat", "many"], "--repeat"),
    ] {
        let o = fslab(t.path()).arg("mdtest").args(&args).output().unwrap();
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: one line: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
    }
    assert!(
        !t.path().join("out").exists(),
        "nothing made in the working directory"
    );
}

#[test]
fn create_only_then_remove_only_removes_only_what_fslab_made() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("md");
    let run = |extra: &[&str]| {
        fslab(t.path())
            .args(["mdtest", "-n", "60", "-z", "1", "-b", "2", "-q", "-d"])
            .arg(&d)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["-C"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let test_dir = d.join("test-dir.0-0");
    assert!(test_dir.is_dir());
    // A user's file inside the tree fslab made.
    let tree = test_dir.join("mdtest_tree.0");
    std::fs::write(tree.join("mine.txt"), b"keep me").unwrap();
    let o = run(&["-r"]);
    assert!(!o.status.success(), "a foreign file stops the removal");
    assert_eq!(std::fs::read(tree.join("mine.txt")).unwrap(), b"keep me");
    // mdtest's own items are gone; what holds the user's file stays.
    let left: Vec<String> = std::fs::read_dir(&tree)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.contains(&"mine.txt".to_string()), "{left:?}");
    assert!(!left.iter().any(|n| n.contains(".mdtest.")), "{left:?}");
}

#[test]
fn a_directory_the_user_made_stays() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("mine");
    std::fs::create_dir(&d).unwrap();
    let o = fslab(t.path())
        .args(["mdtest", "-n", "100", "-q", "-d"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(d.is_dir(), "-d was the user's");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
}

#[test]
fn cleanup_removes_a_killed_runs_test_directory_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("md");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("user.txt"), b"mine").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", t.path().join("results.db"))
        .args(["mdtest", "-n", "2000000", "-F", "-C", "-q", "-d"])
        .arg(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let test_dir = d.join("test-dir.0-0");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !test_dir.join("mdtest_tree.0").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(test_dir.exists(), "the killed run left its test directory");
    let o = fslab(t.path())
        .args(["cleanup", "--workdir"])
        .arg(t.path().join("work"))
        .output()
        .unwrap();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("mdtest test directory"), "{out}");
    assert!(!test_dir.exists(), "{out}");
    assert_eq!(std::fs::read(d.join("user.txt")).unwrap(), b"mine");
}

#[test]
fn status_file_and_verbosity_as_mdtest() {
    let t = tempfile::tempdir().unwrap();
    let (d, x) = (t.path().join("md"), t.path().join("stonewall"));
    let run = |extra: &[&str]| {
        fslab(t.path())
            .args(["mdtest", "-n", "50", "-F", "-q", "--no-store", "-d"])
            .arg(&d)
            .arg("-x")
            .arg(&x)
            .args(extra)
            .output()
            .unwrap()
    };
    // A stonewalled creation writes the files each rank made (a 60 s wall is not reached).
    let o = run(&["-C", "-W", "60"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&x).unwrap(), "50");
    // A stat run reads it; -v prints each phase as mdtest's level 1 does.
    let o = run(&["-T", "-v"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("V-1: main: * iteration 1 *"), "{out}");
    assert!(out.contains("V-1:   File stat         :"), "{out}");
    // A status file of another run is refused before anything is touched.
    std::fs::write(&x, "3").unwrap();
    let o = run(&["-r"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("says 3 files per rank"),
        "{}",
        text(&o.stderr)
    );
    assert!(d.join("test-dir.0-0").is_dir());
    std::fs::write(&x, "50").unwrap();
    let o = run(&["-r"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!d.join("test-dir.0-0").exists());
}

/// `--db` among mdtest's flags chooses the results database, as `fslab mdtest --help` says
/// (it was refused as "not an mdtest option").
#[test]
fn db_among_mdtests_flags_is_fslabs() {
    let t = tempfile::tempdir().unwrap();
    for (i, db) in [["--db", "a.db"].as_slice(), &["--db=b.db"]]
        .iter()
        .enumerate()
    {
        let o = fslab(t.path())
            .current_dir(t.path())
            .args(["mdtest", "-n", "10", "-q"])
            .args(*db)
            .args(["-d", &format!("out{i}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    assert!(t.path().join("a.db").exists() && t.path().join("b.db").exists());
    assert!(
        !t.path().join("results.db").exists(),
        "not the default database"
    );
}

/// `fslab list --kind mdtest` lists mdtest's runs (it was refused: the kinds were a hand list
/// without mdtest).
#[test]
fn list_kind_mdtest_lists_mdtests_runs() {
    let t = tempfile::tempdir().unwrap();
    let out_dir = t.path().join("out");
    let o = fslab(t.path())
        .args(["mdtest", "-n", "10", "-q", "-d"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = fslab(t.path())
        .args(["list", "--kind", "mdtest", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("mdtest"), "{}", text(&o.stdout));
}
