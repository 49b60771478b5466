//! Warnings about results that should not be trusted as they are, each saying what to do.
//! The advice here fits every workload and cache policy; the report adds the advice that
//! depends on them (`report::advice`).

use super::Summary;
use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::fmt;

/// Thresholds for the warnings; the defaults are documented in `fslab --help` texts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// A timed phase shorter than this (seconds) whose time varies by more than `max_cv` is
    /// too short to trust ([`too_short`]). Default 1 s.
    pub min_phase_seconds: f64,
    /// A coefficient of variation shown to be above this is high ([`high_variation`]).
    /// Default 0.10 (10%).
    pub max_cv: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_phase_seconds: 1.0,
            max_cv: 0.10,
        }
    }
}

/// A warning about one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The phase's mean elapsed time is below the threshold.
    TooShort {
        /// Phase name.
        phase: String,
        /// Mean seconds.
        seconds: f64,
        /// Threshold.
        threshold: f64,
    },
    /// The coefficient of variation is shown to be above the threshold ([`high_variation`]).
    HighVariation {
        /// `phase.metric`.
        metric: String,
        /// Coefficient of variation.
        cv: f64,
        /// Its one-sided 95% lower confidence bound ([`cv_lower_bound`]).
        at_least: f64,
        /// Threshold.
        threshold: f64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TooShort { phase, seconds, threshold } => write!(
                f,
                "{phase}: took {seconds:.3} s on average, under {threshold} s: too short to trust; make the workload larger"
            ),
            Warning::HighVariation {
                metric,
                cv,
                at_least,
                threshold,
            } => write!(
                f,
                "{metric}: {}; run more repetitions or quiet the machine",
                variation_text(*cv, *at_least, *threshold)
            ),
        }
    }
}

/// The one-sided 95% lower confidence bound of the coefficient of variation of `s`:
/// `cv·√((n − 1)/χ²₀.₉₅(n − 1))`, from the chi-square distribution of the sample variance of
/// n normal values (the mean taken as known: its own error is an order smaller). `None` below
/// two values or without a coefficient of variation.
///
/// Why a bound and not the measured value: at n = 5 the sample standard deviation of a series
/// whose true variation is 8% exceeds 10% about one time in five, so a report of eight such
/// series warned most of the time about variation it did not have. The warning claims the
/// variation *is* above the threshold, so it needs the evidence: at n = 5 a measured
/// coefficient above 1.54 times the threshold, at n = 10 above 1.37 times. The intervals and the
/// verdicts carry the measured variation in full whatever this rule says.
pub fn cv_lower_bound(s: &Summary) -> Option<f64> {
    let cv = s.cv?;
    if s.n < 2 {
        return None;
    }
    let df = (s.n - 1) as f64;
    let q = ChiSquared::new(df).ok()?.inverse_cdf(0.95);
    Some(cv * (df / q).sqrt())
}

/// Repetitions a series needs before fslab says anything of how much it varies: with two, one
/// difference is all there is to go on.
pub const VARIATION_MIN_N: usize = 3;

/// What a short phase's warning says when it ran fewer than [`VARIATION_MIN_N`] times (the
/// grouped line's title reads it).
pub const TOO_FEW_TO_TELL: &str = "too few repetitions to tell how its time varies";

/// When `s` varies by more than `max_cv` with 95% confidence ([`cv_lower_bound`]), its
/// coefficient of variation and that bound; never below [`VARIATION_MIN_N`] repetitions.
pub fn high_variation(s: &Summary, t: &Thresholds) -> Option<(f64, f64)> {
    if s.n < VARIATION_MIN_N {
        return None;
    }
    let (cv, at_least) = (s.cv?, cv_lower_bound(s)?);
    (at_least > t.max_cv).then_some((cv, at_least))
}

/// "coefficient of variation 16.2% is above 10% (at least 10.5%, 95% confidence)".
pub fn variation_text(cv: f64, at_least: f64, threshold: f64) -> String {
    format!(
        "coefficient of variation {:.1}% is above {:.0}% (at least {:.1}%, 95% confidence)",
        cv * 100.0,
        threshold * 100.0,
        at_least * 100.0
    )
}

/// Whether a phase whose elapsed times are summarised by `s` is too short to trust: its mean
/// is under `min_phase_seconds` **and** its measured run-to-run variation shows it (its time
/// varies by more than `max_cv` with 95% confidence, [`high_variation`]; with fewer than
/// [`VARIATION_MIN_N`] repetitions, nothing is measured and the time alone decides). A short phase whose time
/// repeats within `max_cv` is timed well enough: the clock is monotonic with nanosecond
/// resolution, and what makes a short phase untrustworthy — scheduling, a journal commit or
/// writeback landing in it — shows as variation.
pub fn too_short(s: &Summary, t: &Thresholds) -> bool {
    s.mean < t.min_phase_seconds && (s.n < VARIATION_MIN_N || high_variation(s, t).is_some())
}

