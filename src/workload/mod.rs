//! Workload engines: the [`Workload`] trait, the target they run against, and the
//! serialisable [`WorkloadSpec`] that study files use to name them.
//!
//! An engine times only what it measures and returns a flat list of [`Metric`]s; it knows
//! nothing about mkfs, mount or the store.

mod caps;
pub mod dbench;
pub mod fdtree;
pub mod fio;
pub mod fsops;
pub mod iozone;
pub mod mdtest;
pub mod param;
pub mod provenance;
pub mod testfile;
pub mod warm;
pub mod workers;

pub use caps::{Caps, Counts, Larger, ResultClass, TreeOps};

use crate::metric::Metric;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::target::Target;

/// What a workload needs from its target, checked before anything is created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Requirements {
    /// Bytes of data the workload will have on disk at its peak.
    pub bytes: u64,
    /// Inodes (files plus directories) it will have at its peak.
    pub inodes: u64,
}

impl Requirements {
    /// Whether the bytes fit into `free`.
    pub fn bytes_fit(&self, free: &crate::sysinfo::FreeSpace) -> bool {
        self.bytes <= free.bytes
    }

    /// Whether the inodes fit into `free`. Some file systems (btrfs, tmpfs with
    /// nr_inodes=0) report 0 total inodes: no fixed limit.
    pub fn inodes_fit(&self, free: &crate::sysinfo::FreeSpace) -> bool {
        free.inodes_total == 0 || self.inodes <= free.inodes
    }

    /// Whether both the bytes and the inodes fit into `free`.
    pub fn fits(&self, free: &crate::sysinfo::FreeSpace) -> bool {
        self.bytes_fit(free) && self.inodes_fit(free)
    }
}

/// Progress events from a running workload. All methods default to doing nothing.
///
/// Engines call `progress` at most every few thousand operations, so an observer may take
/// a lock or draw a bar.
pub trait Observer: Sync {
    /// A phase started; `total` is the number of units of work in it (0 if unknown).
    fn phase_started(&self, _phase: &str, _total: u64) {}
    /// `done` units of the current phase are finished (cumulative, all threads).
    fn progress(&self, _done: u64) {}
    /// A phase finished.
    fn phase_finished(&self, _phase: &str) {}
    /// A line of information for the user (not part of the results).
    fn message(&self, _msg: &str) {}
    /// A point of the engine's own time series — dbench's per-second line — at `t` seconds
    /// since the run started; stored with the repetition's timeline.
    fn series(&self, _name: &str, _unit: crate::metric::Unit, _t: f64, _value: f64) {}
    /// Whether a display shows [`Observer::status`]: an engine asks its tool for a running
    /// status (fio's `--status-interval`) only when someone looks at it.
    fn wants_status(&self) -> bool {
        false
    }
    /// The engine's own reading of the phase in flight (fio's status, dbench's per-second
    /// line), for a phase that does not count units of work.
    fn status(&self, _status: PhaseStatus) {}
}

/// Where a running phase is, as the engine (or the tool it runs) sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseStatus {
    /// Fraction done, 0 to 1, when the engine knows it.
    pub done: Option<f64>,
    /// Bytes per second now.
    pub bytes_per_sec: Option<f64>,
    /// Whether the rate is shown in powers of 1000 (dbench's MB/s) rather than of 1024
    /// (fio's MiB/s): each engine's bar speaks its tool's unit.
    pub decimal: bool,
    /// Seconds the engine expects the phase still to take.
    pub eta: Option<f64>,
    /// Operations per second now (fio's IOPS), when the engine counts them.
    pub ops_per_sec: Option<f64>,
    /// What the engine does now, in its words, when it says: fio's `setting up` before its
    /// jobs move data, then the jobs that move it and their directions (`rd/read`).
    pub doing: Option<String>,
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// An entry a repetition will create in its target (see [`Workload::creates`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Creates {
    /// Absolute path of the entry.
    pub path: PathBuf,
    /// The engine that makes it (its stored name), which `fslab cleanup` asks to remove it.
    pub engine: &'static str,
    /// What it is.
    pub kind: crate::vocab::EntryKind,
    /// What identifies it further (a tree's shape), as JSON.
    pub detail: serde_json::Value,
}

