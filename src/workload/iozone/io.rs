//! The I/O layer under the IOzone engine: the system calls IOzone makes (`creat`, `open`,
//! `read`, `write`, `lseek`, `fsync`, `close`, `posix_fadvise`), behind a trait so the
//! same test code runs against the real file system ([`RealIo`], plain libc calls, nothing in
//! between) or against [`RecordingIo`], an in-memory file system that logs every call with its
//! offset so unit tests can check IOzone's access patterns without root or strace.
//!
//! The recording layer is in `recording.rs`. The engine is generic over [`Io`], so the real path is monomorphised: a `read` in the timed
//! loop is one libc call, exactly as in IOzone.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A file descriptor (the real one, or a recording layer's number).
pub type Fd = i32;

/// How `open` is called. Read-only when `write` is false.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenFlags {
    /// `O_RDWR` instead of `O_RDONLY`.
    pub write: bool,
    /// `O_CREAT` (mode 0640).
    pub create: bool,
    /// `O_TRUNC`.
    pub truncate: bool,
    /// `O_SYNC` (IOzone `-o`).
    pub sync: bool,
    /// `O_DIRECT` (IOzone `-I`).
    pub direct: bool,
}

impl OpenFlags {
    /// `O_RDWR | O_CREAT | O_TRUNC`: create or truncate (`creat`, `fopen(path, "w+")`).
    pub const CREATE: OpenFlags = OpenFlags {
        write: true,
        create: true,
        truncate: true,
        sync: false,
        direct: false,
    };

    /// `O_RDONLY`, plus `O_DIRECT` if asked.
    pub fn read_only(direct: bool) -> Self {
        OpenFlags {
            direct,
            ..Default::default()
        }
    }

    fn to_libc(self) -> libc::c_int {
        [
            (self.write, libc::O_RDWR),
            (self.create, libc::O_CREAT),
            (self.truncate, libc::O_TRUNC),
            (self.sync, libc::O_SYNC),
            (self.direct, libc::O_DIRECT),
        ]
        .into_iter()
        .filter(|&(on, _)| on)
        .fold(libc::O_RDONLY | libc::O_CLOEXEC, |f, (_, flag)| f | flag)
    }
}

/// Where `lseek` counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whence {
    /// `SEEK_SET`.
    Set,
    /// `SEEK_CUR`.
    Cur,
    /// `SEEK_END`.
    End,
}

/// Markers the engine drops into the call stream (the recording layer logs them; the real
/// layer ignores them), so tests can see which calls fell inside the timed interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The clock was read to start a timed interval.
    TimerStart,
    /// The clock was read to end it.
    TimerStop,
}

