//! Consistent flags across commands: `--format` everywhere with `--json` as its alias,
//! `--dry-run` on iozone and dbench, `fdtree -R` after `-C` with the recorded shape, MPI-only
//! flags in a build without MPI, and `study plan`'s ETA from the newest study of the name
//! that completed repetitions. Each test uses its own temporary directory.

mod common;

use common::fslab;
use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    fslab(dir).args(args).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "fslab {args:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn refused(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
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

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn iozone_dry_run_lists_points_bytes_and_an_estimate_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let f = d.join("iozone.tmp");
    let f = f.to_str().unwrap();
    let out = ok(
        t.path(),
        &[
            "iozone",
            "--dry-run",
            "-i",
            "0",
            "-i",
            "1",
            "-s",
            "1m",
            "-s",
            "4m",
            "-r",
            "64k",
            "-f",
            f,
        ],
    );
    assert!(
        out.contains("dry run: nothing written (2 point(s)"),
        "{out}"
    );
    assert!(out.contains("write, rewrite, read, reread"), "{out}");
    // 4 MiB × 4 passes.
    assert!(out.contains("moves 16.0 MiB per repetition"), "{out}");
    assert!(out.contains("takes about"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&ok(
        t.path(),
        &[
            "iozone",
            "--dry-run",
            "--format",
            "json",
            "-i",
            "0",
            "-s",
            "1m",
            "-r",
            "64k",
            "-f",
            f,
            "--repeat",
            "3",
        ],
    ))
    .unwrap();
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["points"][0]["bytes_moved"], 2 * 1024 * 1024);
    assert_eq!(json["bytes_moved"], 3 * 2 * 1024 * 1024);
    assert!(json["estimate_seconds"].as_f64().unwrap() > 0.0);
    assert!(entries(&d).is_empty(), "nothing written");
    assert!(!t.path().join("results.db").exists(), "nothing stored");
}

#[test]
fn dbench_dry_run_says_what_would_run_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let out = ok(
        t.path(),
        &[
            "dbench",
            "--dry-run",
            "-D",
            d.to_str().unwrap(),
            "-t",
            "30",
            "--repeat",
            "2",
            "4",
        ],
    );
    assert!(out.contains("4 clients"), "{out}");
    assert!(out.contains("dry run: nothing created"), "{out}");
    assert!(
        out.contains("takes        1m12s (6 s warmup + 30 s measured, --repeat 2)"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(
        t.path(),
        &[
            "dbench",
            "--dry-run",
            "--json",
            "-D",
            d.to_str().unwrap(),
            "-t",
            "30",
            "4",
        ],
    ))
    .unwrap();
    assert_eq!(json["params"]["clients"], 4);
    assert_eq!(json["estimate_seconds"], 36.0);
    assert!(json["requirements"]["bytes"].as_u64().unwrap() > 0);
    assert!(entries(&d).is_empty(), "nothing created");
    assert!(!t.path().join("results.db").exists(), "nothing stored");
}

#[test]
fn format_json_is_the_same_as_json_on_every_command() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let f = d.join("iozone.tmp");
    let iozone = |flag: &[&str]| {
        let mut a = vec![
            "iozone",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
            f.to_str().unwrap(),
        ];
        a.extend_from_slice(flag);
        let v: serde_json::Value = serde_json::from_str(&ok(t.path(), &a)).unwrap();
        v["schema"].as_str().unwrap().to_string()
    };
    assert_eq!(iozone(&["--format", "json"]), "fslab.iozone.v2");
    assert_eq!(iozone(&["--json"]), "fslab.iozone.v2");
    let dbench = |flag: &str| {
        let a = [
            "dbench",
            flag,
            "-D",
            d.to_str().unwrap(),
            "-t",
            "1",
            "--warmup",
            "0",
            "1",
        ];
        let mut a: Vec<&str> = a.to_vec();
        if flag == "--format" {
            a.insert(2, "json");
        }
        let v: serde_json::Value = serde_json::from_str(&ok(t.path(), &a)).unwrap();
        v["schema"].as_str().unwrap().to_string()
    };
    assert_eq!(dbench("--format"), dbench("--json"));
    let show = ok(t.path(), &["show", "1", "--format", "json"]);
    assert_eq!(show, ok(t.path(), &["show", "1", "--json"]));
    assert!(show.contains("fslab.show.v1"));
    // The default stays text.
    assert!(!ok(t.path(), &["show", "1"]).starts_with('{'));
    let err = refused(t.path(), &["list", "--format", "yaml"]);
    assert!(err.contains("yaml"), "{err}");
}

#[test]
fn fdtree_remove_only_after_create_only_takes_the_recorded_shape() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let o = d.to_str().unwrap();
    ok(
        t.path(),
        &[
            "fdtree", "-q", "-C", "-d", "2", "-f", "3", "-s", "1", "-l", "2", "-o", o,
        ],
    );
    assert_eq!(entries(&d).len(), 2, "tree and its record");
    // Other shape flags than the -C run: refused with the exact command.
    let err = refused(t.path(), &["fdtree", "-q", "-R", "-d", "3", "-o", o]);
    assert!(
        err.contains(&format!("fslab fdtree -R -o {o} -d 2 -f 3 -s 1 -l 2"))
            && err.contains("leave out -d"),
        "{err}"
    );
    assert_eq!(entries(&d).len(), 2, "nothing removed");
    // No shape flags: the recorded shape is used and the whole tree goes.
    let out = run(t.path(), &["fdtree", "-q", "-R", "-o", o]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("shape recorded at -C: -d 2 -f 3 -s 1 -l 2"),
        "{}",
        text(&out.stderr)
    );
    assert!(entries(&d).is_empty(), "left: {:?}", entries(&d));
}

#[test]
fn mpi_only_flags_name_the_mpi_build() {
    if cfg!(feature = "mpi") {
        return; // an MPI build knows them (refused outside mpiexec instead: tests/mpi_*.rs)
    }
    let t = tempfile::tempdir().unwrap();
    let err = refused(
        t.path(),
        &["fdtree", "--shared", "-o", t.path().to_str().unwrap()],
    );
    assert!(
        err.contains("--shared needs the MPI build") && err.contains("--features mpi"),
        "{err}"
    );
    let err = refused(t.path(), &["dbench", "--per-rank", "4"]);
    assert!(err.contains("--per-rank needs the MPI build"), "{err}");
    let help = ok(t.path(), &["fdtree", "--help"]);
    assert!(!help.contains("--shared"), "hidden where it cannot work");
}

#[test]
fn study_plan_takes_its_eta_from_the_newest_study_with_completed_repetitions() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("results.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v2.db"),
        &db,
    )
    .unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    let spec: String = c
        .query_row("SELECT spec FROM study WHERE id = 7", [], |r| r.get(0))
        .unwrap();
    // A newer study of the same name that failed before its first repetition.
    c.execute(
        "INSERT INTO study (kind, name, command_line, tool_version, status, created_at)
         VALUES ('study', 'noisy-small-trees', 'fslab study run noisy.toml', '0.1.0', 'failed', '2026-11-24T03:00:00.000Z')",
        [],
    )
    .unwrap();
    drop(c);
    let file = t.path().join("noisy.toml");
    std::fs::write(&file, spec).unwrap();
    let work = t.path().join("work");
    let out = ok(
        t.path(),
        &[
            "study",
            "plan",
            file.to_str().unwrap(),
            "--workdir",
            work.to_str().unwrap(),
        ],
    );
    let eta = out.lines().find(|l| l.starts_with("ETA:")).unwrap();
    assert!(eta.contains("measured in study 7"), "{eta}");
}
