use super::*;

/// fio is needed (Debian's `fio`, from `scripts/install-deps`); without it these tests fail
/// loudly unless FSLAB_SKIP_FIO=1 is set on purpose.
pub(crate) fn have_fio(test: &str) -> bool {
    if engine::fio_binary().is_ok() {
        return true;
    }
    if std::env::var("FSLAB_SKIP_FIO").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: fio missing (FSLAB_SKIP_FIO=1)");
        return false;
    }
    panic!("{test} needs fio: run scripts/install-deps (apt-get install fio), or set FSLAB_SKIP_FIO=1 to skip on purpose");
}

fn spec(text: &str) -> FioSpec {
    toml::from_str(text).unwrap()
}

#[test]
fn inline_jobs_render_global_first_and_flags_bare() {
    let s = spec(
        r#"
[job.seq]
rw = "write"
bs = "1m"
end_fsync = 1
[job.global]
ioengine = "psync"
time_based = true
direct = false
"#,
    );
    let (jf, source) = s.job_file().unwrap();
    assert_eq!(source, "inline [workload.job]");
    assert_eq!(
        jf.render(),
        "[global]\nioengine=psync\ntime_based\n[seq]\nbs=1m\nend_fsync=1\nrw=write\n",
        "false leaves an option out"
    );
    assert_eq!(s.label(), "fio seq");
}

#[test]
fn overrides_reach_every_job_and_the_label() {
    let s = spec(
        r#"
bs = "64k"
iodepth = 8
time_based = true
[job.global]
bs = "4k"
[job.a]
rw = "randread"
[job.b]
rw = "write"
bs = "1m"
"#,
    );
    let (jf, _) = s.job_file().unwrap();
    for j in jf.jobs() {
        assert_eq!(j.value("bs"), Some("64k"), "{}", j.name);
        assert_eq!(j.value("iodepth"), Some("8"));
        assert_eq!(j.value("time_based"), Some("1"));
    }
    assert_eq!(s.label(), "fio a, b, bs=64k, iodepth=8, time_based");
}

/// The refusal of `to_params` for the spec `text`.
fn refusal(text: &str) -> String {
    spec(text).to_params().unwrap_err().to_string()
}

#[test]
fn a_workload_without_a_job_or_with_a_stray_option_is_refused() {
    let e = refusal("");
    assert!(e.contains("job = \"jobs/NAME.fio\""), "{e}");
    for (text, said) in [
        ("[job]\nbs = \"4k\"", "not a section"),
        ("[job.a]\nbs = [1, 2]", "a string, an integer or a boolean"),
    ] {
        let e = spec(text).job_file().unwrap_err().to_string();
        assert!(e.contains(said), "{e}");
    }
    assert!(
        toml::from_str::<FioSpec>("blocksize = \"4k\"").is_err(),
        "unknown key"
    );
}

#[test]
fn paths_outside_the_cell_are_refused_unless_allowed_and_devices_always() {
    let e = refusal("[job.a]\nrw = \"write\"\nsize = \"1m\"\nfilename = \"/tmp/elsewhere\"");
    assert!(e.contains("absolute path"), "{e}");
    assert!(e.contains("allow_outside_cell"), "{e}");
    for (text, said) in [
        (
            "allow_outside_cell = [\"/srv/fio\"]\n[job.a]\nrw = \"write\"\nsize = \"1m\"\nfilename = \"/dev/sdz\"",
            "raw device",
        ),
        (
            "[job.global]\ndirectory = \"/srv\"\n[job.a]\nsize = \"1m\"",
            "fslab sets fio's directory",
        ),
        // `true` says nothing about where: refused, naming the list form.
        (
            "allow_outside_cell = true\n[job.a]\nsize = \"1m\"",
            "allow_outside_cell = [\"/scratch/fio\"]",
        ),
        (
            "allow_outside_cell = [\"rel\"]\n[job.a]\nsize = \"1m\"",
            "absolute directory",
        ),
        ("[job.\"../../victim/v\"]\nsize = \"1m\"", "in its name"),
    ] {
        let e = refusal(text);
        assert!(e.contains(said), "{e}");
    }
}

