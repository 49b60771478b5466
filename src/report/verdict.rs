//! Words and numbers as every report format prints them: fixed float formatting (so the same
//! store gives the same bytes), phase and metric names in plain language, and the verdict of
//! a comparison ("faster by 56% (95% CI 49–63%, p < 0.001)", "24.0× faster (95% CI
//! 20.1×–28.4×, p < 0.001)" from twice or half on, "no significant difference",
//! "inconclusive", "not tested (n = 1)"), with the Benjamini–Hochberg q and its family's size
//! beside p wherever q is part of the decision.

use crate::metric::Unit;
use crate::stats::compare::{Change, Welch};
use crate::stats::effect::{EffectScale, MAX_RESOLVE_N, RESOLUTION};
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

/// A signed percentage: `+56%`, `-3.1%` (`+0.00%` for what rounds to zero either side).
pub fn fmt_signed_pct(x: f64) -> String {
    if x.abs() < 0.005 {
        "+0.00%".into()
    } else if x >= 0.0 {
        format!("+{}%", fmt_pct(x))
    } else {
        format!("{}%", fmt_pct(x))
    }
}

/// A factor in words: `4.0× slower` for `x` ≥ 1 with `up` = `slower`, `2.5× faster` (1/x)
/// below 1 with `down` = `faster`; from 100 on without a decimal (`2178×`).
pub fn fmt_factor(x: f64, up: &str, down: &str) -> String {
    if x >= 1.0 {
        format!("{} {up}", times(x))
    } else {
        format!("{} {down}", times(1.0 / x))
    }
}

/// A factor of at least 1: `4.0×`, `2178×`.
fn times(x: f64) -> String {
    if x >= 99.95 {
        format!("{x:.0}×")
    } else {
        format!("{x:.1}×")
    }
}

/// From this factor on (either way), a significant change is said as a factor (`24.0×
/// faster`), not as a percentage (`faster by 2289%`).
pub const FACTOR_FROM: f64 = 2.0;

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

/// Whether a change is significant: p < [`ALPHA`] and the 95% interval of the percent change
/// excludes zero. Test and interval come from one model (`stats::effect`), so the two agree;
/// both are required so that no rounding at the boundary can make a verdict contradict the
/// interval it prints.
pub fn is_significant(change: Option<&Change>, welch: Option<&Welch>) -> bool {
    let (Some(c), Some(w)) = (change, welch) else {
        return false;
    };
    let excludes_zero = c.ci95.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
    w.p < ALPHA && excludes_zero
}

/// Whether a change's interval lies within ±[`RESOLUTION`] (on the log scale from
/// `1/1.1 − 1` to `1.1 − 1`): then "no significant difference" says that no difference of
/// that size is likely; a wider interval that includes 0 is "inconclusive".
pub fn within_resolution(c: &Change) -> bool {
    let (down, up) = match c.scale {
        EffectScale::Log => (100.0 * (1.0 / (1.0 + RESOLUTION) - 1.0), 100.0 * RESOLUTION),
        EffectScale::Raw => (-100.0 * RESOLUTION, 100.0 * RESOLUTION),
    };
    c.ci95
        .is_some_and(|(lo, hi)| lo >= down - 1e-9 && hi <= up + 1e-9)
}

/// p with the Benjamini–Hochberg q beside it where its family has several members, and the
/// family's size: `p = 0.008, q = 0.017 of 4`.
fn fmt_pq(p: f64, q: Option<(f64, usize)>) -> String {
    match q {
        Some((q, m)) if m > 1 => format!("{}, {} of {m}", fmt_p(p), fmt_q(q)),
        _ => fmt_p(p),
    }
}

/// Whether more of metric `name` in `unit` is better: the unit's direction
/// ([`Unit::higher_is_better`]: rates up, times and latencies down), except for percentages
/// that measure a cost — CPU use and device utilisation (`sys_cpu`, `usr_cpu`, `cpu.*`,
/// `disk_util`, `…util`), where less is better.
pub fn higher_is_better(unit: Unit, name: &str) -> bool {
    let cost = unit == Unit::Percent
        && ["cpu", "util", "iowait", "steal"]
            .iter()
            .any(|w| name.contains(w));
    !cost && unit.higher_is_better()
}

