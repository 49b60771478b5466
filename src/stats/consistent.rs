//! Whether a pattern seen in several series at once is more than chance.
//!
//! A report checks every headline series (cells × phases) for a slow first repetition and
//! for drift over the execution order. Checked one by one, some series show either by chance
//! alone: with five repetitions the first is the worst one time in five, and a series of five
//! is monotone one time in sixty — over the eight series of a small study, a warning in most
//! reports of a machine with nothing wrong. A first-repetition effect or a drift that comes
//! from the machine or the set-up (a new file system, a filling disk, a host getting busier)
//! shows in many series at once; so the report asks once per workload whether the pattern
//! across its series is more than chance, and names series only when it is.

use super::compare::normal_two_sided;
use super::trend::Trend;

/// P(K ≥ k), where K counts the series whose first value is the worst of the series when
/// every order is equally likely (no first-repetition effect): series `i` of `ns[i]` values
/// contributes with probability 1/`ns[i]` (a Poisson-binomial tail). Series of fewer than two
/// values count for nothing.
pub fn first_worst_p(ns: &[usize], k: usize) -> f64 {
    at_least(ns.iter().filter(|&&n| n >= 2).map(|&n| 1.0 / n as f64), k)
}

/// P(K ≥ k), where K counts the independent events that happen, event `i` with probability
/// `ps[i]` (a Poisson-binomial tail; with equal probabilities, a binomial one).
pub fn at_least(ps: impl IntoIterator<Item = f64>, k: usize) -> f64 {
    if k == 0 {
        return 1.0;
    }
    // dist[j] = P(exactly j of the events so far).
    let mut dist = vec![1.0f64];
    for q in ps {
        let mut next = vec![0.0; dist.len() + 1];
        for (j, &d) in dist.iter().enumerate() {
            next[j] += d * (1.0 - q);
            next[j + 1] += d * q;
        }
        dist = next;
    }
    dist.iter().skip(k).sum::<f64>().clamp(0.0, 1.0)
}

/// Mann–Kendall combined over series, each turned by its sign (+1 or −1) so that the same
/// direction of change adds up (a machine getting slower lowers rates and raises times): the
/// two-sided p of z = (|ΣS| − 1)/√(ΣVar S), and the combined S. `None` without series.
pub fn combined_trend(series: &[(Trend, f64)]) -> Option<(f64, f64)> {
    if series.is_empty() {
        return None;
    }
    let s: f64 = series.iter().map(|(t, sign)| t.s * sign).sum();
    let var: f64 = series.iter().map(|(t, _)| t.var).sum();
    Some((s, normal_two_sided(s, 1.0, var)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::trend::mann_kendall;
    use approx::assert_relative_eq;

    #[test]
    fn the_first_being_the_worst_of_one_series_of_five_is_one_chance_in_five() {
        assert_relative_eq!(first_worst_p(&[5], 1), 0.2, epsilon = 1e-12);
        assert_relative_eq!(first_worst_p(&[5], 0), 1.0, epsilon = 1e-12);
        // Eight series of five, all with the first the worst: 0.2^8.
        assert_relative_eq!(first_worst_p(&[5; 8], 8), 0.2f64.powi(8), epsilon = 1e-15);
        // Three of eight or more: 1 − P(0) − P(1) − P(2) of Binomial(8, 0.2).
        let b = |j: i32, c: f64| c * 0.2f64.powi(j) * 0.8f64.powi(8 - j);
        let want = 1.0 - b(0, 1.0) - b(1, 8.0) - b(2, 28.0);
        assert_relative_eq!(first_worst_p(&[5; 8], 3), want, epsilon = 1e-12);
        // Mixed sizes: P(K ≥ 2) for 1/2 and 1/4 is 1/8; one value alone counts for nothing.
        assert_relative_eq!(first_worst_p(&[2, 4, 1], 2), 0.125, epsilon = 1e-12);
    }

    #[test]
    fn trends_that_agree_add_up_and_opposite_ones_cancel() {
        let up = mann_kendall(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        let down = mann_kendall(&[5.0, 4.0, 3.0, 2.0, 1.0]).unwrap();
        // One monotone series of five: S = 10, Var S = 5·4·15/18, z = 9/√16.67 = 2.2045.
        let (s, p) = combined_trend(&[(up, 1.0)]).unwrap();
        assert_eq!(s, 10.0);
        assert_relative_eq!(p, 0.0274863, epsilon = 1e-6);
        // Four that agree (a rate rising, a time falling, turned by their signs): z = 4.78.
        let (s, p) = combined_trend(&[(up, 1.0), (down, -1.0), (up, 1.0), (up, 1.0)]).unwrap();
        assert_eq!(s, 40.0);
        assert!(p < 1e-4, "{p}");
        // Opposite directions cancel.
        let (s, p) = combined_trend(&[(up, 1.0), (down, 1.0)]).unwrap();
        assert_eq!((s, p), (0.0, 1.0));
        assert!(combined_trend(&[]).is_none());
    }
}
