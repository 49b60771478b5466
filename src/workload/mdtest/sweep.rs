//! Removing what is left of a test directory after a failed or interrupted run, without
//! ever removing anything mdtest's shape could not have made.
//!
//! The timed phases remove exactly the names they made. A run that stops half-way leaves a
//! partial tree; the sweep removes it name by name:
//!
//! * in the test directory only the tops of the trees (`mdtest_tree.0`, or
//!   `mdtest_tree.<r>.0` with `-u`, `r` below the run's ranks);
//! * in tree directory `k` only its children (`<base>.<c>`, `c` one of `k`'s children, the
//!   same base) and, where `k` holds items, `dir.mdtest.<r>.<n>` (also with rename's `-XX`)
//!   and `file.mdtest.<r>.<n>` with `n` among `k`'s item numbers — each of the right type: a
//!   directory for `dir.` and tree names, a regular file for `file.`; symbolic links are
//!   never followed and never removed;
//! * files go with `unlink`, directories with `rmdir`, which fails on a directory that
//!   still holds anything: an entry mdtest did not make keeps its directory and every
//!   directory above it, and is named in the result, never deleted;
//! * never across a mount: a directory on another mount than the test directory is kept
//!   whole, and so is a test directory with a mount anywhere inside.

use super::layout::Layout;
use super::record::Shape;
use rustix::fd::OwnedFd;
use rustix::fs::FileType;
use rustix::io::Errno;
use std::path::Path;

pub use crate::workload::provenance::sweep::Swept;
use crate::workload::provenance::sweep::{entries, file_type, number, open_dir, sweep_root};

/// What an entry of a tree directory may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A directory (a tree directory or a `dir.` item).
    Dir(Option<u64>),
    /// A regular file (a `file.` item).
    File,
}

/// Is `name` an entry tree directory `node` (at `depth`, of base `tree`) may hold?
/// `Expect::Dir(Some(c))` for a child tree directory `c`.
fn expected(
    name: &[u8],
    tree: Option<u64>,
    node: u64,
    depth: u32,
    shape: &Shape,
) -> Option<Expect> {
    let lay: &Layout = &shape.layout;
    if let Some(rest) = name.strip_prefix(b"mdtest_tree.") {
        let rest = match tree {
            Some(r) => {
                let (v, rest) = number(rest)?;
                (v == r).then_some(())?;
                rest.strip_prefix(b".")?
            }
            None => rest,
        };
        let (c, tail) = number(rest)?;
        return (tail.is_empty() && lay.children(node, depth).contains(&c))
            .then_some(Expect::Dir(Some(c)));
    }
    if !lay.holds_items(depth) {
        return None;
    }
    let (kind, rest) = if let Some(r) = name.strip_prefix(b"dir.mdtest.") {
        (Expect::Dir(None), r)
    } else {
        (Expect::File, name.strip_prefix(b"file.mdtest.")?)
    };
    let (rank, rest) = number(rest)?;
    let (num, tail) = number(rest.strip_prefix(b".")?)?;
    let first = node * lay.items_per_dir;
    let ok_tail = tail.is_empty() || (kind != Expect::File && tail == b"-XX");
    (rank < u64::from(shape.ranks) && ok_tail && (first..first + lay.items_per_dir).contains(&num))
        .then_some(kind)
}

/// Is `child` on another mount than the test directory (mount id `top`, device `dev`)?
fn other_mount(child: &OwnedFd, top: Option<u64>, dev: u64) -> bool {
    use std::os::fd::AsFd;
    match (top, crate::safe::beneath::mount_id(child.as_fd())) {
        (Some(a), Some(b)) => a != b,
        // No mount ids from this kernel: another device is another mount.
        _ => rustix::fs::fstat(child).map_or(true, |st| st.st_dev != dev),
    }
}

/// Where the sweep is: the test directory's mount (id, device) and, below the test
/// directory, which tree directory it is in (tree, number, depth).
#[derive(Clone, Copy)]
struct At {
    mount: (Option<u64>, u64),
    node: Option<(Option<u64>, u64, u32)>,
}

