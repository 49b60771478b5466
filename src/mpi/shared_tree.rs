//! The shared-tree layout of `fslab fdtree --shared` under MPI (the shared-directory mode of
//! the IO500's metadata benchmark, applied to fdtree's tree). Pure layout and walks, generic over the operations, so
//! they are tested without MPI.
//!
//! * **One tree for all ranks**: `<-o>/LEVEL0.<host of rank 0>.<pid of rank 0>.shared/`,
//!   with fdtree's directory names (`L<k>D<n>`) and shape (1 + d + … + d^l directories).
//! * **Directories are split among ranks, level by level.** Number the d^t directories at
//!   depth t in fdtree's order (index 0 is `L<l>D<d>/…/L<l−t+1>D<d>`); rank r makes the ones
//!   whose index ≡ r (mod N), so neighbouring siblings in one parent directory are made by
//!   different ranks at the same time. Rank 0 makes the root. Depth t+1 starts on every rank
//!   only when all ranks have finished depth t (a collective step inside the phase, timed
//!   with it); removal runs the depths the other way round and rank 0 removes the root last.
//! * **Every rank puts its own files in every directory**: `L<k>F<n>.r<rank>`, `f` per
//!   directory per rank, walked in fdtree's order, so all ranks create (and later remove)
//!   files in the same directory at the same time — the contention a shared directory on
//!   a parallel file system suffers (the IO500's hard metadata test; a single directory with `-l 0`).
//!
//! Counts: directories D = 1 + d + … + d^l in total (not per rank); files N × f × D.

use crate::workload::fdtree::tree::{Name, Ops, WalkError, Walker};

/// How many of `total` indices are `≡ rank (mod size)`.
pub fn share(total: u64, rank: u64, size: u64) -> u64 {
    if size == 0 || rank >= total {
        0
    } else {
        (total - rank - 1) / size + 1
    }
}

/// Directories `rank` of `size` makes in the shared tree (the root counts for rank 0): its
/// share of the d^t directories at every depth t (saturating; callers validated the shape).
pub fn dirs_of_rank(dirs: u64, levels: u32, rank: u64, size: u64) -> u64 {
    (0..=levels)
        .map(|t| share(dirs.saturating_pow(t), rank, size))
        .sum()
}

/// Base-`dirs` digits of `index` at `depth`, most significant first.
fn digits(dirs: u64, depth: u32, mut index: u64, out: &mut Vec<u64>) {
    out.clear();
    out.resize(depth as usize, 0);
    for slot in out.iter_mut().rev() {
        *slot = index % dirs;
        index /= dirs;
    }
}

/// Name of the path component at 0-based position `pos` with digit `digit`.
fn component(dirs: u64, levels: u32, pos: usize, digit: u64) -> Name {
    Name::new(levels - pos as u32, b'D', dirs - digit)
}

/// Makes or removes one depth of the shared tree: this rank's share of its directories.
pub struct LevelWalker<'a, O: Ops> {
    /// fdtree's walker: the operations, the shape, progress and stop.
    pub walker: Walker<'a, O>,
    /// Open directories along the current parent path: (digit, descriptor); their names are
    /// the walker's trail.
    stack: Vec<(u64, O::Dir)>,
}

impl<'a, O: Ops> LevelWalker<'a, O> {
    /// A level walker over `walker`'s tree (its `dirs` and `levels`); its `stop` is polled
    /// every `check_every` items, after `progress` is updated.
    pub fn new(walker: Walker<'a, O>) -> Self {
        LevelWalker {
            walker,
            stack: Vec::new(),
        }
    }

    /// Forget the open parent directories (before the tree changes shape under them).
    pub fn close(&mut self) {
        self.stack.clear();
        self.walker.trail.clear();
    }

