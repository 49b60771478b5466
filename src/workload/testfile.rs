//! Test files named by the user (IOzone's `-f` and `-F`): what fslab may write over and what
//! it may remove.
//!
//! IOzone opens `-f PATH` with `O_CREAT|O_TRUNC` and unlinks it at the end whatever it was:
//! a device node, a user's document. fslab follows IOzone only for files it creates itself
//! and otherwise refuses or restores:
//!
//! | what is at the path before the run | fslab |
//! |---|---|
//! | nothing | creates it; removed at the end unless `-w` (IOzone) |
//! | a file this process made earlier (a sweep's earlier point, a repetition kept with `-w`) | the same |
//! | an empty regular file | used; truncated back to empty at the end (kept with its data under `-w`), never removed |
//! | a regular file with data | refused, unless `--overwrite`: then IOzone's rules (written over, removed unless `-w`) |
//! | a directory, device node, FIFO, socket, or a symbolic link to one | refused |
//!
//! A symbolic link to a regular file is resolved: the rules apply to the file it points to.
//! At the end a file is removed (or truncated) only if it is still the same inode.

use anyhow::{Context, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What was at a test file's path when the run claimed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior {
    /// Nothing: fslab creates the file.
    Absent,
    /// A file this process created earlier in the same command.
    Ours {
        /// Device number.
        dev: u64,
        /// Inode number.
        ino: u64,
    },
    /// An empty regular file that is not fslab's.
    Empty {
        /// Device number.
        dev: u64,
        /// Inode number.
        ino: u64,
    },
    /// A regular file with data, written over because `--overwrite` was given.
    Overwrite {
        /// Device number.
        dev: u64,
        /// Inode number.
        ino: u64,
    },
}

/// A test file and what was there before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFile {
    /// The path the engine opens (symbolic links resolved).
    pub path: PathBuf,
    /// What was there.
    pub prior: Prior,
}

/// Files this process created and kept (`-w`), by (device, inode): still fslab's own when
/// a later point or repetition of the same command claims them.
static OURS: Mutex<Vec<(PathBuf, u64, u64)>> = Mutex::new(Vec::new());

fn ours(path: &Path, dev: u64, ino: u64) -> bool {
    OURS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .any(|(p, d, i)| p == path && *d == dev && *i == ino)
}

fn remember(path: &Path, dev: u64, ino: u64) {
    let mut g = OURS.lock().unwrap_or_else(|p| p.into_inner());
    g.retain(|(p, _, _)| p != path);
    g.push((path.to_path_buf(), dev, ino));
}

fn forget(path: &Path) {
    OURS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|(p, _, _)| p != path);
}

/// Decide what may be done with the test file at `path` (`flag` names the option in
/// messages). Errors are usage errors naming the fix; nothing is touched.
pub fn claim(path: &Path, overwrite: bool, flag: &str) -> Result<TestFile> {
    let lmd = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(TestFile {
                path: path.to_path_buf(),
                prior: Prior::Absent,
            })
        }
        Err(e) => crate::bail_usage!("{flag} {}: {e}", path.display()),
    };
    let (path, md) = if lmd.file_type().is_symlink() {
        match (std::fs::canonicalize(path), std::fs::metadata(path)) {
            (Ok(real), Ok(md)) => (real, md),
            _ => crate::bail_usage!(
                "{flag} {}: a symbolic link to nothing; give the path of a new or regular file",
                path.display()
            ),
        }
    } else {
        (path.to_path_buf(), lmd)
    };
    let ft = md.file_type();
    if !ft.is_file() {
        crate::bail_usage!(
            "{flag} {}: {}, not a regular file; fslab writes and removes only its own test files, give the path of a new file",
            path.display(),
            crate::safe::input::kind_of(&ft).unwrap_or("not a regular file")
        );
    }
    let (dev, ino) = (md.dev(), md.ino());
    let prior = if ours(&path, dev, ino) {
        Prior::Ours { dev, ino }
    } else if md.len() == 0 {
        Prior::Empty { dev, ino }
    } else if overwrite {
        Prior::Overwrite { dev, ino }
    } else {
        crate::bail_usage!(
            "{flag} {}: the file exists and holds {}; fslab will not write over it: give a new path, or add --overwrite to let the run write over it and remove it at the end as IOzone does (-w keeps it)",
            path.display(),
            crate::units::fmt_bytes(md.len())
        );
    };
    Ok(TestFile { path, prior })
}

/// Whether `path` is still the regular file (`dev`, `ino`).
fn same_file(md: &std::fs::Metadata, dev: u64, ino: u64) -> bool {
    md.file_type().is_file() && md.dev() == dev && md.ino() == ino
}

