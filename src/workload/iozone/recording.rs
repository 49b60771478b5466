//! [`RecordingIo`]: an in-memory file system implementing [`Io`] that logs every call with its
//! file offset, for unit tests of IOzone's access patterns (no root, no strace). It can
//! simulate a full file system, a corrupt byte and O_DIRECT alignment rules.

use super::io::{Fd, Io, Mark, OpenFlags, Whence};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

/// One call seen by [`RecordingIo`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `creat(path)`.
    Creat(PathBuf),
    /// `open(path, flags)` that returned `fd`.
    Open {
        /// The file.
        path: PathBuf,
        /// The flags.
        flags: OpenFlags,
        /// The descriptor returned.
        fd: Fd,
    },
    /// `read` of `len` bytes at file offset `offset` (the bytes actually read).
    Read {
        /// Descriptor.
        fd: Fd,
        /// File offset at the start of the read.
        offset: u64,
        /// Bytes returned.
        len: usize,
    },
    /// `write` of `len` bytes at file offset `offset` (the bytes actually written).
    Write {
        /// Descriptor.
        fd: Fd,
        /// File offset at the start of the write.
        offset: u64,
        /// Bytes written.
        len: usize,
    },
    /// `lseek` that moved the offset to `to`.
    Seek {
        /// Descriptor.
        fd: Fd,
        /// The resulting offset.
        to: u64,
    },
    /// `fsync`.
    Fsync(Fd),
    /// `close`.
    Close(Fd),
    /// `posix_fadvise(DONTNEED)`.
    Fadvise(Fd),
    /// `drop_caches`.
    DropCaches,
    /// A marker from the engine.
    Mark(Mark),
}

#[derive(Debug, Clone)]
struct OpenFile {
    path: PathBuf,
    pos: u64,
    flags: OpenFlags,
}

/// An in-memory file system that records every call (for unit tests).
#[derive(Debug, Default)]
pub struct RecordingIo {
    files: HashMap<PathBuf, Vec<u8>>,
    fds: HashMap<Fd, OpenFile>,
    next_fd: Fd,
    /// Every call, in order.
    pub ops: Vec<Op>,
    /// Total bytes all files may hold; a write beyond it is short, the next fails with ENOSPC.
    pub capacity: Option<u64>,
    /// Reads of this byte (file, offset) return it with its bits flipped (a corrupt disk).
    pub corrupt: Option<(PathBuf, u64)>,
    /// O_DIRECT alignment checked on reads and writes (buffer address and length), 0 = none.
    pub direct_align: usize,
    /// Time every read and write takes (a slow device), none by default.
    pub delay: std::time::Duration,
}

impl RecordingIo {
    /// An empty file system.
    pub fn new() -> Self {
        RecordingIo {
            next_fd: 3,
            ..Default::default()
        }
    }

    /// The contents of a file, if it exists.
    pub fn file(&self, path: &Path) -> Option<&[u8]> {
        self.files.get(path).map(|v| v.as_slice())
    }

    /// Create a file with the given contents.
    pub fn put_file(&mut self, path: &Path, data: Vec<u8>) {
        self.files.insert(path.to_path_buf(), data);
    }

    /// Descriptors currently open.
    pub fn open_count(&self) -> usize {
        self.fds.len()
    }

    fn used(&self) -> u64 {
        self.files.values().map(|v| v.len() as u64).sum()
    }

    fn get(&mut self, fd: Fd) -> io::Result<&mut OpenFile> {
        self.fds
            .get_mut(&fd)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))
    }

    /// A new descriptor for `path`, at offset 0.
    fn new_fd(&mut self, path: &Path, flags: OpenFlags) -> Fd {
        let fd = self.next_fd;
        self.next_fd += 1;
        let file = OpenFile {
            path: path.to_path_buf(),
            pos: 0,
            flags,
        };
        self.fds.insert(fd, file);
        fd
    }

    /// `n` bytes moved at `offset` of `fd`: advance its position and record `op`.
    fn moved(
        &mut self,
        fd: Fd,
        offset: u64,
        n: usize,
        op: fn(Fd, u64, usize) -> Op,
    ) -> io::Result<usize> {
        self.get(fd)?.pos += n as u64;
        self.ops.push(op(fd, offset, n));
        Ok(n)
    }

    fn check_direct(&self, f: &OpenFile, addr: usize, len: usize) -> io::Result<()> {
        let a = self.direct_align;
        if f.flags.direct && a > 0 && (addr % a != 0 || len % a != 0 || f.pos % a as u64 != 0) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok(())
    }
}

