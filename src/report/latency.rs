//! Latency percentiles per operation (dbench-style loads): from the stored HDR histograms,
//! merged exactly across repetitions, or, where an engine stored none, from its per-repetition
//! percentile metrics (`p50_latency`, `p99_latency`, `p99_9_latency`, `max_latency`, in ms).
//!
//! Histograms are decoded with hdrhistogram's V2 (deflate) deserializer
//! (encoding `hdr-v2-deflate` or `hdr-v2`); the value unit comes from the histogram name's
//! suffix (`latency_ns`, `latency_us`, `latency_ms`; nanoseconds when there is none).

use super::model::{CellInfo, LatencyCurve, WorkloadReport};
use crate::metric::{Histogram, Unit};
use crate::store::TrialRow;
use anyhow::Result;
use hdrhistogram::serialization::Deserializer;
use std::collections::BTreeMap;

/// Percentiles at which curves are sampled; 100 is the maximum.
pub const PERCENTILES: [f64; 9] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0];

/// Milliseconds per unit of a histogram's values, from its name.
fn ms_per_unit(name: &str) -> f64 {
    if name.ends_with("_ms") {
        1.0
    } else if name.ends_with("_us") {
        1e-3
    } else {
        1e-6
    }
}

/// Decode one stored histogram.
fn decode(h: &Histogram) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    if !h.encoding.starts_with("hdr-v2") {
        anyhow::bail!(
            "histogram {}.{} has encoding '{}'; this fslab reads hdr-v2 and hdr-v2-deflate",
            h.phase,
            h.name,
            h.encoding
        );
    }
    Deserializer::new()
        .deserialize(&mut &h.data[..])
        .map_err(|e| anyhow::anyhow!("histogram {}.{} cannot be decoded: {e:?}", h.phase, h.name))
}

/// Sampled (percentile, ms) points and the number of operations recorded.
pub type Curve = (Vec<(f64, f64)>, u64);

/// Merge histograms of one operation (all repetitions of one cell) and sample the curve:
/// (percentiles, count). `None` when there are none or all are empty.
pub fn merged_curve(hists: &[&Histogram]) -> anyhow::Result<Option<Curve>> {
    let Some(first) = hists.first() else {
        return Ok(None);
    };
    let scale = ms_per_unit(&first.name);
    let mut merged = hdrhistogram::Histogram::<u64>::new(3)
        .map_err(|e| anyhow::anyhow!("cannot make a histogram: {e:?}"))?;
    for h in hists {
        let d = decode(h)?;
        merged
            .add(&d)
            .map_err(|e| anyhow::anyhow!("cannot merge histogram {}.{}: {e:?}", h.phase, h.name))?;
    }
    if merged.is_empty() {
        return Ok(None);
    }
    let points = PERCENTILES
        .iter()
        .map(|&p| {
            let v = if p >= 100.0 {
                merged.max()
            } else {
                merged.value_at_percentile(p)
            };
            (p, v as f64 * scale)
        })
        .collect();
    Ok(Some((points, merged.len())))
}

/// The percentile a latency metric name stands for: `p50_latency` → 50, `p99_9_latency` and
/// `p999_latency` → 99.9, `p9999_latency` → 99.99, `max_latency` → 100.
pub fn percentile_of(name: &str, unit: Unit) -> Option<f64> {
    if unit != Unit::Millis {
        return None;
    }
    let stem = name
        .strip_suffix("_latency")
        .or_else(|| name.strip_suffix("_lat"))?;
    if stem == "max" {
        return Some(100.0);
    }
    let digits = stem.strip_prefix('p')?;
    if let Some((a, b)) = digits.split_once(['_', '.']) {
        if a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit()) {
            return format!("{a}.{b}").parse().ok().filter(|v| *v <= 100.0);
        }
        return None;
    }
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v = if digits.len() > 2 {
        format!("{}.{}", &digits[..2], &digits[2..])
    } else {
        digits.to_string()
    };
    v.parse().ok().filter(|v: &f64| *v <= 100.0)
}

