//! System-call helpers of the dbench client: directory scans with a reusable buffer,
//! SMB wildcard matching, byte-range locks, writes that report a full file system by its
//! errno, errno names for messages.

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use std::mem::MaybeUninit;

/// The name of errno `$e` among the `libc` constants listed, each written once.
macro_rules! errno_named {
    ($e:expr; $($name:ident)+) => {
        match $e {
            $(libc::$name => Some(stringify!($name)),)+
            _ => None,
        }
    };
}

/// The symbolic name of common errnos, for messages.
pub fn errno_name(e: i32) -> String {
    let named = errno_named!(e; ENOENT EEXIST ENOTDIR EISDIR ENOTEMPTY EACCES EPERM ENOSPC EDQUOT
        EROFS EIO EBADF EINVAL ENAMETOOLONG EMFILE ENFILE ENOLCK EDEADLK);
    let Some(n) = named else {
        return format!("errno {e} ({})", std::io::Error::from_raw_os_error(e));
    };
    let text = std::io::Error::from_raw_os_error(e).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    format!("{n} ({text})")
}

/// `pwrite` of `buf` at `offset`. A short write means the file system could take only
/// part of it; the rest is written once more, so a full file system answers with its errno
/// (ENOSPC, EDQUOT) instead of a bare byte count. Returns the bytes written in all.
pub fn pwrite_or_errno(fd: impl AsFd, buf: &[u8], offset: u64) -> Result<usize, Errno> {
    let n = rustix::io::pwrite(&fd, buf, offset)?;
    if n == 0 || n >= buf.len() {
        return Ok(n);
    }
    let rest = rustix::io::pwrite(&fd, &buf[n..], offset + n as u64)?;
    Ok(n + rest)
}

/// Whether the file system of `fd` has less than `need` bytes left for unprivileged
/// writers (statvfs), i.e. a short write there is the disk being full.
pub fn lacks_space(fd: impl AsFd, need: u64) -> bool {
    rustix::fs::fstatvfs(fd).is_ok_and(|st| st.f_bavail.saturating_mul(st.f_frsize) < need)
}

/// The last component of a rendered path (trailing `/` ignored).
pub fn base_of(p: &[u8]) -> &[u8] {
    let p = p.strip_suffix(b"/").unwrap_or(p);
    p.rsplit(|&b| b == b'/').next().unwrap_or(p)
}

/// Case-insensitive match with SMB wildcards: `*` and `<` any run, `?` and `>` one
/// character (`>` also none).
pub fn wild_match(pat: &[u8], name: &[u8]) -> bool {
    match pat.split_first() {
        None => name.is_empty(),
        Some((b'*' | b'<', rest)) => (0..=name.len()).any(|i| wild_match(rest, &name[i..])),
        Some((b'?', rest)) => !name.is_empty() && wild_match(rest, &name[1..]),
        Some((b'>', rest)) => {
            wild_match(rest, name) || (!name.is_empty() && wild_match(rest, &name[1..]))
        }
        Some((c, rest)) => {
            name.first().is_some_and(|n| n.eq_ignore_ascii_case(c)) && wild_match(rest, &name[1..])
        }
    }
}

/// Read directory `fd` and call `f` on each name until it returns true. Returns whether it
/// did.
pub fn scan(fd: OwnedFd, buf: &mut [MaybeUninit<u8>], mut f: impl FnMut(&[u8]) -> bool) -> bool {
    let mut dir = rustix::fs::RawDir::new(fd, buf);
    // A read error ends the scan like the end of the directory.
    while let Some(Ok(e)) = dir.next() {
        if f(e.file_name().to_bytes()) {
            return true;
        }
    }
    false
}

/// Take or release a write lock on a byte range with an open-file-description lock.
pub fn lock(fd: impl AsFd, take: bool, offset: u64, len: u64) -> Result<(), Errno> {
    use rustix::fd::AsRawFd;
    // SAFETY: an all-zero flock is a valid value; the fields we need are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if take { libc::F_WRLCK } else { libc::F_UNLCK } as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = offset as libc::off_t;
    fl.l_len = len as libc::off_t;
    fl.l_pid = 0;
    // SAFETY: the descriptor is open for the duration of the call and `fl` is a valid flock.
    let r = unsafe { libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_OFD_SETLKW, &fl) };
    if r == -1 {
        Err(Errno::from_io_error(&std::io::Error::last_os_error()).unwrap_or(Errno::IO))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wild_match(b"REPORT.*", b"report.001"));
        assert!(!wild_match(b"REPORT.*", b"notes"));
        assert!(wild_match(b"*", b"."));
        assert!(wild_match(b"<.JNK", b"abc.jnk"));
        assert!(!wild_match(b"<.JNK", b"abc.doc"));
        assert!(wild_match(b"a?c", b"ABC"));
        assert!(!wild_match(b"a?c", b"ac"));
        assert!(wild_match(b"a>c", b"ac"));
        assert!(wild_match(b"a>c", b"abc"));
    }

    #[test]
    fn base_names() {
        assert_eq!(base_of(b"clients/client0/x.doc"), b"x.doc");
        assert_eq!(base_of(b"clients/client0/"), b"client0");
        assert_eq!(base_of(b"top"), b"top");
    }

    #[test]
    fn lack_of_space_is_measured_on_the_file_system_of_the_handle() {
        let f = tempfile::tempfile().unwrap();
        assert!(lacks_space(&f, u64::MAX));
        assert!(!lacks_space(&f, 0));
        assert_eq!(pwrite_or_errno(&f, &[7u8; 100], 4096), Ok(100));
        assert_eq!(f.metadata().unwrap().len(), 4196);
    }

    #[test]
    fn errno_names_are_readable() {
        assert_eq!(
            errno_name(libc::ENOENT),
            "ENOENT (No such file or directory)"
        );
        assert!(errno_name(9999).starts_with("errno 9999"));
    }
}
