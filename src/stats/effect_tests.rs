//! Tests of `effect`: the test and the interval come from one model (Welch on log values for
//! positive data, on the values otherwise), checked by hand and as properties.

use super::*;
use crate::stats::compare::welch;
use approx::assert_relative_eq;
use proptest::prelude::*;

const A: [f64; 5] = [10.1, 9.8, 10.4, 10.0, 9.9];
const B: [f64; 6] = [12.0, 12.5, 11.8, 12.2, 12.9, 12.4];

fn logs(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v.ln()).collect()
}

#[test]
fn positive_values_are_compared_as_welch_on_their_logs() {
    let (c, w) = effect(&A, &B).unwrap();
    let w = w.unwrap();
    assert_eq!(c.scale, EffectScale::Log);
    // The test is Welch's on the logarithms…
    let on_logs = welch(&logs(&A), &logs(&B)).unwrap();
    assert_relative_eq!(w.t, on_logs.t, max_relative = 1e-12);
    assert_relative_eq!(w.p, on_logs.p, max_relative = 1e-12);
    assert_relative_eq!(c.df.unwrap(), on_logs.df, max_relative = 1e-12);
    // …the change is the ratio of geometric means…
    let gm = |x: &[f64]| (logs(x).iter().sum::<f64>() / x.len() as f64).exp();
    assert_relative_eq!(c.ratio, gm(&B) / gm(&A), max_relative = 1e-12);
    assert_relative_eq!(c.percent, 100.0 * (c.ratio - 1.0), max_relative = 1e-12);
    // …and the interval is L ± t(df, .975)·se, mapped back: with se = L / t.
    let l = c.ratio.ln();
    let se = l / w.t;
    let h = t_quantile(w.df, 0.975) * se;
    let (lo, hi) = c.ci95.unwrap();
    assert_relative_eq!(lo, 100.0 * ((l - h).exp() - 1.0), max_relative = 1e-9);
    assert_relative_eq!(hi, 100.0 * ((l + h).exp() - 1.0), max_relative = 1e-9);
}

#[test]
fn signed_values_or_zeros_use_the_raw_scale() {
    let a = [0.0, 1.0, 2.0];
    let b = [2.0, 3.0, 4.0];
    let (c, w) = effect(&a, &b).unwrap();
    let w = w.unwrap();
    assert_eq!(c.scale, EffectScale::Raw);
    let raw = welch(&a, &b).unwrap();
    assert_relative_eq!(w.p, raw.p, max_relative = 1e-12);
    // Means 1 and 3: +200%; the interval is (d ± t·se)/m_A.
    assert_relative_eq!(c.percent, 200.0, max_relative = 1e-12);
    let h = t_quantile(raw.df, 0.975) * (2.0f64 / raw.t);
    let (lo, hi) = c.ci95.unwrap();
    assert_relative_eq!(lo, 100.0 * (2.0 - h), max_relative = 1e-9);
    assert_relative_eq!(hi, 100.0 * (2.0 + h), max_relative = 1e-9);
    // Shares with a zero among them (fio's sys_cpu) cannot fall by more than 100%: the
    // interval stops there, and still includes 0.
    let (c, w) = effect(&[0.0, 30.0, 2.0], &[0.0, 0.5, 31.0]).unwrap();
    let (lo, hi) = c.ci95.unwrap();
    assert_eq!(lo, -100.0);
    assert!(hi > 0.0 && w.unwrap().p > 0.05);
    let (c, _) = effect(&[-5.0, 30.0, 2.0], &[0.0, 0.5, 31.0]).unwrap();
    assert!(c.ci95.unwrap().0 < -100.0);
    // A baseline mean that is not positive has no percent change.
    assert!(effect(&[-1.0, 0.0], &[1.0, 2.0]).is_none());
    assert!(effect(&[0.0, 0.0], &[1.0, 2.0]).is_none());
}

