//! One series (cell × workload) of a study: how many counted repetitions it has, the values
//! of its primary metrics (for the adaptive rule: the same headline the report's
//! Observations test), their durations (for the ETA and the budget), and whether it is
//! still running.

use crate::metric::Metric;
use crate::stats::adaptive::{self, Rule, StopReason};
use crate::store::TrialRow;
use crate::workload::WorkloadKind;

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
    /// The workload's kind, whose primary metrics the rule watches.
    pub kind: WorkloadKind,
    /// Counted repetitions stored.
    pub done: u32,
    /// Primary metric keys and their values in repetition order.
    pub headlines: Vec<(String, Vec<f64>)>,
    /// Wall seconds of the counted repetitions.
    pub durations: Vec<f64>,
    /// Disturbed repetitions left out and run again (`disturbed = "repeat"`).
    pub reruns: u32,
    /// Its own least count, above the rule's `min`: the n a spread measured before gives it
    /// under `[repetitions] detect` (0: the rule's).
    pub floor: u32,
    /// State.
    pub state: SeriesState,
}

/// The metrics whose confidence interval decides adaptive stopping: every phase's primary
/// metric by the workload kind's capabilities (`Caps::primary_of`: fdtree's four rates,
/// IOzone's throughputs, dbench's throughput, fio's IOPS or throughput), the same the
/// report's Observations test; failing those every rate-like metric; failing that every
/// metric.
pub fn headline_metrics(kind: WorkloadKind, ms: &[Metric]) -> Vec<&Metric> {
    let caps = kind.caps();
    let h: Vec<&Metric> = ms
        .iter()
        .filter(|m| {
            let has = |n: &str| ms.iter().any(|x| x.phase == m.phase && x.name == n);
            caps.primary_of(&m.phase, has) == Some(m.name.as_str())
        })
        .collect();
    if !h.is_empty() {
        return h;
    }
    let r: Vec<&Metric> = ms
        .iter()
        .filter(|m| m.unit.is_rate() && !m.is_telemetry())
        .collect();
    if !r.is_empty() {
        return r;
    }
    ms.iter().filter(|m| !m.is_telemetry()).collect()
}

impl Series {
    /// A series with nothing done yet.
    pub fn new(cell: usize, wl: usize, kind: WorkloadKind) -> Series {
        Series {
            cell,
            wl,
            kind,
            done: 0,
            headlines: Vec::new(),
            durations: Vec::new(),
            reruns: 0,
            floor: 0,
            state: SeriesState::Active,
        }
    }

    /// Whether it still needs repetitions.
    pub fn is_active(&self) -> bool {
        self.state == SeriesState::Active
    }

