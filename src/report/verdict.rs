//! Words and numbers as every report format prints them: fixed float formatting (so the same
//! store gives the same bytes), phase and metric names in plain language, and the verdict of
//! a comparison ("faster by 56% (95% CI 49–63%, p < 0.001)", "no significant difference"),
//! with the Benjamini–Hochberg q beside p wherever q is part of the decision.

use crate::metric::Unit;
use crate::stats::compare::{Change, Welch};
use crate::units::Scale;

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// A percentage with precision that suits its size: `367`, `5.2`, `0.45`.
pub fn fmt_pct(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        format!("{x}")
    } else if a >= 10.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A signed percentage: `+56%`, `-3.1%`.
pub fn fmt_signed_pct(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}%", fmt_pct(x))
    } else {
        format!("{}%", fmt_pct(x))
    }
}

/// A p-value: `p < 0.001`, `p = 0.023`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// A Benjamini–Hochberg q-value: `q < 0.001`, `q = 0.066`.
pub fn fmt_q(q: f64) -> String {
    fmt_p(q).replacen('p', "q", 1)
}

/// A p-value alone for table cells: `<0.001`, `0.023`, `-`.
pub fn fmt_p_cell(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}

/// A number in scale `sc` (without its unit), or `-`.
pub fn fmt_opt(v: Option<f64>, sc: &Scale) -> String {
    v.map(|v| sc.num(v)).unwrap_or_else(|| "-".into())
}

/// A 95% interval as `lo – hi` in scale `sc` (without its unit), or `-`.
pub fn fmt_interval(ci: Option<(f64, f64)>, sc: &Scale) -> String {
    ci.map(|(lo, hi)| format!("{} – {}", sc.num(lo), sc.num(hi)))
        .unwrap_or_else(|| "-".into())
}

/// An environment value for display: byte counts (`*_bytes`) get a binary size beside
/// them, `ram_bytes 25769803776 (24.0 GiB)`.
pub fn env_value(key: &str, value: &str) -> String {
    match value.parse::<u64>() {
        Ok(b) if key.ends_with("_bytes") => format!("{value} ({})", crate::units::fmt_bytes(b)),
        _ => value.to_string(),
    }
}

/// A phase name in words (`dir_create` → `directory creation`, `random_read` → `random read`).
pub fn phase_label(phase: &str) -> String {
    match phase {
        "dir_create" => "directory creation".into(),
        "file_create" => "file creation".into(),
        "file_remove" => "file removal".into(),
        "dir_remove" => "directory removal".into(),
        other => other.replace('_', " "),
    }
}

/// A metric name in words (`p99_latency` → `p99 latency`).
pub fn metric_label(name: &str) -> String {
    name.replace('_', " ")
}

/// The subject of an observation: `file creation`, `write throughput`, `ReadX p99 latency`.
pub fn subject(phase: &str, name: &str) -> String {
    match name {
        "rate" | "elapsed" => phase_label(phase),
        _ => format!("{} {}", phase_label(phase), metric_label(name)),
    }
}

/// Whether a change is significant: Welch p < [`ALPHA`] and the interval of the percent
/// change excludes zero (so the verdict never contradicts its own interval).
pub fn is_significant(change: Option<&Change>, welch: Option<&Welch>) -> bool {
    let (Some(c), Some(w)) = (change, welch) else {
        return false;
    };
    let excludes_zero = c.ci95.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
    w.p < ALPHA && excludes_zero
}

