//! One clock for all ranks: estimating each rank's `MPI_Wtime` offset from rank 0's.
//!
//! `MPI_Wtime` is a per-node clock (MPICH and Open MPI read `CLOCK_MONOTONIC` or the TSC),
//! so times from ranks on one node can be compared as they are, but times from different
//! nodes cannot. IOR aligns nodes by broadcasting rank 0's time after a barrier, which folds
//! the barrier's own exit skew into the correction — exactly the quantity fslab reports.
//! fslab instead uses Cristian's method: rank 0 sends a ping, the rank answers with its
//! clock, rank 0 notes send and receive times; of several rounds the one with the shortest
//! round trip gives `offset = remote − (sent + received) / 2`, accurate to half that round
//! trip. Ranks on rank 0's node get offset 0 (same kernel clock, nothing to estimate).

use serde::Serialize;

/// One ping round as seen by rank 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingSample {
    /// Rank 0's clock when it sent the ping.
    pub sent: f64,
    /// The remote rank's clock when it answered.
    pub remote: f64,
    /// Rank 0's clock when the answer arrived.
    pub received: f64,
}

/// A rank's clock relative to rank 0's: `remote_time − offset` is rank 0's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Offset {
    /// Seconds to subtract from the rank's clock.
    pub offset: f64,
    /// Uncertainty: half the shortest round trip (0 for ranks on rank 0's node).
    pub uncertainty: f64,
}

impl Offset {
    /// The offset of a rank that shares rank 0's clock.
    pub const SAME_CLOCK: Offset = Offset {
        offset: 0.0,
        uncertainty: 0.0,
    };
}

/// The offset from the round with the shortest round trip, or `None` without samples.
pub fn estimate(samples: &[PingSample]) -> Option<Offset> {
    let best = samples
        .iter()
        .filter(|s| s.received >= s.sent)
        .min_by(|a, b| (a.received - a.sent).total_cmp(&(b.received - b.sent)))?;
    let rtt = best.received - best.sent;
    Some(Offset {
        offset: best.remote - (best.sent + best.received) / 2.0,
        uncertainty: rtt / 2.0,
    })
}

/// Clock information of one run, for reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClockInfo {
    /// Offset per rank (index = rank).
    pub offsets: Vec<Offset>,
    /// `MPI_Wtick`: the clock's resolution in seconds.
    pub tick: f64,
}

impl ClockInfo {
    /// Largest absolute offset over all ranks.
    pub fn max_offset(&self) -> f64 {
        self.offsets
            .iter()
            .map(|o| o.offset.abs())
            .fold(0.0, f64::max)
    }

    /// Largest uncertainty over all ranks.
    pub fn max_uncertainty(&self) -> f64 {
        self.offsets
            .iter()
            .map(|o| o.uncertainty)
            .fold(0.0, f64::max)
    }

    /// A time of `rank` on rank 0's clock.
    pub fn to_rank0(&self, rank: usize, t: f64) -> f64 {
        t - self.offsets.get(rank).map_or(0.0, |o| o.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn the_shortest_round_trip_wins() {
        // The remote clock is 5 s ahead. A slow round (queued answer) would mislead by 0.5 s.
        let s = [
            PingSample {
                sent: 100.0,
                remote: 106.0,
                received: 101.0,
            },
            PingSample {
                sent: 200.0,
                remote: 205.0001,
                received: 200.0002,
            },
        ];
        let o = estimate(&s).unwrap();
        assert_relative_eq!(o.offset, 5.0, epsilon = 1e-9);
        assert_relative_eq!(o.uncertainty, 0.0001, epsilon = 1e-12);
        assert!(estimate(&[]).is_none());
    }

    #[test]
    fn converting_to_rank0_time_subtracts_the_offset() {
        let c = ClockInfo {
            offsets: vec![
                Offset::SAME_CLOCK,
                Offset {
                    offset: -2.0,
                    uncertainty: 1e-6,
                },
            ],
            tick: 1e-9,
        };
        assert_relative_eq!(c.to_rank0(1, 10.0), 12.0);
        assert_relative_eq!(c.to_rank0(0, 10.0), 10.0);
        assert_relative_eq!(c.max_offset(), 2.0);
        assert_relative_eq!(c.max_uncertainty(), 1e-6);
    }
}
