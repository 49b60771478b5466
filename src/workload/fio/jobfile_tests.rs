use super::*;

const FILE: &str = "\
; a comment
[global]
ioengine=psync
size=64m
bs=4k

[randwrite-fsync]
rw=randwrite
fsync=1
# another comment

[seqwrite]
stonewall
rw=write
bs=1m
numjobs=2
";

/// The jobs of job-file `text`, which must parse.
fn jobs(text: &str) -> Vec<Job> {
    JobFile::parse(text, None).unwrap().jobs()
}

#[test]
fn parses_sections_options_and_flags_and_renders_them_back() {
    let jf = JobFile::parse(FILE, None).unwrap();
    assert_eq!(jf.preamble, vec!["; a comment"]);
    let names: Vec<&str> = jf.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["global", "randwrite-fsync", "seqwrite"]);
    assert_eq!(jf.sections[2].get("stonewall"), Some(None));
    assert_eq!(jf.sections[2].get("bs"), Some(Some("1m")));
    assert_eq!(jf.sections[1].get("bs"), None);
    // Comments stay, and the rendered file parses to the same thing.
    let text = jf.render();
    assert!(text.contains("# another comment"), "{text}");
    assert_eq!(JobFile::parse(&text, None).unwrap(), jf);
}

#[test]
fn jobs_inherit_globals_and_their_own_values_win() {
    let jobs = jobs(FILE);
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].value("bs"), Some("4k"));
    assert_eq!(jobs[1].value("bs"), Some("1m"));
    assert_eq!(jobs[0].block_size("write"), Some(4096));
    assert_eq!(jobs[1].block_size("write"), Some(1 << 20));
    assert!(!jobs[0].sequential());
    assert!(jobs[1].sequential());
    assert_eq!(jobs[0].bytes(), Some(64 << 20));
    assert_eq!(jobs[1].bytes(), Some(2 * (64 << 20)), "numjobs multiplies");
}

#[test]
fn set_everywhere_overrides_globals_and_jobs_that_set_the_key() {
    let mut jf = JobFile::parse(FILE, None).unwrap();
    jf.set_everywhere("bs", "64k");
    let jobs = jf.jobs();
    assert!(
        jobs.iter().all(|j| j.value("bs") == Some("64k")),
        "{jobs:?}"
    );
    // A file without [global] gets one.
    let mut j = JobFile::parse("[a]\nrw=read\n", None).unwrap();
    j.set_everywhere("iodepth", "8");
    assert_eq!(j.sections[0].name, "global");
    assert_eq!(j.jobs()[0].value("iodepth"), Some("8"));
}

#[test]
fn block_sizes_per_direction_and_rw_default() {
    let j = jobs("[a]\nbs=4k,1m\nrw=rw\n");
    assert_eq!(j[0].block_size("read"), Some(4096));
    assert_eq!(j[0].block_size("write"), Some(1 << 20));
    assert_eq!(
        j[0].block_size("trim"),
        Some(1 << 20),
        "the last one repeats"
    );
    assert!(j[0].sequential());
    let d = jobs("[a]\nsize=1g\n");
    assert!(d[0].sequential(), "fio's default rw is read");
    assert_eq!(d[0].block_size("read"), Some(4096), "fio's default bs");
    let r = jobs("[a]\nrw=randread:8\nbs=1m\n");
    assert!(!r[0].sequential());
}

#[test]
fn sizes_are_binary_and_unknown_forms_are_none() {
    assert_eq!(parse_size("4k"), Some(4096));
    assert_eq!(parse_size("4KiB"), Some(4096));
    assert_eq!(parse_size("64M"), Some(64 << 20));
    assert_eq!(parse_size("2g"), Some(2 << 30));
    assert_eq!(parse_size("512"), Some(512));
    assert_eq!(parse_size("50%"), None);
    assert_eq!(parse_size("x"), None);
    let f = jobs("[a]\nfilesize=1m-4m\nnrfiles=3\n");
    assert_eq!(f[0].bytes(), Some(3 * (4 << 20)));
    let p = jobs("[a]\nsize=50%\n");
    assert_eq!(p[0].bytes(), None);
}

#[test]
fn includes_are_put_in_place_relative_to_the_including_file() {
    let t = tempfile::tempdir().unwrap();
    let jobs = t.path().join("jobs");
    std::fs::create_dir_all(jobs.join("common")).unwrap();
    std::fs::write(jobs.join("common/sizes.fio"), "size=8m\ninclude more.fio\n").unwrap();
    std::fs::write(jobs.join("common/more.fio"), "; nested\nbs=64k\n").unwrap();
    let jf = JobFile::parse("[a]\nrw=read\ninclude common/sizes.fio\n", Some(&jobs)).unwrap();
    let a = &jf.jobs()[0];
    assert_eq!(a.value("size"), Some("8m"));
    assert_eq!(
        a.value("bs"),
        Some("64k"),
        "a nested include, relative to its own file"
    );
    let text = jf.render();
    assert!(!text.lines().any(|l| l.starts_with("include")), "{text}");
    assert!(text.contains("bs=64k"), "{text}");
    // What fio reads back is the same job, with no include left to open.
    let again = JobFile::parse(&text, None).unwrap();
    assert_eq!(again.jobs(), jf.jobs());
}

#[test]
fn a_missing_include_or_a_section_in_one_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let e = JobFile::parse("[a]\ninclude nope.fio\n", Some(t.path())).unwrap_err();
    assert!(e.contains("line 2") && e.contains("nope.fio"), "{e}");
    std::fs::write(t.path().join("s.fio"), "[b]\nrw=read\n").unwrap();
    let e = JobFile::parse("[a]\ninclude s.fio\n", Some(t.path())).unwrap_err();
    assert!(e.contains("only options in included files"), "{e}");
    let e = JobFile::parse("include s.fio\n[a]\n", Some(t.path())).unwrap_err();
    assert!(e.contains("outside any [section]"), "{e}");
    std::fs::write(t.path().join("loop.fio"), "include loop.fio\n").unwrap();
    let e = JobFile::parse("[a]\ninclude loop.fio\n", Some(t.path())).unwrap_err();
    assert!(e.contains("nest deeper"), "{e}");
}

#[test]
fn environment_variables_are_read_as_fio_reads_them() {
    std::env::set_var("FSLAB_TEST_JOBFILE_V", "../../victim/v");
    let jf = JobFile::parse(
        "[a]\nfilename=${FSLAB_TEST_JOBFILE_V}\nbs=${FSLAB_TEST_UNSET_X}4k\n",
        None,
    )
    .unwrap();
    let a = &jf.jobs()[0];
    assert_eq!(a.value("filename"), Some("../../victim/v"));
    assert_eq!(a.value("bs"), Some("4k"), "an unset variable is empty");
    assert_eq!(expand_env("a${unclosed"), "a${unclosed");
    assert_eq!(expand_env("${}x"), "x");
}

#[test]
fn malformed_files_are_refused_with_the_line() {
    let e = JobFile::parse("rw=read\n[a]\n", None).unwrap_err();
    assert!(e.contains("line 1"), "{e}");
    assert!(e.contains("outside any [section]"), "{e}");
    let e = JobFile::parse("[a\n", None).unwrap_err();
    assert!(e.contains("no ']'"), "{e}");
    let e = JobFile::parse("[global]\nbs=4k\n", None).unwrap_err();
    assert!(e.contains("no job"), "{e}");
}