impl Io for RecordingIo {
    fn creat(&mut self, path: &Path) -> io::Result<Fd> {
        self.ops.push(Op::Creat(path.to_path_buf()));
        self.files.insert(path.to_path_buf(), Vec::new());
        Ok(self.new_fd(path, OpenFlags::CREATE))
    }

    fn open(&mut self, path: &Path, flags: OpenFlags) -> io::Result<Fd> {
        if !flags.create && !self.files.contains_key(path) {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        let data = self.files.entry(path.to_path_buf()).or_default();
        if flags.truncate {
            data.clear();
        }
        let fd = self.new_fd(path, flags);
        self.ops.push(Op::Open {
            path: path.to_path_buf(),
            flags,
            fd,
        });
        Ok(fd)
    }

    fn read(&mut self, fd: Fd, buf: &mut [u8]) -> io::Result<usize> {
        std::thread::sleep(self.delay);
        let f = self.get(fd)?.clone();
        self.check_direct(&f, buf.as_ptr() as usize, buf.len())?;
        let data = self.files.get(&f.path).map(|v| v.as_slice()).unwrap_or(&[]);
        let start = (f.pos as usize).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        if let Some((p, off)) = &self.corrupt {
            if *p == f.path && *off >= f.pos && *off < f.pos + n as u64 {
                buf[(*off - f.pos) as usize] ^= 0xff;
            }
        }
        self.moved(fd, f.pos, n, |fd, offset, len| Op::Read { fd, offset, len })
    }

    fn write(&mut self, fd: Fd, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(self.delay);
        let f = self.get(fd)?.clone();
        if !f.flags.write {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        self.check_direct(&f, buf.as_ptr() as usize, buf.len())?;
        let len = self.files.get(&f.path).map_or(0, |v| v.len() as u64);
        let end = f.pos + buf.len() as u64;
        let grow = end.saturating_sub(len);
        let mut n = buf.len();
        if let Some(cap) = self.capacity {
            let free = cap.saturating_sub(self.used());
            if grow > free {
                if free == 0 {
                    return Err(io::Error::from_raw_os_error(libc::ENOSPC));
                }
                n = (len.saturating_sub(f.pos) + free) as usize;
            }
        }
        let data = self.files.entry(f.path.clone()).or_default();
        let e = f.pos as usize + n;
        data.resize(data.len().max(e), 0);
        data[f.pos as usize..e].copy_from_slice(&buf[..n]);
        self.moved(fd, f.pos, n, |fd, offset, len| Op::Write {
            fd,
            offset,
            len,
        })
    }

    fn seek(&mut self, fd: Fd, offset: i64, whence: Whence) -> io::Result<u64> {
        let f = self.get(fd)?.clone();
        let len = self.files.get(&f.path).map_or(0, |v| v.len() as i64);
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => f.pos as i64,
            Whence::End => len,
        };
        let to =
            u64::try_from(base + offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        self.get(fd)?.pos = to;
        self.ops.push(Op::Seek { fd, to });
        Ok(to)
    }

    fn fsync(&mut self, fd: Fd) -> io::Result<()> {
        self.get(fd)?;
        self.ops.push(Op::Fsync(fd));
        Ok(())
    }

    fn close(&mut self, fd: Fd) -> io::Result<()> {
        self.fds
            .remove(&fd)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
        self.ops.push(Op::Close(fd));
        Ok(())
    }

    fn fadvise_dontneed(&mut self, fd: Fd) -> io::Result<()> {
        self.get(fd)?;
        self.ops.push(Op::Fadvise(fd));
        Ok(())
    }

    fn drop_caches(&mut self) -> io::Result<()> {
        self.ops.push(Op::DropCaches);
        Ok(())
    }

    fn exists(&mut self, path: &Path) -> bool {
        self.files.contains_key(path)
    }

    fn close_all(&mut self) {
        let fds: Vec<Fd> = self.fds.keys().copied().collect();
        for fd in fds {
            let _ = self.close(fd);
        }
    }

    fn mark(&mut self, m: Mark) {
        self.ops.push(Op::Mark(m));
    }
}
