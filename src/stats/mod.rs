//! Statistics over repetitions: pure functions, no I/O, nothing else of fslab imported.
//!
//! `summary` gives n, mean, standard deviation, median, min, max, coefficient of variation
//! and the 95% confidence interval (Traeger et al. 2008 recommend at least ten runs and
//! t-intervals); `interval` computes it — Student t of the mean for signed quantities, Student
//! t on the log scale for positive ones, so no bound of a time or a rate is ever negative. `warnings` flags results that cannot be trusted.
//! `compare` tests a candidate against a baseline (Welch, Mann–Whitney, Benjamini–Hochberg),
//! `effect` gives the percent change, its interval and its test from one model, `outliers` flags values further from the others than their spread explains, and `trend` checks
//! the execution order (first repetition slower, drift).

pub mod adaptive;
pub mod compare;
pub mod consistent;
pub mod effect;
pub mod interval;
pub mod outliers;
pub mod power;
pub mod rng;
pub mod summary;
pub mod trend;
pub mod warnings;

pub use interval::{IntervalMethod, Quantity};
pub use summary::{summarize, summarize_as, t_quantile, Summary};
pub use warnings::{
    cv_lower_bound, high_variation, metric_warnings, too_short, variation_text, Thresholds, Warning,
};

/// The items in order of first appearance, each once.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
