//! The ranks an mdtest run is made of, as a small trait: who am I, how many are we, wait
//! for everyone, agree on failure, combine numbers. The engine calls only these.
//!
//! [`Solo`] is the one-rank team of a plain run; [`Threads`] runs ranks as threads of one
//! process (the tests use it to check what several ranks do; no MPI needed). The MPI layer
//! implements [`Team`] over its communicator (`src/mpi/comm.rs`: `barrier`, `agree`,
//! `sum_max_napping`).

use anyhow::{anyhow, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The ranks of one run. Every method but `rank` and `size` is collective: every rank calls
/// it, in the same order.
pub trait Team {
    /// This rank (0-based).
    fn rank(&self) -> u32;
    /// Number of ranks.
    fn size(&self) -> u32;
    /// Wait until every rank arrives.
    fn barrier(&self);
    /// `Ok` on every rank iff `local` is `Ok` on every rank; otherwise every rank gets an
    /// error (rank 0's names the failed ranks). Also a barrier.
    fn agree(&self, local: Result<()>) -> Result<()>;
    /// Element-wise sums of `sums` and maxima of `maxes` over all ranks, on every rank.
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>);
    /// Rank 0's `v` on every rank.
    fn broadcast(&self, v: u64) -> u64 {
        let mine = if self.rank() == 0 { v } else { 0 };
        self.sum_max(&[mine], &[0]).0.first().copied().unwrap_or(v)
    }
}

/// One rank alone.
#[derive(Debug, Default, Clone, Copy)]
pub struct Solo;

impl Team for Solo {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn barrier(&self) {}
    fn agree(&self, local: Result<()>) -> Result<()> {
        local
    }
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>) {
        (sums.to_vec(), maxes.to_vec())
    }
}

/// A barrier that polls instead of sleeping, as MPI libraries' barriers do: a rank that
/// arrives first spins (then yields), so the last one releases the others in microseconds
/// rather than after a futex wake-up — a phase's time ends at its closing barrier.
#[derive(Default)]
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if spins < 2000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// One rank's contribution to an exchange: sums, maxima, an error message.
type Slot = (Vec<u64>, Vec<u64>, Option<String>);

/// What the threads of a [`Threads`] team share.
struct Shared {
    barrier: SpinBarrier,
    /// One slot per rank for the values being combined.
    slots: Mutex<Vec<Slot>>,
}

/// Ranks as threads of one process: give each thread one of [`Threads::new`]'s members.
pub struct Threads {
    rank: u32,
    size: u32,
    shared: Arc<Shared>,
}

impl Threads {
    /// A team of `n` ranks (at least 1); member `i` is rank `i`.
    pub fn new(n: u32) -> Vec<Threads> {
        let n = n.max(1);
        let shared = Arc::new(Shared {
            barrier: SpinBarrier {
                n: n as usize,
                ..SpinBarrier::default()
            },
            slots: Mutex::new(vec![(Vec::new(), Vec::new(), None); n as usize]),
        });
        (0..n)
            .map(|rank| Threads {
                rank,
                size: n,
                shared: Arc::clone(&shared),
            })
            .collect()
    }

    /// Put this rank's values in its slot, wait for all, read every slot, wait again (so no
    /// slot is overwritten before all have read it).
    fn exchange<R>(&self, mine: Slot, read: impl FnOnce(&[Slot]) -> R) -> R {
        let lock = || self.shared.slots.lock().unwrap_or_else(|p| p.into_inner());
        lock()[self.rank as usize] = mine;
        self.shared.barrier.wait();
        let out = read(&lock());
        self.shared.barrier.wait();
        out
    }
}

impl Team for Threads {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn barrier(&self) {
        self.shared.barrier.wait();
    }
    fn agree(&self, local: Result<()>) -> Result<()> {
        let text = local.as_ref().err().map(|e| format!("{e:#}"));
        let failed: Vec<String> = self.exchange((Vec::new(), Vec::new(), text), |all| {
            all.iter()
                .enumerate()
                .filter_map(|(r, s)| s.2.as_ref().map(|t| format!("rank {r}: {t}")))
                .collect()
        });
        match (local, failed.is_empty()) {
            (Ok(()), true) => Ok(()),
            (Err(e), _) if self.size == 1 => Err(e),
            _ if self.rank == 0 => Err(anyhow!("{}", failed.join("; "))),
            _ => Err(anyhow!("another rank failed")),
        }
    }
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let (ns, nm) = (sums.len(), maxes.len());
        self.exchange((sums.to_vec(), maxes.to_vec(), None), |all| {
            // Element by element over the ranks' slots (a shorter slot adds nothing).
            let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
            let s = (0..ns).map(|i| all.iter().fold(0u64, |a, r| a.saturating_add(at(&r.0, i))));
            let m = (0..nm).map(|i| all.iter().map(|r| at(&r.1, i)).max().unwrap_or(0));
            (s.collect(), m.collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mdtest::test_support::on_ranks;

    #[test]
    fn threads_combine_agree_and_broadcast() {
        let out = on_ranks(3, |t| {
            let r = u64::from(t.rank());
            let (sum, max) = t.sum_max(&[r, 1], &[r * 10]);
            let b = t.broadcast(100 + r);
            let ok = t.agree(Ok(())).is_ok();
            let local = if r == 1 {
                Err(anyhow!("disk full"))
            } else {
                Ok(())
            };
            let bad = t.agree(local).unwrap_err().to_string();
            (sum, max, b, ok, bad)
        });
        for (r, (sum, max, b, ok, bad)) in out.into_iter().enumerate() {
            assert_eq!(sum, [3, 3]);
            assert_eq!(max, [20]);
            assert_eq!(b, 100, "rank 0's value everywhere");
            assert!(ok);
            if r == 0 {
                assert_eq!(bad, "rank 1: disk full");
            } else {
                assert_eq!(bad, "another rank failed");
            }
        }
    }

    #[test]
    fn the_spin_barrier_releases_no_rank_early_over_many_rounds() {
        use std::sync::atomic::AtomicU64;
        let count = AtomicU64::new(0);
        on_ranks(4, |t| {
            for round in 1..=300u64 {
                count.fetch_add(1, Ordering::Relaxed);
                t.barrier();
                assert_eq!(count.load(Ordering::Relaxed), 4 * round);
                t.barrier();
            }
        });
    }

    #[test]
    fn solo_is_rank_zero_of_one() {
        let s = Solo;
        assert_eq!((s.rank(), s.size()), (0, 1));
        assert_eq!(s.sum_max(&[4], &[5]), (vec![4], vec![5]));
        assert_eq!(s.broadcast(7), 7);
        assert!(s.agree(Err(anyhow!("x"))).is_err());
    }
}
