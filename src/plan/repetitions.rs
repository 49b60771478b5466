//! `[repetitions]` resolved: how many counted repetitions per series (by design for the power
//! to detect the declared effect, fixed, or adaptive up to `max` until `target_ci`), the budget, order, cache policy, warm-ups, settling, the
//! timeline and the disturbed-repetition policy, with their defaults and limits.

use super::file::{CachePolicy, Order, RepetitionsSection};
use std::time::Duration;

/// Default minimum repetitions of a precision target (`target_ci`) without `min`.
pub const DEFAULT_MIN: u32 = 5;
/// The smallest effect that matters when a study declares neither `detect`, `min` nor
/// `target_ci`: 10%.
pub const DEFAULT_DETECT: f64 = 0.10;
/// The coefficient of variation a design assumes before it has measured one: 5%.
pub const ASSUMED_CV: f64 = 0.05;
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
    /// Target 95% CI half-width as a fraction of the mean (a precision target).
    pub target_ci: Option<f64>,
    /// The smallest effect that matters (`detect`, a fraction): `min` is the design's n for
    /// 80% power at [`ASSUMED_CV`] (unless given); a series whose spread an earlier study of
    /// the same name measured runs the n that spread needs, at most `max`. `None` with
    /// `target_ci` also `None`: a fixed count (`min`).
    pub detect: Option<f64>,
    /// With `detect` and a `max` given: each series also fixes its n from the spread of its
    /// own first `min` values (two-stage), up to `max`. Off by default: stopping by a spread
    /// the test then uses raises the A/A rate with unequal spreads (`bench/aa.sh`).
    pub extend: bool,
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

impl Repetitions {
    /// The stopping rule every series of the study follows.
    pub fn rule(&self) -> crate::stats::adaptive::Rule {
        crate::stats::adaptive::Rule {
            min: self.min,
            max: self.max,
            target_ci: self.target_ci,
            detect: self.detect.filter(|_| self.extend),
        }
    }
}

/// Read `[repetitions]` with its defaults, refusing values out of range in one line that
/// names the key.
pub(super) fn repetitions(r: &RepetitionsSection) -> std::result::Result<Repetitions, String> {
    if let Some(t) = r.target_ci {
        if !(t > 0.0 && t < 1.0) {
            return Err(format!(
                "[repetitions] target_ci = {t}: give a fraction of the mean between 0 and 1, e.g. 0.05 for 5%"
            ));
        }
    }
    let detect = match (&r.detect, r.target_ci, r.min) {
        (Some(_), Some(_), _) => {
            return Err("[repetitions] detect and target_ci are two stopping rules (power for an effect, a precision target); give one".into())
        }
        (Some(d), None, _) => Some(parse_detect(d)?),
        (None, None, None) => Some(DEFAULT_DETECT),
        (None, _, _) => None,
    };
    let min = match (r.min, detect) {
        (Some(m), _) => m,
        (None, Some(d)) => design_n(d),
        (None, None) => DEFAULT_MIN,
    };
    if min == 0 {
        return Err("[repetitions] min must be at least 1".into());
    }
    let adaptive = r.target_ci.is_some() || detect.is_some();
    let max = match (r.max, adaptive) {
        (Some(m), true) => m,
        (None, true) => DEFAULT_MAX_ADAPTIVE.max(min),
        (Some(m), false) if m != min => {
            return Err(format!(
                "[repetitions] max = {m} only applies with detect or target_ci; set one for adaptive repetitions or make min the count you want"
            ))
        }
        (_, false) => min,
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
    let duration = |key: &str, v: &Option<String>| {
        let d = v.as_deref().map(crate::units::parse_duration).transpose();
        d.map_err(|e| format!("[repetitions] {key}: {e}"))
    };
    let budget = duration("budget", &r.budget)?;
    let settle = duration("settle", &r.settle)?.unwrap_or(Duration::ZERO);
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
        detect,
        extend: detect.is_some() && r.max.is_some(),
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

/// The design's repetitions per series for `detect` at the assumed spread: 80% power for
/// the two-sided Welch test on logs (α = 0.05 before adjustment) at [`ASSUMED_CV`].
pub fn design_n(detect: f64) -> u32 {
    use crate::stats::power;
    power::n_for_power(power::log_sd(ASSUMED_CV), detect).unwrap_or(DEFAULT_MIN)
}

/// `detect = "10%"` (or a fraction, `"0.1"`) as a fraction, refused outside 0.5%–1000%.
fn parse_detect(d: &str) -> std::result::Result<f64, String> {
    let t = d.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(f) if (0.005..=10.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "[repetitions] detect = \"{d}\": give the smallest effect that matters as a percentage from 0.5% to 1000%, e.g. \"10%\""
        )),
    }
}

/// The most discarded warm-up repetitions a series may ask for.
pub const MAX_WARMUP: u32 = 10;
