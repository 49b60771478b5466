//! One series (cell × workload) of a study: how many counted repetitions it has, the values
//! of its headline metrics (for the adaptive rule), their durations (for the ETA and the
//! budget), and whether it is still running.

use crate::metric::Metric;
use crate::stats::adaptive::{self, Rule, StopReason};
use crate::store::TrialRow;

/// Where a series stands.
#[derive(Debug, Clone, PartialEq)]
pub enum SeriesState {
    /// More repetitions to run.
    Active,
    /// Stopped for this reason.
    Done(StopReason),
    /// A repetition failed with this error.
    Failed(String),
}

/// A series in the runner.
#[derive(Debug, Clone)]
pub struct Series {
    /// Cell index in the plan.
    pub cell: usize,
    /// Workload index in the study.
    pub wl: usize,
    /// Counted repetitions stored.
    pub done: u32,
    /// Headline metric keys and their values in repetition order.
    pub headlines: Vec<(String, Vec<f64>)>,
    /// Wall seconds of the counted repetitions.
    pub durations: Vec<f64>,
    /// State.
    pub state: SeriesState,
}

/// The metrics whose confidence interval decides adaptive stopping: every phase's `rate`,
/// or its `throughput` when it has no rate; failing those every rate-like metric; failing
/// that every metric.
pub fn headline_metrics(ms: &[Metric]) -> Vec<&Metric> {
    let has_rate = |phase: &str| ms.iter().any(|m| m.phase == phase && m.name == "rate");
    let h: Vec<&Metric> = ms
        .iter()
        .filter(|m| m.name == "rate" || (m.name == "throughput" && !has_rate(&m.phase)))
        .collect();
    if !h.is_empty() {
        return h;
    }
    let r: Vec<&Metric> = ms.iter().filter(|m| m.unit.is_rate()).collect();
    if !r.is_empty() {
        return r;
    }
    ms.iter().collect()
}

impl Series {
    /// A series with nothing done yet.
    pub fn new(cell: usize, wl: usize) -> Series {
        Series {
            cell,
            wl,
            done: 0,
            headlines: Vec::new(),
            durations: Vec::new(),
            state: SeriesState::Active,
        }
    }

    /// Whether it still needs repetitions.
    pub fn is_active(&self) -> bool {
        self.state == SeriesState::Active
    }

    /// Account for one counted repetition.
    pub fn add(&mut self, metrics: &[Metric], wall: f64) {
        self.done += 1;
        self.durations.push(wall);
        for m in headline_metrics(metrics) {
            let key = m.key();
            match self.headlines.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(m.value),
                None => self.headlines.push((key, vec![m.value])),
            }
        }
    }

    /// Load the counted repetitions already stored (resume), in repetition order.
    pub fn load(&mut self, trials: &[&TrialRow]) {
        let mut ok: Vec<&&TrialRow> = trials
            .iter()
            .filter(|t| t.status == crate::store::TrialStatus::Ok)
            .collect();
        ok.sort_by_key(|t| t.repetition);
        for t in ok {
            self.add(&t.samples, t.wall_seconds);
        }
    }

    /// Apply the stopping rule; returns the reason if it stops now.
    pub fn decide(&mut self, rule: &Rule) -> Option<StopReason> {
        if !self.is_active() {
            return None;
        }
        let values: Vec<Vec<f64>> = self.headlines.iter().map(|(_, v)| v.clone()).collect();
        let r = adaptive::decide(rule, self.done, &values)?;
        self.state = SeriesState::Done(r);
        Some(r)
    }

    /// Mean wall seconds of a repetition, if any ran.
    pub fn mean_duration(&self) -> Option<f64> {
        (!self.durations.is_empty())
            .then(|| self.durations.iter().sum::<f64>() / self.durations.len() as f64)
    }

    /// Repetitions planned in total for the progress bar: the done ones plus the minimum
    /// still needed (at least one while active).
    pub fn planned(&self, rule: &Rule) -> u32 {
        match self.state {
            SeriesState::Active => self.done + adaptive::remaining(rule, self.done).0.max(1),
            _ => self.done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Unit;

    fn fdtree_rep(rate: f64) -> Vec<Metric> {
        vec![
            Metric::new("dir_create", "elapsed", Unit::Seconds, 1.0),
            Metric::new("dir_create", "rate", Unit::DirsPerSec, rate),
            Metric::new("file_create", "rate", Unit::FilesPerSec, rate * 2.0),
            Metric::new("file_create", "throughput", Unit::KiBPerSec, rate * 8.0),
        ]
    }

    #[test]
    fn headlines_are_rates_or_else_throughput() {
        let rep = fdtree_rep(100.0);
        let keys: Vec<String> = headline_metrics(&rep).iter().map(|m| m.key()).collect();
        assert_eq!(keys, vec!["dir_create.rate", "file_create.rate"]);
        let io = vec![
            Metric::new("write", "throughput", Unit::KiBPerSec, 1.0),
            Metric::new("write", "elapsed", Unit::Seconds, 1.0),
        ];
        assert_eq!(headline_metrics(&io)[0].key(), "write.throughput");
        let odd = vec![Metric::new("x", "ops", Unit::OpsPerSec, 1.0)];
        assert_eq!(headline_metrics(&odd).len(), 1);
    }

    #[test]
    fn a_series_stops_by_its_rule() {
        let rule = Rule {
            min: 2,
            max: 4,
            target_ci: Some(0.05),
        };
        let mut s = Series::new(0, 0);
        s.add(&fdtree_rep(100.0), 1.0);
        assert_eq!(s.decide(&rule), None);
        assert_eq!(s.planned(&rule), 2);
        s.add(&fdtree_rep(100.5), 3.0);
        assert_eq!(s.decide(&rule), Some(StopReason::CiMet));
        assert!(!s.is_active());
        assert_eq!(s.mean_duration(), Some(2.0));
        assert_eq!(s.headlines[1].1, vec![200.0, 201.0]);
    }
}
