//! Removals and unmounts that cannot leave the directory they are meant for.
//!
//! Paths are resolved beneath a directory fslab owns, component by component, never through a
//! symbolic link, `.` or `..`, and never across a mount: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV` where the kernel has it (Linux 5.6), else an
//! `O_NOFOLLOW` walk that compares every directory's mount with the root's. The last step
//! acts on a name inside an open directory (`unlinkat`, an `O_PATH` descriptor for
//! `umount`), so nothing renamed meanwhile can redirect it. An entry is removed only when it
//! is of the kind recorded and, when recorded, the same device and inode.

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, StatxFlags};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A directory fslab owns, opened once; everything below is reached through it.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
    mnt: Option<u64>,
}

/// Device and inode numbers of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ident {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl Ident {
    /// The identity `st` gives.
    fn of(st: &rustix::fs::Stat) -> Ident {
        Ident {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

/// What is expected at a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory, removed only when empty.
    EmptyDir,
    /// A directory, removed with everything in it (symbolic links removed, never followed;
    /// a mount inside stops the removal).
    Tree,
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Open the directory `name` in `dir` (`rustix::fs::CWD` for a path), not following a
/// symbolic link.
fn open_dir_at(dir: impl AsFd, name: impl rustix::path::Arg) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, dir_flags(), Mode::empty())
}

/// The mount id of an open file (`statx` `STATX_MNT_ID`, Linux 5.8), if the kernel says.
pub fn mount_id(fd: BorrowedFd<'_>) -> Option<u64> {
    let st = rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID).ok()?;
    (st.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(st.stx_mnt_id)
}

/// Whether `name` in `dir` is a different mount than `dir` itself (a mount point there).
fn crosses(dir: BorrowedFd<'_>, child: BorrowedFd<'_>, dir_mnt: Option<u64>) -> bool {
    match (dir_mnt, mount_id(child)) {
        (Some(a), Some(b)) => a != b,
        // No mount ids: a different device is another mount (a bind mount of the same file
        // system is then not seen; openat2's RESOLVE_NO_XDEV sees it where it exists).
        _ => match (rustix::fs::fstat(dir), rustix::fs::fstat(child)) {
            (Ok(a), Ok(b)) => a.st_dev != b.st_dev,
            _ => true,
        },
    }
}

impl Root {
    /// Open the directory at `path` (absolute, already canonical: fslab's own directory).
    pub fn open(path: &Path) -> std::io::Result<Root> {
        let fd = open_dir_at(rustix::fs::CWD, path)?;
        Ok(Root::at(fd, path))
    }

    /// The root open as `fd` at `path`, with its mount id.
    fn at(fd: OwnedFd, path: &Path) -> Root {
        Root {
            mnt: mount_id(fd.as_fd()),
            fd,
            path: path.to_path_buf(),
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The components of `p` below this root: `p` must start with the root's path and go on
    /// with plain names only (no `.`, `..` or root). An error says why not.
    pub fn components(&self, p: &Path) -> Result<Vec<OsString>, String> {
        let rest = p.strip_prefix(&self.path).map_err(|_| {
            format!(
                "{} is not inside {}; left alone",
                p.display(),
                self.path.display()
            )
        })?;
        // `Path::components` drops `.` silently: refuse those too.
        let dots = p
            .as_os_str()
            .as_bytes()
            .split(|b| *b == b'/')
            .any(|c| c == b"." || c == b"..");
        let out: Option<Vec<OsString>> = rest
            .components()
            .map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                _ => None,
            })
            .collect();
        match out {
            Some(out) if !dots => Ok(out),
            _ => Err(format!(
                "{} leaves {} through '..' or '.'; left alone",
                p.display(),
                self.path.display()
            )),
        }
    }

