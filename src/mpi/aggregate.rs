//! How the ranks' measurements of one phase become one result (pure functions, no MPI).
//!
//! The rules are the "last done" rule of IOR and of its metadata benchmark
//! (`ReduceIterResults` takes the minimum of the start times and the maximum of the end
//! times):
//!
//! * **aggregate rate** = all items (or bytes) of all ranks / (latest finish − earliest start);
//! * **per-rank rate** = the rank's items / its own elapsed time, summarised as minimum,
//!   maximum, mean and relative spread `(max − min) / mean` in percent, over the ranks that
//!   had work in the phase;
//! * **phase-start skew** = latest start − earliest start (how far apart the ranks left the
//!   barrier), and **finish skew** = latest finish − earliest finish (the tail);
//! * **stonewall** (IOzone's rule, optional): the window ends when the first rank finishes its
//!   share. Each rank notes how many items it had done when it learned that, and when; the
//!   stonewall rate is the sum of those items over (latest such note − earliest start). Items a
//!   rank did after its note are not counted, so the figure errs low, never high, and the lag
//!   between the first finish and the latest note is reported as its precision.
//!
//! All times are seconds on one common clock (rank 0's; see [`super::clock`]).

use crate::metric::{Metric, Unit};
use serde::Serialize;

/// Where a rank stood when it learned that the first rank had finished (stonewalling).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StonewallMark {
    /// Items this rank had completed at that moment.
    pub items: u64,
    /// When (seconds, common clock).
    pub at: f64,
}

/// One rank's part of one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RankPhase {
    /// The rank.
    pub rank: u32,
    /// Items (directories or files) this rank completed.
    pub items: u64,
    /// Bytes of file data this rank wrote in the phase.
    pub bytes: u64,
    /// Start of the rank's work (seconds, common clock), taken right after the opening barrier.
    pub start: f64,
    /// End of the rank's work, including its timed syncfs if any.
    pub end: f64,
    /// Seconds of the rank's timed syncfs (0 without `--sync`).
    pub sync: f64,
    /// Stonewall mark, when stonewalling is on.
    pub stonewall: Option<StonewallMark>,
}

impl RankPhase {
    /// Seconds from this rank's start to its end.
    pub fn elapsed(&self) -> f64 {
        self.end - self.start
    }

    /// Items per second of this rank alone.
    pub fn rate(&self) -> f64 {
        self.items as f64 / self.elapsed().max(1e-9)
    }
}

/// Minimum, maximum, mean and relative spread of one per-rank quantity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// `(max − min) / mean × 100` (0 when the mean is 0).
    pub spread_pct: f64,
}

/// The spread of `values`, or `None` when there are none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let spread_pct = if mean > 0.0 {
        (max - min) / mean * 100.0
    } else {
        0.0
    };
    Some(Spread {
        min,
        max,
        mean,
        spread_pct,
    })
}

/// Stonewall figures of one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StonewallAggregate {
    /// When the first rank finished its share (seconds after the earliest start).
    pub first_finish: f64,
    /// Items counted: the sum of the ranks' marks.
    pub items: u64,
    /// Seconds from the earliest start to the latest mark.
    pub window: f64,
    /// `items / window`.
    pub rate: f64,
    /// Latest mark − first finish: how late the slowest rank noticed (precision of the figure).
    pub lag: f64,
    /// Fewest items any rank had done at its mark.
    pub rank_items_min: u64,
    /// Most items any rank had done at its mark.
    pub rank_items_max: u64,
}

