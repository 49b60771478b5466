//! `[repetitions]` resolved: how many counted repetitions per series (fixed, or adaptive up
//! to `max` until `target_ci`), the budget, order, cache policy, warm-ups, settling, the
//! timeline and the disturbed-repetition policy, with their defaults and limits.

use super::file::{CachePolicy, Order, RepetitionsSection};
use std::time::Duration;

/// Default minimum repetitions.
pub const DEFAULT_MIN: u32 = 5;
/// Default maximum repetitions when `target_ci` is set.
pub const DEFAULT_MAX_ADAPTIVE: u32 = 30;
/// The most repetitions a series may ask for (`min`, `max`).
pub const MAX_REPETITIONS: u32 = 100_000;

/// Resolved `[repetitions]`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Repetitions {
    /// At least this many counted repetitions per series.
    pub min: u32,
    /// At most this many.
    pub max: u32,
    /// Target 95% CI half-width as a fraction of the mean; `None` = fixed count (`min`).
    pub target_ci: Option<f64>,
    /// Time budget for the whole study.
    pub budget: Option<Duration>,
    /// Execution order.
    pub order: Order,
    /// Seed for `randomized`, if given in the file.
    pub seed: Option<u64>,
    /// Cache policy.
    pub cache: CachePolicy,
    /// Discarded repetitions first in every series (`warmup`; default 1 with `warm`, else 0).
    pub warmup: u32,
    /// Wait up to this long for a quiet machine before each repetition (zero: no wait).
    pub settle: Duration,
    /// Sample once a second during every repetition (`timeline`; default true: one snapshot
    /// a second on a thread of its own, stored after the repetition).
    pub timeline: bool,
    /// What to do with a disturbed repetition (`disturbed`; default `keep`).
    pub disturbed: crate::stats::adaptive::Disturbed,
}

/// Read `[repetitions]` with its defaults, refusing values out of range in one line that
/// names the key.
pub(super) fn repetitions(r: &RepetitionsSection) -> std::result::Result<Repetitions, String> {
    let min = r.min.unwrap_or(DEFAULT_MIN);
    if min == 0 {
        return Err("[repetitions] min must be at least 1".into());
    }
    if let Some(t) = r.target_ci {
        if !(t > 0.0 && t < 1.0) {
            return Err(format!(
                "[repetitions] target_ci = {t}: give a fraction of the mean between 0 and 1, e.g. 0.05 for 5%"
            ));
        }
    }
    let max = match (r.max, r.target_ci) {
        (Some(m), Some(_)) => m,
        (None, Some(_)) => DEFAULT_MAX_ADAPTIVE.max(min),
        (Some(m), None) if m != min => {
            return Err(format!(
                "[repetitions] max = {m} only applies with target_ci; set target_ci for adaptive repetitions or make min the count you want"
            ))
        }
        (_, None) => min,
    };
    for (key, n) in [("min", min), ("max", max)] {
        if n > MAX_REPETITIONS {
            return Err(format!(
                "[repetitions] {key} = {n} is out of range; use 1 to {MAX_REPETITIONS}"
            ));
        }
    }
    if max < min {
        return Err(format!("[repetitions] max ({max}) is below min ({min})"));
    }
    if r.target_ci.is_some() && max < 2 {
        return Err(
            "[repetitions] target_ci needs max of at least 2 (a CI needs two values)".into(),
        );
    }
    let budget = r
        .budget
        .as_deref()
        .map(crate::units::parse_duration)
        .transpose()
        .map_err(|e| format!("[repetitions] budget: {e}"))?;
    let settle = r
        .settle
        .as_deref()
        .map(crate::units::parse_duration)
        .transpose()
        .map_err(|e| format!("[repetitions] settle: {e}"))?
        .unwrap_or(Duration::ZERO);
    let cache = r.cache.unwrap_or(CachePolicy::Cold);
    let warmup = r
        .warmup
        .unwrap_or(if cache == CachePolicy::Warm { 1 } else { 0 });
    if warmup > MAX_WARMUP {
        return Err(format!(
            "[repetitions] warmup = {warmup}: at most {MAX_WARMUP} discarded repetitions per series; \
             raise min instead if more repetitions should count"
        ));
    }
    Ok(Repetitions {
        min,
        max,
        target_ci: r.target_ci,
        budget,
        order: r.order.unwrap_or(Order::Interleaved),
        seed: r.seed,
        cache,
        warmup,
        settle,
        timeline: r.timeline.unwrap_or(true),
        disturbed: r.disturbed.unwrap_or_default(),
    })
}

/// The most discarded warm-up repetitions a series may ask for.
pub const MAX_WARMUP: u32 = 10;