    /// Open the directory `comps` below the root without following a symbolic link, `..` or
    /// crossing a mount. An empty `comps` is the root itself.
    pub fn open_dir(&self, comps: &[OsString]) -> std::io::Result<OwnedFd> {
        if comps.is_empty() {
            return Ok(open_dir_at(&self.fd, ".")?);
        }
        let joined = comps
            .iter()
            .map(|c| c.as_bytes())
            .collect::<Vec<_>>()
            .join(&b'/');
        let rel = OsStr::from_bytes(&joined);
        let resolve = ResolveFlags::BENEATH
            | ResolveFlags::NO_SYMLINKS
            | ResolveFlags::NO_XDEV
            | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(self.fd.as_fd(), rel, dir_flags(), Mode::empty(), resolve) {
            Err(rustix::io::Errno::NOSYS) => self.walk(comps),
            r => Ok(r?),
        }
    }

    /// The `O_NOFOLLOW` walk for kernels without `openat2`.
    fn walk(&self, comps: &[OsString]) -> std::io::Result<OwnedFd> {
        let mut cur = open_dir_at(self.fd.as_fd(), ".")?;
        for c in comps {
            let next = open_dir_at(cur.as_fd(), c.as_os_str())?;
            if crosses(self.fd.as_fd(), next.as_fd(), self.mnt) {
                return Err(std::io::Error::from_raw_os_error(libc::EXDEV));
            }
            cur = next;
        }
        Ok(cur)
    }

    /// The directory `p` (an absolute path below this root) as a root of its own, opened
    /// beneath this one.
    pub fn sub(&self, p: &Path) -> Result<Root, String> {
        let comps = self.components(p)?;
        let fd = self.open_dir(&comps).map_err(|e| on_the_way(p, e))?;
        Ok(Root::at(fd, p))
    }

    /// The file system mounted at `p` (below this root, reached without a link or `..`) as a
    /// root of its own: the one mount a caller may cross, because it made it (a tmpfs of its
    /// own). An error when nothing is mounted there.
    pub fn mount_root(&self, p: &Path) -> Result<Root, String> {
        let (dir, name) = self.parent_of(p)?;
        let fd = open_dir_at(dir.as_fd(), name.as_os_str())
            .map_err(|e| format!("{}: {e}; left alone", p.display()))?;
        if !crosses(dir.as_fd(), fd.as_fd(), mount_id(dir.as_fd())) {
            return Err(format!("{}: nothing is mounted there", p.display()));
        }
        Ok(Root::at(fd, p))
    }

    /// [`Root::parent_of`], with `None` when a directory on the way does not exist (so
    /// nothing is at `p`).
    pub fn parent_if_any(&self, p: &Path) -> Result<Option<(OwnedFd, OsString)>, String> {
        match self.open_parent(p)? {
            (Ok(dir), name) => Ok(Some((dir, name))),
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            (Err(e), _) => Err(on_the_way(p, e)),
        }
    }

    /// The open parent directory of `p` (below the root) and `p`'s last name.
    pub fn parent_of(&self, p: &Path) -> Result<(OwnedFd, OsString), String> {
        let (dir, name) = self.open_parent(p)?;
        Ok((dir.map_err(|e| on_the_way(p, e))?, name))
    }

    /// The parent of `p` (below the root, not the root itself) as it opened, and `p`'s last
    /// name.
    fn open_parent(&self, p: &Path) -> Result<(std::io::Result<OwnedFd>, OsString), String> {
        let mut comps = self.components(p)?;
        let Some(name) = comps.pop() else {
            return Err(format!("{} is the root itself; left alone", p.display()));
        };
        Ok((self.open_dir(&comps), name))
    }
}

/// Why `p` could not be reached beneath a root.
fn on_the_way(p: &Path, e: std::io::Error) -> String {
    format!(
        "{}: {e} (a symbolic link, '..' or a mount on the way); left alone",
        p.display()
    )
}

