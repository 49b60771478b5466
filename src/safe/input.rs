//! Input files read with a size limit: a study, a fio job file (with what it includes), a
//! dbench loadfile. `/dev/zero` or a runaway pipe given as input costs at most the limit in
//! memory, then fails with one line naming the limit.
//!
//! Only regular files are read. Every input is opened without blocking (`O_NONBLOCK`) and
//! looked at with `fstat` before a byte is read: a FIFO, a device, a socket or a directory is
//! refused in one line, so a FIFO with no writer cannot hang `open(2)` (where a Ctrl-C or
//! SIGTERM was restarted and never ended the wait) and a device is never read as a study.

use std::io::Read;
use std::path::Path;

/// The largest study file fslab reads.
pub const STUDY_LIMIT: u64 = 4 << 20;
/// The largest fio job file fslab reads, its includes counted with it.
pub const JOB_LIMIT: u64 = 4 << 20;
/// The largest dbench loadfile fslab reads (after decompression). dbench's own
/// `client.txt` is 25 MiB.
pub const LOADFILE_LIMIT: u64 = 64 << 20;
/// The largest file of fslab's own it reads back (a run's state file, a tree record).
pub const RECORD_LIMIT: u64 = 1 << 20;

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is not a regular file (a FIFO, a device, a socket, a directory).
    #[error("it is {0}, not a regular file; give a regular file")]
    NotRegular(&'static str),
    /// It is larger than the limit.
    #[error("it is larger than {}, the limit for {what}", mib(*.limit))]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
        /// What kind of input it is ("a study file").
        what: &'static str,
    },
}

/// A limit in words: `4 MiB`.
pub fn mib(limit: u64) -> String {
    if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// Read everything `r` gives, at most `limit` bytes.
pub fn read_all_limited(
    r: impl Read,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    r.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, what });
    }
    Ok(out)
}

/// Read the file at `path`, at most `limit` bytes; `what` names the kind of input in the
/// error ("a study file").
pub fn read_limited(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    read_all_limited(open_regular(path)?, limit, what)
}

/// Open `path` for reading if it is a regular file: opened with `O_NONBLOCK` (a FIFO does
/// not wait for a writer, a terminal does not become the controlling one), then `fstat`.
pub fn open_regular(path: &Path) -> Result<std::fs::File, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let ft = f.metadata()?.file_type();
    if ft.is_file() {
        return Ok(f);
    }
    Err(ReadError::NotRegular(
        kind_of(&ft).unwrap_or("a special file"),
    ))
}

/// What an entry that is not a regular file is, in messages' words (`a directory`, `a
/// FIFO`, …); `None` for a regular file and for any other kind.
pub fn kind_of(ft: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    [
        (ft.is_dir(), "a directory"),
        (ft.is_fifo(), "a FIFO"),
        (ft.is_block_device(), "a block device"),
        (ft.is_char_device(), "a character device"),
        (ft.is_socket(), "a socket"),
        (ft.is_symlink(), "a symbolic link"),
    ]
    .into_iter()
    .find_map(|(is, kind)| is.then_some(kind))
}

/// [`read_limited`] as UTF-8 text.
pub fn read_text_limited(path: &Path, limit: u64, what: &'static str) -> Result<String, ReadError> {
    let bytes = read_limited(path, limit, what)?;
    String::from_utf8(bytes).map_err(|e| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is not text (invalid UTF-8 at byte {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

/// For tests: make a FIFO at `p`, a path the test made.
#[cfg(test)]
pub(crate) fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo of a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_without_a_writer_is_refused_at_once_and_nothing_blocks() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("study.toml");
        mkfifo(&fifo);
        // Without O_NONBLOCK this open would wait for a writer for ever.
        let e = read_limited(&fifo, 1000, "a study file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a FIFO, not a regular file; give a regular file"
        );
        let e = read_limited(t.path(), 1000, "a study file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a directory, not a regular file; give a regular file"
        );
        let e = read_limited(Path::new("/dev/null"), 1000, "a study file").unwrap_err();
        assert!(e.to_string().starts_with("it is a character device"), "{e}");
    }

    #[test]
    fn an_endless_input_stops_at_the_limit() {
        // An endless reader, like /dev/zero: the read stops one byte past the limit.
        let e = read_all_limited(std::io::repeat(0), 1 << 20, "a study file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is larger than 1 MiB, the limit for a study file"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_not() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        std::fs::write(&p, vec![b'a'; 1000]).unwrap();
        assert_eq!(read_limited(&p, 1000, "x").unwrap().len(), 1000);
        assert!(matches!(
            read_limited(&p, 999, "x"),
            Err(ReadError::TooLarge { limit: 999, .. })
        ));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        let e = read_text_limited(&p, 10, "x").unwrap_err().to_string();
        assert!(e.contains("not text"), "{e}");
        assert_eq!(mib(4 << 20), "4 MiB");
    }
}
