//! Descriptive statistics and the 95% confidence interval: the Student-t interval of the
//! mean for signed quantities, the log-scale interval for positive ones ([`super::interval`]).

use super::interval::{self, IntervalMethod, Quantity};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of one metric over repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for n < 2.
    pub sd: Option<f64>,
    /// Median (mean of the two middle values for even n).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Coefficient of variation sd/|mean|; `None` for n < 2 or a zero mean.
    pub cv: Option<f64>,
    /// 95% confidence interval (n − 1 degrees of freedom) by `ci95_method`: of the mean for a
    /// signed quantity, of the geometric mean (log scale) for a positive one; `None` for n < 3
    /// ([`interval::INTERVAL_MIN_N`]).
    pub ci95: Option<(f64, f64)>,
    /// How `ci95` was computed.
    pub ci95_method: IntervalMethod,
    /// Geometric mean, when every value is positive.
    pub gmean: Option<f64>,
}

impl Summary {
    /// Half-width of the 95% interval, if there is one.
    pub fn ci_half_width(&self) -> Option<f64> {
        self.ci95.map(|(lo, hi)| (hi - lo) / 2.0)
    }

    /// Half-width of the 95% interval as a fraction of |mean|.
    pub fn ci_relative(&self) -> Option<f64> {
        let h = self.ci_half_width()?;
        (self.mean != 0.0).then(|| h / self.mean.abs())
    }
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom.
/// `df` must be positive; for example `t_quantile(9.0, 0.975)` ≈ 2.262.
pub fn t_quantile(df: f64, p: f64) -> f64 {
    // StudentsT::new only fails for non-positive or NaN parameters, which callers exclude.
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(p))
}

/// Median of already sorted values (empty → NaN).
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Summarize values of a signed quantity (Student-t interval of the mean); `None` when there
/// are none or any is not finite.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    summarize_as(xs, Quantity::Signed)
}

/// Summarize values of a signed or a positive quantity: the interval follows
/// [`interval::interval`]. `None` when there are none or any is not finite.
pub fn summarize_as(xs: &[f64], q: Quantity) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len();
    let (mean, var) = super::compare::mean_var(xs);
    let mut sorted = xs.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let sd = (n >= 2).then(|| var.sqrt());
    let (ci95, ci95_method) = interval::interval(xs, q);
    let cv = sd.filter(|_| mean != 0.0).map(|s| s / mean.abs());
    Some(Summary {
        n,
        mean,
        sd,
        median: median_sorted(&sorted),
        min: sorted[0],
        max: sorted[n - 1],
        cv,
        ci95,
        ci95_method,
        gmean: interval::geometric_mean(xs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        // Hand-computed: mean 5, sample variance 32/7, sd 2.13809, t(7, .975) = 2.364624.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = summarize(&xs).unwrap();
        assert_eq!(s.n, 8);
        assert_relative_eq!(s.mean, 5.0);
        assert_relative_eq!(s.sd.unwrap(), (32.0f64 / 7.0).sqrt(), epsilon = 1e-12);
        assert_relative_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert_relative_eq!(s.cv.unwrap(), (32.0f64 / 7.0).sqrt() / 5.0, epsilon = 1e-12);
        let h = 2.364624 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        let (lo, hi) = s.ci95.unwrap();
        assert_relative_eq!(lo, 5.0 - h, epsilon = 1e-5);
        assert_relative_eq!(hi, 5.0 + h, epsilon = 1e-5);
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert_relative_eq!(t_quantile(1.0, 0.975), 12.706205, epsilon = 1e-5);
        assert_relative_eq!(t_quantile(9.0, 0.975), 2.262157, epsilon = 1e-5);
        assert_relative_eq!(t_quantile(30.0, 0.975), 2.042272, epsilon = 1e-5);
    }

    #[test]
    fn positive_quantities_get_the_log_interval() {
        let xs = [10.0, 100.0, 1000.0];
        let signed = summarize(&xs).unwrap();
        let positive = summarize_as(&xs, Quantity::Positive).unwrap();
        assert_eq!(signed.ci95_method, IntervalMethod::T);
        assert!(signed.ci95.unwrap().0 < 0.0);
        assert_eq!(positive.ci95_method, IntervalMethod::LogT);
        assert_eq!(positive.ci95, interval::log_t_interval(&xs));
        assert_relative_eq!(positive.gmean.unwrap(), 100.0, max_relative = 1e-12);
        // Everything else is the same.
        assert_eq!((positive.mean, positive.sd), (signed.mean, signed.sd));
    }

    #[test]
    fn single_value_has_no_spread() {
        let s = summarize(&[3.0]).unwrap();
        assert_eq!(s.sd, None);
        assert_eq!(s.ci95, None);
        assert_eq!(s.cv, None);
        assert_eq!(s.median, 3.0);
    }

    #[test]
    fn empty_or_nan_gives_none() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }

    proptest! {
        #[test]
        fn mean_and_median_lie_within_min_max(xs in proptest::collection::vec(-1e6f64..1e6, 1..50)) {
            let s = summarize(&xs).unwrap();
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            prop_assert!(s.min <= s.median && s.median <= s.max);
        }

        #[test]
        fn interval_contains_mean_and_shrinks_with_copies(xs in proptest::collection::vec(0f64..1e3, 3..20)) {
            let s = summarize(&xs).unwrap();
            let (lo, hi) = s.ci95.unwrap();
            prop_assert!(lo <= s.mean && s.mean <= hi);
            // Doubling the data (same spread, more values) never widens the interval.
            let mut twice = xs.clone();
            twice.extend_from_slice(&xs);
            let s2 = summarize(&twice).unwrap();
            prop_assert!(s2.ci_half_width().unwrap() <= s.ci_half_width().unwrap() + 1e-9);
        }

        #[test]
        fn shifting_moves_mean_not_sd(xs in proptest::collection::vec(0f64..1e3, 2..20), k in -1e3f64..1e3) {
            let a = summarize(&xs).unwrap();
            let shifted: Vec<f64> = xs.iter().map(|x| x + k).collect();
            let b = summarize(&shifted).unwrap();
            prop_assert!((b.mean - a.mean - k).abs() < 1e-6);
            prop_assert!((b.sd.unwrap() - a.sd.unwrap()).abs() < 1e-6);
        }
    }
}