/// The verdict of a comparison and whether the candidate is better (when significant) in
/// the direction of its metric `name` ([`higher_is_better`]).
/// `q` is the comparison's Benjamini–Hochberg q and its family's size: where q is part of the
/// decision (a significant difference, in a family of several) it is printed beside p with
/// the family's size, and a difference significant on its own but not at q < [`ALPHA`] says
/// that it does not hold up. `n` is the smaller side's repetitions.
pub fn verdict(
    unit: Unit,
    name: &str,
    change: Option<&Change>,
    welch: Option<&Welch>,
    q: Option<(f64, usize)>,
    n: usize,
) -> (String, Option<bool>) {
    let Some(c) = change else {
        return ("not comparable (a mean is zero or negative)".into(), None);
    };
    let Some(w) = welch else {
        return (format!("not tested (n = {n})"), None);
    };
    let pq = fmt_pq(w.p, q);
    if !is_significant(Some(c), Some(w)) {
        // q ≥ p ≥ 0.05 decides nothing here: p alone (the q column and the JSON have it).
        let ci = c
            .ci95
            .map(|(lo, hi)| format!("95% CI {} to {}, ", fmt_signed_pct(lo), fmt_signed_pct(hi)))
            .unwrap_or_default();
        let word = if within_resolution(c) {
            "no significant difference"
        } else {
            "inconclusive"
        };
        return (
            format!("{word} ({}, {ci}{})", fmt_signed_pct(c.percent), fmt_p(w.p)),
            None,
        );
    }
    let up = c.percent > 0.0;
    let better = up == higher_is_better(unit, name);
    let (lo, hi) = c.ci95.unwrap_or((c.percent, c.percent));
    // Magnitudes of the interval in the direction of the change.
    let (mlo, mhi) = if up { (lo, hi) } else { (-hi, -lo) };
    let mag = c.percent.abs();
    // A large change on the ratio scale as a factor: the ratio and its interval's bounds,
    // each the way of the change (`24.0× faster (95% CI 20.1×–28.4×, …)`).
    let factor =
        (c.scale == EffectScale::Log && c.ratio.max(1.0 / c.ratio) >= FACTOR_FROM).then(|| {
            let f = |pct: f64| {
                if up {
                    1.0 + pct / 100.0
                } else {
                    1.0 / (1.0 + pct / 100.0)
                }
            };
            (f(lo).min(f(hi)), f(lo).max(f(hi)))
        });
    let ci = match factor {
        Some((a, b)) => format!("95% CI {}–{}", times(a), times(b)),
        None => format!("95% CI {}–{}%", fmt_pct(mlo), fmt_pct(mhi)),
    };
    let tail = match q {
        Some((qv, m)) if qv >= ALPHA && m > 1 => format!(
            "({ci}, {}), but not after adjusting for {m} tests ({})",
            fmt_p(w.p),
            fmt_q(qv)
        ),
        _ => format!("({ci}, {pq})"),
    };
    if factor.is_some() {
        let (more, less) = match unit {
            Unit::Seconds => ("slower", "faster"),
            u if u.is_rate() => ("faster", "slower"),
            _ => ("higher", "lower"),
        };
        return (
            format!("{} {tail}", fmt_factor(c.ratio, more, less)),
            Some(better),
        );
    }
    let text = match unit {
        Unit::Seconds if up => format!("slower: {}% more time {tail}", fmt_pct(mag)),
        Unit::Seconds => format!("faster: {}% less time {tail}", fmt_pct(mag)),
        u if u.is_rate() && up => format!("faster by {}% {tail}", fmt_pct(mag)),
        u if u.is_rate() => format!("slower by {}% {tail}", fmt_pct(mag)),
        _ if up => format!("higher by {}% {tail}", fmt_pct(mag)),
        _ => format!("lower by {}% {tail}", fmt_pct(mag)),
    };
    (text, Some(better))
}

/// For an inconclusive verdict, what the design could detect and what more repetitions
/// would buy: `at n = 5 and this spread, 80% power only for changes of 14% or more; about 12
/// repetitions each would narrow the interval to ±10% (a precision target)` (each: of the two
/// configurations compared). The first half is the power of the test at the n used
/// ([`crate::stats::power::detectable`]), the second a precision target, not a power: an
/// interval of ±10% finds a true 10% change only about half the time. `None` for any other
/// verdict, or when the interval is already that narrow.
pub fn more_repetitions(
    change: Option<&Change>,
    welch: Option<&Welch>,
    n: usize,
) -> Option<String> {
    let c = change?;
    if welch.is_none() || is_significant(Some(c), welch) || within_resolution(c) {
        return None;
    }
    let power = c
        .log_sd
        .filter(|s| *s > 0.0)
        .and_then(|s| crate::stats::power::detectable(u32::try_from(n).ok()?, s))
        .filter(|e| e.is_finite())
        .map(|e| {
            format!(
                "at n = {n} and this spread, 80% power only for changes of {}% or more",
                fmt_pct(100.0 * e)
            )
        });
    let pct = fmt_pct(100.0 * RESOLUTION);
    let precision = match c.resolve_n? {
        need if need as usize <= n => None,
        need if need >= MAX_RESOLVE_N => Some(format!(
            "over {MAX_RESOLVE_N} repetitions each would be needed to narrow the interval to ±{pct}% (a precision target)"
        )),
        need => Some(format!(
            "about {need} repetitions each would narrow the interval to ±{pct}% (a precision target)"
        )),
    };
    match (power, precision) {
        (Some(p), Some(q)) => Some(format!("{p}; {q}")),
        (Some(p), None) => Some(p),
        (None, Some(q)) => Some(format!("{q} (now {n})")),
        (None, None) => None,
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
