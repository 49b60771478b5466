//! The shape of an engine (issue 22, doc/architecture.md "Adding an engine"): the newest
//! engine, mdtest, lives in its own folders (and its own `cli/mdtest.rs`), and outside them
//! only the registration list, the command-line enum and the subcommand dispatch name it. A shared module that starts
//! matching engine names again fails here.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn outside_its_folders_only_three_files_name_the_newest_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut naming: Vec<String> = files
        .iter()
        // Its own: its folders, and its file in a shared folder (`cli/mdtest.rs`).
        .filter(|p| !p.components().any(|c| c.as_os_str() == "mdtest"))
        .filter(|p| p.file_stem().is_none_or(|s| s != "mdtest"))
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .to_lowercase()
                .contains("mdtest")
        })
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    naming.sort();
    assert_eq!(
        naming,
        ["app/mod.rs", "cli/mod.rs", "workload/mod.rs"],
        "an engine's name belongs in its folders, the registration list, the CLI enum and the dispatch"
    );
    // Its folders hold the engine and its command.
    for dir in ["workload/mdtest", "app/mdtest"] {
        assert!(src.join(dir).is_dir(), "{dir}");
    }
}

/// Every worker thread an engine starts goes through `workload::workers` (its own file
/// table, a name, the phase gate; doc/architecture.md "Workers own their kernel state"): no
/// engine spawns threads of its own, so an engine added later cannot share one table by
/// accident. Test modules (after `#[cfg(test)]`) may.
#[test]
fn engines_start_workers_only_through_the_workers_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/workload");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut spawning = Vec::new();
    for p in &files {
        let rel = p.strip_prefix(&src).unwrap().display().to_string();
        if rel.starts_with("workers/") || rel.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for needle in [
            "thread::spawn",
            ".spawn(",
            "spawn_scoped(",
            "thread::Builder",
        ] {
            if code.contains(needle) {
                spawning.push(format!("{rel}: {needle}"));
            }
        }
    }
    assert!(
        spawning.is_empty(),
        "engines start worker threads through workload::workers::spawn/spawn_all: {spawning:?}"
    );
    // And the workers module itself unshares the table before running the worker.
    let workers = std::fs::read_to_string(src.join("workers/mod.rs")).unwrap();
    assert!(workers.contains("UnshareFlags::FILES"));
}
