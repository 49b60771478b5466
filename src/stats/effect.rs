//! One scale for a comparison: the effect (percent change), its 95% interval and its test
//! come from the same model, so a verdict can never contradict its own interval.
//!
//! **Positive values (log scale).** Times, rates, sizes and counts are compared as ratios.
//! With `y = ln x` on both sides, `L = ȳ_B − ȳ_A` is the log of the ratio of the geometric
//! means; Welch's t-test on the log values gives `t = L/√(s²_A/n_A + s²_B/n_B)` with
//! Welch–Satterthwaite degrees of freedom, and the interval is `L ± t(df, 0.975)·se`, mapped
//! back to a percent change with `100·(eˣ − 1)`. The test rejects at α = 0.05 exactly when
//! the interval excludes 0, because both use the same `L`, `se` and `df`. This is the
//! standard analysis of log-normal data (Limpert, Stahel & Abbt 2001, "Log-normal
//! distributions across the sciences", BioScience 51:341; Keene 1995, "The log
//! transformation is special", Statistics in Medicine 14:811): the effect is the ratio of
//! geometric means, which is also what the tables' intervals are of.
//!
//! **Signed values, or a zero among them (raw scale).** Welch's t-test on the values, and
//! the interval of the difference of means `d ± t(df, 0.975)·se` divided by the baseline
//! mean (a positive constant), so again the interval excludes 0 exactly when p < 0.05.
//!
//! **How many repetitions would help.** With the variation measured, the smallest common
//! number of repetitions per side whose interval would be no wider than ±[`RESOLUTION`]
//! (on the log scale: `ln(1 + RESOLUTION)`), with the t quantile at that size's degrees of
//! freedom.

use super::compare::{finite, mean_var, satterthwaite, welch_test, Change, Welch};
use super::summary::t_quantile;
use serde::Serialize;

/// The difference a study should be able to resolve: an interval within ±10% of the
/// baseline. A verdict whose interval includes 0 and reaches further is "inconclusive".
pub const RESOLUTION: f64 = 0.10;

/// The largest number of repetitions per configuration [`Change::resolve_n`] names.
pub const MAX_RESOLVE_N: u32 = 1000;

/// The scale a comparison's model works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectScale {
    /// Welch on log values; the change is the ratio of geometric means.
    Log,
    /// Welch on the values; the change is the difference of means over the baseline mean.
    Raw,
}

/// The change of the candidate over the baseline and its test, from one model; `None` when a
/// side is empty, a value is not finite, or (raw scale) the baseline mean is not positive. On
/// the raw scale, the interval of values none of which is negative stops at -100%.
/// `welch` is `None` when a side has fewer than two values.
pub fn effect(baseline: &[f64], candidate: &[f64]) -> Option<(Change, Option<Welch>)> {
    if baseline.is_empty() || candidate.is_empty() || !finite(baseline) || !finite(candidate) {
        return None;
    }
    let positive = baseline.iter().chain(candidate).all(|&x| x > 0.0);
    if positive {
        let la: Vec<f64> = baseline.iter().map(|x| x.ln()).collect();
        let lb: Vec<f64> = candidate.iter().map(|x| x.ln()).collect();
        Some(model(&la, &lb, EffectScale::Log))
    } else {
        let (mut c, w) = model(baseline, candidate, EffectScale::Raw);
        // Values that cannot be negative (a CPU share with a zero among them) cannot fall by
        // more than 100%: the interval stops there (`-348%` said nothing possible).
        if baseline.iter().chain(candidate).all(|&x| x >= 0.0) {
            c.ci95 = c.ci95.map(|(lo, hi)| (lo.max(-100.0), hi));
        }
        Some((c, w)).filter(|(c, _)| c.ratio.is_finite())
    }
}

/// The change and test of `b` against `a` on `scale` (`a`, `b` already logs on the log scale).
fn model(a: &[f64], b: &[f64], scale: EffectScale) -> (Change, Option<Welch>) {
    let (na, nb) = (a.len(), b.len());
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let d = mb - ma;
    // The change, and the map from a difference on the model's scale to a percent change.
    let to_pct = |x: f64| match scale {
        EffectScale::Log => 100.0 * (x.exp() - 1.0),
        EffectScale::Raw => 100.0 * x / ma,
    };
    let ratio = match scale {
        EffectScale::Log => d.exp(),
        EffectScale::Raw if ma > 0.0 => mb / ma,
        EffectScale::Raw => f64::NAN,
    };
    let mut change = Change {
        ratio,
        percent: 100.0 * (ratio - 1.0),
        ci95: None,
        df: None,
        scale,
        resolve_n: None,
        log_sd: None,
    };
    if na < 2 || nb < 2 {
        return (change, None);
    }
    if scale == EffectScale::Log {
        change.log_sd = Some(((va + vb) / 2.0).sqrt());
    }
    let (sa, sb) = (va / na as f64, vb / nb as f64);
    let welch = welch_test(d, sa, na, sb, nb);
    change.df = Some(welch.df);
    change.ci95 = Some(match satterthwaite(sa, na, sb, nb) {
        Some(df) => {
            let h = t_quantile(df, 0.975) * (sa + sb).sqrt();
            (to_pct(d - h), to_pct(d + h))
        }
        // No spread on either side: the interval is the point itself.
        None => (change.percent, change.percent),
    });
    let target = match scale {
        EffectScale::Log => (1.0 + RESOLUTION).ln(),
        EffectScale::Raw => RESOLUTION * ma.abs(),
    };
    change.resolve_n = resolve_n(va, vb, target);
    (change, Some(welch))
}

/// The smallest number of repetitions per side (at least 2) whose 95% interval half-width,
/// with the variances `va`, `vb` measured, is at most `target`; capped at [`MAX_RESOLVE_N`].
pub fn resolve_n(va: f64, vb: f64, target: f64) -> Option<u32> {
    if !(va.is_finite() && vb.is_finite() && target > 0.0) {
        return None;
    }
    let half = |n: u32| {
        let (sa, sb) = (va / f64::from(n), vb / f64::from(n));
        match satterthwaite(sa, n as usize, sb, n as usize) {
            Some(df) => t_quantile(df, 0.975) * (sa + sb).sqrt(),
            None => 0.0,
        }
    };
    if half(2) <= target {
        return Some(2);
    }
    if half(MAX_RESOLVE_N) > target {
        return Some(MAX_RESOLVE_N);
    }
    // The half-width falls with n: bisect for the first n that is narrow enough.
    super::power::bisect(2, MAX_RESOLVE_N, |n| Some(half(n) <= target))
}

#[cfg(test)]
#[path = "effect_tests.rs"]
mod tests;
