//! Power by design: the chance that a comparison finds a true change, for the test the
//! reports use — Welch's two-sided t-test on the logs of the values, α = 0.05 before any
//! adjustment — with `n` repetitions on each side and a common spread `s` (the standard
//! deviation of the logs; for a coefficient of variation `cv`, `s = √ln(1 + cv²)`).
//!
//! Exact for equal sides and equal spreads, not a normal approximation: with the two sample
//! variances written as a total and a share `r` of it, `r` follows Beta((n−1)/2, (n−1)/2)
//! independently of the total, the Welch–Satterthwaite degrees of freedom depend on `r`
//! alone, `(n−1)/(r² + (1−r)²)`, and given `r` the statistic is noncentral t with `2(n−1)`
//! degrees of freedom. Both integrals (over `r` and over the χ² of the total) are taken at
//! [`NODES`] equal-probability points each; the unit tests check the result against a
//! simulation of the test itself.
//!
//! The design rule of `[repetitions] detect`: the smallest `n` with power of at least
//! [`POWER`] for the declared effect ([`n_for_power`]), and the effect a design of `n`
//! detects with that power ([`detectable`]).

use super::summary::t_quantile;
use statrs::distribution::{Beta, ChiSquared, ContinuousCDF};
use statrs::function::erf::erfc;
use std::cell::RefCell;
use std::collections::HashMap;

/// The power a design aims for.
pub const POWER: f64 = 0.80;
/// The significance level of the test, before adjustment.
pub const ALPHA: f64 = 0.05;
/// The most repetitions per side [`n_for_power`] names.
pub const MAX_N: u32 = 1000;
/// Equal-probability points of each integral.
const NODES: usize = 64;

/// Standard deviation of the logs of a log-normal value with coefficient of variation `cv`.
pub fn log_sd(cv: f64) -> f64 {
    (1.0 + cv * cv).ln().sqrt()
}

/// Coefficient of variation of a log-normal value whose logs have standard deviation `s`.
pub fn cv_of_log_sd(s: f64) -> f64 {
    ((s * s).exp() - 1.0).sqrt()
}

/// Per `n`: the critical t of each share node (by its Welch degrees of freedom) and
/// `√(W/ν)` of each χ² node.
struct Nodes {
    crit: Vec<f64>,
    scale: Vec<f64>,
}

fn nodes(n: u32) -> Option<Nodes> {
    let k = f64::from(n - 1) / 2.0;
    let share = Beta::new(k, k).ok()?;
    let nu = 2.0 * f64::from(n - 1);
    let chi = ChiSquared::new(nu).ok()?;
    let at = |i: usize| (i as f64 + 0.5) / NODES as f64;
    let crit = (0..NODES)
        .map(|i| {
            let r = share.inverse_cdf(at(i));
            let df = f64::from(n - 1) / (r * r + (1.0 - r) * (1.0 - r));
            t_quantile(df, 1.0 - ALPHA / 2.0)
        })
        .collect();
    let scale = (0..NODES)
        .map(|j| (chi.inverse_cdf(at(j)) / nu).sqrt())
        .collect();
    Some(Nodes { crit, scale })
}

thread_local! {
    static CACHE: RefCell<HashMap<u32, Option<std::rc::Rc<Nodes>>>> = RefCell::new(HashMap::new());
}

fn cached(n: u32) -> Option<std::rc::Rc<Nodes>> {
    CACHE.with(|c| {
        c.borrow_mut()
            .entry(n)
            .or_insert_with(|| nodes(n).map(std::rc::Rc::new))
            .clone()
    })
}

fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The power of the two-sided Welch test on logs (α = [`ALPHA`]) to find a true change of
/// `effect` (0.10 = 10%) with `n` repetitions per side whose logs spread by `s`; `None` below
/// two repetitions or for a spread that is not positive and finite.
pub fn power(n: u32, s: f64, effect: f64) -> Option<f64> {
    if n < 2 || !(s > 0.0 && s.is_finite()) || effect <= -1.0 || !effect.is_finite() {
        return None;
    }
    let delta = (1.0 + effect).ln().abs() / (s * (2.0 / f64::from(n)).sqrt());
    let nd = cached(n)?;
    let mut sum = 0.0;
    for &c in &nd.crit {
        for &u in &nd.scale {
            sum += phi(delta - c * u) + phi(-delta - c * u);
        }
    }
    Some(sum / (NODES * NODES) as f64)
}

/// The smallest number of repetitions per side (at least 2) whose power for `effect` at the
/// spread `s` is at least [`POWER`]; [`MAX_N`] when even that many are not enough.
pub fn n_for_power(s: f64, effect: f64) -> Option<u32> {
    let enough = |n: u32| power(n, s, effect).map(|p| p >= POWER);
    if enough(2)? {
        return Some(2);
    }
    // Power grows with n: double, then bisect.
    let mut hi = 4u32;
    while !enough(hi)? {
        if hi >= MAX_N {
            return Some(MAX_N);
        }
        hi = (hi * 2).min(MAX_N);
    }
    bisect(hi / 2, hi, enough)
}