    /// Make sure `stack` holds the directories of `parent` (a digit path below `root`).
    fn open_parent(&mut self, root: &O::Dir, parent: &[u64]) -> Result<(), WalkError> {
        let keep = self
            .stack
            .iter()
            .zip(parent)
            .take_while(|((a, _), b)| a == *b)
            .count();
        self.stack.truncate(keep);
        self.walker.trail.truncate(keep);
        let shape = self.walker.shape;
        for (pos, &digit) in parent.iter().enumerate().skip(keep) {
            let name = component(shape.dirs, shape.levels, pos, digit);
            let at = self.stack.last().map_or(root, |(_, d)| d);
            let dir = self
                .walker
                .ops
                .open_dir(at, name.as_cstr())
                .map_err(|e| self.walker.err("open", &name, e))?;
            self.stack.push((digit, dir));
            self.walker.trail.push(name);
        }
        Ok(())
    }

    /// Make (`remove == false`) or remove this rank's directories at `depth` (1..=levels;
    /// depth 0, the root, is the caller's). Returns the number of directories handled.
    pub fn level(
        &mut self,
        root: &O::Dir,
        depth: u32,
        rank: u64,
        size: u64,
        remove: bool,
    ) -> Result<u64, WalkError> {
        if depth == 0 {
            return Ok(0);
        }
        let shape = self.walker.shape;
        // The d^depth directories at this depth.
        let total = shape.dirs.saturating_pow(depth);
        let mut done = 0;
        let mut index = rank;
        let mut d = Vec::with_capacity(depth as usize);
        while index < total {
            digits(shape.dirs, depth, index, &mut d);
            let Some((last, parent)) = d.split_last() else {
                break;
            };
            self.open_parent(root, parent)?;
            let name = component(shape.dirs, shape.levels, parent.len(), *last);
            let at = self.stack.last().map_or(root, |(_, dir)| dir);
            let ops = &mut self.walker.ops;
            let res = if remove {
                ops.rmdir(at, name.as_cstr())
            } else {
                ops.mkdir(at, name.as_cstr())
            };
            let op = if remove { "rmdir" } else { "mkdir" };
            res.map_err(|e| self.walker.err(op, &name, e))?;
            done += 1;
            self.walker.tick()?;
            index = index.saturating_add(size);
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fdtree::shaped;
    use crate::workload::fdtree::tree::{FsOps, Shape};
    use std::collections::BTreeSet;
    use std::path::Path;
    use std::sync::atomic::AtomicU64;

    /// A level walker with real system calls over `dirs` and `levels`, checking every `every`
    /// items.
    fn level_walker<'a>(
        (dirs, levels): (u64, u32),
        progress: &'a AtomicU64,
        stop: &'a dyn Fn() -> bool,
        every: u64,
    ) -> LevelWalker<'a, FsOps> {
        let shape = shaped(dirs, 0, 0, levels).shape();
        let mut w = Walker::new(FsOps::new(0), shape, progress, stop);
        w.check_every = every;
        LevelWalker::new(w)
    }

    #[test]
    fn shares_add_up_to_the_fdtree_count() {
        for (d, l) in [(1u64, 0u32), (2, 3), (3, 2), (10, 2), (20, 1)] {
            let total = shaped(d, 10, 10, l).counts().unwrap().dirs;
            for n in [1u64, 2, 3, 4, 7, 64] {
                let sum: u64 = (0..n).map(|r| dirs_of_rank(d, l, r, n)).sum();
                assert_eq!(sum, total, "d={d} l={l} n={n}");
            }
        }
        assert_eq!(share(1, 0, 4), 1);
        assert_eq!(share(1, 3, 4), 0);
        assert_eq!(share(10, 3, 4), 2); // 3, 7
    }

