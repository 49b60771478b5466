//! The binary on the extreme inputs of issue 17: each is refused before anything runs, with
//! exit code 2 and one line on stderr that says the allowed range (never a panic, exit 101).

mod common;

use common::fslab;
use std::path::Path;

/// Run `args` and expect exit 2 with one stderr line containing `needle`.
fn refused(db: &Path, args: &[&str], needle: &str) {
    let out = fslab(db).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line expected: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn dbench_run_times_beyond_a_year_are_refused_before_any_client_starts() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for t in ["18446744073709551615", "9223372036854775807"] {
        refused(
            db.path(),
            &["dbench", "--no-store", "-t", t, "-D", d, "1"],
            "-t: duration",
        );
        refused(
            db.path(),
            &["dbench", "--no-store", "-t", t, "-D", d, "1"],
            "out of range; use 0 to 365d",
        );
        refused(
            db.path(),
            &[
                "dbench",
                "--no-store",
                "-t",
                "1",
                "--warmup",
                t,
                "-D",
                d,
                "1",
            ],
            "--warmup: duration",
        );
    }
    assert!(empty(dir.path()), "nothing was created");
}

#[test]
fn dbench_loadfile_timestamps_beyond_a_year_are_refused() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let load = db.path().join("late.txt");
    std::fs::write(
        &load,
        "0.0 Mkdir \"\\clients\" NT_STATUS_OK\n9223372036854775807 Mkdir \"\\clients\" NT_STATUS_OK\n",
    )
    .unwrap();
    refused(
        db.path(),
        &[
            "dbench",
            "--no-store",
            "-c",
            load.to_str().unwrap(),
            "-D",
            dir.path().to_str().unwrap(),
            "1",
        ],
        "timestamp 9223372036854775807 is out of range",
    );
    assert!(empty(dir.path()));
}

#[test]
fn iozone_stride_and_pause_out_of_range_are_refused_before_writing() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let f = f.to_str().unwrap();
    refused(
        db.path(),
        &[
            "iozone",
            "--no-store",
            "-i",
            "0",
            "-i",
            "5",
            "-s",
            "64k",
            "-r",
            "4k",
            "-j",
            "18014398509481983",
            "-f",
            f,
        ],
        "-j 18014398509481983 is out of range; use a stride of 0 to 1073741824 records",
    );
    refused(
        db.path(),
        &[
            "iozone",
            "--no-store",
            "-t",
            "1",
            "-s",
            "64k",
            "-r",
            "4k",
            "-i",
            "0",
            "--phase-pause",
            "1e300",
            "-F",
            f,
        ],
        "--phase-pause 1e300: out of range",
    );
    assert!(empty(dir.path()));
}

fn study(dir: &Path, repetitions: &str, dbench: &str) -> std::path::PathBuf {
    let f = dir.join("s.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"extreme\"\n[repetitions]\n{repetitions}\n[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"ext4\"\n[[workload]]\nkind = \"dbench\"\nclients = 1\n{dbench}\n"
        ),
    )
    .unwrap();
    f
}

#[test]
fn study_plan_refuses_durations_and_budgets_beyond_a_year() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    let w = work.to_str().unwrap();
    let huge = "\"18446744073709551615s\"";
    for (rep, dbench, needle) in [
        ("", format!("duration = {huge}"), "duration: duration"),
        (
            "",
            format!("duration = \"1s\"\nwarmup = {huge}"),
            "warmup: duration",
        ),
        (&format!("budget = {huge}") as &str, String::new(), "budget"),
    ] {
        let f = study(t.path(), rep, &dbench);
        refused(
            t.path(),
            &["study", "plan", f.to_str().unwrap(), "--workdir", w],
            needle,
        );
        refused(
            t.path(),
            &["study", "plan", f.to_str().unwrap(), "--workdir", w],
            "is out of range; use 0 to 365d (one year)",
        );
    }
    let f = study(t.path(), "min = 4294967295", "duration = \"1s\"");
    refused(
        t.path(),
        &["study", "plan", f.to_str().unwrap(), "--workdir", w],
        "[repetitions] min = 4294967295 is out of range; use 1 to 100000",
    );
    assert!(!work.exists(), "a plan makes nothing");
}