/// The verdict of a comparison and whether the candidate is better (when significant).
/// `q` is the comparison's Benjamini–Hochberg q where its family has several comparisons
/// (`None` for a family of one, where q = p): it is printed beside p, and a difference
/// significant on its own but not at q < [`ALPHA`] says that it does not hold up.
pub fn verdict(
    unit: Unit,
    change: Option<&Change>,
    welch: Option<&Welch>,
    q: Option<f64>,
) -> (String, Option<bool>) {
    let Some(c) = change else {
        return ("not comparable (a mean is zero or negative)".into(), None);
    };
    let Some(w) = welch else {
        return (
            format!(
                "{} with too few repetitions to test (needs at least 2 on each side)",
                fmt_signed_pct(c.percent)
            ),
            None,
        );
    };
    let pq = match q {
        Some(q) => format!("{}, {}", fmt_p(w.p), fmt_q(q)),
        None => fmt_p(w.p),
    };
    if !is_significant(Some(c), Some(w)) {
        // With p < ALPHA it is the interval that decides: say so.
        let ci = c
            .ci95
            .map(|(lo, hi)| {
                let includes = if w.p < ALPHA { " includes 0" } else { "" };
                format!(
                    "95% CI {} to {}{includes}, ",
                    fmt_signed_pct(lo),
                    fmt_signed_pct(hi)
                )
            })
            .unwrap_or_default();
        return (
            format!(
                "no significant difference ({}, {ci}{pq})",
                fmt_signed_pct(c.percent)
            ),
            None,
        );
    }
    let up = c.percent > 0.0;
    let better = up == unit.higher_is_better();
    let (lo, hi) = c.ci95.unwrap_or((c.percent, c.percent));
    // Magnitudes of the interval in the direction of the change.
    let (mlo, mhi) = if up { (lo, hi) } else { (-hi, -lo) };
    let mag = c.percent.abs();
    let tail = match q {
        Some(q) if q >= ALPHA => format!(
            "(95% CI {}–{}%, {}), but not after adjusting for multiple comparisons ({})",
            fmt_pct(mlo),
            fmt_pct(mhi),
            fmt_p(w.p),
            fmt_q(q)
        ),
        _ => format!("(95% CI {}–{}%, {pq})", fmt_pct(mlo), fmt_pct(mhi)),
    };
    let text = match unit {
        Unit::Seconds if up => format!("slower: {}% more time {tail}", fmt_pct(mag)),
        Unit::Seconds => format!("faster: {}% less time {tail}", fmt_pct(mag)),
        Unit::Millis if up => format!("higher by {}% {tail}", fmt_pct(mag)),
        Unit::Millis => format!("lower by {}% {tail}", fmt_pct(mag)),
        u if u.is_rate() && up => format!("faster by {}% {tail}", fmt_pct(mag)),
        u if u.is_rate() => format!("slower by {}% {tail}", fmt_pct(mag)),
        _ if up => format!("higher by {}% {tail}", fmt_pct(mag)),
        _ => format!("lower by {}% {tail}", fmt_pct(mag)),
    };
    (text, Some(better))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::{percent_change, welch};

    #[test]
    fn formats_are_fixed() {
        assert_eq!(fmt_pct(367.4), "367");
        assert_eq!(fmt_pct(5.25), "5.2");
        assert_eq!(fmt_pct(-0.456), "-0.46");
        assert_eq!(fmt_signed_pct(56.0), "+56%");
        assert_eq!(fmt_signed_pct(-3.06), "-3.1%");
        assert_eq!(fmt_p(0.0004), "p < 0.001");
        assert_eq!(fmt_p(0.0234), "p = 0.023");
        assert_eq!(fmt_p_cell(None), "-");
    }

    #[test]
    fn verdicts_mind_the_direction() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let more = [156.0, 158.0, 154.0, 157.0, 155.0];
        let c = percent_change(&base, &more).unwrap();
        let w = welch(&base, &more).unwrap();
        let (rate, better) = verdict(Unit::FilesPerSec, Some(&c), Some(&w), None);
        assert!(rate.starts_with("faster by 56% (95% CI "), "{rate}");
        assert!(rate.ends_with("p < 0.001)"), "{rate}");
        assert_eq!(better, Some(true));
        let (time, better) = verdict(Unit::Seconds, Some(&c), Some(&w), None);
        assert!(time.starts_with("slower: 56% more time"), "{time}");
        assert_eq!(better, Some(false));
        let c = percent_change(&more, &base).unwrap();
        let w = welch(&more, &base).unwrap();
        let (time, better) = verdict(Unit::Seconds, Some(&c), Some(&w), None);
        assert!(
            time.starts_with("faster: 36% less time (95% CI 3"),
            "{time}"
        );
        assert_eq!(better, Some(true));
        let (lat, _) = verdict(Unit::Millis, Some(&c), Some(&w), None);
        assert!(lat.starts_with("lower by 36%"), "{lat}");
    }

    #[test]
    fn overlapping_samples_are_no_significant_difference() {
        let a = [100.0, 110.0, 90.0, 105.0];
        let b = [103.0, 95.0, 112.0, 99.0];
        let c = percent_change(&a, &b).unwrap();
        let w = welch(&a, &b).unwrap();
        let (v, better) = verdict(Unit::OpsPerSec, Some(&c), Some(&w), None);
        assert!(
            v.starts_with("no significant difference (+0.99%, 95% CI -12% to +16%, p = 0.865)"),
            "{v}"
        );
        assert_eq!(better, None);
        let single = percent_change(&[1.0], &[2.0]).unwrap();
        assert!(verdict(Unit::OpsPerSec, Some(&single), None, None)
            .0
            .contains("too few repetitions"));
    }

    #[test]
    fn q_is_shown_beside_p_where_it_decides() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let more = [156.0, 158.0, 154.0, 157.0, 155.0];
        let c = percent_change(&base, &more).unwrap();
        let w = welch(&base, &more).unwrap();
        let (v, _) = verdict(Unit::FilesPerSec, Some(&c), Some(&w), Some(0.0004));
        assert!(v.ends_with("p < 0.001, q < 0.001)"), "{v}");
        // Significant on its own, not after the adjustment: the verdict says which decided.
        let (v, better) = verdict(Unit::FilesPerSec, Some(&c), Some(&w), Some(0.09));
        assert!(
            v.ends_with("p < 0.001), but not after adjusting for multiple comparisons (q = 0.090)"),
            "{v}"
        );
        assert_eq!(better, Some(true));
        let a = [100.0, 110.0, 90.0, 105.0];
        let b = [103.0, 95.0, 112.0, 99.0];
        let c = percent_change(&a, &b).unwrap();
        let w = welch(&a, &b).unwrap();
        let (v, _) = verdict(Unit::OpsPerSec, Some(&c), Some(&w), Some(0.9));
        assert!(v.ends_with("p = 0.865, q = 0.900)"), "{v}");
    }

    #[test]
    fn an_interval_that_decides_against_p_is_named() {
        // Welch p < 0.05 but the log-ratio interval includes 0: a lower, noisy candidate
        // (its relative spread weighs more on the log scale than its absolute one in Welch's).
        let a = [100.0, 101.0, 99.0, 100.0, 100.0];
        let b = [20.0, 90.0, 30.0, 80.0, 25.0, 85.0];
        let c = percent_change(&a, &b).unwrap();
        let w = welch(&a, &b).unwrap();
        assert!(
            w.p < ALPHA && !is_significant(Some(&c), Some(&w)),
            "{c:?} {w:?}"
        );
        let (v, _) = verdict(Unit::OpsPerSec, Some(&c), Some(&w), None);
        assert_eq!(
            v,
            "no significant difference (-45%, 95% CI -71% to +3.6% includes 0, p = 0.021)"
        );
    }

    #[test]
    fn environment_sizes() {
        assert_eq!(
            env_value("ram_bytes", "25769803776"),
            "25769803776 (24.0 GiB)"
        );
        assert_eq!(env_value("kernel", "6.1"), "6.1");
    }

    #[test]
    fn words() {
        assert_eq!(subject("dir_remove", "rate"), "directory removal");
        assert_eq!(subject("write", "throughput"), "write throughput");
        assert_eq!(subject("ReadX", "p99_latency"), "ReadX p99 latency");
    }
}