    /// Account for one counted repetition.
    pub fn add(&mut self, metrics: &[Metric], wall: f64) {
        self.add_dropped(wall);
        for m in headline_metrics(self.kind, metrics) {
            let key = m.key();
            match self.headlines.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(m.value),
                None => self.headlines.push((key, vec![m.value])),
            }
        }
    }

    /// Account for a disturbed repetition left out under `disturbed = "drop"`: it takes its
    /// place in the series, its values do not count.
    pub fn add_dropped(&mut self, wall: f64) {
        self.done += 1;
        self.durations.push(wall);
    }

    /// Load the repetitions already stored (resume), in repetition order: the counted ones,
    /// the dropped ones (they keep their place), and how many were re-run.
    pub fn load(&mut self, trials: &[&TrialRow]) {
        let mut ok: Vec<&&TrialRow> = trials
            .iter()
            .filter(|t| {
                t.status == crate::store::TrialStatus::Ok
                    || t.excluded.as_deref() == Some("dropped")
            })
            .collect();
        ok.sort_by_key(|t| t.repetition);
        for t in ok {
            if t.status == crate::store::TrialStatus::Ok {
                self.add(&t.samples, t.window.wall_seconds);
            } else {
                self.add_dropped(t.window.wall_seconds);
            }
        }
        self.reruns = trials
            .iter()
            .filter(|t| t.excluded.as_deref() == Some("rerun"))
            .count() as u32;
    }

    /// Apply the stopping rule; returns the reason if it stops now.
    pub fn decide(&mut self, rule: &Rule) -> Option<StopReason> {
        if !self.is_active() {
            return None;
        }
        let values: Vec<Vec<f64>> = self.headlines.iter().map(|(_, v)| v.clone()).collect();
        let r = adaptive::decide(&self.rule(rule), self.done, &values)?;
        self.state = SeriesState::Done(r);
        Some(r)
    }

    /// The study's rule with this series' own least count.
    fn rule(&self, rule: &Rule) -> Rule {
        Rule {
            min: rule.min.max(self.floor),
            max: rule.max.max(self.floor),
            ..*rule
        }
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
            SeriesState::Active => {
                self.done + adaptive::remaining(&self.rule(rule), self.done).0.max(1)
            }
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

    fn keys(kind: WorkloadKind, ms: &[Metric]) -> Vec<String> {
        headline_metrics(kind, ms).iter().map(|m| m.key()).collect()
    }

    #[test]
    fn the_rule_watches_the_primary_metrics_the_report_tests() {
        let rep = fdtree_rep(100.0);
        assert_eq!(
            keys(WorkloadKind::Fdtree, &rep),
            vec!["dir_create.rate", "file_create.rate"]
        );
        let io = vec![
            Metric::new("write", "throughput", Unit::KiBPerSec, 1.0),
            Metric::new("write", "elapsed", Unit::Seconds, 1.0),
            Metric::new("write", "dev.data.write_bytes", Unit::Bytes, 1.0),
        ];
        assert_eq!(keys(WorkloadKind::Iozone, &io), vec!["write.throughput"]);
        // dbench: its throughput, not the latency of every operation.
        let dbench = vec![
            Metric::new("total", "throughput", Unit::MBPerSec, 100.0),
            Metric::new("Deltree", "mean_latency", Unit::Millis, 5.0),
            Metric::new("Deltree", "count", Unit::Count, 5.0),
        ];
        assert_eq!(
            keys(WorkloadKind::Dbench, &dbench),
            vec!["total.throughput"]
        );
        // fio: IOPS of a random job, throughput of a large sequential one, not CPU use
        // (fio stores a throughput for every direction, which the old rule watched).
        let fio = vec![
            Metric::new("rand/read", "iops", Unit::OpsPerSec, 1000.0),
            Metric::new("rand/read", "throughput", Unit::KiBPerSec, 4000.0),
            Metric::new("seq/read", "iops", Unit::OpsPerSec, 100.0),
            Metric::new("seq/read", "throughput", Unit::KiBPerSec, 102400.0),
            Metric::new("seq/read", "large_sequential", Unit::Count, 1.0),
            Metric::new("rand", "sys_cpu", Unit::Percent, 30.0),
        ];
        assert_eq!(
            keys(WorkloadKind::Fio, &fio),
            vec!["rand/read.iops", "seq/read.throughput"]
        );
        let odd = vec![Metric::new("x", "ops", Unit::OpsPerSec, 1.0)];
        assert_eq!(headline_metrics(WorkloadKind::Fdtree, &odd).len(), 1);
    }

    #[test]
    fn a_series_stops_by_its_rule() {
        let rule = Rule {
            min: 2,
            max: 4,
            target_ci: Some(0.05),
            detect: None,
        };
        let mut s = Series::new(0, 0, WorkloadKind::Fdtree);
        s.add(&fdtree_rep(100.0), 1.0);
        assert_eq!(s.decide(&rule), None);
        assert_eq!(s.planned(&rule), 2);
        s.add(&fdtree_rep(100.5), 3.0);
        // Two values give no interval (t(1) = 12.7 would make any one meaningless).
        assert_eq!(s.decide(&rule), None);
        s.add(&fdtree_rep(100.2), 2.0);
        assert_eq!(s.decide(&rule), Some(StopReason::CiMet));
        assert!(!s.is_active());
        assert_eq!(s.mean_duration(), Some(2.0));
        assert_eq!(s.headlines[1].1, vec![200.0, 201.0, 200.4]);
    }

    #[test]
    fn a_series_floor_from_a_measured_spread_raises_its_count() {
        let rule = Rule {
            min: 2,
            max: 2,
            target_ci: None,
            detect: None,
        };
        let mut s = Series::new(0, 0, WorkloadKind::Fdtree);
        s.floor = 4;
        for i in 0..3 {
            s.add(&fdtree_rep(100.0 + f64::from(i)), 1.0);
            assert_eq!(s.decide(&rule), None, "after {}", i + 1);
            assert_eq!(s.planned(&rule), 4);
        }
        s.add(&fdtree_rep(99.0), 1.0);
        assert_eq!(s.decide(&rule), Some(StopReason::Fixed));
        // Without a floor the rule's own count.
        let mut plain = Series::new(0, 0, WorkloadKind::Fdtree);
        plain.add(&fdtree_rep(100.0), 1.0);
        plain.add(&fdtree_rep(100.0), 1.0);
        assert_eq!(plain.decide(&rule), Some(StopReason::Fixed));
    }
}
