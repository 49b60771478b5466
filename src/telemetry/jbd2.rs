//! ext3/ext4 journal statistics from `/proc/fs/jbd2/<name>/info`, as `jbd2_seq_info_show`
//! in fs/jbd2/journal.c prints them:
//!
//! ```text
//! 6 transactions (6 requested), each up to 5461 blocks
//! average:
//!   0ms waiting for transaction
//!   0ms request delay
//!   20ms running transaction
//!   0ms transaction was being locked
//!   0ms flushing data (in ordered mode)
//!   0ms logging transaction
//!   593us average transaction commit time
//!   206 handles per transaction
//!   10 blocks per transaction
//!   12 logged blocks per transaction
//! ```
//!
//! The counts are cumulative since the journal was loaded (mount); the "average" lines are
//! `total / transactions` in integer division (request delay: `/ requested`), the times
//! computed in jiffies and then converted to ms. So a per-phase total is recovered as
//! `n_end × avg_end − n_start × avg_start`; because each average was rounded down, the
//! estimate is low by less than `n_end` units and high by less than `n_start` units (a unit
//! is one block, one handle or one jiffy). With fslab's cold policy the journal is reloaded
//! before every repetition, so `n_start` is small and the error with it.
//!
//! The commit time is different: `j_average_commit_time` is not a cumulative mean but an
//! exponentially weighted one, `avg = (latest + 3 × avg) / 4` per commit, so it cannot be
//! differenced; its value at the end of the phase is reported.
//!
//! The entry name (verified on Linux 6.18 with loop devices): an internal journal is
//! `<data device>-<journal inode>` (`loop2-8`); an external journal is named after the
//! **journal** device alone (`loop1`, no suffix), since jbd2 names it `%pg` of `j_dev`.

use super::counter::{step, ULONG_BITS};
use anyhow::{bail, Context, Result};

/// One read of a jbd2 `info` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Jbd2Info {
    /// Transactions committed since mount.
    pub transactions: u64,
    /// Of those, commits that were explicitly requested (fsync, sync, …).
    pub requested: u64,
    /// The most blocks a transaction may hold (`j_max_transaction_buffers`), set by the
    /// journal size: a small journal forces small, frequent transactions.
    pub max_transaction_buffers: u64,
    /// The averages; absent before the first commit (the kernel prints only line 1).
    pub avg: Option<Jbd2Averages>,
}

/// The "average:" block of the info file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Jbd2Averages {
    /// Milliseconds a transaction waited before it could start (`rs_wait`).
    pub wait_ms: u64,
    /// Milliseconds from a commit request to the commit starting (per requested commit).
    pub request_delay_ms: u64,
    /// Milliseconds a transaction was open and running.
    pub running_ms: u64,
    /// Milliseconds a transaction was locked (waiting for its handles to finish).
    pub locked_ms: u64,
    /// Milliseconds flushing ordered data before the commit.
    pub flushing_ms: u64,
    /// Milliseconds writing the transaction to the journal.
    pub logging_ms: u64,
    /// Commit time in microseconds: an exponentially weighted average, not a mean.
    pub commit_us: u64,
    /// Handles (file-system operations) per transaction.
    pub handles: u64,
    /// Metadata blocks per transaction.
    pub blocks: u64,
    /// Blocks written to the journal per transaction (with descriptor and commit blocks).
    pub logged_blocks: u64,
}

