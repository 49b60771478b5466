//! One mdtest iteration on one rank, generic over the operations ([`Ops`]), the ranks
//! ([`Team`]) and the bookkeeping of what the run made ([`Keeper`]).
//!
//! Sequence (as `mdtest.c`): make `test-dir.<j>-0` (rank 0, untimed); Tree creation; then,
//! for directory items, Directory creation, stat, rename, removal; then, for file items,
//! File creation (with the stonewall), stat, read, removal; Tree removal; remove the test
//! directory (rank 0, untimed). Every phase runs between a barrier and a collective verdict
//! ([`Team::agree`]); a rank's time is from the opening barrier to the closing verdict, and
//! the phase's time is the longest of the ranks' (the first start to the last end, without
//! needing the ranks' clocks to agree). Its rate is the items of all ranks over that time.

use super::layout::{test_dir, ItemKind, Layout, Roles, Shift, Tree};
use super::params::MdtestParams;
use super::record::Keeper;
use super::result::{Iteration, Phase, PhaseResult, Stonewall};
use super::team::Team;
use super::walk::{ItemOp, Items, Pace, Probe, WalkError, WalkResult, Walker};
use crate::workload::fsops::{CreateHow, Ops};
use crate::workload::Observer;
use anyhow::{anyhow, Context, Result};
use std::ffi::CString;
use std::time::{Duration, Instant};

/// One phase's local figures before they are combined.
#[derive(Debug, Default, Clone, Copy)]
struct Sample {
    items: u64,
    nanos: u64,
    wall: Option<(u64, u64)>,
}

/// Runs iterations on one rank.
pub struct Engine<'a, O: Ops, T: Team + ?Sized> {
    params: &'a MdtestParams,
    lay: Layout,
    team: &'a T,
    walker: Walker<'a, O>,
    keeper: &'a mut Keeper,
    obs: &'a dyn Observer,
    /// `-R`: this rank's shuffled item indices (0..items).
    order: Option<Vec<u64>>,
    samples: [Sample; Phase::ALL.len()],
    ran: Vec<Phase>,
    /// `-W` as a duration (tests set a shorter one).
    wall: Option<Duration>,
    /// This rank makes, checks and removes the test directory in its `-d` (rank 0; with
    /// `-d a@b` the first rank of each directory).
    leader: bool,
    /// The current iteration's test directory (`test-dir.<j>-0`), for errors.
    td: String,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Fisher–Yates shuffle of `0..n` with MT19937 seeded by `seed` (deterministic).
pub fn shuffled(n: u64, seed: u32) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut mt = rand_mt::Mt::new(seed);
    for i in (1..v.len()).rev() {
        let k = (mt.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, k);
    }
    v
}

