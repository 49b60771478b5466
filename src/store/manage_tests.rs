//! Filtered listings, removal, raw samples, views and import.

use super::super::*;
use crate::metric::{Metric, Unit};

/// A complete study with two cells (journal × fs) and one repetition each.
fn study(store: &mut Store, name: &str) -> i64 {
    let s = store
        .begin_study(&NewStudy::named(
            crate::vocab::StudyKind::Study,
            name,
            &format!("fslab study run {name}.toml"),
        ))
        .unwrap();
    store
        .set_environment(s, &[("host".into(), "h1".into())])
        .unwrap();
    let w = store
        .add_workload(s, 0, "fdtree", "small", &serde_json::json!({}))
        .unwrap();
    for (i, fs) in ["ext4", "xfs"].iter().enumerate() {
        let cell = NewCell::of(
            i,
            &[("journal", "16MB"), ("fs", fs)],
            serde_json::json!({ "fs": fs }),
        );
        let c = store.add_cell(s, &cell).unwrap();
        let m = [Metric::new(
            "file_create",
            "rate",
            Unit::FilesPerSec,
            100.0 + i as f64,
        )];
        store
            .record_trial(&NewTrial {
                order_index: i as u32,
                cache_policy: "cold",
                ..NewTrial::counted(c, w, 1, &m)
            })
            .unwrap();
    }
    store.set_study_status(s, StudyStatus::Complete).unwrap();
    s
}

#[test]
fn list_filters_by_name_kind_since_and_limit() {
    let mut st = Store::open_in_memory().unwrap();
    let a = study(&mut st, "alpha");
    let b = study(&mut st, "beta");
    let ids = |f: &ListFilter| -> Vec<i64> {
        st.list_filtered(f)
            .unwrap()
            .iter()
            .map(|l| l.study.id)
            .collect()
    };
    assert_eq!(ids(&ListFilter::default()), vec![b, a]);
    let name = |n: &str| ListFilter {
        name: Some(n.into()),
        ..Default::default()
    };
    assert_eq!(ids(&name("alpha")), vec![a]);
    assert_eq!(ids(&name("b*")), vec![b]);
    assert_eq!(ids(&name("alp")), Vec::<i64>::new());
    let kind = |k: &str| ListFilter {
        kind: Some(k.into()),
        ..Default::default()
    };
    assert_eq!(ids(&kind("fdtree")), vec![b, a]);
    assert_eq!(ids(&kind("iozone")), Vec::<i64>::new());
    assert_eq!(ids(&kind("run")), Vec::<i64>::new());
    let limit = ListFilter {
        limit: Some(1),
        ..Default::default()
    };
    assert_eq!(ids(&limit), vec![b]);
    let future = ListFilter {
        since: Some("2999-01-01T00:00:00.000Z".into()),
        ..Default::default()
    };
    assert_eq!(ids(&future), Vec::<i64>::new());
    let l = st.list_filtered(&ListFilter::default()).unwrap();
    assert_eq!(l[0].fs, "ext4,xfs");
    assert_eq!(l[0].engines, vec!["fdtree".to_string()]);
}

#[test]
fn remove_deletes_every_row_and_the_view_and_refuses_unknown_ids_whole() {
    let mut st = Store::open_in_memory().unwrap();
    let a = study(&mut st, "alpha");
    let b = study(&mut st, "beta");
    let err = st.remove_studies(&[a, 999]).unwrap_err();
    assert!(err.to_string().contains("no study or run 999"), "{err}");
    assert!(st.study(a).unwrap().is_some(), "nothing removed on refusal");
    let r = st.remove_studies(&[a]).unwrap();
    assert_eq!((r[0].cells, r[0].trials, r[0].samples), (2, 2, 2));
    assert!(st.study(a).unwrap().is_none());
    let left: i64 = st.one("SELECT COUNT(*) FROM samples", []);
    assert_eq!(left, 2, "only study {b}'s samples remain");
    let views: i64 = st.one(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = ?1",
        [views::view_name(a)],
    );
    assert_eq!(views, 0);
}

#[test]
fn ids_are_never_reused_after_a_removal() {
    let mut st = Store::open_in_memory().unwrap();
    let a = study(&mut st, "alpha");
    let b = study(&mut st, "beta");
    st.remove_studies(&[b]).unwrap();
    // Without AUTOINCREMENT SQLite would hand out max(id) + 1 = b again.
    let c = study(&mut st, "gamma");
    assert!(c > b && b > a, "{a} {b} {c}");
    // The cascade still works through the remade table.
    st.remove_studies(&[a, c]).unwrap();
    let rows: i64 = st.one(
        "SELECT (SELECT COUNT(*) FROM cell) + (SELECT COUNT(*) FROM trial)",
        [],
    );
    assert_eq!(rows, 0);
    assert!(study(&mut st, "delta") > c);
}

#[test]
fn remove_refuses_a_study_a_live_process_holds() {
    let mut st = Store::open_in_memory().unwrap();
    let a = study(&mut st, "alpha");
    let claim = st.claim(a).unwrap();
    let err = st.remove_studies(&[a]).unwrap_err();
    assert!(err.to_string().contains("is running"), "{err}");
    assert!(st.study(a).unwrap().is_some());
    claim.release().unwrap();
    assert_eq!(st.remove_studies(&[a]).unwrap().len(), 1);
}

#[test]
fn views_have_one_column_per_factor() {
    let mut st = Store::open_in_memory().unwrap();
    let a = study(&mut st, "alpha");
    let sql = format!(
        "SELECT journal, fs, cell, value FROM {} ORDER BY order_index",
        views::view_name(a)
    );
    let rows: Vec<(String, String, String, f64)> = st.rows(&sql, [], |r| r.try_into()).unwrap();
    assert_eq!(
        rows,
        vec![
            (
                "16MB".into(),
                "ext4".into(),
                "journal=16MB fs=ext4".into(),
                100.0
            ),
            (
                "16MB".into(),
                "xfs".into(),
                "journal=16MB fs=xfs".into(),
                101.0
            ),
        ]
    );
    let levels: String = st.one(
        "SELECT levels FROM samples WHERE study_id = ?1 ORDER BY order_index DESC LIMIT 1",
        [a],
    );
    assert_eq!(levels, "journal=16MB,fs=xfs");
    let raw = st.raw_samples(a).unwrap();
    assert_eq!(raw.len(), 2);
    assert_eq!(raw[1].levels[1], ("fs".to_string(), "xfs".to_string()));
    assert_eq!((raw[1].repetition, raw[1].order_index), (1, 1));
}