/// One phase over all ranks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseAggregate {
    /// Number of ranks.
    pub ranks: usize,
    /// Items over all ranks.
    pub items: u64,
    /// Bytes over all ranks.
    pub bytes: u64,
    /// Earliest start (seconds, common clock).
    pub first_start: f64,
    /// Latest end (seconds, common clock).
    pub last_end: f64,
    /// `last_end − first_start`.
    pub elapsed: f64,
    /// `items / elapsed`.
    pub rate: f64,
    /// `bytes / elapsed` in bytes per second.
    pub bytes_per_sec: f64,
    /// Latest start − earliest start.
    pub start_skew: f64,
    /// Latest end − earliest end.
    pub end_skew: f64,
    /// Per-rank rates (items/s) over ranks that had items; `None` if none had.
    pub rank_rate: Option<Spread>,
    /// Per-rank elapsed seconds over ranks that had items.
    pub rank_elapsed: Option<Spread>,
    /// Longest timed syncfs of any rank (seconds).
    pub sync_max: f64,
    /// Stonewall figures, when every rank has a mark.
    pub stonewall: Option<StonewallAggregate>,
}

/// Combine the ranks' records of one phase; `None` for an empty slice.
pub fn aggregate(ranks: &[RankPhase]) -> Option<PhaseAggregate> {
    let first = ranks.first()?;
    // The earliest or latest (`pick`) of one time over the ranks.
    let over = |time: fn(&RankPhase) -> f64, pick: fn(f64, f64) -> f64| {
        ranks.iter().map(time).fold(time(first), pick)
    };
    let (first_start, last_start) = (over(|r| r.start, f64::min), over(|r| r.start, f64::max));
    let (first_end, last_end) = (over(|r| r.end, f64::min), over(|r| r.end, f64::max));
    let items: u64 = ranks.iter().map(|r| r.items).sum();
    let bytes: u64 = ranks.iter().map(|r| r.bytes).sum();
    let elapsed = last_end - first_start;
    let secs = elapsed.max(1e-9);
    let working: Vec<&RankPhase> = ranks.iter().filter(|r| r.items > 0).collect();
    let rates: Vec<f64> = working.iter().map(|r| r.rate()).collect();
    let times: Vec<f64> = working.iter().map(|r| r.elapsed()).collect();
    let stonewall = stonewall(ranks, first_start);
    Some(PhaseAggregate {
        ranks: ranks.len(),
        items,
        bytes,
        first_start,
        last_end,
        elapsed,
        rate: items as f64 / secs,
        bytes_per_sec: bytes as f64 / secs,
        start_skew: last_start - first_start,
        end_skew: last_end - first_end,
        rank_rate: spread(&rates),
        rank_elapsed: spread(&times),
        sync_max: ranks.iter().map(|r| r.sync).fold(0.0, f64::max),
        stonewall,
    })
}

fn stonewall(ranks: &[RankPhase], first_start: f64) -> Option<StonewallAggregate> {
    let marks: Vec<StonewallMark> = ranks.iter().map(|r| r.stonewall).collect::<Option<_>>()?;
    // The first finisher is the rank that ended earliest among those that did all their work;
    // every rank ended, so that is the earliest end.
    let first_finish = ranks.iter().map(|r| r.end).fold(f64::INFINITY, f64::min);
    let latest_mark = marks.iter().map(|m| m.at).fold(f64::NEG_INFINITY, f64::max);
    let items: u64 = marks.iter().map(|m| m.items).sum();
    let window = latest_mark - first_start;
    Some(StonewallAggregate {
        first_finish: first_finish - first_start,
        items,
        window,
        rate: items as f64 / window.max(1e-9),
        lag: (latest_mark - first_finish).max(0.0),
        rank_items_min: marks.iter().map(|m| m.items).min().unwrap_or(0),
        rank_items_max: marks.iter().map(|m| m.items).max().unwrap_or(0),
    })
}

