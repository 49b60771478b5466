//! Outliers by the modified z-score of Iglewicz and Hoaglin (1993), as hyperfine flags them:
//! flagged, shown, never dropped.
//!
//! `M_i = 0.6745·(x_i − median)/MAD`, where MAD is the median absolute deviation from the
//! median (0.6745 is the 0.75 quantile of the standard normal, so M is on the scale of a
//! z-score for normal data). A value with |M| > 3.5 is an outlier. When more than half of
//! the values are identical the MAD is 0; then the mean absolute deviation from the median
//! is used instead, `M_i = (x_i − median)/(1.253314·MeanAD)` (1.253314 = √(π/2) makes it a
//! consistent estimate of σ for normal data). When both are 0 all values are equal and
//! nothing is an outlier. Fewer than [`MIN_N`] values have no outliers: with three or four,
//! the MAD rests on the two closest values, so any third value a few of their gaps away
//! scores as an outlier (103 beside 100 and 100.2 scores 9.4).

use super::summary::median_sorted;

/// The |M| above which a value is an outlier (Iglewicz & Hoaglin's recommendation).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// The fewest values the rule judges.
pub const MIN_N: usize = 5;

/// Modified z-scores of `xs` (same order); all zeros for fewer than [`MIN_N`] values, no
/// spread, or a value that is not finite.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    if xs.len() < MIN_N || xs.iter().any(|x| !x.is_finite()) {
        return vec![0.0; xs.len()];
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = median_sorted(&sorted);
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median_sorted(&dev);
    if mad > 0.0 {
        return xs.iter().map(|x| 0.6745 * (x - med) / mad).collect();
    }
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    if mean_ad > 0.0 {
        xs.iter()
            .map(|x| (x - med) / (1.253314 * mean_ad))
            .collect()
    } else {
        vec![0.0; xs.len()]
    }
}

/// Indices of the values whose |modified z-score| exceeds `threshold`.
pub fn outlier_indices(xs: &[f64], threshold: f64) -> Vec<usize> {
    modified_z_scores(xs)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > threshold)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use proptest::prelude::*;

    #[test]
    fn hand_computed_scores() {
        // median 10, |dev| = 0,1,1,0,10 → MAD 1; M(20) = 0.6745·10/1 = 6.745.
        let xs = [10.0, 11.0, 9.0, 10.0, 20.0];
        let z = modified_z_scores(&xs);
        assert_relative_eq!(z[4], 6.745, epsilon = 1e-12);
        assert_relative_eq!(z[1], 0.6745, epsilon = 1e-12);
        assert_eq!(outlier_indices(&xs, MODIFIED_Z_THRESHOLD), vec![4]);
    }

    #[test]
    fn zero_mad_falls_back_to_mean_absolute_deviation() {
        // median 5, MAD 0, MeanAD = 4/5 = 0.8 → M(9) = 4/(1.253314·0.8) = 3.98943.
        let xs = [5.0, 5.0, 5.0, 5.0, 9.0];
        let z = modified_z_scores(&xs);
        assert_relative_eq!(z[4], 4.0 / (1.253314 * 0.8), epsilon = 1e-12);
        assert_eq!(outlier_indices(&xs, MODIFIED_Z_THRESHOLD), vec![4]);
        assert!(outlier_indices(&[3.0; 5], MODIFIED_Z_THRESHOLD).is_empty());
    }

    #[test]
    fn small_samples_have_no_outliers() {
        assert!(outlier_indices(&[1.0, 1000.0], MODIFIED_Z_THRESHOLD).is_empty());
        assert_eq!(modified_z_scores(&[]), Vec::<f64>::new());
        // Three or four values: the MAD rests on the two closest, so 103 beside 100 and
        // 100.2 would score 0.6745·2.8/0.2 = 9.4.
        assert!(outlier_indices(&[100.0, 100.2, 103.0], MODIFIED_Z_THRESHOLD).is_empty());
        let four = [100.0, 100.2, 100.1, 103.0];
        assert!(outlier_indices(&four, MODIFIED_Z_THRESHOLD).is_empty());
        // Five: median 100.1, MAD 0.1, M(103) = 0.6745·2.9/0.1 = 19.6.
        let five = [100.0, 100.2, 100.1, 99.9, 103.0];
        assert_eq!(outlier_indices(&five, MODIFIED_Z_THRESHOLD), vec![4]);
    }

    proptest! {
        #[test]
        fn scores_do_not_depend_on_location_or_scale(
            xs in proptest::collection::vec(0f64..1e3, 5..30),
            k in 0.01f64..100.0,
            c in -1e3f64..1e3,
        ) {
            let a = modified_z_scores(&xs);
            let moved: Vec<f64> = xs.iter().map(|x| x * k + c).collect();
            let b = modified_z_scores(&moved);
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x - y).abs() < 1e-6 * (1.0 + x.abs()));
            }
        }

        #[test]
        fn at_most_half_are_outliers(xs in proptest::collection::vec(0f64..1e3, 5..30)) {
            prop_assert!(outlier_indices(&xs, MODIFIED_Z_THRESHOLD).len() * 2 <= xs.len());
        }
    }
}
