//! Intervals: hand-computed values, positivity, the n = 2 edge, and coverage on simulated
//! log-normal data (fixed seed, Mersenne Twister, so the figures are the same on every run).

use super::*;
use approx::assert_relative_eq;
use proptest::prelude::*;
use rand_mt::Mt64;

/// A standard normal deviate (Box–Muller on two uniforms in (0, 1)).
fn normal(rng: &mut Mt64) -> f64 {
    let u = |r: &mut Mt64| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// Log-normal samples with median `exp(mu)` and log-sd `sigma`.
fn lognormal(rng: &mut Mt64, n: usize, mu: f64, sigma: f64) -> Vec<f64> {
    (0..n).map(|_| (mu + sigma * normal(rng)).exp()).collect()
}

/// Over `trials` simulated samples: the share of log-t intervals containing the geometric
/// mean, the share containing the arithmetic mean, and the share of Student-t intervals of
/// the mean that reach below zero.
fn simulate(seed: u64, trials: usize, n: usize, sigma: f64) -> (f64, f64, f64) {
    let mut rng = Mt64::new(seed);
    let mu = 100f64.ln();
    let (gm, am) = (mu.exp(), (mu + sigma * sigma / 2.0).exp());
    let (mut cover_gm, mut cover_am, mut negative) = (0, 0, 0);
    for _ in 0..trials {
        let xs = lognormal(&mut rng, n, mu, sigma);
        let (lo, hi) = log_t_interval(&xs).unwrap();
        assert!(lo > 0.0 && lo <= hi);
        cover_gm += usize::from(lo <= gm && gm <= hi);
        cover_am += usize::from(lo <= am && am <= hi);
        negative += usize::from(t_interval(&xs).unwrap().0 < 0.0);
    }
    let share = |k: usize| k as f64 / trials as f64;
    (share(cover_gm), share(cover_am), share(negative))
}

#[test]
fn hand_computed_log_interval() {
    // ln 10 = 2.302585, ln 100 = 4.605170, ln 1000 = 6.907755: mean 4.605170, sd 2.302585;
    // t(2, .975) = 4.302653; half-width 4.302653·2.302585/√3 = 5.719938, so
    // exp(4.605170 ∓ 5.719938) = 0.327991 … 30488.6.
    let (lo, hi) = log_t_interval(&[10.0, 100.0, 1000.0]).unwrap();
    assert_relative_eq!(lo, 0.327991, max_relative = 1e-5);
    assert_relative_eq!(hi, 30488.6, max_relative = 1e-5);
    assert_relative_eq!(
        geometric_mean(&[10.0, 100.0, 1000.0]).unwrap(),
        100.0,
        max_relative = 1e-12
    );
    // The Student-t interval of the same values reaches far below zero: 370 ∓ 1359.9.
    assert_relative_eq!(
        t_interval(&[10.0, 100.0, 1000.0]).unwrap().0,
        -989.93778,
        max_relative = 1e-6
    );
}

#[test]
fn two_values_give_a_wide_positive_interval() {
    // n = 2: t(1, .975) = 12.706205; ln 1 = 0, ln 4 = 1.386294, mean 0.693147 (GM 2), sd
    // 0.980258; half-width 12.706205·0.980258/√2 = 8.807270: 2·exp(∓8.807270).
    let (lo, hi) = log_t_interval(&[1.0, 4.0]).unwrap();
    assert!(lo > 0.0);
    assert_relative_eq!(lo, 0.000299282442, max_relative = 1e-6);
    assert_relative_eq!(hi, 13365.3013, max_relative = 1e-6);
    // Equal values: a zero-width interval at the value.
    assert_eq!(log_t_interval(&[5.0, 5.0]), Some((5.0, 5.0)));
    // One value: no interval, for either kind.
    assert_eq!(interval(&[5.0], Quantity::Positive).0, None);
    assert_eq!(interval(&[5.0], Quantity::Signed).0, None);
}

#[test]
fn two_values_give_no_interval_in_reports() {
    // fio's two repetitions of a latency 14× apart: the log-t interval spans 14 orders of
    // magnitude, which says nothing; a report gives none (min and max are shown instead).
    let xs = [0.5, 7.0];
    let (lo, hi) = log_t_interval(&xs).unwrap();
    assert!(hi / lo > 1e14, "{lo} {hi}");
    for q in [Quantity::Positive, Quantity::Signed] {
        assert_eq!(interval(&xs, q).0, None);
    }
    assert_eq!(interval(&xs, Quantity::Positive).1, IntervalMethod::LogT);
    // From three on, as before.
    let three = [0.5, 7.0, 2.0];
    assert_eq!(
        interval(&three, Quantity::Positive).0,
        log_t_interval(&three)
    );
}

#[test]
fn method_follows_the_quantity_and_the_values() {
    let xs = [1.0, 2.0, 40.0];
    assert_eq!(interval(&xs, Quantity::Signed).1, IntervalMethod::T);
    assert!(interval(&xs, Quantity::Signed).0.unwrap().0 < 0.0);
    let (ci, m) = interval(&xs, Quantity::Positive);
    assert_eq!(m, IntervalMethod::LogT);
    assert_eq!(ci, log_t_interval(&xs));
    // A zero has no logarithm: Student t, clipped at zero.
    let (ci, m) = interval(&[0.0, 2.0, 40.0], Quantity::Positive);
    assert_eq!(m, IntervalMethod::TClipped);
    let (lo, hi) = ci.unwrap();
    assert_eq!(lo, 0.0);
    assert_eq!(hi, t_interval(&[0.0, 2.0, 40.0]).unwrap().1);
    assert_eq!(
        (
            IntervalMethod::LogT.as_str(),
            IntervalMethod::TClipped.as_str()
        ),
        ("log_t", "t_clipped")
    );
    assert_eq!(geometric_mean(&[0.0, 1.0]), None);
}

#[test]
fn coverage_of_the_geometric_mean_is_95_percent_at_every_n() {
    // The t quantile with n − 1 degrees of freedom makes the coverage exact for log-normal
    // data; a normal quantile (1.96) would cover 81% at n = 3 (for 2 degrees of freedom
    // P(|T| < t) = t/√(2 + t²)).
    for (i, &(n, sigma)) in [(2, 0.3), (3, 1.0), (5, 0.5), (10, 1.5)].iter().enumerate() {
        let (gm, _, _) = simulate(42 + i as u64, 4000, n, sigma);
        assert!(
            (gm - 0.95).abs() < 0.015,
            "n {n} sigma {sigma}: coverage {gm}"
        );
    }
}

#[test]
fn student_t_goes_negative_where_the_log_interval_cannot() {
    // Log-sd 1 (a coefficient of variation of about 130%), three repetitions.
    let (_, _, negative) = simulate(7, 4000, 3, 1.0);
    assert!(negative > 0.2, "{negative}");
}

/// The coverage table in doc/reports.md:
/// `cargo test --lib interval_tests::coverage_table -- --ignored --nocapture`.
#[test]
#[ignore]
fn coverage_table() {
    println!("| n | log-sd | covers GM | covers AM | Student t below 0 |");
    for n in [2, 3, 5, 10, 30] {
        for sigma in [0.1, 0.3, 1.0] {
            let (gm, am, neg) = simulate(1, 20000, n, sigma);
            println!(
                "| {n} | {sigma} | {:.1}% | {:.1}% | {:.1}% |",
                gm * 100.0,
                am * 100.0,
                neg * 100.0
            );
        }
    }
}

proptest! {
    #[test]
    fn positive_values_give_positive_bounds_around_the_geometric_mean(
        xs in proptest::collection::vec(1e-6f64..1e9, 3..30)
    ) {
        let (ci, m) = interval(&xs, Quantity::Positive);
        let (lo, hi) = ci.unwrap();
        let gm = geometric_mean(&xs).unwrap();
        prop_assert_eq!(m, IntervalMethod::LogT);
        prop_assert!(lo > 0.0);
        prop_assert!(lo <= gm * (1.0 + 1e-9) && gm <= hi * (1.0 + 1e-9));
    }

    #[test]
    fn non_negative_values_never_give_a_negative_bound(
        xs in proptest::collection::vec(0f64..1e6, 3..30)
    ) {
        let (lo, hi) = interval(&xs, Quantity::Positive).0.unwrap();
        prop_assert!(lo >= 0.0 && hi >= lo);
    }
}
