//! The whiskers of a mean (error bars and bands): the 95% interval or ± one standard
//! deviation, never below zero for quantities that cannot be negative, and the words that say
//! which in a caption and in the page's footer.

use super::super::model::{CellMetric, ErrorBars};

/// The (low, high) whisker of a mean: the 95% interval (positive for quantities that cannot
/// be negative: [`crate::stats::interval`]) or ± one sd, clipped at 0 for those quantities;
/// the mean itself when there is no spread (or, for the interval, fewer than three values).
pub(crate) fn whisker(s: &CellMetric, bars: ErrorBars) -> (f64, f64) {
    let m = s.summary.mean;
    match bars {
        ErrorBars::Ci => s.summary.ci95.unwrap_or((m, m)),
        ErrorBars::Sd => match s.summary.sd {
            Some(sd) => ((m - sd).max(0.0), m + sd),
            None => (m, m),
        },
    }
}

/// What the whiskers (or bands) of these statistics show, for a caption: the interval's
/// method, or ± sd and whether any was clipped at 0; with one repetition each, that there are
/// none.
pub(crate) fn whisker_caption(stats: &[&CellMetric], bars: ErrorBars) -> String {
    if !stats.is_empty() && stats.iter().all(|s| s.summary.n < 2) {
        return "none (one repetition each: no spread or interval)".into();
    }
    if bars == ErrorBars::Ci && !stats.is_empty() && stats.iter().all(|s| s.summary.ci95.is_none())
    {
        return format!(
            "none (fewer than {} repetitions each: no 95% interval)",
            crate::stats::interval::INTERVAL_MIN_N
        );
    }
    match bars {
        ErrorBars::Ci => super::super::entries::ci_words(stats.iter().copied()),
        ErrorBars::Sd => {
            let clipped = stats
                .iter()
                .any(|s| s.summary.sd.is_some_and(|sd| s.summary.mean - sd < 0.0));
            if clipped {
                "± one standard deviation, clipped at 0 (the quantity cannot be negative)".into()
            } else {
                "± one standard deviation".into()
            }
        }
    }
}

/// What the whiskers show in general, for the page's footer.
pub(crate) fn whisker_words(bars: ErrorBars) -> &'static str {
    match bars {
        ErrorBars::Ci => "error bars: 95% confidence intervals (of the geometric mean, on the log scale, for times, rates, sizes and counts; of the mean, Student t, otherwise)",
        ErrorBars::Sd => "error bars: ± one standard deviation (clipped at 0 for times, rates, sizes and counts)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Unit;
    use crate::stats::{summarize_as, Quantity};

    fn stat(unit: Unit, values: &[f64]) -> CellMetric {
        CellMetric {
            cell: 0,
            phase: "p".into(),
            name: "rate".into(),
            unit,
            summary: summarize_as(values, Quantity::Positive).unwrap(),
            values: values.to_vec(),
            repetitions: vec![1; values.len()],
            order: vec![0; values.len()],
            outliers: Vec::new(),
            disturbed: Vec::new(),
            headline: true,
            primary: true,
        }
    }

    #[test]
    fn whiskers_of_positive_quantities_never_go_below_zero() {
        // Mean 1766.7, sd 2829.7: mean − sd < 0, and the Student-t interval too.
        let s = stat(Unit::FilesPerSec, &[100.0, 5000.0, 200.0]);
        for bars in [ErrorBars::Ci, ErrorBars::Sd] {
            let (lo, hi) = whisker(&s, bars);
            assert!(lo >= 0.0 && hi > lo, "{bars:?}: {lo} {hi}");
        }
        assert_eq!(whisker(&s, ErrorBars::Sd).0, 0.0);
        assert_eq!(
            whisker_caption(&[&s], ErrorBars::Sd),
            "± one standard deviation, clipped at 0 (the quantity cannot be negative)"
        );
        assert_eq!(
            whisker_caption(&[&s], ErrorBars::Ci),
            "95% CI of the geometric mean (log scale)"
        );
        // A CPU share is a positive quantity too, a zero among its values included.
        let d = stat(Unit::Percent, &[0.0, 40.0, 2.0]);
        for bars in [ErrorBars::Ci, ErrorBars::Sd] {
            assert_eq!(whisker(&d, bars).0, 0.0, "{bars:?}");
        }
        // Two repetitions: no interval to draw, and the caption says why.
        let two = stat(Unit::Millis, &[0.5, 7.0]);
        assert_eq!(whisker(&two, ErrorBars::Ci), (3.75, 3.75));
        assert_eq!(
            whisker_caption(&[&two], ErrorBars::Ci),
            "none (fewer than 3 repetitions each: no 95% interval)"
        );
    }
}
