//! Input files read with a size limit: a study, a fio job file (with what it includes), a
//! dbench loadfile. `/dev/zero` or a runaway pipe given as input costs at most the limit in
//! memory, then fails with one line naming the limit.

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
    let f = std::fs::File::open(path)?;
    read_all_limited(f, limit, what)
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

#[cfg(test)]
mod tests {
    use super::*;

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
