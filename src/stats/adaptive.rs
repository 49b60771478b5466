//! When to stop repeating a series (one cell × workload): a fixed count, or adaptively when
//! the 95% Student-t confidence interval of every headline metric is narrow enough, between a
//! minimum and a maximum, within a time budget.
//!
//! The rule follows the methodology of Traeger et al. (2008): report 95% t-intervals and
//! make them tight; the half-width is compared with a fraction of the mean (e.g. 0.05 = 5%).
//! Pure functions; the runner stores the reason per series.

use super::summary::summarize;

/// Why a series stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The fixed number of repetitions was reached.
    Fixed,
    /// Every headline metric's CI half-width is within the target.
    CiMet,
    /// The maximum was reached before the CI target.
    MaxReps,
    /// The study's time budget ran out.
    Budget,
    /// The series' own spread gives the power to detect the declared effect
    /// (`[repetitions] detect`).
    PowerMet,
}

impl StopReason {
    /// The word stored in `series.stop_reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Fixed => "fixed",
            StopReason::CiMet => "ci_met",
            StopReason::MaxReps => "max_reps",
            StopReason::Budget => "budget",
            StopReason::PowerMet => "power_met",
        }
    }

    /// The reason stored as `s`, if it is one.
    pub fn parse(s: &str) -> Option<StopReason> {
        [
            StopReason::Fixed,
            StopReason::CiMet,
            StopReason::MaxReps,
            StopReason::Budget,
            StopReason::PowerMet,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do with a repetition other activity on the machine disturbed (the runner judges
/// every repetition's window: other I/O on the backing device, CPU steal, load, other
/// processes' CPU). `[repetitions] disturbed` in a study, `--disturbed` on engine commands.
/// A repetition left out is stored with status `discarded` and `excluded` = `rerun` or
/// `dropped`; under `repeat` a series re-runs at most [`MAX_RERUNS_FACTOR`] times the
/// repetitions it may count.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Disturbed {
    /// Count it, flagged in reports (the default)
    #[default]
    Keep,
    /// Store it as left out and run that repetition again until it is quiet (at most as many
    /// re-runs as repetitions; then a disturbed one is kept)
    Repeat,
    /// Store it as left out and go on with one repetition fewer
    Drop,
}

impl Disturbed {
    /// The word of study files and the flag.
    pub fn as_str(self) -> &'static str {
        match self {
            Disturbed::Keep => "keep",
            Disturbed::Repeat => "repeat",
            Disturbed::Drop => "drop",
        }
    }
}

/// Under [`Disturbed::Repeat`] a series re-runs at most this many times as many repetitions
/// as it may count (its `max`, or `--repeat`): a machine that is never quiet cannot keep a
/// study running forever, and at worst a study takes twice its time.
pub const MAX_RERUNS_FACTOR: u32 = 1;

/// What happens to a completed repetition under a [`Disturbed`] policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Counted (quiet, or kept).
    Count,
    /// Left out and run again (`rerun`).
    Rerun,
    /// Left out (`dropped`); the series goes on.
    Drop,
}

impl Fate {
    /// The word stored in `trial.excluded`, if it is left out.
    pub fn excluded(self) -> Option<&'static str> {
        match self {
            Fate::Count => None,
            Fate::Rerun => Some("rerun"),
            Fate::Drop => Some("dropped"),
        }
    }
}

/// The fate of a completed repetition: `disturbed` whether the runner judged it so,
/// `reruns` how many of the series' repetitions have been re-run already, `max` how many it
/// may count.
pub fn fate(policy: Disturbed, disturbed: bool, reruns: u32, max: u32) -> Fate {
    match (policy, disturbed) {
        (_, false) | (Disturbed::Keep, true) => Fate::Count,
        (Disturbed::Drop, true) => Fate::Drop,
        (Disturbed::Repeat, true) if reruns < MAX_RERUNS_FACTOR * max.max(1) => Fate::Rerun,
        (Disturbed::Repeat, true) => Fate::Count,
    }
}

/// A repetition rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// At least this many.
    pub min: u32,
    /// At most this many.
    pub max: u32,
    /// Target half-width as a fraction of |mean|.
    pub target_ci: Option<f64>,
    /// The effect to detect with 80% power (a fraction); with `target_ci` also `None`, a
    /// fixed count `min`.
    pub detect: Option<f64>,
}

