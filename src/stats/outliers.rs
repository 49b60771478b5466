//! Outliers: a repetition further from the others than their own spread explains — flagged,
//! shown, never dropped.
//!
//! Each value is tested against the other values of its series with the studentized deleted
//! residual, on the log scale for positive quantities (times and rates vary by factors, and
//! fslab's intervals are on that scale too): `t_i = (y_i − ȳ₋ᵢ) / (s₋ᵢ·√(1 + 1/(n−1)))`,
//! where `ȳ₋ᵢ` and `s₋ᵢ` are the mean and standard deviation of the other `n − 1` values. With
//! normal noise `t_i` follows Student's t with `n − 2` degrees of freedom (it is the
//! prediction-interval test of one new value against `n − 1` earlier ones), so its p is
//! exact. A series' candidates are its values with `p_i · n < α` (the most extreme of `n`,
//! Bonferroni). Fewer than [`MIN_N`] values are not judged.
//!
//! A report judges a workload's series together ([`judge`]): with many series, some have a
//! candidate by chance alone. Candidates are named when the workload's headline series
//! have more of them than chance explains (one disturbed repetition moves every phase it
//! ran), or when a value is extreme enough on its own to stand a Bonferroni bound over all
//! the headline series. The rule it replaces (the modified z-score, |M| > 3.5, from the
//! median absolute deviation) named an outlier in 84% of simulated reports of a small study
//! with 2% noise and nothing wrong: the MAD of five values is often tiny.

/// The fewest values the rule judges.
pub const MIN_N: usize = 5;

/// The level of every decision here.
pub const ALPHA: f64 = 0.05;

/// One value's test against the others of its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// The studentized deleted residual (negative: below the others).
    pub t: f64,
    /// Its two-sided p (Student's t, `n − 2` degrees of freedom).
    pub p: f64,
    /// The value relative to the mean of the others, on the value's own scale (−0.4: 40%
    /// below the others' geometric mean for positive quantities).
    pub relative: f64,
}

/// Every value's [`Deviation`] (same order), on the log scale when `log` (all values must
/// then be positive); `None` for fewer than [`MIN_N`] values, a value that is not finite (or
/// not positive with `log`), or others without spread.
pub fn deviations(xs: &[f64], log: bool) -> Option<Vec<Deviation>> {
    let n = xs.len();
    if n < MIN_N || xs.iter().any(|x| !x.is_finite() || (log && *x <= 0.0)) {
        return None;
    }
    let ys: Vec<f64> = xs.iter().map(|&x| if log { x.ln() } else { x }).collect();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let rest: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| ys[j]).collect();
        let k = rest.len() as f64;
        let (mean, var) = super::compare::mean_var(&rest);
        if var <= 0.0 {
            return None;
        }
        let t = (ys[i] - mean) / (var.sqrt() * (1.0 + 1.0 / k).sqrt());
        let relative = if log {
            (ys[i] - mean).exp() - 1.0
        } else if mean != 0.0 {
            (ys[i] - mean) / mean.abs()
        } else {
            0.0
        };
        out.push(Deviation {
            t,
            p: super::compare::t_two_sided(t, (n - 2) as f64),
            relative,
        });
    }
    Some(out)
}

/// A series of a workload, for [`judge`].
pub struct Series<'a> {
    /// Its values' deviations (`None`: not judged).
    pub deviations: Option<&'a [Deviation]>,
    /// Whether it is a headline series (only those make the pattern).
    pub headline: bool,
}

/// The outliers of each series of a workload (indices into its values): a series'
/// candidates (`p · n < α`) when the headline series hold more series with a candidate than
/// chance explains (`P(Binomial(m, α) ≥ k) < α`), else only values with `p · n · m < α`.
pub fn judge(series: &[Series<'_>]) -> Vec<Vec<usize>> {
    let pick = |d: &[Deviation], bound: f64| -> Vec<usize> {
        let n = d.len() as f64;
        (0..d.len())
            .filter(|&i| d[i].p * n * bound < ALPHA)
            .collect()
    };
    let heads: Vec<&[Deviation]> = series
        .iter()
        .filter(|s| s.headline)
        .filter_map(|s| s.deviations)
        .collect();
    let m = heads.len();
    let k = heads.iter().filter(|d| !pick(d, 1.0).is_empty()).count();
    let pattern = super::consistent::at_least(vec![ALPHA; m], k) < ALPHA;
    let bound = if pattern { 1.0 } else { m.max(1) as f64 };
    series
        .iter()
        .map(|s| s.deviations.map_or_else(Vec::new, |d| pick(d, bound)))
        .collect()
}

#[cfg(test)]
#[path = "outliers_tests.rs"]
mod tests;
