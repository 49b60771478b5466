//! Comparing two samples (a baseline and a candidate): Welch's unequal-variance t-test, the
//! Mann–Whitney U rank test and Benjamini–Hochberg q-values. The percent change with its
//! interval and the test on the same scale are made in [`super::effect`].
//!
//! **Welch's t-test** (Welch 1947): `t = (m_B − m_A)/√(s_A²/n_A + s_B²/n_B)`, degrees of
//! freedom by Welch–Satterthwaite, two-sided p from Student's t. Same as
//! `scipy.stats.ttest_ind(a, b, equal_var=False)` and R's `t.test(a, b)`.
//!
//! **Mann–Whitney U** (two-sided). `U` is the statistic of the baseline sample
//! (`R_A − n_A(n_A+1)/2` with mid-ranks for ties), as scipy's `mannwhitneyu(a, b)` returns.
//! Without ties and with `n_A + n_B ≤ 60` the p-value is exact: the null distribution of U
//! is the coefficient list of the Gaussian binomial `[n_A+n_B choose n_A]_q`, and
//! `p = min(1, 2·min(P(U ≤ u), P(U ≥ u)))`. Otherwise the normal approximation with the
//! tie-corrected variance `n_A·n_B/12·((n+1) − Σ(t³−t)/(n(n−1)))` and a continuity
//! correction of 0.5 is used (scipy's `method="asymptotic"`, R's `wilcox.test(exact=FALSE)`).
//! With 3 against 3 repetitions the smallest possible exact p is 0.1, so the rank test can
//! only confirm a difference from about 4 against 4 repetitions on.
//!
//! **Benjamini–Hochberg** (1995) adjusted p-values for a family of m tests: sort the p-values
//! ascending, `q_(i) = min over j ≥ i of min(1, p_(j)·m/j)`. Declaring the tests with q < α
//! significant keeps the expected share of false discoveries among them at most α. Same as
//! R's `p.adjust(p, "BH")` and statsmodels' `multipletests(p, method="fdr_bh")`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Largest `n_A + n_B` for which the exact Mann–Whitney distribution is used.
pub const MW_EXACT_MAX_N: usize = 60;

/// Result of Welch's t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// The t statistic (candidate minus baseline).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// How a Mann–Whitney p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MwMethod {
    /// Exact null distribution (no ties, small samples).
    Exact,
    /// Normal approximation with tie and continuity correction.
    Normal,
}

/// Result of the Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U statistic of the baseline sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// How `p` was computed.
    pub method: MwMethod,
}

/// Percent change of the candidate relative to the baseline, from the same model as its test
/// ([`super::effect::effect`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// The candidate over the baseline: the ratio of geometric means on the log scale, of
    /// arithmetic means on the raw scale.
    pub ratio: f64,
    /// `100·(ratio − 1)`.
    pub percent: f64,
    /// 95% interval of `percent`, from the same t and degrees of freedom as the test; `None`
    /// when either side has fewer than two values.
    pub ci95: Option<(f64, f64)>,
    /// Degrees of freedom used for the interval and the test.
    pub df: Option<f64>,
    /// The scale of the model: `log` (Welch on log values) or `raw`.
    pub scale: super::effect::EffectScale,
    /// Repetitions per configuration that would narrow the interval to ±[`super::effect::RESOLUTION`]
    /// at the variation measured (`None` without an interval; capped at
    /// [`super::effect::MAX_RESOLVE_N`]).
    pub resolve_n: Option<u32>,
    /// On the log scale with two or more values a side: the spread of the logs both sides
    /// share (the root of the mean of their variances), from which a report states the
    /// effect the design detects with 80% power ([`super::power::detectable`]).
    pub log_sd: Option<f64>,
}

pub(crate) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = if xs.len() > 1 {
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        f64::NAN
    };
    (m, v)
}

pub(super) fn finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

/// Welch–Satterthwaite degrees of freedom of two variance terms `v = s²/n` with `n − 1`
/// degrees of freedom each; `None` when both terms are zero.
pub(super) fn satterthwaite(va: f64, na: usize, vb: f64, nb: usize) -> Option<f64> {
    let den = va * va / (na as f64 - 1.0) + vb * vb / (nb as f64 - 1.0);
    (den > 0.0).then(|| (va + vb).powi(2) / den)
}

/// Two-sided tail probability of |t| under Student's t with `df` degrees of freedom.
pub(super) fn t_two_sided(t: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| (2.0 * d.sf(t.abs())).min(1.0))
}

/// Two-sided tail probability under the standard normal approximation of a statistic `dev`
/// away from its mean under no effect, with variance `var`: of z = (|dev| − `correction`)/√var
/// (the continuity correction, z not below 0); 1 when there is no variance.
pub(super) fn normal_two_sided(dev: f64, correction: f64, var: f64) -> f64 {
    if var <= 0.0 {
        return 1.0;
    }
    let z = (dev.abs() - correction).max(0.0) / var.sqrt();
    Normal::new(0.0, 1.0).map_or(f64::NAN, |nd| (2.0 * nd.sf(z)).min(1.0))
}

