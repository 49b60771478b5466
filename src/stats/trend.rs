//! Checks over the execution order of repetitions: a first repetition much slower than the
//! rest (a cold cache or lazy initialisation, as hyperfine warns), and drift (a monotonic
//! trend across the order, e.g. a file system filling or ageing, thermal throttling).
//!
//! **Drift** uses the Mann–Kendall trend test: `S = Σ_{i<j} sign(y_j − y_i)` over the values
//! in execution order, Kendall's `τ = S / (n(n−1)/2)`. Without ties the two-sided p-value is
//! exact: `S = n(n−1)/2 − 2·I` where I is the number of inversions of a random permutation,
//! whose distribution (the Mahonian numbers) is built by convolution. With ties the normal
//! approximation `Z = (S − sign S)/√Var(S)` with
//! `Var(S) = [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18` is used, with the continuity correction
//! of the classic Mann–Kendall test (scipy's `kendalltau` omits that correction). The size of the drift is the Theil–Sen slope
//! (the median of all pairwise slopes), reported over the whole series relative to the
//! median. A drift is flagged when p < α and that relative change exceeds a minimum.

use super::compare::{normal_two_sided, ranks};
use super::summary::median_sorted;
use serde::Serialize;

/// Result of the Mann–Kendall test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// Kendall's S.
    pub s: f64,
    /// Kendall's τ (S over the number of pairs; τ-a).
    pub tau: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` is exact (no ties) or from the normal approximation.
    pub exact: bool,
    /// The variance of S under no trend (ties accounted for), for combining series.
    pub var: f64,
}

/// Mann–Kendall test of `ys` in execution order; `None` for fewer than 3 values or a value
/// that is not finite.
pub fn mann_kendall(ys: &[f64]) -> Option<Trend> {
    let n = ys.len();
    if n < 3 || ys.iter().any(|y| !y.is_finite()) {
        return None;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += i64::from(ys[j] > ys[i]) - i64::from(ys[j] < ys[i]);
        }
    }
    let pairs = (n * (n - 1) / 2) as f64;
    let ties: Vec<f64> = ranks(ys).1.into_iter().map(|t| t as f64).collect();
    let var = s_variance(n, &ties);
    let (p, exact) = if ties.is_empty() {
        (exact_kendall_p(n, s), true)
    } else {
        (normal_two_sided(s as f64, 1.0, var), false)
    };
    Some(Trend {
        s: s as f64,
        tau: s as f64 / pairs,
        p,
        exact,
        var,
    })
}

/// The variance of Kendall's S under no trend, for `n` values with tie groups of the given
/// sizes.
fn s_variance(n: usize, ties: &[f64]) -> f64 {
    let nf = n as f64;
    (nf * (nf - 1.0) * (2.0 * nf + 5.0)
        - ties
            .iter()
            .map(|t| t * (t - 1.0) * (2.0 * t + 5.0))
            .sum::<f64>())
        / 18.0
}

/// Exact two-sided p-value of Kendall's S for n values without ties: P(|S| ≥ |s|).
fn exact_kendall_p(n: usize, s: i64) -> f64 {
    let max_inv = n * (n - 1) / 2;
    // Distribution of the number of inversions of a uniform random permutation, built one
    // element at a time: the i-th element adds 0..i−1 inversions with equal probability.
    let mut dist = vec![0.0f64; max_inv + 1];
    dist[0] = 1.0;
    for i in 2..=n {
        let mut next = vec![0.0f64; max_inv + 1];
        let top = i * (i - 1) / 2;
        // Sliding window sum of dist[k−i+1 ..= k].
        let mut window = 0.0;
        for k in 0..=top {
            window += dist[k];
            if k >= i {
                window -= dist[k - i];
            }
            next[k] = window / i as f64;
        }
        dist = next;
    }
    // S = max_inv − 2·I, so |S| ≥ |s| ⇔ I ≤ (max_inv − |s|)/2 or I ≥ (max_inv + |s|)/2.
    let a = s.unsigned_abs() as usize;
    let lo = (max_inv - a.min(max_inv)) / 2;
    let tail: f64 = dist[..=lo].iter().sum();
    (2.0 * tail).min(1.0)
}

/// The Theil–Sen slope of `ys` against their positions 0, 1, …: the median of all pairwise
/// slopes; `None` for fewer than two values.
pub fn sen_slope(ys: &[f64]) -> Option<f64> {
    if ys.len() < 2 {
        return None;
    }
    let mut slopes = Vec::with_capacity(ys.len() * (ys.len() - 1) / 2);
    for i in 0..ys.len() {
        for j in i + 1..ys.len() {
            slopes.push((ys[j] - ys[i]) / (j - i) as f64);
        }
    }
    slopes.sort_by(f64::total_cmp);
    Some(median_sorted(&slopes))
}

/// A detected drift across the execution order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Drift {
    /// The Mann–Kendall test.
    pub trend: Trend,
    /// Theil–Sen slope per repetition.
    pub slope: f64,
    /// Slope × (n − 1) relative to the median: the change over the whole series.
    pub relative_change: f64,
}

/// Drift of `ys` (values in execution order): flagged when the Mann–Kendall p is below
/// `alpha` and the Theil–Sen change over the series exceeds `min_relative` of the median.
pub fn drift(ys: &[f64], alpha: f64, min_relative: f64) -> Option<Drift> {
    let trend = mann_kendall(ys)?;
    let slope = sen_slope(ys)?;
    let mut sorted = ys.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = median_sorted(&sorted);
    if med == 0.0 {
        return None;
    }
    let relative_change = slope * (ys.len() - 1) as f64 / med.abs();
    (trend.p < alpha && relative_change.abs() > min_relative).then_some(Drift {
        trend,
        slope,
        relative_change,
    })
}

/// A first repetition much worse than the others.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FirstSlower {
    /// The first value.
    pub first: f64,
    /// The median of the others.
    pub median_rest: f64,
    /// How much worse the first is, relative to the median of the others (0.25 = 25%).
    pub worse_by: f64,
}

/// Whether the first value (in execution order) is the worst of all and worse than the
/// median of the others by more than `min_relative`. "Worse" is lower when
/// `higher_is_better`, else higher. Needs at least three values.
pub fn first_slower(ys: &[f64], higher_is_better: bool, min_relative: f64) -> Option<FirstSlower> {
    if ys.len() < 3 || ys.iter().any(|y| !y.is_finite()) {
        return None;
    }
    let first = ys[0];
    let mut rest = ys[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    let median_rest = median_sorted(&rest);
    if median_rest == 0.0 {
        return None;
    }
    let (is_worst, worse_by) = if higher_is_better {
        (first < rest[0], (median_rest - first) / median_rest.abs())
    } else {
        (
            first > rest[rest.len() - 1],
            (first - median_rest) / median_rest.abs(),
        )
    };
    (is_worst && worse_by > min_relative).then_some(FirstSlower {
        first,
        median_rest,
        worse_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use proptest::prelude::*;
    use statrs::distribution::{ContinuousCDF, Normal};

    #[test]
    fn mann_kendall_exact_matches_scipy() {
        // scipy.stats.kendalltau(range(8), ys, method='exact'): τ 0.7857142857142856,
        // p 0.005505952380952381.
        let ys = [5.0, 5.2, 5.1, 5.5, 5.4, 5.8, 6.0, 5.9];
        let t = mann_kendall(&ys).unwrap();
        assert!(t.exact);
        assert_eq!(t.s, 22.0);
        assert_relative_eq!(t.tau, 0.7857142857142856, max_relative = 1e-12);
        assert_relative_eq!(t.p, 0.005505952380952381, max_relative = 1e-9);
        // A noisy series: τ 1/3, p 0.21637345679012346.
        let ys = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0, 5.5, 3.5];
        let t = mann_kendall(&ys).unwrap();
        assert_relative_eq!(t.p, 0.21637345679012346, max_relative = 1e-9);
        // Three values in order: 2 of 3! = 6 permutations are as extreme, p = 1/3.
        assert_relative_eq!(mann_kendall(&[1.0, 2.0, 3.0]).unwrap().p, 1.0 / 3.0);
    }

    #[test]
    fn mann_kendall_with_ties_matches_scipy() {
        // S = 21; one tied pair: Var(S) = (8·7·21 − 2·1·9)/18 = 64.333;
        // 2·norm.sf((21 − 1)/√64.333) = 0.012648527380247998 (scipy.stats.norm). scipy's
        // kendalltau(method='asymptotic') skips the continuity correction: 2·sf(21/√64.333)
        // = 0.008839740160738536.
        let ys = [5.0, 5.2, 5.0, 5.5, 5.4, 5.8, 6.0, 5.9];
        let t = mann_kendall(&ys).unwrap();
        assert!(!t.exact);
        assert_eq!(t.s, 21.0);
        assert_relative_eq!(t.p, 0.012648527380247998, max_relative = 1e-9);
    }

    #[test]
    fn sen_slope_matches_scipy() {
        // scipy.stats.theilslopes(ys).slope = 0.155.
        let ys = [5.0, 5.2, 5.1, 5.5, 5.4, 5.8, 6.0, 5.9];
        assert_relative_eq!(sen_slope(&ys).unwrap(), 0.155, epsilon = 1e-12);
    }

    #[test]
    fn drift_needs_significance_and_size() {
        let ys = [5.0, 5.2, 5.1, 5.5, 5.4, 5.8, 6.0, 5.9];
        // 0.155 × 7 / 5.45 = 19.9% over the series.
        let d = drift(&ys, 0.05, 0.05).unwrap();
        assert_relative_eq!(d.relative_change, 0.155 * 7.0 / 5.45, epsilon = 1e-12);
        assert!(drift(&ys, 0.05, 0.25).is_none());
        assert!(drift(&ys, 0.001, 0.05).is_none());
        // A monotonic but tiny trend is not a drift worth a warning.
        let tiny: Vec<f64> = (0..8).map(|i| 100.0 + 0.01 * f64::from(i)).collect();
        assert!(drift(&tiny, 0.05, 0.05).is_none());
    }

    #[test]
    fn first_repetition_slower() {
        // Times: first 1.5 s, others median 1.0 s → 50% worse.
        let f = first_slower(&[1.5, 1.0, 1.02, 0.98, 1.0], false, 0.10).unwrap();
        assert_relative_eq!(f.worse_by, 0.5, epsilon = 1e-12);
        // Rates: first 600/s, others around 1000/s → 40% worse.
        let f = first_slower(&[600.0, 1000.0, 990.0, 1010.0], true, 0.10).unwrap();
        assert_relative_eq!(f.worse_by, 0.4, epsilon = 1e-12);
        // Not the worst of all: no warning.
        assert!(first_slower(&[1.5, 1.0, 1.6, 1.0], false, 0.10).is_none());
        // A fast first repetition is not "slower".
        assert!(first_slower(&[0.5, 1.0, 1.0, 1.0], false, 0.10).is_none());
        assert!(first_slower(&[1.5, 1.0], false, 0.10).is_none());
    }

    proptest! {
        #[test]
        fn exact_p_agrees_with_the_normal_approximation_for_larger_n(
            ys in proptest::collection::vec(0f64..1e3, 25..40),
        ) {
            let t = mann_kendall(&ys).unwrap();
            prop_assume!(t.exact);
            let n = ys.len() as f64;
            let var = n * (n - 1.0) * (2.0 * n + 5.0) / 18.0;
            let z = (t.s.abs() - 1.0).max(0.0) / var.sqrt();
            let approx = 2.0 * Normal::new(0.0, 1.0).unwrap().sf(z);
            prop_assert!((t.p - approx.min(1.0)).abs() < 0.01, "{} vs {}", t.p, approx);
        }

        #[test]
        fn reversing_the_order_negates_s(ys in proptest::collection::vec(0f64..1e3, 3..30)) {
            let a = mann_kendall(&ys).unwrap();
            let rev: Vec<f64> = ys.iter().rev().copied().collect();
            let b = mann_kendall(&rev).unwrap();
            prop_assert_eq!(a.s, -b.s);
            prop_assert!((a.p - b.p).abs() < 1e-12);
            prop_assert!((0.0..=1.0).contains(&a.p));
        }
    }
}
