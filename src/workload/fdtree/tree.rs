//! The fdtree tree walk, generic over the operations so the same loop runs against the
//! file system ([`FsOps`]) or against nothing at all ([`NullOps`], the overhead probe).
//!
//! Order and names follow fdtree.bash exactly: the root is level `l`; a directory at level
//! `k` holds files `L<k>F<n>` and (if `k > 0`) subdirectories `L<k>D<n>`, `n` counting down
//! from the count to 1. Directory create makes all siblings before descending; file create
//! and file remove handle a directory's files before its subdirectories; directory remove is
//! post-order. Every operation is relative to an `O_PATH` descriptor of its parent, so the
//! kernel never re-walks a long path.

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory entry name built without allocation: `L<level><kind><n>\0`.
pub struct Name {
    buf: [u8; 48],
    len: usize,
}

fn push_u64(buf: &mut [u8; 48], mut pos: usize, mut v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let digits = &tmp[i..];
    buf[pos..pos + digits.len()].copy_from_slice(digits);
    pos += digits.len();
    pos
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
        Name { buf, len: pos }
    }

    /// The name as a C string.
    #[inline]
    pub fn as_cstr(&self) -> &CStr {
        // The buffer always holds exactly one NUL, at `len`.
        CStr::from_bytes_with_nul(&self.buf[..=self.len]).unwrap_or(c"")
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// The operations the walk performs. `Dir` is whatever identifies an open directory.
pub trait Ops {
    /// An open directory.
    type Dir;
    /// Create directory `name` in `parent`.
    fn mkdir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Open directory `name` in `parent` for further `*at` calls.
    fn open_dir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<Self::Dir>;
    /// Create file `name` in `parent` and write `bytes` zero bytes to it.
    fn create_file(&mut self, parent: &Self::Dir, name: &CStr, bytes: u64) -> io::Result<()>;
    /// Remove file `name` from `parent`.
    fn unlink(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Remove directory `name` from `parent`.
    fn rmdir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
}

/// The real file system through raw system calls (rustix, no libc buffering).
pub struct FsOps {
    zeros: Vec<u8>,
}

/// Largest single write; files bigger than this are written in chunks of this size.
const WRITE_CHUNK: usize = 1 << 20;

impl FsOps {
    /// Operations that write files of up to `file_bytes` bytes.
    pub fn new(file_bytes: u64) -> FsOps {
        let len = usize::try_from(file_bytes)
            .unwrap_or(WRITE_CHUNK)
            .min(WRITE_CHUNK);
        FsOps {
            zeros: vec![0u8; len],
        }
    }

    /// Open a directory path as an `O_PATH` descriptor.
    pub fn open_path(path: &std::path::Path) -> io::Result<OwnedFd> {
        Ok(rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }
}

impl Ops for FsOps {
    type Dir = OwnedFd;

    #[inline]
    fn mkdir(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::mkdirat(
            parent,
            name,
            Mode::from_raw_mode(0o755),
        )?)
    }

    #[inline]
    fn open_dir(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            parent,
            name,
            // Never through a symbolic link: the walk stays inside the tree it made.
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    #[inline]
    fn create_file(&mut self, parent: &OwnedFd, name: &CStr, bytes: u64) -> io::Result<()> {
        let fd = rustix::fs::openat(
            parent,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        let mut left = bytes;
        while left > 0 {
            let n = (left.min(self.zeros.len() as u64)) as usize;
            let w = rustix::io::write(&fd, &self.zeros[..n])?;
            if w == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0"));
            }
            left -= w as u64;
        }
        // Dropping the descriptor closes it; close errors on local file systems are not
        // reported by the kernel after a successful write, as in dd.
        drop(fd);
        Ok(())
    }

    #[inline]
    fn unlink(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(parent, name, AtFlags::empty())?)
    }

    #[inline]
    fn rmdir(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?)
    }
}

/// No system calls at all: the same walk, to measure fslab's own cost per operation.
pub struct NullOps;

impl Ops for NullOps {
    type Dir = ();

    #[inline]
    fn mkdir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        std::hint::black_box(name);
        Ok(())
    }
    #[inline]
    fn open_dir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        std::hint::black_box(name);
        Ok(())
    }
    #[inline]
    fn create_file(&mut self, _: &(), name: &CStr, bytes: u64) -> io::Result<()> {
        std::hint::black_box((name, bytes));
        Ok(())
    }
    #[inline]
    fn unlink(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        std::hint::black_box(name);
        Ok(())
    }
    #[inline]
    fn rmdir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        std::hint::black_box(name);
        Ok(())
    }
}