impl Creates {
    /// An entry at each of `paths`, all made by `engine`, of `kind` and with `detail`.
    pub fn each(
        engine: &'static str,
        kind: crate::vocab::EntryKind,
        detail: serde_json::Value,
        paths: impl IntoIterator<Item = PathBuf>,
    ) -> Vec<Creates> {
        paths
            .into_iter()
            .map(|path| Creates {
                path,
                engine,
                kind,
                detail: detail.clone(),
            })
            .collect()
    }
}

/// A native workload engine.
pub trait Workload {
    /// Stable id used in study files, the store and reports (`fdtree`, `iozone`, `dbench`,
    /// `fio`).
    fn name(&self) -> &'static str;
    /// Bytes and inodes this workload needs on its target.
    fn requirements(&self) -> Requirements;
    /// Bytes of file data it writes at its peak: [`Requirements::bytes`] without the blocks
    /// its directories take (what `study plan` calls its data). Default: all of them.
    fn data_bytes(&self) -> u64 {
        self.requirements().bytes
    }
    /// Untimed set-up before a repetition (for example checking free space).
    fn prepare(&mut self, target: &Target) -> Result<()>;
    /// Run one measured repetition and return its metrics. Times only what it measures.
    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>>;
    /// Remove whatever the repetition left behind. Called even when `run` failed.
    fn cleanup(&mut self, target: &Target) -> Result<()>;
    /// Latency histograms of the last repetition, taken once (engines without any return none).
    fn take_histograms(&mut self) -> Vec<crate::metric::Histogram> {
        Vec::new()
    }
    /// The entries of its target the next repetition will create, known after `prepare`.
    /// Ad-hoc runs record them in the store *before* they exist, so `fslab cleanup` can
    /// remove what a killed run left, and only that. Default: none.
    fn creates(&self, _target: &Target) -> Vec<Creates> {
        Vec::new()
    }
}

/// A borrowed engine is an engine: callers that own one can lend it to code that takes
/// `Box<dyn Workload>` (for example a one-cell run of the ad-hoc runner).
impl<W: Workload + ?Sized> Workload for &mut W {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn requirements(&self) -> Requirements {
        (**self).requirements()
    }
    fn data_bytes(&self) -> u64 {
        (**self).data_bytes()
    }
    fn prepare(&mut self, target: &Target) -> Result<()> {
        (**self).prepare(target)
    }
    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        (**self).run(target, obs)
    }
    fn cleanup(&mut self, target: &Target) -> Result<()> {
        (**self).cleanup(target)
    }
    fn take_histograms(&mut self) -> Vec<crate::metric::Histogram> {
        (**self).take_histograms()
    }
    fn creates(&self, target: &Target) -> Vec<Creates> {
        (**self).creates(target)
    }
}

/// A study-file workload's engine side: each engine's spec type says its label and builds
/// its engine; [`WorkloadSpec`] dispatches to it.
pub trait EngineSpec {
    /// The label given in the study file, or one made from the parameters.
    fn label(&self) -> String;
    /// Build the engine (checking the parameters).
    fn build(&self) -> Result<Box<dyn Workload>>;
    /// How long one repetition runs by the spec's own declaration, for engines that run for
    /// a time ([`Caps::timed`]); `None` for engines that run until their work is done.
    fn expected_duration(&self) -> Option<Duration> {
        None
    }
}

impl<T: EngineSpec + ?Sized> EngineSpec for Box<T> {
    fn label(&self) -> String {
        (**self).label()
    }
    fn build(&self) -> Result<Box<dyn Workload>> {
        (**self).build()
    }
    fn expected_duration(&self) -> Option<Duration> {
        (**self).expected_duration()
    }
}

