//! Claims: exclusive, released on drop, taken over from a process that is gone (exited, or
//! its pid reused), refused when the holder is alive or on another host.

use super::{host_name as host, proc_start};
use crate::store::tests::{sample, sample_study};
use crate::store::*;

fn file_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("r.db")).unwrap();
    (dir, st)
}

/// A store in a file with [`sample_study`]: its directory, the store and the study.
fn study_store() -> (tempfile::TempDir, Store, i64) {
    let (dir, st) = file_store();
    let (s, _, _) = sample_study(&st);
    (dir, st, s)
}

fn put_claim(st: &Store, study: i64, pid: u32, host: &str, start: u64) {
    st.conn()
        .execute(
            "INSERT OR REPLACE INTO claim (study_id, pid, host, start_time, claimed_at) VALUES (?1, ?2, ?3, ?4, '2024-01-01T00:00:00.000Z')",
            rusqlite::params![study, pid, host, start as i64],
        )
        .unwrap();
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_claim_is_exclusive_and_released_when_dropped() {
    let (_d, mut st, s) = study_store();
    let c = st.claim(s).unwrap();
    assert!(c.taken_over().is_none());
    assert_eq!(c.info().pid, std::process::id());
    assert_eq!(st.claim_of(s).unwrap().as_ref(), Some(c.info()));
    let e = st.claim(s).err().unwrap();
    assert!(
        matches!(e.downcast_ref::<ClaimError>(), Some(ClaimError::Held(i)) if i.pid == std::process::id()),
        "{e:#}"
    );
    drop(c);
    assert_eq!(st.claim_of(s).unwrap(), None);
    st.claim(s).unwrap().release().unwrap();
    assert_eq!(st.claim_of(s).unwrap(), None);
}

#[test]
fn a_live_process_keeps_its_claim_and_the_refusal_names_it() {
    let (_d, mut st, s) = study_store();
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let (start, _) = proc_start(child.id()).unwrap();
    put_claim(&st, s, child.id(), &host(), start);
    let msg = format!("{:#}", st.claim(s).err().unwrap());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        msg.starts_with(&format!(
            "study {s} is being run by process {} on host {} since 2024-01-01T00:00:00.000Z; wait for it or stop it",
            child.id(),
            host()
        )),
        "{msg}"
    );
    // Now it is gone: taken over.
    let c = st.claim(s).unwrap();
    assert_eq!(c.taken_over().map(|i| i.pid), Some(child.id()));
}

#[test]
fn the_claim_of_a_dead_or_reused_pid_is_taken_over() {
    let (_d, mut st, s) = study_store();
    let dead = dead_pid();
    put_claim(&st, s, dead, &host(), 12345);
    let c = st.claim(s).unwrap();
    assert_eq!(c.taken_over().map(|i| i.pid), Some(dead));
    assert_eq!(st.claim_of(s).unwrap().unwrap().pid, std::process::id());
    drop(c);
    // Our own pid, but with another start time: an earlier process that had this pid.
    let (mine, _) = proc_start(std::process::id()).unwrap();
    put_claim(&st, s, std::process::id(), &host(), mine + 1);
    let c = st.claim(s).unwrap();
    assert_eq!(c.taken_over().map(|i| i.start_time), Some(mine + 1));
    assert_eq!(c.info().start_time, mine);
}

#[test]
fn a_claim_from_another_host_is_refused_naming_the_host() {
    let (_d, mut st, s) = study_store();
    put_claim(&st, s, 4242, "elsewhere.example", 7);
    let e = st.claim(s).err().unwrap();
    assert!(matches!(
        e.downcast_ref::<ClaimError>(),
        Some(ClaimError::OtherHost { .. })
    ));
    let msg = format!("{e:#}");
    assert!(
        msg.contains("process 4242 on host elsewhere.example") && msg.contains("DELETE FROM claim"),
        "{msg}"
    );
    assert_eq!(st.claim_of(s).unwrap().unwrap().host, "elsewhere.example");
}

#[test]
fn dropping_a_claim_removes_only_its_own_row() {
    let (_d, mut st, s) = study_store();
    let c = st.claim(s).unwrap();
    // Someone else's row replaced ours meanwhile: ours must not delete theirs.
    put_claim(&st, s, 4242, "elsewhere.example", 7);
    drop(c);
    assert_eq!(st.claim_of(s).unwrap().unwrap().pid, 4242);
}

#[test]
fn runs_can_be_claimed_and_unfinished_runs_are_listed_with_their_claims() {
    let (_d, mut st) = file_store();
    let run = |st: &Store| {
        st.begin_study(&NewStudy::named(
            crate::vocab::StudyKind::Run,
            "fdtree",
            "fslab fdtree",
        ))
        .unwrap()
    };
    let (a, b, done) = (run(&st), run(&st), run(&st));
    st.set_study_status(done, StudyStatus::Complete).unwrap();
    let dead = dead_pid();
    put_claim(&st, b, dead, &host(), 1);
    let c = st.claim(a).unwrap();
    let list = st.unfinished_runs().unwrap();
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(list[0], (a, Some(c.info().clone())));
    assert_eq!(list[0].1.as_ref().unwrap().is_alive(), Some(true));
    assert_eq!(list[1].0, b);
    assert_eq!(list[1].1.as_ref().unwrap().is_alive(), Some(false));
    drop(c);
    assert_eq!(st.unfinished_runs().unwrap()[0], (a, None));
    assert!(matches!(
        st.claim(9999).err().unwrap().downcast_ref::<ClaimError>(),
        Some(ClaimError::NoStudy(9999))
    ));
}

#[test]
fn an_in_memory_store_releases_its_claims_too() {
    let (mut st, s, _, _) = sample();
    drop(st.claim(s).unwrap());
    assert_eq!(st.claim_of(s).unwrap(), None);
    // Deleting the study deletes its claim.
    let c = st.claim(s).unwrap();
    st.delete_study(s).unwrap();
    assert!(st.claim_of(s).unwrap().is_none());
    drop(c);
}
