//! Round trips of the store's writes and reads.

use super::*;
use crate::metric::Unit;
use crate::stats::adaptive::StopReason;
use crate::vocab::{CachePolicy, Stored};

/// An in-memory store with [`sample_study`]: the store, the study, its cell and workload.
pub(super) fn sample() -> (Store, i64, i64, i64) {
    let store = Store::open_in_memory().unwrap();
    let (s, c, w) = sample_study(&store);
    (store, s, c, w)
}

pub(super) fn sample_study(store: &Store) -> (i64, i64, i64) {
    let s = store
        .begin_study(&NewStudy::named(
            crate::vocab::StudyKind::Study,
            "t",
            "fslab study run t.toml",
        ))
        .unwrap();
    let cell = NewCell::of(0, &[("journal", "16MB")], serde_json::json!({"fs": "ext4"}));
    let c = store.add_cell(s, &cell).unwrap();
    let w = store
        .add_workload(s, 0, "fdtree", "small", &serde_json::json!({"dirs": 2}))
        .unwrap();
    (s, c, w)
}

#[test]
fn round_trip_of_a_study() {
    let (mut store, s, c, w) = sample();
    let m = [
        Metric::new("file_create", "rate", Unit::FilesPerSec, 1234.5),
        Metric::new("file_create", "elapsed", Unit::Seconds, 2.5),
    ];
    store.record_trial(&NewTrial::counted(c, w, 1, &m)).unwrap();
    store
        .set_environment(s, &[("kernel".into(), "6.1".into())])
        .unwrap();
    store
        .set_series(c, w, SeriesStatus::Complete, Some(StopReason::Fixed), None)
        .unwrap();
    store.set_study_status(s, StudyStatus::Complete).unwrap();
    let d = store.load(s).unwrap().unwrap();
    assert_eq!(d.study.status, "complete");
    assert!(d.study.finished_at.is_some());
    assert_eq!(
        d.cells[0].factors,
        vec![("journal".to_string(), "16MB".to_string())]
    );
    assert_eq!(d.workloads[0].kind, "fdtree");
    assert_eq!(d.trials.len(), 1);
    assert_eq!(d.trials[0].samples, m.to_vec());
    assert_eq!(
        d.environment,
        vec![("kernel".to_string(), "6.1".to_string())]
    );
    assert_eq!(d.series[0].stop_reason, Some(StopReason::Fixed));
    assert_eq!(store.completed_repetitions(c, w).unwrap(), 1);
    assert_eq!(store.next_order_index(s).unwrap(), 2);
}

#[test]
fn a_failing_write_of_a_trial_rolls_back_its_whole_transaction() {
    let (mut store, s, c, w) = sample();
    let m = [Metric::new("p", "rate", Unit::OpsPerSec, 1.0)];
    // Two samples with the same (phase, metric) violate the primary key: no trial is left.
    let same_twice = [m[0].clone(), Metric::new("p", "rate", Unit::OpsPerSec, 2.0)];
    let e = store.record_trial(&NewTrial::counted(c, w, 1, &same_twice));
    assert!(e.is_err(), "a sample stored twice");
    assert!(store.trials(s).unwrap().is_empty());
    // A counted repetition cannot be stored twice.
    store.record_trial(&NewTrial::counted(c, w, 1, &m)).unwrap();
    let e = store.record_trial(&NewTrial::counted(c, w, 1, &m));
    assert!(e.is_err(), "a counted repetition stored twice");
    // Only one sample row survives: the failed insert rolled back its whole transaction.
    assert_eq!(store.trials(1).unwrap().len(), 1);
}

#[test]
fn schema_version_is_set_and_reopen_works() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sub/r.db");
    {
        let store = Store::open(&p).unwrap();
        let v: i64 = store.one("SELECT user_version FROM pragma_user_version()", []);
        assert_eq!(v, SCHEMA_VERSION);
        sample_study(&store);
    }
    let store = Store::open(&p).unwrap();
    assert_eq!(store.list_studies().unwrap().len(), 1);
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.db");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = Store::open(&p).err().unwrap().to_string();
    assert!(err.contains("newer than this fslab"), "{err}");
}

#[test]
fn deleting_a_study_cascades() {
    let (mut store, s, c, w) = sample();
    let m = [Metric::new("p", "rate", Unit::OpsPerSec, 1.0)];
    store.record_trial(&NewTrial::counted(c, w, 1, &m)).unwrap();
    store.delete_study(s).unwrap();
    let n: i64 = store.one("SELECT COUNT(*) FROM sample", []);
    assert_eq!(n, 0);
}

