//! Removing what is left of an fdtree tree after a failed or interrupted run, without ever
//! removing anything fdtree did not make.
//!
//! The timed phases remove exactly the names they created, in fdtree's order. A run that
//! stops half-way leaves a partial tree, and removing it with `rm -r` would also remove
//! whatever else happens to be under that directory (a user's file, a directory given by
//! mistake). The sweep is narrower by construction:
//!
//! * it reads each directory and considers only entries whose **name** is one the tree's
//!   shape can produce at that depth (`L<k>F<n>` files with `1 ≤ n ≤ f`, `L<k>D<n>`
//!   directories with `1 ≤ n ≤ d`; MPI's shared tree adds `.r<rank>` to file names) and
//!   whose **type** matches (a regular file for `F`, a directory for `D`; symbolic links are
//!   never followed and never removed);
//! * files are unlinked one by one and directories removed with `rmdir`, which fails on a
//!   directory that still holds anything: an entry fdtree did not make keeps its directory
//!   and every directory above it, and is reported, never deleted.

use rustix::fd::OwnedFd;
use rustix::fs::FileType;
use rustix::io::Errno;
use std::path::Path;

/// The names a tree may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepShape {
    /// Subdirectories per directory (`-d`).
    pub dirs: u64,
    /// Files per directory (`-f`).
    pub files: u64,
    /// Levels below the root (`-l`).
    pub levels: u32,
    /// MPI's shared tree: every file name carries `.r<rank>` with `rank < ranks`.
    pub ranks: Option<u64>,
}

pub use crate::workload::provenance::sweep::Swept;
use crate::workload::provenance::sweep::{file_type, number, open_dir, sweep_root};

/// Parse `L<level><kind><n>` (plus `.r<rank>` for shared-tree files) and check it against
/// the shape at `level`.
fn expected(name: &[u8], level: u32, shape: &SweepShape) -> Option<u8> {
    // Canonical decimal only: no empty number, no leading zero (fdtree never writes one).
    let (lv, rest) = number(name.strip_prefix(b"L")?)?;
    if lv != u64::from(level) {
        return None;
    }
    let (&kind, rest) = rest.split_first()?;
    let (num, tail) = number(rest)?;
    match kind {
        b'F' if (1..=shape.files).contains(&num) => match shape.ranks {
            None if tail.is_empty() => Some(b'F'),
            Some(ranks) => {
                let (rank, rest) = number(tail.strip_prefix(b".r")?)?;
                (rest.is_empty() && rank < ranks).then_some(b'F')
            }
            None => None,
        },
        b'D' if level > 0 && tail.is_empty() && (1..=shape.dirs).contains(&num) => Some(b'D'),
        _ => None,
    }
}

fn sweep_dir(dir: &OwnedFd, level: u32, shape: &SweepShape, rel: &str, out: &mut Swept) {
    // Read the whole directory first: removing entries while reading may skip some.
    let Some(names) = out.entries_of(dir, rel) else {
        return;
    };
    for name in names {
        let shown = format!("{rel}/{}", name.to_string_lossy());
        let ty = file_type(dir, &name);
        match (expected(name.as_bytes(), level, shape), ty) {
            (Some(b'F'), Some(FileType::RegularFile)) => out.unlink(dir, &name, &shown),
            (Some(b'D'), Some(FileType::Directory)) => {
                match open_dir(dir, &name) {
                    Ok(sub) => sweep_dir(&sub, level - 1, shape, &shown, out),
                    Err(Errno::NOENT) => continue,
                    Err(e) => {
                        out.kept.push(format!("{shown} (open: {e})"));
                        continue;
                    }
                }
                // What it still holds was reported by the recursive call.
                out.rmdir(dir, &name, &shown);
            }
            (_, None) => {} // gone meanwhile
            (_, Some(_)) => out.kept.push(format!("{shown} (not made by fdtree)")),
        }
    }
}

/// Remove the tree `root_name` under `parent` as far as it consists of fdtree's own entries
/// (see the module header). A missing root is not an error.
pub fn sweep_tree(parent: &Path, root_name: &str, shape: &SweepShape) -> std::io::Result<Swept> {
    sweep_root(parent, root_name, |root, out| {
        sweep_dir(root, shape.levels, shape, root_name, out);
        Ok(())
    })
}

