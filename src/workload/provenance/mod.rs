//! Provenance: how an engine proves a directory is one it made before it removes (or works
//! in) it, shared by every engine that leaves trees (fdtree's roots, the metadata engines'
//! test directories) — so the rule is written once and a new engine cannot get it subtly
//! wrong.
//!
//! An engine writes a small JSON record beside each directory it is about to make (never
//! inside, so the tree is exactly the tool's), *before* the `mkdir`; completes it with the
//! directory's device and inode numbers right after; and removes it with the directory. A
//! later run (or `fslab cleanup`) accepts a directory only when ([`prove`]):
//!
//! * it is a real directory (not a symbolic link, not a file);
//! * a record of the engine's kind names it, and the record's device and inode equal the
//!   directory's (it was not removed and made again by someone else);
//! * or the record has no inode (the run was killed between the `mkdir` and completing it)
//!   and the directory came into being (statx birth time) within [`CREATE_WINDOW`] after the
//!   record was written — a directory made before the record, or later, is someone else's;
//! * and nothing is mounted at or below it: fslab never works across a mount.
//!
//! What a proven directory may hold is the engine's own question (its names, [`sweep`]).

pub mod sweep;

use anyhow::{Context, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::safe::beneath::CREATE_WINDOW;

/// A record an engine keeps beside each directory it makes.
pub trait Record: Serialize + DeserializeOwned {
    /// The record's file name before the directory's name (`.fslab-tree.`).
    const PREFIX: &'static str;
    /// The engine that writes it, the record's `kind` (`fdtree`).
    const KIND: &'static str;
    /// What the record is called in messages (`tree record`).
    const WHAT: &'static str;
    /// Its `kind` field.
    fn kind(&self) -> &str;
    /// The directory's name beside the record.
    fn name(&self) -> &str;
    /// When the record was written (RFC 3339).
    fn created_at(&self) -> &str;
    /// The directory's device and inode numbers, once made.
    fn made(&self) -> Option<(u64, u64)>;
    /// Record the directory's device and inode numbers.
    fn set_made(&mut self, dev: u64, ino: u64);
}

/// Implement [`Record`] for a struct with the fields `kind`, `created_at`, `dev` and `ino`
/// (`Option<u64>`) and the directory's name in the field given as `name`.
macro_rules! impl_record {
    ($t:ty, name: $name:ident, prefix: $prefix:literal, kind: $kind:literal, what: $what:literal) => {
        impl $crate::workload::provenance::Record for $t {
            const PREFIX: &'static str = $prefix;
            const KIND: &'static str = $kind;
            const WHAT: &'static str = $what;
            fn kind(&self) -> &str {
                &self.kind
            }
            fn name(&self) -> &str {
                &self.$name
            }
            fn created_at(&self) -> &str {
                &self.created_at
            }
            fn made(&self) -> Option<(u64, u64)> {
                self.dev.zip(self.ino)
            }
            fn set_made(&mut self, dev: u64, ino: u64) {
                (self.dev, self.ino) = (Some(dev), Some(ino));
            }
        }
    };
}
pub(crate) use impl_record;

/// Where the record of directory `name` in `dir` lives.
pub fn path<R: Record>(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}{name}", R::PREFIX))
}

/// Write (or replace) a record, atomically. The temporary file is made exclusively (a file or
/// link left at its name is removed, never written through).
pub fn write<R: Record>(dir: &Path, rec: &R) -> Result<()> {
    use std::io::Write;
    let dest = path::<R>(dir, rec.name());
    let tmp = dir.join(format!("{}{}.tmp", R::PREFIX, rec.name()));
    let text = serde_json::to_string_pretty(rec)?;
    let _ = std::fs::remove_file(&tmp);
    crate::safe::create_new(&tmp, 0o644)
        .and_then(|mut f| f.write_all((text + "\n").as_bytes()))
        .and_then(|_| std::fs::rename(&tmp, &dest))
        .with_context(|| format!("cannot write the {} {}", R::WHAT, dest.display()))
}

/// Read the record of `name` in `dir`, if there is one; a record of another engine or
/// another directory is an error.
pub fn read<R: Record>(dir: &Path, name: &str) -> Result<Option<R>> {
    use crate::safe::input::{read_text_limited, ReadError, RECORD_LIMIT};
    let p = path::<R>(dir, name);
    match read_text_limited(&p, RECORD_LIMIT, R::WHAT) {
        Ok(text) => {
            let rec: R = serde_json::from_str(&text)
                .with_context(|| format!("{} is not an fslab {}", p.display(), R::WHAT))?;
            if rec.kind() != R::KIND || rec.name() != name {
                anyhow::bail!("{} records another directory ({})", p.display(), rec.name());
            }
            Ok(Some(rec))
        }
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
    }
}

