//! Property tests: extreme numbers (0, i64::MAX, u64::MAX, beyond, floats, with and without
//! unit suffixes) fed to the unit parsers, to `Cli::try_parse_from` and the argument checks
//! that follow it for dbench, iozone, fdtree and report, and to study files. Nothing may
//! panic; every error is one line; every accepted value is usable (a duration can be added
//! to `Instant::now()`, sizes can be summed).

use crate::cli::{Cli, Command};
use crate::plan::Study;
use crate::units;
use clap::Parser;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Instant;

/// A tiny NBENCH loadfile, so dbench checks do not generate the 26 MB default load.
const TINY: &str = "Deltree \"\\clients\\client1\" NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\nNTCreateX \"\\clients\\client1\\a\" 0x40 0x5 1 NT_STATUS_OK\nWriteX 1 0 4096 4096 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n";

/// The numbers at the edges: 0, 1, -1, the limits of u32, i64 and u64 and one beyond,
/// a float too large for any duration, infinity, NaN.
fn extremes() -> Vec<String> {
    let mut v: Vec<String> = [
        u64::MAX.to_string(),
        i64::MAX.to_string(),
        (u64::MAX / 1024).to_string(),
        u32::MAX.to_string(),
        i64::MIN.to_string(),
    ]
    .into();
    let more = "18446744073709551616 9223372036854775808 0 1 -1 1e300 inf NaN 0.5";
    v.extend(more.split(' ').map(String::from));
    v
}

const SUFFIXES: [&str; 22] = [
    "", "s", "ms", "m", "min", "h", "d", "k", "K", "M", "G", "T", "KiB", "MiB", "GiB", "TiB", "b",
    "B", "kb", "MB", "1h", "q",
];

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(extremes()),
        any::<u64>().prop_map(|n| n.to_string()),
        (0u64..5000).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| f.to_string()),
    ]
}

fn suffix() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&SUFFIXES[..])
}

fn value() -> impl Strategy<Value = String> {
    (number(), suffix()).prop_map(|(n, s)| format!("{n}{s}"))
}

/// Run `f`; a panic fails the test naming `what`.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => panic!("panicked on {what}"),
    }
}

fn one_line(what: &str, msg: &str) {
    assert!(
        !msg.trim().is_empty() && !msg.contains('\n'),
        "{what}: error is not one line: {msg:?}"
    );
}

struct Dirs {
    _tmp: tempfile::TempDir,
    dir: String,
    tiny: String,
}

fn dirs() -> &'static Dirs {
    static D: std::sync::OnceLock<Dirs> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        let t = tempfile::tempdir().expect("temporary directory");
        let tiny = t.path().join("tiny.txt");
        std::fs::write(&tiny, TINY).expect("write the tiny loadfile");
        Dirs {
            dir: t.path().display().to_string(),
            tiny: tiny.display().to_string(),
            _tmp: t,
        }
    })
}

/// Parse `args` as the binary would, then run the argument checks the command runs before
/// doing anything; accepted values must be usable.
fn check_cli(args: &[String]) {
    let what = args.join(" ");
    let parsed = no_panic(&what, || Cli::try_parse_from(args));
    let cli = match parsed {
        // main prints clap's first line; it must name something.
        Err(e) => return one_line(&what, e.render().to_string().lines().next().unwrap_or("")),
        Ok(c) => c,
    };
    let checked: anyhow::Result<()> = no_panic(&what, || match &cli.command {
        Command::Dbench(a) if a.generate.is_some() => {
            super::dbench::generate_options(a).map(|_| ())
        }
        Command::Dbench(a) => super::dbench::params_from(a).map(|p| {
            let end = p.warmup.checked_add(p.duration).expect("warmup + run time");
            assert!(Instant::now().checked_add(end).is_some(), "{what}: {end:?}");
        }),
        Command::Fdtree(a) => super::fdtree::params_from(a).map(|p| {
            p.total_counts().expect("validated counts");
        }),
        Command::Iozone(a) => super::iozone::setup(a).and_then(|s| {
            for &pt in &s.plan.points {
                iozone_usable(&super::iozone::point_params(&s.base, pt)?);
            }
            Ok(())
        }),
        Command::Report(a) => super::report::options(&a.output, None).map(|_| ()),
        _ => Ok(()),
    });
    if let Err(e) = checked {
        one_line(&what, &format!("{e:#}"));
        assert_eq!(crate::error::exit_code(&e), 2, "{what}: {e:#}");
    }
}