/// The identity of `name` in `dir`, not following a symbolic link; `None` when absent.
pub fn ident_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
) -> std::io::Result<Option<(Ident, rustix::fs::FileType)>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some((
            Ident::of(&st),
            rustix::fs::FileType::from_raw_mode(st.st_mode),
        ))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// When `name` in `dir` came into being (statx birth time: seconds and nanoseconds since the
/// epoch), if the file system records it.
pub fn birth_at(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<Option<(i64, u32)>> {
    let st = rustix::fs::statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BTIME)?;
    Ok((st.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec)))
}

/// How long after a run recorded its intent to make an entry the entry may come into being
/// and still be proven the run's, when the run was killed before recording the entry's
/// identity (device and inode): one window for every kind of record fslab keeps.
pub const CREATE_WINDOW: std::time::Duration = std::time::Duration::from_secs(5);

/// How much earlier than its record an entry may be born and still count: record times are
/// kept to the millisecond, file-system clocks are coarse (a tick).
pub const BIRTH_SLACK: std::time::Duration = std::time::Duration::from_millis(100);

/// Check that `name` in `dir` came into being within [`CREATE_WINDOW`] after `intent` (the
/// record of the intent to make it, nanoseconds since the epoch; [`BIRTH_SLACK`] before it
/// counts): whatever was made earlier, or after the run ended, is someone else's. By its
/// statx birth time: the proof that an entry whose identity was never recorded is the one a
/// run made in that window. An error says why not.
pub fn born_after_intent(dir: BorrowedFd<'_>, name: &OsStr, intent: i128) -> Result<(), String> {
    let from = intent - BIRTH_SLACK.as_nanos() as i128;
    let to = intent + CREATE_WINDOW.as_nanos() as i128;
    let (s, ns) = birth_at(dir, name)
        .map_err(|e| e.to_string())?
        .ok_or("the file system does not say when it was made, so fslab cannot prove it made it")?;
    let born = i128::from(s) * 1_000_000_000 + i128::from(ns);
    if born < from {
        return Err("it existed before the run meant to make it".into());
    }
    if born > to {
        return Err(
            "it was made after the run that meant to make it had to have made it (after it ended)"
                .into(),
        );
    }
    Ok(())
}

/// What [`remove_at`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// Nothing was there.
    Absent,
    /// Removed.
    Done,
}

/// Remove `name` in `dir` if it is of `kind` and, when `expect` is given, that very entry.
/// An error says why it was left.
pub fn remove_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    kind: Kind,
    expect: Option<Ident>,
) -> Result<Removed, String> {
    let Some((id, ft)) = ident_at(dir, name).map_err(|e| e.to_string())? else {
        return Ok(Removed::Absent);
    };
    let want_dir = kind != Kind::File;
    if want_dir && ft != rustix::fs::FileType::Directory {
        return Err("not a directory (fslab made a directory there)".into());
    }
    if !want_dir && ft != rustix::fs::FileType::RegularFile {
        return Err("not a regular file (fslab made a regular file there)".into());
    }
    if let Some(e) = expect {
        if e != id {
            return Err(
                "not the entry fslab made (its device and inode differ from the record)".into(),
            );
        }
    }
    match kind {
        Kind::File => rustix::fs::unlinkat(dir, name, AtFlags::empty()),
        Kind::EmptyDir => rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR),
        Kind::Tree => {
            let sub = open_dir_at(dir, name).map_err(|e| e.to_string())?;
            let mnt = mount_id(sub.as_fd());
            if crosses(dir, sub.as_fd(), mount_id(dir)) {
                return Err("a mount point; left alone".into());
            }
            empty_tree(sub.as_fd(), mnt)?;
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
        }
    }
    .map_err(|e| e.to_string())?;
    Ok(Removed::Done)
}

/// Descriptors [`empty_tree`] keeps open on its way down; deeper, an ancestor is let go and
/// found again through `..` (checked by device and inode) on the way back up.
const KEEP_OPEN: usize = 64;