/// Welch's test of a difference of means `diff` with the variance terms `va = s²_A/n_A` and
/// `vb = s²_B/n_B`. Two samples without any spread give p = 1 when `diff` is zero and p = 0
/// otherwise, with `n_A + n_B − 2` degrees of freedom.
pub(super) fn welch_test(diff: f64, va: f64, na: usize, vb: f64, nb: usize) -> Welch {
    match satterthwaite(va, na, vb, nb) {
        Some(df) => {
            let t = diff / (va + vb).sqrt();
            Welch {
                t,
                df,
                p: t_two_sided(t, df),
            }
        }
        None => {
            let df = (na + nb - 2) as f64;
            let (t, p) = if diff == 0.0 {
                (0.0, 1.0)
            } else {
                (diff.signum() * f64::INFINITY, 0.0)
            };
            Welch { t, df, p }
        }
    }
}

/// Welch's t-test of `candidate` against `baseline`; `None` when either has fewer than two
/// values or any value is not finite. Two samples without any spread give p = 1 when their
/// means are equal and p = 0 otherwise.
pub fn welch(baseline: &[f64], candidate: &[f64]) -> Option<Welch> {
    let (na, nb) = (baseline.len(), candidate.len());
    if na < 2 || nb < 2 || !finite(baseline) || !finite(candidate) {
        return None;
    }
    let (ma, sa2) = mean_var(baseline);
    let (mb, sb2) = mean_var(candidate);
    Some(welch_test(
        mb - ma,
        sa2 / na as f64,
        na,
        sb2 / nb as f64,
        nb,
    ))
}

/// Mid-ranks (1-based) of the pooled sample and the tie-group sizes, smallest values first.
pub(super) fn ranks(pooled: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..pooled.len()).collect();
    idx.sort_by(|&a, &b| pooled[a].total_cmp(&pooled[b]));
    let mut r = vec![0.0; pooled.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && pooled[idx[j]] == pooled[idx[i]] {
            j += 1;
        }
        // Positions i..j (0-based) share the mean of ranks i+1..=j.
        let mid = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            r[k] = mid;
        }
        if j - i > 1 {
            ties.push(j - i);
        }
        i = j;
    }
    (r, ties)
}

/// Exact null distribution of U for sample sizes `m` and `n` (no ties): entry `u` is the
/// number of the `C(m+n, m)` equally likely arrangements with U = u. These are the
/// coefficients of the Gaussian binomial `∏_{i=1..m} (1 − q^{n+i}) / (1 − q^i)`.
fn mw_counts(m: usize, n: usize) -> Vec<i128> {
    let len = m * n + 1;
    let mut c = vec![0i128; len];
    c[0] = 1;
    for i in 1..=m {
        // Multiply by (1 − q^{n+i}), descending so each term uses the old coefficient.
        let k = n + i;
        for j in (k..len).rev() {
            c[j] -= c[j - k];
        }
        // Divide by (1 − q^i): a running sum with stride i (exact: the quotient is a
        // polynomial with non-negative integer coefficients).
        for j in i..len {
            c[j] += c[j - i];
        }
    }
    c
}

/// Mann–Whitney U test of `candidate` against `baseline` (two-sided); `None` when either is
/// empty or a value is not finite.
pub fn mann_whitney(baseline: &[f64], candidate: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (baseline.len(), candidate.len());
    if n1 == 0 || n2 == 0 || !finite(baseline) || !finite(candidate) {
        return None;
    }
    let pooled: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let (r, ties) = ranks(&pooled);
    let r1: f64 = r[..n1].iter().sum();
    let u = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let n = n1 + n2;
    if ties.is_empty() && n <= MW_EXACT_MAX_N {
        let counts = mw_counts(n1, n2);
        let total: i128 = counts.iter().sum();
        // Without ties U is an integer.
        let ui = u.round() as usize;
        let le: i128 = counts[..=ui].iter().sum();
        let ge: i128 = counts[ui..].iter().sum();
        let p = (2.0 * le.min(ge) as f64 / total as f64).min(1.0);
        return Some(MannWhitney {
            u,
            p,
            method: MwMethod::Exact,
        });
    }
    let (f1, f2, nf) = (n1 as f64, n2 as f64, n as f64);
    let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
    let var = f1 * f2 / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    let mu = f1 * f2 / 2.0;
    let p = normal_two_sided(u - mu, 0.5, var);
    Some(MannWhitney {
        u,
        p,
        method: MwMethod::Normal,
    })
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order of `p`. NaN stays NaN and
/// does not count towards the family size.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = order.len() as f64;
    let mut q = vec![f64::NAN; p.len()];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m / (rank as f64 + 1.0)).min(1.0);
        q[i] = running;
    }
    q
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
