//! Tests of the verdict words: direction by unit, q and its family beside p, "inconclusive"
//! with the repetitions that would help, "not tested", and the property that no verdict
//! contradicts the interval it prints.

use super::*;
use crate::report::tests::{ends, has, starts};
use crate::stats::compare::Welch;
use crate::stats::effect::effect;
use proptest::prelude::*;

/// Five values around 100, and five around 156.
const BASE: [f64; 5] = [100.0, 102.0, 98.0, 101.0, 99.0];
const MORE: [f64; 5] = [156.0, 158.0, 154.0, 157.0, 155.0];

/// The verdict on metric `m` at n = 5 without a family.
fn said(unit: Unit, c: &Change, w: &Option<Welch>) -> (String, Option<bool>) {
    verdict(unit, "m", Some(c), w.as_ref(), None, 5)
}

fn judge(a: &[f64], b: &[f64]) -> (Change, Option<Welch>) {
    effect(a, b).unwrap()
}

#[test]
fn formats_are_fixed() {
    assert_eq!(fmt_pct(367.4), "367");
    assert_eq!(fmt_pct(5.25), "5.2");
    assert_eq!(fmt_pct(-0.456), "-0.46");
    assert_eq!(fmt_signed_pct(56.0), "+56%");
    assert_eq!(fmt_signed_pct(-3.06), "-3.1%");
    assert_eq!(fmt_signed_pct(-1e-12), "+0.00%");
    assert_eq!(fmt_p(0.0004), "p < 0.001");
    assert_eq!(fmt_p(0.0234), "p = 0.023");
    assert_eq!(fmt_p_cell(None), "-");
}

#[test]
fn verdicts_mind_the_direction() {
    let (c, w) = judge(&BASE, &MORE);
    let (rate, better) = said(Unit::FilesPerSec, &c, &w);
    assert!(rate.starts_with("faster by 56% (95% CI "), "{rate}");
    assert!(rate.ends_with("p < 0.001)"), "{rate}");
    assert_eq!(better, Some(true));
    let (time, better) = said(Unit::Seconds, &c, &w);
    assert!(time.starts_with("slower: 56% more time"), "{time}");
    assert_eq!(better, Some(false));
    let (c, w) = judge(&MORE, &BASE);
    let (time, better) = said(Unit::Seconds, &c, &w);
    starts(&time, "faster: 36% less time (95% CI 3");
    assert_eq!(better, Some(true));
    let (lat, _) = said(Unit::Millis, &c, &w);
    assert!(lat.starts_with("lower by 36%"), "{lat}");
}

#[test]
fn narrow_and_wide_intervals_around_zero() {
    // Within ±10%: no significant difference.
    let a = [100.0, 101.0, 99.0, 100.5, 99.5];
    let b = [100.2, 99.4, 101.1, 100.0, 99.8];
    let (c, w) = judge(&a, &b);
    let (v, better) = said(Unit::OpsPerSec, &c, &w);
    assert!(v.starts_with("no significant difference (+0."), "{v}");
    assert_eq!(better, None);
    assert_eq!(more_repetitions(Some(&c), w.as_ref(), 5), None);
    // Wider than ±10%: inconclusive, with the repetitions that would narrow it.
    let a = [100.0, 110.0, 90.0, 105.0];
    let b = [103.0, 95.0, 112.0, 99.0];
    let (c, w) = judge(&a, &b);
    let (v, _) = verdict(Unit::OpsPerSec, "m", Some(&c), w.as_ref(), None, 4);
    starts(&v, "inconclusive (+1.1%, 95% CI -12% to +16%, p = 0.854)");
    let hint = more_repetitions(Some(&c), w.as_ref(), 4).unwrap();
    let need = c.resolve_n.unwrap();
    assert!(need > 4, "{need}");
    // The power at the n used first (the effect found 80% of the time at this spread), then
    // the precision target, named as such.
    let s = c.log_sd.unwrap();
    let e = crate::stats::power::detectable(4, s).unwrap();
    assert!(e > 0.10, "{e}");
    assert_eq!(
        hint,
        format!(
            "at n = 4 and this spread, 80% power only for changes of {}% or more; about {need} repetitions each would narrow the interval to ±10% (a precision target)",
            fmt_pct(100.0 * e)
        )
    );
}

#[test]
fn one_repetition_is_not_tested() {
    let (c, w) = judge(&[1.0], &[2.0, 2.1]);
    let (v, better) = verdict(Unit::OpsPerSec, "m", Some(&c), w.as_ref(), None, 1);
    assert_eq!(v, "not tested (n = 1)");
    assert_eq!(better, None);
    assert_eq!(more_repetitions(Some(&c), w.as_ref(), 1), None);
}

