//! mdtest as an fslab [`Workload`] (one rank): what a study or an engine command runs.
//!
//! One repetition is one mdtest iteration in its own `test-dir.<j>-0` (`j` counts the
//! repetitions), so mdtest's `-i N` is `N` repetitions and every iteration's phases are stored
//! as samples. The run's `-d` is the target directory.

use super::layout::{test_dir, Layout};
use super::params::MdtestParams;
use super::result::Iteration;
use super::run::{data_bytes, requirements, Backend, Options, Session};
use super::team::{Solo, Team};
use crate::metric::Metric;
use crate::workload::{Creates, Observer, Requirements, Target, Workload};
use anyhow::Result;

/// The mdtest engine of one rank of `team` (a plain run: [`Solo`]; under MPI, the job's
/// communicator).
pub struct Mdtest<T: Team = Solo> {
    team: T,
    params: MdtestParams,
    lay: Layout,
    opts: Options,
    session: Option<Session>,
    next: u32,
    iterations: Vec<Iteration>,
}

impl Mdtest {
    /// The engine for `params` (validated here), one rank alone.
    pub fn new(params: MdtestParams, opts: Options) -> Result<Mdtest> {
        Mdtest::with_team(params, opts, Solo)
    }
}

impl<T: Team> Mdtest<T> {
    /// The engine for `params` as one rank of `team`.
    pub fn with_team(params: MdtestParams, opts: Options, team: T) -> Result<Mdtest<T>> {
        let lay = params.validate()?;
        Ok(Mdtest {
            team,
            params,
            lay,
            opts,
            session: None,
            next: 0,
            iterations: Vec::new(),
        })
    }

    /// Every iteration run so far (for mdtest's SUMMARY table).
    pub fn iterations(&self) -> &[Iteration] {
        &self.iterations
    }

    /// End the run after its last repetition: remove `-d` if this run made it and nothing
    /// else is in it (mdtest does the same). Returns notes for the user. Collective.
    pub fn finish(&mut self) -> Vec<String> {
        match self.session.take() {
            Some(s) => s.close(&self.team),
            None => Vec::new(),
        }
    }

    /// The random order's seed, once the first repetition was prepared.
    pub fn seed(&self) -> Option<u32> {
        self.session.as_ref().and_then(Session::seed)
    }

    /// The run makes nothing on the file system: the null backend, or no creation step.
    fn makes_nothing(&self) -> bool {
        self.opts.backend == Backend::Null || !self.params.steps().create
    }
}

impl<T: Team> Workload for Mdtest<T> {
    fn name(&self) -> &'static str {
        "mdtest"
    }

    fn requirements(&self) -> Requirements {
        if self.makes_nothing() {
            return Requirements::default();
        }
        requirements(&self.params, &self.lay, self.team.size())
    }

    fn data_bytes(&self) -> u64 {
        if self.makes_nothing() {
            return 0;
        }
        data_bytes(&self.params, &self.lay, self.team.size())
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        if self.session.is_none() {
            self.session = Some(Session::open(
                &self.params,
                target.dir(),
                &self.team,
                self.opts,
            )?);
        } else if !self.makes_nothing() {
            crate::workload::check_fits(target.dir(), self.requirements(), "this mdtest run")?;
        }
        Ok(())
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        if self.session.is_none() {
            self.prepare(target)?;
        }
        let Some(session) = self.session.as_mut() else {
            anyhow::bail!("mdtest was not prepared; this is a bug in fslab, please report it");
        };
        let stop = crate::signal::interrupted;
        let it = session.iteration(self.next, &self.team, obs, &stop)?;
        self.next += 1;
        let metrics = it.metrics();
        self.iterations.push(it);
        Ok(metrics)
    }

    /// A failed iteration's test directory was swept when it failed; nothing else is left.
    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        Ok(())
    }

    fn creates(&self, target: &Target) -> Vec<Creates> {
        if self.makes_nothing() {
            return Vec::new();
        }
        let name = test_dir(self.next);
        let detail = serde_json::json!({
            "record": super::record::path(target.dir(), &name),
            "items_per_dir": self.lay.items_per_dir,
            "depth": self.lay.depth,
            "branching": self.lay.branching,
        });
        let path = target.dir().join(&name);
        Creates::each(super::NAME, crate::vocab::EntryKind::Tree, detail, [path])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mdtest::parse;
    use crate::workload::Quiet;

    #[test]
    fn each_repetition_is_one_iteration_in_its_own_test_directory() {
        let t = tempfile::tempdir().unwrap();
        let target = Target::new(t.path());
        let p = parse(&["-n", "20", "-z", "1", "-b", "2"]).unwrap().params;
        let mut w = Mdtest::new(p, Options::default()).unwrap();
        assert_eq!(w.name(), "mdtest");
        assert_eq!(w.requirements().inodes, 3 + 1 + 2 * 18);
        for rep in 0..2 {
            w.prepare(&target).unwrap();
            let c = w.creates(&target);
            assert_eq!(c[0].path, t.path().join(format!("test-dir.{rep}-0")));
            let m = w.run(&target, &Quiet).unwrap();
            w.cleanup(&target).unwrap();
            assert!(m
                .iter()
                .any(|m| m.phase == "file_read" && m.name == "rate" && m.value > 0.0));
            assert_eq!(m.len(), 10 * 3);
        }
        assert_eq!(w.iterations().len(), 2);
        assert_eq!(w.iterations()[1].index, 1);
        assert_eq!(
            std::fs::read_dir(t.path()).unwrap().count(),
            0,
            "target left as found"
        );
        assert!(Mdtest::new(MdtestParams::default(), Options::default()).is_err());
    }
}