/// Sweep the entries of `dir` (the test directory, or a tree directory).
fn sweep_dir(dir: &OwnedFd, here: At, shape: &Shape, rel: &str, out: &mut Swept) {
    let at = here.node;
    let Some(names) = out.entries_of(dir, rel) else {
        return;
    };
    for name in names {
        let shown = format!("{rel}/{}", name.to_string_lossy());
        let want = match at {
            None => top_of(name.as_bytes(), shape).map(|t| (Expect::Dir(Some(0)), t)),
            Some((tree, node, depth)) => {
                expected(name.as_bytes(), tree, node, depth, shape).map(|e| (e, tree))
            }
        };
        match (want, file_type(dir, &name)) {
            (_, None) => {} // gone meanwhile
            (Some((Expect::File, _)), Some(FileType::RegularFile)) => {
                out.unlink(dir, &name, &shown)
            }
            (Some((Expect::Dir(child), tree)), Some(FileType::Directory)) => {
                let sub = match open_dir(dir, &name) {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => continue,
                    Err(e) => {
                        out.kept.push(format!("{shown} (cannot open it: {e})"));
                        continue;
                    }
                };
                if other_mount(&sub, here.mount.0, here.mount.1) {
                    out.kept.push(format!(
                        "{shown} (another mount; fslab never removes across a mount)"
                    ));
                    continue;
                }
                let depth = at.map_or(0, |a| a.2 + 1);
                match child {
                    // A tree directory: sweep what it may hold.
                    Some(c) => {
                        let below = At {
                            node: Some((tree, c, depth)),
                            ..here
                        };
                        sweep_dir(&sub, below, shape, &shown, out)
                    }
                    // A directory item: mdtest made it empty; anything inside is not ours.
                    None => {
                        for n in entries(&sub).unwrap_or_default() {
                            out.kept.push(format!(
                                "{shown}/{} (not made by mdtest)",
                                n.to_string_lossy()
                            ));
                        }
                    }
                }
                drop(sub);
                out.rmdir(dir, &name, &shown);
            }
            (_, Some(_)) => out.kept.push(format!("{shown} (not made by mdtest)")),
        }
    }
}

/// Is `name` the top of a tree in the test directory? Returns the tree (`None`: shared).
fn top_of(name: &[u8], shape: &Shape) -> Option<Option<u64>> {
    let rest = name.strip_prefix(b"mdtest_tree.")?;
    if !shape.unique_dir {
        return (rest == b"0").then_some(None);
    }
    let (r, tail) = number(rest)?;
    (tail == b".0" && r < u64::from(shape.ranks)).then_some(Some(r))
}

/// Remove test directory `testdir` in `dir` as far as it holds only what mdtest's `shape`
/// can make (see the module header). A missing test directory is not an error.
pub fn sweep_testdir(dir: &Path, testdir: &str, shape: &Shape) -> std::io::Result<Swept> {
    sweep_root(dir, testdir, |fd, out| {
        let top = At {
            mount: (
                crate::safe::beneath::mount_id(std::os::fd::AsFd::as_fd(fd)),
                rustix::fs::fstat(fd)?.st_dev,
            ),
            node: None,
        };
        sweep_dir(fd, top, shape, testdir, out);
        Ok(())
    })
}

/// Remove what a killed run left of test directory `testdir` in `dir` (for `fslab cleanup`):
/// only if its record proves it is fslab's (the record's own shape, device and inode), and
/// then only mdtest's names of that shape; the record goes when the directory is gone.
pub fn sweep_recorded(dir: &Path, testdir: &str) -> anyhow::Result<Swept> {
    let Some(rec) = super::record::read(dir, testdir)? else {
        crate::bail_usage!(
            "{} has no fslab record, so fslab will not remove it",
            dir.join(testdir).display()
        );
    };
    if dir.join(testdir).symlink_metadata().is_err() {
        std::fs::remove_file(super::record::path(dir, testdir))?;
        return Ok(Swept::default());
    }
    super::record::verify(dir, testdir, &rec.shape)?;
    let swept = sweep_testdir(dir, testdir, &rec.shape)?;
    let swept = swept.into_result(&dir.join(testdir))?;
    std::fs::remove_file(super::record::path(dir, testdir))?;
    Ok(swept)
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
