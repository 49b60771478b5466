//! The engine commands' compatibility outputs (fdtree's, IOzone's, dbench's and mdtest's own
//! report formats, fslab's summary table and run document, and the lines on stderr around
//! them), line by line, against snapshots: a change to how an engine command is driven must
//! leave what it prints as it was.
//!
//! Measured numbers, dates, units chosen by magnitude, column padding and the machine's
//! name change from run to run; [`shape`] folds them, so a snapshot pins every word, label,
//! line and their order. Warnings are left out: which ones appear depends on how busy the
//! machine is (the warnings have tests of their own).

mod common;
use common::fslab;
use std::path::Path;

/// Units a number may be printed in, chosen by its magnitude.
const UNITS: &[&str] = &[
    "ns", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "B/s", "KiB/s", "MiB/s", "GiB/s",
    "TiB/s", "kB", "Mi", "Ki", "Gi",
];
const DATES: &[&str] = &[
    "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// File systems the test's directory may be on.
const FILE_SYSTEMS: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs",
];

/// `text` with what changes between runs and machines folded: the binary's path as `<FSLAB>`,
/// the test's directory as `<DIR>`, its file system as `<FS>`, the host's name as `<HOST>`,
/// every number as `#`, units and date words as `U` and `D`, runs of blanks and of box-drawing
/// rules as one, warning lines dropped, dbench's per-second lines (as many as seconds passed)
/// as one, and its rows of a pass's set-up (`Deltree`, `Mkdir`) dropped.
fn shape(text: &str, dir: &Path) -> String {
    let host = fslab::sysinfo::short_hostname();
    let bin = assert_cmd::cargo::cargo_bin("fslab");
    let mut text = text
        .replace(&bin.display().to_string(), "<FSLAB>")
        .replace(&dir.display().to_string(), "<DIR>");
    for fs in FILE_SYSTEMS {
        text = text.replace(&format!("({fs})"), "(<FS>)");
    }
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("warning:") || trimmed.starts_with("WARNING:") {
            continue;
        }
        // dbench's rows of the loadfile's set-up: there when a pass starts inside the timed
        // window, which depends on how fast the passes go.
        if trimmed.starts_with("Deltree ") || trimmed.starts_with("Mkdir ") {
            continue;
        }
        let line = line.replace(&format!(".{host}."), ".<HOST>.");
        let mut folded = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.' || *d == ',')
                {
                    chars.next();
                }
                folded.push('#');
            } else if c == ' ' || c == '\t' || c == '─' || c == '═' {
                while chars.peek() == Some(&c) || (c == '\t' && chars.peek() == Some(&' ')) {
                    chars.next();
                }
                folded.push(c);
            } else {
                folded.push(c);
            }
        }
        let words: Vec<String> = folded
            .split(' ')
            .map(|w| {
                if UNITS.contains(&w) {
                    "U".to_string()
                } else if DATES.contains(&w) {
                    "D".to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let folded = words.join(" ").trim_end().to_string();
        let per_second = folded.contains(" MB/sec execute ") || folded.contains(" MB/sec warmup ");
        if !(per_second && out.last() == Some(&folded)) {
            out.push(folded);
        }
    }
    out.join("\n")
}

/// Run `fslab ARGS` (with `{}` in an argument replaced by a fresh directory's path) and return
/// its stdout and stderr, shaped.
fn run(args: &[&str]) -> String {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{}", &d)).collect();
    let out = fslab(db.path())
        .args(&args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{args:?}: {so}\n{se}");
    if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&so) {
        return format!(
            "--- stdout (JSON)\n{}\n--- stderr\n{}\n",
            json_shape(&doc, dir.path(), 0),
            shape(&se, dir.path())
        );
    }
    format!(
        "--- stdout\n{}\n--- stderr\n{}\n",
        shape(&so, dir.path()),
        shape(&se, dir.path())
    )
}

/// A JSON document's shape: every key in order with its value's shape (strings shaped as text,
/// numbers and nulls as `#`), an array as the distinct shapes of its elements (telemetry's left out),
/// and what describes the machine or depends on how busy it is (`environment`, `warnings`, `disturbed`) as `…`.
fn json_shape(v: &serde_json::Value, dir: &Path, depth: usize) -> String {
    use serde_json::Value;
    let pad = "  ".repeat(depth + 1);
    match v {
        // A statistic is a number, or null where the values give none (a cv of all zeros).
        Value::Null | Value::Number(_) => "#".into(),
        Value::Bool(_) => "bool".into(),
        Value::String(s) => {
            let mut s = s.clone();
            for fs in FILE_SYSTEMS {
                if s == *fs {
                    s = "<FS>".into();
                }
            }
            format!("{:?}", shape(&s, dir))
        }
        Value::Array(items) => {
            let mut shapes: Vec<String> = Vec::new();
            // Telemetry's metrics (dotted names: `dev.data.write_bytes`, `fs.…`) depend on
            // the machine's devices and file system.
            let machine = |i: &Value| i["metric"].as_str().is_some_and(|m| m.contains('.'));
            for i in items.iter().filter(|i| !machine(i)) {
                let s = json_shape(i, dir, depth + 1);
                if !shapes.contains(&s) {
                    shapes.push(s);
                }
            }
            format!("[{}]", shapes.join(" | "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| match k.as_str() {
                    "environment" | "warnings" | "disturbed" => format!("{pad}{k}: …"),
                    // The interval's method follows the values (log-t for positive ones).
                    "ci95_method" => format!("{pad}{k}: s"),
                    _ => format!("{pad}{k}: {}", json_shape(v, dir, depth + 1)),
                })
                .collect();
            format!("{{\n{}\n{}}}", fields.join("\n"), "  ".repeat(depth))
        }
    }
}

/// A small fdtree tree in the test's directory, with `more` after it.
fn fdtree(more: &[&str]) -> String {
    let tree = [
        "fdtree", "-d", "2", "-f", "2", "-s", "1", "-l", "2", "-o", "{}",
    ];
    run(&[&tree[..], more].concat())
}

#[test]
fn fdtree_own_format() {
    insta::assert_snapshot!(fdtree(&["--format", "fdtree", "--repeat", "2"]));
}

#[test]
fn fdtree_summary_table() {
    insta::assert_snapshot!(fdtree(&["--repeat", "2"]));
}

#[test]
fn fdtree_run_document() {
    insta::assert_snapshot!(fdtree(&["--format", "json", "--repeat", "3"]));
}

#[test]
fn iozone_one_point() {
    insta::assert_snapshot!(run(&[
        "iozone", "-s", "64k", "-r", "4k", "-i", "0", "-i", "1", "--repeat", "2", "-f", "{}/f"
    ]));
}

#[test]
fn iozone_sweep() {
    insta::assert_snapshot!(run(&[
        "iozone", "-a", "-n", "64k", "-g", "128k", "-y", "4k", "-q", "8k", "-i", "0", "-f", "{}/f"
    ]));
}

#[test]
fn dbench_own_format() {
    insta::assert_snapshot!(run(&[
        "dbench", "-t", "1.2", "--warmup", "0.3", "--repeat", "2", "-D", "{}", "1"
    ]));
}

#[test]
fn mdtest_own_format() {
    insta::assert_snapshot!(run(&["mdtest", "-n", "20", "--repeat", "2", "-d", "{}/m"]));
}

#[test]
fn mdtest_run_document() {
    insta::assert_snapshot!(run(&[
        "mdtest", "-n", "20", "--repeat", "2", "--format", "json", "-d", "{}/m"
    ]));
}

#[test]
fn iozone_dry_run() {
    insta::assert_snapshot!(run(&[
        "iozone",
        "-a",
        "-n",
        "64k",
        "-g",
        "128k",
        "-i",
        "0",
        "--dry-run",
        "-f",
        "{}/f"
    ]));
}
