//! The typed JSON document every engine command prints with `--format json` (issue 22): one
//! envelope whose keys every engine shares — what ran (`engine`, `params`, `command_line`),
//! where (`directory`, `fs_type`), how often (`repeat`, `ranks`), and then either the run
//! (`run_id`, `repetitions`, `summary`, `warnings`, `environment`, `error`) or, with
//! `--dry-run`, the plan (`requirements`, `free`, `fits`, `estimate_seconds`) — with the
//! engine's own small typed part flattened into it. doc/schema.md ("The run document")
//! lists every key.

use crate::metric::Metric;
use crate::report::runsummary::{self, MetricSummary};
use crate::workload::WorkloadKind;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The document: the envelope, the run or the plan, and the engine's part `P` (a struct
/// whose fields become top-level keys).
#[derive(Debug, Serialize)]
pub(crate) struct RunDoc<'a, P: Serialize> {
    /// Versioned name of the document (`fslab.fdtree.v2`, …).
    pub schema: &'static str,
    /// The fslab that wrote it.
    pub fslab_version: &'static str,
    /// What ran, where, how often.
    #[serde(flatten)]
    pub subject: Subject<'a>,
    /// The run, or the plan of a dry run.
    #[serde(flatten)]
    pub outcome: Outcome<'a>,
    /// The engine's own part.
    #[serde(flatten)]
    pub part: P,
}

/// Units of a document's figures, by key (`{"dirs": "count", …}`).
#[derive(Debug)]
pub(crate) struct Units(pub &'static [(&'static str, &'static str)]);

impl Serialize for Units {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().copied())
    }
}

/// What an engine command runs, where and how often: the same keys for every engine.
#[derive(Debug, Serialize)]
pub(crate) struct Subject<'a> {
    /// The engine (its registered name, [`crate::workload::WorkloadKind::as_str`]).
    pub engine: &'static str,
    /// The command line as typed (under MPI with `mpiexec -n N` in front), as stored.
    pub command_line: String,
    /// The directory the engine works in (fdtree's `-o`, IOzone's test file's directory,
    /// dbench's and fio's `-D`: each engine's own flag for it).
    pub directory: &'a Path,
    /// The file system type of `directory`, when known.
    pub fs_type: Option<String>,
    /// The engine's parameters, as stored with the run.
    pub params: serde_json::Value,
    /// Repetitions asked for (`--repeat`).
    pub repeat: u32,
    /// MPI ranks (1 without MPI).
    pub ranks: u32,
    /// The MPI job (ranks, hosts, …), under MPI only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi: Option<serde_json::Value>,
}

impl<'a> Subject<'a> {
    /// A run of `kind` in `directory` with these parameters (as stored), `--repeat` times,
    /// one rank.
    pub fn new(
        kind: WorkloadKind,
        directory: &'a Path,
        params: &impl Serialize,
        repeat: u32,
    ) -> Result<Self> {
        Ok(Subject {
            engine: kind.as_str(),
            command_line: super::command_line(),
            directory,
            fs_type: crate::sysinfo::fs_type_of(directory),
            params: serde_json::to_value(params)?,
            repeat,
            ranks: 1,
            mpi: None,
        })
    }

    /// The same as rank 0 of an MPI job tells it (unchanged without one).
    pub fn under(mut self, mpi: Option<&UnderMpi>) -> Self {
        if let Some(m) = mpi {
            self.command_line = format!("mpiexec -n {} {}", m.ranks, self.command_line);
            self.ranks = m.ranks;
            self.mpi = Some(m.job.clone());
        }
        self
    }
}

/// What an MPI job adds to an engine command: the job, for the stored parameters, the
/// document's subject and the engine's own lines, and (for rank 0's ending of the engines
/// that keep them) every rank's figures.
#[derive(Debug, Default, Clone)]
pub(crate) struct UnderMpi {
    /// Number of ranks.
    pub ranks: u32,
    /// Number of hosts they run on.
    pub hosts: u32,
    /// The job (ranks, hosts, library and the engine's own facts), as stored.
    pub job: serde_json::Value,
    /// Every rank's figures of every repetition (the document's `per_rank`).
    pub per_rank: Option<serde_json::Value>,
    /// The `--per-rank` table of the last repetition, when asked for.
    pub table: Option<String>,
}

impl UnderMpi {
    /// An engine's parameters as stored under MPI: its own, plus the job as `mpi`.
    pub fn stored(&self, params: &serde_json::Value) -> serde_json::Value {
        let mut v = params.clone();
        if let Some(o) = v.as_object_mut() {
            o.insert("mpi".into(), self.job.clone());
        }
        v
    }

    /// Under MPI, print the `--per-rank` table if asked for.
    pub fn print_table(mpi: Option<&UnderMpi>) {
        if let Some(t) = mpi.and_then(|m| m.table.as_ref()) {
            crate::outln!("{t}");
        }
    }
}