/// What the engine computes from accepted IOzone parameters: the pause between
/// throughput phases and the strided read's next offset from the last record.
fn iozone_usable(p: &crate::workload::iozone::IozoneParams) {
    let pause = std::time::Duration::from_secs_f64(p.phase_pause);
    assert!(Instant::now().checked_add(pause).is_some());
    let n = p.numrecs();
    let last = (n - 1) * p.record;
    crate::workload::iozone::passes::stride_next(last, p.record, p.stride, n, &mut 0);
    crate::workload::iozone::passes::stride_next(0, p.record, p.stride, n, &mut 0);
}

fn args(words: &[&str], v: &str) -> Vec<String> {
    std::iter::once("fslab")
        .chain(words.iter().copied())
        .map(|w| if w == "V" { v } else { w }.to_string())
        .collect()
}

fn check_commands(v: &str) {
    let d = dirs();
    let (dir, tiny) = (d.dir.as_str(), d.tiny.as_str());
    let file = format!("{dir}/iozone.tmp");
    let gen = format!("{dir}/gen.txt");
    let dbench = ["dbench", "--no-store", "-q", "-c", tiny, "-D", dir];
    let mut cases: Vec<Vec<&str>> = Vec::new();
    for tail in [
        &["-t", "V", "1"][..],
        &["--warmup", "V", "1"],
        &["V"],
        &["--repeat", "V", "1"],
        &["-t", "V", "--warmup", "V", "1"],
    ] {
        cases.push(dbench.iter().chain(tail).copied().collect());
    }
    cases.push(vec!["dbench", "--generate", &gen, "--tasks", "V"]);
    cases.push(vec!["dbench", "--generate", &gen, "--seed", "V"]);
    for flag in "-d -f -s -l --repeat --threads --min-phase".split(' ') {
        cases.push(vec!["fdtree", "--dry-run", "-o", dir, flag, "V"]);
    }
    for flag in "-s -r -n -g -y -q -j -i -V --repeat --min-phase".split(' ') {
        cases.push(vec!["iozone", "-f", &file, flag, "V"]);
    }
    cases.push(vec!["iozone", "-a", "-f", &file, "-n", "V", "-g", "V"]);
    cases.push(vec![
        "iozone", "-t", "V", "-s", "V", "-r", "4k", "-F", &file,
    ]);
    cases.push(vec!["iozone", "-t", "1", "--phase-pause", "V", "-F", &file]);
    cases.push(vec!["report", "1", "--min-phase", "V", "--max-cv", "V"]);
    cases.push(vec!["show", "V"]);
    for c in cases {
        check_cli(&args(&c, v));
    }
}

/// A study file with `key = value` set in `section` (others sane).
fn study_text(section: &str, key: &str, v: &str, quoted: bool) -> String {
    let val = if quoted {
        format!("{v:?}")
    } else {
        v.to_string()
    };
    let set = |s: &str| {
        if s == section {
            format!("{key} = {val}\n")
        } else {
            String::new()
        }
    };
    let tiny = &dirs().tiny;
    let dev = if section == "device" {
        set("device")
    } else {
        "data = \"loop:1G\"\n".into()
    };
    format!(
        "name = \"x\"\n[repetitions]\ntarget_ci = 0.05\n{}[device]\n{dev}[filesystem]\ntype = \"ext4\"\n{}\
         [[factor]]\nname = \"f\"\nvalues = [{{ label = \"a\" }}, {{ label = \"b\"{} }}]\n\
         [[workload]]\nkind = \"fdtree\"\nlevels = 1\n{}\
         [[workload]]\nkind = \"iozone\"\nfile_size = \"64k\"\n{}\
         [[workload]]\nkind = \"dbench\"\nloadfile = {tiny:?}\n{}",
        set("repetitions"),
        set("filesystem"),
        if section == "factor" {
            format!(", {key} = {val}")
        } else {
            String::new()
        },
        set("fdtree"),
        set("iozone"),
        if section == "dbench" && key == "duration" {
            set("dbench")
        } else {
            format!("duration = \"1s\"\n{}", set("dbench"))
        },
    )
}