/// The largest relative 95% CI half-width over the headline metrics, or `None` when any of
/// them has no interval yet (fewer than three values — [`super::interval::INTERVAL_MIN_N`] —,
/// a zero mean, a non-finite value).
pub fn worst_relative_ci(headlines: &[Vec<f64>]) -> Option<f64> {
    if headlines.is_empty() {
        return None;
    }
    headlines.iter().try_fold(0.0f64, |worst, v| {
        Some(worst.max(summarize(v)?.ci_relative()?))
    })
}

/// Whether to stop after `n` counted repetitions whose headline values are `headlines`
/// (one vector per headline metric). `None` means: run another one.
///
/// Under `detect` the rule is two-stage (Stein's): the spread of the first `min` values
/// alone (the largest standard deviation of the logs over the headline metrics) fixes how
/// many the series needs for [`super::power::POWER`] to detect the effect, between `min` and
/// `max`, and later values never change it. It reads spreads only, never means, and not the
/// spread of the values the test will end on, so stopping cannot favour a difference or a
/// low variance (`bench/aa.sh` measures the false-discovery rate); a series whose values are
/// not all positive stops at `min`.
pub fn decide(rule: &Rule, n: u32, headlines: &[Vec<f64>]) -> Option<StopReason> {
    match (rule.target_ci, rule.detect) {
        (None, None) => (n >= rule.min).then_some(StopReason::Fixed),
        (None, Some(effect)) => {
            if n < rule.min {
                return None;
            }
            let first: Vec<Vec<f64>> = headlines
                .iter()
                .map(|v| v[..v.len().min(rule.min as usize)].to_vec())
                .collect();
            let need = match super::power::worst_log_sd(&first) {
                Some(0.0) => rule.min,
                Some(s) => super::power::n_for_power(s, effect)?.max(rule.min),
                None => return Some(StopReason::Fixed),
            };
            let reason = if need > rule.max {
                StopReason::MaxReps
            } else {
                StopReason::PowerMet
            };
            (n >= need.min(rule.max)).then_some(reason)
        }
        (Some(target), _) => {
            let tight = worst_relative_ci(headlines).is_some_and(|w| w <= target);
            if n >= rule.min && n >= 2 && tight {
                return Some(StopReason::CiMet);
            }
            (n >= rule.max).then_some(StopReason::MaxReps)
        }
    }
}

/// Whether another repetition expected to take `next_s` seconds still fits the budget.
pub fn budget_allows(spent_s: f64, budget_s: f64, next_s: f64) -> bool {
    spent_s + next_s.max(0.0) <= budget_s
}

