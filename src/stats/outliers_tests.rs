use super::*;
use approx::assert_relative_eq;
use proptest::prelude::*;

#[test]
fn a_value_is_tested_against_the_others() {
    // Plain scale: the others 10, 11, 9, 10 (mean 10, sd 0.8165); 20 is
    // t = 10/(0.8165·√1.25) = 10.954 with 3 df.
    let d = deviations(&[10.0, 11.0, 9.0, 10.0, 20.0], false).unwrap();
    assert_relative_eq!(d[4].t, 10.954451, epsilon = 1e-5);
    assert_relative_eq!(d[4].relative, 1.0, epsilon = 1e-12);
    // The regularized incomplete beta I_{3/(3+t²)}(3/2, 1/2) (mpmath): 0.00162862521593668.
    assert_relative_eq!(d[4].p, 0.001628625, epsilon = 1e-8);
    // On the log scale the relative deviation is against the others' geometric mean.
    let d = deviations(&[100.0, 100.0, 100.0, 101.0, 50.0], true).unwrap();
    assert!(d[4].t < -20.0, "{:?}", d[4]);
    assert_relative_eq!(
        d[4].relative,
        50.0 / (100.0f64 * 100.0 * 100.0 * 101.0).powf(0.25) - 1.0,
        epsilon = 1e-9
    );
}

#[test]
fn small_flat_or_odd_series_are_not_judged() {
    assert!(deviations(&[1.0, 2.0, 3.0, 4.0], false).is_none());
    assert!(deviations(&[3.0; 6], false).is_none());
    assert!(deviations(&[1.0, 2.0, 3.0, 4.0, f64::NAN], false).is_none());
    assert!(deviations(&[1.0, 2.0, 3.0, 4.0, 0.0], true).is_none());
    // Four equal others: no spread to judge the fifth by.
    assert!(deviations(&[5.0, 5.0, 5.0, 5.0, 9.0], false).is_none());
}

fn series(d: &[Vec<Deviation>]) -> Vec<Series<'_>> {
    d.iter()
        .map(|d| Series {
            deviations: Some(d),
            headline: true,
        })
        .collect()
}

#[test]
fn one_candidate_among_many_series_is_chance_unless_extreme() {
    let calm = [100.0, 101.0, 99.0, 100.5, 99.5];
    // 80 against the others' 100 ± 0.8: p ≈ 1e-4, candidate (p·5 < 0.05).
    let off = [100.0, 101.0, 99.0, 100.5, 80.0];
    let mut all = vec![deviations(&off, true).unwrap()];
    for _ in 0..7 {
        all.push(deviations(&calm, true).unwrap());
    }
    let p = all[0][4].p;
    assert!(p * 5.0 < 0.05, "{p}");
    // Alone among eight: one candidate is chance (P(≥1 of 8) = 0.34) — but this value stands
    // the bound over eight series too, so it is named.
    assert!(p * 5.0 * 8.0 < 0.05, "{p}");
    assert_eq!(judge(&series(&all))[0], vec![4]);
    // A milder one (90, p·5 between 0.05/8 and 0.05) is named only with a pattern.
    let mild = [100.0, 101.0, 99.0, 100.5, 92.0];
    let pm = deviations(&mild, true).unwrap()[4].p;
    assert!(pm * 5.0 < 0.05 && pm * 5.0 * 8.0 > 0.05, "{pm}");
    all[0] = deviations(&mild, true).unwrap();
    assert!(judge(&series(&all)).iter().all(Vec::is_empty));
    // The same repetition off in four of the eight (one disturbed repetition): a pattern.
    for s in all.iter_mut().take(4) {
        *s = deviations(&mild, true).unwrap();
    }
    let named = judge(&series(&all));
    assert!(named[..4].iter().all(|o| o == &vec![4]), "{named:?}");
    assert!(named[4..].iter().all(Vec::is_empty));
}

#[test]
fn non_headline_series_follow_the_headline_decision_but_do_not_make_it() {
    let mild = deviations(&[100.0, 101.0, 99.0, 100.5, 92.0], true).unwrap();
    let calm = deviations(&[100.0, 101.0, 99.0, 100.5, 99.5], true).unwrap();
    let s = |d, headline| Series {
        deviations: Some(d),
        headline,
    };
    // Four non-headline candidates beside eight calm headline series make no pattern:
    // nothing named.
    let mut v: Vec<Series<'_>> = (0..8).map(|_| s(&calm, true)).collect();
    v.extend((0..4).map(|_| s(&mild, false)));
    assert!(judge(&v).iter().all(Vec::is_empty));
    // Four headline candidates do: the non-headline ones are named with them.
    for x in v.iter_mut().take(4) {
        *x = s(&mild, true);
    }
    let named = judge(&v);
    assert!(named[8..].iter().all(|o| o == &vec![4]), "{named:?}");
    let at_least = |m: usize, q: f64, k| crate::stats::consistent::at_least(vec![q; m], k);
    assert_relative_eq!(at_least(8, 0.05, 1), 1.0 - 0.95f64.powi(8), epsilon = 1e-12);
    assert_relative_eq!(at_least(8, 0.05, 0), 1.0);
    assert_relative_eq!(at_least(2, 0.05, 2), 0.0025, epsilon = 1e-12);
}

proptest! {
    #[test]
    fn deviations_do_not_depend_on_scale(
        xs in proptest::collection::vec(1f64..1e3, 5..20),
        k in 0.01f64..100.0,
    ) {
        let a = deviations(&xs, true);
        let moved: Vec<f64> = xs.iter().map(|x| x * k).collect();
        let b = deviations(&moved, true);
        prop_assert_eq!(a.is_some(), b.is_some());
        if let (Some(a), Some(b)) = (a, b) {
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x.t - y.t).abs() < 1e-6 * (1.0 + x.t.abs()));
            }
        }
    }
}
