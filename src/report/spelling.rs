//! One spelling of dbench's operations in every report: stores written before issue 24 hold
//! dbench's loadfile names as phases (`QUERY_PATH_INFORMATION`), later ones the names dbench
//! 4.0 prints (`Qpathinfo`). Reports rename the former to the latter when they load a store,
//! so tables, Observations, charts, JSON and comparisons between old and new runs all see
//! one name per operation. The mapping is documented in doc/dbench.md.

use crate::metric::Histogram;
use crate::store::StudyData;
use crate::workload::dbench::ops::OpKind;
use std::collections::BTreeMap;

/// dbench 4.0's name for a phase of a dbench workload given in either spelling; other
/// phases (`total`) unchanged.
pub fn dbench_phase(phase: &str) -> Option<&'static str> {
    OpKind::from_any_name(phase).map(OpKind::display_name)
}

/// Rename the operations of the dbench workloads in `data` (samples and histograms) to
/// dbench 4.0's names.
pub fn normalize(data: &mut StudyData, histograms: &mut BTreeMap<i64, Vec<Histogram>>) {
    let dbench: Vec<i64> = data
        .workloads
        .iter()
        .filter(|w| w.kind == crate::workload::dbench::NAME)
        .map(|w| w.id)
        .collect();
    for t in data
        .trials
        .iter_mut()
        .filter(|t| dbench.contains(&t.workload_id))
    {
        for m in &mut t.samples {
            rename(&mut m.phase);
        }
        for h in histograms.get_mut(&t.id).into_iter().flatten() {
            rename(&mut h.phase);
        }
    }
}

fn rename(phase: &mut String) {
    if let Some(name) = dbench_phase(phase) {
        if name != phase {
            *phase = name.to_string();
        }
    }
}

/// A `--metric` token with a dbench operation in its loadfile spelling
/// (`QUERY_PATH_INFORMATION.mean_latency`, `FIND_FIRST`) in dbench 4.0's; others unchanged.
pub fn metric_token(tok: &str) -> String {
    let (phase, rest) = match tok.split_once('.') {
        Some((p, n)) => (p, Some(n)),
        None => (tok, None),
    };
    match (OpKind::from_name(phase).map(OpKind::display_name), rest) {
        (Some(p), Some(n)) => format!("{p}.{n}"),
        (Some(p), None) => p.to_string(),
        (None, _) => tok.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{Metric, Unit};
    use crate::report::tests::{lacks, metrics, rendered, study_of, Workload};

    #[test]
    fn a_store_with_loadfile_spellings_reports_dbench_4_0_names() {
        // A dbench run as fslab stored it before issue 24: phases in the loadfile's spelling.
        let dbench = Workload::cold("dbench", serde_json::json!({"clients": 2}));
        let cells: [&[(&str, &str)]; 2] = [&[("fs", "ext4")], &[("fs", "xfs")]];
        let (store, id) = study_of(&dbench, &cells, 3, &[], |c, rep| {
            let lat = if c == 0 { 1.0 } else { 2.0 } + 0.01 * f64::from(rep);
            let mb = 100.0 + f64::from(rep);
            vec![
                Metric::new("total", "throughput", Unit::MBPerSec, mb),
                Metric::new("QUERY_FS_INFORMATION", "mean_latency", Unit::Millis, lat),
                Metric::new("FIND_FIRST", "mean_latency", Unit::Millis, lat),
            ]
        });
        let loaded = crate::report::select::load(&store, &id.to_string()).unwrap();
        let phases: Vec<&str> = loaded.data.trials[0]
            .samples
            .iter()
            .map(|m| m.phase.as_str())
            .collect();
        assert_eq!(phases, ["total", "Qfsinfo", "Find"]);
        let d = &loaded.data;
        // --metric still takes the loadfile's spelling.
        let opts = metrics(&["QUERY_FS_INFORMATION.mean_latency,total"]);
        let r = crate::report::build::build(
            &crate::report::build::Input {
                title: "t".into(),
                sources: Vec::new(),
                environments: Vec::new(),
                data: d,
                histograms: &loaded.histograms,
                differences: Vec::new(),
                guest_calibration: None,
            },
            &opts,
        )
        .unwrap();
        let table = rendered(&r, crate::report::Format::Table);
        // The JSON's workloads (its options echo the --metric the user typed).
        let json = serde_json::to_string(&r.workloads).unwrap();
        for out in [table, json] {
            assert!(out.contains("Qfsinfo"), "{out}");
            lacks(&out, "QUERY_FS");
            lacks(&out, "QUERY FS");
            lacks(&out, "FIND_FIRST");
            lacks(&out, "Find");
        }
    }

    #[test]
    fn loadfile_spellings_become_dbench_4_0_names() {
        assert_eq!(dbench_phase("QUERY_FS_INFORMATION"), Some("Qfsinfo"));
        assert_eq!(dbench_phase("Qfsinfo"), Some("Qfsinfo"));
        assert_eq!(dbench_phase("FIND_FIRST"), Some("Find"));
        assert_eq!(dbench_phase("total"), None);
        assert_eq!(
            metric_token("QUERY_PATH_INFORMATION.mean_latency"),
            "Qpathinfo.mean_latency"
        );
        assert_eq!(metric_token("SET_FILE_INFORMATION"), "Sfileinfo");
        assert_eq!(metric_token("total.throughput"), "total.throughput");
        assert_eq!(metric_token("p99_latency"), "p99_latency");
    }
}
