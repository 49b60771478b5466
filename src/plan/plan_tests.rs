use super::*;
use crate::provision::{FsType, Journal};
use std::time::Duration;

const BASE: &str = r#"
name = "t"
[device]
data = "loop:1G"
[filesystem]
type = "ext4"
mount = ["noatime"]
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 2
"#;

fn study(extra: &str) -> std::result::Result<Study, String> {
    Study::parse(&format!("{BASE}{extra}"))
}

#[test]
fn defaults_are_documented_values() {
    let s = study("").unwrap();
    let r = &s.repetitions;
    // Power by design: 10% at 80% power and an assumed cv of 5% → 6, going on to 30.
    assert_eq!(
        (r.min, r.max, r.target_ci, r.detect),
        (6, 30, None, Some(0.10))
    );
    assert_eq!(r.order, Order::Interleaved);
    assert_eq!(r.cache, CachePolicy::Cold);
    assert_eq!(s.cells.len(), 1);
    let c = &s.cells[0];
    assert_eq!(c.label, "ext4");
    assert_eq!(c.fs.journal, Journal::Internal);
    assert!(c.fs.direct_io);
    assert_eq!(c.fs.mount, vec!["noatime"]);
}

#[test]
fn unknown_keys_are_rejected_with_their_line() {
    let e = Study::parse("name = \"t\"\nnmae = 1\n[device]\ndata = \"loop:1G\"\n").unwrap_err();
    assert!(e.starts_with("line 2: unknown field `nmae`"), "{e}");
    let e = study("[repetitions]\nmni = 3\n").unwrap_err();
    assert!(e.contains("unknown field `mni`"), "{e}");
    // A typo inside a workload is caught too.
    let e = Study::parse(&BASE.replace("levels = 2", "levles = 2")).unwrap_err();
    assert!(e.contains("unknown field `levles`"), "{e}");
}

#[test]
fn cells_are_the_cartesian_product_first_factor_slowest() {
    let s = study(
        r#"
[[factor]]
name = "fs"
values = [{ label = "ext3", fs = "ext3" }, { label = "xfs", fs = "xfs" }]
[[factor]]
name = "journal"
values = [{ label = "64M", journal_size = "64M" }, { label = "128M", journal_size = 134217728 }]
"#,
    )
    .unwrap();
    let labels: Vec<&str> = s.cells.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "fs=ext3 journal=64M",
            "fs=ext3 journal=128M",
            "fs=xfs journal=64M",
            "fs=xfs journal=128M"
        ]
    );
    assert_eq!(s.cells[3].fs.fs, FsType::Xfs);
    assert_eq!(s.cells[3].fs.journal_size, Some(128 << 20));
    assert_eq!(s.cells[3].idx, 3);
    assert_eq!(
        s.cells[0].factors,
        vec![
            ("fs".into(), "ext3".into()),
            ("journal".into(), "64M".into())
        ]
    );
    // Pure: the same file gives the same cells.
    assert_eq!(cells(&s.file).unwrap(), s.cells);
}

#[test]
fn workload_parameters_from_factors_are_merged_and_checked() {
    let s = study(
        r#"
[[factor]]
name = "depth"
values = [{ label = "shallow", levels = 1 }, { label = "deep", levels = 3 }]
"#,
    )
    .unwrap();
    let crate::workload::WorkloadSpec::Fdtree(f) = &s.cells[1].workloads[0] else {
        panic!("expected an fdtree workload")
    };
    assert_eq!(f.levels, 3);
    assert_eq!(f.dirs, 2);
    let e =
        study("[[factor]]\nname = \"x\"\nvalues = [{ label = \"a\", levls = 1 }]\n").unwrap_err();
    assert!(
        e.contains("sets 'levls', which is neither a provisioning knob"),
        "{e}"
    );
    assert!(e.contains("fdtree"), "{e}");
    let e = study("[[factor]]\nname = \"x\"\nvalues = [{ label = \"a\", levels = \"deep\" }]\n")
        .unwrap_err();
    assert!(e.contains("levels"), "{e}");
}

