//! What each kind of workload engine can do, as data (as fio's `ioengine_ops` flags): an MPI
//! mode, latency histograms, a declared run time, the metric that stands for each phase, how
//! to make its phases longer, and whether its data set against the RAM matters. The study
//! plan, MPI mode and reports (and their warnings' advice) read these instead of matching
//! engine names.

use std::fmt;

/// The workload engines (`kind = "…"` in study files, the workload kind in the store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadKind {
    /// The fdtree-compatible metadata tree.
    Fdtree,
    /// The IOzone-compatible throughput tests.
    Iozone,
    /// The dbench-compatible client load.
    Dbench,
    /// The real fio, run on the cell.
    Fio,
}

/// What a kind of workload can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Runs as MPI ranks under `mpiexec` (`fslab <kind>` with the `mpi` feature).
    pub mpi: bool,
    /// Records latency histograms ([`super::Workload::take_histograms`]).
    pub histograms: bool,
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
    /// Whether a data set under twice the RAM makes its results a page-cache measurement: a
    /// throughput workload that writes and reads back its own data (IOzone). Not fdtree,
    /// whose metadata phases are measured through the caches by design, nor dbench, whose
    /// client load is meant to be served largely from the page cache, as the file-server
    /// workload it replays was, and whose data set the parameters do not give.
    pub dataset_vs_ram: bool,
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

impl WorkloadKind {
    /// Every kind.
    pub const ALL: [WorkloadKind; 4] = [
        WorkloadKind::Fdtree,
        WorkloadKind::Iozone,
        WorkloadKind::Dbench,
        WorkloadKind::Fio,
    ];

    /// The stored name (`fdtree`, `iozone`, `dbench`).
    pub const fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Fdtree => "fdtree",
            WorkloadKind::Iozone => "iozone",
            WorkloadKind::Dbench => "dbench",
            WorkloadKind::Fio => "fio",
        }
    }

    /// The kind with the stored name `name`, if it is one.
    pub fn of(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// What the kind can do.
    pub const fn caps(self) -> Caps {
        match self {
            WorkloadKind::Fdtree => Caps {
                mpi: true,
                histograms: false,
                timed: false,
                headline: &[("*", "rate")],
                headline_marked: &[],
                // The four phase rates.
                primary: &["rate"],
                larger: Larger {
                    words: "a larger tree: more files or levels",
                    keys: "files, levels",
                    flags: "-f, -l",
                },
                dataset_vs_ram: false,
            },
            WorkloadKind::Iozone => Caps {
                mpi: true,
                histograms: false,
                timed: false,
                headline: &[("*", "throughput")],
                headline_marked: &[],
                primary: &["throughput"],
                larger: Larger {
                    words: "larger files",
                    keys: "file_size",
                    flags: "-s",
                },
                dataset_vs_ram: true,
            },
            WorkloadKind::Dbench => Caps {
                mpi: true,
                histograms: true,
                timed: true,
                // The run's MB/s; per operation, its mean latency.
                headline: &[("total", "throughput"), ("*", "mean_latency")],
                headline_marked: &[],
                // The number dbench users compare: the run's MB/s.
                primary: &["throughput"],
                larger: Larger {
                    words: "a longer run",
                    keys: "duration",
                    flags: "-t",
                },
                dataset_vs_ram: false,
            },
            WorkloadKind::Fio => Caps {
                mpi: false,
                histograms: true,
                timed: false,
                // Per job and direction its IOPS; the throughput for sequential jobs with
                // blocks of 128 KiB or more (marked `large_sequential`); a job's CPU use;
                // an fsync's mean latency.
                headline: &[("*", "iops"), ("*", "lat_mean"), ("*", "sys_cpu")],
                headline_marked: &[(crate::workload::fio::output::LARGE_SEQUENTIAL, "throughput")],
                // IOPS, or the throughput where `large_sequential` makes it the headline.
                primary: &["iops", "throughput"],
                larger: Larger {
                    words: "a longer run: a larger size, or time_based with a longer runtime",
                    keys: "size, runtime",
                    flags: "--size, --runtime",
                },
                // fio drops the file's cached pages before each job (`invalidate`, on by
                // default), and `direct` is the job's choice.
                dataset_vs_ram: false,
            },
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadSpec;
    use std::time::Duration;

    fn spec(text: &str) -> WorkloadSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn kinds_are_the_study_file_tags() {
        for k in WorkloadKind::ALL {
            assert_eq!(WorkloadKind::of(k.as_str()), Some(k));
            let s = spec(&format!("kind = \"{k}\""));
            assert_eq!((s.workload_kind(), s.kind()), (k, k.as_str()));
            assert_eq!(s.caps(), k.caps());
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
            .filter(|k| k.caps().dataset_vs_ram)
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
