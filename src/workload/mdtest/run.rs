//! A whole mdtest run on one rank: the `-d` directory, every iteration on the real file
//! system (or the null backend), records of what it made, and the sweep of a failed
//! iteration's test directory — only what this run made or proved to be fslab's, and only
//! when the run makes or removes test directories.

use super::engine::Engine;
use super::layout::{test_dir, Layout};
use super::params::MdtestParams;
use super::record::{FsKeeper, Keeper, NoRecords, Shape};
use super::result::Iteration;
use super::sweep::sweep_testdir;
use super::team::Team;
use crate::workload::fsops::{FsOps, NullOps};
use crate::workload::{Observer, Requirements};
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// Where the operations go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The real file system.
    Fs,
    /// No system calls: fslab's own cost per operation.
    Null,
}

/// How a run behaves besides mdtest's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Real file system or null backend.
    pub backend: Backend,
    /// Keep a failed iteration's partial test directory instead of sweeping it.
    pub keep: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            backend: Backend::Fs,
            keep: false,
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Every iteration, in order.
    pub iterations: Vec<Iteration>,
    /// The random order's seed (rank 0's), when `-R`.
    pub seed: Option<u32>,
    /// The run made `-d` (and removed it again if it ended empty).
    pub made_dir: bool,
    /// Things the user should know (a `-d` left because it is not empty, …).
    pub notes: Vec<String>,
}

/// Bytes and inodes one rank's share of a run needs at its peak (tree directories, items,
/// the test directory), on a file system that holds `ranks` ranks' shares.
pub fn requirements(p: &MdtestParams, lay: &Layout, ranks: u32) -> Requirements {
    let r = u64::from(ranks.max(1));
    let trees = if p.unique_dir { r } else { 1 };
    let dirs_items = if p.does_dirs() { lay.items } else { 0 };
    let file_items = if p.does_files() { lay.items } else { 0 };
    let inodes = (lay.dirs.saturating_mul(trees) + 1)
        .saturating_add((dirs_items + file_items).saturating_mul(r));
    // A directory takes at least a block of its own on block file systems.
    let dir_bytes =
        (lay.dirs.saturating_mul(trees) + 1 + dirs_items.saturating_mul(r)).saturating_mul(4096);
    let data = file_items
        .saturating_mul(p.write_bytes.div_ceil(4096) * 4096)
        .saturating_mul(r);
    Requirements {
        bytes: dir_bytes.saturating_add(data),
        inodes,
    }
}

/// The random order's seed: `--random-seed`, else the clock at rank 0 (as mdtest).
fn seed<T: Team + ?Sized>(p: &MdtestParams, team: &T) -> Option<u32> {
    if !p.random_order() {
        return None;
    }
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs() as u32)
        .max(1);
    let mine = p.random_seed.filter(|&s| s > 0).unwrap_or(clock);
    Some(team.broadcast(u64::from(mine)) as u32)
}

/// Make `dir` if it does not exist (one level, as mdtest); true when this call made it.
fn prepare_dir(dir: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(dir) {
        Ok(_) => {
            crate::workload::check_writable_dir(dir, "-d")?;
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir(dir).map_err(|e| {
                crate::error::usage(format!(
                    "cannot create -d {}: {e}; create its parent or choose another directory",
                    dir.display()
                ))
            })?;
            Ok(true)
        }
        Err(e) => Err(e).with_context(|| format!("cannot use -d {}", dir.display())),
    }
}

/// Run every iteration of `p` in `dir` on this rank of `team`.
pub fn run<T: Team + ?Sized>(
    p: &MdtestParams,
    dir: &Path,
    team: &T,
    opts: Options,
    obs: &dyn Observer,
    stop: &dyn Fn() -> bool,
) -> Result<Outcome> {
    let lay = p.validate()?;
    let seed = seed(p, team);
    let mut out = Outcome {
        iterations: Vec::new(),
        seed,
        made_dir: false,
        notes: Vec::new(),
    };
    if opts.backend == Backend::Null {
        let mut keeper = NoRecords::default();
        let mut engine = Engine::new(p, lay, team, NullOps, &mut keeper, obs, stop, seed);
        for j in 0..p.iterations {
            out.iterations.push(engine.iteration(&(), j)?);
        }
        return Ok(out);
    }
    let rank0 = team.rank() == 0;
    let made = if rank0 {
        prepare_dir(dir).and_then(|m| {
            if !p.steps().create {
                return Ok(m);
            }
            let need = requirements(p, &lay, team.size());
            crate::workload::check_fits(dir, need, "this mdtest run").map(|()| m)
        })
    } else {
        Ok(false)
    };
    out.made_dir = made.as_ref().is_ok_and(|m| *m);
    team.agree(made.map(|_| ()))?;
    let base = FsOps::open_path(dir).map_err(|e| anyhow!("cannot open -d {}: {e}", dir.display()));
    team.agree(base.as_ref().map(|_| ()).map_err(|e| anyhow!("{e}")))?;
    let base = base?;
    let shape = Shape::new(p, lay, team.size());
    let mut keeper = FsKeeper::new(dir, shape);
    let ops = FsOps::with_buffers(p.write_bytes, p.read_bytes);
    let mut engine = Engine::new(p, lay, team, ops, &mut keeper, obs, stop, seed);
    let steps = p.steps();
    for j in 0..p.iterations {
        match engine.iteration(&base, j) {
            Ok(it) => out.iterations.push(it),
            Err(e) => {
                drop(engine);
                // Every rank stops touching the test directory before rank 0 sweeps it.
                team.barrier();
                let td = test_dir(j);
                let ours = keeper.owned().contains(&td);
                if rank0 && ours && !opts.keep && (steps.create || steps.remove) {
                    if let Err(s) = sweep(dir, &td, &shape) {
                        return Err(e.context(format!("{s:#}")));
                    }
                    if out.made_dir {
                        // Made by this run and now empty, or else left in place by rmdir.
                        let _ = std::fs::remove_dir(dir);
                    }
                }
                return Err(e);
            }
        }
    }
    if rank0 && out.made_dir && steps.remove {
        if let Err(e) = std::fs::remove_dir(dir) {
            out.notes.push(format!(
                "left -d {} in place: {e} (something else was put in it)",
                dir.display()
            ));
        }
    }
    team.barrier();
    Ok(out)
}

/// Sweep test directory `td` in `dir` and remove its record when it is gone.
fn sweep(dir: &Path, td: &str, shape: &Shape) -> Result<()> {
    let swept = sweep_testdir(dir, td, shape)
        .map_err(|e| anyhow!("could not remove partial test directory {td}: {e}"))?;
    swept.into_result(&dir.join(td))?;
    match std::fs::remove_file(super::record::path(dir, td)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow!("cannot remove the record of {td}: {e}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