/// Why a walk stopped early.
#[derive(Debug)]
pub enum WalkError {
    /// A system call failed on this entry (path relative to the tree root).
    Io {
        /// What was being done (`mkdir`, `create`, …).
        op: &'static str,
        /// Path relative to the root.
        path: String,
        /// The error.
        err: io::Error,
    },
    /// The stop flag was raised.
    Stopped,
}

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
    /// Items since the last progress update.
    pending: u64,
    /// Path components of the current position, for error messages only.
    trail: Vec<Name>,
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
            pending: 0,
            trail: Vec::new(),
        }
    }

    #[inline]
    fn tick(&mut self) -> Result<(), WalkError> {
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

    fn err(&self, op: &'static str, name: &Name, err: io::Error) -> WalkError {
        let mut path: Vec<&str> = self.trail.iter().map(|n| n.as_str()).collect();
        path.push(name.as_str());
        WalkError::Io {
            op,
            path: path.join("/"),
            err,
        }
    }

    fn descend<F>(&mut self, parent: &O::Dir, level: u32, n: u64, mut f: F) -> Result<(), WalkError>
    where
        F: FnMut(&mut Self, &O::Dir, u32) -> Result<(), WalkError>,
    {
        let name = Name::new(level, b'D', n);
        let dir = self
            .ops
            .open_dir(parent, name.as_cstr())
            .map_err(|e| self.err("open", &name, e))?;
        self.trail.push(name);
        let r = f(self, &dir, level - 1);
        self.trail.pop();
        r
    }

    /// Phase 1: make the subdirectories of `dir` (at `level`) and, recursively, theirs.
    pub fn create_dirs(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        if level == 0 {
            return Ok(());
        }
        for n in (1..=self.shape.dirs).rev() {
            let name = Name::new(level, b'D', n);
            self.ops
                .mkdir(dir, name.as_cstr())
                .map_err(|e| self.err("mkdir", &name, e))?;
            self.tick()?;
        }
        for n in (1..=self.shape.dirs).rev() {
            self.descend(dir, level, n, |w, d, l| w.create_dirs(d, l))?;
        }
        Ok(())
    }

    /// Phase 2: create and write the files of `dir` and of every directory below it.
    pub fn create_files(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        for n in (1..=self.shape.files).rev() {
            let name = Name::new(level, b'F', n);
            self.ops
                .create_file(dir, name.as_cstr(), self.shape.file_bytes)
                .map_err(|e| self.err("create", &name, e))?;
            self.tick()?;
        }
        if level > 0 {
            for n in (1..=self.shape.dirs).rev() {
                self.descend(dir, level, n, |w, d, l| w.create_files(d, l))?;
            }
        }
        Ok(())
    }

    /// Phase 3: remove the files of `dir` and of every directory below it.
    pub fn remove_files(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        for n in (1..=self.shape.files).rev() {
            let name = Name::new(level, b'F', n);
            self.ops
                .unlink(dir, name.as_cstr())
                .map_err(|e| self.err("unlink", &name, e))?;
            self.tick()?;
        }
        if level > 0 {
            for n in (1..=self.shape.dirs).rev() {
                self.descend(dir, level, n, |w, d, l| w.remove_files(d, l))?;
            }
        }
        Ok(())
    }

    /// Phase 4: remove the directories below `dir`, deepest first.
    pub fn remove_dirs(&mut self, dir: &O::Dir, level: u32) -> Result<(), WalkError> {
        if level == 0 {
            return Ok(());
        }
        if level > 1 {
            for n in (1..=self.shape.dirs).rev() {
                self.descend(dir, level, n, |w, d, l| w.remove_dirs(d, l))?;
            }
        }
        for n in (1..=self.shape.dirs).rev() {
            let name = Name::new(level, b'D', n);
            self.ops
                .rmdir(dir, name.as_cstr())
                .map_err(|e| self.err("rmdir", &name, e))?;
            self.tick()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every operation as text, to check order and names.
    #[derive(Default)]
    struct Recorder(Vec<String>);

    impl Ops for Recorder {
        type Dir = String;
        fn mkdir(&mut self, p: &String, n: &CStr) -> io::Result<()> {
            self.0.push(format!("mkdir {p}/{}", n.to_str().unwrap()));
            Ok(())
        }
        fn open_dir(&mut self, p: &String, n: &CStr) -> io::Result<String> {
            Ok(format!("{p}/{}", n.to_str().unwrap()))
        }
        fn create_file(&mut self, p: &String, n: &CStr, b: u64) -> io::Result<()> {
            self.0
                .push(format!("create {p}/{} {b}", n.to_str().unwrap()));
            Ok(())
        }
        fn unlink(&mut self, p: &String, n: &CStr) -> io::Result<()> {
            self.0.push(format!("unlink {p}/{}", n.to_str().unwrap()));
            Ok(())
        }
        fn rmdir(&mut self, p: &String, n: &CStr) -> io::Result<()> {
            self.0.push(format!("rmdir {p}/{}", n.to_str().unwrap()));
            Ok(())
        }
    }

    fn walker<'a>(progress: &'a AtomicU64, stop: &'a dyn Fn() -> bool) -> Walker<'a, Recorder> {
        let shape = Shape {
            dirs: 2,
            files: 2,
            levels: 2,
            file_bytes: 8192,
        };
        Walker::new(Recorder::default(), shape, progress, stop)
    }

    #[test]
    fn names_match_fdtree() {
        assert_eq!(Name::new(4, b'D', 10).as_str(), "L4D10");
        assert_eq!(Name::new(0, b'F', 1).as_cstr().to_bytes(), b"L0F1");
        assert_eq!(Name::new(123, b'F', 4567890).as_str(), "L123F4567890");
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
        let log = w.ops.0.join("\n");
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
        assert_eq!(w.ops.0.len() as u64, PROGRESS_EVERY);
        assert_eq!(p.load(Ordering::Relaxed), PROGRESS_EVERY);
    }

    #[test]
    fn io_errors_name_the_path() {
        struct Fails;
        impl Ops for Fails {
            type Dir = ();
            fn mkdir(&mut self, _: &(), _: &CStr) -> io::Result<()> {
                Ok(())
            }
            fn open_dir(&mut self, _: &(), _: &CStr) -> io::Result<()> {
                Ok(())
            }
            fn create_file(&mut self, _: &(), n: &CStr, _: u64) -> io::Result<()> {
                if n.to_bytes() == b"L0F1" {
                    Err(io::Error::from_raw_os_error(28))
                } else {
                    Ok(())
                }
            }
            fn unlink(&mut self, _: &(), _: &CStr) -> io::Result<()> {
                Ok(())
            }
            fn rmdir(&mut self, _: &(), _: &CStr) -> io::Result<()> {
                Ok(())
            }
        }
        let p = AtomicU64::new(0);
        let never = || false;
        let shape = Shape {
            dirs: 1,
            files: 1,
            levels: 1,
            file_bytes: 0,
        };
        let mut w = Walker::new(Fails, shape, &p, &never);
        match w.create_files(&(), 1) {
            Err(WalkError::Io { op, path, err }) => {
                assert_eq!(op, "create");
                assert_eq!(path, "L1D1/L0F1");
                assert_eq!(err.raw_os_error(), Some(28));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
