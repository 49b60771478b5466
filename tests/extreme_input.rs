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

/// A sparse file of `size` bytes this test made: endless-looking input (like /dev/zero)
/// without touching a system path.
fn sparse(dir: &Path, name: &str, size: u64) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().set_len(size).unwrap();
    p
}

/// A FIFO this test made, fed zeros by a thread until nobody reads: an endless input.
fn endless_fifo(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("endless");
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let w = p.clone();
    std::thread::spawn(move || {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&w) {
            let zeros = vec![0u8; 1 << 16];
            while f.write_all(&zeros).is_ok() {}
        }
    });
    p
}

#[test]
fn input_files_are_read_up_to_a_limit_that_the_refusal_names() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = sparse(d, "huge", 8 << 30);
    let s = big.to_str().unwrap();
    refused(
        db.path(),
        &["study", "plan", s],
        "larger than 4 MiB, the limit for a study file",
    );
    refused(
        db.path(),
        &[
            "fio",
            "--cache",
            "none",
            "--no-store",
            "-D",
            d.to_str().unwrap(),
            s,
        ],
        "larger than 4 MiB, the limit for a fio job",
    );
    refused(
        db.path(),
        &[
            "dbench",
            "--no-store",
            "-c",
            s,
            "-D",
            d.to_str().unwrap(),
            "1",
        ],
        "larger than 64 MiB, the limit for a dbench loadfile",
    );
    // A pipe is not read at all (issue 32): it is refused as what it is, at once, whether
    // a writer feeds it without end or nobody ever opens it for writing.
    let fifo = endless_fifo(d);
    refused(
        db.path(),
        &["study", "plan", fifo.to_str().unwrap()],
        "it is a FIFO, not a regular file; give a regular file",
    );
    assert!(!d.join("fslab-fio").exists());
}

#[test]
fn a_budget_shorter_than_one_repetition_is_refused_by_plan_and_run() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    let w = work.to_str().unwrap();
    // dbench runs 10 s a repetition: a budget of 0 s or 5 s would stop before measuring.
    for budget in ["0s", "5s"] {
        let f = study(
            t.path(),
            &format!("budget = \"{budget}\""),
            "duration = \"10s\"\nwarmup = \"0s\"",
        );
        for cmd in ["plan", "run"] {
            refused(
                t.path(),
                &["study", cmd, f.to_str().unwrap(), "--workdir", w],
                "is shorter than one repetition",
            );
        }
    }
    assert!(!work.exists(), "nothing was made");
    let f = study(
        t.path(),
        "budget = \"1m\"",
        "duration = \"10s\"\nwarmup = \"0s\"",
    );
    let out = fslab(t.path())
        .args(["study", "plan", f.to_str().unwrap(), "--workdir", w])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
