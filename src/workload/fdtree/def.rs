//! fdtree's registration: its stored name, what it can do, how its study-file spec builds the
//! engine, and how `fslab cleanup` removes a tree a killed run left.

use super::record::{self, TreeRecord};
use super::{sweep, Fdtree, FdtreeSpec};
use crate::workload::{provenance, Caps, Counts, Larger, ResultClass, TreeOps};
use anyhow::Result;
use std::path::Path;

/// The stored name, the study file's `kind`.
pub const NAME: &str = "fdtree";

/// What fdtree can do.
pub const CAPS: Caps = Caps {
    mpi: true,
    timed: false,
    headline: &[("*", "rate")],
    headline_marked: &[],
    // The four phase rates.
    primary: &["rate"],
    larger: Larger {
        words: "a larger tree: more files or levels",
        keys: "files, levels",
        flags: "-f, -l",
    },
    dataset: None,
    // Its threads in every rank.
    workers: |p| {
        crate::workload::caps::count_param(p, "threads").unwrap_or(1)
            * crate::workload::caps::ranks_param(p)
    },
    class: |_| ResultClass::Metadata,
    counts: |phase| {
        Counts::Items(if phase.starts_with("dir") {
            "dirs"
        } else {
            "files"
        })
    },
    entry_words: ("fdtree", "tree"),
    tree: Some(TreeOps {
        remove: remove_tree,
        forget: forget_tree,
    }),
};

crate::workload::engine_spec!(FdtreeSpec => Fdtree);

/// Remove tree `name` in `parent` when its record beside it proves it fslab's: swept by
/// fdtree's own names of the recorded shape, so a user's file inside keeps its directory.
fn remove_tree(parent: &Path, name: &str) -> Result<String, String> {
    let rec = record::verify(parent, name).map_err(|e| format!("{e:#}"))?;
    let swept = sweep::sweep_tree(parent, name, &rec.shape())
        .map_err(|e| e.to_string())?
        .into_result(&parent.join(name))
        .map_err(|e| format!("{e:#}"))?;
    provenance::remove::<TreeRecord>(parent, name).map_err(|e| format!("{e:#}"))?;
    Ok(format!(
        "fdtree tree {} ({} files, {} directories)",
        parent.join(name).display(),
        swept.files,
        swept.dirs
    ))
}

/// The record of a tree that is gone goes too, if it is fslab's record of that tree.
fn forget_tree(parent: &Path, name: &str) {
    if let Ok(Some(_)) = provenance::read::<TreeRecord>(parent, name) {
        let _ = provenance::remove::<TreeRecord>(parent, name);
    }
}
