//! mdtest's phases and results: one [`PhaseResult`] per phase and iteration, combined over
//! iterations into the Max/Min/Mean/Std Dev of mdtest's SUMMARY table.

use crate::metric::{Metric, Unit};
use serde::Serialize;

crate::vocab::words! {
    /// mdtest's operations, in the order of its SUMMARY table. (mdtest's "Directory read" does
    /// nothing and is never printed; fslab leaves it out.) [`Phase::ALL`] is every phase in
    /// table order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Phase {
        /// Directory creation.
        DirCreate => "dir_create",
        /// Directory stat.
        DirStat => "dir_stat",
        /// Directory rename.
        DirRename => "dir_rename",
        /// Directory removal.
        DirRemove => "dir_remove",
        /// File creation.
        FileCreate => "file_create",
        /// File stat.
        FileStat => "file_stat",
        /// File read.
        FileRead => "file_read",
        /// File removal.
        FileRemove => "file_remove",
        /// Tree creation.
        TreeCreate => "tree_create",
        /// Tree removal.
        TreeRemove => "tree_remove",
    }
    /// The stored phase name (`dir_create`, …).
    as_str;
}

impl Phase {
    /// mdtest's name of the operation (`Directory creation`, …).
    pub fn label(self) -> &'static str {
        match self {
            Phase::DirCreate => "Directory creation",
            Phase::DirStat => "Directory stat",
            Phase::DirRename => "Directory rename",
            Phase::DirRemove => "Directory removal",
            Phase::FileCreate => "File creation",
            Phase::FileStat => "File stat",
            Phase::FileRead => "File read",
            Phase::FileRemove => "File removal",
            Phase::TreeCreate => "Tree creation",
            Phase::TreeRemove => "Tree removal",
        }
    }

    /// Position in [`Phase::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The unit of its rate.
    pub fn rate_unit(self) -> Unit {
        match self {
            Phase::DirCreate | Phase::DirRemove | Phase::TreeCreate | Phase::TreeRemove => {
                Unit::DirsPerSec
            }
            Phase::FileCreate | Phase::FileRemove => Unit::FilesPerSec,
            Phase::DirStat | Phase::DirRename | Phase::FileStat | Phase::FileRead => {
                Unit::OpsPerSec
            }
        }
    }
}

/// Where the stonewall stopped file creation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stonewall {
    /// Items all ranks had made when they stopped (before the wear-out).
    pub items: u64,
    /// The longest time any rank took to stop, in seconds.
    pub seconds: f64,
}

impl Stonewall {
    /// Items per second up to the stonewall (IO500's stonewall rate).
    pub fn rate(&self) -> f64 {
        rate(self.items, self.seconds)
    }
}

/// `items` per second (0 for no items or no time, as mdtest).
fn rate(items: u64, seconds: f64) -> f64 {
    if items == 0 || seconds <= 0.0 {
        0.0
    } else {
        items as f64 / seconds
    }
}

/// One phase of one iteration, all ranks combined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseResult {
    /// The phase.
    pub phase: Phase,
    /// Items of all ranks (tree phases: the directories of one tree, as mdtest counts them).
    pub items: u64,
    /// The longest rank's time from the phase's opening barrier to its closing one: the
    /// phase's first start to its last end (mdtest's "last done").
    pub seconds: f64,
    /// Set when the stonewall stopped file creation early.
    pub stonewall: Option<Stonewall>,
}

impl PhaseResult {
    /// Items per second (0 for no items, as mdtest).
    pub fn rate(&self) -> f64 {
        rate(self.items, self.seconds)
    }
}

/// One iteration (mdtest's `-i`): the phases that ran, in run order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iteration {
    /// 0-based iteration number (its test directory is `test-dir.<index>-0`).
    pub index: u32,
    /// The phases run.
    pub phases: Vec<PhaseResult>,
}

