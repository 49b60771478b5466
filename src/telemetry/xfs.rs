//! XFS per-mount statistics from `/sys/fs/xfs/<data device>/stats/stats`, laid out by
//! `xfs_stats_format` (fs/xfs/xfs_stats.c) from `struct __xfsstats` (fs/xfs/xfs_stats.h), as
//! documented in the XFS wiki's "Runtime Stats" page. Lines used:
//!
//! - `log writes blocks noiclogs force force_sleep`: log buffer (iclog) writes, log space
//!   written in 512-byte basic blocks (`BTOBB` in `xlog_sync`), times no in-core log buffer
//!   was free (what `logbufs`/`logbsize` tune), log forces and forces that had to sleep;
//! - `push_ail try_logspace sleep_logspace pushes success pushbuf pinned locked …`: log
//!   space reservations, reservations that had to sleep for space (a small log), and AIL
//!   tail pushes (only the first seven positions are read: later kernels insert fields
//!   after `locked`);
//! - `trans sync async empty`: transactions committed.
//!
//! Every one of these is the sum over CPUs of `__u32` counters printed with `%u`: they wrap
//! at 2^32. Writing to `stats_clear` zeroes them (a reset).

use super::counter::step;
use anyhow::{Context, Result};

/// Bytes per XFS basic block, the unit of `log blocks`.
pub const BASIC_BLOCK: u64 = 512;

/// The log-related XFS counters of one mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XfsLog {
    /// Log buffer writes.
    pub writes: u64,
    /// 512-byte basic blocks written to the log.
    pub blocks: u64,
    /// Times no in-core log buffer was available.
    pub noiclogs: u64,
    /// Log forces (synchronous flushes of the log, e.g. for fsync).
    pub force: u64,
    /// Log forces that had to sleep.
    pub force_sleep: u64,
    /// Log space reservations attempted.
    pub try_logspace: u64,
    /// Reservations that slept waiting for log space.
    pub sleep_logspace: u64,
    /// AIL tail pushes (writing back metadata to free log space).
    pub push_ail: u64,
    /// Synchronous transactions committed (`trans` field 1).
    pub trans_sync: u64,
    /// Asynchronous transactions committed (`trans` field 2).
    pub trans_async: u64,
}

impl XfsLog {
    /// Transactions committed, synchronous and asynchronous.
    pub fn transactions(&self) -> u64 {
        self.trans_sync + self.trans_async
    }
}

fn nums(text: &str, name: &str, need: usize) -> Result<Vec<u64>> {
    let f = text
        .lines()
        .find_map(|l| {
            let mut t = l.split_whitespace();
            (t.next() == Some(name)).then_some(t)
        })
        .with_context(|| format!("XFS stats have no `{name}` line"))?;
    let v: Vec<u64> = f
        .take(need)
        .map(|x| x.parse::<u64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("XFS stats: bad `{name}` line"))?;
    if v.len() < need {
        anyhow::bail!("XFS stats: `{name}` has {} fields, need {need}", v.len());
    }
    Ok(v)
}

/// Parse the text of an XFS `stats` file.
pub fn parse(text: &str) -> Result<XfsLog> {
    let log = nums(text, "log", 5)?;
    let push = nums(text, "push_ail", 3)?;
    let trans = nums(text, "trans", 2)?;
    Ok(XfsLog {
        writes: log[0],
        blocks: log[1],
        noiclogs: log[2],
        force: log[3],
        force_sleep: log[4],
        try_logspace: push[0],
        sleep_logspace: push[1],
        push_ail: push[2],
        trans_sync: trans[0],
        trans_async: trans[1],
    })
}

/// The change of every counter between two reads, each wrapping at 2^32; `None` when any
/// counter went backwards in a way a wrap cannot explain (the statistics were cleared).
pub fn delta(start: &XfsLog, end: &XfsLog) -> Option<XfsLog> {
    let d = |a: u64, b: u64| step(a, b, 32).increase();
    Some(XfsLog {
        writes: d(start.writes, end.writes)?,
        blocks: d(start.blocks, end.blocks)?,
        noiclogs: d(start.noiclogs, end.noiclogs)?,
        force: d(start.force, end.force)?,
        force_sleep: d(start.force_sleep, end.force_sleep)?,
        try_logspace: d(start.try_logspace, end.try_logspace)?,
        sleep_logspace: d(start.sleep_logspace, end.sleep_logspace)?,
        push_ail: d(start.push_ail, end.push_ail)?,
        trans_sync: d(start.trans_sync, end.trans_sync)?,
        trans_async: d(start.trans_async, end.trans_async)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_real_per_mount_stats_file() {
        let s = parse(include_str!("fixtures/xfs-stats-before")).unwrap();
        assert_eq!(
            (s.writes, s.blocks, s.noiclogs, s.force, s.force_sleep),
            (4, 137, 0, 2, 3)
        );
        assert_eq!((s.try_logspace, s.sleep_logspace, s.push_ail), (821, 0, 3));
        assert_eq!(
            (s.trans_sync, s.trans_async, s.transactions()),
            (0, 821, 821)
        );
    }

    #[test]
    fn the_captured_phase_wrote_to_the_log() {
        let a = parse(include_str!("fixtures/xfs-stats-before")).unwrap();
        let b = parse(include_str!("fixtures/xfs-stats-after")).unwrap();
        let d = delta(&a, &b).unwrap();
        assert!(d.writes > 0 && d.blocks > 0, "{d:?}");
        assert_eq!(d.blocks, b.blocks - a.blocks);
        assert!(d.transactions() >= 200, "200 files were created: {d:?}");
    }

    #[test]
    fn counters_wrap_at_32_bits_and_a_clear_is_none() {
        let a = XfsLog {
            blocks: u32::MAX as u64 - 9,
            ..Default::default()
        };
        let b = XfsLog {
            blocks: 20,
            ..Default::default()
        };
        assert_eq!(delta(&a, &b).unwrap().blocks, 30);
        let cleared = XfsLog {
            writes: 0,
            ..Default::default()
        };
        let busy = XfsLog {
            writes: 5000,
            ..Default::default()
        };
        assert!(delta(&busy, &cleared).is_none());
    }

    #[test]
    fn a_missing_line_is_an_error() {
        assert!(parse("log 1 2 3 4 5\ntrans 1 2 3\n").is_err());
        assert!(parse("log 1 2 3\npush_ail 1 2 3\ntrans 1 2 3\n").is_err());
        // An extra field inserted after `locked` by a later kernel does not matter.
        assert!(parse("log 1 2 3 4 5\npush_ail 1 2 3 4 5 6 7 8 9 10 11\ntrans 1 2 3\n").is_ok());
    }
}
