//! Every example study parses and validates, and `fslab study plan` prints what a run does
//! without root and without touching anything.

mod common;

use fslab::plan::Study;
use std::path::PathBuf;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/studies");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_study_parses() {
    // The fio examples are judged by fio itself (`fio --parse-only`).
    let fio = common::require_fio("every_example_study_parses");
    let files = examples();
    assert!(files.len() >= 6, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if !fio && text.contains("kind = \"fio\"") {
            continue;
        }
        let s = Study::load(f).unwrap_or_else(|e| panic!("{}: {e:#}", f.display()));
        assert!(!s.cells.is_empty(), "{}: no cells", f.display());
    }
}

#[test]
fn quickstart_plan_prints_commands_space_and_eta() {
    let t = tempfile::tempdir().unwrap();
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/studies/quickstart.toml");
    let work = t.path().join("work");
    let out = common::fslab(t.path())
        .args(["study", "plan"])
        .arg(&f)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "2 cell(s) × 1 workload(s)",
        "$ mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -J size=16 $DATA",
        "-J size=256 $DATA",
        "$ echo 3 > /proc/sys/vm/drop_caches",
        "space: loop images 16.0 GiB",
        "ETA:",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    // Nothing was made: no work directory, no database.
    assert!(!work.exists());
    assert!(!t.path().join("results.db").exists());
}

#[test]
fn plan_reports_a_typo_with_its_line_and_exit_2() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("s.toml");
    std::fs::write(
        &f,
        "name = \"x\"\n[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"ext4\"\nmuont = [\"noatime\"]\n[[workload]]\nkind = \"fdtree\"\n",
    )
    .unwrap();
    let out = common::fslab(t.path())
        .args(["study", "plan"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 6: unknown field `muont`"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn unsupported_file_systems_are_named_at_plan_time() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("s.toml");
    std::fs::write(
        &f,
        "name = \"x\"\n[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"nilfs2\"\n[[workload]]\nkind = \"fdtree\"\nlevels = 1\n",
    )
    .unwrap();
    let out = common::fslab(t.path())
        .args(["study", "plan"])
        .arg(&f)
        .output()
        .unwrap();
    match fslab::provision::support::check_fs(fslab::provision::FsType::Nilfs2) {
        Ok(()) => assert!(out.status.success()),
        Err(_) => {
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("nilfs2 is not supported on this machine"),
                "{err}"
            );
        }
    }
}

#[test]
fn mdtest_example_plans_the_data_its_files_hold() {
    let t = tempfile::tempdir().unwrap();
    let f =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/studies/mdtest-easy-hard.toml");
    let out = common::fslab(t.path())
        .args(["study", "plan"])
        .arg(&f)
        .arg("--workdir")
        .arg(t.path().join("work"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Empty files (-w 0) are no data, however many directory blocks the run takes; the hard
    // load writes 10,000 files of 3,901 bytes (37.2 MiB).
    assert!(
        text.contains("mdtest easy (mdtest): 50002 files and directories, 0 B of data"),
        "{text}"
    );
    assert!(
        text.contains("mdtest hard (mdtest): 10002 files and directories, 37.2 MiB of data"),
        "{text}"
    );
}
