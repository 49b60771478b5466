//! What killed engine runs and studies left in the results store and in their targets, for
//! `fslab cleanup`.
//!
//! A run or study that is still `running` in the store but whose claim belongs to a process
//! that is gone (see `store::claim`) was killed. Its claim is taken over, the entries its
//! repetitions recorded before making them (`owned_path`) are removed if they are provably
//! fslab's, and it is marked `interrupted`. The proof, per kind:
//!
//! * an fdtree tree: its record beside it (`.fslab-tree.<root>`, see
//!   `workload::fdtree::record`) names it and matches its device and inode; it is then swept
//!   by fdtree's own names, so a user's file inside keeps its directory;
//! * an IOzone file or a dbench or fio directory: a regular file (a real directory) with the
//!   device and inode numbers recorded when it was made, or — killed before that record — one
//!   that came into being (statx birth time) after the run recorded its intent to make it; fio
//!   processes still running in a fio directory are stopped first.
//!
//! Anything else is left in place and named. Live runs and runs claimed on another host are
//! left alone.

use crate::store::{ClaimInfo, OwnedKind, OwnedPath, OwnedState, Store, StudyStatus};
use crate::workload::fdtree::{record, sweep};
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

/// Seconds of slack between the recorded intent and a birth time (clock granularity).
const BIRTH_SLACK_SECS: i64 = 2;

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
        .map_or_else(|| "run".to_string(), |s| s.kind);
    // Its cells and series were cut short too: a study's go back to pending (what --resume
    // continues), a run's fail (a run is not resumed).
    st.end_running_cells(study, kind == "study")?;
    st.set_study_status(study, StudyStatus::Interrupted)?;
    rep.actions.push(format!(
        "{kind} {study}: marked interrupted (process {} on {} was killed)",
        dead.pid, dead.host
    ));
    claim.release()
}

/// Remove one recorded entry if it is provably fslab's. `Ok(None)`: already gone.
fn remove_owned(o: &OwnedPath) -> std::result::Result<Option<String>, String> {
    let md = match std::fs::symlink_metadata(&o.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if o.kind == OwnedKind::FdtreeTree {
                remove_stale_record(&o.path);
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
    match o.kind {
        OwnedKind::FdtreeTree => {
            let (parent, name) = split(&o.path)?;
            let rec = record::verify(parent, &name).map_err(|e| format!("{e:#}"))?;
            let swept = sweep::sweep_tree(parent, &name, &rec.shape())
                .map_err(|e| e.to_string())?
                .into_result(&o.path)
                .map_err(|e| format!("{e:#}"))?;
            record::remove(parent, &name).map_err(|e| format!("{e:#}"))?;
            Ok(Some(format!(
                "fdtree tree {shown} ({} files, {} directories)",
                swept.files, swept.dirs
            )))
        }
        // A regular file and a real directory respectively, made by the run.
        OwnedKind::IozoneFile | OwnedKind::DbenchDir | OwnedKind::FioDir => {
            let file = o.kind == OwnedKind::IozoneFile;
            if file != md.file_type().is_file() || (!file && !md.file_type().is_dir()) {
                return Err(if file {
                    "not a regular file"
                } else {
                    "not a directory"
                }
                .into());
            }
            made_after_intent(o)?;
            let stopped = if o.kind == OwnedKind::FioDir {
                stop_fio_in(&o.path)
            } else {
                0
            };
            let removed = if file {
                std::fs::remove_file(&o.path)
            } else {
                std::fs::remove_dir_all(&o.path)
            };
            removed.map_err(|e| e.to_string())?;
            Ok(Some(match o.kind {
                OwnedKind::IozoneFile => format!("IOzone test file {shown}"),
                OwnedKind::FioDir if stopped > 0 => {
                    format!("fio directory {shown} (stopped {stopped} fio process(es) still running in it)")
                }
                OwnedKind::FioDir => format!("fio directory {shown}"),
                _ => format!("dbench client tree {shown}"),
            }))
        }
    }
}

/// Stop the fio processes a killed run left running in its directory `dir`: those whose
/// command line has exactly the argument fslab gave fio, `--directory=<dir>`. fio stops
/// with fslab (a parent-death SIGTERM), but a job process it forked can outlive its main
/// process (for one, when that dies writing to the closed pipe of fslab); it is killed
/// (SIGKILL) before its directory is removed. Returns how many were stopped.
fn stop_fio_in(dir: &Path) -> usize {
    let arg = format!("--directory={}", dir.display());
    let running = || -> Vec<i32> {
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        procs
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                    let mut args = c.split(|b| *b == 0);
                    let is_fio = args.next().is_some_and(|a0| a0.ends_with(b"fio"));
                    is_fio && args.any(|a| a == arg.as_bytes())
                })
            })
            .collect()
    };
    let pids = running();
    for &pid in &pids {
        // SAFETY: kill(2) with a pid read from /proc and a valid signal number.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    // SIGKILL is not instant: wait (up to 5 s) until they are gone, so nothing writes into
    // the directory while it is removed.
    let t = std::time::Instant::now();
    while !running().is_empty() && t.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    pids.len()
}

fn split(p: &Path) -> std::result::Result<(&Path, String), String> {
    match (p.parent(), p.file_name()) {
        (Some(d), Some(n)) => Ok((d, n.to_string_lossy().into_owned())),
        _ => Err("not a path inside a directory".into()),
    }
}

/// The record of a tree that is gone is removed too, if it is fslab's record of that tree.
fn remove_stale_record(root: &Path) {
    if let Ok((parent, name)) = split(root) {
        if let Ok(Some(_)) = record::read(parent, &name) {
            let _ = record::remove(parent, &name);
        }
    }
}

/// An entry whose device and inode were never recorded (the run was killed first) counts as
/// the run's only if it came into being after the run recorded its intent to make it.
fn made_after_intent(o: &OwnedPath) -> std::result::Result<(), String> {
    if o.dev.is_some() && o.ino.is_some() {
        return Ok(());
    }
    let intent = chrono::DateTime::parse_from_rfc3339(&o.created_at)
        .map_err(|e| format!("unreadable record time '{}': {e}", o.created_at))?
        .timestamp();
    let st = rustix::fs::statx(
        rustix::fs::CWD,
        &o.path,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        rustix::fs::StatxFlags::BTIME,
    )
    .map_err(|e| e.to_string())?;
    if st.stx_mask & rustix::fs::StatxFlags::BTIME.bits() == 0 {
        return Err(
            "the file system does not say when it was made, so fslab cannot prove it made it"
                .into(),
        );
    }
    if st.stx_btime.tv_sec + BIRTH_SLACK_SECS < intent {
        return Err("it existed before the run started".into());
    }
    Ok(())
}