    fn tree_of(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
        let (mut dirs, mut files) = (BTreeSet::new(), BTreeSet::new());
        fn walk(base: &Path, p: &Path, d: &mut BTreeSet<String>, f: &mut BTreeSet<String>) {
            for e in std::fs::read_dir(p).unwrap() {
                let e = e.unwrap();
                let rel = e.path().strip_prefix(base).unwrap().display().to_string();
                if e.file_type().unwrap().is_dir() {
                    d.insert(rel);
                    walk(base, &e.path(), d, f);
                } else {
                    f.insert(rel);
                }
            }
        }
        walk(root, root, &mut dirs, &mut files);
        (dirs, files)
    }

    /// Three simulated ranks build, fill, empty and remove one shared tree with real system
    /// calls, depth by depth as the MPI runner does; the directories are exactly fdtree's.
    #[test]
    fn ranks_together_build_fdtrees_tree_with_rank_named_files() {
        let (d, l, f, n) = (2u64, 3u32, 2u64, 3u64);
        let tmp = tempfile::tempdir().unwrap();
        let shape = Shape {
            file_bytes: 10,
            ..shaped(d, f, 0, l).shape()
        };
        let progress = AtomicU64::new(0);
        let never = || false;

        // Reference: fdtree's own walk, one tree.
        let reference = tmp.path().join("ref");
        std::fs::create_dir(&reference).unwrap();
        let rfd = FsOps::open_path(&reference).unwrap();
        let mut w = Walker::new(FsOps::new(10), shape, &progress, &never);
        w.create_dirs(&rfd, l).unwrap();
        let (ref_dirs, _) = tree_of(&reference);

        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        let root = FsOps::open_path(&shared).unwrap();
        // Every rank's share of each depth in turn; the directories handled.
        let by_depth = |depths: Vec<u32>, remove: bool| {
            let mut done = 0;
            for depth in depths {
                for rank in 0..n {
                    let mut lw = level_walker((d, l), &progress, &never, 4);
                    done += lw.level(&root, depth, rank, n, remove).unwrap();
                }
            }
            done
        };
        assert_eq!(by_depth((1..=l).collect(), false) + 1, 15); // plus the root
        let (dirs, files) = tree_of(&shared);
        assert_eq!(dirs, ref_dirs);
        assert!(files.is_empty());

        // Every rank puts its own files into every directory (or removes them).
        let every_rank = |remove: bool| {
            for rank in 0..n as u32 {
                let mut w = Walker::new(FsOps::new(10), shape, &progress, &never);
                w.rank_files = Some(rank);
                let done = match remove {
                    true => w.remove_files(&root, l),
                    false => w.create_files(&root, l),
                };
                done.unwrap();
            }
        };
        every_rank(false);
        let (_, files) = tree_of(&shared);
        assert_eq!(files.len() as u64, n * f * 15);
        assert!(files.contains("L3F2.r0"));
        assert!(files.contains("L3D1/L2D2/L1D1/L0F1.r2"));
        assert_eq!(
            std::fs::metadata(shared.join("L3D2/L2F1.r1"))
                .unwrap()
                .len(),
            10
        );

        every_rank(true);
        assert_eq!(by_depth((1..=l).rev().collect(), true), 14);
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    }

    #[test]
    fn level_errors_name_the_path_and_stop_is_honoured() {
        let tmp = tempfile::tempdir().unwrap();
        let root = FsOps::open_path(tmp.path()).unwrap();
        let progress = AtomicU64::new(0);
        let never = || false;
        let mut lw = level_walker((2, 2), &progress, &never, 1);
        // Depth 2 before depth 1: the parent is missing.
        match lw.level(&root, 2, 0, 1, false) {
            Err(WalkError::Io { op, path, .. }) => {
                assert_eq!((op, path.as_str()), ("open", "L2D2"));
            }
            other => panic!("unexpected {other:?}"),
        }
        let always = || true;
        let mut lw = level_walker((2, 2), &progress, &always, 1);
        assert!(matches!(
            lw.level(&root, 1, 0, 1, false),
            Err(WalkError::Stopped)
        ));
        assert!(tmp.path().join("L2D2").is_dir());
        assert!(!tmp.path().join("L2D1").exists());
    }
}
