//! Warnings about results that should not be trusted as they are, each saying what to do.
//! The advice here fits every workload and cache policy; the report adds the advice that
//! depends on them (`report::advice`).

use super::Summary;
use serde::Serialize;
use std::fmt;

/// Thresholds for the warnings; the defaults are documented in `fslab --help` texts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// A timed phase shorter than this (seconds) whose time varies by more than `max_cv` is
    /// too short to trust ([`too_short`]). Default 1 s.
    pub min_phase_seconds: f64,
    /// A coefficient of variation above this is high. Default 0.10 (10%).
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
    /// The coefficient of variation is above the threshold.
    HighVariation {
        /// `phase.metric`.
        metric: String,
        /// Coefficient of variation.
        cv: f64,
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
            Warning::HighVariation { metric, cv, threshold } => write!(
                f,
                "{metric}: coefficient of variation {:.1}% is above {:.0}%; run more repetitions or quiet the machine",
                cv * 100.0,
                threshold * 100.0
            ),
        }
    }
}

/// Whether a phase whose elapsed times are summarised by `s` is too short to trust: its mean
/// is under `min_phase_seconds` **and** its measured run-to-run variation shows it (the
/// coefficient of variation of its time is above `max_cv`; with a single repetition, nothing
/// is measured and the time alone decides). A short phase whose time repeats within `max_cv`
/// is timed well enough: the clock is monotonic with nanosecond resolution, and what makes a
/// short phase untrustworthy — scheduling, a journal commit or writeback landing in it — shows
/// as variation.
pub fn too_short(s: &Summary, t: &Thresholds) -> bool {
    s.mean < t.min_phase_seconds && s.cv.map_or(true, |cv| cv > t.max_cv)
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
    if let Some(cv) = s.cv {
        if cv > t.max_cv {
            w.push(Warning::HighVariation {
                metric: format!("{phase}.{metric}"),
                cv,
                threshold: t.max_cv,
            });
        }
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
        // 0.2 s varying by 25%: too short to trust.
        let noisy = summarize(&[0.2, 0.3, 0.15]).unwrap();
        assert!(too_short(&noisy, &t));
        // One repetition: nothing measured, the time decides.
        assert!(too_short(&summarize(&[0.2]).unwrap(), &t));
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
    fn thresholds_are_configurable() {
        let s = summarize(&[2.0, 2.6]).unwrap();
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
