//! The fdtree tree walk, generic over the operations (`workload::fsops`, shared with the
//! other metadata engine) so the same loop runs against the file system ([`FsOps`]) or
//! against nothing at all ([`NullOps`], the overhead probe).
//!
//! Order and names follow fdtree.bash exactly: the root is level `l`; a directory at level
//! `k` holds files `L<k>F<n>` and (if `k > 0`) subdirectories `L<k>D<n>`, `n` counting down
//! from the count to 1. Directory create makes all siblings before descending; file create
//! and file remove handle a directory's files before its subdirectories; directory remove is
//! post-order. Every operation is relative to an `O_PATH` descriptor of its parent, so the
//! kernel never re-walks a long path.

use super::Phase;
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory entry name built without allocation: `L<level><kind><n>\0`.
pub struct Name {
    buf: [u8; 48],
    len: usize,
    /// Where the NUL is: at `len`, or after a rank's suffix ([`Name::with_rank`]).
    end: usize,
}

fn push_u64(buf: &mut [u8; 48], pos: usize, v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let digits = crate::workload::fsops::decimal(v, &mut tmp);
    buf[pos..pos + digits.len()].copy_from_slice(digits);
    pos + digits.len()
}

impl Name {
    /// `L<level><kind><n>`, kind `b'D'` or `b'F'`.
    #[inline]
    pub fn new(level: u32, kind: u8, n: u64) -> Name {
        let mut buf = [0u8; 48];
        buf[0] = b'L';
        let mut pos = push_u64(&mut buf, 1, u64::from(level));
        buf[pos] = kind;
        pos = push_u64(&mut buf, pos + 1, n);
        buf[pos] = 0;
        Name {
            buf,
            len: pos,
            end: pos,
        }
    }

    /// The name with `.r<rank>` after it in its C string (MPI's shared tree, where every
    /// rank has its files in every directory); [`Name::as_str`], which messages show, stays
    /// fdtree's name.
    #[inline]
    pub fn with_rank(mut self, rank: u32) -> Name {
        self.buf[self.end..self.end + 2].copy_from_slice(b".r");
        self.end = push_u64(&mut self.buf, self.end + 2, u64::from(rank));
        self.buf[self.end] = 0;
        self
    }

    /// The name as a C string.
    #[inline]
    pub fn as_cstr(&self) -> &CStr {
        // The buffer always holds exactly one NUL, at `end`.
        CStr::from_bytes_with_nul(&self.buf[..=self.end]).unwrap_or(c"")
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

// The operations come from the module every metadata engine shares.
pub use crate::workload::fsops::{FsOps, NullOps, Ops, WalkError};

/// Shape of the tree and the data written per file.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Subdirectories per directory.
    pub dirs: u64,
    /// Files per directory.
    pub files: u64,
    /// Levels below the root.
    pub levels: u32,
    /// Bytes per file.
    pub file_bytes: u64,
}

/// Walks one tree with one set of operations, counting progress.
pub struct Walker<'a, O: Ops> {
    /// The operations.
    pub ops: O,
    /// Tree shape.
    pub shape: Shape,
    /// Shared progress counter (all threads); updated every [`PROGRESS_EVERY`] items.
    pub progress: &'a AtomicU64,
    /// Stop flag, polled every `check_every` items.
    pub stop: &'a dyn Fn() -> bool,
    /// Items between progress updates and stop checks (default [`PROGRESS_EVERY`]; MPI mode
    /// checks more often so a stonewall or a failed rank is noticed sooner).
    pub check_every: u64,
    /// MPI's shared tree: this rank's files carry `.r<rank>` ([`Name::with_rank`]).
    pub rank_files: Option<u32>,
    /// Items since the last progress update.
    pending: u64,
    /// Path components of the current position, for error messages only.
    pub(crate) trail: Vec<Name>,
}

/// How many items a walker does between progress-counter updates.
pub const PROGRESS_EVERY: u64 = 1024;

impl<'a, O: Ops> Walker<'a, O> {
    /// A walker over `shape`.
    pub fn new(ops: O, shape: Shape, progress: &'a AtomicU64, stop: &'a dyn Fn() -> bool) -> Self {
        Walker {
            ops,
            shape,
            progress,
            stop,
            check_every: PROGRESS_EVERY,
            rank_files: None,
            pending: 0,
            trail: Vec::new(),
        }
    }