#[test]
fn list_knobs_append_and_scalars_conflict() {
    let s = study(
        r#"
[[factor]]
name = "logbufs"
values = [{ label = "8", mount = ["logbufs=8"] }]
[[factor]]
name = "atime"
values = [{ label = "noatime", mount = "nodiratime,lazytime" }]
"#,
    )
    .unwrap();
    assert_eq!(
        s.cells[0].fs.mount,
        vec!["noatime", "logbufs=8", "nodiratime", "lazytime"]
    );
    let e = study(
        r#"
[[factor]]
name = "a"
values = [{ label = "1", journal_size = "64M" }]
[[factor]]
name = "b"
values = [{ label = "2", journal_size = "128M" }]
"#,
    )
    .unwrap_err();
    assert!(
        e.contains("factors 'a' and 'b' both set journal_size"),
        "{e}"
    );
}

#[test]
fn meaningless_knobs_name_the_cell() {
    let e = study(
        r#"
[[factor]]
name = "fs"
values = [{ label = "ext2", fs = "ext2", journal_size = "64M" }]
"#,
    )
    .unwrap_err();
    assert!(e.starts_with("cell fs=ext2: ext2 has no journal"), "{e}");
    let e = study("[[factor]]\nname = \"f\"\nvalues = [{ label = \"x\", type = \"xfs\" }]\n")
        .unwrap_err();
    assert!(e.contains("use fs ="), "{e}");
}

#[test]
fn repetition_rules() {
    let s = study("[repetitions]\nmin = 3\ntarget_ci = 0.05\nbudget = \"10m\"\norder = \"randomized\"\nseed = 7\ncache = \"warm\"\n").unwrap();
    let r = s.repetitions;
    assert_eq!((r.min, r.max, r.target_ci), (3, 30, Some(0.05)));
    assert_eq!(r.budget, Some(Duration::from_secs(600)));
    assert_eq!(
        (r.order, r.seed, r.cache),
        (Order::Randomized, Some(7), CachePolicy::Warm)
    );
    assert!(study("[repetitions]\nmin = 3\nmax = 9\n")
        .unwrap_err()
        .contains("only applies with detect or target_ci"));
    // A count given alone is fixed; with detect it is the floor of an adaptive design.
    let fixed = study("[repetitions]\nmin = 4\n").unwrap().repetitions;
    assert_eq!((fixed.min, fixed.max, fixed.detect), (4, 4, None));
    let d = study("[repetitions]\nmin = 3\nmax = 9\ndetect = \"20%\"\n").unwrap();
    assert_eq!(
        (d.repetitions.min, d.repetitions.max, d.repetitions.detect),
        (3, 9, Some(0.2))
    );
    // A max given turns on the in-study extension (the runner's rule then reads detect);
    // by default the rule is a count, raised per series only by spreads measured before.
    assert!(d.repetitions.extend && d.repetitions.rule().detect == Some(0.2));
    let plain = study("").unwrap().repetitions;
    assert!(!plain.extend && plain.rule().detect.is_none());
    // Without min the design chooses n: a larger effect needs fewer.
    let big = study("[repetitions]\ndetect = \"30%\"\n")
        .unwrap()
        .repetitions;
    assert!(big.min < 6 && big.min >= 2, "{}", big.min);
    assert_eq!(
        study("[repetitions]\ndetect = \"0.1\"\n")
            .unwrap()
            .repetitions
            .detect,
        Some(0.1)
    );
    for bad in ["\"ten\"", "\"0%\"", "\"5000%\""] {
        let e = study(&format!("[repetitions]\ndetect = {bad}\n")).unwrap_err();
        assert!(e.contains("detect") && e.contains("e.g. \"10%\""), "{e}");
    }
    assert!(study("[repetitions]\ndetect = \"10%\"\ntarget_ci = 0.05\n")
        .unwrap_err()
        .contains("give one"));
    assert!(study("[repetitions]\nmin = 0\n").is_err());
    assert!(study("[repetitions]\ntarget_ci = 5\n")
        .unwrap_err()
        .contains("fraction"));
    assert!(study("[repetitions]\nmin = 9\nmax = 3\ntarget_ci = 0.1\n").is_err());
    assert!(study("[repetitions]\norder = \"zigzag\"\n").is_err());
    // The per-second timeline is stored unless the study says not to.
    assert!(r.timeline);
    assert!(
        !study("[repetitions]\ntimeline = false\n")
            .unwrap()
            .repetitions
            .timeline
    );
    // Warm-ups: one by default with the warm policy, none otherwise, as many as asked.
    assert_eq!(r.warmup, 1);
    assert_eq!(
        study("[repetitions]\ncache = \"cold\"\n")
            .unwrap()
            .repetitions
            .warmup,
        0
    );
    assert_eq!(
        study("[repetitions]\ncache = \"cold\"\nwarmup = 2\n")
            .unwrap()
            .repetitions
            .warmup,
        2
    );
    assert_eq!(
        study("[repetitions]\ncache = \"warm\"\nwarmup = 0\n")
            .unwrap()
            .repetitions
            .warmup,
        0
    );
    assert!(study("[repetitions]\nwarmup = 11\n")
        .unwrap_err()
        .contains("at most 10"));
}

