//! The record an ad-hoc fdtree run leaves beside each tree it makes, so that a later
//! `fslab fdtree -R` (or `fslab cleanup`) can prove the tree is fslab's before removing it.
//!
//! The record is a small JSON file `.fslab-tree.<root>` in the start directory (beside the
//! tree, not inside it, so the tree is exactly fdtree's). It is written *before* the tree's
//! root is made, completed with the root's device and inode numbers right after the root's
//! `mkdir`, and removed together with the tree. A directory without a record, or whose device
//! and inode differ from the record (it was removed and made again by someone else), is not
//! fslab's: `-R` refuses it and nothing is removed. A record without an inode (a run killed
//! between the `mkdir` and completing it) is accepted only for a root born within
//! [`CREATE_WINDOW`](crate::safe::beneath::CREATE_WINDOW) after the record was written; and no tree with a mount inside it is
//! ever removed (fslab never removes across a mount). The rule is
//! [`crate::workload::provenance`]'s, shared with every engine that leaves trees.

use super::FdtreeParams;
use crate::workload::fdtree::sweep::SweepShape;
use crate::workload::provenance::{self, Purpose};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Prefix of every tree root fdtree names (`LEVEL0.<host>.<pid>[.<i>]`).
pub const ROOT_PREFIX: &str = "LEVEL0.";

/// What fslab knows about one tree it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeRecord {
    /// Always `"fdtree"`.
    pub kind: String,
    /// The root's name in the start directory.
    pub root: String,
    /// fslab's version that made it.
    pub fslab_version: String,
    /// Host and process that made it.
    pub host: String,
    /// Process id of the run that made it.
    pub pid: u32,
    /// When the record was written (RFC 3339).
    pub created_at: String,
    /// `-d`.
    pub dirs: u64,
    /// `-f`.
    pub files: u64,
    /// `-s`.
    pub size_blocks: u64,
    /// `-l`.
    pub levels: u32,
    /// Device number of the root, once made.
    pub dev: Option<u64>,
    /// Inode number of the root, once made.
    pub ino: Option<u64>,
}

impl TreeRecord {
    /// A record for a tree about to be made with `params`.
    pub fn new(root: &str, params: &FdtreeParams) -> TreeRecord {
        TreeRecord {
            kind: "fdtree".into(),
            root: root.to_string(),
            fslab_version: env!("CARGO_PKG_VERSION").into(),
            host: crate::sysinfo::short_hostname(),
            pid: std::process::id(),
            created_at: crate::units::timestamp_now(),
            dirs: params.dirs,
            files: params.files,
            size_blocks: params.size_blocks,
            levels: params.levels,
            dev: None,
            ino: None,
        }
    }

    /// The names this tree can hold.
    pub fn shape(&self) -> SweepShape {
        SweepShape {
            dirs: self.dirs,
            files: self.files,
            levels: self.levels,
            ranks: None,
        }
    }

    /// The shape as fdtree flags (`-d 2 -f 3 -s 1 -l 2`).
    pub fn flags(&self) -> String {
        super::shape_flags(self.dirs, self.files, self.size_blocks, self.levels)
    }
}

provenance::impl_record!(TreeRecord, name: root, prefix: ".fslab-tree.", kind: "fdtree", what: "tree record");

/// Check that `name` is a plain tree-root name: one path component, fdtree's prefix.
pub fn check_root_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name == "."
        || name == ".."
        || name.contains('/')
        || name.contains('\0')
        || !name.starts_with(ROOT_PREFIX)
    {
        crate::bail_usage!(
            "--root {name}: a tree root is a name like {ROOT_PREFIX}<host>.<pid> directly inside -o, as a -C run prints it; fslab removes only trees it made"
        );
    }
    Ok(())
}

/// Prove that `start_dir/root` is a tree fslab made (for `-R`): a plain root name and
/// [`provenance::prove`]'s rule. Returns the record.
pub fn verify(start_dir: &Path, root: &str) -> Result<TreeRecord> {
    check_root_name(root)?;
    let purpose = Purpose {
        verb: "remove",
        hint: "",
    };
    provenance::prove(start_dir, root, purpose)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FdtreeParams {
        super::super::shaped(2, 3, 1, 2)
    }

    #[test]
    fn a_recorded_tree_verifies_and_a_replaced_one_does_not() {
        let t = tempfile::tempdir().unwrap();
        let root = "LEVEL0.h.7";
        provenance::write(t.path(), &TreeRecord::new(root, &params())).unwrap();
        std::fs::create_dir(t.path().join(root)).unwrap();
        // Intent only (killed before the run ended): accepted on the record.
        assert_eq!(
            verify(t.path(), root).unwrap().flags(),
            "-d 2 -f 3 -s 1 -l 2"
        );
        provenance::complete::<TreeRecord>(t.path(), root).unwrap();
        assert!(provenance::read::<TreeRecord>(t.path(), root)
            .unwrap()
            .unwrap()
            .ino
            .is_some());
        verify(t.path(), root).unwrap();
        // Replaced by another directory of the same name: refused.
        std::fs::rename(t.path().join(root), t.path().join("other")).unwrap();
        std::fs::create_dir(t.path().join(root)).unwrap();
        let e = verify(t.path(), root).unwrap_err().to_string();
        assert!(e.contains("inode differs"), "{e}");
        provenance::remove::<TreeRecord>(t.path(), root).unwrap();
        assert!(provenance::read::<TreeRecord>(t.path(), root)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_record_without_an_inode_covers_only_a_root_born_just_after_it() {
        let t = tempfile::tempdir().unwrap();
        // A user's directory, then a forged record without an inode beside it.
        let users = "LEVEL0.host.777";
        std::fs::create_dir(t.path().join(users)).unwrap();
        std::fs::write(t.path().join(users).join("L1F1"), b"mine").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        provenance::write(t.path(), &TreeRecord::new(users, &params())).unwrap();
        let e = verify(t.path(), users).unwrap_err().to_string();
        assert!(
            e.contains("has no inode") && e.contains("existed before"),
            "{e}"
        );
        // A record written long before the directory came (its run ended long ago).
        let late = "LEVEL0.host.778";
        let mut rec = TreeRecord::new(late, &params());
        rec.created_at = "2020-01-01T00:00:00.000Z".into();
        provenance::write(t.path(), &rec).unwrap();
        std::fs::create_dir(t.path().join(late)).unwrap();
        let e = verify(t.path(), late).unwrap_err().to_string();
        assert!(e.contains("after the run"), "{e}");
        assert_eq!(
            std::fs::read(t.path().join(users).join("L1F1")).unwrap(),
            b"mine"
        );
    }

    #[test]
    fn unrecorded_and_odd_roots_are_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("results")).unwrap();
        std::fs::create_dir(t.path().join("LEVEL0.x.1")).unwrap();
        for bad in ["results", ".", "..", "../x", "/etc", "a/LEVEL0.x.1", ""] {
            let e = verify(t.path(), bad).unwrap_err().to_string();
            assert!(e.contains("--root"), "{bad}: {e}");
        }
        let e = verify(t.path(), "LEVEL0.x.1").unwrap_err().to_string();
        assert!(e.contains("no fslab record"), "{e}");
        std::os::unix::fs::symlink(t.path().join("results"), t.path().join("LEVEL0.x.2")).unwrap();
        provenance::write(t.path(), &TreeRecord::new("LEVEL0.x.2", &params())).unwrap();
        let e = verify(t.path(), "LEVEL0.x.2").unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
    }
}