/// The stored metrics of one aggregated phase. `unit` is the phase's rate unit; `kib_rate`
/// adds a `throughput` in KiB/s (file-writing phases).
pub fn phase_metrics(phase: &str, a: &PhaseAggregate, unit: Unit, kib_rate: bool) -> Vec<Metric> {
    use Unit::{Count, KiBPerSec, Percent, Seconds};
    let mut m = vec![("elapsed", Seconds, a.elapsed), ("rate", unit, a.rate)];
    if kib_rate {
        m.push(("throughput", KiBPerSec, a.bytes_per_sec / 1024.0));
    }
    m.push(("items", Count, a.items as f64));
    m.push(("ranks", Count, a.ranks as f64));
    if let Some(r) = a.rank_rate {
        m.push(("rank_rate_min", unit, r.min));
        m.push(("rank_rate_max", unit, r.max));
        m.push(("rank_rate_mean", unit, r.mean));
        m.push(("rank_rate_spread", Percent, r.spread_pct));
    }
    m.push(("start_skew", Seconds, a.start_skew));
    m.push(("end_skew", Seconds, a.end_skew));
    if a.sync_max > 0.0 {
        m.push(("sync_time", Seconds, a.sync_max));
    }
    if let Some(s) = a.stonewall {
        m.push(("stonewall_rate", unit, s.rate));
        m.push(("stonewall_items", Count, s.items as f64));
        m.push(("stonewall_elapsed", Seconds, s.window));
        m.push(("stonewall_lag", Seconds, s.lag));
        m.push(("stonewall_rank_items_min", Count, s.rank_items_min as f64));
        m.push(("stonewall_rank_items_max", Count, s.rank_items_max as f64));
    }
    metrics(phase, m)
}

/// `(name, unit, value)` triples as metrics of `phase`.
pub fn metrics(phase: &str, m: Vec<(&str, Unit, f64)>) -> Vec<Metric> {
    m.into_iter()
        .map(|(name, unit, v)| Metric::new(phase, name, unit, v))
        .collect()
}

/// Warnings about one aggregated phase that the aggregate rate alone hides.
pub fn warnings(phase: &str, a: &PhaseAggregate) -> Vec<String> {
    let advice = if a.stonewall.is_some() {
        "see the stonewall figures for the rate while all ranks ran"
    } else {
        "use --stonewall to measure while all ranks run"
    };
    warnings_with(phase, a, advice)
}

