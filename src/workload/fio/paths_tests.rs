use super::*;

const NONE: Allowed<'static> = Allowed {
    dirs: &[],
    cell: None,
};

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn paths_outside_the_cell_are_named() {
    assert_eq!(outside("filename", "data.0", NONE), None);
    assert_eq!(outside("filename", "a:b/c", NONE), None);
    assert_eq!(outside("filename_format", "$jobname.$jobnum", NONE), None);
    let why = outside("filename", "/tmp/x", NONE).unwrap();
    assert!(why.contains("absolute path"), "{why}");
    let why = outside("filename", "a:../../x", NONE).unwrap();
    assert!(why.contains("'..'"), "{why}");
    let why = outside("filename", "/dev/sdb", NONE).unwrap();
    assert!(why.contains("device"), "{why}");
    let why = outside("directory", "sub", NONE).unwrap();
    assert!(why.contains("fslab sets"), "{why}");
    assert_eq!(outside("write_bw_log", "bw", NONE), None);
    assert!(outside("write_bw_log", "/var/log/bw", NONE).is_some());
    assert!(outside("opendir", "../../victim/dir", NONE).is_some());
    assert!(outside("mem", "mmap:/victim/file", NONE).is_some());
    assert_eq!(outside("mem", "malloc", NONE), None);
    assert_eq!(outside("bs", "/not/a/path/option", NONE), None);
}

#[test]
fn allowed_directories_and_a_known_cell_widen_only_what_they_name() {
    let dirs = [PathBuf::from("/scratch/fio")];
    let a = Allowed {
        dirs: &dirs,
        cell: Some(Path::new("/data/run/fslab-fio")),
    };
    assert_eq!(outside("filename", "/scratch/fio/f", a), None);
    assert!(outside("filename", "/scratch/fio/../other", a).is_some());
    assert!(outside("filename", "/scratch/fiox", a).is_some());
    assert_eq!(
        outside("filename", "sub/../f", a),
        None,
        "stays in the cell"
    );
    assert!(
        outside("filename", "../f", a).is_some(),
        "leaves fio's directory"
    );
    assert!(outside("filename", "/dev/sdb", a).is_some());
}

#[test]
fn job_names_that_are_paths_are_refused() {
    let jf = JobFile::parse("[../../victim/v]\nsize=1m\n", None).unwrap();
    let (section, why) = check_job(&jf, NONE).unwrap();
    assert_eq!(section, "../../victim/v");
    assert!(why.contains("in its name"), "{why}");
    let jf = JobFile::parse("[a]\nname=x/y\nsize=1m\n", None).unwrap();
    assert!(check_job(&jf, NONE).is_some());
    let jf = JobFile::parse("[a.b-c]\nsize=1m\n", None).unwrap();
    assert_eq!(check_job(&jf, NONE), None);
}

#[test]
fn pass_through_options_are_read_with_fios_spelling() {
    // One dash, a separate value, a prefix: each the option fio reads.
    for a in [
        args(&["-filename=/victim/v"]),
        args(&["--filename", "../../victim/v"]),
        args(&["--filen=/victim/v"]),
        args(&["--write_iolog=/abs/path"]),
        args(&["-opendir", "../x"]),
    ] {
        let e = check_args(&a, NONE).unwrap_err();
        assert!(e.contains("outside the cell"), "{a:?}: {e}");
    }
    let e = check_args(&args(&["--director=/victim"]), NONE).unwrap_err();
    assert!(e.contains("fio reads it as --directory"), "{e}");
    assert!(e.contains("-D"), "{e}");
    for own in [["--output-format=json"], ["--output=x"], ["-o"]] {
        let e = check_args(&args(&own), NONE).unwrap_err();
        assert!(e.contains("fslab's to set"), "{own:?}: {e}");
    }
    for refused in [
        "--client=host",
        "--server",
        "--daemonize=/x",
        "--trigger=rm -rf /x",
    ] {
        let e = check_args(&args(&[refused]), NONE).unwrap_err();
        assert!(e.contains("leave it out"), "{refused}: {e}");
    }
    let e = check_args(&args(&["--name=../../v"]), NONE).unwrap_err();
    assert!(e.contains("in its name"), "{e}");
    // A second job file is not checked by fslab: refused.
    let e = check_args(&args(&["other.fio"]), NONE).unwrap_err();
    assert!(e.contains("second job file"), "{e}");
    // A flag takes no value: what follows is the next option.
    let e = check_args(&args(&["--time_based", "extra.fio"]), NONE).unwrap_err();
    assert!(e.contains("second job file"), "{e}");
    check_args(
        &args(&["--bs=8k", "--iodepth", "4", "--time_based", "-runtime=2"]),
        NONE,
    )
    .unwrap();
    let dirs = [PathBuf::from("/srv")];
    let a = Allowed {
        dirs: &dirs,
        cell: None,
    };
    check_args(&args(&["--filename=/srv/x"]), a).unwrap();
    assert!(check_args(&args(&["--filename=/dev/sda"]), a).is_err());
}