/// Latency curves per cell and operation of one workload: merged histograms where stored,
/// else the percentile metrics; only operations `wanted` (the `--metric` selection) says.
pub fn curves(
    wr: &WorkloadReport,
    trials: &[&TrialRow],
    cells: &[CellInfo],
    hists: &BTreeMap<i64, Vec<Histogram>>,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<LatencyCurve>> {
    let mut out = Vec::new();
    for (ci, cell) in cells.iter().enumerate() {
        let mut by_op: BTreeMap<(String, String), Vec<&Histogram>> = BTreeMap::new();
        let mut op_order: Vec<String> = Vec::new();
        for t in trials.iter().filter(|t| t.cell_id == cell.id) {
            for h in hists.get(&t.id).map(Vec::as_slice).unwrap_or(&[]) {
                if !op_order.contains(&h.phase) {
                    op_order.push(h.phase.clone());
                }
                by_op
                    .entry((h.phase.clone(), h.name.clone()))
                    .or_default()
                    .push(h);
            }
        }
        // Operations in the workload's phase order, then any others in stored order.
        let mut ops: Vec<String> = wr
            .phases
            .iter()
            .filter(|p| op_order.contains(p))
            .cloned()
            .collect();
        ops.extend(op_order.into_iter().filter(|o| !wr.phases.contains(o)));
        for op in ops.iter().filter(|o| wanted(o)) {
            // One histogram name per operation: the first stored.
            let Some(((_, _), hs)) = by_op.iter().find(|((p, _), _)| p == op) else {
                continue;
            };
            if let Some((points, count)) = merged_curve(hs)? {
                out.push(LatencyCurve {
                    cell: ci,
                    op: op.clone(),
                    from: "histogram".into(),
                    count: Some(count),
                    points,
                });
            }
        }
        for op in wr.phases.iter().filter(|p| !ops.contains(p)) {
            let mut points: Vec<(f64, f64)> = wr
                .stats
                .iter()
                .filter(|s| s.cell == ci && &s.phase == op)
                .filter_map(|s| percentile_of(&s.name, s.unit).map(|p| (p, s.summary.mean)))
                .collect();
            if points.len() >= 2 {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.push(LatencyCurve {
                    cell: ci,
                    op: op.clone(),
                    from: "metrics".into(),
                    count: None,
                    points,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

    fn encoded(phase: &str, values_ns: &[u64]) -> Histogram {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for &v in values_ns {
            h.record(v).unwrap();
        }
        let mut data = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut data).unwrap();
        Histogram {
            phase: phase.into(),
            name: "latency_ns".into(),
            encoding: "hdr-v2-deflate".into(),
            data,
        }
    }

    #[test]
    fn merges_repetitions_exactly() {
        // 1..=100 µs in one repetition and 101..=200 µs in the other: merged median 100 µs,
        // p99 198 µs, max 200 µs (3 significant digits).
        let a = encoded("ReadX", &(1..=100).map(|i| i * 1000).collect::<Vec<_>>());
        let b = encoded("ReadX", &(101..=200).map(|i| i * 1000).collect::<Vec<_>>());
        let (points, count) = merged_curve(&[&a, &b]).unwrap().unwrap();
        assert_eq!(count, 200);
        let at = |p: f64| points.iter().find(|x| x.0 == p).unwrap().1;
        assert!((at(50.0) - 0.100).abs() < 0.0005, "{}", at(50.0));
        assert!((at(99.0) - 0.198).abs() < 0.0005, "{}", at(99.0));
        assert!((at(100.0) - 0.200).abs() < 0.0005, "{}", at(100.0));
        assert!(merged_curve(&[]).unwrap().is_none());
    }

    #[test]
    fn bad_encodings_are_named() {
        let mut h = encoded("ReadX", &[1000]);
        h.encoding = "json".into();
        let e = merged_curve(&[&h]).unwrap_err().to_string();
        assert!(e.contains("encoding 'json'"), "{e}");
        h.encoding = "hdr-v2-deflate".into();
        h.data = vec![1, 2, 3];
        assert!(merged_curve(&[&h]).is_err());
    }

    #[test]
    fn percentile_names() {
        assert_eq!(percentile_of("p50_latency", Unit::Millis), Some(50.0));
        assert_eq!(percentile_of("p99_9_latency", Unit::Millis), Some(99.9));
        assert_eq!(percentile_of("p999_latency", Unit::Millis), Some(99.9));
        assert_eq!(percentile_of("p9999_latency", Unit::Millis), Some(99.99));
        assert_eq!(percentile_of("max_latency", Unit::Millis), Some(100.0));
        assert_eq!(percentile_of("mean_latency", Unit::Millis), None);
        assert_eq!(percentile_of("p99_latency", Unit::Seconds), None);
    }
}
