//! One dbench client: executes loadfile operations with system calls and checks each
//! outcome against the loadfile's expected status.
//!
//! The system calls follow dbench's `fileio.c` so the file-system load is the same:
//! every path operation first "resolves" the name like Samba's `pvfs_resolve_name` (a stat,
//! and on a miss a case-insensitive scan of the parent directory; `--no-resolve` turns
//! this off as in dbench), NTCreateX opens with dbench's flags (`O_RDWR`, `O_CREAT` for a
//! create, `O_TRUNC` for overwrite, `mkdir` + `O_DIRECTORY` for directory handles, retry
//! as a directory on `EISDIR`) and fstats the new handle, ReadX/WriteX are `pread`/`pwrite`
//! of the requested size with zero-filled data, Flush is `fsync`, QUERY_FS_INFORMATION is
//! `statvfs`, FIND_FIRST reads the directory, LockX/UnlockX take byte-range locks.
//!
//! Differences, each on purpose: paths are opened relative to a per-client descriptor of
//! the target directory (`openat`), not as absolute strings; Deltree also removes the
//! directories (dbench only unlinks the files under it); byte-range locks are open-file-
//! description locks, so clients that are threads of one process behave like dbench's
//! processes; SET_FILE_INFORMATION sets the times through the handle (`futimens`), as the
//! SMB call does, instead of by name; and every outcome is checked, where dbench checks
//! only Unlink, Rmdir, Rename and WriteX.

use super::loadfile::{Args, Create, Find, HandleId, Loadfile, Op, PathId};
use super::ops::{Expect, OpKind};
use super::sys::{base_of, errno_name, lacks_space, lock, pwrite_or_errno, scan, wild_match};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

/// How a client issues its operations (dbench's `-s`, `-F`, `-S`, `--no-resolve`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClientOptions {
    /// Open files with `O_SYNC` (dbench `-s`/`--sync`).
    pub sync_open: bool,
    /// `fsync` after every write (dbench `-F`/`--fsync`).
    pub fsync: bool,
    /// `fdatasync` the parent directory after unlink, rmdir and rename (dbench `-S`).
    pub sync_dir: bool,
    /// Skip the case-insensitive name resolution (dbench `--no-resolve`).
    pub no_resolve: bool,
}

/// An operation whose outcome differs from the loadfile's, or that could not run.
#[derive(Debug, Clone, thiserror::Error)]
#[error("line {line}: {op} {subject}: {detail}")]
pub struct OpError {
    /// Loadfile line.
    pub line: u32,
    /// The operation.
    pub op: OpKind,
    /// The path (relative to the target) or the handle the operation worked on.
    pub subject: String,
    /// What went wrong, with the expected status.
    pub detail: String,
    /// The errno, if the operation failed.
    pub errno: Option<i32>,
}

/// How a directory is opened.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

struct OpenFile {
    fd: OwnedFd,
    line: u32,
}

/// One client's state: its rendered paths, its open handles and its buffers.
pub struct Client<'a> {
    lf: &'a Loadfile,
    root: PathBuf,
    dir: OwnedFd,
    paths: Vec<CString>,
    files: Vec<Option<OpenFile>>,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    dirbuf: Vec<MaybeUninit<u8>>,
    opts: ClientOptions,
}