/// [`sweep_tree`] of the partial tree at `root` a failed run left: what fdtree did not make
/// stays and is an error naming it.
pub fn sweep_partial(root: &Path, shape: &SweepShape) -> anyhow::Result<()> {
    let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
        return Ok(());
    };
    sweep_tree(parent, &name.to_string_lossy(), shape)
        .map_err(|e| anyhow::anyhow!("could not remove partial tree {}: {e}", root.display()))?
        .into_result(root)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const SHAPE: SweepShape = SweepShape {
        dirs: 2,
        files: 2,
        levels: 2,
        ranks: None,
    };

    fn tree(parent: &Path) -> std::path::PathBuf {
        let root = parent.join("LEVEL0.h.1");
        for d in ["L2D1/L1D1", "L2D1/L1D2", "L2D2/L1D1", "L2D2/L1D2"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["L2F1", "L2F2", "L2D1/L1F1", "L2D2/L1D2/L0F2"] {
            fs::write(root.join(f), b"x").unwrap();
        }
        root
    }

    #[test]
    fn names_follow_the_shape_and_the_level() {
        assert_eq!(expected(b"L2F1", 2, &SHAPE), Some(b'F'));
        assert_eq!(expected(b"L2D2", 2, &SHAPE), Some(b'D'));
        assert_eq!(expected(b"L1F1", 2, &SHAPE), None, "wrong level");
        assert_eq!(expected(b"L2F3", 2, &SHAPE), None, "beyond -f");
        assert_eq!(expected(b"L2F0", 2, &SHAPE), None);
        assert_eq!(expected(b"L2F01", 2, &SHAPE), None, "not fdtree's spelling");
        assert_eq!(
            expected(b"L0D1", 0, &SHAPE),
            None,
            "no directories at level 0"
        );
        assert_eq!(expected(b"L2F1.bak", 2, &SHAPE), None);
        assert_eq!(expected(b"L2F1.r0", 2, &SHAPE), None);
        let shared = SweepShape {
            ranks: Some(3),
            ..SHAPE
        };
        assert_eq!(expected(b"L2F1.r2", 2, &shared), Some(b'F'));
        assert_eq!(expected(b"L2F1.r3", 2, &shared), None);
        assert_eq!(expected(b"L2F1", 2, &shared), None);
    }

    #[test]
    fn a_tree_of_fdtree_entries_is_removed_entirely() {
        let t = tempfile::tempdir().unwrap();
        tree(t.path());
        let s = sweep_tree(t.path(), "LEVEL0.h.1", &SHAPE).unwrap();
        assert!(s.kept.is_empty(), "{:?}", s.kept);
        assert_eq!((s.files, s.dirs), (4, 7));
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 0);
    }

    #[test]
    fn foreign_entries_and_their_parents_stay() {
        let t = tempfile::tempdir().unwrap();
        let root = tree(t.path());
        fs::write(root.join("L2D2/L1D1/notes.txt"), b"mine").unwrap();
        fs::write(root.join("L2D1/L1F9"), b"mine").unwrap();
        fs::create_dir(root.join("L2F2.d")).unwrap();
        // A directory where a file belongs, and a symlink where a directory belongs.
        fs::remove_file(root.join("L2F1")).unwrap();
        fs::create_dir(root.join("L2F1")).unwrap();
        fs::write(root.join("L2F1/keep"), b"mine").unwrap();
        let outside = t.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("L1F1"), b"mine").unwrap();
        fs::remove_dir_all(root.join("L2D2/L1D2")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("L2D2/L1D2")).unwrap();

        let s = sweep_tree(t.path(), "LEVEL0.h.1", &SHAPE).unwrap();
        s.assert_kept(&[
            "L2D2/L1D1/notes.txt",
            "L2D1/L1F9",
            "L2F2.d",
            "L2F1",
            "L2D2/L1D2",
        ]);
        assert_eq!(fs::read(root.join("L2D2/L1D1/notes.txt")).unwrap(), b"mine");
        assert_eq!(fs::read(root.join("L2D1/L1F9")).unwrap(), b"mine");
        assert_eq!(fs::read(root.join("L2F1/keep")).unwrap(), b"mine");
        assert_eq!(fs::read(outside.join("L1F1")).unwrap(), b"mine");
        assert!(root.join("L2D2/L1D2").is_symlink());
        // fdtree's own entries went: the file beside the user's, the empty sibling tree.
        assert!(!root.join("L2F2").exists());
        assert!(!root.join("L2D1/L1D1").exists());
        assert!(!root.join("L2D1/L1F1").exists());
        let err = s.into_result(&root).unwrap_err().to_string();
        assert!(err.contains("fslab did not make"), "{err}");
    }

    #[test]
    fn a_root_that_is_not_a_directory_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("LEVEL0.h.1"), b"mine").unwrap();
        let s = sweep_tree(t.path(), "LEVEL0.h.1", &SHAPE).unwrap();
        assert_eq!(s.kept.len(), 1);
        assert_eq!(fs::read(t.path().join("LEVEL0.h.1")).unwrap(), b"mine");
        assert!(sweep_tree(t.path(), "absent", &SHAPE)
            .unwrap()
            .kept
            .is_empty());
    }
}
