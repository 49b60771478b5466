//! Rank 0's side of an MPI `iozone -t` repetition: the ranks' records turned into IOzone's
//! phase outcomes (so IOzone's figures are computed by the same code as for threads), the
//! last-done aggregate of [`crate::mpi::aggregate`], the stonewall lag and the MPI metrics.

use super::{IozoneRep, RankPhases, RankWorker, REC};
use crate::metric::{Metric, Unit};
use crate::mpi::aggregate::{self, RankPhase};
use crate::mpi::clock::ClockInfo;
use crate::workload::iozone::throughput::{PhaseOutcome, ThroughputOutcome, WorkerPhase};
use crate::workload::iozone::Test;
use std::time::{Duration, Instant};

/// Rank 0: the gathered records (`REC` values per phase and rank, `n` ranks) as IOzone's
/// phase outcomes and as per-rank records.
pub(super) fn combine(
    all: &[f64],
    clock: ClockInfo,
    tests: &[Test],
    n: usize,
    stonewall: bool,
) -> (IozoneRep, ThroughputOutcome) {
    let per_rank = tests.len() * REC;
    let t0 = (0..n)
        .map(|r| clock.to_rank0(r, all[r * per_rank]))
        .fold(f64::INFINITY, f64::min);
    // IOzone's figures are computed from Instants; any origin will do.
    let base = Instant::now();
    let at = |s: f64| base + Duration::from_secs_f64(s.max(0.0));
    let mut phases = Vec::new();
    let mut outcomes = Vec::new();
    for (pi, &test) in tests.iter().enumerate() {
        let ranks: Vec<RankWorker> = (0..n)
            .map(|r| {
                let v = &all[r * per_rank + pi * REC..][..REC];
                let t = |x: f64| clock.to_rank0(r, x) - t0;
                let (counted, timed) = (v[3] as u64, v[1]);
                RankWorker {
                    rank: r as u32,
                    start: t(v[0]),
                    timed,
                    finish: t(v[2]),
                    counted,
                    total: v[4] as u64,
                    stopped: v[5] > 0.0,
                    rate: counted as f64 / 1024.0 / timed.max(1e-9),
                }
            })
            .collect();
        let workers: Vec<WorkerPhase> = ranks
            .iter()
            .map(|r| WorkerPhase {
                start: at(r.start),
                timed: r.timed,
                finish: at(r.finish),
                counted: r.counted,
                total: r.total,
                stopped: r.stopped,
            })
            .collect();
        let first = ranks.iter().map(|r| r.start).fold(f64::INFINITY, f64::min);
        let last = ranks.iter().map(|r| r.finish).fold(0.0, f64::max);
        outcomes.push(PhaseOutcome {
            test,
            workers,
            parent: Duration::from_secs_f64((last - first).max(0.0)),
        });
        let recs: Vec<RankPhase> = ranks
            .iter()
            .map(|r| RankPhase {
                rank: r.rank,
                items: r.total / 1024,
                bytes: r.total,
                start: r.start,
                end: r.finish,
                sync: 0.0,
                stonewall: None,
            })
            .collect();
        let Some(agg) = aggregate::aggregate(&recs) else {
            continue;
        };
        phases.push(RankPhases {
            phase: test.phase(),
            stonewall_lag: stonewall_lag(&ranks, test, stonewall),
            ranks,
            agg,
        });
    }
    (
        IozoneRep { phases, clock },
        ThroughputOutcome { phases: outcomes },
    )
}

/// How late the slowest rank noticed the stonewall: its stop − the first rank's loop end.
fn stonewall_lag(ranks: &[RankWorker], test: Test, stonewall: bool) -> Option<f64> {
    // fwrite and fread (`-i 6`, `-i 7`) ignore the stonewall.
    if !stonewall || test.number() >= 6 {
        return None;
    }
    let first = ranks
        .iter()
        .filter(|r| !r.stopped)
        .map(|r| r.start + r.timed)
        .fold(f64::INFINITY, f64::min);
    let latest = ranks
        .iter()
        .filter(|r| r.stopped)
        .map(|r| r.start + r.timed)
        .fold(f64::NEG_INFINITY, f64::max);
    (first.is_finite() && latest.is_finite()).then(|| (latest - first).max(0.0))
}

/// The MPI figures of one phase, beside IOzone's.
pub(super) fn mpi_metrics(p: &RankPhases) -> Vec<Metric> {
    let rates: Vec<f64> = p.ranks.iter().map(|r| r.rate).collect();
    let mut m = vec![
        ("ranks", Unit::Count, p.ranks.len() as f64),
        ("start_skew", Unit::Seconds, p.agg.start_skew),
        ("end_skew", Unit::Seconds, p.agg.end_skew),
    ];
    if let Some(s) = aggregate::spread(&rates) {
        m.push(("worker_spread", Unit::Percent, s.spread_pct));
    }
    if let Some(lag) = p.stonewall_lag {
        m.push(("stonewall_lag", Unit::Seconds, lag));
    }
    aggregate::metrics(p.phase, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(rank: u32, start: f64, timed: f64, stopped: bool) -> RankWorker {
        RankWorker {
            rank,
            start,
            timed,
            finish: start + timed,
            counted: 1024,
            total: 1024,
            stopped,
            rate: 1.0,
        }
    }

    #[test]
    fn stonewall_lag_is_latest_stop_after_first_finish() {
        let r = [
            rw(0, 0.0, 1.0, false),
            rw(1, 0.1, 0.95, true),
            rw(2, 0.0, 1.02, true),
        ];
        let lag = stonewall_lag(&r, Test::Read, true).unwrap();
        assert!((lag - 0.05).abs() < 1e-12, "{lag}");
        assert!(stonewall_lag(&r, Test::Read, false).is_none());
        assert!(stonewall_lag(&r, Test::Fread, true).is_none());
        // Nobody stopped (all finished before noticing): no lag to report.
        let all = [rw(0, 0.0, 1.0, false), rw(1, 0.0, 1.0, false)];
        assert!(stonewall_lag(&all, Test::Write, true).is_none());
    }
}
