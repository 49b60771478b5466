//! What an mdtest run made, kept so that nothing it did not make is ever removed.
//!
//! [`Keeper`] is what the engine tells about the test directories (`test-dir.<j>-0`) it
//! makes and removes. [`FsKeeper`] writes a record `.fslab-mdtest.<testdir>` beside each one
//! in `-d` — *before* the `mkdir`, completed with the directory's device and inode numbers
//! right after it, updated with the number of files once they are known (a stonewall makes
//! fewer), and removed with the directory. A run that works on an existing test directory
//! (no `-C`: `-T`, `-E`, `-r`) first proves it is fslab's and of the same shape: a plain
//! `test-dir.<j>-0` name, a real directory (not a symbolic link), a record naming it whose
//! device and inode match and whose shape equals this run's, with no mount inside it.
//! Otherwise it is refused and nothing is touched. A record without an inode (a run killed
//! between the `mkdir` and completing the record) covers only a directory born within
//! [`CREATE_WINDOW`] after the record was written.

use super::layout::Layout;
use super::params::MdtestParams;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How long after writing a record a run may make the test directory and still have a
/// record without an inode accepted for it (see the module header).
pub const CREATE_WINDOW: std::time::Duration = std::time::Duration::from_secs(5);

/// Bookkeeping of the test directories a run makes (rank 0 calls it).
pub trait Keeper {
    /// `testdir` is about to be made (refused if it or its record exists).
    fn begin(&mut self, testdir: &str) -> Result<()>;
    /// Making `testdir` failed: forget what `begin` wrote.
    fn abandon(&mut self, testdir: &str) -> Result<()>;
    /// `testdir` was made.
    fn made(&mut self, testdir: &str) -> Result<()>;
    /// A run without creation will use `testdir`: prove it is this kind of run's, and
    /// return the files per rank it holds (when recorded).
    fn verify(&mut self, testdir: &str) -> Result<Option<u64>>;
    /// The iteration ended: `testdir` holds `files` files per rank, or is `gone`.
    fn finished(&mut self, testdir: &str, files: u64, gone: bool) -> Result<()>;
    /// Test directories this run made or proved that still exist (what a failed run may
    /// sweep).
    fn owned(&self) -> Vec<String>;
}

/// No records (tests, the null backend); remembers which test directories are live.
#[derive(Debug, Default)]
pub struct NoRecords {
    live: Vec<String>,
}

impl Keeper for NoRecords {
    fn begin(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn abandon(&mut self, _: &str) -> Result<()> {
        Ok(())
    }
    fn made(&mut self, t: &str) -> Result<()> {
        self.live.push(t.to_string());
        Ok(())
    }
    fn verify(&mut self, t: &str) -> Result<Option<u64>> {
        self.live.push(t.to_string());
        Ok(None)
    }
    fn finished(&mut self, t: &str, _: u64, gone: bool) -> Result<()> {
        if gone {
            self.live.retain(|l| l != t);
        }
        Ok(())
    }
    fn owned(&self) -> Vec<String> {
        self.live.clone()
    }
}

/// The shape of a test directory: what names it can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// The tree and its items per rank.
    pub layout: Layout,
    /// `-u`.
    pub unique_dir: bool,
    /// Directory items made.
    pub dirs: bool,
    /// File items made.
    pub files: bool,
    /// Ranks of the run.
    pub ranks: u32,
}

impl Shape {
    /// The shape of a run of `p` (validated: `lay` is its layout) with `ranks` ranks.
    pub fn new(p: &MdtestParams, lay: Layout, ranks: u32) -> Shape {
        Shape {
            layout: lay,
            unique_dir: p.unique_dir,
            dirs: p.does_dirs(),
            files: p.does_files(),
            ranks,
        }
    }

    /// The shape as mdtest flags, for messages (`-I 10 -z 1 -b 2 -u -F`, 4 ranks).
    pub fn flags(&self) -> String {
        let l = &self.layout;
        let mut s = format!("-I {} -z {} -b {}", l.items_per_dir, l.depth, l.branching);
        for (on, f) in [
            (l.leaf_only, " -L"),
            (self.unique_dir, " -u"),
            (!self.dirs, " -F"),
            (!self.files, " -D"),
        ] {
            if on {
                s.push_str(f);
            }
        }
        format!("{s} on {} rank(s)", self.ranks)
    }
}

