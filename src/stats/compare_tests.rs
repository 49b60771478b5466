//! Tests of `compare`: reference values from scipy 1.17 (`ttest_ind(equal_var=False)`,
//! `mannwhitneyu(method=…)`), plus properties.

use super::*;
use approx::assert_relative_eq;
use proptest::prelude::*;

const A: [f64; 5] = [10.1, 9.8, 10.4, 10.0, 9.9];
const B: [f64; 6] = [12.0, 12.5, 11.8, 12.2, 12.9, 12.4];

#[test]
fn welch_matches_scipy() {
    // scipy.stats.ttest_ind(B, A, equal_var=False): t 11.922290126283944,
    // p 1.7306966488066385e-06, df 8.253378882252253.
    let w = welch(&A, &B).unwrap();
    assert_relative_eq!(w.t, 11.922290126283944, max_relative = 1e-10);
    assert_relative_eq!(w.df, 8.253378882252253, max_relative = 1e-10);
    assert_relative_eq!(w.p, 1.7306966488066385e-06, max_relative = 1e-6);
    let r = welch(&B, &A).unwrap();
    assert_relative_eq!(r.t, -w.t);
    assert_relative_eq!(r.p, w.p);
}

#[test]
fn welch_edge_cases() {
    assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    assert!(welch(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
    let same = welch(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
    assert_eq!((same.t, same.p), (0.0, 1.0));
    let apart = welch(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
    assert_eq!(apart.p, 0.0);
    assert!(apart.t.is_infinite() && apart.t > 0.0);
}

#[test]
fn mann_whitney_exact_matches_scipy() {
    // mannwhitneyu(A, B, method='exact'): U 0, p 0.004329004329004329.
    let m = mann_whitney(&A, &B).unwrap();
    assert_eq!(m.method, MwMethod::Exact);
    assert_eq!(m.u, 0.0);
    assert_relative_eq!(m.p, 0.004329004329004329, max_relative = 1e-12);
    // 3 against 3, completely separated: the smallest possible p, 0.1.
    let m = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
    assert_relative_eq!(m.p, 0.1, max_relative = 1e-12);
    // Identical distributions of ranks: p = 1.
    let m = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
    assert_eq!(m.u, 2.0);
    assert_relative_eq!(m.p, 1.0);
}

#[test]
fn mann_whitney_with_ties_uses_the_corrected_normal_approximation() {
    // mannwhitneyu(a, b, method='asymptotic'): U 6.5, p 0.08537800187905002.
    let a = [3.1, 2.8, 3.3, 3.0, 2.9, 3.2, 3.0];
    let b = [3.0, 3.4, 3.5, 3.1, 3.6];
    let m = mann_whitney(&a, &b).unwrap();
    assert_eq!(m.method, MwMethod::Normal);
    assert_eq!(m.u, 6.5);
    assert_relative_eq!(m.p, 0.08537800187905002, max_relative = 1e-9);
    // Shifted ranges with many ties: U 24.5, p 0.4599310708864415.
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let y = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let m = mann_whitney(&x, &y).unwrap();
    assert_eq!(m.u, 24.5);
    assert_relative_eq!(m.p, 0.4599310708864415, max_relative = 1e-9);
    // All equal: no evidence at all.
    assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
}

#[test]
fn mann_whitney_large_samples_use_the_normal_approximation() {
    // 35 against 30 values, no ties: scipy asymptotic p 0.0538801985815378
    // (its exact p, 0.053465461491833885, is close, as it should be at this size).
    let a: Vec<f64> = (0..35).map(f64::from).collect();
    let b: Vec<f64> = (0..30).map(|i| f64::from(i) + 7.5).collect();
    let m = mann_whitney(&a, &b).unwrap();
    assert_eq!(m.method, MwMethod::Normal);
    assert_eq!(m.u, 378.0);
    assert_relative_eq!(m.p, 0.0538801985815378, max_relative = 1e-9);
}

#[test]
fn exact_counts_are_gaussian_binomials() {
    // [4 choose 2]_q = 1 + q + 2q² + q³ + q⁴.
    assert_eq!(mw_counts(2, 2), vec![1, 1, 2, 1, 1]);
    // The counts of 30 against 30 sum to C(60, 30) = 118264581564861424.
    let c = mw_counts(30, 30);
    assert_eq!(c.iter().sum::<i128>(), 118_264_581_564_861_424);
    assert!(c.iter().all(|&x| x > 0));
}

proptest! {
    #[test]
    fn p_values_are_probabilities(
        a in proptest::collection::vec(1f64..100.0, 2..15),
        b in proptest::collection::vec(1f64..100.0, 2..15),
    ) {
        let w = welch(&a, &b).unwrap();
        prop_assert!((0.0..=1.0).contains(&w.p));
        let m = mann_whitney(&a, &b).unwrap();
        prop_assert!((0.0..=1.0).contains(&m.p));
        // U of one side plus U of the other is n_A·n_B.
        let r = mann_whitney(&b, &a).unwrap();
        prop_assert!((m.u + r.u - (a.len() * b.len()) as f64).abs() < 1e-9);
        prop_assert!((m.p - r.p).abs() < 1e-12);
    }

    #[test]
    fn scaling_both_sides_changes_nothing(
        a in proptest::collection::vec(1f64..100.0, 2..12),
        b in proptest::collection::vec(1f64..100.0, 2..12),
        k in 0.001f64..1000.0,
    ) {
        let sa: Vec<f64> = a.iter().map(|x| x * k).collect();
        let sb: Vec<f64> = b.iter().map(|x| x * k).collect();
        let (w1, w2) = (welch(&a, &b).unwrap(), welch(&sa, &sb).unwrap());
        prop_assert!((w1.p - w2.p).abs() < 1e-9);
    }
}

/// Hand-computed (and R's `p.adjust(…, "BH")`): sorted 0.005, 0.01, 0.03, 0.04 with m = 4 give
/// 0.02, 0.02, 0.04, 0.04 before the step-up minimum, which changes nothing here.
#[test]
fn benjamini_hochberg_matches_a_hand_computation() {
    let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
    let want = [0.02, 0.04, 0.04, 0.02];
    for (a, b) in q.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{q:?}");
    }
    // The step-up minimum: 0.04·3/2 = 0.06 is lowered to the next rank's 0.05·3/3 = 0.05.
    let q = benjamini_hochberg(&[0.05, 0.04, 0.001]);
    let want = [0.05, 0.05, 0.003];
    for (a, b) in q.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{q:?}");
    }
    // One p of 0.018 among three comparisons is no longer below 0.05; NaN is left out of m.
    let q = benjamini_hochberg(&[0.018, f64::NAN, 0.5, 0.6]);
    assert!((q[0] - 0.054).abs() < 1e-12, "{q:?}");
    assert!(q[1].is_nan());
    assert!(
        (q[2] - 0.6).abs() < 1e-12 && (q[3] - 0.6).abs() < 1e-12,
        "{q:?}"
    );
    // Never above 1, and a single test is unchanged.
    for q in benjamini_hochberg(&[0.9, 0.95, 0.99]) {
        assert!((q - 0.99).abs() < 1e-12);
    }
    assert_eq!(benjamini_hochberg(&[0.5, 0.8]), [0.8, 0.8]);
    assert_eq!(benjamini_hochberg(&[0.03]), [0.03]);
    assert!(benjamini_hochberg(&[]).is_empty());
}
