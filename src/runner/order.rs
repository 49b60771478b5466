//! The order in which series (cell × workload) get their repetitions.
//!
//! - `sequential`: every repetition of one series, then the next (AABB) — the way studies
//!   were run by hand, and the most exposed to drift.
//! - `interleaved`: rounds; each round gives every active series one repetition (ABAB), as
//!   hyperfine users ask for (issues #21, #483), so drift and thermal effects hit all cells
//!   alike.
//! - `randomized`: rounds in a seeded random order (Mersenne Twister MT19937-64 with a
//!   Fisher–Yates shuffle, stable across versions), so periodic effects cannot line up with
//!   a cell either.
//!
//! Rounds are balanced: a series with fewer repetitions goes first (this matters after a
//! resume, where the repetition in flight was lost). Pure; the order actually used is stored
//! as `order_index` with every trial.

use crate::plan::Order;
use rand_mt::Mt64;

/// Chooses the next series.
pub struct Scheduler {
    order: Order,
    rng: Mt64,
    round: Vec<usize>,
}

impl Scheduler {
    /// A scheduler; `seed` matters for `randomized` only.
    pub fn new(order: Order, seed: u64) -> Scheduler {
        Scheduler {
            order,
            rng: Mt64::new(seed),
            round: Vec::new(),
        }
    }

    fn new_round(&mut self, active: &[bool], done: &[u32]) {
        let mut r: Vec<usize> = (0..active.len()).filter(|&i| active[i]).collect();
        if self.order == Order::Randomized {
            for i in (1..r.len()).rev() {
                let j = (self.rng.next_u64() % (i as u64 + 1)) as usize;
                r.swap(i, j);
            }
        }
        // Stable: ties keep index or shuffled order.
        r.sort_by_key(|&i| done[i]);
        r.reverse(); // popped from the back
        self.round = r;
    }

    /// The next series among those with `active[i]`, given how many repetitions each has.
    pub fn next(&mut self, active: &[bool], done: &[u32]) -> Option<usize> {
        if self.order == Order::Sequential {
            return (0..active.len()).find(|&i| active[i]);
        }
        for _ in 0..2 {
            while let Some(i) = self.round.pop() {
                if active.get(i).copied().unwrap_or(false) {
                    return Some(i);
                }
            }
            self.new_round(active, done);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run a fixed number of repetitions for `n` series and return the visit order.
    fn visits(order: Order, n: usize, reps: u32, seed: u64) -> Vec<usize> {
        let mut s = Scheduler::new(order, seed);
        let mut done = vec![0u32; n];
        let mut out = Vec::new();
        loop {
            let active: Vec<bool> = done.iter().map(|&d| d < reps).collect();
            let Some(i) = s.next(&active, &done) else {
                break;
            };
            done[i] += 1;
            out.push(i);
        }
        out
    }

    #[test]
    fn sequential_is_aabb() {
        assert_eq!(visits(Order::Sequential, 2, 3, 0), vec![0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn interleaved_is_abab() {
        assert_eq!(visits(Order::Interleaved, 3, 2, 0), vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn randomized_rounds_are_permutations_and_reproducible() {
        let a = visits(Order::Randomized, 5, 4, 42);
        assert_eq!(a, visits(Order::Randomized, 5, 4, 42));
        assert_ne!(a, visits(Order::Randomized, 5, 4, 43));
        for round in a.chunks(5) {
            let mut r = round.to_vec();
            r.sort();
            assert_eq!(r, vec![0, 1, 2, 3, 4]);
        }
        assert_ne!(
            a[..5],
            [0, 1, 2, 3, 4],
            "seed 42 should not give the identity"
        );
    }

    #[test]
    fn rounds_are_balanced_after_a_resume() {
        // Series 1 lost its repetition in flight: it goes first.
        let mut s = Scheduler::new(Order::Interleaved, 0);
        let done = vec![3, 2, 3];
        assert_eq!(s.next(&[true, true, true], &done), Some(1));
        assert_eq!(s.next(&[true, true, true], &done), Some(0));
    }

    #[test]
    fn inactive_series_are_skipped_and_none_ends() {
        let mut s = Scheduler::new(Order::Interleaved, 0);
        assert_eq!(s.next(&[false, true], &[0, 0]), Some(1));
        assert_eq!(s.next(&[false, false], &[0, 0]), None);
    }
}