/// Parse the text of a jbd2 `info` file. Unknown lines (later kernels may add some) are
/// ignored; the first line is required.
pub fn parse(text: &str) -> Result<Jbd2Info> {
    let mut lines = text.lines();
    let first = lines.next().context("empty jbd2 info")?;
    // "%lu transactions (%lu requested), each up to %u blocks"
    let nums: Vec<u64> = first
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("bad jbd2 info line `{first}`"))?;
    if !first.contains("transactions") || nums.len() != 3 {
        bail!("unexpected first line of jbd2 info: `{first}`");
    }
    let mut info = Jbd2Info {
        transactions: nums[0],
        requested: nums[1],
        max_transaction_buffers: nums[2],
        avg: None,
    };
    let mut a = Jbd2Averages::default();
    let mut seen = 0;
    for line in lines {
        let t = line.trim_start();
        let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
        let Ok(v) = t[..t.len() - rest.len()].parse::<u64>() else {
            continue;
        };
        let slot = match rest {
            "ms waiting for transaction" => &mut a.wait_ms,
            "ms request delay" => &mut a.request_delay_ms,
            "ms running transaction" => &mut a.running_ms,
            "ms transaction was being locked" => &mut a.locked_ms,
            "ms flushing data (in ordered mode)" => &mut a.flushing_ms,
            "ms logging transaction" => &mut a.logging_ms,
            "us average transaction commit time" => &mut a.commit_us,
            " handles per transaction" => &mut a.handles,
            " blocks per transaction" => &mut a.blocks,
            " logged blocks per transaction" => &mut a.logged_blocks,
            _ => continue,
        };
        *slot = v;
        seen += 1;
    }
    if info.transactions > 0 {
        if seen < 10 {
            bail!(
                "jbd2 info reports {} transactions but only {seen} of the 10 averages",
                info.transactions
            );
        }
        info.avg = Some(a);
    }
    Ok(info)
}

/// Per-phase journal figures derived from two reads.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Jbd2Delta {
    /// Transactions committed in the phase.
    pub transactions: u64,
    /// Requested commits in the phase.
    pub requested: u64,
    /// Metadata blocks journaled (count × average difference).
    pub blocks: f64,
    /// Blocks written to the journal.
    pub logged_blocks: f64,
    /// Handles.
    pub handles: f64,
    /// Total milliseconds transactions waited to start.
    pub wait_ms: f64,
    /// Total milliseconds of commit-request delay.
    pub request_delay_ms: f64,
    /// Total milliseconds transactions were running.
    pub running_ms: f64,
    /// Total milliseconds transactions were locked.
    pub locked_ms: f64,
    /// Total milliseconds flushing ordered data.
    pub flushing_ms: f64,
    /// Total milliseconds writing to the journal.
    pub logging_ms: f64,
    /// The weighted average commit time at the end of the phase, in ms (None: no commit yet).
    pub commit_ms_avg: Option<f64>,
    /// `j_max_transaction_buffers` at the end.
    pub limit: u64,
    /// The journal was reloaded (remount) in between: figures are since the reload.
    pub restarted: bool,
}

