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

use crate::workload::fdtree::tree::{Name, Ops, WalkError};
use crate::workload::fsops::{CreateHow, Kind};
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// `d^t`, the number of directories at depth `t` (saturating; callers validated the shape).
pub fn dirs_at_depth(dirs: u64, depth: u32) -> u64 {
    dirs.saturating_pow(depth)
}

/// How many of `total` indices are `≡ rank (mod size)`.
pub fn share(total: u64, rank: u64, size: u64) -> u64 {
    if size == 0 || rank >= total {
        0
    } else {
        (total - rank - 1) / size + 1
    }
}

/// Directories `rank` of `size` makes in the shared tree (the root counts for rank 0).
pub fn dirs_of_rank(dirs: u64, levels: u32, rank: u64, size: u64) -> u64 {
    (0..=levels)
        .map(|t| share(dirs_at_depth(dirs, t), rank, size))
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
    /// The operations.
    pub ops: O,
    dirs: u64,
    levels: u32,
    /// Open directories along the current parent path: (digit, descriptor).
    stack: Vec<(u64, O::Dir)>,
    progress: &'a AtomicU64,
    stop: &'a dyn Fn() -> bool,
    check_every: u64,
    pending: u64,
    scratch: Vec<u64>,
}

impl<'a, O: Ops> LevelWalker<'a, O> {
    /// A walker over a tree of `dirs` per level and `levels` levels; `stop` is polled every
    /// `check_every` items, after `progress` is updated.
    pub fn new(
        ops: O,
        dirs: u64,
        levels: u32,
        progress: &'a AtomicU64,
        stop: &'a dyn Fn() -> bool,
        check_every: u64,
    ) -> Self {
        LevelWalker {
            ops,
            dirs,
            levels,
            stack: Vec::new(),
            progress,
            stop,
            check_every: check_every.max(1),
            pending: 0,
            scratch: Vec::new(),
        }
    }

    /// Add pending items to the shared counter.
    pub fn flush_progress(&mut self) {
        self.progress.fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
    }

    /// Forget the open parent directories (before the tree changes shape under them).
    pub fn close(&mut self) {
        self.stack.clear();
    }

