//! Turning stored or fresh samples into text: summary tables, JSON, warnings.

pub mod runsummary;