/// How many more repetitions a series needs at least and may take at most.
pub fn remaining(rule: &Rule, n: u32) -> (u32, u32) {
    let lo = rule.min.saturating_sub(n);
    let hi = match (rule.target_ci, rule.detect) {
        (None, None) => lo,
        _ => rule.max.saturating_sub(n),
    };
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn rule(min: u32, max: u32, target_ci: Option<f64>, detect: Option<f64>) -> Rule {
        Rule {
            min,
            max,
            target_ci,
            detect,
        }
    }
    const FIXED: Rule = rule(3, 3, None, None);
    const ADAPTIVE: Rule = rule(3, 6, Some(0.05), None);
    const DETECT: Rule = rule(3, 8, None, Some(0.10));

    #[test]
    fn detect_fixes_n_from_the_first_min_values_spread() {
        // cv about 1%: three are plenty.
        let quiet = vec![100.0, 101.0, 99.0];
        assert_eq!(decide(&DETECT, 2, &[quiet[..2].to_vec()]), None);
        assert_eq!(
            decide(&DETECT, 3, std::slice::from_ref(&quiet)),
            Some(StopReason::PowerMet)
        );
        // cv about 6% in the first three: the series needs more, as many as that spread
        // needs whatever comes later.
        let noisy = vec![94.0, 100.0, 106.0];
        let s = crate::stats::power::worst_log_sd(std::slice::from_ref(&noisy)).unwrap();
        let need = crate::stats::power::n_for_power(s, 0.1).unwrap();
        assert!(need > 3 && need <= 8, "{need}");
        assert_eq!(decide(&DETECT, 3, std::slice::from_ref(&noisy)), None);
        let mut more = noisy.clone();
        more.resize(need as usize - 1, 100.0);
        assert_eq!(decide(&DETECT, need - 1, &[more.clone()]), None);
        more.push(100.0);
        assert_eq!(decide(&DETECT, need, &[more]), Some(StopReason::PowerMet));
        // Later values do not move it: quiet ones after a noisy start do not stop it early,
        // wild ones after a quiet start do not keep it going.
        let mut calm_after = noisy.clone();
        calm_after.push(100.0);
        assert_eq!(
            decide(&DETECT, 4, &[calm_after]),
            decide(&DETECT, 4, &[vec![94.0, 100.0, 106.0, 50.0]])
        );
        // Only the spread decides: the same values shifted by a factor stop alike.
        let shifted: Vec<f64> = noisy.iter().map(|x| x * 3.0).collect();
        assert_eq!(decide(&DETECT, 3, &[shifted]), None);
        // A spread that needs more than max: stop at max, named so.
        let wild = vec![50.0, 150.0, 100.0, 60.0, 140.0, 100.0, 70.0, 130.0];
        assert_eq!(decide(&DETECT, 7, &[wild[..7].to_vec()]), None);
        assert_eq!(decide(&DETECT, 8, &[wild]), Some(StopReason::MaxReps));
        // Values that are not all positive: stop at min.
        assert_eq!(
            decide(&DETECT, 3, &[vec![0.0, 1.0, 2.0]]),
            Some(StopReason::Fixed)
        );
        assert_eq!(remaining(&DETECT, 4), (0, 4));
        assert_eq!(StopReason::parse("power_met"), Some(StopReason::PowerMet));
    }

    #[test]
    fn fixed_stops_exactly_at_min() {
        assert_eq!(decide(&FIXED, 2, &[]), None);
        assert_eq!(decide(&FIXED, 3, &[]), Some(StopReason::Fixed));
        assert_eq!(remaining(&FIXED, 1), (2, 2));
    }

    #[test]
    fn adaptive_stops_when_every_headline_is_tight() {
        let tight = vec![100.0, 101.0, 99.0];
        let loose = vec![50.0, 150.0, 100.0];
        // Not before min, even when tight.
        assert_eq!(decide(&ADAPTIVE, 2, &[tight[..2].to_vec()]), None);
        assert_eq!(
            decide(&ADAPTIVE, 3, std::slice::from_ref(&tight)),
            Some(StopReason::CiMet)
        );
        // One loose metric keeps it going…
        assert_eq!(decide(&ADAPTIVE, 3, &[tight.clone(), loose.clone()]), None);
        // …until max.
        let loose6 = vec![50.0, 150.0, 100.0, 60.0, 140.0, 100.0];
        assert_eq!(decide(&ADAPTIVE, 6, &[loose6]), Some(StopReason::MaxReps));
        assert_eq!(remaining(&ADAPTIVE, 4), (0, 2));
    }

    #[test]
    fn relative_ci_matches_a_hand_computation() {
        // mean 100, sd 1, n 3: half-width = t(2, .975) * 1 / sqrt(3) = 4.3027 / 1.7321 = 2.484
        let w = worst_relative_ci(&[vec![99.0, 100.0, 101.0]]).unwrap();
        assert!((w - 0.02484).abs() < 1e-4, "{w}");
        assert_eq!(worst_relative_ci(&[vec![1.0]]), None);
        assert_eq!(worst_relative_ci(&[vec![0.0, 0.0]]), None);
        assert_eq!(worst_relative_ci(&[]), None);
    }

    #[test]
    fn no_headline_means_run_to_max() {
        assert_eq!(decide(&ADAPTIVE, 3, &[]), None);
        assert_eq!(decide(&ADAPTIVE, 6, &[]), Some(StopReason::MaxReps));
    }

    #[test]
    fn disturbed_repetitions_by_policy() {
        assert_eq!(fate(Disturbed::Keep, true, 0, 5), Fate::Count);
        assert_eq!(fate(Disturbed::Repeat, false, 0, 5), Fate::Count);
        assert_eq!(fate(Disturbed::Repeat, true, 4, 5), Fate::Rerun);
        // The re-run limit reached: the disturbed repetition is kept (and flagged).
        assert_eq!(fate(Disturbed::Repeat, true, 5, 5), Fate::Count);
        assert_eq!(fate(Disturbed::Drop, true, 0, 5), Fate::Drop);
        assert_eq!(fate(Disturbed::Drop, false, 0, 5), Fate::Count);
        assert_eq!(Fate::Rerun.excluded(), Some("rerun"));
        assert_eq!(Fate::Drop.excluded(), Some("dropped"));
        assert_eq!(Fate::Count.excluded(), None);
        assert_eq!(Disturbed::default(), Disturbed::Keep);
    }

    #[test]
    fn budget() {
        assert!(budget_allows(50.0, 60.0, 10.0));
        assert!(!budget_allows(50.0, 60.0, 10.5));
        assert_eq!(StopReason::CiMet.as_str(), "ci_met");
    }
}
