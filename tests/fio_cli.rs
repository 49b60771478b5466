//! `fslab fio` and fio workloads in studies, driven through the binary with the real fio
//! (Debian's `fio`; `require_fio` installs it or fails loudly unless FSLAB_SKIP_FIO=1):
//! repetitions stored and summarised, options passed through, the stored numbers equal to
//! fio's own JSON of the same runs (live parse-back), and every refusal as one line with
//! exit code 2 before anything runs. Runs without root (`--cache none`) in temporary
//! directories.

mod common;

use common::{fslab, require_fio};
use std::path::Path;

const JOB: &str = "\
[global]
ioengine=psync
size=2m

[rr]
rw=randread

[sw]
stonewall
rw=write
bs=1m
";

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn one_line_refusal(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

/// `fslab fio -q --cache none -D DIR/data JOB` started to be interrupted: its own handlers act
/// on the signals (also under `nohup`); stderr piped. Returns the data directory and the child.
fn spawn_to_interrupt(dir: &Path, job: &Path) -> (std::path::PathBuf, std::process::Child) {
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    let child = common::default_signals(&mut std::process::Command::new(
        assert_cmd::cargo::cargo_bin("fslab"),
    ))
    .env("FSLAB_DB", dir.join("results.db"))
    .args(["fio", "--cache", "none", "-q", "-D"])
    .arg(&data)
    .arg(job)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    (data, child)
}

#[test]
fn repetitions_are_stored_and_equal_fios_own_json() {
    if !require_fio("repetitions_are_stored_and_equal_fios_own_json") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "j.fio", JOB);
    let data = t.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = fslab(t.path())
        .args(["fio", "--cache", "none", "--repeat", "2", "--json", "-D"])
        .arg(&data)
        .arg(&job)
        // Passed through unchanged: a default that a job's own bs overrides (fio's rule).
        .arg("--bs=8k")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "fslab.fio.v2");
    assert_eq!(doc["fio_args"][0], "--bs=8k");
    let reps = doc["repetitions"].as_array().unwrap();
    let fio = doc["fio_json"].as_array().unwrap();
    assert_eq!((reps.len(), fio.len()), (2, 2));
    // Live parse-back: every repetition's stored IOPS, bandwidth and percentiles are
    // fio's own figures of that run.
    for (rep, f) in reps.iter().zip(fio) {
        let get = |phase: &str, name: &str| common::metric(rep, phase, name);
        for (job, dir) in [("rr", "read"), ("sw", "write")] {
            let j = f["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["jobname"] == job)
                .unwrap();
            let d = &j[dir];
            let ph = format!("{job}/{dir}");
            assert_eq!(get(&ph, "iops"), d["iops"].as_f64().unwrap());
            assert_eq!(
                get(&ph, "throughput") * 1024.0,
                d["bw_bytes"].as_f64().unwrap()
            );
            assert_eq!(get(&ph, "io_bytes"), 2.0 * 1024.0 * 1024.0);
            // rr has no bs of its own (fio's default would be 4 KiB): 2 MiB in 8 KiB reads;
            // sw keeps its own 1 MiB writes.
            let ios = if job == "rr" { 256.0 } else { 2.0 };
            assert_eq!(get(&ph, "total_ios"), ios, "{ph}");
            for (key, name) in [("50.000000", "clat_p50"), ("99.000000", "clat_p99")] {
                let want = d["clat_ns"]["percentile"][key].as_f64().unwrap() / 1e6;
                assert_eq!(get(&ph, name), want, "{ph} {name}");
            }
        }
    }
    // Stored: the run and its histograms, and nothing left in the directory.
    let run = doc["run_id"].as_i64().unwrap();
    let show = fslab(t.path())
        .args(["show", &run.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(show.status.success());
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(shown.contains("rr/read"), "{shown}");
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "fslab-fio removed"
    );
    let report = fslab(t.path())
        .args(["report", &run.to_string(), "--all"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    assert!(
        text.contains("Latency percentiles"),
        "histograms merged: {text}"
    );
}

#[test]
fn the_table_shows_mean_sd_and_ci_per_job_and_direction() {
    if !require_fio("the_table_shows_mean_sd_and_ci_per_job_and_direction") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "j.fio", JOB);
    let out = fslab(t.path())
        .args([
            "fio",
            "--cache",
            "none",
            "--repeat",
            "2",
            "--no-store",
            "-D",
        ])
        .arg(t.path())
        .arg(&job)
        .arg("--bs=8k")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for want in [
        "rr/read",
        "sw/write",
        "iops",
        "throughput",
        "95% CI",
        "clat_p99",
    ] {
        assert!(text.contains(want), "missing {want}: {text}");
    }
    assert!(err.contains("run 2/2"), "{err}");
    assert!(err.contains("fio options --bs=8k"), "{err}");
}

/// The hints after a run name a command that shows every metric, as they promise: `fslab show
/// N` alone is the compact report (it said "every metric: fslab show ID", which needed --all).
#[test]
fn the_hint_names_the_command_that_shows_every_metric() {
    if !require_fio("the_hint_names_the_command_that_shows_every_metric") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "j.fio", JOB);
    let out = fslab(t.path())
        .args(["fio", "--cache", "none", "-D"])
        .arg(t.path())
        .arg(&job)
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    // Both hints, the table's and the stored line's, name the same command.
    let hint = "fslab show 1 --all";
    assert!(text.contains(&format!("every metric: {hint}")), "{text}");
    assert!(
        err.contains(&format!("stored as run 1: {hint} (all metrics)")),
        "{err}"
    );
    let show = |args: &[&str]| {
        let o = fslab(t.path()).args(args).output().unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // A metric outside the table: in what the hint runs, not in the compact report.
    let all = show(&["show", "1", "--all"]);
    assert!(all.contains("Clat min"), "{all}");
    assert!(!show(&["show", "1"]).contains("Clat min"));
}

/// `-D` below `/dev/shm` (a tmpfs) runs: as root the cage binds the directory into its own
/// `/dev` (it was refused, "fio runs in a cage with its own /dev"); anything else below `/dev`
/// is refused in one line naming both ways out.
#[test]
fn fio_runs_in_a_directory_below_dev_shm() {
    if !require_fio("fio_runs_in_a_directory_below_dev_shm") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "j.fio", JOB);
    let shm = tempfile::Builder::new()
        .prefix("fslab-fio-test-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let out = fslab(t.path())
        .args(["fio", "--cache", "none", "--json", "-D"])
        .arg(shm.path())
        .arg(&job)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["fs_type"], "tmpfs", "measured on /dev/shm's tmpfs");
    let ios = doc["repetitions"][0]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["phase"] == "rr/read" && m["metric"] == "io_bytes")
        .map(|m| m["value"].as_f64().unwrap());
    assert_eq!(ios, Some(2.0 * 1024.0 * 1024.0));
    assert_eq!(
        std::fs::read_dir(shm.path()).unwrap().count(),
        0,
        "fslab-fio removed"
    );
    let refused = fslab(t.path())
        .args(["fio", "--cache", "none", "-D", "/dev/pts"])
        .arg(&job)
        .output()
        .unwrap();
    let err = one_line_refusal(&refused);
    assert!(err.contains("or one in the tmpfs of /dev/shm"), "{err}");
}

