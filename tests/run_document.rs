//! The run document (issue 22): every engine command's `--format json` — run and dry run —
//! is one envelope whose shared keys have the same names and meanings across engines
//! (`engine`, `directory`, `fs_type`, `params`, `repeat`, `ranks`, `command_line`, then the
//! run's `run_id`, `repetitions`, `summary`, … or the dry run's `requirements`, `fits`, …),
//! with the engine's own part beside them. Small runs in temporary directories, not stored.

mod common;

use common::{fslab, require_fio};
use serde_json::Value;
use std::path::Path;

fn doc(dir: &Path, args: &[&str]) -> Value {
    let out = fslab(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fslab {args:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The keys every document has, with the values every engine gives them.
fn envelope(d: &Value, engine: &str, dir: &Path, repeat: u64, dry: bool) {
    let canon = std::fs::canonicalize(dir).unwrap();
    assert_eq!(d["engine"], engine, "{d}");
    assert_eq!(d["schema"], format!("fslab.{engine}.v2"));
    assert_eq!(d["directory"], canon.to_str().unwrap(), "{engine}");
    assert!(d["fs_type"].is_string(), "{engine}: {d}");
    assert!(d["params"].is_object(), "{engine}");
    assert_eq!(d["repeat"], repeat, "{engine}");
    assert_eq!(d["ranks"], 1, "{engine}");
    assert_eq!(d["dry_run"], dry, "{engine}");
    let cl = d["command_line"].as_str().unwrap();
    assert!(cl.contains(engine), "{engine}: {cl}");
    assert!(d["fslab_version"].is_string());
    if dry {
        assert!(d["requirements"]["bytes"].is_u64(), "{engine}: {d}");
        assert_eq!(d["fits"], true, "{engine}");
        assert!(d.get("run_id").is_none() && d.get("repetitions").is_none());
    } else {
        // --no-store: the key is there, without an id.
        assert_eq!(d["run_id"], Value::Null, "{engine}");
        assert!(d["warnings"].is_array() && d["environment"].is_object());
        assert_eq!(d["error"], Value::Null, "{engine}");
        // A sweep keeps them per point; one-cell engines at the top.
        let reps = if engine == "iozone" {
            &d["points"][0]["repetitions"]
        } else {
            &d["repetitions"]
        };
        let reps = reps.as_array().unwrap_or_else(|| panic!("{engine}: {d}"));
        assert_eq!(reps.len() as u64, repeat, "{engine}");
        for m in reps[0].as_array().unwrap() {
            for k in ["phase", "metric", "unit", "value"] {
                assert!(m.get(k).is_some(), "{engine}: {m}");
            }
        }
        let sum = if engine == "iozone" {
            &d["points"][0]["summary"]
        } else {
            &d["summary"]
        };
        assert!(!sum.as_array().unwrap().is_empty(), "{engine}");
    }
    // The old names of the directory are gone: one name per concept.
    for old in ["start_dir", "dir", "target", "metrics", "clients"] {
        assert!(d.get(old).is_none(), "{engine} still has {old}");
    }
}

/// `a` with `--no-store --format json`.
fn with<'a>(a: &[&'a str]) -> Vec<&'a str> {
    let mut v = a.to_vec();
    v.extend(["--no-store", "--format", "json"]);
    v
}

#[test]
fn every_engine_prints_the_same_envelope() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let ds = d.to_str().unwrap();
    let f = d.join("iozone.tmp");
    let fs = f.to_str().unwrap();
    let md = d.join("md");
    let mds = md.to_str().unwrap();

    let fd = doc(
        t.path(),
        &with(&[
            "fdtree", "-d", "1", "-f", "2", "-l", "1", "--repeat", "2", "-o", ds,
        ]),
    );
    envelope(&fd, "fdtree", &d, 2, false);
    assert_eq!(fd["counts"]["per_tree"]["dirs"], 2);
    assert_eq!(fd["sync_timed"], false);

    let a = with(&["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f", fs]);
    let io = doc(t.path(), &a);
    envelope(&io, "iozone", &d, 1, false);
    assert_eq!(io["points"][0]["file_kib"], 64);
    assert_eq!(io["points"][0]["record_bytes"], 4096);
    assert_eq!(io["mode"], "single");

    let a = with(&["dbench", "-t", "1", "--warmup", "0", "-D", ds, "1"]);
    let db = doc(t.path(), &a);
    envelope(&db, "dbench", &d, 1, false);
    assert_eq!(db["params"]["clients"], 1);
    assert!(db["outcomes"][0]["measured_ops"].as_u64().unwrap() > 0);
    assert!(db["loadfile"]["operations_per_pass"].as_u64().unwrap() > 0);

    let a = with(&["mdtest", "-n", "4", "-d", mds]);
    let mdt = doc(t.path(), &a);
    // mdtest's directory is -d itself.
    std::fs::create_dir_all(&md).unwrap();
    envelope(&mdt, "mdtest", &md, 1, false);
    assert_eq!(mdt["items_per_rank"], 4);
}

#[test]
fn every_dry_run_prints_the_same_envelope() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let ds = d.to_str().unwrap();
    let f = d.join("iozone.tmp");
    let json = ["--dry-run", "--format", "json", "--repeat", "3"];
    let with = |a: &[&str]| -> Vec<String> {
        a.iter()
            .chain(&json)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        doc(t.path(), &a)
    };
    let fd = run(with(&["fdtree", "-d", "1", "-l", "1", "-o", ds]));
    envelope(&fd, "fdtree", &d, 3, true);
    assert!(fd["requirements"]["inodes"].as_u64().unwrap() > 0);
    let io = run(with(&[
        "iozone",
        "-i",
        "0",
        "-s",
        "64k",
        "-r",
        "4k",
        "-f",
        f.to_str().unwrap(),
    ]));
    envelope(&io, "iozone", &d, 3, true);
    assert_eq!(io["points"][0]["file_kib"], 64);
    let db = run(with(&["dbench", "-t", "1", "-D", ds, "2"]));
    envelope(&db, "dbench", &d, 3, true);
    assert_eq!(db["params"]["clients"], 2);
    let md = run(with(&["mdtest", "-n", "4", "-d", ds]));
    envelope(&md, "mdtest", &d, 3, true);
    assert!(
        std::fs::read_dir(&d).unwrap().next().is_none(),
        "nothing made"
    );
}

#[test]
fn fio_prints_the_same_envelope() {
    if !require_fio("fio_prints_the_same_envelope") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("target");
    std::fs::create_dir(&d).unwrap();
    let job = t.path().join("j.fio");
    std::fs::write(&job, "[w]\nrw=write\nsize=256k\nioengine=psync\n").unwrap();
    let base = ["fio", "--cache", "none", "--no-store", "--json", "-D"];
    let mut a: Vec<&str> = base.to_vec();
    a.extend([d.to_str().unwrap(), job.to_str().unwrap()]);
    let v = doc(t.path(), &a);
    envelope(&v, "fio", &d, 1, false);
    assert_eq!(v["cache"], "none");
    assert!(v["job"].as_str().unwrap().contains("rw=write"));
    assert_eq!(v["fio_json"].as_array().unwrap().len(), 1);
}