/// The identity of an open file.
fn ident_of(fd: BorrowedFd<'_>) -> std::io::Result<Ident> {
    Ok(Ident::of(&rustix::fs::fstat(fd)?))
}

/// One directory on [`empty_tree`]'s way down: its descriptor (while it is kept), its
/// identity, and the subdirectories still to empty (`None` until it is listed).
struct Level {
    fd: Option<OwnedFd>,
    id: Ident,
    pending: Option<Vec<OsString>>,
}

/// Remove everything inside the open directory `dir` (whose mount id is `mnt`): symbolic
/// links are removed, never followed; a directory on another mount stops the removal.
///
/// Iterative, with a bounded number of descriptors: a tree of any depth (a job that made one
/// 30,000 levels deep) costs neither stack nor descriptors, only its names.
fn empty_tree(dir: BorrowedFd<'_>, mnt: Option<u64>) -> Result<(), String> {
    let io = |e: &dyn std::fmt::Display, path: &[OsString]| {
        let shown: Vec<String> = path
            .iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        if shown.is_empty() {
            e.to_string()
        } else {
            format!("{}: {e}", shown.join("/"))
        }
    };
    let top = open_dir_at(dir, c".").map_err(|e| e.to_string())?;
    let id = ident_of(top.as_fd()).map_err(|e| e.to_string())?;
    let mut levels = vec![Level {
        fd: Some(top),
        id,
        pending: None,
    }];
    // The names from `dir` down to the directory being emptied, for messages.
    let mut path: Vec<OsString> = Vec::new();
    loop {
        let depth = levels.len();
        let Some(level) = levels.last_mut() else {
            return Ok(());
        };
        let Some(fd) = level.fd.as_ref().map(|f| f.as_fd()) else {
            return Err(io(&"lost its descriptor", &path));
        };
        if level.pending.is_none() {
            level.pending = Some(clear_entries(fd).map_err(|(n, e)| {
                let mut p = path.clone();
                p.extend(n);
                io(&e, &p)
            })?);
        }
        if let Some(name) = level.pending.as_mut().and_then(Vec::pop) {
            let sub = match open_dir_at(fd, name.as_os_str()) {
                Ok(s) => s,
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => {
                    path.push(name);
                    return Err(io(&e, &path));
                }
            };
            if crosses(fd, sub.as_fd(), mnt) {
                path.push(name);
                return Err(io(
                    &"a mount point inside; nothing on it was removed",
                    &path,
                ));
            }
            let sub_id = ident_of(sub.as_fd()).map_err(|e| io(&e, &path))?;
            if depth > KEEP_OPEN {
                level.fd = None;
            }
            levels.push(Level {
                fd: Some(sub),
                id: sub_id,
                pending: None,
            });
            path.push(name);
            continue;
        }
        // Emptied. The root level is `dir` itself, which the caller removes.
        if depth == 1 {
            return Ok(());
        }
        let Some(done) = levels.pop() else {
            return Ok(());
        };
        let name = path.pop().unwrap_or_default();
        let Some(parent) = levels.last_mut() else {
            return Ok(());
        };
        if parent.fd.is_none() {
            let Some(child) = done.fd.as_ref() else {
                return Err(io(&"lost its descriptor", &path));
            };
            let up = open_dir_at(child, c"..").map_err(|e| io(&e, &path))?;
            if ident_of(up.as_fd()).map_err(|e| io(&e, &path))? != parent.id {
                return Err(io(&"moved while fslab removed it; left alone", &path));
            }
            parent.fd = Some(up);
        }
        let Some(pfd) = parent.fd.as_ref().map(|f| f.as_fd()) else {
            return Err(io(&"lost its descriptor", &path));
        };
        // The name must still be the directory just emptied.
        let here = ident_at(pfd, &name).map_err(|e| io(&e, &path))?;
        if here.map(|h| h.0) != Some(done.id) {
            path.push(name);
            return Err(io(&"replaced while fslab removed it; left alone", &path));
        }
        drop(done);
        rustix::fs::unlinkat(pfd, name.as_os_str(), AtFlags::REMOVEDIR).map_err(|e| {
            let mut p = path.clone();
            p.push(name.clone());
            io(&e, &p)
        })?;
    }
}