/// The system calls the IOzone tests make.
pub trait Io {
    /// `creat(path, 0640)`: create or truncate.
    fn creat(&mut self, path: &Path) -> io::Result<Fd>;
    /// `open(path, flags, 0640)`.
    fn open(&mut self, path: &Path, flags: OpenFlags) -> io::Result<Fd>;
    /// One `read(2)`; may return fewer bytes than asked.
    fn read(&mut self, fd: Fd, buf: &mut [u8]) -> io::Result<usize>;
    /// One `write(2)`; may write fewer bytes than asked.
    fn write(&mut self, fd: Fd, buf: &[u8]) -> io::Result<usize>;
    /// `lseek(2)`; returns the new offset.
    fn seek(&mut self, fd: Fd, offset: i64, whence: Whence) -> io::Result<u64>;
    /// `fsync(2)`.
    fn fsync(&mut self, fd: Fd) -> io::Result<()>;
    /// `close(2)`.
    fn close(&mut self, fd: Fd) -> io::Result<()>;
    /// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`.
    fn fadvise_dontneed(&mut self, fd: Fd) -> io::Result<()>;
    /// `sync(); echo 3 > /proc/sys/vm/drop_caches` (root).
    fn drop_caches(&mut self) -> io::Result<()>;
    /// Whether `path` exists (IOzone's `check_filename`).
    fn exists(&mut self, path: &Path) -> bool;
    /// Close every descriptor still open (after an error part-way through a test).
    fn close_all(&mut self);
    /// A marker in the call stream (see [`Mark`]).
    #[inline]
    fn mark(&mut self, _m: Mark) {}
}

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "path contains a NUL byte; choose another file name",
        )
    })
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A `read`/`write` return value: the bytes moved, or the errno as an error.
fn byte_count(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// The real file system: one libc call per operation, nothing else in the timed path.
#[derive(Debug, Default)]
pub struct RealIo {
    open_fds: Vec<Fd>,
}

impl RealIo {
    /// `open(path, flags, 0640)`, the descriptor kept for [`Io::close_all`].
    fn open_with(&mut self, path: &Path, flags: libc::c_int) -> io::Result<Fd> {
        let p = cpath(path)?;
        // SAFETY: p is a valid NUL-terminated string.
        let fd = unsafe { libc::open(p.as_ptr(), flags, 0o640 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        self.open_fds.push(fd);
        Ok(fd)
    }
}

impl Io for RealIo {
    fn creat(&mut self, path: &Path) -> io::Result<Fd> {
        let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC | libc::O_CLOEXEC;
        self.open_with(path, flags)
    }

    fn open(&mut self, path: &Path, flags: OpenFlags) -> io::Result<Fd> {
        self.open_with(path, flags.to_libc())
    }

    #[inline]
    fn read(&mut self, fd: Fd, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid for writes of buf.len() bytes.
        byte_count(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
    }

    #[inline]
    fn write(&mut self, fd: Fd, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: buf is valid for reads of buf.len() bytes.
        byte_count(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) })
    }

    #[inline]
    fn seek(&mut self, fd: Fd, offset: i64, whence: Whence) -> io::Result<u64> {
        let w = match whence {
            Whence::Set => libc::SEEK_SET,
            Whence::Cur => libc::SEEK_CUR,
            Whence::End => libc::SEEK_END,
        };
        // SAFETY: plain syscall on an integer descriptor.
        let r = unsafe { libc::lseek(fd, offset, w) };
        u64::try_from(r).map_err(|_| io::Error::last_os_error())
    }

    fn fsync(&mut self, fd: Fd) -> io::Result<()> {
        // SAFETY: plain syscall on an integer descriptor.
        check(unsafe { libc::fsync(fd) })
    }

    fn close(&mut self, fd: Fd) -> io::Result<()> {
        self.open_fds.retain(|&f| f != fd);
        // SAFETY: the descriptor was opened by this layer and is closed once.
        check(unsafe { libc::close(fd) })
    }

    fn fadvise_dontneed(&mut self, fd: Fd) -> io::Result<()> {
        // SAFETY: plain syscall on an integer descriptor.
        let rc = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    fn drop_caches(&mut self) -> io::Result<()> {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        std::fs::write("/proc/sys/vm/drop_caches", b"3\n")
    }

    fn exists(&mut self, path: &Path) -> bool {
        path.exists()
    }

    fn close_all(&mut self) {
        for fd in self.open_fds.drain(..) {
            // SAFETY: each descriptor in the list is open and owned by this layer.
            unsafe { libc::close(fd) };
        }
    }
}

/// A heap buffer for records: aligned for O_DIRECT and touched once, so no page fault lands
/// in a timed loop. With `huge` (`--huge-buffer`, see `IozoneParams::huge_buffer`) the buffer
/// is 2 MiB-aligned and backed by a transparent huge page where the kernel allows it
/// (`MADV_HUGEPAGE`). Without it the buffer is 4 KiB-aligned and its pages follow the
/// system's THP policy, as IOzone's do.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    layout: std::alloc::Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like Vec<u8>.
unsafe impl Send for AlignedBuf {}

/// Alignment of every I/O buffer (the largest logical block size O_DIRECT asks for).
pub const BUF_ALIGN: usize = 4096;
/// Alignment and size granule of huge-page buffers (`--huge-buffer`).
pub const HUGE_ALIGN: usize = 2 << 20;

impl AlignedBuf {
    /// `len` bytes filled with `fill` (every page written, so they are real pages, not the
    /// shared zero page).
    pub fn new(len: usize, fill: u8, huge: bool) -> AlignedBuf {
        let align = if huge { HUGE_ALIGN } else { BUF_ALIGN };
        let size = len.max(1).div_ceil(align) * align;
        let Ok(layout) = std::alloc::Layout::from_size_align(size, align) else {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<u8>())
        };
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        if align == HUGE_ALIGN {
            // Advisory only: without THP the buffer stays in 4 KiB pages.
            // SAFETY: [raw, raw+size) is a mapping this process owns.
            unsafe { libc::madvise(raw.cast(), size, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: raw points to `size` writable bytes.
        unsafe { std::ptr::write_bytes(raw, fill, size) };
        AlignedBuf { ptr, len, layout }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len initialised bytes, uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}
