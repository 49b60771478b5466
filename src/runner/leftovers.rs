//! What killed engine runs and studies left in the results store and in their targets, for
//! `fslab cleanup`.
//!
//! A run or study that is still `running` in the store but whose claim belongs to a process
//! that is gone (see `store::claim`) was killed. Its claim is taken over, the entries its
//! repetitions recorded before making them (`owned_path`) are removed if they are provably
//! fslab's, and it is marked `interrupted`. The proof, per kind of entry:
//!
//! * a tree (fdtree's, for one): the engine's record beside it names it and matches its
//!   device and inode; it is then swept by the engine's own names, so a user's file inside
//!   keeps its directory (the engine's [`crate::workload::TreeOps`]);
//! * a file (IOzone's) or a directory (dbench's, fio's): a regular file (a real directory) with the
//!   device and inode numbers recorded when it was made, or — killed in the milliseconds
//!   before that record — one that came into being (statx birth time) within
//!   [`CREATE_WINDOW`] of the run's intent to make it; removed through its open parent,
//!   never across a mount inside it. Before any of it, the fio processes the killed process
//!   left (its owner mark, `safe::procs`) are stopped — never a live run's.
//!
//! Anything else is left in place and named. Live runs and runs claimed on another host are
//! left alone.

use crate::safe::beneath;
use crate::store::{ClaimInfo, OwnedPath, OwnedState, Store, StudyStatus};
use crate::vocab::EntryKind;
use crate::workload::WorkloadKind;
use anyhow::Result;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What the clean-up of killed runs did.
#[derive(Debug, Default)]
pub struct Report {
    /// Things removed or marked, one line each.
    pub actions: Vec<String>,
    /// Runs left alone because they are alive (or cannot be checked from here).
    pub alive: Vec<String>,
    /// Entries left in place because fslab cannot prove they are its own.
    pub kept: Vec<String>,
}

/// How long after its recorded intent a run may make an entry and still have it taken for
/// its own without a recorded device and inode (see [`made_in_window`]).
pub use crate::safe::beneath::CREATE_WINDOW;

/// Clean up after every killed run in `st`.
pub fn clean_killed_runs(st: &mut Store) -> Result<Report> {
    let mut rep = Report::default();
    for (study, claim) in st.unfinished_runs()? {
        match claim.as_ref().map(|c| (c, c.is_alive())) {
            None => rep.alive.push(format!(
                "study/run {study} is marked running but carries no claim (started by an older fslab?); nothing of it was touched"
            )),
            Some((c, Some(true))) => rep.alive.push(format!(
                "study/run {study} is running (process {} since {})",
                c.pid, c.claimed_at
            )),
            Some((c, None)) => rep.alive.push(format!(
                "study/run {study} is claimed by process {} on host {}, which cannot be checked from here",
                c.pid, c.host
            )),
            Some((c, Some(false))) => clean_one(st, study, c, &mut rep)?,
        }
    }
    Ok(rep)
}

fn clean_one(st: &mut Store, study: i64, dead: &ClaimInfo, rep: &mut Report) -> Result<()> {
    // Taking the claim over keeps a concurrent `fslab cleanup` or resume out meanwhile.
    let claim = st.claim(study)?;
    // fio ran in a cage that dies with its fslab; whatever of it still runs (a race with
    // the kill) carries the dead process's owner mark, and only that is stopped: never a
    // live run's fio.
    let mark = crate::safe::procs::owner_mark(dead.pid, dead.start_time);
    match crate::safe::procs::stop_caged(&mark) {
        Ok(0) => {}
        Ok(n) => rep.actions.push(format!(
            "run {study}: stopped {n} fio process(es) the killed process left running"
        )),
        Err(e) => {
            rep.kept.push(format!("run {study}: {e}"));
            return claim.release();
        }
    }
    for o in st.owned_paths(study)? {
        if o.state == OwnedState::Removed {
            continue;
        }
        match remove_owned(&o) {
            Ok(Some(what)) => {
                st.set_owned_removed(o.id)?;
                rep.actions.push(format!("run {study}: removed {what}"));
            }
            Ok(None) => st.set_owned_removed(o.id)?,
            Err(why) => rep
                .kept
                .push(format!("run {study}: left {}: {why}", o.path.display())),
        }
    }
    let kind = st
        .study(study)?
        .map_or(crate::vocab::StudyKind::Run, |s| s.kind);
    // Its cells and series were cut short too: a study's go back to pending (what --resume
    // continues), a run's fail (a run is not resumed).
    st.end_running_cells(study, kind == crate::vocab::StudyKind::Study)?;
    st.set_study_status(study, StudyStatus::Interrupted)?;
    rep.actions.push(format!(
        "{kind} {study}: marked interrupted (process {} on {} was killed)",
        dead.pid, dead.host
    ));
    claim.release()
}

