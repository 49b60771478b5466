//! File-system operations shared by the metadata engines (fdtree and its successors): one trait,
//! [`Ops`], with three implementations —
//!
//! * [`FsOps`]: the real file system through raw system calls (rustix, no libc buffering);
//!   every operation is relative to an open directory (`mkdirat`, `openat`, `fstatat`,
//!   `renameat`, `unlinkat` on `O_PATH` descriptors), so the kernel never walks a long path
//!   again;
//! * [`NullOps`]: no system calls at all, to measure an engine's own cost per operation;
//! * [`Recorder`]: a recording double for tests that keeps a model of the tree it was asked
//!   to build, so a test can assert the exact sequence of operations *and* that each one
//!   would have succeeded (no `stat` of a file never made, no `rmdir` of a full directory).
//!
//! Names are `&CStr` built by the caller without allocation ([`NameBuf`]); a name may hold
//! several components (`a/b/c`), which the kernel resolves below the given directory.

mod fs;
mod name;
mod null;
mod recorder;

pub use fs::FsOps;
pub use name::{decimal, NameBuf};
pub use null::NullOps;
pub use recorder::Recorder;

/// Why a walk of a metadata engine's tree stopped early.
#[derive(Debug)]
pub enum WalkError {
    /// A system call failed.
    Io {
        /// What was being done (`mkdir`, `create`, `stat`, …).
        op: &'static str,
        /// The entry, relative to the root of the tree or test directory walked.
        path: String,
        /// The error.
        err: io::Error,
    },
    /// The stop flag was raised.
    Stopped,
}

impl WalkError {
    /// The error to report: an interrupt, or the failed call on `root/path`.
    pub fn into_error(self, root: &str) -> anyhow::Error {
        match self {
            WalkError::Stopped => anyhow::anyhow!(crate::signal::Interrupted),
            WalkError::Io { op, path, err } => anyhow::anyhow!("{op} {root}/{path}: {err}"),
        }
    }
}

use std::ffi::CStr;
use std::io;

/// How [`Ops::create`] makes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateHow {
    /// Zero bytes written after the open (in writes of at most 1 MiB).
    pub bytes: u64,
    /// `fsync` the file after its data is written (only when `bytes > 0`: the sync follows
    /// the write, and an empty file has none).
    pub fsync: bool,
    /// `O_EXCL`: fail if the name exists, so an engine never writes into an entry it did not
    /// make. Without it the file is truncated (fdtree's `dd` behaviour).
    pub exclusive: bool,
    /// Permission bits before the umask: 0644 as fdtree's `dd` leaves them under the usual
    /// umask, 0664 for group-writable files.
    pub mode: u32,
}

impl CreateHow {
    /// fdtree's create: truncate, write `bytes`, no sync.
    pub fn truncate(bytes: u64) -> CreateHow {
        CreateHow {
            bytes,
            fsync: false,
            exclusive: false,
            mode: 0o644,
        }
    }
}

/// What kind of entry [`Ops::stat`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// Anything else (symbolic link, device, FIFO, socket).
    Other,
}

/// The operations a metadata engine performs. `Dir` is whatever identifies an open
/// directory. Every method is one operation on the file system (plus its close).
pub trait Ops {
    /// An open directory.
    type Dir;
    /// Create directory `name` in `parent` (mode 0755 before the umask).
    fn mkdir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Remove the empty directory `name` from `parent`.
    fn rmdir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Open directory `name` in `parent` for further `*at` calls, never through a symbolic
    /// link in its last component.
    fn open_dir(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<Self::Dir>;
    /// Create file `name` in `parent`, write `how.bytes` zero bytes, optionally fsync, close.
    fn create(&mut self, parent: &Self::Dir, name: &CStr, how: CreateHow) -> io::Result<()>;
    /// fdtree's create: [`Ops::create`] with [`CreateHow::truncate`].
    fn create_file(&mut self, parent: &Self::Dir, name: &CStr, bytes: u64) -> io::Result<()> {
        self.create(parent, name, CreateHow::truncate(bytes))
    }
    /// Open file `name` in `parent` read-only, read up to `bytes` bytes, close. Returns the
    /// bytes read (fewer than asked at end of file).
    fn read_file(&mut self, parent: &Self::Dir, name: &CStr, bytes: u64) -> io::Result<u64>;
    /// `fstatat` without following a final symbolic link.
    fn stat(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<Kind>;
    /// Rename `from` in `from_dir` to `to` in `to_dir` (`renameat`).
    fn rename(
        &mut self,
        from_dir: &Self::Dir,
        from: &CStr,
        to_dir: &Self::Dir,
        to: &CStr,
    ) -> io::Result<()>;
    /// Remove file `name` from `parent`.
    fn unlink(&mut self, parent: &Self::Dir, name: &CStr) -> io::Result<()>;
    /// Flush all dirty data of every file system to its device (`sync(2)`); a double
    /// without a file system does nothing.
    fn sync(&mut self) {}
}

/// A temporary directory for tests of what `O_DIRECT` bypasses; `None`, saying so, where
/// the test is skipped (on tmpfs).
#[cfg(test)]
pub(crate) fn direct_io_tempdir() -> Option<tempfile::TempDir> {
    let t = tempfile::tempdir().unwrap();
    if crate::sysinfo::fs_type_of(t.path()).as_deref() == Some("tmpfs") {
        eprintln!("skipped: tmpfs takes O_DIRECT without bypassing its cache");
        return None;
    }
    Some(t)
}

/// How many of the pages of file `path` are in the page cache (`mincore`), for tests of
/// what bypasses it.
#[cfg(test)]
pub(crate) fn resident_pages(path: &std::path::Path) -> io::Result<usize> {
    let f = std::fs::File::open(path)?;
    let len = usize::try_from(f.metadata()?.len()).map_err(io::Error::other)?;
    if len == 0 {
        return Ok(0);
    }
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a shared read-only mapping of `len` bytes of an open file, unmapped below;
    // `vec` has one byte per page of it.
    unsafe {
        use std::os::fd::AsRawFd;
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let r = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(vec.iter().filter(|b| *b & 1 == 1).count())
}

#[cfg(test)]
#[path = "fsops_tests.rs"]
mod tests;
