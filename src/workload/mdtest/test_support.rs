//! Set-ups the mdtest tests share: parameters from a command line, the shape of a run, and
//! what a directory holds.

use super::layout::Layout;
use super::params::MdtestParams;
use super::parse::parse;
use super::record::Shape;
use super::result::{Iteration, Phase, PhaseResult};
use super::run::{Options, Session};
use super::team::{Solo, Team, Threads};
use crate::workload::{Observer, Quiet};
use anyhow::Result;
use std::path::Path;

/// The arguments of command line `line`, split at white space.
pub(super) fn argv(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The parameters of mdtest's command line `line`, validated, and their layout.
pub(super) fn params(line: &str) -> (MdtestParams, Layout) {
    let p = parse(&argv(line)).unwrap().params;
    let lay = p.validate().unwrap();
    (p, lay)
}

/// `phase`'s result of `items` in `seconds`, without a stonewall.
pub(super) fn ph(phase: Phase, items: u64, seconds: f64) -> PhaseResult {
    PhaseResult {
        phase,
        items,
        seconds,
        stonewall: None,
    }
}

/// What a run of every iteration gave one rank.
#[derive(Debug)]
pub(super) struct Outcome {
    /// Every iteration, in order.
    pub(super) iterations: Vec<Iteration>,
    /// The run made `-d` (and removed it again if it ended empty).
    pub(super) made_dir: bool,
}

/// Run every iteration of `p` in `dir` on this rank of `team`, one session as the
/// repetitions of an engine command or a study run them.
pub(super) fn run<T: Team + ?Sized>(
    p: &MdtestParams,
    dir: &Path,
    team: &T,
    opts: Options,
    obs: &dyn Observer,
    stop: &dyn Fn() -> bool,
) -> Result<Outcome> {
    let mut s = Session::open(p, dir, team, opts)?;
    let iterations = (0..p.iterations)
        .map(|j| s.iteration(j, team, obs, stop))
        .collect::<Result<_>>()?;
    let made_dir = s.made_dir;
    s.close(team);
    Ok(Outcome {
        iterations,
        made_dir,
    })
}

/// Run every iteration of `line` in `dir` as one rank alone, quietly and never stopped.
pub(super) fn go(line: &str, dir: &Path) -> Result<Outcome> {
    let p = params(line).0;
    run(&p, dir, &Solo, Options::default(), &Quiet, &|| false)
}

/// The shape of a run of `line` on `ranks` ranks.
pub(super) fn shape(line: &str, ranks: u32) -> Shape {
    let (p, lay) = params(line);
    Shape::new(&p, lay, ranks)
}

/// The names in directory `dir`, sorted.
pub(super) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Run `f` on every rank of an `n`-rank [`Threads`] team, each on a thread of its own; the
/// results in rank order. (This whole module is test code; the attribute says so where
/// tests/engine_shape.rs looks for threads an engine starts.)
#[cfg(test)]
pub(super) fn on_ranks<R: Send>(n: u32, f: impl Fn(&Threads) -> R + Sync) -> Vec<R> {
    let team = Threads::new(n);
    std::thread::scope(|s| {
        let hs: Vec<_> = team.iter().map(|t| s.spawn(|| f(t))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
