//! Removing what a failed or interrupted run left of a directory it made, name by name:
//! the frame every engine's sweep shares. The engine decides which names its shape can
//! produce (its `sweep_dir`); this module opens the directory without following a link,
//! leaves it whole when anything is mounted inside, and removes it with `rmdir` at the end,
//! which fails — and is reported — when something the engine did not make is still in it.

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{CStr, CString};
use std::path::Path;

/// What a sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Files removed.
    pub files: u64,
    /// Directories removed (the swept directory included).
    pub dirs: u64,
    /// Entries left in place, each with the reason (paths relative to the swept directory's
    /// parent).
    pub kept: Vec<String>,
}

impl Swept {
    /// `Ok` when nothing was kept, else an error naming (up to five of) the kept entries.
    pub fn into_result(self, root: &Path) -> anyhow::Result<Swept> {
        if self.kept.is_empty() {
            return Ok(self);
        }
        let shown: Vec<&str> = self.kept.iter().take(5).map(String::as_str).collect();
        let more = self.kept.len().saturating_sub(shown.len());
        anyhow::bail!(
            "left {} in place because fslab did not make {}: {}{}; look at them and remove them yourself if they are not needed",
            root.display(),
            if self.kept.len() == 1 { "this entry" } else { "these entries" },
            shown.join("; "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        )
    }

    /// The entries of `dir` (shown as `rel`), as [`entries`] reads them; `None`, with `rel`
    /// kept, when it cannot be read.
    pub fn entries_of(&mut self, dir: &OwnedFd, rel: &str) -> Option<Vec<CString>> {
        entries(dir)
            .map_err(|e| self.kept.push(format!("{rel} (cannot read it: {e})")))
            .ok()
    }

    /// Unlink file `name` of `dir` (shown as `shown`); one gone meanwhile is no error.
    pub fn unlink(&mut self, dir: &OwnedFd, name: &CStr, shown: &str) {
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) => self.files += 1,
            Err(Errno::NOENT) => {}
            Err(e) => self.kept.push(format!("{shown} (unlink: {e})")),
        }
    }

    /// Remove directory `name` of `dir` (shown as `shown`) if it ended empty.
    pub fn rmdir(&mut self, dir: &OwnedFd, name: &CStr, shown: &str) {
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) => self.dirs += 1,
            Err(Errno::NOENT) => {}
            // What it still holds was reported when it was swept.
            Err(Errno::NOTEMPTY | Errno::EXIST) => {}
            Err(e) => self.kept.push(format!("{shown} (rmdir: {e})")),
        }
    }
}

#[cfg(test)]
impl Swept {
    /// Assert that each of `names` is part of an entry the sweep kept (and reported).
    #[track_caller]
    pub fn assert_kept(&self, names: &[&str]) {
        for kept in names {
            assert!(
                self.kept.iter().any(|k| k.contains(kept)),
                "{kept} not reported: {:?}",
                self.kept
            );
        }
    }
}

/// A canonical decimal number (no sign, no leading zero: no engine writes one), and the rest
/// of `s`.
pub fn number(s: &[u8]) -> Option<(u64, &[u8])> {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 20 || (n > 1 && s[0] == b'0') {
        return None;
    }
    let v = std::str::from_utf8(&s[..n]).ok()?.parse().ok()?;
    Some((v, &s[n..]))
}

/// Open directory `name` in `parent`, never through a symbolic link.
pub fn open_dir(parent: &OwnedFd, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The type of entry `name` in `dir` (a link is a link), if it exists.
pub fn file_type(dir: &OwnedFd, name: &CStr) -> Option<FileType> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| FileType::from_raw_mode(st.st_mode))
}

/// The entries of `dir` but `.` and `..`, read whole before anything is removed.
pub fn entries(dir: &OwnedFd) -> rustix::io::Result<Vec<CString>> {
    Ok(rustix::fs::Dir::read_from(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect())
}

/// Sweep directory `name` in `parent`: a missing one is not an error; a file or link in its
/// place, or one with a mount inside, is kept; otherwise `inside` sweeps its contents (the
/// opened directory, the result so far) and the directory itself is removed if it ended empty.
pub fn sweep_root(
    parent: &Path,
    name: &str,
    inside: impl FnOnce(&OwnedFd, &mut Swept) -> std::io::Result<()>,
) -> std::io::Result<Swept> {
    let mut out = Swept::default();
    let base = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let cname = CString::new(name)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in a name"))?;
    match file_type(&base, &cname) {
        None => return Ok(out),
        Some(FileType::Directory) => {}
        Some(_) => {
            out.kept.push(format!("{name} (not a directory)"));
            return Ok(out);
        }
    }
    // Never across a mount: a directory with anything mounted inside is left whole.
    if let Some(m) = super::mount_inside(&parent.join(name)) {
        out.kept.push(format!(
            "{name} (a mount inside it: {}; unmount it first)",
            m.display()
        ));
        return Ok(out);
    }
    let fd = match open_dir(&base, &cname) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(out),
        Err(e) => return Err(e.into()),
    };
    inside(&fd, &mut out)?;
    drop(fd);
    match rustix::fs::unlinkat(&base, &cname, AtFlags::REMOVEDIR) {
        Ok(()) => out.dirs += 1,
        Err(Errno::NOENT) => {}
        Err(Errno::NOTEMPTY | Errno::EXIST) => {
            if out.kept.is_empty() {
                // Made meanwhile by someone else: still not ours to remove.
                out.kept.push(format!("{name} (not empty)"));
            }
        }
        Err(e) => return Err(e.into()),
    }
    Ok(out)
}