/// Undo what the run did to a claimed file: remove it, truncate it, or (with `keep`, i.e.
/// `-w` after a successful run) leave it. Only the same inode is ever touched.
pub fn release(tf: &TestFile, keep: bool) -> Result<()> {
    let md = match std::fs::symlink_metadata(&tf.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            forget(&tf.path);
            return Ok(());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot stat {}", tf.path.display())),
    };
    let replaced = || {
        anyhow::anyhow!(
            "left {} alone: it is no longer the test file fslab used (replaced meanwhile)",
            tf.path.display()
        )
    };
    match tf.prior {
        Prior::Absent | Prior::Ours { .. } => {
            let matches = match tf.prior {
                Prior::Ours { dev, ino } => same_file(&md, dev, ino),
                _ => md.file_type().is_file(),
            };
            if !matches {
                forget(&tf.path);
                return Err(replaced());
            }
            if keep {
                remember(&tf.path, md.dev(), md.ino());
                return Ok(());
            }
            forget(&tf.path);
            unlink(&tf.path)
        }
        Prior::Overwrite { dev, ino } | Prior::Empty { dev, ino } => {
            if !same_file(&md, dev, ino) {
                return Err(replaced());
            }
            match (keep, tf.prior) {
                (true, _) => Ok(()),
                (false, Prior::Empty { .. }) => truncate(&tf.path, dev, ino),
                (false, _) => unlink(&tf.path),
            }
        }
    }
}

fn unlink(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(anyhow::anyhow!(
            "could not remove test file {}: {e}",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Truncate the user's (formerly empty) file back to empty, through a descriptor checked to
/// be the same inode.
fn truncate(path: &Path, dev: u64, ino: u64) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot reopen {} to empty it again", path.display()))?;
    let md = f.metadata()?;
    if md.dev() != dev || md.ino() != ino {
        anyhow::bail!("left {} alone: replaced meanwhile", path.display());
    }
    f.set_len(0)
        .with_context(|| format!("cannot empty {} again", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_new_path_is_created_and_removed_unless_kept() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        let tf = claim(&p, false, "-f").unwrap();
        assert_eq!(tf.prior, Prior::Absent);
        std::fs::write(&p, b"data").unwrap();
        release(&tf, true).unwrap();
        assert!(p.exists(), "-w keeps it");
        // Kept by this process: the next point may use it without --overwrite.
        let again = claim(&p, false, "-f").unwrap();
        assert!(matches!(again.prior, Prior::Ours { .. }));
        release(&again, false).unwrap();
        assert!(!p.exists());
        // Forgotten once removed: a user's file there later is the user's.
        std::fs::write(&p, b"user").unwrap();
        assert!(claim(&p, false, "-f").is_err());
    }

    #[test]
    fn a_users_file_with_data_needs_overwrite() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("doc");
        std::fs::write(&p, b"precious").unwrap();
        let e = claim(&p, false, "-f").unwrap_err().to_string();
        assert!(e.contains("--overwrite") && e.contains("8 B"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"precious");
        let tf = claim(&p, true, "-f").unwrap();
        assert!(matches!(tf.prior, Prior::Overwrite { .. }));
        release(&tf, true).unwrap();
        assert!(p.exists(), "-w keeps it");
        release(&tf, false).unwrap();
        assert!(!p.exists(), "IOzone's rule under --overwrite");
    }

    #[test]
    fn an_empty_users_file_is_emptied_again_not_removed() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("empty");
        std::fs::write(&p, b"").unwrap();
        let tf = claim(&p, false, "-f").unwrap();
        assert!(matches!(tf.prior, Prior::Empty { .. }));
        std::fs::write(&p, vec![1u8; 4096]).unwrap();
        release(&tf, false).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
    }

    #[test]
    fn special_files_and_links_to_them_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path inside the test's own directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = claim(&fifo, true, "-f").unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        let e = claim(t.path(), true, "-f").unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let link = t.path().join("link");
        symlink(&fifo, &link).unwrap();
        let e = claim(&link, true, "-f").unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        let dangling = t.path().join("dangling");
        symlink(t.path().join("nothing"), &dangling).unwrap();
        assert!(claim(&dangling, true, "-f").is_err());
        assert!(fifo.exists() && link.exists() && dangling.is_symlink());
    }

    #[test]
    fn a_link_to_a_regular_file_is_resolved_and_a_replaced_file_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::write(&real, b"x").unwrap();
        let link = t.path().join("link");
        symlink(&real, &link).unwrap();
        let tf = claim(&link, true, "-f").unwrap();
        assert_eq!(tf.path, std::fs::canonicalize(&real).unwrap());
        // Replaced by another file between claim and release: not removed.
        // (Made before the old one goes, so the inode number cannot be reused.)
        let other = t.path().join("other");
        std::fs::write(&other, b"someone else's").unwrap();
        std::fs::rename(&other, &real).unwrap();
        assert!(release(&tf, false).is_err());
        assert_eq!(std::fs::read(&real).unwrap(), b"someone else's");
    }
}