#[test]
fn hash_ignores_comments_but_not_content() {
    let a = study("").unwrap();
    let b = Study::parse(&format!("# a comment\n{BASE}")).unwrap();
    assert_eq!(a.hash, b.hash);
    let c = Study::parse(&BASE.replace("levels = 2", "levels = 3")).unwrap();
    assert_ne!(a.hash, c.hash);
    assert_eq!(a.hash.len(), 16);
}

#[test]
fn devices_and_space() {
    let s = study(
        r#"
[[factor]]
name = "journal"
values = [{ label = "ram", journal = "ram:64M" }, { label = "loop", journal = "loop:128M" }, { label = "int", journal = "internal" }]
"#,
    )
    .unwrap();
    assert_eq!(s.ram_bytes(), 64 << 20);
    assert_eq!(s.loop_bytes(), 3 * (1 << 30) + (128 << 20));
    let e = Study::parse(
        &BASE
            .replace("loop:1G", "loop:16M")
            .replace("size_blocks = 1", "size_blocks = 1000"),
    )
    .unwrap_err();
    assert!(e.contains("needs") && e.contains("larger loop:SIZE"), "{e}");
    assert!(Study::parse(&BASE.replace("loop:1G", "disk:1G"))
        .unwrap_err()
        .contains("[device] data"));
}

#[test]
fn a_study_without_workloads_or_fs_is_refused() {
    let e = Study::parse("name = \"t\"\n[device]\ndata = \"loop:1G\"\n").unwrap_err();
    assert!(e.contains("[[workload]]"), "{e}");
    let e = Study::parse(&BASE.replace("type = \"ext4\"", "")).unwrap_err();
    assert!(e.contains("no file system chosen"), "{e}");
}

#[test]
fn sizes_in_bytes_are_range_checked_like_sizes_in_text() {
    let with = |line: &str| {
        Study::parse(&BASE.replace(
            "mount = [\"noatime\"]",
            &format!("mount = [\"noatime\"]\n{line}"),
        ))
    };
    let e = with("journal_size = 9223372036854775807").unwrap_err();
    assert!(
        e.contains("journal_size: size 9223372036854775807 is out of range; use 0 to 1048576T"),
        "{e}"
    );
    let e = with("journal_size = \"1048577T\"").unwrap_err();
    assert!(e.contains("out of range"), "{e}");
    let e = study("[[factor]]\nname = \"j\"\nvalues = [{ label = \"x\", journal_size = 9223372036854775807 }]\n").unwrap_err();
    assert!(
        e.contains("journal_size: size 9223372036854775807 is out of range"),
        "{e}"
    );
}

#[test]
fn engine_parameter_errors_speak_in_the_study_files_keys() {
    let e = Study::parse(&BASE.replace("dirs = 2", "dirs = 0")).unwrap_err();
    assert!(
        e.contains("dirs = 0: directories per level must be at least 1"),
        "{e}"
    );
    assert!(e.contains("use levels = 0"), "{e}");
    // (The workload's label, before the message, is its fdtree-style name.)
    let msg = e.split("): ").nth(1).unwrap_or_default();
    assert!(
        !msg.contains("-d 0") && !msg.contains("-l 0"),
        "command-line words in {e}"
    );
}

#[test]
fn a_value_of_the_wrong_type_is_named_by_its_key() {
    let base = "name = \"t\"\n[device]\ndata = \"loop:64M\"\n[filesystem]\ntype = \"ext4\"\n";
    let e = Study::parse(&format!(
        "{base}[repetitions]\nmin = \"3\"\n[[workload]]\nkind = \"fdtree\"\n"
    ))
    .err()
    .unwrap();
    assert!(
        e.contains("[repetitions] min: invalid type: string \"3\""),
        "{e}"
    );
    let e = Study::parse(&format!(
        "{base}[[workload]]\nkind = \"fdtree\"\ndirs = \"1\"\n"
    ))
    .err()
    .unwrap();
    assert!(e.contains("workload 1: dirs: invalid type"), "{e}");
}
