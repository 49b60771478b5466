//! Fidelity with dbench: its own client.txt (Debian's dbench package, never part of this
//! repository) replays with every expected status met, and one pass runs exactly the
//! operations the file lists.
//!
//! Fails loudly when client.txt is missing (install it with `scripts/install-deps --test`),
//! unless FSLAB_SKIP_DBENCH_FIDELITY=1 is set on purpose.

mod common;

use common::fslab;
use std::collections::BTreeMap;
use std::path::Path;

const CLIENT_TXT: &str = "/usr/share/dbench/client.txt";

/// Count operations per name the simple way: first token, after an optional timestamp.
fn count_lines(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let mut toks = line.split_whitespace();
        let Some(mut first) = toks.next() else {
            continue;
        };
        if first.starts_with('#') {
            continue;
        }
        if first.starts_with(|c: char| c.is_ascii_digit()) {
            first = toks.next().unwrap_or("");
        }
        // fslab reports the names dbench 4.0 prints, not the loadfile's.
        let printed = match first {
            "QUERY_PATH_INFORMATION" => "Qpathinfo",
            "QUERY_FILE_INFORMATION" => "Qfileinfo",
            "QUERY_FS_INFORMATION" => "Qfsinfo",
            "SET_FILE_INFORMATION" => "Sfileinfo",
            "FIND_FIRST" => "Find",
            other => other,
        };
        *m.entry(printed.to_string()).or_insert(0) += 1;
    }
    m
}

#[test]
fn client_txt_replays_one_pass_with_matching_op_counts() {
    let path = Path::new(CLIENT_TXT);
    if !path.exists() {
        if std::env::var("FSLAB_SKIP_DBENCH_FIDELITY").as_deref() == Ok("1") {
            eprintln!(
                "SKIPPED client_txt fidelity: {CLIENT_TXT} absent (FSLAB_SKIP_DBENCH_FIDELITY=1)"
            );
            return;
        }
        panic!("{CLIENT_TXT} is missing: run scripts/install-deps --test (installs dbench), or set FSLAB_SKIP_DBENCH_FIDELITY=1 to skip on purpose");
    }
    let text = std::fs::read_to_string(path).unwrap();
    let want = count_lines(&text);
    assert!(
        want.values().sum::<u64>() > 400_000,
        "{CLIENT_TXT} looks truncated"
    );

    // tmpfs when there is one: the test is about semantics, not the disk.
    let base = if Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm").unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let db = tempfile::tempdir().unwrap();
    let out = fslab(db.path())
        .args([
            "dbench",
            "--run-once",
            "-t",
            "600",
            "--json",
            "--no-store",
            "-q",
            "-c",
            CLIENT_TXT,
            "-D",
        ])
        .arg(base.path())
        .arg("1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client.txt must replay without a status mismatch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rep = &doc["outcomes"][0];
    assert_eq!(rep["passes"], 1);
    let got: BTreeMap<String, u64> = rep["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["op"].as_str().unwrap().to_string(),
                o["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got, want,
        "one pass must run exactly the lines of {CLIENT_TXT}"
    );
    assert_eq!(
        rep["measured_ops"].as_u64().unwrap(),
        want.values().sum::<u64>()
    );
    let bytes: u64 = text
        .lines()
        .filter(|l| l.starts_with("ReadX") || l.starts_with("WriteX"))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(rep["measured_bytes"].as_u64().unwrap(), bytes);
    assert!(
        std::fs::read_dir(base.path()).unwrap().next().is_none(),
        "trees removed"
    );
}