/// Change the record of `name` in `dir` with `f`, if there is one.
pub fn update<R: Record>(dir: &Path, name: &str, f: impl FnOnce(&mut R)) -> Result<()> {
    let Some(mut rec) = read::<R>(dir, name)? else {
        return Ok(());
    };
    f(&mut rec);
    write(dir, &rec)
}

/// Add the directory's device and inode numbers to its record (right after its `mkdir`).
pub fn complete<R: Record>(dir: &Path, name: &str) -> Result<()> {
    let md = std::fs::symlink_metadata(dir.join(name))
        .with_context(|| format!("cannot stat {}", dir.join(name).display()))?;
    update::<R>(dir, name, |r| r.set_made(md.dev(), md.ino()))
}

/// Remove the record of `name` in `dir` (the directory is gone); a missing one is fine.
pub fn remove<R: Record>(dir: &Path, name: &str) -> Result<()> {
    let p = path::<R>(dir, name);
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", p.display()))
        }
        _ => Ok(()),
    }
}

/// What the caller will do with a proven directory, for refusals: `remove` or `touch`.
#[derive(Debug, Clone, Copy)]
pub struct Purpose {
    /// `remove`, `touch`.
    pub verb: &'static str,
    /// Said after a directory that cannot be looked at (`a run without -C needs …`).
    pub hint: &'static str,
}

/// Prove that `dir/name` is a directory the engine made (see the module header) and return
/// its record; a refusal is a usage error naming the reason and what to do.
pub fn prove<R: Record>(dir: &Path, name: &str, purpose: Purpose) -> Result<R> {
    let verb = purpose.verb;
    let p = dir.join(name);
    let md = match std::fs::symlink_metadata(&p) {
        Ok(m) => m,
        Err(e) => crate::bail_usage!("cannot use {}: {e}{}", p.display(), purpose.hint),
    };
    if !md.file_type().is_dir() {
        crate::bail_usage!(
            "{} is not a directory (a symbolic link or a file); fslab will {verb} only directories it made",
            p.display()
        );
    }
    let rec = match read::<R>(dir, name) {
        Ok(Some(r)) => r,
        Ok(None) => crate::bail_usage!(
            "{} has no fslab record ({} is missing), so fslab cannot tell it made it and will not {verb} it; remove it yourself if it is not needed",
            p.display(),
            path::<R>(dir, name).display()
        ),
        Err(e) => crate::bail_usage!("{e:#}; fslab will not {verb} {}", p.display()),
    };
    match rec.made() {
        Some((dev, ino)) if dev != md.dev() || ino != md.ino() => crate::bail_usage!(
            "{} is not the directory fslab made (its inode differs from the record {}); fslab will not {verb} it",
            p.display(),
            path::<R>(dir, name).display()
        ),
        Some(_) => {}
        None => born_after_record(dir, &rec, verb)?,
    }
    if let Some(m) = mount_inside(&p) {
        crate::bail_usage!(
            "{} has a mount inside it ({}); fslab never works across a mount: unmount it first",
            p.display(),
            m.display()
        );
    }
    Ok(rec)
}

/// A record without an inode is accepted only for a directory that came into being (statx
/// birth time) within [`CREATE_WINDOW`] after the record was written: the run that wrote it
/// was killed between making the directory and completing the record.
fn born_after_record<R: Record>(dir: &Path, rec: &R, verb: &str) -> Result<()> {
    let name = rec.name();
    let refuse = |why: &str| {
        crate::error::usage(format!(
            "{}'s record {} has no inode and {why}, so fslab cannot tell it made the directory and will not {verb} it; remove it yourself if it is not needed",
            dir.join(name).display(),
            path::<R>(dir, name).display()
        ))
    };
    let at = chrono::DateTime::parse_from_rfc3339(rec.created_at())
        .ok()
        .and_then(|t| t.timestamp_nanos_opt())
        .ok_or_else(|| refuse("an unreadable time"))?;
    let fd = rustix::fs::open(
        dir,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| refuse(&e.to_string()))?;
    let name = std::ffi::OsStr::new(name);
    crate::safe::beneath::born_after_intent(std::os::fd::AsFd::as_fd(&fd), name, i128::from(at))
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
#[path = "provenance_tests.rs"]
mod tests;
