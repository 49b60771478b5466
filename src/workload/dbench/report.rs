//! dbench's own report text, as `dbench` 4.0 prints it at the end of a run: the
//! per-operation table under dbench 4.0's names and column widths (here with HDR percentiles
//! besides dbench's count, mean and maximum) and the closing
//! `Throughput … MB/sec  N clients  N procs  max_latency=… ms` line. fslab's NCLIENTS is
//! dbench's NPROCS with one client per process, so both counts are NCLIENTS, as dbench
//! prints them for the same command line.
//! Pure functions of the engine's types.

use super::{DbenchParams, RepOutcome};

/// dbench's per-operation table with percentiles, and its closing throughput line.
pub fn report(p: &DbenchParams, o: &RepOutcome) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        " {:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "Operation", "Count", "AvgLat", "P50", "P99", "P99.9", "MaxLat"
    );
    let _ = writeln!(s, " {}", "-".repeat(70));
    for r in &o.ops {
        let _ = writeln!(
            s,
            " {:<12} {:>7} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            r.op, r.count, r.mean_ms, r.p50_ms, r.p99_ms, r.p999_ms, r.max_ms
        );
    }
    let _ = writeln!(
        s,
        " (latencies in ms, HDR histograms merged over all clients)"
    );
    let _ = write!(
        s,
        "\nThroughput {:.3} MB/sec{}{}  {} clients  {} procs  max_latency={:.3} ms  ({} ops in {:.1} s)",
        o.throughput_mb_s,
        if p.client.sync_open { " (sync open)" } else { "" },
        if p.client.sync_dir { " (sync dirs)" } else { "" },
        p.clients,
        p.clients,
        o.max_latency_ms(),
        o.measured_ops,
        o.measured_seconds
    );
    if p.timestamps && p.loadfile.has_timestamps {
        let _ = write!(s, "  max_lag={:.3} ms", o.max_lag_ms);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dbench::{Loadfile, OpRow};

    #[test]
    fn report_is_dbenchs_table_and_throughput_line() {
        let mut p = DbenchParams::new(Loadfile::default());
        p.clients = 4;
        p.client.sync_open = true;
        let o = RepOutcome {
            throughput_mb_s: 123.4567,
            measured_seconds: 20.04,
            measured_bytes: 0,
            measured_ops: 98765,
            passes: 3,
            total_lines: 100_000,
            max_lag_ms: 0.0,
            ops: vec![
                OpRow {
                    op: "NTCreateX",
                    count: 1234,
                    mean_ms: 0.1234,
                    p50_ms: 0.1,
                    p99_ms: 1.5,
                    p999_ms: 2.25,
                    max_ms: 3.125,
                },
                OpRow {
                    op: "Qpathinfo",
                    count: 12_345_678,
                    mean_ms: 0.002,
                    p50_ms: 0.001,
                    p99_ms: 0.01,
                    p999_ms: 0.1,
                    max_ms: 1.0,
                },
            ],
        };
        // dbench 4.0: " Operation      Count    AvgLat    MaxLat", rows " %-12s %7u %9.03f %9.03f".
        let expected = " Operation      Count    AvgLat       P50       P99     P99.9    MaxLat
 ----------------------------------------------------------------------
 NTCreateX       1234     0.123     0.100     1.500     2.250     3.125
 Qpathinfo    12345678     0.002     0.001     0.010     0.100     1.000
 (latencies in ms, HDR histograms merged over all clients)

Throughput 123.457 MB/sec (sync open)  4 clients  4 procs  max_latency=3.125 ms  (98765 ops in 20.0 s)";
        assert_eq!(report(&p, &o), expected);
    }
}