impl Iteration {
    /// The result of `phase`, if it ran.
    pub fn get(&self, phase: Phase) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// The iteration as fslab metrics: per phase `rate`, `elapsed` and `items`, plus the
    /// stonewall's `stonewall_rate`, `stonewall_items` and `stonewall_time`.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut m = Vec::new();
        for p in &self.phases {
            let mut row = vec![
                ("rate", p.phase.rate_unit(), p.rate()),
                ("elapsed", Unit::Seconds, p.seconds),
                ("items", Unit::Count, p.items as f64),
            ];
            if let Some(s) = p.stonewall {
                row.extend([
                    ("stonewall_rate", p.phase.rate_unit(), s.rate()),
                    ("stonewall_items", Unit::Count, s.items as f64),
                    ("stonewall_time", Unit::Seconds, s.seconds),
                ]);
            }
            for (metric, unit, v) in row {
                m.push(Metric::new(p.phase.as_str(), metric, unit, v));
            }
        }
        m
    }
}

/// Max, min, mean and sample standard deviation over iterations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Largest value.
    pub max: f64,
    /// Smallest value.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (n−1); 0 for one iteration.
    pub sd: f64,
}

/// The spread of `phase`'s rate (or time) over `iters`; a phase that did not run counts as
/// 0, as in mdtest's table.
pub fn spread(iters: &[Iteration], phase: Phase, time: bool) -> Spread {
    let vals: Vec<f64> = iters
        .iter()
        .map(|it| {
            it.get(phase)
                .map_or(0.0, |p| if time { p.seconds } else { p.rate() })
        })
        .collect();
    if vals.is_empty() {
        return Spread::default();
    }
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<f64>() / n;
    let sd = if vals.len() < 2 {
        0.0
    } else {
        (vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    Spread {
        max: vals.iter().copied().fold(f64::MIN, f64::max),
        min: vals.iter().copied().fold(f64::MAX, f64::min),
        mean,
        sd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mdtest::test_support::ph;

    fn it(vals: &[(u64, f64)]) -> Vec<Iteration> {
        vals.iter()
            .enumerate()
            .map(|(i, &(items, seconds))| Iteration {
                index: i as u32,
                phases: vec![ph(Phase::FileStat, items, seconds)],
            })
            .collect()
    }

    #[test]
    fn rates_are_items_over_seconds_and_zero_without_items() {
        let p = |items, seconds| ph(Phase::DirCreate, items, seconds);
        assert_eq!(p(1000, 0.25).rate(), 4000.0);
        assert_eq!(p(0, 0.25).rate(), 0.0);
        assert_eq!(p(5, 0.0).rate(), 0.0);
        let s = Stonewall {
            items: 30,
            seconds: 1.5,
        };
        assert_eq!(s.rate(), 20.0);
    }

    #[test]
    fn spread_is_max_min_mean_and_sample_deviation() {
        // Rates 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let its = it(&[2, 4, 4, 4, 5, 5, 7, 9].map(|items| (items, 1.0)));
        let s = spread(&its, Phase::FileStat, false);
        assert_eq!((s.max, s.min, s.mean), (9.0, 2.0, 5.0));
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let t = spread(&it(&[(10, 2.0), (10, 4.0)]), Phase::FileStat, true);
        assert_eq!((t.max, t.min, t.mean), (4.0, 2.0, 3.0));
        let one = spread(&it(&[(10, 2.0)]), Phase::FileStat, false);
        assert_eq!(one.sd, 0.0, "one iteration: 0 as mdtest prints it");
        // A phase that did not run counts as 0.
        let none = spread(&it(&[(10, 2.0)]), Phase::DirStat, false);
        assert_eq!((none.max, none.mean), (0.0, 0.0));
    }

    #[test]
    fn metrics_name_the_phase_and_the_stonewall() {
        let i = Iteration {
            index: 0,
            phases: vec![PhaseResult {
                phase: Phase::FileCreate,
                items: 100,
                seconds: 2.0,
                stonewall: Some(Stonewall {
                    items: 60,
                    seconds: 1.0,
                }),
            }],
        };
        let m: Vec<(String, String, f64)> = i
            .metrics()
            .into_iter()
            .map(|m| (m.phase, m.name, m.value))
            .collect();
        let want = [
            ("file_create", "rate", 50.0),
            ("file_create", "elapsed", 2.0),
            ("file_create", "items", 100.0),
            ("file_create", "stonewall_rate", 60.0),
            ("file_create", "stonewall_items", 60.0),
            ("file_create", "stonewall_time", 1.0),
        ];
        let want = want.map(|(p, n, v)| (p.to_string(), n.to_string(), v));
        assert_eq!(m, want);
        for &ph in Phase::ALL {
            assert_eq!(Phase::parse(ph.as_str()), Some(ph));
        }
    }
}
