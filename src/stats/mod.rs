//! Statistics over repetitions: pure functions, no I/O, nothing else of fslab imported.
//!
//! `summary` gives n, mean, standard deviation, median, min, max, coefficient of variation
//! and the 95% Student-t confidence interval of the mean (Traeger et al. 2008 recommend at
//! least ten runs and t-intervals). `warnings` flags results that cannot be trusted.
//! `compare` tests a candidate against a baseline (percent change with its interval,
//! Welch, Mann–Whitney), `outliers` flags values by the median/MAD rule, and `trend` checks
//! the execution order (first repetition slower, drift).

pub mod compare;
pub mod outliers;
pub mod summary;
pub mod trend;
pub mod warnings;

pub use summary::{summarize, t_quantile, Summary};
pub use warnings::{metric_warnings, Thresholds, Warning};
