//! A whole mdtest run on one rank ([`Session`]): the `-d` directory, every
//! iteration on the real file system (or the null backend), records of what it made, and the
//! sweep of a failed iteration's test directory — only what this run made or proved to be
//! fslab's, and only when the run makes or removes test directories.

use super::engine::Engine;
use super::layout::{test_dir, Layout};
use super::params::MdtestParams;
use super::record::{Keeper, Shape};
use super::result::Iteration;
use super::sweep::sweep_testdir;
use super::team::Team;
use crate::workload::fsops::{FsOps, NullOps};
use crate::workload::{Observer, Requirements};
use anyhow::{anyhow, Context, Result};
use std::path::{Path, PathBuf};

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
    /// The caller made `-d` for this run (an MPI job makes it on rank 0 before the session
    /// opens, so that every rank can check it sees the same directory): it is removed at the
    /// end like one the session made.
    pub made_dir: bool,
    /// `-d a@b@…`: how many directories the ranks share out (rank `r` works in directory
    /// `r mod dirs`, and ranks below `dirs` make and remove the test directories there, as
    /// mdtest's); 1 for one `-d`.
    pub dirs: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            backend: Backend::Fs,
            keep: false,
            made_dir: false,
            dirs: 1,
        }
    }
}

impl Options {
    /// Rank `rank` makes and removes the test directories in its `-d`.
    fn leads(&self, rank: u32) -> bool {
        rank < self.dirs.max(1)
    }

    /// How many of `size` ranks work in the directory of `rank`.
    fn ranks_in_dir(&self, rank: u32, size: u32) -> u32 {
        let n = self.dirs.clamp(1, size.max(1));
        let k = rank % n;
        (size.max(1) - k).div_ceil(n)
    }
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

/// Bytes of file data the run writes at its peak: `-w` bytes in each of the files of
/// `ranks` ranks (none with `-D` or `-w 0`; directories are not data).
pub fn data_bytes(p: &MdtestParams, lay: &Layout, ranks: u32) -> u64 {
    if !p.does_files() {
        return 0;
    }
    lay.items
        .saturating_mul(p.write_bytes)
        .saturating_mul(u64::from(ranks.max(1)))
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

/// `-d` with `dirs` directories for `ranks` ranks: refused when there are more directories
/// than ranks (mdtest's rule).
pub fn check_dirs(dirs: u32, ranks: u32) -> Result<()> {
    if dirs > ranks {
        crate::bail_usage!(
            "-d: {dirs} directories for {ranks} ranks; mdtest needs at least as many ranks as directories (rank r works in directory r mod {dirs}): run more ranks or give fewer directories"
        );
    }
    Ok(())
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

/// A run in progress on one rank: `-d` prepared, records kept, iterations run one by one.
/// It holds no descriptor between iterations, so a study may remount the file system
/// between repetitions.
pub struct Session {
    p: MdtestParams,
    lay: Layout,
    shape: Shape,
    dir: PathBuf,
    opts: Options,
    keeper: Keeper,
    seed: Option<u32>,
    /// This session made `-d`.
    pub made_dir: bool,
}

impl Session {
    /// Validate `p`, make `dir` (this rank's `-d`) if it is missing (by the first rank of
    /// each directory, one level, as mdtest), check that the run fits, and agree on the
    /// random order's seed. Collective.
    pub fn open<T: Team + ?Sized>(
        p: &MdtestParams,
        dir: &Path,
        team: &T,
        opts: Options,
    ) -> Result<Session> {
        let lay = p.validate()?;
        check_dirs(opts.dirs, team.size())?;
        let seed = seed(p, team);
        let shape = Shape::new(p, lay, team.size());
        let mut made_dir = false;
        let keeper = match opts.backend {
            Backend::Null => Keeper::default(),
            Backend::Fs => {
                let made = if opts.leads(team.rank()) {
                    prepare_dir(dir).and_then(|m| {
                        if !p.steps().create {
                            return Ok(m);
                        }
                        let here = opts.ranks_in_dir(team.rank(), team.size());
                        let need = requirements(p, &lay, here);
                        crate::workload::check_fits(dir, need, "this mdtest run").map(|()| m)
                    })
                } else {
                    Ok(false)
                };
                made_dir = opts.made_dir || made.as_ref().is_ok_and(|m| *m);
                team.agree(made.map(|_| ()))?;
                Keeper::new(dir, shape)
            }
        };
        Ok(Session {
            p: p.clone(),
            lay,
            shape,
            dir: dir.to_path_buf(),
            opts,
            keeper,
            seed,
            made_dir,
        })
    }

    /// The random order's seed (rank 0's), when `-R`.
    pub fn seed(&self) -> Option<u32> {
        self.seed
    }

    /// Run iteration `j` (test directory `test-dir.<j>-0`). Collective. A failed or
    /// interrupted iteration that made or was removing its test directory has it swept
    /// (unless `keep`); the error says what the sweep left.
    pub fn iteration<T: Team + ?Sized>(
        &mut self,
        j: u32,
        team: &T,
        obs: &dyn Observer,
        stop: &dyn Fn() -> bool,
    ) -> Result<Iteration> {
        let (p, lay, seed) = (&self.p, self.lay, self.seed);
        if self.opts.backend == Backend::Null {
            let keeper = &mut self.keeper;
            return Engine::new(p, lay, team, NullOps, keeper, obs, stop, seed).iteration(&(), j);
        }
        // No timed phase pays for running a page of fslab's code for the first time.
        crate::workload::warm::map_own_code();
        let base = FsOps::open_path(&self.dir)
            .map_err(|e| anyhow!("cannot open -d {}: {e}", self.dir.display()));
        team.agree(base.as_ref().map(|_| ()).map_err(|e| anyhow!("{e}")))?;
        let base = base?;
        let ops = FsOps::with_buffers(p.write_bytes, p.read_bytes)
            .direct(p.odirect)
            .mknod(p.mknod);
        let keeper = &mut self.keeper;
        let r = Engine::new(p, lay, team, ops, keeper, obs, stop, seed)
            .leading(self.opts.leads(team.rank()))
            .iteration(&base, j);
        drop(base);
        let Err(e) = r else {
            return r;
        };
        // Every rank stops touching the test directory before rank 0 sweeps it.
        team.barrier();
        let td = test_dir(j);
        let steps = p.steps();
        let ours = self.keeper.owned().contains(&td);
        let leads = self.opts.leads(team.rank());
        if leads && ours && !self.opts.keep && (steps.create || steps.remove) {
            if let Err(s) = sweep(&self.dir, &td, &self.shape) {
                return Err(e.context(format!("{s:#}")));
            }
            if self.made_dir {
                // Made by this run and now empty, or else left in place by rmdir.
                let _ = std::fs::remove_dir(&self.dir);
            }
        }
        Err(e)
    }

    /// End the run: remove `-d` if this run made it and removed what it put there.
    /// Returns notes for the user. Collective.
    pub fn close<T: Team + ?Sized>(self, team: &T) -> Vec<String> {
        let mut notes = Vec::new();
        if self.opts.leads(team.rank()) && self.made_dir && self.p.steps().remove {
            if let Err(e) = std::fs::remove_dir(&self.dir) {
                notes.push(format!(
                    "left -d {} in place: {e} (something else was put in it)",
                    self.dir.display()
                ));
            }
        }
        team.barrier();
        notes
    }
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