/// The run, or the plan of a dry run.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Outcome<'a> {
    /// A run that happened (`dry_run` false).
    Ran(Ran<'a>),
    /// What a dry run found (`dry_run` true).
    Planned(Planned),
}

/// The keys of a run.
#[derive(Debug, Serialize)]
pub(crate) struct Ran<'a> {
    /// Always false.
    pub dry_run: bool,
    /// The run's id in the store (none with `--no-store`).
    pub run_id: Option<i64>,
    /// The warnings, one line each.
    pub warnings: &'a [String],
    /// The environment recorded with the run.
    pub environment: BTreeMap<&'a str, &'a str>,
    /// The error that ended the run early, if any.
    pub error: Option<String>,
    /// Every repetition's measurements, in order (an IOzone sweep has them per point).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<Vec<Vec<MetricRow>>>,
    /// Mean, sd, interval, … per phase and metric over the repetitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<serde_json::Value>,
}

/// The keys of a dry run.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Planned {
    /// Always true.
    pub dry_run: bool,
    /// What a repetition needs in `directory`.
    pub requirements: Needs,
    /// What `directory`'s file system has free, when it was looked at.
    pub free: Option<Free>,
    /// Whether it fits, when the free space was looked at.
    pub fits: Option<bool>,
    /// Estimated duration of the whole run in seconds, when the engine can tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_seconds: Option<f64>,
}

/// Bytes and inodes a repetition needs.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Needs {
    /// Bytes.
    pub bytes: u64,
    /// Inodes (none when the engine does not count them).
    pub inodes: Option<u64>,
}

impl From<crate::workload::Requirements> for Needs {
    /// What an engine says a repetition needs: bytes and inodes.
    fn from(r: crate::workload::Requirements) -> Self {
        Needs {
            bytes: r.bytes,
            inodes: Some(r.inodes),
        }
    }
}

/// Free space of a file system.
#[derive(Debug, Serialize)]
pub(crate) struct Free {
    /// Bytes free to an unprivileged user.
    pub bytes: u64,
    /// Inodes free.
    pub inodes: u64,
    /// Inodes in all (0: no fixed limit).
    pub inodes_total: u64,
}

impl Planned {
    /// A dry run's plan: `needs` against `free`, whether it fits, the estimate.
    pub fn new(
        needs: Needs,
        free: Option<crate::sysinfo::FreeSpace>,
        estimate: Option<f64>,
    ) -> Self {
        let fits = free.map(|f| {
            needs.bytes <= f.bytes
                && (f.inodes_total == 0 || needs.inodes.map_or(true, |i| i <= f.inodes))
        });
        Planned {
            dry_run: true,
            requirements: needs,
            free: free.map(|f| Free {
                bytes: f.bytes,
                inodes: f.inodes,
                inodes_total: f.inodes_total,
            }),
            fits,
            estimate_seconds: estimate,
        }
    }
}

/// One measured value of a repetition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MetricRow {
    /// Phase (`dir_create`, `write`, `total`, `job/read`, …).
    pub phase: String,
    /// Metric (`rate`, `throughput`, …).
    pub metric: String,
    /// Its unit, as stored (`files/s`, `KiB/s`, …).
    pub unit: &'static str,
    /// The value.
    pub value: f64,
}

/// Every repetition's metrics, in order.
pub(crate) fn repetitions(reps: &[Vec<Metric>]) -> Vec<Vec<MetricRow>> {
    reps.iter()
        .map(|r| {
            r.iter()
                .map(|m| MetricRow {
                    phase: m.phase.clone(),
                    metric: m.name.clone(),
                    unit: m.unit.as_str(),
                    value: m.value,
                })
                .collect()
        })
        .collect()
}

/// The repetitions and their summary, as a run's document holds them.
pub(crate) fn measured(reps: &[Vec<Metric>], sums: &[MetricSummary]) -> super::finish::Measured {
    (Some(repetitions(reps)), Some(runsummary::to_json(sums)))
}

/// Print a document with sorted keys, as every fslab document prints them.
pub(crate) fn print<P: Serialize>(doc: &RunDoc<'_, P>) -> Result<()> {
    let v = serde_json::to_value(doc)?;
    crate::outln!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

/// Print a dry run's document.
pub(crate) fn print_dry_run<P: Serialize>(
    schema: &'static str,
    subject: Subject<'_>,
    plan: Planned,
    part: P,
) -> Result<()> {
    print(&RunDoc {
        schema,
        fslab_version: env!("CARGO_PKG_VERSION"),
        subject,
        outcome: Outcome::Planned(plan),
        part,
    })
}

#[cfg(test)]
#[path = "rundoc_tests.rs"]
mod tests;
