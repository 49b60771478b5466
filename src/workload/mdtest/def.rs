//! mdtest's registration: its stored name, what it can do, how its study-file spec builds the
//! engine, and how `fslab cleanup` removes a test directory a killed run left.

use super::{Mdtest, MdtestParams, Options};
use crate::workload::{Caps, Counts, EngineSpec, Larger, ResultClass, TreeOps, Workload};
use anyhow::Result;
use std::path::Path;

/// The stored name, the study file's `kind`.
pub const NAME: &str = "mdtest";

/// What mdtest can do.
pub const CAPS: Caps = Caps {
    mpi: true,
    timed: false,
    headline: &[("*", "rate")],
    headline_marked: &[],
    // Every phase's rate, as mdtest's SUMMARY table compares them.
    primary: &["rate"],
    larger: Larger {
        words: "more items",
        keys: "items",
        flags: "-n",
    },
    dataset: None,
    // One per rank.
    workers: crate::workload::caps::ranks_param,
    class: |phase| match phase {
        "file_read" => ResultClass::Read,
        _ => ResultClass::Metadata,
    },
    counts: |phase| {
        Counts::Items(match phase.split('_').next() {
            Some("dir") => "dirs",
            Some("tree") => "trees",
            _ => "files",
        })
    },
    entry_words: ("mdtest", "test directory"),
    tree: Some(TreeOps {
        remove: remove_tree,
        forget: forget_tree,
    }),
};

impl EngineSpec for MdtestParams {
    fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.flags())
    }
    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(Mdtest::new(self.clone(), Options::default())?))
    }
}

/// Remove test directory `name` in `parent` when its record proves it fslab's, by mdtest's
/// names of the recorded shape.
fn remove_tree(parent: &Path, name: &str) -> Result<String, String> {
    let swept = super::sweep::sweep_recorded(parent, name).map_err(|e| format!("{e:#}"))?;
    Ok(format!(
        "mdtest test directory {} ({} files, {} directories)",
        parent.join(name).display(),
        swept.files,
        swept.dirs
    ))
}

/// The record of a test directory that is gone goes too.
fn forget_tree(parent: &Path, name: &str) {
    let _ = super::sweep::sweep_recorded(parent, name);
}

#[cfg(test)]
mod tests {
    use crate::workload::{Counts, WorkloadKind};

    #[test]
    fn mdtest_declares_its_study_keys_and_what_its_phases_count() {
        let k = WorkloadKind::Mdtest;
        assert!(k.keys().contains(&"items_per_dir"));
        let counts = k.caps().counts;
        assert_eq!(counts("tree_create"), Counts::Items("trees"));
        assert_eq!(counts("dir_rename"), Counts::Items("dirs"));
        assert_eq!(counts("file_stat"), Counts::Items("files"));
    }

    #[test]
    fn a_labelled_study_workload_names_its_flags_in_reports() {
        // As a study stores it: the study keys with a label that hides the flags.
        let stored = serde_json::json!({
            "kind": "mdtest", "label": "mdtest easy", "items": 50000, "unique_dir": true,
            "files_only": true, "leaf_only": true, "sync_phases": true
        });
        assert_eq!(
            WorkloadKind::Mdtest.command(&stored).as_deref(),
            Some("mdtest -n 50000 -u -F -L -Y")
        );
        // An engine command's parameters are its own, not a study's: nothing made up.
        let other = serde_json::json!({"items": 5, "mpi": {"ranks": 2}});
        assert_eq!(WorkloadKind::Mdtest.command(&other), None);
    }

    #[test]
    fn its_workers_are_its_ranks() {
        let workers = super::CAPS.workers;
        assert_eq!(workers(&serde_json::json!({})), 1);
        assert_eq!(workers(&serde_json::json!({"ranks": 8})), 8);
    }
}