    /// Count one item done; every `check_every` items flush the count and poll `stop`.
    #[inline]
    pub fn tick(&mut self) -> Result<(), WalkError> {
        self.pending += 1;
        if self.pending >= self.check_every {
            self.flush_progress();
            if (self.stop)() {
                return Err(WalkError::Stopped);
            }
        }
        Ok(())
    }

    /// Add the pending item count to the shared counter.
    pub fn flush_progress(&mut self) {
        self.progress.fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
    }

    /// The error of `op` on `name` at the current position.
    pub(crate) fn err(&self, op: &'static str, name: &Name, err: io::Error) -> WalkError {
        let mut path: Vec<&str> = self.trail.iter().map(|n| n.as_str()).collect();
        path.push(name.as_str());
        WalkError::Io {
            op,
            path: path.join("/"),
            err,
        }
    }

    /// Do `op` (`what` in messages) on the entries of `kind` (`b'D'` or `b'F'`) of `dir` at
    /// `level`, numbered down from the count to 1 as fdtree does.
    fn each(
        &mut self,
        dir: &O::Dir,
        level: u32,
        kind: u8,
        what: &'static str,
        mut op: impl FnMut(&mut O, &O::Dir, &CStr) -> io::Result<()>,
    ) -> Result<(), WalkError> {
        let count = if kind == b'D' {
            self.shape.dirs
        } else {
            self.shape.files
        };
        for n in (1..=count).rev() {
            let name = match self.rank_files {
                Some(rank) if kind == b'F' => Name::new(level, kind, n).with_rank(rank),
                _ => Name::new(level, kind, n),
            };
            op(&mut self.ops, dir, name.as_cstr()).map_err(|e| self.err(what, &name, e))?;
            self.tick()?;
        }
        Ok(())
    }

    /// Run `f` in every subdirectory of `dir` (at `level`, above 0).
    fn below<F>(&mut self, dir: &O::Dir, level: u32, mut f: F) -> Result<(), WalkError>
    where
        F: FnMut(&mut Self, &O::Dir, u32) -> Result<(), WalkError>,
    {
        for n in (1..=self.shape.dirs).rev() {
            let name = Name::new(level, b'D', n);
            let sub = self
                .ops
                .open_dir(dir, name.as_cstr())
                .map_err(|e| self.err("open", &name, e))?;
            self.trail.push(name);
            let r = f(self, &sub, level - 1);
            self.trail.pop();
            r?;
        }
        Ok(())
    }

    /// Run `phase` over the tree below `root` (at `level`).
    pub fn walk(&mut self, phase: Phase, root: &O::Dir, level: u32) -> Result<(), WalkError> {
        match phase {
            Phase::DirCreate => self.create_dirs(root, level),
            Phase::FileCreate => self.create_files(root, level),
            Phase::FileRemove => self.remove_files(root, level),
            Phase::DirRemove => self.remove_dirs(root, level),
        }
    }

    /// Phase 1: make the subdirectories of `dir` (at `level`) and, recursively, theirs.
    pub fn create_dirs(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        if level == 0 {
            return Ok(());
        }
        self.each(dir, level, b'D', "mkdir", |o, d, n| o.mkdir(d, n))?;
        self.below(dir, level, |w, d, l| w.create_dirs(d, l))
    }

    /// Phase 2: create and write the files of `dir` and of every directory below it.
    pub fn create_files(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        let bytes = self.shape.file_bytes;
        self.each(dir, level, b'F', "create", |o, d, n| {
            o.create_file(d, n, bytes)
        })?;
        if level > 0 {
            self.below(dir, level, |w, d, l| w.create_files(d, l))?;
        }
        Ok(())
    }

    /// Phase 3: remove the files of `dir` and of every directory below it.
    pub fn remove_files(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        self.each(dir, level, b'F', "unlink", |o, d, n| o.unlink(d, n))?;
        if level > 0 {
            self.below(dir, level, |w, d, l| w.remove_files(d, l))?;
        }
        Ok(())
    }

