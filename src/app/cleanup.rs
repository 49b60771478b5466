//! `fslab cleanup`: remove what killed study runs left in the work directory.

use crate::cli::CleanupArgs;
use crate::provision::exec::RealExec;
use crate::provision::state::{self, WorkDir};
use anyhow::Result;
use std::time::Duration;

/// Run `fslab cleanup`.
pub fn run(a: CleanupArgs) -> Result<()> {
    let work = WorkDir::new(a.workdir.unwrap_or_else(state::default_workdir));
    if work.run_dirs().is_empty() {
        crate::outln!("nothing to clean in {}", work.root().display());
        return Ok(());
    }
    if !crate::sysinfo::is_root() {
        crate::bail_usage!(
            "{} holds runs to clean up (mounts and loop devices need root); run `fslab cleanup` as root",
            work.root().display()
        );
    }
    let rep = state::cleanup(&work, &RealExec, Duration::from_secs(10));
    for a in &rep.actions {
        crate::outln!("{a}");
    }
    for a in &rep.alive {
        crate::outln!("left alone: {a}");
    }
    if !rep.errors.is_empty() {
        crate::bail_usage!("could not remove everything: {}", rep.errors.join("; "));
    }
    if rep.actions.is_empty() && rep.alive.is_empty() {
        crate::outln!("nothing to clean in {}", work.root().display());
    }
    Ok(())
}
