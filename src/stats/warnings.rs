//! Warnings about results that should not be trusted as they are, each saying what to do.
//! The advice here fits every workload and cache policy; the report adds the advice that
//! depends on them (`report::advice`).

use super::Summary;
use serde::Serialize;
use std::fmt;

/// Thresholds for the warnings; the defaults are documented in `fslab --help` texts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// A timed phase shorter than this (seconds) is too short to trust. Default 1 s.
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
    if is_elapsed && s.mean < t.min_phase_seconds {
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
    fn short_phase_is_flagged_only_for_elapsed() {
        let s = summarize(&[0.2, 0.21, 0.19]).unwrap();
        let t = Thresholds::default();
        let w = metric_warnings("dir_create", "elapsed", true, &s, &t);
        assert!(matches!(w.as_slice(), [Warning::TooShort { .. }]));
        assert!(metric_warnings("dir_create", "rate", false, &s, &t).is_empty());
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
        let s = summarize(&[2.0, 2.0]).unwrap();
        let t = Thresholds {
            min_phase_seconds: 5.0,
            max_cv: 0.1,
        };
        assert_eq!(metric_warnings("p", "elapsed", true, &s, &t).len(), 1);
    }
}
