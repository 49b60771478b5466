//! Warnings in the model: what each is about, its line and advice, and the groups the text
//! formats list (made by `report::warngroups`).

use serde::Serialize;

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A phase shorter than the minimum.
    TooShort,
    /// Coefficient of variation above the threshold.
    HighCv,
    /// Fewer than two repetitions: no spread, interval or test.
    FewRepetitions,
    /// A value further from the others than their spread explains (`stats::outliers`).
    Outlier,
    /// The first repetition much worse than the others.
    FirstSlower,
    /// A trend across the execution order.
    Drift,
    /// The data set is smaller than twice the RAM.
    CacheDataset,
    /// Reads faster than the device can deliver.
    CacheDevice,
    /// Repetitions stopped for a reason other than meeting the target.
    StopReason,
    /// Failed repetitions or cells.
    Failed,
    /// Differences with p < 0.05 that do not survive the adjustment for multiple comparisons.
    MultipleComparisons,
    /// Repetitions disturbed by other activity on the machine (other I/O on the backing
    /// device, CPU steal, load, other processes' CPU).
    Interference,
    /// The two sides of a comparison ran their workloads with different parameters.
    ParametersDiffer,
    /// Measured in a User-mode Linux guest: figures for comparing its configurations with
    /// each other, not with the host's.
    Guest,
    /// More workers on a host than CPUs to run them: the result measures the scheduler as
    /// much as the file system.
    Oversubscribed,
    /// Workers that had to share one file-descriptor table (the system refused them their
    /// own): their opens and closes took one lock.
    SharedTable,
}

/// A warning about one result, with what to do about it.
#[derive(Debug, Clone, Serialize)]
pub struct ReportWarning {
    /// Kind.
    pub kind: WarningKind,
    /// Workload label, if specific to one.
    pub workload: Option<String>,
    /// Cell label, if specific to one.
    pub cell: Option<String>,
    /// `phase.metric`, if specific to one.
    pub metric: Option<String>,
    /// The message, one line, naming the fix.
    pub message: String,
    /// Where, with its figure, as listed in a group line
    /// (`journal=16MB fs=ext4 · dir_remove.rate 12.7%`).
    pub subject: String,
    /// What to do, in the words of its workload and cache policy (shared by a group).
    pub advice: String,
}

impl WarningKind {
    /// Order of groups, most serious first: results that are missing or cannot be compared,
    /// then results that measure something else (the page cache), then doubtful values.
    pub fn rank(self) -> u8 {
        use WarningKind::*;
        match self {
            Failed => 0,
            FewRepetitions | ParametersDiffer => 1,
            MultipleComparisons | Guest => 2,
            CacheDataset | Interference | Oversubscribed | SharedTable => 3,
            CacheDevice => 4,
            TooShort => 5,
            HighCv => 6,
            Drift => 7,
            FirstSlower => 8,
            Outlier => 9,
            StopReason => 10,
        }
    }
}

/// Warnings of one kind that share their advice.
#[derive(Debug, Clone, Serialize)]
pub struct WarningGroup {
    /// Kind.
    pub kind: WarningKind,
    /// What the group is about (`Coefficient of variation above 10%`).
    pub title: String,
    /// Number of warnings in the group.
    pub count: usize,
    /// Where each one is (cell, metric, figure), prefixed with the workload when the report
    /// has warnings about several.
    pub subjects: Vec<String>,
    /// What to do about all of them.
    pub advice: String,
    /// The group's line as the text formats print it.
    pub text: String,
}
