//! [`FsOps`]: the real file system through raw system calls.

use super::{CreateHow, Kind, Ops};
use crate::workload::iozone::io::AlignedBuf;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::CStr;
use std::io;

/// Largest single write or read; bigger files are written and read in pieces of this size.
const CHUNK: usize = 1 << 20;

/// The real file system. Directories are `O_PATH` descriptors.
pub struct FsOps {
    /// Zeros to write (up to [`CHUNK`]).
    zeros: AlignedBuf,
    /// Where reads go (up to [`CHUNK`]); kept apart so written data stays zero.
    rbuf: AlignedBuf,
    /// Files are written and read with `O_DIRECT`.
    direct: bool,
    /// Files are made with `mknod` instead of being opened.
    mknod: bool,
}

/// A page-aligned buffer (as `O_DIRECT` needs) of up to [`CHUNK`] zeros.
fn buffer(bytes: u64) -> AlignedBuf {
    AlignedBuf::new(usize::try_from(bytes).unwrap_or(CHUNK).min(CHUNK), 0, false)
}

impl FsOps {
    /// Operations that write files of up to `file_bytes` bytes (fdtree's constructor).
    pub fn new(file_bytes: u64) -> FsOps {
        FsOps::with_buffers(file_bytes, 0)
    }

    /// Operations that write up to `write_bytes` and read up to `read_bytes` per file; both
    /// buffers are allocated once, here.
    pub fn with_buffers(write_bytes: u64, read_bytes: u64) -> FsOps {
        FsOps {
            zeros: buffer(write_bytes),
            rbuf: buffer(read_bytes),
            direct: false,
            mknod: false,
        }
    }

    /// Write and read files with `O_DIRECT` (sizes must then be multiples of the device's
    /// logical block size, or the kernel answers `EINVAL`).
    pub fn direct(mut self, on: bool) -> FsOps {
        self.direct = on;
        self
    }

    /// Make files with `mknod` (regular, mode 0400, never opened; nothing is written).
    pub fn mknod(mut self, on: bool) -> FsOps {
        self.mknod = on;
        self
    }

    /// `O_DIRECT` when asked for.
    fn data_flags(&self) -> OFlags {
        if self.direct {
            OFlags::DIRECT
        } else {
            OFlags::empty()
        }
    }

    /// Open a directory path as an `O_PATH` descriptor (the start of every walk).
    pub fn open_path(path: &std::path::Path) -> io::Result<OwnedFd> {
        Ok(rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    fn write_all(&mut self, fd: &OwnedFd, bytes: u64) -> io::Result<()> {
        if self.zeros.is_empty() && bytes > 0 {
            self.zeros = buffer(bytes);
        }
        let mut left = bytes;
        while left > 0 {
            let n = left.min(self.zeros.len() as u64) as usize;
            let w = rustix::io::write(fd, &self.zeros[..n])?;
            if w == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0"));
            }
            left -= w as u64;
        }
        Ok(())
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
    fn rmdir(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?)
    }

    #[inline]
    fn open_dir(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            parent,
            name,
            // Never through a symbolic link: a walk stays inside the tree it made.
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    #[inline]
    fn create(&mut self, parent: &OwnedFd, name: &CStr, how: CreateHow) -> io::Result<()> {
        if self.mknod {
            // A regular file readable by its owner, never opened (the POSIX mknod of IOR's
            // benchmarks).
            return Ok(rustix::fs::mknodat(
                parent,
                name,
                FileType::RegularFile,
                Mode::RUSR,
                0,
            )?);
        }
        let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC | self.data_flags();
        flags |= if how.exclusive {
            OFlags::EXCL
        } else {
            OFlags::TRUNC
        };
        let fd = rustix::fs::openat(parent, name, flags, Mode::from_raw_mode(how.mode))?;
        if how.bytes > 0 {
            self.write_all(&fd, how.bytes)?;
            if how.fsync {
                rustix::fs::fsync(&fd)?;
            }
        }
        // Dropping the descriptor closes it; local file systems report no close errors
        // after a successful write.
        drop(fd);
        Ok(())
    }

    #[inline]
    fn read_file(&mut self, parent: &OwnedFd, name: &CStr, bytes: u64) -> io::Result<u64> {
        let fd = rustix::fs::openat(
            parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | self.data_flags(),
            Mode::empty(),
        )?;
        if self.rbuf.is_empty() && bytes > 0 {
            self.rbuf = buffer(bytes);
        }
        let mut done = 0u64;
        while done < bytes {
            let n = (bytes - done).min(self.rbuf.len() as u64) as usize;
            let r = rustix::io::read(&fd, &mut self.rbuf[..n])?;
            if r == 0 {
                break;
            }
            done += r as u64;
        }
        drop(fd);
        Ok(done)
    }

    #[inline]
    fn stat(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<Kind> {
        let st = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => Kind::Dir,
            FileType::RegularFile => Kind::File,
            _ => Kind::Other,
        })
    }

    #[inline]
    fn rename(
        &mut self,
        from_dir: &OwnedFd,
        from: &CStr,
        to_dir: &OwnedFd,
        to: &CStr,
    ) -> io::Result<()> {
        Ok(rustix::fs::renameat(from_dir, from, to_dir, to)?)
    }

    #[inline]
    fn unlink(&mut self, parent: &OwnedFd, name: &CStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(parent, name, AtFlags::empty())?)
    }

    fn sync(&mut self) {
        rustix::fs::sync();
    }
}