/// The study keys fed extreme values: per section, its keys.
const STUDY_KEYS: [(&str, &str); 7] = [
    ("repetitions", "min max budget seed"),
    ("device", "data"),
    ("filesystem", "journal_size block_size inode_size"),
    ("fdtree", "dirs files size_blocks levels threads"),
    ("iozone", "file_size record_size stride threads"),
    ("dbench", "clients duration warmup"),
    ("factor", "journal_size duration clients file_size data"),
];

/// Every (section, key) of [`STUDY_KEYS`].
fn study_keys() -> Vec<(&'static str, &'static str)> {
    let each =
        |(section, keys): (&'static str, &'static str)| keys.split(' ').map(move |k| (section, k));
    STUDY_KEYS.into_iter().flat_map(each).collect()
}

fn check_study(text: &str) {
    let parsed = no_panic(text, || Study::parse(text));
    let study = match parsed {
        Err(e) => return one_line(text, &e),
        Ok(s) => s,
    };
    no_panic(text, || {
        study.ram_bytes();
        study.loop_bytes();
        crate::app::study_plan::eta_text(&study, None, 0, (0.0, 0.0));
        if let Some(b) = study.repetitions.budget {
            assert!(Instant::now().checked_add(b).is_some());
        }
        for c in &study.cells {
            for w in &c.workloads {
                let e = w.build().expect("built once when parsed");
                e.requirements();
                if let crate::workload::WorkloadSpec::Iozone(s) = w {
                    iozone_usable(&s.to_params().expect("built once when parsed"));
                }
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn unit_parsers_never_panic_and_stay_in_range(v in value()) {
        if let Ok(d) = no_panic(&v, || units::parse_duration(&v)).map_err(|e| one_line(&v, &e)) {
            prop_assert!(d <= units::MAX_DURATION);
            prop_assert!(Instant::now().checked_add(d + d).is_some());
        }
        for bare in [1, 1024] {
            if let Ok(n) = no_panic(&v, || units::parse_size_with(&v, bare)).map_err(|e| one_line(&v, &e)) {
                prop_assert!(n <= units::MAX_SIZE);
            }
        }
        if let Ok(s) = no_panic(&v, || crate::provision::DeviceSpec::parse(&format!("loop:{v}"))).map_err(|e| one_line(&v, &e)) {
            prop_assert!(s.created_size().is_some_and(|n| n <= units::MAX_SIZE));
        }
    }

    #[test]
    fn command_lines_never_panic_and_fail_in_one_line(v in value()) {
        check_commands(&v);
    }

    #[test]
    fn study_files_never_panic_and_fail_in_one_line(
        v in value(),
        key in prop::sample::select(study_keys()),
        quoted in any::<bool>(),
    ) {
        let (section, key) = key;
        check_study(&study_text(section, key, &v, quoted));
    }
}

/// Every edge number with every suffix on every command line, and with the suffixes a
/// study uses under every study key: the cases random sampling may miss.
#[test]
fn every_edge_value_everywhere() {
    for n in extremes() {
        for suffix in SUFFIXES {
            check_commands(&format!("{n}{suffix}"));
        }
        for suffix in ["", "s", "k", "T", "KiB"] {
            for (section, key) in study_keys() {
                for quoted in [false, true] {
                    check_study(&study_text(section, key, &format!("{n}{suffix}"), quoted));
                }
            }
        }
    }
}

#[test]
fn the_inputs_of_the_issue_are_refused() {
    for v in ["18446744073709551615", "9223372036854775807"] {
        let a = args(&["dbench", "-t", "V", "-D", &dirs().dir, "1"], v);
        let Command::Dbench(d) = Cli::try_parse_from(&a).expect("clap accepts it").command else {
            panic!("not dbench")
        };
        let e = super::dbench::params_from(&d).expect_err(v);
        assert!(e.to_string().contains("out of range; use 0 to 365d"), "{e}");
    }
    for key in ["duration", "budget"] {
        let section = if key == "budget" {
            "repetitions"
        } else {
            "dbench"
        };
        let text = study_text(section, key, "18446744073709551615s", true);
        let e = Study::parse(&text).expect_err(key);
        assert!(e.contains("out of range"), "{e}");
    }
    assert!(Path::new(&dirs().tiny).exists());
}
