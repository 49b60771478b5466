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

/// The base study with one factor per `(name, levels)`, `levels` the inside of its list.
fn factors(list: &[(&str, &str)]) -> std::result::Result<Study, String> {
    let mut extra = String::new();
    for (name, levels) in list {
        extra += &format!("[[factor]]\nname = \"{name}\"\nvalues = [{levels}]\n");
    }
    study(&extra)
}

/// The repetitions of the base study with a `[repetitions]` section of `lines`.
fn reps(lines: &str) -> Repetitions {
    study(&format!("[repetitions]\n{lines}"))
        .unwrap()
        .repetitions
}

/// The refusal of the base study with a `[repetitions]` section of `lines`.
fn reps_err(lines: &str) -> String {
    study(&format!("[repetitions]\n{lines}")).unwrap_err()
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
fn cells_are_the_cartesian_product_first_factor_slowest() {
    let s = factors(&[
        ("fs", r#"{ label = "ext3", fs = "ext3" }, { label = "xfs", fs = "xfs" }"#),
        (
            "journal",
            r#"{ label = "64M", journal_size = "64M" }, { label = "128M", journal_size = 134217728 }"#,
        ),
    ])
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
    let s = factors(&[(
        "depth",
        r#"{ label = "shallow", levels = 1 }, { label = "deep", levels = 3 }"#,
    )])
    .unwrap();
    let crate::workload::WorkloadSpec::Fdtree(f) = &s.cells[1].workloads[0] else {
        panic!("expected an fdtree workload")
    };
    assert_eq!(f.levels, 3);
    assert_eq!(f.dirs, 2);
    let e = factors(&[("x", r#"{ label = "a", levls = 1 }"#)]).unwrap_err();
    assert!(
        e.contains("sets 'levls', which is neither a provisioning knob"),
        "{e}"
    );
    assert!(e.contains("fdtree"), "{e}");
    let e = factors(&[("x", r#"{ label = "a", levels = "deep" }"#)]).unwrap_err();
    assert!(e.contains("levels"), "{e}");
}

#[test]
fn list_knobs_append_and_scalars_conflict() {
    let s = factors(&[
        ("logbufs", r#"{ label = "8", mount = ["logbufs=8"] }"#),
        (
            "atime",
            r#"{ label = "noatime", mount = "nodiratime,lazytime" }"#,
        ),
    ])
    .unwrap();
    assert_eq!(
        s.cells[0].fs.mount,
        vec!["noatime", "logbufs=8", "nodiratime", "lazytime"]
    );
    let e = factors(&[
        ("a", r#"{ label = "1", journal_size = "64M" }"#),
        ("b", r#"{ label = "2", journal_size = "128M" }"#),
    ])
    .unwrap_err();
    assert!(
        e.contains("factors 'a' and 'b' both set journal_size"),
        "{e}"
    );
}

#[test]
fn meaningless_knobs_name_the_cell() {
    let e = factors(&[(
        "fs",
        r#"{ label = "ext2", fs = "ext2", journal_size = "64M" }"#,
    )])
    .unwrap_err();
    assert!(e.starts_with("cell fs=ext2: ext2 has no journal"), "{e}");
    let e = factors(&[("f", r#"{ label = "x", type = "xfs" }"#)]).unwrap_err();
    assert!(e.contains("use fs ="), "{e}");
}

#[test]
fn repetition_rules() {
    let r = reps("min = 3\ntarget_ci = 0.05\nbudget = \"10m\"\norder = \"randomized\"\nseed = 7\ncache = \"warm\"\n");
    assert_eq!((r.min, r.max, r.target_ci), (3, 30, Some(0.05)));
    assert_eq!(r.budget, Some(Duration::from_secs(600)));
    assert_eq!(
        (r.order, r.seed, r.cache),
        (Order::Randomized, Some(7), CachePolicy::Warm)
    );
    assert!(reps_err("min = 3\nmax = 9\n").contains("only applies with detect or target_ci"));
    // A count given alone is fixed; with detect it is the floor of an adaptive design.
    let fixed = reps("min = 4\n");
    assert_eq!((fixed.min, fixed.max, fixed.detect), (4, 4, None));
    let d = reps("min = 3\nmax = 9\ndetect = \"20%\"\n");
    assert_eq!((d.min, d.max, d.detect), (3, 9, Some(0.2)));
    // A max given turns on the in-study extension (the runner's rule then reads detect);
    // by default the rule is a count, raised per series only by spreads measured before.
    assert!(d.extend && d.rule().detect == Some(0.2));
    let plain = study("").unwrap().repetitions;
    assert!(!plain.extend && plain.rule().detect.is_none());
    // Without min the design chooses n: a larger effect needs fewer.
    let big = reps("detect = \"30%\"\n");
    assert!(big.min < 6 && big.min >= 2, "{}", big.min);
    assert_eq!(reps("detect = \"0.1\"\n").detect, Some(0.1));
    for bad in ["\"ten\"", "\"0%\"", "\"5000%\""] {
        let e = reps_err(&format!("detect = {bad}\n"));
        assert!(e.contains("detect") && e.contains("e.g. \"10%\""), "{e}");
    }
    for (lines, said) in [
        ("detect = \"10%\"\ntarget_ci = 0.05\n", "give one"),
        ("min = 0\n", ""),
        ("target_ci = 5\n", "fraction"),
        ("min = 9\nmax = 3\ntarget_ci = 0.1\n", ""),
        ("order = \"zigzag\"\n", ""),
        ("warmup = 11\n", "at most 10"),
    ] {
        let e = reps_err(lines);
        assert!(e.contains(said), "{lines}: {e}");
    }
    // The per-second timeline is stored unless the study says not to.
    assert!(r.timeline);
    assert!(!reps("timeline = false\n").timeline);
    // Warm-ups: one by default with the warm policy, none otherwise, as many as asked.
    assert_eq!(r.warmup, 1);
    for (lines, warmup) in [
        ("cache = \"cold\"\n", 0),
        ("cache = \"cold\"\nwarmup = 2\n", 2),
        ("cache = \"warm\"\nwarmup = 0\n", 0),
    ] {
        assert_eq!(reps(lines).warmup, warmup, "{lines}");
    }
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
    let s = factors(&[(
        "journal",
        r#"{ label = "ram", journal = "ram:64M" }, { label = "loop", journal = "loop:128M" }, { label = "int", journal = "internal" }"#,
    )])
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
    let e = factors(&[(
        "j",
        r#"{ label = "x", journal_size = 9223372036854775807 }"#,
    )])
    .unwrap_err();
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
fn unknown_keys_missing_parts_and_wrong_types_are_refused_naming_them() {
    let e = Study::parse("name = \"t\"\nnmae = 1\n[device]\ndata = \"loop:1G\"\n").unwrap_err();
    assert!(e.starts_with("line 2: unknown field `nmae`"), "{e}");
    let typed = "name = \"t\"\n[device]\ndata = \"loop:64M\"\n[filesystem]\ntype = \"ext4\"\n";
    for (text, said) in [
        (
            format!("{BASE}[repetitions]\nmni = 3\n"),
            "unknown field `mni`",
        ),
        // A typo inside a workload is caught too.
        (
            BASE.replace("levels = 2", "levles = 2"),
            "unknown field `levles`",
        ),
        (BASE.replace("type = \"ext4\"", ""), "no file system chosen"),
        (
            "name = \"t\"\n[device]\ndata = \"loop:1G\"\n".to_string(),
            "[[workload]]",
        ),
        (
            format!("{typed}[repetitions]\nmin = \"3\"\n[[workload]]\nkind = \"fdtree\"\n"),
            "[repetitions] min: invalid type: string \"3\"",
        ),
        (
            format!("{typed}[[workload]]\nkind = \"fdtree\"\ndirs = \"1\"\n"),
            "workload 1: dirs: invalid type",
        ),
    ] {
        let e = Study::parse(&text).unwrap_err();
        assert!(e.contains(said), "{text}: {e}");
    }
}