    /// Phase 4: remove the directories below `dir`, deepest first.
    pub fn remove_dirs(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        if level == 0 {
            return Ok(());
        }
        if level > 1 {
            self.below(dir, level, |w, d, l| w.remove_dirs(d, l))?;
        }
        self.each(dir, level, b'D', "rmdir", |o, d, n| o.rmdir(d, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::workload::fsops::Recorder;

    fn walker<'a>(progress: &'a AtomicU64, stop: &'a dyn Fn() -> bool) -> Walker<'a, Recorder> {
        let shape = crate::workload::fdtree::shaped(2, 2, 2, 2).shape();
        Walker::new(Recorder::default().without_opens(), shape, progress, stop)
    }

    #[test]
    fn names_match_fdtree() {
        assert_eq!(Name::new(4, b'D', 10).as_str(), "L4D10");
        assert_eq!(Name::new(0, b'F', 1).as_cstr().to_bytes(), b"L0F1");
        assert_eq!(Name::new(123, b'F', 4567890).as_str(), "L123F4567890");
        let shared = Name::new(u32::MAX, b'F', u64::MAX).with_rank(u32::MAX);
        assert_eq!(shared.as_str(), format!("L{}F{}", u32::MAX, u64::MAX));
        let cstr = format!("L{}F{}.r{}", u32::MAX, u64::MAX, u32::MAX);
        assert_eq!(shared.as_cstr().to_bytes(), cstr.as_bytes());
    }

    #[test]
    fn order_of_operations_is_fdtree_order() {
        let p = AtomicU64::new(0);
        let never = || false;
        let mut w = walker(&p, &never);
        let root = "R".to_string();
        w.create_dirs(&root, 2).unwrap();
        w.create_files(&root, 2).unwrap();
        w.remove_files(&root, 2).unwrap();
        w.remove_dirs(&root, 2).unwrap();
        let log = w.ops.log.join("\n");
        let expected = "\
mkdir R/L2D2
mkdir R/L2D1
mkdir R/L2D2/L1D2
mkdir R/L2D2/L1D1
mkdir R/L2D1/L1D2
mkdir R/L2D1/L1D1
create R/L2F2 8192
create R/L2F1 8192
create R/L2D2/L1F2 8192
create R/L2D2/L1F1 8192
create R/L2D2/L1D2/L0F2 8192
create R/L2D2/L1D2/L0F1 8192
create R/L2D2/L1D1/L0F2 8192
create R/L2D2/L1D1/L0F1 8192
create R/L2D1/L1F2 8192
create R/L2D1/L1F1 8192
create R/L2D1/L1D2/L0F2 8192
create R/L2D1/L1D2/L0F1 8192
create R/L2D1/L1D1/L0F2 8192
create R/L2D1/L1D1/L0F1 8192
unlink R/L2F2
unlink R/L2F1
unlink R/L2D2/L1F2
unlink R/L2D2/L1F1
unlink R/L2D2/L1D2/L0F2
unlink R/L2D2/L1D2/L0F1
unlink R/L2D2/L1D1/L0F2
unlink R/L2D2/L1D1/L0F1
unlink R/L2D1/L1F2
unlink R/L2D1/L1F1
unlink R/L2D1/L1D2/L0F2
unlink R/L2D1/L1D2/L0F1
unlink R/L2D1/L1D1/L0F2
unlink R/L2D1/L1D1/L0F1
rmdir R/L2D2/L1D2
rmdir R/L2D2/L1D1
rmdir R/L2D1/L1D2
rmdir R/L2D1/L1D1
rmdir R/L2D2
rmdir R/L2D1";
        assert_eq!(log, expected);
    }

    #[test]
    fn stop_flag_ends_the_walk_at_the_next_check() {
        let p = AtomicU64::new(0);
        let always = || true;
        let mut w = walker(&p, &always);
        w.shape.files = PROGRESS_EVERY + 10;
        let root = "R".to_string();
        assert!(matches!(w.create_files(&root, 2), Err(WalkError::Stopped)));
        assert_eq!(w.ops.log.len() as u64, PROGRESS_EVERY);
        assert_eq!(p.load(Ordering::Relaxed), PROGRESS_EVERY);
    }

    #[test]
    fn io_errors_name_the_path() {
        let fails = Recorder::default()
            .without_opens()
            .fail_on("create", "L0F1", 28);
        let p = AtomicU64::new(0);
        let never = || false;
        let shape = crate::workload::fdtree::shaped(1, 1, 0, 1).shape();
        let mut w = Walker::new(fails, shape, &p, &never);
        match w.create_files(&"R".to_string(), 1) {
            Err(WalkError::Io { op, path, err }) => {
                assert_eq!(op, "create");
                assert_eq!(path, "L1D1/L0F1");
                assert_eq!(err.raw_os_error(), Some(28));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
