//! The modules of `src/report/` import each other without a cycle: the model's types are
//! imported by the modules that compute or render them, never the other way round, so no
//! module that `build.rs` imports reaches `build.rs` again (issue 22: `calibration.rs` once
//! re-exported `calibration_load.rs`, which imports `build.rs`; `checks.rs` and
//! `cache_checks.rs` imported each other).
//!
//! A module is a file of `src/report/` or a folder (`model/`, `charts/`: its files are one
//! node); its edges are the `super::x` and `crate::report::x` paths outside comments and
//! outside its `#[cfg(test)]` part; `*_tests.rs` files are tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Code without `//` comments and without the `#[cfg(test)]` tail.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `prefix` in `code`.
fn after(code: &str, prefix: &str) -> Vec<String> {
    code.match_indices(prefix)
        .filter(|(i, _)| {
            // `super::super::x` is matched once, as the longer prefix.
            prefix != "super::" || !code[..*i].ends_with("super::")
        })
        .map(|(i, _)| {
            code[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .filter(|s: &String| !s.is_empty())
        .collect()
}

/// The module graph of `src/report/`.
fn graph(root: &Path) -> Graph {
    let mut g = Graph::new();
    let mut add = |node: &str, code: &str, report_prefixes: &[&str]| {
        let deps = g.entry(node.to_string()).or_default();
        for p in report_prefixes.iter().chain(["crate::report::"].iter()) {
            for d in after(code, p) {
                if d != node && d != "super" {
                    deps.insert(d);
                }
            }
        }
    };
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            for f in std::fs::read_dir(&path).unwrap() {
                let f = f.unwrap().path();
                let fname = f.file_name().unwrap().to_string_lossy().to_string();
                if !fname.ends_with(".rs") || fname.ends_with("_tests.rs") {
                    continue;
                }
                let code = code_of(&std::fs::read_to_string(&f).unwrap());
                // In the folder's mod.rs `super::` is report/; in its other files, the folder.
                let prefix = if fname == "mod.rs" {
                    "super::"
                } else {
                    "super::super::"
                };
                add(&name, &code, &[prefix]);
            }
        } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") && name != "mod.rs" {
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            add(name.trim_end_matches(".rs"), &code, &["super::"]);
        }
    }
    // Only edges to modules of report/ (not `super::*` globs or items of mod.rs).
    let nodes: BTreeSet<String> = g.keys().cloned().collect();
    for deps in g.values_mut() {
        deps.retain(|d| nodes.contains(d));
    }
    g
}

/// A cycle of the graph, if it has one (depth-first search).
fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        n: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(g, n, &mut Vec::new(), &mut done))
}

#[test]
fn report_modules_import_each_other_without_a_cycle() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report"));
    // The graph is read for real: the builder and the model are in it with their edges.
    assert!(
        g["build"].contains("model") && g["build"].contains("checks"),
        "{g:#?}"
    );
    assert!(g["calibration_load"].contains("build"), "{g:#?}");
    if let Some(c) = cycle(&g) {
        panic!("import cycle in src/report: {}", c.join(" → "));
    }
}

#[test]
fn a_planted_cycle_is_found() {
    let mut g = Graph::new();
    for (a, b) in [
        ("build", "calibration"),
        ("calibration", "load"),
        ("load", "build"),
    ] {
        g.entry(a.into()).or_default().insert(b.into());
    }
    g.entry("model".into()).or_default();
    assert_eq!(
        cycle(&g).unwrap(),
        ["build", "calibration", "load", "build"].map(String::from)
    );
    g.get_mut("load").unwrap().clear();
    assert_eq!(cycle(&g), None);
    // `super::super::x` in a folder's file is one edge to x, not one to `super`.
    assert_eq!(
        after("use super::super::verdict;", "super::super::"),
        ["verdict"]
    );
    assert!(!after("use super::super::verdict;", "super::").contains(&"verdict".to_string()));
}