/// Warnings for one metric of one phase. `is_elapsed` marks the phase's elapsed-time metric,
/// which is the one checked against `min_phase_seconds`.
pub fn metric_warnings(
    phase: &str,
    metric: &str,
    is_elapsed: bool,
    s: &Summary,
    t: &Thresholds,
) -> Vec<Warning> {
    let mut w = Vec::new();
    if is_elapsed && too_short(s, t) {
        w.push(Warning::TooShort {
            phase: phase.to_string(),
            seconds: s.mean,
            threshold: t.min_phase_seconds,
        });
    }
    if let Some((cv, at_least)) = high_variation(s, t) {
        w.push(Warning::HighVariation {
            metric: format!("{phase}.{metric}"),
            cv,
            at_least,
            threshold: t.max_cv,
        });
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    #[test]
    fn a_short_phase_is_judged_by_its_measured_variation() {
        let t = Thresholds::default();
        // 0.2 s, repeating within 5%: timed well enough.
        let steady = summarize(&[0.2, 0.21, 0.19]).unwrap();
        assert!(!too_short(&steady, &t));
        // 0.2 s varying by 36%: too short to trust.
        let noisy = summarize(&[0.2, 0.3, 0.15]).unwrap();
        assert!(too_short(&noisy, &t));
        // 0.2 s whose three times vary by 12.5%: not shown to vary by more than 10%.
        let unclear = summarize(&[0.2, 0.225, 0.175]).unwrap();
        assert!((unclear.cv.unwrap() - 0.125).abs() < 1e-9);
        assert!(!too_short(&unclear, &t));
        // One repetition, or two: nothing measured, the time decides.
        assert!(too_short(&summarize(&[0.2]).unwrap(), &t));
        let two = summarize(&[0.2, 0.3]).unwrap();
        assert!(too_short(&two, &t));
        assert_eq!(
            high_variation(&two, &t),
            None,
            "no variation claimed from two"
        );
        assert!(high_variation(&summarize(&[0.2, 0.3, 0.15]).unwrap(), &t).is_some());
        // Long phases never, however they vary.
        assert!(!too_short(&summarize(&[2.0, 3.0, 1.5]).unwrap(), &t));
    }

    #[test]
    fn short_phase_is_flagged_only_for_elapsed() {
        let s = summarize(&[0.2, 0.3, 0.15]).unwrap();
        let t = Thresholds::default();
        let w = metric_warnings("dir_create", "elapsed", true, &s, &t);
        assert!(matches!(
            w.as_slice(),
            [Warning::TooShort { .. }, Warning::HighVariation { .. }]
        ));
        assert!(!metric_warnings("dir_create", "rate", false, &s, &t)
            .iter()
            .any(|w| matches!(w, Warning::TooShort { .. })));
        assert!(w[0].to_string().contains("too short"));
        // No engine's words (fdtree's files and levels) and no cache policy in the generic text.
        assert!(w[0].to_string().ends_with("make the workload larger"));
    }

    #[test]
    fn high_cv_is_flagged() {
        let s = summarize(&[100.0, 150.0, 60.0]).unwrap();
        let w = metric_warnings("file_create", "rate", false, &s, &Thresholds::default());
        assert!(matches!(w.as_slice(), [Warning::HighVariation { .. }]));
        let quiet = summarize(&[100.0, 101.0, 99.0]).unwrap();
        assert!(
            metric_warnings("file_create", "rate", false, &quiet, &Thresholds::default())
                .is_empty()
        );
    }

    #[test]
    fn the_variation_bound_matches_the_chi_square_quantiles() {
        // χ²₀.₉₅ with 4 degrees of freedom is 9.4877, with 9 it is 16.919 (tables).
        let five = summarize(&[90.0, 95.0, 100.0, 105.0, 110.0]).unwrap();
        let lo = cv_lower_bound(&five).unwrap();
        assert!((lo / five.cv.unwrap() - (4.0f64 / 9.4877).sqrt()).abs() < 1e-4);
        let ten: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
        let ten = summarize(&ten).unwrap();
        let lo = cv_lower_bound(&ten).unwrap();
        assert!((lo / ten.cv.unwrap() - (9.0f64 / 16.919).sqrt()).abs() < 1e-4);
        assert_eq!(cv_lower_bound(&summarize(&[1.0]).unwrap()), None);
    }

    #[test]
    fn a_measured_cv_just_over_the_threshold_is_not_a_warning() {
        // Five values with a measured cv of about 12%: the lower bound (about 7.8%) is under 10%.
        let s = summarize(&[85.0, 92.5, 100.0, 107.5, 115.0]).unwrap();
        assert!(s.cv.unwrap() > 0.10 && s.cv.unwrap() < 0.13);
        assert!(metric_warnings("p", "rate", false, &s, &Thresholds::default()).is_empty());
        // The same spread with a threshold of 5% is shown to be above it.
        let t = Thresholds {
            max_cv: 0.05,
            ..Thresholds::default()
        };
        let w = metric_warnings("p", "rate", false, &s, &t);
        assert!(matches!(w.as_slice(), [Warning::HighVariation { .. }]));
        assert!(w[0].to_string().contains("95% confidence"), "{}", w[0]);
    }

    #[test]
    fn thresholds_are_configurable() {
        let s = summarize(&[2.0, 3.0, 2.5]).unwrap();
        let t = Thresholds {
            min_phase_seconds: 5.0,
            max_cv: 0.1,
        };
        let short = |t: &Thresholds| {
            metric_warnings("p", "elapsed", true, &s, t)
                .iter()
                .filter(|w| matches!(w, Warning::TooShort { .. }))
                .count()
        };
        assert_eq!(short(&t), 1);
        assert_eq!(short(&Thresholds { max_cv: 0.5, ..t }), 0);
    }
}