impl<'a, O: Ops, T: Team + ?Sized> Engine<'a, O, T> {
    /// An engine for validated parameters and their layout. `seed` is the random order's
    /// seed for rank 0 (each rank adds its rank, as mdtest); `None` keeps the numeric order.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        params: &'a MdtestParams,
        lay: Layout,
        team: &'a T,
        ops: O,
        keeper: &'a mut Keeper,
        obs: &'a dyn Observer,
        stop: &'a dyn Fn() -> bool,
        seed: Option<u32>,
    ) -> Self {
        let report = (team.rank() == 0).then_some(obs);
        let order = seed.map(|s| shuffled(lay.items, s.wrapping_add(team.rank())));
        Engine {
            params,
            lay,
            team,
            walker: Walker::new(ops, lay, Pace::new(stop, report)),
            keeper,
            obs,
            order,
            samples: [Sample::default(); Phase::ALL.len()],
            ran: Vec::new(),
            wall: (params.stonewall > 0).then(|| Duration::from_secs(u64::from(params.stonewall))),
            leader: team.rank() == 0,
            td: String::new(),
        }
    }

    /// With `-d a@b`: whether this rank is the first in its directory, which makes, checks
    /// and removes the test directory there (mdtest's ranks below the number of
    /// directories).
    pub fn leading(mut self, leader: bool) -> Self {
        self.leader = leader;
        self
    }

    /// The operations, once the engine is done (a test reads a recorder's log).
    pub fn into_ops(self) -> O {
        self.walker.ops
    }

    /// Run one timed phase: barrier, `work`, verdict; keep the local sample. `start`, the
    /// directory the walk starts in (the test directory and the node of a tree), is opened
    /// before the clock starts; whatever directory the walk holds last is closed after it
    /// stops.
    fn timed<F>(
        &mut self,
        phase: Phase,
        expect: u64,
        testdir: &O::Dir,
        start: Option<(Tree, u64)>,
        work: F,
    ) -> Result<u64>
    where
        F: FnOnce(&mut Walker<'a, O>, Instant) -> WalkResult<Sample>,
    {
        let rank0 = self.team.rank() == 0;
        if rank0 {
            self.obs.phase_started(phase.as_str(), expect);
        }
        self.walker.pace.restart();
        // `-t -u`: entering the rank's own tree is part of the phase, as mdtest times it.
        let timed_entry = self.params.time_unique_dir && self.params.unique_dir;
        if let Some((tree, node)) = start.filter(|_| !timed_entry) {
            self.walker.hold(testdir, tree, node);
        }
        self.team.barrier();
        let t0 = Instant::now();
        if let Some((tree, node)) = start.filter(|_| timed_entry) {
            self.walker.hold(testdir, tree, node);
        }
        let r = work(&mut self.walker, t0);
        if self.params.sync_phases && r.is_ok() {
            // `-Y`: mdtest syncs after each phase, before its clock stops.
            self.walker.ops.sync();
        }
        let (local, sample) = match r {
            Ok(s) => (Ok(()), s),
            Err(e) => (Err(e.into_error(&self.td)), Sample::default()),
        };
        let verdict = self.team.agree(local);
        let elapsed = nanos(t0.elapsed());
        self.walker.release();
        self.walker.pace.finish();
        if rank0 {
            self.obs.phase_finished(phase.as_str());
        }
        verdict?;
        self.samples[phase.index()] = Sample {
            nanos: elapsed,
            ..sample
        };
        self.ran.push(phase);
        Ok(sample.items)
    }

    /// Run iteration `j` in the directory `base` (mdtest's `-d`).
    pub fn iteration(&mut self, base: &O::Dir, j: u32) -> Result<Iteration> {
        let p = self.params;
        let steps = p.steps();
        let roles = Roles {
            rank: self.team.rank(),
            size: self.team.size(),
            stride: p.stride,
        };
        let rank0 = roles.rank == 0;
        let unique = p.unique_dir;
        let lay = self.lay;
        let td = test_dir(j);
        self.td.clone_from(&td);
        let td_c = CString::new(td.as_str()).context("test directory name")?;
        self.samples = [Sample::default(); Phase::ALL.len()];
        self.ran.clear();

        // The test directory: made by this run, or proven to be an earlier run's.
        let mut file_items = lay.items;
        if steps.create {
            self.by_leader(|me| {
                me.keeper.begin(&td)?;
                if let Err(e) = me.walker.ops.mkdir(base, &td_c) {
                    // Never leave a record for a directory this run did not make.
                    me.keeper.abandon(&td)?;
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        crate::bail_usage!(
                            "{td} already exists in -d (left by an earlier run?); remove it with a remove-only run (-r) if fslab made it, or choose another -d"
                        );
                    }
                    return Err(anyhow!("mkdir {td}: {e}"));
                }
                me.keeper.made(&td)
            })?;
        } else {
            let known = self.leader.then(|| self.keeper.verify(&td));
            let known = known.unwrap_or(Ok(None));
            let n = known.as_ref().ok().copied().flatten().unwrap_or(lay.items);
            self.team.agree(known.map(|_| ()))?;
            file_items = self.team.broadcast(n);
        }
        let opened = self.walker.ops.open_dir(base, &td_c);
        let failed = opened.as_ref().err().map(|e| anyhow!("open {td}: {e}"));
        // Every rank opened it once the ranks agree.
        self.team.agree(failed.map_or(Ok(()), Err))?;
        let testdir = opened?;
        let own_tree = Tree(unique.then_some(roles.rank));
        let builds_tree = unique || rank0;
        let tree_items = if rank0 { lay.dirs } else { 0 };
        // The tree phases: the builders make (or remove) the tree, rank 0 counts it.
        let tree_phase = |me: &mut Self, phase: Phase, top: Option<(Tree, u64)>| {
            me.timed(phase, lay.dirs, &testdir, top, |w, _| {
                if builds_tree {
                    w.tree(&testdir, own_tree, phase == Phase::TreeRemove)?;
                }
                Ok(items(tree_items))
            })
        };

        if steps.create {
            tree_phase(self, Phase::TreeCreate, None)?;
        }
        if p.does_dirs() {
            self.dir_phases(&testdir, roles)?;
        }
        if p.does_files() {
            file_items = self.file_phases(&testdir, roles, file_items)?;
        }
        if steps.remove {
            let top = (builds_tree && lay.depth > 0).then_some((own_tree, 0));
            tree_phase(self, Phase::TreeRemove, top)?;
        }
        drop(testdir);
        self.by_leader(|me| {
            if steps.remove {
                let removed = me.walker.ops.rmdir(base, &td_c);
                removed.map_err(|e| anyhow!("rmdir {td}: {e}"))?;
            }
            me.keeper.finished(&td, file_items, steps.remove)
        })?;
        Ok(self.combine(j))
    }

    /// Run `work` on the leader of the directory alone (the other ranks have nothing to do)
    /// and agree on how it went. Collective.
    fn by_leader(&mut self, work: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let r = if self.leader { work(self) } else { Ok(()) };
        self.team.agree(r)
    }

    /// A phase that does `op` to `who`'s first `n` items in creation order.
    fn preorder_phase(
        &mut self,
        phase: Phase,
        testdir: &O::Dir,
        who: Items,
        op: ItemOp,
        n: u64,
    ) -> Result<u64> {
        // A walk in creation order starts at the top of `who`'s tree.
        self.timed(phase, n, testdir, Some((who.tree, 0)), |w, _| {
            let r = w.items_preorder(testdir, who, op, 0..n, None)?;
            Ok(items(r.done))
        })
    }

    /// A phase that stats or reads (`probe`) `who`'s first `count` items by number, or in
    /// `-R`'s order (its indices below `count`).
    fn probe_phase(
        &mut self,
        phase: Phase,
        testdir: &O::Dir,
        who: Items,
        count: u64,
        probe: Probe,
    ) -> Result<u64> {
        let order = self.order.as_ref().map(|o| {
            o.iter()
                .copied()
                .filter(|&v| v < count)
                .collect::<Vec<u64>>()
        });
        let order = order.as_deref();
        let start = self.walker.probe_start(count, order);
        let start = start.map(|node| (who.tree, node));
        self.timed(phase, count, testdir, start, |w, _| {
            Ok(items(w.probe(testdir, who, count, order, probe)?))
        })
    }

    fn dir_phases(&mut self, testdir: &O::Dir, roles: Roles) -> Result<()> {
        let (steps, unique, n) = (self.params.steps(), self.params.unique_dir, self.lay.items);
        let at = |s: Shift| Items::of(roles, s, unique, ItemKind::Dir);
        if steps.create {
            let who = at(Shift::Create);
            self.preorder_phase(Phase::DirCreate, testdir, who, ItemOp::Mkdir, n)?;
        }
        if steps.stat {
            self.probe_phase(Phase::DirStat, testdir, at(Shift::Stat), n, Probe::Stat)?;
        }
        if steps.rename && n > 1 {
            let who = at(Shift::Stat);
            let start = self.walker.rename_start().map(|node| (who.tree, node));
            self.timed(Phase::DirRename, n, testdir, start, |w, _| {
                Ok(items(w.rename_dirs(testdir, who, n)?))
            })?;
        }
        if steps.remove {
            let who = at(Shift::Remove);
            self.preorder_phase(Phase::DirRemove, testdir, who, ItemOp::Rmdir, n)?;
        }
        Ok(())
    }

    /// The file phases; returns how many files each rank has (fewer after a stonewall).
    fn file_phases(&mut self, testdir: &O::Dir, roles: Roles, mut count: u64) -> Result<u64> {
        let p = self.params;
        let (steps, unique, n) = (p.steps(), p.unique_dir, self.lay.items);
        let at = |s: Shift| Items::of(roles, s, unique, ItemKind::File);
        if steps.create {
            let who = at(Shift::Create);
            let op = ItemOp::Create(CreateHow {
                bytes: p.write_bytes,
                fsync: p.sync,
                exclusive: true,
                mode: 0o664,
            });
            let team = self.team;
            let wall_after = self.wall;
            let top = Some((who.tree, 0));
            count = self.timed(Phase::FileCreate, n, testdir, top, |w, t0| {
                let Some(after) = wall_after else {
                    let r = w.items_preorder(testdir, who, op, 0..n, None)?;
                    return Ok(items(r.done));
                };
                let first = w.items_preorder(testdir, who, op, 0..n, Some(t0 + after));
                let at_wall = nanos(t0.elapsed());
                let done = first.as_ref().map_or(0, |r| r.done);
                // Collective on every rank, failed or not, so no rank waits for another.
                let (s, m) = team.sum_max(&[done, u64::from(first.is_err())], &[done]);
                first?;
                if s[1] > 0 {
                    return Err(WalkError::Io {
                        op: "create",
                        path: "(stopped: another rank failed)".into(),
                        err: std::io::Error::other("another rank failed"),
                    });
                }
                let most = m[0];
                // Wear-out: every rank catches up to the most any rank made.
                if done < most {
                    w.items_preorder(testdir, who, op, done..most, None)?;
                }
                Ok(Sample {
                    items: most,
                    // This rank's figures at its stonewall; `combine` adds up the ranks'.
                    wall: Some((done, at_wall)),
                    ..Sample::default()
                })
            })?;
        }
        if steps.stat {
            self.probe_phase(
                Phase::FileStat,
                testdir,
                at(Shift::Stat),
                count,
                Probe::Stat,
            )?;
        }
        if steps.read {
            let (who, read) = (at(Shift::Read), Probe::Read(p.read_bytes));
            self.probe_phase(Phase::FileRead, testdir, who, count, read)?;
        }
        if steps.remove {
            let who = at(Shift::Remove);
            self.preorder_phase(Phase::FileRemove, testdir, who, ItemOp::Unlink, count)?;
        }
        Ok(count)
    }

    /// Combine the ranks' samples of this iteration (one collective).
    fn combine(&mut self, j: u32) -> Iteration {
        let k = Phase::ALL.len();
        let mut sums = vec![0u64; 3 * k];
        let mut maxes = vec![0u64; 2 * k];
        for (i, s) in self.samples.iter().enumerate() {
            sums[i] = s.items;
            if let Some((wi, wn)) = s.wall {
                sums[k + i] = wi;
                sums[2 * k + i] = 1;
                maxes[k + i] = wn;
            }
            maxes[i] = s.nanos;
        }
        let (s, m) = self.team.sum_max(&sums, &maxes);
        let secs = |n: u64| n as f64 / 1e9;
        let phases = self
            .ran
            .iter()
            .map(|&ph| {
                let i = ph.index();
                PhaseResult {
                    phase: ph,
                    items: s[i],
                    seconds: secs(m[i]),
                    stonewall: (s[2 * k + i] > 0).then(|| Stonewall {
                        items: s[k + i],
                        seconds: secs(m[k + i]),
                    }),
                }
            })
            .collect();
        Iteration { index: j, phases }
    }
}

/// A sample of `n` items.
fn items(n: u64) -> Sample {
    Sample {
        items: n,
        ..Sample::default()
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "window_tests.rs"]
mod window_tests;
