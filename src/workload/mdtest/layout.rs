//! mdtest's tree: how many directories, how many items in each, which items go where, and
//! what everything is called — computed exactly as `mdtest.c` does.
//!
//! * Inside the test directory `test-dir.<iteration>-0` each tree's top is `mdtest_tree.0`
//!   (shared) or `mdtest_tree.<rank>.0` (`-u`). Tree directories are numbered as a heap:
//!   the children of directory `k` are `k·b+1 … k·b+b`, each named after its number with the
//!   same base (`mdtest_tree.5`, or `mdtest_tree.<rank>.5`), down to depth `z`.
//! * Directory `k` holds items `k·I … k·I+I−1` (`I` items per directory); with `-L` only the
//!   leaves hold items (or the top when `z` is 0). Items are `dir.mdtest.<r>.<n>` and
//!   `file.mdtest.<r>.<n>`, `r` the rank whose items they are.
//! * Counts: the tree has `1` directory when `z` is 0, `z+1` when `b` is 1, else
//!   `(b^(z+1)−1)/(b−1)`. With `-n`, `I = n / directories holding items` and the rank's items
//!   are rounded down to `I ×` that; with `-I` they are `I ×` that.

use super::params::MdtestParams;
use crate::workload::fsops::NameBuf;
use crate::workload::param::ParamError;
use anyhow::Result;
use std::ops::RangeInclusive;

/// The shape of one tree and its items (one rank's share).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    /// `-z`.
    pub depth: u32,
    /// `-b`.
    pub branching: u64,
    /// Directories of one tree (mdtest's `num_dirs_in_tree`).
    pub dirs: u64,
    /// Directories at the deepest level (`b^z`; 1 when `z` is 0).
    pub leaves: u64,
    /// Items per directory that holds items.
    pub items_per_dir: u64,
    /// Items per rank.
    pub items: u64,
    /// `-L`: only the leaves hold items.
    pub leaf_only: bool,
}

fn too_big(p: &MdtestParams) -> anyhow::Error {
    anyhow::Error::new(ParamError::new(format!(
        "{{branching={}}} and {{depth={}}} describe a tree of more than 2^64 items; use a smaller {{branching=}} or {{depth=}}",
        p.branching, p.depth
    )))
}

impl Layout {
    /// The layout of `p` (mdtest's arithmetic, overflow refused).
    pub fn new(p: &MdtestParams) -> Result<Layout> {
        let b = u64::from(p.branching);
        let z = p.depth;
        let pow = |e: u32| b.checked_pow(e).ok_or_else(|| too_big(p));
        let dirs = if z == 0 || b == 0 {
            1
        } else if b == 1 {
            u64::from(z) + 1
        } else {
            (pow(z + 1)? - 1) / (b - 1)
        };
        let leaves = if z == 0 { 1 } else { pow(z)? };
        let holders = if p.leaf_only { leaves } else { dirs };
        let (per_dir, items) = if p.items_per_dir > 0 {
            let items = p
                .items_per_dir
                .checked_mul(holders)
                .ok_or_else(|| too_big(p))?;
            (p.items_per_dir, items)
        } else {
            let per_dir = p.items / holders;
            (per_dir, per_dir * holders)
        };
        if per_dir == 0 {
            crate::bail_param!(
                "{{items={}}} is fewer than the {holders} directories that hold items ({{depth={}}}, {{branching={}}}): each would get 0 items; raise {{items=}} or lower {{depth=}} or {{branching=}}",
                p.items, z, p.branching
            );
        }
        Ok(Layout {
            depth: z,
            branching: b,
            dirs,
            leaves,
            items_per_dir: per_dir,
            items,
            leaf_only: p.leaf_only,
        })
    }

    /// Directories that hold items.
    pub fn item_dirs(&self) -> u64 {
        if self.leaf_only {
            self.leaves
        } else {
            self.dirs
        }
    }

    /// Number of the first leaf directory.
    pub fn first_leaf(&self) -> u64 {
        self.dirs - self.leaves
    }

    /// The number of the first item (items are numbered by directory: with `-L` the first
    /// leaf's first item).
    pub fn first_item(&self) -> u64 {
        if self.leaf_only {
            self.items_per_dir * self.first_leaf()
        } else {
            0
        }
    }