/// Remove one recorded entry if it is provably fslab's. `Ok(None)`: already gone.
fn remove_owned(o: &OwnedPath) -> std::result::Result<Option<String>, String> {
    let engine = WorkloadKind::of(&o.kind.engine).ok_or_else(|| {
        format!(
            "made by an engine this fslab does not know ({})",
            o.kind.engine
        )
    })?;
    let md = match std::fs::symlink_metadata(&o.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let (EntryKind::Tree, Some(ops), Ok((parent, name))) =
                (o.kind.entry, engine.caps().tree, split(&o.path))
            {
                (ops.forget)(parent, &name);
            }
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    };
    if let (Some(dev), Some(ino)) = (o.dev, o.ino) {
        if md.dev() != dev || md.ino() != ino {
            return Err("not the entry the run made (its inode differs from the record)".into());
        }
    }
    let shown = o.path.display();
    let (parent, name) = split(&o.path)?;
    if o.kind.entry == EntryKind::Tree {
        // The engine's own record beside the tree proves it, and its own names sweep it.
        let ops = engine.caps().tree.ok_or_else(|| {
            format!("{engine} makes no trees, yet one is recorded; left in place")
        })?;
        return (ops.remove)(parent, &name).map(Some);
    }
    // A regular file and a real directory respectively, made by the run: removed through its
    // open parent, only that very entry, never across a mount inside it.
    let dir = rustix::fs::open(
        parent,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| format!("cannot open {}: {e}", parent.display()))?;
    let name = std::ffi::OsString::from(name);
    let expect = match (o.dev, o.ino) {
        (Some(dev), Some(ino)) => Some(beneath::Ident { dev, ino }),
        _ => {
            made_in_window(o, &dir, &name)?;
            None
        }
    };
    let kind = match o.kind.entry {
        EntryKind::File => beneath::Kind::File,
        _ => beneath::Kind::Tree,
    };
    beneath::remove_at(std::os::fd::AsFd::as_fd(&dir), &name, kind, expect)?;
    let (title, what) = engine.caps().entry_words;
    Ok(Some(format!("{title} {what} {shown}")))
}

fn split(p: &Path) -> std::result::Result<(&Path, String), String> {
    match (p.parent(), p.file_name()) {
        (Some(d), Some(n)) => Ok((d, n.to_string_lossy().into_owned())),
        _ => Err("not a path inside a directory".into()),
    }
}

/// An entry whose device and inode were never recorded (the run was killed within the few
/// milliseconds between making it and the watcher recording it, see `runner::adhoc`) counts
/// as the run's only if it came into being (statx birth time) no earlier than the run's
/// record of its intent and no later than [`CREATE_WINDOW`] after it: whatever is made at
/// the path after that — after the run ended — is someone else's.
fn made_in_window(
    o: &OwnedPath,
    dir: &rustix::fd::OwnedFd,
    name: &std::ffi::OsStr,
) -> std::result::Result<(), String> {
    let intent = chrono::DateTime::parse_from_rfc3339(&o.created_at)
        .map_err(|e| format!("unreadable record time '{}': {e}", o.created_at))?
        .timestamp_nanos_opt()
        .ok_or("record time out of range")?;
    beneath::born_after_intent(std::os::fd::AsFd::as_fd(dir), name, i128::from(intent))
}
