//! What a workload engine can do, as data (as fio's `ioengine_ops` flags): an MPI mode, a
//! declared run time, the metric that stands for each phase, what each phase measures, how
//! to make its phases longer, whether its data set against the RAM matters, and how
//! `fslab cleanup` removes a tree it left. Each engine declares its own
//! `CAPS` beside its code; the study plan, MPI mode, cleanup and reports read them instead of
//! matching engine names.

use std::path::Path;

/// What a kind of workload can do.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Runs as MPI ranks under `mpiexec` (`fslab <kind>` with the `mpi` feature).
    pub mpi: bool,
    /// Runs for a time its spec declares ([`super::WorkloadSpec::expected_duration`]),
    /// rather than until a fixed amount of work is done.
    pub timed: bool,
    /// The metric that stands for a phase in reports (compared and charted by default):
    /// `(phase, metric)` pairs, best first; phase `"*"` matches every phase.
    pub headline: &'static [(&'static str, &'static str)],
    /// Headlines chosen by a marker metric, checked before `headline`: `(marker, metric)`
    /// makes `metric` the headline of every phase that has the metric `marker` (fio marks
    /// its sequential jobs with large blocks, whose headline is then the throughput).
    pub headline_marked: &'static [(&'static str, &'static str)],
    /// The headline metrics that measure the engine's capability — its primary family,
    /// which Observations test and the adaptive stopping rule watches; the headlines of other
    /// phases (dbench's per-operation latencies, fio's CPU use and fsync latency) are
    /// exploratory.
    pub primary: &'static [&'static str],
    /// How to make a phase that is too short to time last longer.
    pub larger: Larger,
    /// For a workload whose data set under twice the RAM makes its results a page-cache
    /// measurement (a throughput workload that writes and reads back its own data: IOzone),
    /// the bytes it keeps on disk, from its stored parameters (`None` when unknown or when it
    /// bypasses the cache). `None` for the others: the metadata engines' phases are
    /// measured through the caches by design; dbench's client load is meant to be served
    /// largely from the page cache, as the file-server workload it replays was; fio's job
    /// decides with `direct`.
    pub dataset: Option<fn(&serde_json::Value) -> Option<u64>>,
    /// How many workers run at once in the whole job (all MPI ranks together), from its
    /// stored parameters: dbench's clients, fdtree's and IOzone's threads, one per rank for
    /// the engines whose ranks are their workers. The reports weigh it against the CPUs
    /// (oversubscribed: the result measures scheduling as much as the file system).
    pub workers: fn(&serde_json::Value) -> u64,
    /// What each phase's result measures (`class(phase)`), for which telemetry may explain
    /// a change in it.
    pub class: fn(&str) -> ResultClass,
    /// What a phase counts, for the rate its progress bar shows.
    pub counts: fn(&str) -> Counts,
    /// The engine's name in messages (`IOzone`) and what it calls the entry it makes
    /// (`test file`), for `fslab cleanup`'s account of what it removed.
    pub entry_words: (&'static str, &'static str),
    /// How `fslab cleanup` removes a tree the engine records beside itself
    /// ([`crate::vocab::EntryKind::Tree`]); `None` for engines that make no trees.
    pub tree: Option<TreeOps>,
}

/// What a result measures, for the telemetry that may explain a change in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultClass {
    /// Creating, looking up and removing names: journal and log traffic explains it.
    Metadata,
    /// Writing data.
    Write,
    /// Reading data: reads the device served explain it; writes never do.
    Read,
    /// fsync and flush: journal commits and waits.
    Sync,
    /// A client load mixing all of them (dbench's throughput).
    Mixed,
    /// Nothing telemetry can explain (CPU use, a job without a direction).
    Unexplained,
}

/// What a phase counts while it runs, for its live rate (`48.1k files/s`, `818 MiB/s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counts {
    /// Things, by the plural word shown (`files`, `dirs`, `lines`, `ops`).
    Items(&'static str),
    /// Records of the workload's record size, shown as bytes per second (IOzone).
    Records,
}

/// Removing a tree a killed run left (the engine's own record proves it is fslab's).
#[derive(Debug, Clone, Copy)]
pub struct TreeOps {
    /// Remove tree `name` in `parent` if its record proves it is the engine's; `Ok` says
    /// what was removed, `Err` why it was left.
    pub remove: fn(parent: &Path, name: &str) -> Result<String, String>,
    /// The tree is gone already: remove its record, if the engine keeps one.
    pub forget: fn(parent: &Path, name: &str),
}

/// How to make a workload's phases longer, in words and as the study-file keys and the
/// command-line flags that do it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Larger {
    /// In words: `more files or levels`.
    pub words: &'static str,
    /// Study-file keys: `files, levels`.
    pub keys: &'static str,
    /// Flags of the engine's command: `-f, -l`.
    pub flags: &'static str,
}

impl Caps {
    /// The headline metric of `phase` among the metrics it has (`has(name)`), if the kind
    /// names one.
    pub fn headline_of(&self, phase: &str, has: impl Fn(&str) -> bool) -> Option<&'static str> {
        self.headline_marked
            .iter()
            .find(|(marker, m)| has(marker) && has(m))
            .or_else(|| {
                self.headline
                    .iter()
                    .find(|(p, m)| (*p == "*" || *p == phase) && has(m))
            })
            .map(|(_, m)| *m)
    }

    /// The primary metric of `phase` among the metrics it has: its headline, when that is one
    /// of [`Caps::primary`].
    pub fn primary_of(&self, phase: &str, has: impl Fn(&str) -> bool) -> Option<&'static str> {
        self.headline_of(phase, has)
            .filter(|m| self.primary.contains(m))
    }
}

