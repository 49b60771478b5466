//! What an mdtest run made, kept so that nothing it did not make is ever removed.
//!
//! [`Keeper`] is what the engine tells about the test directories (`test-dir.<j>-0`) it
//! makes and removes. On the real file system it writes a record `.fslab-mdtest.<testdir>`
//! beside each one in `-d` — *before* the `mkdir`, completed with the directory's device and inode numbers
//! right after it, updated with the number of files once they are known (a stonewall makes
//! fewer), and removed with the directory. A run that works on an existing test directory
//! (no `-C`: `-T`, `-E`, `-r`) first proves it is fslab's and of the same shape: a plain
//! `test-dir.<j>-0` name, a real directory (not a symbolic link), a record naming it whose
//! device and inode match and whose shape equals this run's, with no mount inside it.
//! Otherwise it is refused and nothing is touched. A record without an inode (a run killed
//! between the `mkdir` and completing the record) covers only a directory born within
//! [`CREATE_WINDOW`](crate::safe::beneath::CREATE_WINDOW) after the record was written.

use super::layout::Layout;
use super::params::MdtestParams;
use crate::workload::provenance::{self, Purpose};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

provenance::impl_record!(Record, name: testdir, prefix: ".fslab-mdtest.", kind: "mdtest", what: "mdtest record");

/// Where the record of `testdir` in `dir` lives.
pub fn path(dir: &Path, testdir: &str) -> PathBuf {
    provenance::path::<Record>(dir, testdir)
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

/// Read the record of `testdir` in `dir`, if there is one.
pub fn read(dir: &Path, testdir: &str) -> Result<Option<Record>> {
    provenance::read(dir, testdir)
}

/// Bookkeeping of the test directories a run makes (rank 0 calls it): which are live and,
/// on the real file system, their records in `-d` (none in tests and with the null backend).
#[derive(Debug, Default)]
pub struct Keeper {
    /// `-d` and the shape of the test directories recorded there.
    records: Option<(PathBuf, Shape)>,
    live: Vec<String>,
}

impl Keeper {
    /// Records in `dir` for test directories of `shape`.
    pub fn new(dir: &Path, shape: Shape) -> Keeper {
        Keeper {
            records: Some((dir.to_path_buf(), shape)),
            live: Vec::new(),
        }
    }

    /// `testdir` is about to be made (refused if it or its record exists).
    pub fn begin(&mut self, testdir: &str) -> Result<()> {
        let Some((dir, shape)) = &self.records else {
            return Ok(());
        };
        let target = dir.join(testdir);
        if target.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} already exists (left by an earlier run?); remove it with a remove-only run (-r) if fslab made it, or choose another -d",
                target.display()
            );
        }
        let rec = path(dir, testdir);
        if rec.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} exists: an earlier run's record for a test directory that is gone; remove the record, or choose another -d",
                rec.display()
            );
        }
        provenance::write(
            dir,
            &Record {
                kind: "mdtest".into(),
                testdir: testdir.to_string(),
                fslab_version: env!("CARGO_PKG_VERSION").into(),
                host: crate::sysinfo::short_hostname(),
                pid: std::process::id(),
                created_at: crate::units::timestamp_now(),
                shape: *shape,
                files: None,
                dev: None,
                ino: None,
            },
        )
    }

    /// Making `testdir` failed: forget what `begin` wrote.
    pub fn abandon(&mut self, testdir: &str) -> Result<()> {
        match &self.records {
            Some((dir, _)) => provenance::remove::<Record>(dir, testdir),
            None => Ok(()),
        }
    }

    /// `testdir` was made.
    pub fn made(&mut self, testdir: &str) -> Result<()> {
        self.live.push(testdir.to_string());
        match &self.records {
            Some((dir, _)) => provenance::complete::<Record>(dir, testdir),
            None => Ok(()),
        }
    }

    /// A run without creation will use `testdir`: prove it is this kind of run's, and
    /// return the files per rank it holds (when recorded).
    pub fn verify(&mut self, testdir: &str) -> Result<Option<u64>> {
        let files = match &self.records {
            Some((dir, shape)) => verify(dir, testdir, shape)?.files,
            None => None,
        };
        self.live.push(testdir.to_string());
        Ok(files)
    }

    /// The iteration ended: `testdir` holds `files` files per rank, or is `gone`.
    pub fn finished(&mut self, testdir: &str, files: u64, gone: bool) -> Result<()> {
        if gone {
            self.live.retain(|l| l != testdir);
        }
        match (&self.records, gone) {
            (None, _) => Ok(()),
            (Some((dir, _)), true) => provenance::remove::<Record>(dir, testdir),
            (Some((dir, _)), false) => {
                provenance::update(dir, testdir, |r: &mut Record| r.files = Some(files))
            }
        }
    }

    /// Test directories this run made or proved that still exist (what a failed run may
    /// sweep).
    pub fn owned(&self) -> Vec<String> {
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
    let purpose = Purpose {
        verb: "touch",
        hint: "; a run without -C needs the test directory of an earlier fslab -C run in -d",
    };
    let rec: Record = provenance::prove(dir, testdir, purpose)?;
    if rec.shape != *shape {
        crate::bail_usage!(
            "{} was made with {}, this run has {}; run with the flags it was made with",
            dir.join(testdir).display(),
            rec.shape.flags(),
            shape.flags()
        );
    }
    Ok(rec)
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
