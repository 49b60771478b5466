//! btrfs transaction-commit statistics from `/sys/fs/btrfs/<fsid>/commit_stats` (Linux 6.0
//! and later, fs/btrfs/sysfs.c `btrfs_commit_stats_show`):
//!
//! ```text
//! commits 3
//! cur_commit_ms 0
//! last_commit_ms 1
//! max_commit_ms 1
//! total_commit_ms 3
//! ```
//!
//! btrfs has no journal; its transaction commit (the new tree roots and superblock written
//! after the data) is the step a journal commit is on ext4, so the counts are reported as
//! `fs.journal.transactions` and `fs.journal.commit_ms`. Unlike jbd2's, these totals are
//! exact: `commits` and `total_commit_ms` are plain 64-bit sums. Writing to the file resets
//! only `max_commit_ms`.

use super::counter::{step, ULONG_BITS};
use anyhow::{Context, Result};

/// One read of `commit_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitStats {
    /// Transaction commits since mount.
    pub commits: u64,
    /// Milliseconds spent committing since mount.
    pub total_ms: u64,
    /// The longest commit in ms (since mount or the last reset).
    pub max_ms: u64,
}

/// Parse the text of `commit_stats`.
pub fn parse(text: &str) -> Result<CommitStats> {
    let get = |key: &str| -> Result<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("btrfs commit_stats has no `{key}`"))
    };
    Ok(CommitStats {
        commits: get("commits")?,
        total_ms: get("total_commit_ms")?,
        max_ms: get("max_commit_ms")?,
    })
}

/// Commits and commit milliseconds between two reads, or `None` when the counts went
/// backwards (the file system was mounted again).
pub fn delta(start: &CommitStats, end: &CommitStats) -> Option<(u64, u64)> {
    Some((
        step(start.commits, end.commits, ULONG_BITS).increase()?,
        step(start.total_ms, end.total_ms, ULONG_BITS).increase()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_commit_stats() {
        let a = parse(include_str!("fixtures/btrfs-commit_stats-before")).unwrap();
        let b = parse(include_str!("fixtures/btrfs-commit_stats-after")).unwrap();
        assert!(b.commits > a.commits, "{a:?} {b:?}");
        let (n, ms) = delta(&a, &b).unwrap();
        assert_eq!(n, b.commits - a.commits);
        assert_eq!(ms, b.total_ms - a.total_ms);
        assert!(delta(&b, &a).is_none());
        assert!(parse("commits 3\n").is_err());
    }
}