/// Unlink every entry of the open directory `dir` that is not a directory; return the names
/// of its subdirectories. An error names the entry it is about.
fn clear_entries(dir: BorrowedFd<'_>) -> Result<Vec<OsString>, (Option<OsString>, String)> {
    let names: Vec<(OsString, rustix::fs::FileType)> = {
        let d = rustix::fs::Dir::read_from(dir).map_err(|e| (None, e.to_string()))?;
        let mut v = Vec::new();
        for e in d {
            let e = e.map_err(|e| (None, e.to_string()))?;
            let n = e.file_name().to_bytes();
            if n == b"." || n == b".." {
                continue;
            }
            v.push((OsStr::from_bytes(n).to_os_string(), e.file_type()));
        }
        v
    };
    let mut dirs = Vec::new();
    for (n, ft) in names {
        let is_dir = match ft {
            rustix::fs::FileType::Unknown => matches!(
                ident_at(dir, &n),
                Ok(Some((_, rustix::fs::FileType::Directory)))
            ),
            t => t == rustix::fs::FileType::Directory,
        };
        if is_dir {
            dirs.push(n);
        } else {
            rustix::fs::unlinkat(dir, n.as_os_str(), AtFlags::empty())
                .map_err(|e| (Some(n.clone()), e.to_string()))?;
        }
    }
    // Popped from the end: the first listed is emptied first.
    dirs.reverse();
    Ok(dirs)
}

/// The line of `/proc/self/mountinfo` of mount `id`: (mount point, file-system type, source).
pub fn mount_info(id: u64) -> Option<(PathBuf, String, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(' ');
        if f.next()?.parse::<u64>().ok()? != id {
            return None;
        }
        let point = f.nth(3)?;
        let rest = l.split(" - ").nth(1)?;
        let mut r = rest.split(' ');
        let fstype = r.next()?.to_string();
        let source = r.next()?.to_string();
        Some((PathBuf::from(unescape(point)), fstype, unescape(&source)))
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        // A byte's escape: \000 to \377.
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d[0] <= b'3' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let (b'\\', Some(d)) = (b[i], octal) {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What is mounted at `name` in `dir`, if it is a mount point: (mount id, file-system type,
/// source). `None` when nothing is mounted there (or it is absent).
pub fn mounted_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
) -> std::io::Result<Option<(u64, String, String)>> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::DIRECTORY,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let (Some(here), Some(parent)) = (mount_id(fd.as_fd()), mount_id(dir)) else {
        return Err(std::io::Error::other(
            "this kernel does not give mount ids (statx STATX_MNT_ID, Linux 5.8)",
        ));
    };
    if here == parent {
        return Ok(None);
    }
    Ok(mount_info(here).map(|(_, t, s)| (here, t, s)))
}

/// Unmount what is mounted at `name` in `dir` (the mount, not whatever a path might lead to
/// by then): through the open parent (`/proc/self/fd/<dir>/<name>`, the last step not
/// following a symbolic link). The parent descriptor pins only the parent's mount; a
/// descriptor of the mount itself would keep it busy.
pub fn unmount_at(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    if name.as_bytes().contains(&b'/') || name == ".." || name == "." {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a plain name",
        ));
    }
    let mut path = format!("/proc/self/fd/{}/", dir.as_raw_fd()).into_bytes();
    path.extend_from_slice(name.as_bytes());
    let path = std::ffi::CString::new(path).map_err(std::io::Error::other)?;
    // SAFETY: a NUL-terminated path; umount2 has no other preconditions.
    if unsafe { libc::umount2(path.as_ptr(), libc::UMOUNT_NOFOLLOW) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