#[test]
fn refusals_are_one_line_with_exit_code_2() {
    if !require_fio("refusals_are_one_line_with_exit_code_2") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let run = |job: &Path, extra: &[&str]| {
        fslab(d)
            .args(["fio", "--cache", "none", "-D"])
            .arg(d)
            .arg(job)
            .args(extra)
            .output()
            .unwrap()
    };
    // fio's own message for a job it rejects.
    let bad = write(d, "bad.fio", "[a]\nrw=sideways\nsize=1m\n");
    let err = one_line_refusal(&run(&bad, &[]));
    assert!(
        err.contains("fio rejects the job") && err.contains("rw=sideways"),
        "{err}"
    );
    // A job that writes outside the directory.
    let out_file = d.join("elsewhere");
    let outside = write(
        d,
        "outside.fio",
        &format!("[a]\nrw=write\nsize=1m\nfilename={}\n", out_file.display()),
    );
    let err = one_line_refusal(&run(&outside, &[]));
    assert!(
        err.contains("absolute path") && err.contains("--allow-outside"),
        "{err}"
    );
    assert!(!out_file.exists());
    // A raw device, even when outside paths are allowed.
    let dev = write(d, "dev.fio", "[a]\nrw=write\nsize=1m\nfilename=/dev/null\n");
    let err = one_line_refusal(&run(&dev, &[]));
    assert!(err.contains("device"), "{err}");
    // Options fslab sets itself.
    let ok = write(d, "ok.fio", "[a]\nrw=read\nsize=1m\n");
    let err = one_line_refusal(&run(&ok, &["--output-format=normal"]));
    assert!(err.contains("fslab's to set"), "{err}");
    // fslab's own options after the job file, where they would go to fio.
    for own in ["--repeat=2", "--format", "--no-store"] {
        let err = one_line_refusal(&run(&ok, &["--bs=8k", own]));
        let name = own.split('=').next().unwrap();
        assert!(
            err.contains(&format!("{name} is fslab's option"))
                && err.contains("before the job file"),
            "{err}"
        );
    }
    // A missing job file.
    let err = one_line_refusal(&run(&d.join("none.fio"), &[]));
    assert!(err.contains("cannot read fio job file"), "{err}");
    // Dropping caches needs root.
    if !common::is_root() {
        let out = fslab(d)
            .args(["fio", "-D"])
            .arg(d)
            .arg(&ok)
            .output()
            .unwrap();
        let err = one_line_refusal(&out);
        assert!(err.contains("--cache none"), "{err}");
    }
}