/// The record beside one test directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Always `"mdtest"`.
    pub kind: String,
    /// The test directory's name in `-d`.
    pub testdir: String,
    /// fslab's version that made it.
    pub fslab_version: String,
    /// Host that made it.
    pub host: String,
    /// Process that made it.
    pub pid: u32,
    /// When the record was written (RFC 3339).
    pub created_at: String,
    /// What it can hold.
    pub shape: Shape,
    /// Files per rank, once known.
    pub files: Option<u64>,
    /// Device number of the directory, once made.
    pub dev: Option<u64>,
    /// Inode number of the directory, once made.
    pub ino: Option<u64>,
}

/// Where the record of `testdir` in `dir` lives.
pub fn path(dir: &Path, testdir: &str) -> PathBuf {
    dir.join(format!(".fslab-mdtest.{testdir}"))
}

/// Is `name` a test directory's name (`test-dir.<j>-0`, canonical decimal)?
pub fn is_test_dir_name(name: &str) -> bool {
    name.strip_prefix("test-dir.")
        .and_then(|r| r.strip_suffix("-0"))
        .is_some_and(|j| {
            !j.is_empty()
                && j.bytes().all(|b| b.is_ascii_digit())
                && (j == "0" || !j.starts_with('0'))
        })
}

/// Write (or replace) a record, atomically. The temporary file is made exclusively (a file or
/// link left at its name is removed, never written through).
fn write(dir: &Path, rec: &Record) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dest = path(dir, &rec.testdir);
    let tmp = dir.join(format!(".fslab-mdtest.{}.tmp", rec.testdir));
    let text = serde_json::to_string_pretty(rec)?;
    let _ = std::fs::remove_file(&tmp);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .and_then(|mut f| f.write_all((text + "\n").as_bytes()))
        .and_then(|_| std::fs::rename(&tmp, &dest))
        .with_context(|| format!("cannot write the test directory record {}", dest.display()))
}

/// Read the record of `testdir` in `dir`, if there is one.
pub fn read(dir: &Path, testdir: &str) -> Result<Option<Record>> {
    let p = path(dir, testdir);
    let limit = crate::safe::input::RECORD_LIMIT;
    match crate::safe::input::read_text_limited(&p, limit, "an mdtest record") {
        Ok(text) => {
            let rec: Record = serde_json::from_str(&text)
                .with_context(|| format!("{} is not an fslab mdtest record", p.display()))?;
            if rec.kind != "mdtest" || rec.testdir != testdir {
                anyhow::bail!(
                    "{} records another directory ({})",
                    p.display(),
                    rec.testdir
                );
            }
            Ok(Some(rec))
        }
        Err(crate::safe::input::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
    }
}

/// Records in `-d` (the real file system's [`Keeper`]).
pub struct FsKeeper {
    dir: PathBuf,
    shape: Shape,
    live: Vec<String>,
}

impl FsKeeper {
    /// Records in `dir` for test directories of `shape`.
    pub fn new(dir: &Path, shape: Shape) -> FsKeeper {
        FsKeeper {
            dir: dir.to_path_buf(),
            shape,
            live: Vec::new(),
        }
    }

    fn update(&self, testdir: &str, f: impl FnOnce(&mut Record)) -> Result<()> {
        let Some(mut rec) = read(&self.dir, testdir)? else {
            return Ok(());
        };
        f(&mut rec);
        write(&self.dir, &rec)
    }
}

fn remove_record(dir: &Path, testdir: &str) -> Result<()> {
    let p = path(dir, testdir);
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", p.display()))
        }
        _ => Ok(()),
    }
}

impl Keeper for FsKeeper {
    fn begin(&mut self, testdir: &str) -> Result<()> {
        let target = self.dir.join(testdir);
        if target.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} already exists (left by an earlier run?); remove it with a remove-only run (-r) if fslab made it, or choose another -d",
                target.display()
            );
        }
        let rec = path(&self.dir, testdir);
        if rec.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} exists: an earlier run's record for a test directory that is gone; remove the record, or choose another -d",
                rec.display()
            );
        }
        write(
            &self.dir,
            &Record {
                kind: "mdtest".into(),
                testdir: testdir.to_string(),
                fslab_version: env!("CARGO_PKG_VERSION").into(),
                host: crate::sysinfo::short_hostname(),
                pid: std::process::id(),
                created_at: crate::units::timestamp_now(),
                shape: self.shape,
                files: None,
                dev: None,
                ino: None,
            },
        )
    }

    fn abandon(&mut self, testdir: &str) -> Result<()> {
        remove_record(&self.dir, testdir)
    }

    fn made(&mut self, testdir: &str) -> Result<()> {
        self.live.push(testdir.to_string());
        let md = std::fs::symlink_metadata(self.dir.join(testdir))
            .with_context(|| format!("cannot stat {testdir}"))?;
        self.update(testdir, |r| {
            r.dev = Some(md.dev());
            r.ino = Some(md.ino());
        })
    }

    fn verify(&mut self, testdir: &str) -> Result<Option<u64>> {
        let rec = verify(&self.dir, testdir, &self.shape)?;
        self.live.push(testdir.to_string());
        Ok(rec.files)
    }

    fn finished(&mut self, testdir: &str, files: u64, gone: bool) -> Result<()> {
        if gone {
            self.live.retain(|l| l != testdir);
            return remove_record(&self.dir, testdir);
        }
        self.update(testdir, |r| r.files = Some(files))
    }

    fn owned(&self) -> Vec<String> {
        self.live.clone()
    }
}