impl<'a> Client<'a> {
    /// Client number `id` (0-based) working under `root`.
    pub fn new(
        id: usize,
        lf: &'a Loadfile,
        root: &Path,
        opts: ClientOptions,
    ) -> std::io::Result<Client<'a>> {
        let dir = rustix::fs::open(root, DIR_FLAGS, Mode::empty())?;
        let paths = lf
            .paths
            .iter()
            .map(|p| CString::new(p.for_client(id)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let io = lf.max_io as usize;
        Ok(Client {
            lf,
            root: root.to_path_buf(),
            dir,
            paths,
            files: (0..lf.handles.len()).map(|_| None).collect(),
            rbuf: vec![0; io],
            wbuf: vec![0; io],
            dirbuf: vec![MaybeUninit::uninit(); 32 * 1024],
            opts,
        })
    }

    /// The target directory the client works in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `p` for this client, for messages.
    pub fn path_text(&self, p: PathId) -> String {
        String::from_utf8_lossy(self.paths[p as usize].as_bytes()).into_owned()
    }

    /// Close every open handle (end of the run).
    pub fn close_all(&mut self) {
        self.files.iter_mut().for_each(|f| *f = None);
    }

    /// The directory holding `p`, opened; none for the target itself or when it cannot be
    /// opened.
    fn open_parent(&self, p: PathId) -> Option<OwnedFd> {
        let parent = self.lf.paths[p as usize].parent?;
        rustix::fs::openat(&self.dir, self.cpath(parent), DIR_FLAGS, Mode::empty()).ok()
    }

    /// dbench's `resolve_name`: does the name exist, exactly or in another case?
    fn resolve(&mut self, p: PathId) -> bool {
        if rustix::fs::statat(&self.dir, self.cpath(p), AtFlags::empty()).is_ok() {
            return true;
        }
        if self.opts.no_resolve {
            return false;
        }
        let Some(fd) = self.open_parent(p) else {
            return false;
        };
        let base = base_of(self.paths[p as usize].as_bytes());
        scan(fd, &mut self.dirbuf, |name| name.eq_ignore_ascii_case(base))
    }

    /// The path of `p` for this client, for system calls.
    fn cpath(&self, p: PathId) -> &std::ffi::CStr {
        self.paths[p as usize].as_c_str()
    }

    /// With `-S`, `fdatasync` the directory holding `p`.
    fn sync_parent(&self, p: PathId) {
        if let Some(fd) = self.opts.sync_dir.then(|| self.open_parent(p)).flatten() {
            // Like dbench, a failed directory sync is not an operation failure.
            let _ = rustix::fs::fdatasync(&fd);
        }
    }

    fn fail(&self, op: &Op, subject: String, detail: String, errno: Option<i32>) -> OpError {
        OpError {
            line: op.line,
            op: op.kind,
            subject,
            detail,
            errno,
        }
    }

    fn status(&self, op: &Op) -> &str {
        &self.lf.statuses[op.status as usize]
    }

    /// Compare an outcome with the expected status.
    fn check(
        &self,
        op: &Op,
        subject: impl Fn() -> String,
        r: Result<(), Errno>,
    ) -> Result<(), OpError> {
        let err = match (op.expect, r) {
            (Expect::Any, _) | (Expect::Success, Ok(())) => return Ok(()),
            (Expect::Failure(c), Err(e)) if c.accepts(e.raw_os_error()) => return Ok(()),
            (Expect::Failure(_), Ok(())) => None,
            (_, Err(e)) => Some(e.raw_os_error()),
        };
        let detail = match err {
            None => format!("expected {}, but it succeeded", self.status(op)),
            Some(e) => format!("expected {}, got {}", self.status(op), errno_name(e)),
        };
        Err(self.fail(op, subject(), detail, err))
    }

    fn handle_fd(&self, op: &Op, h: HandleId) -> Result<&OwnedFd, OpError> {
        match &self.files[h as usize] {
            Some(f) => Ok(&f.fd),
            None => Err(self.fail(
                op,
                format!("handle {}", self.lf.handles[h as usize]),
                "the handle is not open (its NTCreateX failed or it was closed)".into(),
                None,
            )),
        }
    }

    /// Execute one operation; returns the bytes it counts towards the throughput.
    pub fn exec(&mut self, op: &Op) -> Result<u64, OpError> {
        let hname = |h: HandleId| format!("handle {}", self.lf.handles[h as usize]);
        match (op.kind, op.args) {
            (OpKind::NtCreateX, Args::Create(c)) => self.create(op, c)?,
            (OpKind::Close, Args::Handle(h)) => {
                self.handle_fd(op, h)?;
                self.files[h as usize] = None;
            }
            (OpKind::Rename, Args::Rename(from, to)) => {
                self.resolve(from);
                self.resolve(to);
                let r =
                    rustix::fs::renameat(&self.dir, self.cpath(from), &self.dir, self.cpath(to));
                let what = || format!("{} -> {}", self.path_text(from), self.path_text(to));
                self.check(op, what, r)?;
                self.sync_parent(to);
            }
            (OpKind::Unlink | OpKind::Rmdir, Args::Path(p)) => {
                self.resolve(p);
                let flags = if op.kind == OpKind::Rmdir {
                    AtFlags::REMOVEDIR
                } else {
                    AtFlags::empty()
                };
                let r = rustix::fs::unlinkat(&self.dir, self.cpath(p), flags);
                self.check(op, || self.path_text(p), r)?;
                self.sync_parent(p);
            }
            (OpKind::Mkdir, Args::Path(p)) => {
                self.resolve(p);
                let mode = Mode::from_raw_mode(0o777);
                let r = match rustix::fs::mkdirat(&self.dir, self.cpath(p), mode) {
                    // dbench ignores mkdir's result; the directory being there is what counts.
                    Err(Errno::EXIST) => Ok(()),
                    r => r,
                };
                self.check(op, || self.path_text(p), r)?;
            }
            (OpKind::Deltree, Args::Path(p)) => {
                let full = self.root.join(self.path_text(p));
                let r = match std::fs::remove_dir_all(&full) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(
                        Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO)),
                    ),
                    _ => Ok(()),
                };
                self.check(op, || self.path_text(p), r)?;
            }
            (OpKind::QueryPathInformation, Args::Path(p)) => {
                let r = self.resolve(p).then_some(()).ok_or(Errno::NOENT);
                self.check(op, || self.path_text(p), r)?;
            }
            (OpKind::QueryFileInformation, Args::Handle(h)) => {
                let r = rustix::fs::fstat(self.handle_fd(op, h)?).map(|_| ());
                self.check(op, || hname(h), r)?;
            }
            (OpKind::SetFileInformation, Args::Handle(h)) => {
                let fd = self.handle_fd(op, h)?;
                let r = rustix::fs::fstat(fd).and_then(|st| {
                    let ts = |s: i64| rustix::fs::Timespec {
                        tv_sec: s,
                        tv_nsec: 0,
                    };
                    rustix::fs::futimens(
                        fd,
                        &rustix::fs::Timestamps {
                            last_access: ts(st.st_atime as i64 - 10),
                            last_modification: ts(st.st_mtime as i64 - 12),
                        },
                    )
                });
                self.check(op, || hname(h), r)?;
            }
            (OpKind::QueryFsInformation, _) => {
                let r = rustix::fs::fstatvfs(&self.dir).map(|_| ());
                self.check(op, || ".".into(), r)?;
            }
            (OpKind::FindFirst, Args::Find(f)) => {
                let r = self.find(f).then_some(()).ok_or(Errno::NOENT);
                self.check(op, || self.path_text(f.pattern), r)?;
            }
            (OpKind::WriteX, Args::Io(io)) => {
                let fd = self.handle_fd(op, io.handle)?;
                let r = pwrite_or_errno(fd, &self.wbuf[..io.size as usize], io.offset);
                if let Some(n) = r.ok().filter(|&n| n != io.ret as usize) {
                    // Still short without an errno: a full file system all the same.
                    let short = n < io.size as usize;
                    let full = short && lacks_space(fd, u64::from(io.size) - n as u64);
                    let said = format!("wrote {n} bytes, the loadfile expects {}", io.ret);
                    let errno = full.then_some(libc::ENOSPC);
                    return Err(self.fail(op, hname(io.handle), said, errno));
                }
                self.check(op, || hname(io.handle), r.map(|_| ()))?;
                if self.opts.fsync {
                    let r = rustix::fs::fsync(self.handle_fd(op, io.handle)?);
                    self.check(op, || hname(io.handle), r)?;
                }
                return Ok(u64::from(io.size));
            }
            (OpKind::ReadX, Args::Io(io)) => {
                self.handle_fd(op, io.handle)?;
                let Some(f) = &self.files[io.handle as usize] else {
                    return Ok(0);
                };
                let r = rustix::io::pread(&f.fd, &mut self.rbuf[..io.size as usize], io.offset);
                let success = op.expect == Expect::Success;
                if let Some(n) = r.ok().filter(|&n| n != io.ret as usize && success) {
                    let said = format!(
                        "read {n} bytes at offset {}, the loadfile expects {}",
                        io.offset, io.ret
                    );
                    return Err(self.fail(op, hname(io.handle), said, None));
                }
                self.check(op, || hname(io.handle), r.map(|_| ()))?;
                return Ok(u64::from(io.size));
            }
            (OpKind::LockX | OpKind::UnlockX, Args::Lock(l)) => {
                let fd = self.handle_fd(op, l.handle)?;
                let r = lock(fd, op.kind == OpKind::LockX, l.offset, l.len);
                self.check(op, || hname(l.handle), r)?;
            }
            (OpKind::Flush, Args::Handle(h)) => {
                let r = rustix::fs::fsync(self.handle_fd(op, h)?);
                self.check(op, || hname(h), r)?;
            }
            (kind, args) => {
                // The parser builds each kind with its own argument shape.
                let said = format!("{kind} with mismatched arguments");
                return Err(self.fail(op, format!("{args:?}"), said, None));
            }
        }
        Ok(0)
    }

    fn create(&mut self, op: &Op, c: Create) -> Result<(), OpError> {
        const FILE_DIRECTORY_FILE: u32 = 0x1;
        self.resolve(c.path);
        let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
        if self.opts.sync_open {
            flags |= OFlags::SYNC;
        }
        // NT dispositions: 0 supersede, 1 open, 2 create, 3 open-if, 4 overwrite, 5 overwrite-if.
        match c.disposition {
            0 | 4 | 5 => flags |= OFlags::CREATE | OFlags::TRUNC,
            2 | 3 => flags |= OFlags::CREATE,
            _ => {}
        }
        let cpath = self.cpath(c.path);
        if c.options & FILE_DIRECTORY_FILE != 0 {
            // dbench: "not strictly correct, but close enough".
            let _ = rustix::fs::mkdirat(&self.dir, cpath, Mode::from_raw_mode(0o700));
            flags = DIR_FLAGS;
        }
        let mode = Mode::from_raw_mode(0o600);
        let r = match rustix::fs::openat(&self.dir, cpath, flags, mode) {
            Err(Errno::ISDIR) => rustix::fs::openat(&self.dir, cpath, DIR_FLAGS, mode),
            r => r,
        };
        match r {
            Ok(fd) => {
                if matches!(op.expect, Expect::Failure(_)) {
                    drop(fd);
                    return self.check(op, || self.path_text(c.path), Ok(()));
                }
                let _ = rustix::fs::fstat(&fd);
                if let Some(old) = &self.files[c.handle as usize] {
                    let said = format!(
                        "handle {} is still open from line {}",
                        self.lf.handles[c.handle as usize], old.line
                    );
                    return Err(self.fail(op, self.path_text(c.path), said, None));
                }
                self.files[c.handle as usize] = Some(OpenFile { fd, line: op.line });
                Ok(())
            }
            Err(e) => self.check(op, || self.path_text(c.path), Err(e)),
        }
    }

    fn find(&mut self, f: Find) -> bool {
        let found = self.resolve(f.pattern);
        if !f.wildcard {
            return found;
        }
        let Some(fd) = self.open_parent(f.pattern) else {
            return false;
        };
        let pat = base_of(self.paths[f.pattern as usize].as_bytes()).to_vec();
        let want = f.maxcnt.max(1);
        let mut matches = 0u32;
        scan(fd, &mut self.dirbuf, |name| {
            matches += u32::from(wild_match(&pat, name));
            matches >= want
        });
        matches > 0
    }
}