/// A count among stored parameters (`clients`, `threads`), when it is there.
pub fn count_param(p: &serde_json::Value, key: &str) -> Option<u64> {
    p.get(key).and_then(serde_json::Value::as_u64)
}

/// The ranks of an MPI job from its stored parameters (1 without MPI).
pub fn ranks_param(p: &serde_json::Value) -> u64 {
    count_param(p, "ranks").unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use crate::workload::{WorkloadKind, WorkloadSpec};
    use std::time::Duration;

    fn spec(text: &str) -> WorkloadSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn every_engine_lists_its_study_keys() {
        let keys = |k: WorkloadKind| k.keys().to_vec();
        assert!(keys(WorkloadKind::Fdtree).contains(&"levels"));
        assert!(keys(WorkloadKind::Iozone).contains(&"record_size"));
        assert!(keys(WorkloadKind::Dbench).contains(&"clients"));
        assert!(keys(WorkloadKind::Fio).contains(&"bs"), "through the Box");
        for k in WorkloadKind::ALL {
            assert!(keys(k).contains(&"label"), "{k}");
            assert!(!keys(k).contains(&"no_such_key"), "{k}");
        }
    }

    #[test]
    fn kinds_are_the_study_file_tags() {
        for k in WorkloadKind::ALL {
            assert_eq!(WorkloadKind::of(k.as_str()), Some(k));
            let s = spec(&format!("kind = \"{k}\""));
            assert_eq!((s.workload_kind(), s.kind()), (k, k.as_str()));
            assert_eq!(s.caps().primary, k.caps().primary);
            assert_eq!(k.caps().timed, s.expected_duration().is_some(), "{k}");
        }
        assert_eq!(WorkloadKind::of("fio"), Some(WorkloadKind::Fio));
        assert_eq!(WorkloadKind::of("ior"), None);
    }

    #[test]
    fn expected_duration_is_the_declared_run_time() {
        let d = spec("kind = \"dbench\"\nduration = \"20s\"\nwarmup = \"5s\"");
        assert_eq!(d.expected_duration(), Some(Duration::from_secs(25)));
        let d = spec("kind = \"dbench\"\nduration = \"1m\"");
        assert_eq!(d.expected_duration(), Some(Duration::from_secs(60)));
        let d = spec("kind = \"dbench\"\nduration = \"soon\"");
        assert_eq!(d.expected_duration(), None);
        assert_eq!(spec("kind = \"iozone\"").expected_duration(), None);
    }

    #[test]
    fn only_iozone_weighs_its_data_set_against_the_ram() {
        let kinds: Vec<WorkloadKind> = WorkloadKind::ALL
            .into_iter()
            .filter(|k| k.caps().dataset.is_some())
            .collect();
        assert_eq!(kinds, vec![WorkloadKind::Iozone]);
        assert!(WorkloadKind::Fdtree.caps().larger.words.contains("levels"));
        assert!(!WorkloadKind::Iozone.caps().larger.words.contains("levels"));
    }

    #[test]
    fn headline_of_takes_the_first_entry_the_phase_has() {
        let c = WorkloadKind::Dbench.caps();
        let all = |_: &str| true;
        assert_eq!(c.headline_of("total", all), Some("throughput"));
        assert_eq!(c.headline_of("ReadX", all), Some("mean_latency"));
        assert_eq!(
            c.headline_of("total", |m| m == "mean_latency"),
            Some("mean_latency")
        );
        assert_eq!(c.headline_of("ReadX", |m| m == "count"), None);
    }

    #[test]
    fn fio_headline_is_iops_unless_marked_large_sequential() {
        let c = WorkloadKind::Fio.caps();
        let plain = |m: &str| ["iops", "throughput", "clat_mean"].contains(&m);
        assert_eq!(c.headline_of("rand/write", plain), Some("iops"));
        let marked = |m: &str| ["iops", "throughput", "clat_mean", "large_sequential"].contains(&m);
        assert_eq!(c.headline_of("seq/write", marked), Some("throughput"));
        assert_eq!(c.headline_of("job", |m| m == "sys_cpu"), Some("sys_cpu"));
        assert_eq!(c.primary_of("job", |m| m == "sys_cpu"), None);
        assert_eq!(c.primary_of("seq/write", marked), Some("throughput"));
        assert_eq!(c.primary_of("rand/write", plain), Some("iops"));
    }

    #[test]
    fn dbench_headlines_its_throughput_not_its_latencies() {
        let c = WorkloadKind::Dbench.caps();
        let all = |_: &str| true;
        assert_eq!(c.primary_of("total", all), Some("throughput"));
        assert_eq!(c.primary_of("Deltree", all), None);
        assert_eq!(c.headline_of("Deltree", all), Some("mean_latency"));
        let fd = WorkloadKind::Fdtree.caps();
        for p in ["dir_create", "file_create", "file_remove", "dir_remove"] {
            assert_eq!(fd.primary_of(p, all), Some("rate"));
        }
    }
}