#[test]
fn fio_judges_the_job_and_its_message_is_one_line() {
    if !have_fio("fio_judges_the_job_and_its_message_is_one_line") {
        return;
    }
    let ok = spec("[job.a]\nrw = \"randread\"\nsize = \"1m\"");
    let p = ok.to_params().unwrap();
    assert_eq!(p.bytes(), 1 << 20);
    let bad = spec("[job.a]\nrw = \"sideways\"\nsize = \"1m\"");
    let e = bad.to_params().unwrap_err();
    let said = e.to_string();
    assert!(said.contains("fio rejects the job"), "{said}");
    assert!(said.contains("rw=sideways"), "fio's own words: {said}");
    assert!(!said.contains('\n'), "{said}");
    assert!(e.is::<crate::error::UsageError>());
    let unknown = spec("[job.a]\nsize = \"1m\"\nno_such_option = 1");
    let said = unknown.to_params().unwrap_err().to_string();
    assert!(said.contains("no_such_option"), "{said}");
}

#[test]
fn the_headline_rule_reads_rw_and_bs() {
    let p = FioParams {
        job: JobFile::parse(
            "[seq-big]\nrw=write\nbs=128k\n[seq-small]\nrw=read\nbs=64k\n[rand-big]\nrw=randread\nbs=1m\n[mixed]\nrw=rw\nbs=4k,1m\n",
            None,
        )
        .unwrap(),
        source: "t".into(),
        ..FioParams::default()
    };
    assert!(p.large_sequential("seq-big", "write"));
    assert!(!p.large_sequential("seq-small", "read"));
    assert!(!p.large_sequential("rand-big", "read"));
    assert!(!p.large_sequential("mixed", "read"));
    assert!(p.large_sequential("mixed", "write"));
    assert!(!p.large_sequential("nosuchjob", "write"));
}

#[test]
fn each_distinct_job_is_judged_by_fio_once() {
    if !have_fio("each_distinct_job_is_judged_by_fio_once") {
        return;
    }
    let text = format!("[once-{}]\nrw=read\nsize=1m\n", std::process::id());
    let job = JobFile::parse(&text, None).unwrap();
    for _ in 0..3 {
        engine::parse_only(&job, &[]).unwrap();
    }
    assert_eq!(engine::times_judged(&job.render()), 1);
}

#[test]
fn fio_and_its_cache_drop_go_through_the_spawn_seam() {
    use crate::process::{Output, RecordingSpawn, Spawn};
    use crate::workload::{Quiet, Target, Workload};
    let t = tempfile::tempdir().unwrap();
    let job = JobFile::parse("[w]\nrw=write\nsize=1m\n", None).unwrap();
    let p = FioParams {
        job: job.clone(),
        source: "t".into(),
        drop_caches: true,
        extra_args: vec!["--bs=8k".into()],
        ..FioParams::default()
    };
    let canned = include_str!("../../../tests/fixtures/fio/fio-3.33-mixed.json+.json");
    let rec = std::sync::Arc::new(RecordingSpawn::with(Box::new(move |_| Output::ok(canned))));
    let mut fio = Fio::new(p)
        .with_spawn(rec.clone() as std::sync::Arc<dyn Spawn>)
        .with_binary("/opt/fio/bin/fio".into());
    let target = Target::new(t.path());
    fio.prepare(&target).unwrap();
    let metrics = fio.run(&target, &Quiet).unwrap();
    fio.cleanup(&target).unwrap();
    let cell = t.path().join(FIO_DIR);
    assert_eq!(
        rec.lines(),
        [
            "echo 3 > /proc/sys/vm/drop_caches".to_string(),
            format!(
                "/opt/fio/bin/fio --output-format=json+ --directory={} --bs=8k -",
                cell.display()
            ),
        ]
    );
    // The job reaches fio on its standard input, as fslab renders it.
    assert_eq!(rec.stdin(1).unwrap(), job.render().into_bytes());
    // What the recorded fio "printed" is what the repetition measured.
    assert!(metrics.iter().any(|m| m.name == "iops"), "{metrics:?}");
    assert!(!cell.exists(), "cleanup removed fio's directory");
}

#[test]
fn an_allowed_directory_is_judged_where_it_resolves() {
    let t = tempfile::tempdir().unwrap();
    // A link to /sys and a path that climbs to it are /sys.
    let link = t.path().join("looks-harmless");
    std::os::unix::fs::symlink("/sys", &link).unwrap();
    let climbing = t.path().join("a");
    std::fs::create_dir(&climbing).unwrap();
    let depth = t.path().components().count();
    let up: std::path::PathBuf = std::iter::repeat("..").take(depth + 1).collect();
    let to_sys = climbing.join(up).join("sys");
    for p in [link.as_path(), to_sys.as_path()] {
        let e = check_allowed_dir(p).unwrap_err().to_string();
        assert!(
            e.contains("not /, /dev, /proc or /sys"),
            "{}: {e}",
            p.display()
        );
    }
    // A plain directory of the test's is fine.
    check_allowed_dir(t.path()).unwrap();
}
