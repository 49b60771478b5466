//! The layers of `doc/architecture.md`, checked: no module imports one above it. Reads every
//! source file of a module and lists the `crate::<module>` paths it names (which is how fslab
//! writes every import of its own code; a `use crate::{…}` group would hide them and is
//! refused too).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level modules and the ones each may not name.
const FORBIDDEN: &[(&str, &[&str])] = &[
    // Leaves: nothing of ours above them.
    ("stats", &["*"]),
    // Metric units print through the units' scales.
    ("metric", &["units_only"]),
    ("units", &["*"]),
    ("target", &["sysinfo_only"]),
    // Facts about the machine; `systemd-detect-virt` starts through the process seam.
    ("sysinfo", &["process_only"]),
    ("signal", &["*"]),
    // Safety primitives (the cage, removals beneath a directory, input limits).
    ("safe", &["*"]),
    // Shared words as enums (cache policy, study kind, created-entry kind).
    ("vocab", &["*"]),
    // Command lines and the seam processes are started through (stops them on Ctrl-C).
    ("process", &["signal_only"]),
    (
        "telemetry",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "report",
            "plan",
            "provision",
            "workload",
            "store",
        ],
    ),
    // The store knows nothing about workloads, provisioning, runs or reports.
    (
        "store",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "report",
            "plan",
            "provision",
            "workload",
            "telemetry",
        ],
    ),
    // Engines know nothing about mkfs, the store, plans, runners or reports.
    (
        "workload",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "report",
            "plan",
            "provision",
            "store",
            "telemetry",
        ],
    ),
    // The provisioner knows nothing about workloads or results.
    (
        "provision",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "report",
            "plan",
            "workload",
            "store",
            "telemetry",
        ],
    ),
    (
        "plan",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "report",
            "store",
            "telemetry",
        ],
    ),
    // Reports read the store; they run nothing.
    (
        "report",
        &[
            "app",
            "cli",
            "mpi",
            "runner",
            "plan",
            "provision",
            "telemetry",
        ],
    ),
    // MPI plumbing is below the app layer.
    (
        "mpi",
        &["app", "cli", "runner", "report", "plan", "provision"],
    ),
    ("runner", &["app", "cli", "mpi", "report"]),
    (
        "cli",
        &["app", "runner", "mpi", "store", "provision", "plan"],
    ),
];

fn sources(root: &Path, module: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = root.join(format!("{module}.rs"));
    if file.is_file() {
        out.push(file);
    }
    let mut stack = vec![root.join(module)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

/// The top-level modules a file names as `crate::<name>`.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '{')
            .collect();
        out.insert(name);
    }
    out
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for (module, forbidden) in FORBIDDEN {
        let files = sources(&root, module);
        assert!(!files.is_empty(), "module {module} not found under src/");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for n in named(&text) {
                let upward = if forbidden.contains(&"*") {
                    // Macros exported at the crate root are not modules.
                    !matches!(n.as_str(), "bail_usage" | "out" | "outln" | "bail_param")
                        && n != *module
                } else if forbidden.contains(&"sysinfo_only") {
                    n != "sysinfo" && n != *module
                } else if forbidden.contains(&"units_only") {
                    n != "units" && n != *module
                } else if forbidden.contains(&"signal_only") {
                    n != "signal" && n != *module
                } else if forbidden.contains(&"process_only") {
                    n != "process" && n != *module
                } else {
                    forbidden.contains(&n.as_str()) || n.starts_with('{')
                };
                if upward {
                    bad.push(format!(
                        "{} names crate::{n} (a {module} file may not)",
                        f.strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_import() {
    let t = "use crate::app::fdtree;\nfn f() { crate::store::now(); }\nuse crate::{a, b};";
    let n = named(t);
    assert!(
        n.contains("app") && n.contains("store") && n.contains("{a"),
        "{n:?}"
    );
}