#[test]
fn q_and_its_family_are_shown_beside_p_where_it_decides() {
    let (c, w) = judge(&BASE, &MORE);
    let with_q = |q| verdict(Unit::FilesPerSec, "m", Some(&c), w.as_ref(), Some(q), 5);
    let (v, _) = with_q((0.0004, 4));
    assert!(v.ends_with("p < 0.001, q < 0.001 of 4)"), "{v}");
    // A family of one: q = p, not shown.
    let (v, _) = with_q((0.0004, 1));
    assert!(v.ends_with("p < 0.001)"), "{v}");
    // Significant on its own, not after the adjustment: the verdict says which decided.
    let (v, better) = with_q((0.09, 17));
    ends(
        &v,
        "p < 0.001), but not after adjusting for 17 tests (q = 0.090)",
    );
    assert_eq!(better, Some(true));
}

#[test]
fn the_issue_example_is_decided_on_one_scale() {
    // A lower, noisy candidate: on the raw scale Welch's p was below 0.05 while the log-ratio
    // interval included 0. On one scale, test and interval agree either way.
    let a = [100.0, 101.0, 99.0, 100.0, 100.0];
    let b = [20.0, 90.0, 30.0, 80.0, 25.0, 85.0];
    let (c, w) = judge(&a, &b);
    let w = w.unwrap();
    let (lo, hi) = c.ci95.unwrap();
    assert_eq!(w.p < ALPHA, lo > 0.0 || hi < 0.0, "{c:?} {w:?}");
}

/// The percent figures of the interval printed in a verdict, as numbers.
fn printed_interval(v: &str) -> Option<(f64, f64)> {
    let rest = &v[v.find("95% CI ")? + 7..];
    let end = rest.find(',')?;
    let part = &rest[..end];
    let num = |s: &str| s.trim().trim_end_matches('%').parse::<f64>().ok();
    if let Some((lo, hi)) = part.split_once(" to ") {
        return Some((num(lo)?, num(hi)?));
    }
    // A significant verdict prints magnitudes in the direction of the change: `9.9–41%`, or
    // from twice on factors, `20.1×–28.4×` (as percentages: 1910–2740).
    let (lo, hi) = part.split_once('–')?;
    let factor = |s: &str| Some((s.trim().strip_suffix('×')?.parse::<f64>().ok()? - 1.0) * 100.0);
    match (factor(lo), factor(hi)) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => Some((num(lo)?, num(hi)?)),
    }
}