/// Prove that `dir/testdir` is a test directory fslab made with `shape` (see the module
/// header). Returns its record; a refusal is a usage error naming the reason.
pub fn verify(dir: &Path, testdir: &str, shape: &Shape) -> Result<Record> {
    if !is_test_dir_name(testdir) {
        crate::bail_usage!(
            "{testdir} is not an mdtest test directory name (test-dir.<iteration>-0); fslab removes only what it made"
        );
    }
    let p = dir.join(testdir);
    let md = match std::fs::symlink_metadata(&p) {
        Ok(m) => m,
        Err(e) => crate::bail_usage!(
            "cannot use {}: {e}; a run without -C needs the test directory of an earlier fslab -C run in -d",
            p.display()
        ),
    };
    if !md.file_type().is_dir() {
        crate::bail_usage!(
            "{} is not a directory (a symbolic link or a file); fslab works only on test directories it made",
            p.display()
        );
    }
    let rec = match read(dir, testdir) {
        Ok(Some(r)) => r,
        Ok(None) => crate::bail_usage!(
            "{} has no fslab record ({} is missing), so fslab cannot tell it made it and will not touch it; remove it yourself if it is not needed",
            p.display(),
            path(dir, testdir).display()
        ),
        Err(e) => {
            return Err(crate::error::usage(format!(
                "{e:#}; fslab will not touch {}",
                p.display()
            )))
        }
    };
    match (rec.dev, rec.ino) {
        (Some(dev), Some(ino)) => {
            if dev != md.dev() || ino != md.ino() {
                crate::bail_usage!(
                    "{} is not the directory fslab made (its inode differs from the record {}); fslab will not touch it",
                    p.display(),
                    path(dir, testdir).display()
                );
            }
        }
        _ => born_after_record(dir, testdir, &rec)?,
    }
    if let Some(m) = mount_inside(&p) {
        crate::bail_usage!(
            "{} has a mount inside it ({}); fslab never works across a mount: unmount it first",
            p.display(),
            m.display()
        );
    }
    if rec.shape != *shape {
        crate::bail_usage!(
            "{} was made with {}, this run has {}; run with the flags it was made with",
            p.display(),
            rec.shape.flags(),
            shape.flags()
        );
    }
    Ok(rec)
}

/// A record without an inode is accepted only for a test directory that came into being
/// (statx birth time) within [`CREATE_WINDOW`] after the record was written: the run that
/// wrote it was killed between making the directory and completing the record. A directory
/// made before the record, or later, is someone else's.
fn born_after_record(dir: &Path, testdir: &str, rec: &Record) -> Result<()> {
    let refuse = |why: &str| {
        crate::error::usage(format!(
            "{}'s record {} has no inode and {why}, so fslab cannot tell it made the directory and will not touch it; remove it yourself if it is not needed",
            dir.join(testdir).display(),
            path(dir, testdir).display()
        ))
    };
    let at = chrono::DateTime::parse_from_rfc3339(&rec.created_at)
        .ok()
        .and_then(|t| t.timestamp_nanos_opt())
        .ok_or_else(|| refuse("an unreadable time"))?;
    let fd = rustix::fs::open(
        dir,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| refuse(&e.to_string()))?;
    // Record times are kept to the millisecond, file-system clocks are coarse (a tick).
    let from = i128::from(at) - 100_000_000;
    let to = i128::from(at) + CREATE_WINDOW.as_nanos() as i128;
    let name = std::ffi::OsStr::new(testdir);
    crate::safe::beneath::born_between(std::os::fd::AsFd::as_fd(&fd), name, from, to)
        .map_err(|e| refuse(&e))
}

/// A mount point at or below `dir`, if any (`/proc/self/mountinfo`).
pub fn mount_inside(dir: &Path) -> Option<PathBuf> {
    let canon = std::fs::canonicalize(dir).ok()?;
    crate::sysinfo::mounts()
        .into_iter()
        .map(|m| m.mount_point)
        .find(|m| m.starts_with(&canon))
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
