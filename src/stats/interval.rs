//! 95% confidence intervals of a location, for signed quantities and for quantities that
//! cannot be negative (times, rates, throughputs, bytes, counts).
//!
//! A signed quantity gets the Student-t interval of the mean, `x̄ ± t(n−1, .975)·s/√n`.
//! For a positive one that interval can reach below zero when the spread is large
//! (`[-3009 – 51450] files/s`), which is impossible and says nothing useful. It gets the
//! Student-t interval of the mean of the logarithms instead, mapped back:
//! `exp(ȳ ± t(n−1, .975)·s_y/√n)` with `y = ln x` — the interval of the *geometric* mean
//! (the median of a log-normal), always positive and asymmetric the way ratios are, on the
//! same log scale the comparisons use for percent changes. Under a log-normal model its
//! coverage is exact for every n ≥ 2; it estimates the geometric mean, which is below the
//! arithmetic mean by about a factor `exp(−s_y²/2)` (under 2% for a coefficient of variation
//! under 20%). A positive quantity with a zero among its values has no logarithm: it keeps
//! the Student-t interval with its lower bound clipped at zero, and says so
//! ([`IntervalMethod::TClipped`]).
//!
//! Below [`INTERVAL_MIN_N`] values there is no interval: with two, t(1, .975) = 12.7 and the
//! log-scale interval of two latencies a factor 14 apart spans fourteen orders of magnitude
//! (`0.0000006940 – 214159036` µs), which tells nothing the two values do not. Reports show
//! the min and max instead, as hyperfine does below three runs.

use super::compare::mean_var;
use super::summary::t_quantile;
use serde::Serialize;

/// How a 95% interval was computed (`ci95_method` in the reports' JSON and CSV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Student-t interval of the arithmetic mean (signed quantities).
    #[default]
    T,
    /// Student-t interval of the mean of the logarithms, mapped back: the interval of the
    /// geometric mean (positive quantities).
    LogT,
    /// Student-t interval of the arithmetic mean with its lower bound clipped at zero: a
    /// positive quantity with a zero (or, by a fault, a negative) value.
    TClipped,
}

impl IntervalMethod {
    /// The name used in JSON and CSV (`t`, `log_t`, `t_clipped`).
    pub const fn as_str(self) -> &'static str {
        match self {
            IntervalMethod::T => "t",
            IntervalMethod::LogT => "log_t",
            IntervalMethod::TClipped => "t_clipped",
        }
    }
}

/// Whether a quantity can take either sign or only non-negative values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Either sign (a skew, a difference, a percentage of change).
    Signed,
    /// Never negative (a time, a rate, a throughput, bytes, a count).
    Positive,
}

/// The 95% Student-t interval of the mean; `None` for fewer than two values.
pub fn t_interval(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let (mean, var) = mean_var(xs);
    let n = xs.len() as f64;
    let h = t_quantile(n - 1.0, 0.975) * var.sqrt() / n.sqrt();
    Some((mean - h, mean + h))
}

/// The geometric mean, `exp(mean(ln x))`; `None` when empty or when a value is not positive
/// and finite.
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    if xs.iter().all(|x| *x == xs[0]) {
        // Exactly the value, not its round trip through ln and exp.
        return Some(xs[0]);
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// The 95% interval of the geometric mean: the Student-t interval of the logarithms, mapped
/// back with `exp`. `None` for fewer than two values or a value that is not positive and
/// finite. Both bounds are positive; the geometric mean lies inside.
pub fn log_t_interval(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    if xs.len() >= 2 && xs.iter().all(|x| *x == xs[0]) {
        return Some((xs[0], xs[0]));
    }
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let (lo, hi) = t_interval(&logs)?;
    Some((lo.exp(), hi.exp()))
}

/// The fewest values a 95% interval is given for.
pub const INTERVAL_MIN_N: usize = 3;

/// The 95% interval of `xs` for a quantity of the given kind, and how it was computed:
/// Student t for a signed quantity; for a positive one, the log-scale interval, or the
/// Student-t interval clipped at zero when a value is zero or negative. `None` (with the
/// method that would have been used) for fewer than [`INTERVAL_MIN_N`] values.
pub fn interval(xs: &[f64], q: Quantity) -> (Option<(f64, f64)>, IntervalMethod) {
    let (ci, method) = computed(xs, q);
    (ci.filter(|_| xs.len() >= INTERVAL_MIN_N), method)
}

fn computed(xs: &[f64], q: Quantity) -> (Option<(f64, f64)>, IntervalMethod) {
    match q {
        Quantity::Signed => (t_interval(xs), IntervalMethod::T),
        Quantity::Positive if xs.iter().all(|x| *x > 0.0) => {
            (log_t_interval(xs), IntervalMethod::LogT)
        }
        Quantity::Positive => (
            t_interval(xs).map(|(lo, hi)| (lo.max(0.0), hi.max(0.0))),
            IntervalMethod::TClipped,
        ),
    }
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;