proptest! {
    /// No verdict contradicts its interval: a difference ("faster", "lower", …) is claimed
    /// only when the interval excludes 0 (both printed magnitudes positive), and "no
    /// significant difference" or "inconclusive" only when it includes 0.
    #[test]
    fn no_verdict_contradicts_its_interval(
        a in proptest::collection::vec(0.0f64..1000.0, 1..10),
        b in proptest::collection::vec(0.0f64..1000.0, 1..10),
        scale in prop_oneof![Just(1e-3), Just(1.0), Just(1e6)],
        q in proptest::option::of((0.0f64..1.0, 1usize..40)),
        unit in prop_oneof![
            Just(Unit::FilesPerSec),
            Just(Unit::Seconds),
            Just(Unit::Millis),
            Just(Unit::Count),
            Just(Unit::Percent)
        ],
    ) {
        let a: Vec<f64> = a.iter().map(|x| x * scale).collect();
        let b: Vec<f64> = b.iter().map(|x| x * scale).collect();
        let n = a.len().min(b.len());
        let e = effect(&a, &b);
        let (v, better) = verdict(unit, "m", e.as_ref().map(|x| &x.0), e.as_ref().and_then(|x| x.1.as_ref()), q, n);
        let Some((c, w)) = e else {
            prop_assert!(v.starts_with("not comparable"));
            return Ok(());
        };
        let Some(w) = w else {
            prop_assert_eq!(v, format!("not tested (n = {n})"));
            return Ok(());
        };
        let (lo, hi) = c.ci95.unwrap();
        let null = v.starts_with("no significant difference") || v.starts_with("inconclusive");
        if null {
            prop_assert!(better.is_none());
            prop_assert!(lo <= 0.0 && hi >= 0.0, "{v} {:?}", c.ci95);
            prop_assert!(w.p >= ALPHA - 1e-12 || !(lo > 0.0 || hi < 0.0));
            let (plo, phi) = printed_interval(&v).unwrap();
            prop_assert!(plo <= 0.0 && phi >= 0.0, "{v}");
            if v.starts_with("no significant difference") {
                prop_assert!(within_resolution(&c));
            }
        } else {
            prop_assert!(better.is_some(), "{v}");
            prop_assert!(lo > 0.0 || hi < 0.0, "{v} {:?}", c.ci95);
            prop_assert!(w.p < ALPHA, "{v}");
            let (plo, phi) = printed_interval(&v).unwrap();
            prop_assert!(plo >= 0.0 && phi > 0.0 && plo <= phi, "{v}");
        }
    }
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

#[test]
fn less_cpu_and_utilisation_are_better() {
    // 20% less CPU: significant, and better (coloured so), though a percentage.
    let base = [10.0, 10.2, 9.8, 10.1, 9.9];
    let less = [8.0, 8.1, 7.9, 8.05, 7.95];
    let (c, w) = judge(&base, &less);
    let (v, better) = verdict(Unit::Percent, "sys_cpu", Some(&c), w.as_ref(), None, 5);
    assert!(v.starts_with("lower by 20%"), "{v}");
    assert_eq!(better, Some(true));
    let (_, better) = verdict(Unit::Percent, "cpu.iowait", Some(&c), w.as_ref(), None, 5);
    assert_eq!(better, Some(true));
    // A percentage that is not a cost keeps the unit's direction.
    let (_, better) = verdict(Unit::Percent, "hit_ratio", Some(&c), w.as_ref(), None, 5);
    assert_eq!(better, Some(false));
    assert!(!higher_is_better(Unit::Percent, "disk_util"));
    assert!(higher_is_better(Unit::OpsPerSec, "iops"));
    assert!(!higher_is_better(Unit::Millis, "clat_p99"));
}

#[test]
fn large_changes_are_said_as_factors() {
    // 2289% faster is 23.9× the rate: said as a factor, its interval too.
    let much = [2390.0, 2420.0, 2360.0, 2400.0, 2380.0];
    let (c, w) = judge(&BASE, &much);
    assert!(c.percent > 2200.0);
    let (rate, better) = said(Unit::FilesPerSec, &c, &w);
    assert!(rate.starts_with("23.9× faster (95% CI 2"), "{rate}");
    assert!(
        rate.contains("×–") && !rate.replace("95% CI", "").contains('%'),
        "{rate}"
    );
    let (plo, phi) = printed_interval(&rate).unwrap();
    assert!(plo > 2000.0 && phi > plo, "{rate}");
    assert_eq!(better, Some(true));
    let (time, better) = said(Unit::Seconds, &c, &w);
    assert!(time.starts_with("23.9× slower"), "{time}");
    assert_eq!(better, Some(false));
    // The other way: a rate 23.9× lower is 23.9× slower, a time 23.9× shorter faster.
    let (c, w) = judge(&much, &BASE);
    let (rate, better) = said(Unit::FilesPerSec, &c, &w);
    assert!(rate.starts_with("23.9× slower (95% CI 2"), "{rate}");
    assert_eq!(better, Some(false));
    let (time, _) = said(Unit::Seconds, &c, &w);
    assert!(time.starts_with("23.9× faster"), "{time}");
    let (lat, _) = said(Unit::Millis, &c, &w);
    assert!(lat.starts_with("23.9× lower"), "{lat}");
    // The interval's bounds in the change's direction, lower first, around the factor.
    let (lo, hi) = c.ci95.unwrap();
    let (a, b) = (1.0 / (1.0 + lo / 100.0), 1.0 / (1.0 + hi / 100.0));
    has(&rate, &format!("95% CI {:.1}×–{:.1}×", a.min(b), a.max(b)));
    // Under twice: a percentage, as before.
    let (c, w) = judge(&BASE, &[190.0, 192.0, 188.0, 191.0, 189.0]);
    let (rate, _) = said(Unit::FilesPerSec, &c, &w);
    assert!(rate.starts_with("faster by 90% (95% CI"), "{rate}");
    assert_eq!(fmt_factor(4.0, "slower", "faster"), "4.0× slower");
    assert_eq!(fmt_factor(0.4, "slower", "faster"), "2.5× faster");
    assert_eq!(fmt_factor(2178.24, "faster", "slower"), "2178× faster");
    assert_eq!(fmt_factor(1.0 / 99.96, "faster", "slower"), "100× slower");
}