/// [`EngineSpec`] for a study spec with its own `label()` and `to_params()`, whose engine is
/// `$engine::new(params)`; further methods (`expected_duration`) follow the engine.
macro_rules! engine_spec {
    ($spec:ty => $engine:ty $(, $($extra:tt)*)?) => {
        impl $crate::workload::EngineSpec for $spec {
            fn label(&self) -> String {
                <$spec>::label(self)
            }
            fn build(&self) -> anyhow::Result<Box<dyn $crate::workload::Workload>> {
                Ok(Box::new(<$engine>::new(self.to_params()?)))
            }
            $($($extra)*)?
        }
    };
}
pub(crate) use engine_spec;

/// The registration list's expansion: [`WorkloadKind`] (the engines, their stored names and
/// capabilities) and [`WorkloadSpec`] (a study file's `[[workload]]`, tagged by `kind`).
macro_rules! engines {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident : $spec:ty ),+ $(,)?) => {
        /// The workload engines (`kind = "…"` in study files, the workload kind in the store).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum WorkloadKind {
            $( $(#[$doc])* $variant, )+
        }

        impl WorkloadKind {
            /// Every engine, in registration order.
            pub const ALL: [WorkloadKind; [$(stringify!($variant)),+].len()] =
                [$(WorkloadKind::$variant),+];

            /// The stored name (`fdtree`, `iozone`, …).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( WorkloadKind::$variant => $module::NAME, )+
                }
            }

            /// What the engine can do.
            pub const fn caps(self) -> Caps {
                match self {
                    $( WorkloadKind::$variant => $module::CAPS, )+
                }
            }

            /// The study keys of its `[[workload]]` (`kind` aside), from its spec type.
            pub fn keys(self) -> &'static [&'static str] {
                match self {
                    $( WorkloadKind::$variant => param::fields_of::<$spec>(), )+
                }
            }
        }

        /// A workload as written in a study file (`[[workload]]` with `kind = "…"`).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
        pub enum WorkloadSpec {
            $( $(#[$doc])* $variant($spec), )+
        }

        impl WorkloadSpec {
            /// The engine.
            pub fn workload_kind(&self) -> WorkloadKind {
                match self {
                    $( WorkloadSpec::$variant(_) => WorkloadKind::$variant, )+
                }
            }

            fn engine_spec(&self) -> &dyn EngineSpec {
                match self {
                    $( WorkloadSpec::$variant(s) => s, )+
                }
            }
        }
    };
}

// The registration list: every engine fslab has, once. An engine is a folder of its own
// (`workload/NAME/` with `NAME`, `CAPS` and its spec type implementing [`EngineSpec`]), plus
// its command (`app/NAME/`, a variant of `cli::Command`) and, with an MPI mode, its rank
// engine (`mpi/NAME/`); doc/architecture.md, "Adding an engine".
engines! {
    /// The fdtree-compatible metadata tree.
    Fdtree => fdtree: fdtree::FdtreeSpec,
    /// The IOzone-compatible throughput tests.
    Iozone => iozone: iozone::IozoneSpec,
    /// The dbench-compatible client load.
    Dbench => dbench: dbench::DbenchSpec,
    /// The real fio, run on the cell.
    Fio => fio: Box<fio::FioSpec>,
    /// The mdtest-compatible metadata benchmark (the IO500's metadata half).
    Mdtest => mdtest: mdtest::MdtestParams,
}

impl WorkloadKind {
    /// The engine with the stored name `name`, if it is one.
    pub fn of(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The label a study workload's stored parameters would have without a `label` of their
    /// own: the engine's command with its flags (`fdtree -d 3 -f 4 -s 1 -l 8`). `None` when
    /// the parameters are not a study workload's of this engine (an engine command stores
    /// its own).
    pub fn command(self, params: &serde_json::Value) -> Option<String> {
        let mut p = params.as_object()?.clone();
        p.remove("label");
        p.insert("kind".into(), self.as_str().into());
        let spec: WorkloadSpec = serde_json::from_value(serde_json::Value::Object(p)).ok()?;
        Some(spec.label())
    }
}

impl std::fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl WorkloadSpec {
    /// The engine's stored name (`fdtree`, …).
    pub fn kind(&self) -> &'static str {
        self.workload_kind().as_str()
    }

    /// What the engine can do.
    pub fn caps(&self) -> Caps {
        self.workload_kind().caps()
    }

