//! Owned paths: intended, created with device and inode, removed; found by study and by path.

use crate::store::tests::{sample, sample_study};
use crate::store::*;
use crate::vocab::EntryKind;
use std::path::Path;

#[test]
fn an_owned_path_goes_from_intended_to_created_to_removed() {
    let (st, s, _, _) = sample();
    let detail = serde_json::json!({"dirs": 2, "levels": 3});
    let id = st
        .add_owned_path(
            s,
            Path::new("/mnt/t/LEVEL0.h.1"),
            OwnedKind::new("fdtree", EntryKind::Tree),
            &detail,
        )
        .unwrap();
    let got = st.owned_paths(s).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id, id);
    assert_eq!(got[0].path, Path::new("/mnt/t/LEVEL0.h.1"));
    assert_eq!(got[0].kind, OwnedKind::new("fdtree", EntryKind::Tree));
    assert_eq!(got[0].detail, detail);
    assert_eq!(
        (got[0].state, got[0].dev, got[0].ino),
        (OwnedState::Intended, None, None)
    );
    // Device and inode numbers use all 64 bits.
    st.set_owned_created(id, u64::MAX - 1, 1 << 63).unwrap();
    let got = &st.owned_paths(s).unwrap()[0];
    assert_eq!(
        (got.state, got.dev, got.ino),
        (OwnedState::Created, Some(u64::MAX - 1), Some(1 << 63))
    );
    st.set_owned_removed(id).unwrap();
    assert_eq!(st.owned_paths(s).unwrap()[0].state, OwnedState::Removed);
    assert_eq!(st.owned_paths(s).unwrap()[0].dev, Some(u64::MAX - 1));
}

#[test]
fn records_of_a_path_are_found_newest_first_with_their_study() {
    let (st, s1, _, _) = sample();
    let (s2, _, _) = sample_study(&st);
    let p = Path::new("/data/iozone.tmp");
    let empty = serde_json::json!({});
    let a = st
        .add_owned_path(s1, p, OwnedKind::new("iozone", EntryKind::File), &empty)
        .unwrap();
    st.add_owned_path(
        s1,
        Path::new("/data/other"),
        OwnedKind::new("dbench", EntryKind::Dir),
        &empty,
    )
    .unwrap();
    let b = st
        .add_owned_path(s2, p, OwnedKind::new("iozone", EntryKind::File), &empty)
        .unwrap();
    let at: Vec<(i64, i64)> = st
        .owned_paths_at(p)
        .unwrap()
        .into_iter()
        .map(|(o, s)| (o.id, s))
        .collect();
    assert_eq!(at, [(b, s2), (a, s1)]);
    assert!(st.owned_paths_at(Path::new("/nowhere")).unwrap().is_empty());
    // Deleting a study deletes its records.
    st.delete_study(s1).unwrap();
    assert_eq!(st.owned_paths_at(p).unwrap().len(), 1);
    assert!(st.owned_paths(s1).unwrap().is_empty());
}

#[test]
fn relative_paths_and_unknown_records_are_errors() {
    let (st, s, _, _) = sample();
    let e = st
        .add_owned_path(
            s,
            Path::new("rel/tree"),
            OwnedKind::new("fdtree", EntryKind::Tree),
            &serde_json::json!({}),
        )
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("is relative"), "{e:#}");
    let e = st.set_owned_created(77, 1, 2).err().unwrap();
    assert!(
        format!("{e:#}").contains(
            "marking owned path 77 created in results database :memory:: there is no such record"
        ),
        "{e:#}"
    );
    assert!(st.set_owned_removed(77).is_err());
    assert!(st.owned_paths(s).unwrap().is_empty());
}