    /// Does a directory at `depth` hold items?
    #[inline]
    pub fn holds_items(&self, depth: u32) -> bool {
        !self.leaf_only || depth == self.depth
    }

    /// The children of directory `node` at `depth` (empty at the deepest level).
    #[inline]
    pub fn children(&self, node: u64, depth: u32) -> RangeInclusive<u64> {
        if depth >= self.depth || self.branching == 0 {
            #[allow(clippy::reversed_empty_ranges)]
            return 1..=0;
        }
        node * self.branching + 1..=node * self.branching + self.branching
    }

    /// The parent of directory `node` (`None` for the top).
    #[inline]
    pub fn parent(&self, node: u64) -> Option<u64> {
        (node > 0 && self.branching > 0).then(|| (node - 1) / self.branching)
    }

    /// The directory holding item `num`.
    #[inline]
    pub fn dir_of(&self, num: u64) -> u64 {
        num / self.items_per_dir
    }

    /// The directories from the top (0) down to `node`, into `out` (cleared first).
    pub fn chain(&self, node: u64, out: &mut Vec<u64>) {
        out.clear();
        out.extend(std::iter::successors(Some(node), |&n| self.parent(n)));
        out.reverse();
    }
}

/// Which tree: the shared one, or one rank's (`-u`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree(pub Option<u32>);

impl Tree {
    /// Append the name of directory `node` of this tree (`mdtest_tree.7`, `mdtest_tree.2.7`).
    #[inline]
    pub fn push_dir(&self, buf: &mut NameBuf, node: u64) {
        buf.push_str("mdtest_tree.");
        if let Some(r) = self.0 {
            buf.push_u64(u64::from(r));
            buf.push_str(".");
        }
        buf.push_u64(node);
    }

    /// Append the path of directory `node` below the test directory
    /// (`mdtest_tree.0/mdtest_tree.1/mdtest_tree.4`); `chain` is scratch space.
    pub fn push_path(&self, buf: &mut NameBuf, lay: &Layout, node: u64, chain: &mut Vec<u64>) {
        lay.chain(node, chain);
        for (i, &k) in chain.iter().enumerate() {
            if i > 0 {
                buf.push_str("/");
            }
            self.push_dir(buf, k);
        }
    }
}

/// Directory or file items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// `dir.mdtest.<r>.<n>`
    Dir,
    /// `file.mdtest.<r>.<n>`
    File,
}

impl ItemKind {
    /// Append the prefix of `owner`'s items (`dir.mdtest.3.`); the item's number follows.
    #[inline]
    pub fn push_prefix(self, buf: &mut NameBuf, owner: u32) {
        buf.push_str(match self {
            ItemKind::Dir => "dir.mdtest.",
            ItemKind::File => "file.mdtest.",
        });
        buf.push_u64(u64::from(owner));
        buf.push_str(".");
    }
}

/// The test directory of iteration `j` (`test-dir.<j>-0`; fslab runs one directory loop).
pub fn test_dir(j: u32) -> String {
    format!("test-dir.{j}-0")
}

/// Whose items a rank works on, and in which tree (mdtest's `-N` shift).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles {
    /// This rank.
    pub rank: u32,
    /// Ranks in the job.
    pub size: u32,
    /// `-N`.
    pub stride: u32,
}

/// The steps of mdtest's shift: creation works on the rank's own items, stat and rename on
/// those `N` ranks on, read `2N`, removal `3N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shift {
    /// Creation.
    Create = 0,
    /// Stat and rename.
    Stat = 1,
    /// Read.
    Read = 2,
    /// Removal.
    Remove = 3,
}

impl Roles {
    /// The rank whose items this rank handles in step `s`.
    pub fn owner(&self, s: Shift) -> u32 {
        let size = u64::from(self.size.max(1));
        ((u64::from(self.rank) + s as u64 * u64::from(self.stride)) % size) as u32
    }

    /// The tree that holds `owner`'s items: the shared tree, or with `-u` the tree of the
    /// rank `N` after the owner (mdtest makes rank r's items in `mdtest_tree.<r+N>.0`).
    pub fn tree_of(&self, owner: u32, unique: bool) -> Tree {
        let size = u64::from(self.size.max(1));
        Tree(unique.then(|| ((u64::from(owner) + u64::from(self.stride)) % size) as u32))
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