#[test]
fn interference_and_settling_round_trip_and_default_to_unknown() {
    let (mut store, s, c, w) = sample();
    let m = [Metric::new("p", "rate", Unit::OpsPerSec, 1.0)];
    store
        .record_trial(&NewTrial {
            cache_policy: "fresh",
            ..NewTrial::counted(c, w, 1, &m).around(
                Some(
                    "  cpu busy: 2 other processes running\n\nsda: 40 MB written by others \n"
                        .into(),
                ),
                Some(12.5),
            )
        })
        .unwrap();
    store
        .record_trial(&NewTrial::counted(c, w, 2, &m).around(Some(" \n ".into()), None))
        .unwrap();
    // A cache-policy word this fslab does not know (the column takes any word) still loads.
    store
        .record_trial(&NewTrial {
            cache_policy: "drop",
            ..NewTrial::counted(c, w, 3, &m)
        })
        .unwrap();
    let t = store.trials(s).unwrap();
    assert_eq!(t[0].cache_policy, Stored::Known(CachePolicy::Fresh));
    assert_eq!(t[2].cache_policy, Stored::Other("drop".into()));
    assert_eq!(
        t[0].window.interference.as_deref(),
        Some("cpu busy: 2 other processes running; sda: 40 MB written by others")
    );
    assert_eq!(t[0].window.settle_seconds, Some(12.5));
    // A blank reason is no reason: NULL means quiet or not measured.
    for t in &t[1..] {
        let window = (t.window.interference.as_deref(), t.window.settle_seconds);
        assert_eq!(window, (None, None), "repetition {}", t.repetition);
    }
}

#[test]
fn a_disturbed_repetition_left_out_keeps_its_number_beside_the_one_that_counts() {
    let (mut store, s, c, w) = sample();
    let m = [Metric::new("p", "rate", Unit::OpsPerSec, 1.0)];
    // Repetition 2 was disturbed and re-run: the left-out row keeps number 2 (status
    // discarded), the counted one is stored beside it; a counted row twice stays impossible.
    store
        .record_trial(&NewTrial {
            status: TrialStatus::Discarded,
            excluded: Some("rerun"),
            ..NewTrial::counted(c, w, 2, &m)
                .around(Some("2.0 GiB of other I/O on vda".into()), None)
        })
        .unwrap();
    store.record_trial(&NewTrial::counted(c, w, 2, &m)).unwrap();
    assert!(store.record_trial(&NewTrial::counted(c, w, 2, &m)).is_err());
    let t = store.trials(s).unwrap();
    assert_eq!(
        t.iter()
            .map(|t| (t.repetition, t.status, t.excluded.as_deref()))
            .collect::<Vec<_>>(),
        vec![
            (2, TrialStatus::Discarded, Some("rerun")),
            (2, TrialStatus::Ok, None)
        ]
    );
    assert_eq!(t[0].samples.len(), 1, "its values are kept");
}

#[test]
fn a_timeline_is_stored_with_its_repetition_and_read_back_in_order() {
    use crate::metric::TimePoint;
    let (mut store, s, c, w) = sample();
    let pt = |t: f64, name: &str, unit: Unit, value: f64| TimePoint {
        t,
        name: name.into(),
        unit,
        value,
    };
    let points = [
        pt(2.0, "dev.data.write_rate", Unit::MBPerSec, 80.0),
        pt(1.0, "progress", Unit::OpsPerSec, 1500.0),
        pt(1.0, "dev.data.write_rate", Unit::MBPerSec, 120.0),
    ];
    let mut t = NewTrial::counted(c, w, 1, &[]);
    t.timeline = &points;
    let id = store.record_trial(&t).unwrap();
    store
        .record_trial(&NewTrial::counted(c, w, 2, &[]))
        .unwrap();
    let d = store.load(s).unwrap().unwrap();
    let tl = &d.trials.iter().find(|t| t.id == id).unwrap().timeline;
    assert_eq!(
        tl.iter()
            .map(|p| (p.t, p.name.as_str()))
            .collect::<Vec<_>>(),
        [
            (1.0, "dev.data.write_rate"),
            (1.0, "progress"),
            (2.0, "dev.data.write_rate")
        ]
    );
    assert_eq!(tl[0].unit, Unit::MBPerSec);
    assert_eq!(store.timeline(id).unwrap(), *tl);
    assert!(d.trials.iter().any(|t| t.id != id && t.timeline.is_empty()));
}