    /// How long one repetition runs by the spec's own declaration ([`EngineSpec`]).
    pub fn expected_duration(&self) -> Option<Duration> {
        self.engine_spec().expected_duration()
    }

    /// The label given in the study file, or a generated one.
    pub fn label(&self) -> String {
        self.engine_spec().label()
    }

    /// Build the engine for this spec.
    pub fn build(&self) -> Result<Box<dyn Workload>> {
        self.engine_spec().build()
    }
}

/// The largest IOzone stride (`-j`, `stride`) fslab accepts, in records: 2^30, so the
/// strided read's `stride × record size` (records up to 16 MiB) stays far inside 64 bits.
pub const MAX_IOZONE_STRIDE: u64 = 1 << 30;

/// Check an IOzone stride against [`MAX_IOZONE_STRIDE`]; `what` names the flag or key.
pub fn check_stride(stride: u64, what: &str) -> Result<()> {
    if stride > MAX_IOZONE_STRIDE {
        crate::bail_usage!(
            "{what} {stride} is out of range; use a stride of 0 to {MAX_IOZONE_STRIDE} records"
        );
    }
    Ok(())
}

/// Check that `dir` exists, is a directory, and can be written; `flag` names the option
/// that chose it, for the message.
pub fn check_writable_dir(dir: &Path, flag: &str) -> Result<()> {
    let Ok(meta) = std::fs::metadata(dir) else {
        crate::bail_usage!(
            "{} does not exist; create it or choose another directory with {flag}",
            dir.display()
        )
    };
    if !meta.is_dir() {
        crate::bail_usage!(
            "{} is not a directory; choose a directory with {flag}",
            dir.display()
        );
    }
    let st = rustix::fs::statvfs(dir)?;
    if st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) {
        crate::bail_usage!(
            "{} is on a read-only file system; remount it read-write or choose another directory with {flag}",
            dir.display()
        );
    }
    use rustix::fs::Access;
    if rustix::fs::access(dir, Access::WRITE_OK | Access::EXEC_OK).is_err() {
        crate::bail_usage!(
            "{} is not writable by this user; fix its permissions or choose another directory with {flag}",
            dir.display()
        );
    }
    Ok(())
}

/// What of a run's [`Requirements`] does not fit into the free space of its file system, in
/// the words of the free-space checks (what the run needs, then what there is).
#[derive(Debug, Clone, PartialEq)]
pub enum Shortfall {
    /// The bytes: `12.0 MiB of data but /d has only 3.0 MiB free`.
    Bytes(String),
    /// The inodes: `5000 inodes but /d has only 20 free`.
    Inodes(String),
}

/// Which of `req` does not fit into the free bytes and inodes of the file system holding
/// `dir` (the bytes first); `None` when all of it fits.
pub fn shortfall(dir: &Path, req: Requirements) -> Result<Option<Shortfall>> {
    let free = crate::sysinfo::free_space(dir)?;
    Ok(if !req.bytes_fit(&free) {
        Some(Shortfall::Bytes(format!(
            "{} of data but {} has only {} free",
            crate::units::fmt_bytes(req.bytes),
            dir.display(),
            crate::units::fmt_bytes(free.bytes)
        )))
    } else if !req.inodes_fit(&free) {
        Some(Shortfall::Inodes(format!(
            "{} inodes but {} has only {} free",
            req.inodes,
            dir.display(),
            free.inodes
        )))
    } else {
        None
    })
}

/// Check that `req` fits into the free bytes and inodes of the file system holding `dir`.
/// Returns a usage error naming the shortfall and the fix.
pub fn check_fits(dir: &Path, req: Requirements, what: &str) -> Result<()> {
    match shortfall(dir, req)? {
        Some(Shortfall::Bytes(s)) => crate::bail_usage!(
            "{what} needs {s}; choose smaller sizes or another directory with -o/-D"
        ),
        Some(Shortfall::Inodes(s)) => crate::bail_usage!(
            "{what} needs {s}; choose fewer files/directories or a file system with more inodes (mkfs -N / -i)"
        ),
        None => Ok(()),
    }
}
