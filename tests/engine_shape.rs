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

/// Every engine of the registration list has a command, and it takes every option the engine
/// commands share ([`fslab::cli::common_options`]: `--repeat`, `--format`, `--db`, …), long
/// and short as the command spells it, with its default as the value; where a command hands its arguments on whole
/// (`fslab mdtest`), fslab's options are taken from among them.
#[test]
fn every_engine_command_takes_every_common_option() {
    use clap::parser::ValueSource;
    use clap::CommandFactory;
    use fslab::cli::{Cli, MdtestOwnArgs};
    let cli = Cli::command();
    for kind in fslab::workload::WorkloadKind::ALL {
        let name = kind.as_str();
        let sub = cli
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("no `fslab {name}` for the engine {name}"));
        // A value for each required positional argument (dbench's NCLIENTS, fio's JOBFILE).
        let required = sub.get_positionals().filter(|a| a.is_required_set());
        let required: Vec<String> = required.map(|_| "1".to_string()).collect();
        for o in fslab::cli::common_options() {
            let id = o.get_id().as_str();
            let value = o.get_action().takes_values().then(|| {
                let default = o.get_default_values().first();
                default.map_or("x".to_string(), |v| v.to_string_lossy().into_owned())
            });
            // Spelt as the command has it (`fslab iozone` leaves `-q` to IOzone).
            let own = sub.get_arguments().find(|a| a.get_id() == id).unwrap_or(&o);
            let long = own.get_long().map(|l| format!("--{l}"));
            for flag in long
                .into_iter()
                .chain(own.get_short().map(|c| format!("-{c}")))
            {
                let mine: Vec<String> = Some(flag.clone())
                    .into_iter()
                    .chain(value.clone())
                    .collect();
                let args = ["fslab".to_string(), name.to_string()];
                let args = args.into_iter().chain(required.clone()).chain(mine.clone());
                let m = cli
                    .clone()
                    .try_get_matches_from(args)
                    .unwrap_or_else(|e| panic!("fslab {name} {flag}: {e}"));
                let (_, m) = m.subcommand().unwrap();
                let known = m.try_contains_id(id).is_ok();
                if known && m.value_source(id) == Some(ValueSource::CommandLine) {
                    continue;
                }
                // Handed on whole: fslab's options are taken from among the engine's.
                let whole: Vec<String> = m
                    .get_many::<String>("args")
                    .unwrap_or_else(|| panic!("fslab {name} does not take {flag}"))
                    .cloned()
                    .collect();
                let (own, _) = MdtestOwnArgs::split(&whole);
                assert_eq!(own, mine, "fslab {name} does not take {flag} as fslab's");
                let m = MdtestOwnArgs::parser().try_get_matches_from(&own).unwrap();
                assert_eq!(
                    m.value_source(id),
                    Some(ValueSource::CommandLine),
                    "{name} {flag}"
                );
            }
        }
    }
}

/// `fslab list --kind` takes every engine of the registration list (mdtest was refused),
/// besides `study` and `run`.
#[test]
fn list_kind_takes_every_registered_engine() {
    use clap::Parser;
    let engines = fslab::workload::WorkloadKind::ALL.map(|k| k.as_str());
    for kind in ["study", "run"].into_iter().chain(engines) {
        let parsed = fslab::cli::Cli::try_parse_from(["fslab", "list", "--kind", kind]);
        assert!(
            parsed.is_ok(),
            "list --kind {kind}: {}",
            parsed.unwrap_err()
        );
    }
}
