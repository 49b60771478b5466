//! Which metric stands for a phase (its headline: compared and charted by default): the one
//! the workload's kind names ([`Caps::headline`]), else the first of a general order (rate,
//! throughput, time, latency), else the first that is not a count, else the first. Which
//! headlines are primary (Observations test them) is the kind's [`Caps::primary`].

use crate::metric::Unit;
use crate::workload::Caps;

/// Metric names that stand for a phase when several exist, best first, where the workload's
/// kind names none among the phase's metrics (an unknown kind, a `--metric` selection).
const ORDER: [&str; 7] = [
    "rate",
    "throughput",
    "elapsed",
    "mean_latency",
    "avg_latency",
    "p50_latency",
    "latency",
];

/// The headline among `names` (a phase's metrics with their units, in order of first
/// appearance); `caps` are the workload kind's, when it is a known kind.
pub fn pick<'a>(caps: Option<&Caps>, phase: &str, names: &[(&'a str, Unit)]) -> Option<&'a str> {
    let has = |m: &str| names.iter().find(|n| n.0 == m).map(|n| n.0);
    caps.and_then(|c| c.headline_of(phase, |m| has(m).is_some()))
        .and_then(has)
        .or_else(|| ORDER.iter().find_map(|h| has(h)))
        .or_else(|| names.iter().find(|n| n.1 != Unit::Count).map(|n| n.0))
        .or_else(|| names.first().map(|n| n.0))
}

/// Whether the headline metric `name` is in the primary family of its workload kind
/// ([`Caps::primary`]); every headline is, for an unknown kind.
pub fn is_primary(caps: Option<&Caps>, name: &str) -> bool {
    caps.map_or(true, |c| c.primary.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Metric;
    use crate::workload::WorkloadKind;

    /// The general order's choice, as reports made it before kinds named their headlines.
    fn general(names: &[(&str, Unit)]) -> Option<String> {
        pick(None, "", names).map(str::to_string)
    }

    /// For every phase of `metrics`, the kind's headline is the one the general order picks.
    fn agrees(kind: WorkloadKind, metrics: &[Metric]) {
        let mut phases: Vec<&str> = metrics.iter().map(|m| m.phase.as_str()).collect();
        phases.dedup();
        for phase in phases {
            let names: Vec<(&str, Unit)> = metrics
                .iter()
                .filter(|m| m.phase == phase)
                .map(|m| (m.name.as_str(), m.unit))
                .collect();
            let by_kind = pick(Some(&kind.caps()), phase, &names);
            assert!(
                kind.caps()
                    .headline_of(phase, |m| names.iter().any(|n| n.0 == m))
                    .is_some(),
                "{kind} names no headline for {phase}"
            );
            assert_eq!(
                by_kind.map(str::to_string),
                general(&names),
                "{kind} {phase}"
            );
        }
    }

    #[test]
    fn kinds_name_the_headlines_the_general_order_picks() {
        use crate::workload::fdtree::{Fdtree, FdtreeParams, PhaseTiming, PHASES};
        let timing = |p: crate::workload::fdtree::Phase| PhaseTiming {
            phase: p.as_str(),
            items: 10,
            elapsed: 1.0,
            sync: Some(0.1),
            per_thread: vec![1.0, 1.0],
            start_skew: 0.0,
            t_in: 0.0,
            t_out: 1.0,
        };
        let fdtree = Fdtree::new(FdtreeParams {
            threads: 2,
            ..FdtreeParams::default()
        });
        agrees(WorkloadKind::Fdtree, &fdtree.metrics(&PHASES.map(timing)));

        use crate::workload::iozone::{Iozone, PassResult, Test};
        let passes: Vec<PassResult> = Test::ALL
            .iter()
            .map(|&test| PassResult {
                test,
                bytes: 1 << 20,
                elapsed: std::time::Duration::from_millis(10),
            })
            .collect();
        agrees(WorkloadKind::Iozone, &Iozone::metrics(&passes));

        use crate::workload::dbench::{Dbench, DbenchParams, Loadfile, OpRow, RepOutcome};
        let row = |op| OpRow {
            op,
            count: 5,
            mean_ms: 1.0,
            p50_ms: 1.0,
            p99_ms: 2.0,
            p999_ms: 3.0,
            max_ms: 4.0,
        };
        let outcome = RepOutcome {
            throughput_mb_s: 10.0,
            measured_seconds: 1.0,
            measured_bytes: 1,
            measured_ops: 10,
            passes: 1,
            total_lines: 10,
            max_lag_ms: 0.0,
            ops: vec![row("NTCreateX"), row("ReadX")],
        };
        let dbench = Dbench::new(DbenchParams::new(Loadfile::default()));
        agrees(WorkloadKind::Dbench, &dbench.metrics(&outcome));
    }

    #[test]
    fn without_the_kinds_metric_the_general_order_decides() {
        let caps = WorkloadKind::Fdtree.caps();
        let names = [("elapsed", Unit::Seconds), ("throughput", Unit::KiBPerSec)];
        assert_eq!(pick(Some(&caps), "file_create", &names), Some("throughput"));
        let counts = [("items", Unit::Count), ("x", Unit::Seconds)];
        assert_eq!(pick(Some(&caps), "p", &counts), Some("x"));
        assert_eq!(pick(None, "p", &[("items", Unit::Count)]), Some("items"));
        assert_eq!(pick(None, "p", &[]), None);
    }
}