/// [`warnings`] with the engine's own advice for ranks whose rates differ.
pub fn warnings_with(phase: &str, a: &PhaseAggregate, imbalance_advice: &str) -> Vec<String> {
    let mut w = Vec::new();
    // A late start dilutes the aggregate: the earliest rank's clock runs while others wait.
    if a.ranks > 1 && a.start_skew > 0.01 && a.start_skew > 0.05 * a.elapsed {
        w.push(format!(
            "{phase}: ranks started {:.1} ms apart ({:.0}% of the phase); the aggregate rate counts that wait — check for overloaded nodes or a slow network",
            a.start_skew * 1e3,
            a.start_skew / a.elapsed.max(1e-9) * 100.0
        ));
    }
    if let Some(r) = a.rank_rate {
        if a.ranks > 1 && r.spread_pct > 25.0 {
            w.push(format!(
                "{phase}: per-rank rates differ by {:.0}% of their mean (min {:.1}, max {:.1}); the slowest rank sets the aggregate — {imbalance_advice}",
                r.spread_pct, r.min, r.max
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn rp(rank: u32, items: u64, start: f64, end: f64) -> RankPhase {
        RankPhase {
            rank,
            items,
            bytes: items * 4096,
            start,
            end,
            sync: 0.0,
            stonewall: None,
        }
    }

    /// `r` with a stonewall mark of `items` done at `at`.
    fn marked(r: RankPhase, items: u64, at: f64) -> RankPhase {
        let stonewall = Some(StonewallMark { items, at });
        RankPhase { stonewall, ..r }
    }

    #[test]
    fn aggregate_is_all_items_over_first_start_to_last_end() {
        // Rank 0: 100 items in 1 s starting at 10.0; rank 1: 100 items in 2 s starting at 10.5.
        let a = aggregate(&[rp(0, 100, 10.0, 11.0), rp(1, 100, 10.5, 12.5)]).unwrap();
        assert_eq!(a.items, 200);
        assert_relative_eq!(a.elapsed, 2.5);
        assert_relative_eq!(a.rate, 80.0);
        assert_relative_eq!(a.bytes_per_sec, 200.0 * 4096.0 / 2.5);
        assert_relative_eq!(a.start_skew, 0.5);
        assert_relative_eq!(a.end_skew, 1.5);
        let r = a.rank_rate.unwrap();
        assert_relative_eq!(r.min, 50.0);
        assert_relative_eq!(r.max, 100.0);
        assert_relative_eq!(r.mean, 75.0);
        assert_relative_eq!(r.spread_pct, 50.0 / 75.0 * 100.0);
        // Not the sum of per-rank rates (IOzone's "children see" figure would be 150).
        assert!(a.rate < r.min + r.max);
        assert!(a.stonewall.is_none());
    }

    #[test]
    fn idle_ranks_count_in_time_but_not_in_rank_spread() {
        let a = aggregate(&[rp(0, 10, 0.0, 1.0), rp(1, 0, 0.0, 0.0)]).unwrap();
        assert_eq!(a.ranks, 2);
        let r = a.rank_rate.unwrap();
        assert_relative_eq!(r.min, 10.0);
        assert_relative_eq!(r.spread_pct, 0.0);
        assert!(aggregate(&[]).is_none());
        assert!(aggregate(&[rp(0, 0, 0.0, 0.0)])
            .unwrap()
            .rank_rate
            .is_none());
    }

    #[test]
    fn stonewall_counts_items_up_to_each_mark() {
        let a = marked(rp(0, 100, 0.0, 1.0), 100, 1.0);
        let mut b = marked(rp(1, 100, 0.0, 2.0), 48, 1.01);
        let g = aggregate(&[a, b]).unwrap();
        let s = g.stonewall.unwrap();
        assert_relative_eq!(s.first_finish, 1.0);
        assert_eq!(s.items, 148);
        assert_relative_eq!(s.window, 1.01);
        assert_relative_eq!(s.rate, 148.0 / 1.01);
        assert_relative_eq!(s.lag, 0.01, epsilon = 1e-12);
        assert_eq!((s.rank_items_min, s.rank_items_max), (48, 100));
        // The last-done figures are unchanged by stonewalling.
        assert_relative_eq!(g.rate, 100.0);
        // A rank without a mark means no stonewall figures at all.
        b.stonewall = None;
        assert!(aggregate(&[a, b]).unwrap().stonewall.is_none());
    }

    #[test]
    fn metrics_name_every_figure_with_its_unit() {
        let g = aggregate(&[marked(rp(0, 10, 0.0, 1.0), 10, 1.0)]).unwrap();
        let m = phase_metrics("file_create", &g, Unit::FilesPerSec, true);
        let get = |n: &str| m.iter().find(|x| x.name == n).map(|x| (x.unit, x.value));
        assert_eq!(get("rate"), Some((Unit::FilesPerSec, 10.0)));
        assert_eq!(get("throughput"), Some((Unit::KiBPerSec, 40.0)));
        assert_eq!(get("items"), Some((Unit::Count, 10.0)));
        assert_eq!(get("start_skew"), Some((Unit::Seconds, 0.0)));
        assert_eq!(get("rank_rate_spread"), Some((Unit::Percent, 0.0)));
        assert_eq!(get("stonewall_items"), Some((Unit::Count, 10.0)));
        assert!(get("sync_time").is_none());
        let d = phase_metrics("dir_create", &g, Unit::DirsPerSec, false);
        assert!(d.iter().all(|x| x.name != "throughput"));
    }

    #[test]
    fn warnings_flag_skew_and_imbalance() {
        let g = aggregate(&[rp(0, 100, 0.0, 1.0), rp(1, 100, 0.2, 2.0)]).unwrap();
        let w = warnings("file_create", &g);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("200.0 ms apart"), "{w:?}");
        let ok = aggregate(&[rp(0, 100, 0.0, 1.0), rp(1, 100, 0.0001, 1.0)]).unwrap();
        assert!(warnings("file_create", &ok).is_empty());
    }
}
