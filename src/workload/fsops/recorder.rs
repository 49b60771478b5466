//! [`Recorder`]: a test double that writes every operation down as a line of text and, when
//! asked, keeps a model of the tree so each operation succeeds or fails as the kernel would.

use super::{CreateHow, Kind, Ops};
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::io;

/// Records operations as lines (`mkdir R/a`, `create R/a/f 0 excl`, `stat R/a/f`, …).
///
/// * [`Recorder::default`] is lenient: every operation succeeds, nothing is checked.
/// * [`Recorder::checked`] starts from a set of existing directories and keeps a model of
///   the tree: `mkdir` of an existing name fails with `EEXIST`, `stat` of a missing one with
///   `ENOENT`, `rmdir` of a directory that still holds anything with `ENOTEMPTY`, … — so a
///   test proves not only the order of operations but that the order is possible.
///
/// Directories are their paths (`String`). Opening a directory is recorded as `open P` unless
/// [`Recorder::without_opens`] was used (fdtree's tests leave opens out).
#[derive(Debug, Default)]
pub struct Recorder {
    /// The operations, one line each, in order.
    pub log: Vec<String>,
    /// `None`: lenient. Otherwise every existing entry by path, with its kind and size.
    model: Option<BTreeMap<String, (Kind, u64)>>,
    /// Leave `open` out of the log.
    quiet_opens: bool,
    /// Fail this operation on paths ending in this name with this errno.
    fail: Option<(&'static str, String, i32)>,
}

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

fn join(parent: &str, name: &CStr) -> String {
    format!("{parent}/{}", name.to_string_lossy())
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

impl Recorder {
    /// A recorder with a model, in which `dirs` exist (as directories).
    pub fn checked(dirs: &[&str]) -> Recorder {
        let model = dirs
            .iter()
            .map(|d| (d.to_string(), (Kind::Dir, 0)))
            .collect();
        Recorder {
            model: Some(model),
            ..Recorder::default()
        }
    }

    /// Leave directory opens out of the log.
    pub fn without_opens(mut self) -> Recorder {
        self.quiet_opens = true;
        self
    }

    /// Make operation `op` (`mkdir`, `create`, `stat`, …) fail with `errno` on any path whose
    /// last component is `name`.
    pub fn fail_on(mut self, op: &'static str, name: &str, errno: i32) -> Recorder {
        self.fail = Some((op, name.to_string(), errno));
        self
    }

    /// Every path the model holds, sorted (empty for a lenient recorder).
    pub fn paths(&self) -> Vec<String> {
        self.model
            .as_ref()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The log as one string, a line per operation.
    pub fn text(&self) -> String {
        self.log.join("\n")
    }

    fn injected(&self, op: &str, path: &str) -> io::Result<()> {
        match &self.fail {
            Some((o, name, code)) if *o == op && path.rsplit('/').next() == Some(name) => {
                Err(err(*code))
            }
            _ => Ok(()),
        }
    }

    fn kind(&self, path: &str) -> Option<Kind> {
        self.model.as_ref()?.get(path).map(|e| e.0)
    }

    fn has_children(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.model.as_ref().is_some_and(|m| {
            m.range(prefix.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&prefix))
        })
    }

    /// Check (in a checked recorder) that `path` can be made: its parent is a directory and
    /// it does not exist yet.
    fn can_make(&self, path: &str) -> io::Result<()> {
        if self.model.is_none() {
            return Ok(());
        }
        match self.kind(parent_of(path)) {
            None => return Err(err(libc::ENOENT)),
            Some(Kind::Dir) => {}
            Some(_) => return Err(err(libc::ENOTDIR)),
        }
        match self.kind(path) {
            None => Ok(()),
            Some(_) => Err(err(libc::EEXIST)),
        }
    }

    /// Check that `path` exists with kind `want` (any kind when `None`).
    fn must_be(&self, path: &str, want: Option<Kind>) -> io::Result<Kind> {
        if self.model.is_none() {
            return Ok(want.unwrap_or(Kind::File));
        }
        match (self.kind(path), want) {
            (None, _) => Err(err(libc::ENOENT)),
            (Some(k), None) => Ok(k),
            (Some(k), Some(w)) if k == w => Ok(k),
            (Some(Kind::Dir), Some(_)) => Err(err(libc::EISDIR)),
            (Some(_), Some(_)) => Err(err(libc::ENOTDIR)),
        }
    }

    fn insert(&mut self, path: String, kind: Kind, size: u64) {
        if let Some(m) = self.model.as_mut() {
            m.insert(path, (kind, size));
        }
    }

    fn remove(&mut self, path: &str) {
        if let Some(m) = self.model.as_mut() {
            m.remove(path);
        }
    }
}

impl Ops for Recorder {
    type Dir = String;

    fn mkdir(&mut self, p: &String, n: &CStr) -> io::Result<()> {
        let path = join(p, n);
        self.injected("mkdir", &path)?;
        self.can_make(&path)?;
        self.log.push(format!("mkdir {path}"));
        self.insert(path, Kind::Dir, 0);
        Ok(())
    }

    fn rmdir(&mut self, p: &String, n: &CStr) -> io::Result<()> {
        let path = join(p, n);
        self.injected("rmdir", &path)?;
        if self.model.is_some() {
            if self.must_be(&path, None)? != Kind::Dir {
                return Err(err(libc::ENOTDIR));
            }
            if self.has_children(&path) {
                return Err(err(libc::ENOTEMPTY));
            }
        }
        self.log.push(format!("rmdir {path}"));
        self.remove(&path);
        Ok(())
    }

    fn open_dir(&mut self, p: &String, n: &CStr) -> io::Result<String> {
        let path = join(p, n);
        self.injected("open", &path)?;
        self.must_be(&path, Some(Kind::Dir))?;
        if !self.quiet_opens {
            self.log.push(format!("open {path}"));
        }
        Ok(path)
    }

    fn create(&mut self, p: &String, n: &CStr, how: CreateHow) -> io::Result<()> {
        let path = join(p, n);
        self.injected("create", &path)?;
        match self.can_make(&path) {
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) && !how.exclusive => {
                self.must_be(&path, Some(Kind::File))?;
            }
            r => r?,
        }
        let mut line = format!("create {path} {}", how.bytes);
        if how.fsync && how.bytes > 0 {
            line.push_str(" fsync");
        }
        if how.exclusive {
            line.push_str(" excl");
        }
        self.log.push(line);
        self.insert(path, Kind::File, how.bytes);
        Ok(())
    }

    fn read_file(&mut self, p: &String, n: &CStr, bytes: u64) -> io::Result<u64> {
        let path = join(p, n);
        self.injected("read", &path)?;
        self.must_be(&path, Some(Kind::File))?;
        self.log.push(format!("read {path} {bytes}"));
        let size = match &self.model {
            Some(m) => m.get(&path).map_or(0, |e| e.1),
            None => bytes,
        };
        Ok(bytes.min(size))
    }

    fn stat(&mut self, p: &String, n: &CStr) -> io::Result<Kind> {
        let path = join(p, n);
        self.injected("stat", &path)?;
        let k = self.must_be(&path, None)?;
        self.log.push(format!("stat {path}"));
        Ok(k)
    }

    fn rename(&mut self, fp: &String, f: &CStr, tp: &String, t: &CStr) -> io::Result<()> {
        let (from, to) = (join(fp, f), join(tp, t));
        self.injected("rename", &from)?;
        if self.model.is_some() {
            self.must_be(&from, None)?;
            // Renaming over an existing entry is never what an engine means to do.
            self.can_make(&to)?;
        }
        self.log.push(format!("rename {from} {to}"));
        if let Some(m) = self.model.as_mut() {
            let prefix = format!("{from}/");
            let moved: Vec<String> = m
                .keys()
                .filter(|k| **k == from || k.starts_with(&prefix))
                .cloned()
                .collect();
            for k in moved {
                if let Some(v) = m.remove(&k) {
                    m.insert(format!("{to}{}", &k[from.len()..]), v);
                }
            }
        }
        Ok(())
    }

    fn unlink(&mut self, p: &String, n: &CStr) -> io::Result<()> {
        let path = join(p, n);
        self.injected("unlink", &path)?;
        if self.model.is_some() && self.must_be(&path, None)? == Kind::Dir {
            return Err(err(libc::EISDIR));
        }
        self.log.push(format!("unlink {path}"));
        self.remove(&path);
        Ok(())
    }
}