#[test]
fn edge_cases() {
    assert!(effect(&[], &[1.0]).is_none());
    assert!(effect(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
    let (single, w) = effect(&[2.0], &[3.0]).unwrap();
    assert_relative_eq!(single.percent, 50.0, max_relative = 1e-12);
    assert_eq!((single.ci95, w), (None, None));
    assert_eq!(single.resolve_n, None);
    let (flat, w) = effect(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
    let p = flat.percent;
    assert_eq!(flat.ci95, Some((p, p)));
    assert_eq!(w.unwrap().p, 0.0);
    let (same, w) = effect(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
    assert_eq!(same.ci95, Some((0.0, 0.0)));
    assert_eq!(w.unwrap().p, 1.0);
}

#[test]
fn repetitions_that_would_resolve_ten_percent() {
    // Log-sd 0.05 on both sides (about 5% variation): the half-width with n per side is
    // t(≈2n−2)·0.05·√(2/n). n = 3: 2.78·0.0408 = 0.113 > ln 1.1 = 0.0953; n = 4: 2.45·0.0354
    // = 0.0865 ≤ 0.0953.
    let v = 0.05f64 * 0.05;
    let target = (1.0 + RESOLUTION).ln();
    assert_eq!(resolve_n(v, v, target), Some(4));
    // Four times the variance: t(16)·0.1·√(2/9) = 0.0999 is still too wide, t(18)·0.1·√(2/10)
    // = 0.0939 is narrow enough.
    assert_eq!(resolve_n(4.0 * v, 4.0 * v, target), Some(10));
    assert_eq!(resolve_n(0.0, 0.0, target), Some(2));
    assert_eq!(resolve_n(100.0, 100.0, target), Some(MAX_RESOLVE_N));
    assert_eq!(resolve_n(f64::NAN, v, target), None);
    let (c, _) = effect(&A, &B).unwrap();
    let (va, vb) = (super::mean_var(&logs(&A)).1, super::mean_var(&logs(&B)).1);
    assert_eq!(c.resolve_n, resolve_n(va, vb, target));
}

proptest! {
    /// The verdict's decision and its interval cannot disagree: p < 0.05 exactly when the
    /// interval excludes 0 (up to rounding at the boundary).
    #[test]
    fn the_test_rejects_exactly_when_the_interval_excludes_zero(
        a in proptest::collection::vec(0.0f64..1000.0, 1..12),
        b in proptest::collection::vec(0.0f64..1000.0, 1..12),
    ) {
        let Some((c, w)) = effect(&a, &b) else { return Ok(()) };
        let Some(w) = w else {
            prop_assert!(c.ci95.is_none());
            return Ok(());
        };
        let (lo, hi) = c.ci95.unwrap();
        prop_assert!(lo <= c.percent + 1e-9 * c.percent.abs().max(1.0));
        prop_assert!(c.percent <= hi + 1e-9 * c.percent.abs().max(1.0));
        let excludes = lo > 0.0 || hi < 0.0;
        if (w.p - 0.05).abs() > 1e-9 {
            prop_assert_eq!(excludes, w.p < 0.05, "p {} ci {:?}", w.p, c.ci95);
        }
        if c.scale == EffectScale::Log {
            prop_assert!(lo >= -100.0);
        }
    }

    #[test]
    fn sides_swapped_invert_the_ratio(
        a in proptest::collection::vec(1f64..100.0, 3..12),
        b in proptest::collection::vec(1f64..100.0, 3..12),
        k in 0.001f64..1000.0,
    ) {
        let (ab, wab) = effect(&a, &b).unwrap();
        let (ba, wba) = effect(&b, &a).unwrap();
        prop_assert!((ab.ratio * ba.ratio - 1.0).abs() < 1e-9);
        prop_assert!((wab.unwrap().p - wba.unwrap().p).abs() < 1e-12);
        let (lo, hi) = ab.ci95.unwrap();
        let (blo, bhi) = ba.ci95.unwrap();
        // On the log scale the interval of B/A is the negated interval of A/B.
        let l = |pct: f64| (1.0 + pct / 100.0).ln();
        prop_assert!((l(lo) + l(bhi)).abs() < 1e-6);
        prop_assert!((l(hi) + l(blo)).abs() < 1e-6);
        // Scale-free: the same numbers in another unit give the same comparison.
        let sa: Vec<f64> = a.iter().map(|x| x * k).collect();
        let sb: Vec<f64> = b.iter().map(|x| x * k).collect();
        let (s, ws) = effect(&sa, &sb).unwrap();
        prop_assert!((s.percent - ab.percent).abs() < 1e-6 * ab.percent.abs().max(1.0));
        prop_assert!((ws.unwrap().p - wab.unwrap().p).abs() < 1e-9);
    }
}
