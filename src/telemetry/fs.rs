//! Which file-system counter file belongs to the cell's data device, found through the
//! kernel's own naming (no mount table needed):
//!
//! - XFS: `/sys/fs/xfs/<data>/stats/stats` (named after the data device also when the log
//!   is external);
//! - ext3/ext4 (both served by the ext4 driver, `/sys/fs/ext4/<data>/`): the jbd2 entry
//!   `/proc/fs/jbd2/<data>-8/info` for an internal journal (inode 8), or
//!   `/proc/fs/jbd2/<journal device>/info` for an external one. When the journal device is
//!   not known, the entry is found from the journal thread: `/sys/fs/ext4/<data>/journal_task`
//!   is its tid, and its name is `jbd2/<entry>` (cut to 15 characters by TASK_COMM_LEN, so
//!   it is matched as a prefix). An ext4 without a journal has no entry and no counters;
//! - btrfs: `/sys/fs/btrfs/<fsid>/commit_stats` of the fsid whose `devices/` holds the data
//!   device (Linux 6.0 and later).

use super::btrfs::{self, CommitStats};
use super::jbd2::{self, Jbd2Info};
use super::xfs::{self, XfsLog};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The file-system counter file to read at each boundary.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FsCounters {
    /// No counters (ext2, ext4 without a journal, tmpfs, or nothing found).
    #[default]
    None,
    /// A jbd2 journal's `info` file (ext3/ext4).
    Jbd2 {
        /// `/proc/fs/jbd2/<entry>/info`.
        info: PathBuf,
    },
    /// An XFS mount's statistics.
    Xfs {
        /// `/sys/fs/xfs/<data>/stats/stats`.
        stats: PathBuf,
    },
    /// A btrfs file system's commit statistics.
    Btrfs {
        /// `/sys/fs/btrfs/<fsid>/commit_stats`.
        commit_stats: PathBuf,
    },
}

/// One read of the file-system counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsSample {
    /// jbd2 journal statistics.
    Jbd2(Jbd2Info),
    /// XFS log statistics.
    Xfs(XfsLog),
    /// btrfs commit statistics.
    Btrfs(CommitStats),
}

impl FsCounters {
    /// The counters of the file system on block device `data` (a diskstats name such as
    /// `loop3`), whose external journal, if any, is on `journal`.
    pub fn detect(data: &str, journal: Option<&str>) -> FsCounters {
        detect_in(Path::new("/"), data, journal)
    }

    /// The file read, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            FsCounters::None => None,
            FsCounters::Jbd2 { info } => Some(info),
            FsCounters::Xfs { stats } => Some(stats),
            FsCounters::Btrfs { commit_stats } => Some(commit_stats),
        }
    }

    /// Read and parse the counters (`Ok(None)` when there are none to read).
    pub fn read(&self) -> Result<Option<FsSample>> {
        let Some(path) = self.path() else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "reading {} (was the file system unmounted?)",
                path.display()
            )
        })?;
        let parsed = match self {
            FsCounters::None => return Ok(None),
            FsCounters::Jbd2 { .. } => jbd2::parse(&text).map(FsSample::Jbd2),
            FsCounters::Xfs { .. } => xfs::parse(&text).map(FsSample::Xfs),
            FsCounters::Btrfs { .. } => btrfs::parse(&text).map(FsSample::Btrfs),
        };
        parsed
            .map(Some)
            .with_context(|| format!("parsing {}", path.display()))
    }
}

/// [`FsCounters::detect`] under another root directory (tests build a fake `/proc`, `/sys`).
pub(crate) fn detect_in(root: &Path, data: &str, journal: Option<&str>) -> FsCounters {
    let xfs = root.join(format!("sys/fs/xfs/{data}/stats/stats"));
    if xfs.is_file() {
        return FsCounters::Xfs { stats: xfs };
    }
    if root.join(format!("sys/fs/ext4/{data}")).is_dir() {
        return match jbd2_entry(root, data, journal) {
            Some(e) => FsCounters::Jbd2 {
                info: root.join(format!("proc/fs/jbd2/{e}/info")),
            },
            None => FsCounters::None,
        };
    }
    if let Some(p) = btrfs_commit_stats(root, data) {
        return FsCounters::Btrfs { commit_stats: p };
    }
    FsCounters::None
}

/// The `/proc/fs/jbd2` entry of the ext4 on `data` (see the module doc for the rules).
pub(crate) fn jbd2_entry(root: &Path, data: &str, journal: Option<&str>) -> Option<String> {
    let jbd2 = root.join("proc/fs/jbd2");
    let known = [Some(format!("{data}-8")), journal.map(str::to_string)];
    if let Some(e) = known
        .into_iter()
        .flatten()
        .find(|e| jbd2.join(e).join("info").is_file())
    {
        return Some(e);
    }
    let tid = std::fs::read_to_string(root.join(format!("sys/fs/ext4/{data}/journal_task")))
        .ok()?
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|t| *t != 0)?;
    let comm = std::fs::read_to_string(root.join(format!("proc/{tid}/comm"))).ok()?;
    let prefix = comm
        .trim_end_matches('\n')
        .strip_prefix("jbd2/")?
        .to_string();
    let mut found: Vec<String> = std::fs::read_dir(&jbd2)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    if found.len() > 1 {
        // A cut name can match several entries; the exact name wins if there is one.
        found.retain(|n| *n == prefix);
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// For an external journal: the journal device's name, from the jbd2 entry of `data`.
pub(crate) fn external_journal_in(root: &Path, data: &str) -> Option<String> {
    let e = jbd2_entry(root, data, None)?;
    let internal = e
        .strip_prefix(data)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|ino| !ino.is_empty() && ino.bytes().all(|b| b.is_ascii_digit()));
    (!internal).then_some(e)
}

