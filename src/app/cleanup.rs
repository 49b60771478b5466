//! `fslab cleanup`: remove what killed runs left — mounts, loop devices and images of
//! studies in the work directory, and the files of killed engine runs recorded in the
//! results store — and mark those runs `interrupted`.

use crate::cli::CleanupArgs;
use crate::provision::exec::RealExec;
use crate::provision::state::{self, WorkDir};
use crate::runner::leftovers;
use crate::store::Store;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// Run `fslab cleanup`.
pub fn run(a: CleanupArgs, db: Option<PathBuf>) -> Result<()> {
    let mut problems = Vec::new();
    let mut did_something = false;

    // The store: killed engine runs and studies (no root needed for a user's own files).
    let path = db.unwrap_or_else(crate::store::default_path);
    if path.exists() {
        let mut store = Store::open(&path)?;
        let rep = leftovers::clean_killed_runs(&mut store)?;
        did_something |= say(&rep.actions, &rep.alive);
        for l in &rep.kept {
            crate::outln!("left in place: {l}");
        }
        problems.extend(rep.kept);
    }

    // The work directory: what killed study runs provisioned.
    let work = WorkDir::new(a.workdir.unwrap_or_else(state::default_workdir));
    if !work.run_dirs().is_empty() {
        if !crate::sysinfo::is_root() {
            crate::bail_usage!(
                "{} holds runs to clean up (mounts and loop devices need root); run `fslab cleanup` as root",
                work.root().display()
            );
        }
        let rep = state::cleanup(&work, &RealExec, Duration::from_secs(10));
        did_something |= say(&rep.actions, &rep.alive);
        problems.extend(rep.errors);
        // A killed study recorded in another results database than this command's (run
        // with another --db): mark it there too.
        let here = std::fs::canonicalize(&path).ok();
        let others: std::collections::BTreeSet<PathBuf> = rep
            .studies
            .into_iter()
            .filter_map(|(_, db)| db)
            .filter(|db| db.exists() && std::fs::canonicalize(db).ok() != here)
            .collect();
        for db in others {
            let mut store = Store::open(&db)?;
            let rep = leftovers::clean_killed_runs(&mut store)?;
            did_something |= say(&rep.actions, &[]);
            problems.extend(rep.kept);
        }
    }
    // Images a killed host left for its User-mode Linux guest.
    let (done, left) = crate::runner::guest::clean_killed_guests(work.root());
    did_something |= say(&done, &[]);
    problems.extend(left);
    if !problems.is_empty() {
        crate::bail_usage!("could not remove everything: {}", problems.join("; "));
    }
    if !did_something {
        crate::outln!(
            "nothing to clean in {} or {}",
            work.root().display(),
            path.display()
        );
    }
    Ok(())
}

/// Print what was done and what was left alone; whether there was anything to say.
fn say(actions: &[String], alive: &[String]) -> bool {
    for a in actions {
        crate::outln!("{a}");
    }
    for a in alive {
        crate::outln!("left alone: {a}");
    }
    !actions.is_empty() || !alive.is_empty()
}