/// The first `n` in `lo + 1..=hi` for which `ok` holds, by bisection: `ok` does not hold at
/// `lo`, holds at `hi`, and once it holds it holds for every larger `n`. `None` when `ok` is.
pub(super) fn bisect(mut lo: u32, mut hi: u32, ok: impl Fn(u32) -> Option<bool>) -> Option<u32> {
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ok(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The smallest change (a fraction: 0.1 = 10%) that `n` repetitions per side at the spread
/// `s` find with power [`POWER`]; `None` below two repetitions.
pub fn detectable(n: u32, s: f64) -> Option<f64> {
    power(n, s, 0.0)?;
    // On the log scale the power grows with the effect; bisect between 0 and a bound that
    // is surely enough.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while power(n, s, hi.exp() - 1.0)? < POWER {
        hi *= 2.0;
        if hi > 50.0 {
            return Some(f64::INFINITY);
        }
    }
    for _ in 0..50 {
        let mid = (lo + hi) / 2.0;
        if power(n, s, mid.exp() - 1.0)? >= POWER {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi.exp() - 1.0)
}

/// The largest standard deviation of the logs over a series' headline values (one vector
/// per metric); `None` when a metric has fewer than two values or one that is not positive.
pub fn worst_log_sd(headlines: &[Vec<f64>]) -> Option<f64> {
    if headlines.is_empty() {
        return None;
    }
    headlines.iter().try_fold(0.0f64, |worst, v| {
        if v.len() < 2 || v.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
            return None;
        }
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        Some(worst.max(super::compare::mean_var(&logs).1.sqrt()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share of simulated pairs in which the reports' own test (stats::effect, Welch on
    /// logs) finds p < 0.05.
    fn simulated(n: u32, cv: f64, effect: f64, sims: u32) -> f64 {
        let s = log_sd(cv);
        let mut r = crate::stats::rng::SplitMix64(7);
        let mut found = 0;
        for _ in 0..sims {
            let a: Vec<f64> = (0..n).map(|_| (s * r.normal()).exp()).collect();
            let b: Vec<f64> = (0..n)
                .map(|_| (1.0 + effect) * (s * r.normal()).exp())
                .collect();
            let (_, w) = super::super::effect::effect(&a, &b).unwrap();
            if w.unwrap().p < ALPHA {
                found += 1;
            }
        }
        f64::from(found) / f64::from(sims)
    }

    #[test]
    fn power_matches_a_simulation_of_the_reports_test() {
        // 20,000 pairs each: the simulation's own standard error is at most 0.35%.
        for (n, cv, effect) in [
            (5, 0.05, 0.10),
            (6, 0.05, 0.10),
            (3, 0.10, 0.20),
            (10, 0.2, 0.1),
        ] {
            let exact = power(n, log_sd(cv), effect).unwrap();
            let sim = simulated(n, cv, effect, 20_000);
            assert!(
                (exact - sim).abs() < 0.015,
                "n {n} cv {cv}: {exact} vs {sim}"
            );
        }
        // No effect: the power is the test's size (Welch's is a little below α with equal
        // sides and spreads).
        let size = power(6, 0.05, 0.0).unwrap();
        let sim = simulated(6, 0.05, 0.0, 20_000);
        assert!(
            size <= ALPHA && (size - sim).abs() < 0.006,
            "{size} vs {sim}"
        );
    }

    #[test]
    fn the_default_design_reaches_eighty_percent() {
        // cv 5%, 10% effect: five are not enough (the reports' test finds it ~73% of the
        // time), the design's n is.
        let s = log_sd(0.05);
        assert!(power(5, s, 0.10).unwrap() < POWER);
        let n = n_for_power(s, 0.10).unwrap();
        assert!(power(n, s, 0.10).unwrap() >= POWER);
        assert!(power(n - 1, s, 0.10).unwrap() < POWER);
        assert!((6..=7).contains(&n), "{n}");
        // Noisier needs more; a bigger effect fewer.
        assert!(n_for_power(log_sd(0.10), 0.10).unwrap() > n);
        assert!(n_for_power(s, 0.30).unwrap() < n);
        assert_eq!(n_for_power(log_sd(5.0), 0.001), Some(MAX_N));
    }

    #[test]
    fn detectable_is_the_inverse_of_the_design_rule() {
        let s = log_sd(0.05);
        let n = n_for_power(s, 0.10).unwrap();
        let e = detectable(n, s).unwrap();
        assert!(e <= 0.10 + 1e-9 && e > 0.08, "{e}");
        let e5 = detectable(5, s).unwrap();
        assert!(e5 > 0.10 && e5 < 0.13, "{e5}");
        assert!((power(5, s, e5).unwrap() - POWER).abs() < 1e-6);
        assert_eq!(detectable(1, s), None);
    }

    #[test]
    fn worst_log_sd_over_headlines() {
        let a = vec![1.0, std::f64::consts::E];
        let b = vec![1.0, 1.0];
        let s = worst_log_sd(&[a, b.clone()]).unwrap();
        assert!((s - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12, "{s}");
        assert_eq!(worst_log_sd(&[vec![1.0]]), None);
        assert_eq!(worst_log_sd(&[vec![1.0, 0.0]]), None);
        assert_eq!(worst_log_sd(&[]), None);
        assert!((cv_of_log_sd(log_sd(0.05)) - 0.05).abs() < 1e-12);
    }
}
