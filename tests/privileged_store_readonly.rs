//! A results database on a read-only file system (a tmpfs remounted `ro`, with no -wal or
//! -shm file beside it) can still be listed, shown and reported; a command that writes says
//! the file cannot be written.

mod common;

use common::{fslab, require_root, TempMount};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn privileged_read_commands_work_on_a_database_in_a_read_only_directory() {
    if !require_root("privileged_read_commands_work_on_a_database_in_a_read_only_directory") {
        return;
    }
    let mnt = TempMount::new("tmpfs", "size=16m,mode=0755");
    let db = mnt.path().join("results.db");
    let work = tempfile::tempdir().unwrap();
    for repeat in ["1", "2"] {
        let out = fslab(work.path())
            .arg("--db")
            .arg(&db)
            .args([
                "fdtree", "-q", "-d", "1", "-l", "1", "-f", "2", "-s", "1", "--repeat", repeat,
                "-o",
            ])
            .arg(work.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    mnt.remount("ro");
    let names: Vec<String> = std::fs::read_dir(mnt.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["results.db"], "no -wal or -shm beside it");

    let run = |args: &[&str]| {
        fslab(work.path())
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    let list = run(&["list"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let listed = text(&list.stdout);
    // One row per run (the full command line names fdtree again, so count rows).
    assert_eq!(
        listed
            .lines()
            .filter(|l| l.trim_start().starts_with(['1', '2']) && l.contains(" fdtree "))
            .count(),
        2,
        "{listed}"
    );
    let show = run(&["show", "2"]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let shown = text(&show.stdout);
    assert!(
        shown.contains("n = 2") && shown.contains("file_create"),
        "{shown}"
    );
    let report = run(&["report", "1"]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(text(&report.stdout).contains("file_create"));
    let compare = run(&["compare", "1", "2"]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));

    // A command that writes is told why it cannot.
    let write = fslab(work.path())
        .arg("--db")
        .arg(&db)
        .args(["fdtree", "-q", "-d", "1", "-l", "1", "-o"])
        .arg(work.path())
        .output()
        .unwrap();
    assert_eq!(write.status.code(), Some(2));
    let err = text(&write.stderr);
    assert!(
        err.contains(&format!(
            "results database {} cannot be written",
            db.display()
        )) && err.contains("choose a writable file with --db"),
        "{err}"
    );
    let after: Vec<_> = std::fs::read_dir(mnt.path()).unwrap().collect();
    assert_eq!(after.len(), 1);
}