fn btrfs_commit_stats(root: &Path, data: &str) -> Option<PathBuf> {
    let base = root.join("sys/fs/btrfs");
    std::fs::read_dir(&base).ok()?.flatten().find_map(|e| {
        let dir = e.path();
        let stats = dir.join("commit_stats");
        (dir.join("devices").join(data).exists() && stats.is_file()).then_some(stats)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn an_internal_journal_is_named_after_the_data_device() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("sys/fs/ext4/loop2")).unwrap();
        put(
            t.path(),
            "proc/fs/jbd2/loop2-8/info",
            "0 transactions (0 requested), each up to 9 blocks\n",
        );
        let c = detect_in(t.path(), "loop2", None);
        assert_eq!(
            c,
            FsCounters::Jbd2 {
                info: t.path().join("proc/fs/jbd2/loop2-8/info")
            }
        );
        assert_eq!(external_journal_in(t.path(), "loop2"), None);
    }

    #[test]
    fn an_external_journal_is_named_after_the_journal_device() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("sys/fs/ext4/loop0")).unwrap();
        put(t.path(), "proc/fs/jbd2/loop1/info", "x");
        put(t.path(), "proc/fs/jbd2/loop2-8/info", "x");
        let entry = |journal| jbd2_entry(t.path(), "loop0", journal);
        assert_eq!(entry(Some("loop1")).as_deref(), Some("loop1"));
        // Without being told, through the journal thread's name.
        assert_eq!(entry(None), None, "no journal_task yet");
        put(t.path(), "sys/fs/ext4/loop0/journal_task", "6050\n");
        put(t.path(), "proc/6050/comm", "jbd2/loop1\n");
        let external = external_journal_in(t.path(), "loop0");
        assert_eq!(external.as_deref(), Some("loop1"));
    }

    #[test]
    fn a_thread_name_cut_to_15_characters_still_finds_the_entry() {
        let t = tempfile::tempdir().unwrap();
        put(t.path(), "proc/fs/jbd2/nvme0n1p12/info", "x");
        put(t.path(), "proc/fs/jbd2/nvme0n1p1-8/info", "x");
        put(t.path(), "sys/fs/ext4/dm-3/journal_task", "77\n");
        // "jbd2/nvme0n1p12" is exactly 15 characters; the kernel keeps all of it.
        put(t.path(), "proc/77/comm", "jbd2/nvme0n1p12\n");
        let external = || external_journal_in(t.path(), "dm-3");
        assert_eq!(external().as_deref(), Some("nvme0n1p12"));
        // An internal journal of dm-3 is dm-3-8, and a dm journal device is not internal.
        put(t.path(), "proc/fs/jbd2/dm-1/info", "x");
        put(t.path(), "proc/77/comm", "jbd2/dm-1\n");
        assert_eq!(external().as_deref(), Some("dm-1"));
        // Ambiguous prefixes give nothing rather than a wrong journal.
        put(t.path(), "proc/fs/jbd2/nvme0n1p1x/info", "x");
        put(t.path(), "proc/77/comm", "jbd2/nvme0n1p1\n");
        assert_eq!(jbd2_entry(t.path(), "dm-3", None), None);
    }

    #[test]
    fn xfs_btrfs_and_nothing() {
        let t = tempfile::tempdir().unwrap();
        put(
            t.path(),
            "sys/fs/xfs/loop3/stats/stats",
            include_str!("fixtures/xfs-stats-after"),
        );
        put(
            t.path(),
            "sys/fs/btrfs/abc/commit_stats",
            include_str!("fixtures/btrfs-commit_stats-after"),
        );
        put(t.path(), "sys/fs/btrfs/abc/devices/loop4", "");
        std::fs::create_dir_all(t.path().join("sys/fs/ext4/vda")).unwrap();
        let x = detect_in(t.path(), "loop3", None);
        assert!(matches!(x.read().unwrap(), Some(FsSample::Xfs(_))));
        let b = detect_in(t.path(), "loop4", None);
        assert!(matches!(b.read().unwrap(), Some(FsSample::Btrfs(_))));
        assert_eq!(
            detect_in(t.path(), "vda", None),
            FsCounters::None,
            "ext4 without a journal"
        );
        assert_eq!(detect_in(t.path(), "sdz", None), FsCounters::None);
        assert_eq!(FsCounters::None.read().unwrap(), None);
        std::fs::remove_file(t.path().join("sys/fs/xfs/loop3/stats/stats")).unwrap();
        let e = x.read().unwrap_err().to_string();
        assert!(e.contains("unmounted"), "{e}");
    }
}