    fn path(&self, digits: &[u64]) -> String {
        digits
            .iter()
            .enumerate()
            .map(|(pos, d)| {
                component(self.dirs, self.levels, pos, *d)
                    .as_str()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("/")
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
        for pos in keep..parent.len() {
            let name = component(self.dirs, self.levels, pos, parent[pos]);
            let at = match self.stack.last() {
                Some((_, d)) => d,
                None => root,
            };
            let dir = self
                .ops
                .open_dir(at, name.as_cstr())
                .map_err(|err| WalkError::Io {
                    op: "open",
                    path: self.path(&parent[..=pos]),
                    err,
                })?;
            self.stack.push((parent[pos], dir));
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
        let total = dirs_at_depth(self.dirs, depth);
        let mut done = 0;
        let mut index = rank;
        let mut d = std::mem::take(&mut self.scratch);
        let r = (|| {
            while index < total {
                digits(self.dirs, depth, index, &mut d);
                let Some((last, parent)) = d.split_last() else {
                    break;
                };
                self.open_parent(root, parent)?;
                let name = component(self.dirs, self.levels, parent.len(), *last);
                let at = match self.stack.last() {
                    Some((_, dir)) => dir,
                    None => root,
                };
                let res = if remove {
                    self.ops.rmdir(at, name.as_cstr())
                } else {
                    self.ops.mkdir(at, name.as_cstr())
                };
                res.map_err(|err| WalkError::Io {
                    op: if remove { "rmdir" } else { "mkdir" },
                    path: self.path(&d),
                    err,
                })?;
                done += 1;
                self.pending += 1;
                if self.pending >= self.check_every {
                    self.flush_progress();
                    if (self.stop)() {
                        return Err(WalkError::Stopped);
                    }
                }
                index = index.saturating_add(size);
            }
            Ok(done)
        })();
        self.scratch = d;
        r
    }
}

/// Operations that add `.r<rank>` to every file name (directories keep fdtree's names), so
/// several ranks can put their files into the same directories.
pub struct RankFiles<O> {
    /// The wrapped operations.
    pub inner: O,
    suffix: Vec<u8>,
    buf: Vec<u8>,
}

impl<O> RankFiles<O> {
    /// Wrap `inner` for `rank`.
    pub fn new(inner: O, rank: u32) -> Self {
        RankFiles {
            inner,
            suffix: format!(".r{rank}").into_bytes(),
            buf: Vec::with_capacity(64),
        }
    }

    /// `f` on the inner operations with `name` plus this rank's suffix.
    fn suffixed<R>(
        &mut self,
        name: &CStr,
        f: impl FnOnce(&mut O, &CStr) -> io::Result<R>,
    ) -> io::Result<R> {
        self.buf.clear();
        self.buf.extend_from_slice(name.to_bytes());
        self.buf.extend_from_slice(&self.suffix);
        self.buf.push(0);
        let c = CStr::from_bytes_with_nul(&self.buf)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        f(&mut self.inner, c)
    }
}

impl<O: Ops> Ops for RankFiles<O> {
    type Dir = O::Dir;

    fn mkdir(&mut self, parent: &O::Dir, name: &CStr) -> io::Result<()> {
        self.inner.mkdir(parent, name)
    }

    fn open_dir(&mut self, parent: &O::Dir, name: &CStr) -> io::Result<O::Dir> {
        self.inner.open_dir(parent, name)
    }

    fn create_file(&mut self, parent: &O::Dir, name: &CStr, bytes: u64) -> io::Result<()> {
        self.suffixed(name, |o, c| o.create_file(parent, c, bytes))
    }

    fn unlink(&mut self, parent: &O::Dir, name: &CStr) -> io::Result<()> {
        self.suffixed(name, |o, c| o.unlink(parent, c))
    }

    fn rmdir(&mut self, parent: &O::Dir, name: &CStr) -> io::Result<()> {
        self.inner.rmdir(parent, name)
    }

    // The rest of the shared operations, for completeness: files carry the rank's suffix,
    // directories do not.
    fn create(&mut self, parent: &O::Dir, name: &CStr, how: CreateHow) -> io::Result<()> {
        self.suffixed(name, |o, c| o.create(parent, c, how))
    }

    fn read_file(&mut self, parent: &O::Dir, name: &CStr, bytes: u64) -> io::Result<u64> {
        self.suffixed(name, |o, c| o.read_file(parent, c, bytes))
    }

    fn stat(&mut self, parent: &O::Dir, name: &CStr) -> io::Result<Kind> {
        self.inner.stat(parent, name)
    }

    fn rename(
        &mut self,
        from_dir: &O::Dir,
        from: &CStr,
        to_dir: &O::Dir,
        to: &CStr,
    ) -> io::Result<()> {
        self.inner.rename(from_dir, from, to_dir, to)
    }

    fn count_entries(&mut self, dir: &O::Dir) -> io::Result<u64> {
        self.inner.count_entries(dir)
    }

    fn sync(&mut self) {
        self.inner.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fdtree::tree::{FsOps, Shape, Walker};
    use crate::workload::fdtree::FdtreeParams;
    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn shares_add_up_to_the_fdtree_count() {
        for (d, l) in [(1u64, 0u32), (2, 3), (3, 2), (10, 2), (20, 1)] {
            let total = FdtreeParams {
                dirs: d,
                levels: l,
                ..Default::default()
            }
            .counts()
            .unwrap()
            .dirs;
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
            dirs: d,
            files: f,
            levels: l,
            file_bytes: 10,
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
        let mut made = 0;
        for depth in 1..=l {
            for rank in 0..n {
                let mut lw = LevelWalker::new(FsOps::new(0), d, l, &progress, &never, 4);
                made += lw.level(&root, depth, rank, n, false).unwrap();
            }
        }
        assert_eq!(made + 1, 15); // plus the root
        let (dirs, files) = tree_of(&shared);
        assert_eq!(dirs, ref_dirs);
        assert!(files.is_empty());

        // Every rank puts its own files into every directory (or removes them).
        let every_rank = |remove: bool| {
            for rank in 0..n as u32 {
                let ops = RankFiles::new(FsOps::new(10), rank);
                let mut w = Walker::new(ops, shape, &progress, &never);
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
        let mut removed = 0;
        for depth in (1..=l).rev() {
            for rank in 0..n {
                let mut lw = LevelWalker::new(FsOps::new(0), d, l, &progress, &never, 4);
                removed += lw.level(&root, depth, rank, n, true).unwrap();
            }
        }
        assert_eq!(removed, 14);
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    }

    #[test]
    fn level_errors_name_the_path_and_stop_is_honoured() {
        let tmp = tempfile::tempdir().unwrap();
        let root = FsOps::open_path(tmp.path()).unwrap();
        let progress = AtomicU64::new(0);
        let never = || false;
        let mut lw = LevelWalker::new(FsOps::new(0), 2, 2, &progress, &never, 1);
        // Depth 2 before depth 1: the parent is missing.
        match lw.level(&root, 2, 0, 1, false) {
            Err(WalkError::Io { op, path, .. }) => {
                assert_eq!((op, path.as_str()), ("open", "L2D2"));
            }
            other => panic!("unexpected {other:?}"),
        }
        let always = || true;
        let mut lw = LevelWalker::new(FsOps::new(0), 2, 2, &progress, &always, 1);
        assert!(matches!(
            lw.level(&root, 1, 0, 1, false),
            Err(WalkError::Stopped)
        ));
        assert!(tmp.path().join("L2D2").is_dir());
        assert!(!tmp.path().join("L2D1").exists());
    }
}