#[test]
fn a_missing_fio_names_the_package() {
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "ok.fio", "[a]\nrw=read\nsize=1m\n");
    let empty = t.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let out = fslab(t.path())
        .env("PATH", &empty)
        .env_remove("FSLAB_FIO")
        .args(["fio", "--cache", "none", "-D"])
        .arg(t.path())
        .arg(&job)
        .output()
        .unwrap();
    let err = one_line_refusal(&out);
    assert!(err.contains("apt-get install fio"), "{err}");
}

const STUDY: &str = r#"
name = "fio-refusals"
[device]
data = "loop:64M"
[filesystem]
type = "ext4"
[[workload]]
kind = "fio"
job = "JOB"
"#;

#[test]
fn study_plan_refuses_bad_fio_jobs_before_anything_is_made() {
    if !require_fio("study_plan_refuses_bad_fio_jobs_before_anything_is_made") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let work = d.join("work");
    let plan = |job_text: &str| {
        write(d, "jobs.fio", job_text);
        let study = write(d, "s.toml", &STUDY.replace("JOB", "jobs.fio"));
        fslab(d)
            .args(["study", "plan"])
            .arg(&study)
            .arg("--workdir")
            .arg(&work)
            .output()
            .unwrap()
    };
    // Accepted (the job path is relative to the study file, not to the working directory).
    let out = plan("[a]\nrw=randwrite\nsize=8m\nfsync=1\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("8.0 MiB of data"), "{text}");
    // fio rejects it.
    let err = one_line_refusal(&plan("[a]\nrw=randwrite\nsize=8m\nbogus_option=3\n"));
    assert!(
        err.contains("fio rejects the job") && err.contains("bogus_option"),
        "{err}"
    );
    // Outside the cell.
    let err = one_line_refusal(&plan("[a]\nrw=write\nsize=1m\nfilename=../../x\n"));
    assert!(
        err.contains("'..'") && err.contains("allow_outside_cell"),
        "{err}"
    );
    // Too large for the device: size × numjobs.
    let err = one_line_refusal(&plan("[a]\nrw=write\nsize=16m\nnumjobs=4\n"));
    assert!(
        err.contains("needs 64.0 MiB") && err.contains("loop:SIZE"),
        "{err}"
    );
    assert!(!work.exists(), "nothing made");
}

#[test]
fn a_factor_sets_fio_options_per_cell() {
    if !require_fio("a_factor_sets_fio_options_per_cell") {
        return;
    }
    let s = fslab::plan::Study::parse(
        r#"
name = "bs"
[device]
data = "loop:256M"
[filesystem]
type = "ext4"
[[factor]]
name = "bs"
values = [{ label = "4k", bs = "4k" }, { label = "1m", bs = "1m", iodepth = 2 }]
[[workload]]
kind = "fio"
[workload.job.seq]
rw = "write"
size = "8m"
"#,
    )
    .unwrap();
    assert_eq!(s.cells.len(), 2);
    let labels: Vec<String> = s.cells.iter().map(|c| c.workloads[0].label()).collect();
    assert_eq!(labels, ["fio seq, bs=4k", "fio seq, bs=1m, iodepth=2"]);
}

#[test]
fn ctrl_c_stops_fio_and_keeps_no_partial_repetition() {
    if !require_fio("ctrl_c_stops_fio_and_keeps_no_partial_repetition") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write(
        t.path(),
        "long.fio",
        "[w]\nrw=write\nsize=4m\ntime_based\nruntime=300\nioengine=psync\n",
    );
    let (data, child) = spawn_to_interrupt(t.path(), &job);
    common::wait_for("fio's data file", || {
        data.join("fslab-fio").join("w.0.0").exists()
    });
    // SAFETY: kill(2) on the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed().as_secs() < 30,
        "fio was stopped, not waited for"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!data.join("fslab-fio").exists(), "fio's directory removed");
    let c = rusqlite::Connection::open(t.path().join("results.db")).unwrap();
    let ok: i64 = c
        .query_row("SELECT count(*) FROM trial WHERE status = 'ok'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(ok, 0, "the cut-short run is not a repetition");
}

#[test]
fn dry_run_shows_the_job_as_fio_gets_it_and_runs_nothing() {
    if !require_fio("dry_run_shows_the_job_as_fio_gets_it_and_runs_nothing") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let inc = write(t.path(), "common.fio", "ioengine=psync\n");
    let job = write(
        t.path(),
        "j.fio",
        &format!("[w]\ninclude {}\nrw=write\nsize=${{SIZE}}\n", inc.display()),
    );
    let run = |extra: &[&str]| {
        let out = fslab(t.path())
            .env("SIZE", "3m")
            .args(["fio", "--cache", "none", "--dry-run", "--repeat", "4"])
            .args(extra)
            .arg("-D")
            .arg(&data)
            .arg(&job)
            .arg("--bs=8k")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&[]);
    // The job as fio gets it: the include in place, ${SIZE} as fio would read it.
    assert!(text.contains("    ioengine=psync"), "{text}");
    assert!(text.contains("    rw=write"), "{text}");
    let cell = std::fs::canonicalize(&data).unwrap().join("fslab-fio");
    assert!(
        text.contains(&format!("--directory={} --bs=8k -", cell.display())),
        "{text}"
    );
    assert!(text.contains("repetitions  4"), "{text}");
    assert!(text.contains("fits"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["repeat"], 4);
    assert_eq!(doc["fio_args"][0], "--bs=8k");
    assert_eq!(doc["requirements"]["bytes"], 3 * 1024 * 1024);
    assert!(doc["job"].as_str().unwrap().contains("ioengine=psync"));
    assert!(doc.get("fio_json").is_none() && doc.get("run_id").is_none());
    // Nothing ran: no fio directory, no file, nothing stored.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
    assert!(!t.path().join("results.db").exists());
}

/// `fslab fio -D DIR` runs on whatever file system DIR is on: a job that would fill it is
/// refused (issue 32: `fill_device=1` filled the host's disk), unless `--allow-fill`.
#[test]
fn a_job_that_would_fill_the_directorys_file_system_is_refused_unless_allowed() {
    if !require_fio("a_job_that_would_fill_the_directorys_file_system_is_refused_unless_allowed") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let run = |job: &Path, extra: &[&str]| {
        fslab(d)
            .args(["fio", "--cache", "none", "--dry-run"])
            .args(extra)
            .arg("-D")
            .arg(d)
            .arg(job)
            .output()
            .unwrap()
    };
    for (name, text) in [
        ("fill.fio", "[a]\nrw=write\nbs=1m\nfill_device=1\n"),
        (
            "fillfs.fio",
            "[global]\nfill_fs=1\n[a]\nrw=write\nsize=1m\n",
        ),
    ] {
        let job = write(d, name, text);
        let err = one_line_refusal(&run(&job, &[]));
        assert!(
            err.contains("which writes until the file system of -D")
                && err.contains("--allow-fill"),
            "{name}: {err}"
        );
        // Asked for: the dry run goes on.
        let out = run(&job, &["--allow-fill"]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // More than the directory's file system has free, less its reserve.
    let huge = write(d, "huge.fio", "[a]\nrw=write\nsize=900t\n");
    let err = one_line_refusal(&run(&huge, &[]));
    assert!(
        err.contains("after a reserve of") && err.contains("--allow-fill"),
        "{err}"
    );
    assert!(!d.join("fslab-fio").exists());
}

/// A program that does not stop when asked (here fio waiting for its `exec_prerun` command)
/// is killed, with everything it started, once `process::STOP_GRACE` has passed after the
/// first request.
#[test]
fn a_program_that_does_not_stop_is_killed_after_the_grace() {
    if !require_fio("a_program_that_does_not_stop_is_killed_after_the_grace") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // fio waits for its exec_prerun with system(), which ignores SIGINT while it waits.
    let mark = format!("119.{}", std::process::id());
    let job = write(
        t.path(),
        "stubborn.fio",
        &format!("[w]\nrw=write\nsize=1m\nexec_prerun=sleep {mark}\n"),
    );
    let (_, child) = spawn_to_interrupt(t.path(), &job);
    let sleeping = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&mark))
        })
    };
    common::wait_for("the stubborn command", sleeping);
    // SAFETY: kill(2) on the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    assert!(
        took >= fslab::process::STOP_GRACE && took.as_secs() < 40,
        "stopped after {took:?}"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::wait_for("nothing of the job left", || !sleeping());
}

/// fslab's options among fio's after the job file are fslab's, refused rather than passed to
/// fio: every option the engine commands share, spelt long and short, with its default as
/// the value (`--db` and `-q` went to fio).
#[test]
fn fslabs_options_after_the_job_file_are_refused_not_passed_to_fio() {
    let t = tempfile::tempdir().unwrap();
    let job = write(t.path(), "j.fio", JOB);
    for o in fslab::cli::common_options() {
        let value = o.get_action().takes_values().then(|| {
            let default = o.get_default_values().first();
            default.map_or("x".to_string(), |v| v.to_string_lossy().into_owned())
        });
        let long = o.get_long().map(|l| format!("--{l}"));
        for flag in long
            .into_iter()
            .chain(o.get_short().map(|c| format!("-{c}")))
        {
            let out = fslab(t.path())
                .args(["fio", "--cache", "none", "-D"])
                .arg(t.path())
                .arg(&job)
                .args(["--bs=8k", &flag])
                .args(value.iter())
                .output()
                .unwrap();
            let err = one_line_refusal(&out);
            assert!(err.contains(&format!("{flag} is fslab's option")), "{err}");
        }
    }
}