/// Derive a phase's journal figures from the reads at its start and end.
pub fn delta(start: &Jbd2Info, end: &Jbd2Info) -> Jbd2Delta {
    let back = |a: u64, b: u64| step(a, b, ULONG_BITS).increase().is_none();
    let restarted =
        back(start.transactions, end.transactions) || back(start.requested, end.requested);
    let zero = Jbd2Info::default();
    let s = if restarted { &zero } else { start };
    let (sa, ea) = (s.avg.unwrap_or_default(), end.avg.unwrap_or_default());
    let (n0, n1) = (s.transactions as f64, end.transactions as f64);
    let (r0, r1) = (s.requested as f64, end.requested as f64);
    // Total = count × average; a difference below zero is rounding (see the module doc).
    let tot = |a: u64, b: u64| (n1 * b as f64 - n0 * a as f64).max(0.0);
    Jbd2Delta {
        transactions: end.transactions - s.transactions,
        requested: end.requested.saturating_sub(s.requested),
        blocks: tot(sa.blocks, ea.blocks),
        logged_blocks: tot(sa.logged_blocks, ea.logged_blocks),
        handles: tot(sa.handles, ea.handles),
        wait_ms: tot(sa.wait_ms, ea.wait_ms),
        request_delay_ms: (r1 * ea.request_delay_ms as f64 - r0 * sa.request_delay_ms as f64)
            .max(0.0),
        running_ms: tot(sa.running_ms, ea.running_ms),
        locked_ms: tot(sa.locked_ms, ea.locked_ms),
        flushing_ms: tot(sa.flushing_ms, ea.flushing_ms),
        logging_ms: tot(sa.logging_ms, ea.logging_ms),
        commit_ms_avg: end.avg.map(|a| a.commit_us as f64 / 1000.0),
        limit: end.max_transaction_buffers,
        restarted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_real_external_journal() {
        let i = parse(include_str!("fixtures/jbd2-external-after.info")).unwrap();
        assert_eq!((i.transactions, i.requested), (6, 6));
        assert_eq!(i.max_transaction_buffers, 5461);
        let a = i.avg.unwrap();
        assert_eq!((a.running_ms, a.commit_us), (20, 593));
        assert_eq!((a.handles, a.blocks, a.logged_blocks), (206, 10, 12));
    }

    #[test]
    fn a_fresh_journal_has_no_averages() {
        let i = parse(include_str!("fixtures/jbd2-external-fresh.info")).unwrap();
        assert_eq!(i.transactions, 0);
        assert_eq!(i.max_transaction_buffers, 5461);
        assert!(i.avg.is_none());
    }

    #[test]
    fn rejects_text_that_is_not_jbd2_info() {
        assert!(parse("").is_err());
        assert!(parse("hello world").is_err());
        assert!(parse("3 transactions (1 requested), each up to 10 blocks\naverage: \n").is_err());
    }

    #[test]
    fn unknown_lines_of_later_kernels_are_ignored() {
        let t = include_str!("fixtures/jbd2-internal-after.info").replacen(
            '\n',
            "\n7 fast commits performed\n",
            1,
        );
        let i = parse(&t).unwrap();
        assert_eq!(i.avg.unwrap().blocks, 25);
    }

    #[test]
    fn phase_totals_are_count_times_average_differences() {
        let a = parse(include_str!("fixtures/jbd2-internal-before.info")).unwrap();
        let b = parse(include_str!("fixtures/jbd2-internal-after.info")).unwrap();
        let (aa, ba) = (a.avg.unwrap(), b.avg.unwrap());
        let d = delta(&a, &b);
        assert!(!d.restarted);
        assert_eq!(d.transactions, b.transactions - a.transactions);
        let want =
            b.transactions as f64 * ba.blocks as f64 - a.transactions as f64 * aa.blocks as f64;
        assert_eq!(d.blocks, want);
        assert!(d.blocks > 0.0);
        assert_eq!(d.limit, 2730);
        assert_eq!(d.commit_ms_avg, Some(ba.commit_us as f64 / 1000.0));
    }

    #[test]
    fn a_remount_restarts_the_counts() {
        let before = parse(include_str!("fixtures/jbd2-external-after.info")).unwrap();
        let after = Jbd2Info {
            transactions: 2,
            requested: 1,
            max_transaction_buffers: 5461,
            avg: Some(Jbd2Averages {
                blocks: 7,
                request_delay_ms: 4,
                ..Default::default()
            }),
        };
        let d = delta(&before, &after);
        assert!(d.restarted);
        assert_eq!(d.transactions, 2);
        assert_eq!(d.blocks, 14.0);
        assert_eq!(
            d.request_delay_ms, 4.0,
            "request delay averages over requested commits"
        );
    }

    #[test]
    fn from_fresh_to_first_commits() {
        let fresh = parse(include_str!("fixtures/jbd2-external-fresh.info")).unwrap();
        let after = parse(include_str!("fixtures/jbd2-external-after.info")).unwrap();
        let d = delta(&fresh, &after);
        assert_eq!(d.transactions, 6);
        assert_eq!(d.handles, 6.0 * 206.0);
        assert_eq!(d.logged_blocks, 72.0);
    }
}
