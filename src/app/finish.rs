//! The ending every engine command shares (with and without MPI, rank 0's there):
//! the summary of the repetitions and its warnings, one typed JSON run document — the common
//! envelope with the engine's own part flattened into it — and the human tail (warnings,
//! where the run is stored). An engine adds only what is its own: its part of the document
//! and the lines it prints before the tail.

use super::rundoc::{self, MetricRow, Outcome, Ran, RunDoc, Subject, UnderMpi};
use crate::cli::RunArgs;
use crate::metric::Metric;
use crate::report::cpu_checks;
use crate::report::runsummary::{self, MetricSummary};
use crate::runner::adhoc::Disturbance;
use crate::runner::adhoc::{self, AdhocCell, AdhocOptions, AdhocResult, CellHook, CellsResult};
use crate::runner::progress::Steps;
use crate::stats::Thresholds;
use crate::store::Store;
use crate::workload::{Observer, Target, Workload, WorkloadKind};
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

/// A run's repetitions and their summary, as the run document holds them (none for an
/// IOzone sweep, which has them per point).
pub(crate) type Measured = (Option<Vec<Vec<MetricRow>>>, Option<serde_json::Value>);

/// The store an engine command records in: none with `--no-store` (it then runs against one
/// in memory), else the results database (`--db`, or the default).
pub(crate) fn store_for(run: &RunArgs, db: Option<std::path::PathBuf>) -> Result<Option<Store>> {
    (!run.no_store).then(|| super::open_store(db)).transpose()
}

/// What an engine command returns once its output is printed: the error that ended the run
/// early, if any, as a runtime failure.
pub(crate) fn outcome(error: Option<anyhow::Error>) -> Result<()> {
    error.map_or(Ok(()), |e| Err(crate::error::runtime(e)))
}

/// The repetitions summarised metric by metric, and the warnings about them (phases shorter
/// than `min_phase`, high variation of the headline metric), one line per kind with the
/// advice in the engine's flags (`kind`; `params` says whether the engine drops caches).
///
/// Telemetry samples are summarised too (the JSON document has them) but warned about
/// never: they explain a result, they are not one.
fn summarize(
    reps: &[Vec<Metric>],
    min_phase: f64,
    kind: WorkloadKind,
    params: &serde_json::Value,
) -> (Vec<MetricSummary>, Vec<String>) {
    let sums = runsummary::summarize_reps(reps);
    let thresholds = Thresholds {
        min_phase_seconds: min_phase,
        ..Thresholds::default()
    };
    let mut warnings =
        runsummary::warning_lines(Some(kind), params, &engine_only(&sums), &thresholds);
    let cpus = crate::sysinfo::usable_cpus() as u64;
    let tables = crate::sysinfo::worker_file_tables();
    warnings.extend(cpu_checks::run_lines(kind, params, cpus, &tables));
    (sums, warnings)
}

/// The engine's own measurements among `sums` (the terminal tables show these).
pub(crate) fn engine_only(sums: &[MetricSummary]) -> Vec<MetricSummary> {
    sums.iter()
        .filter(|m| !crate::metric::is_telemetry(&m.name))
        .cloned()
        .collect()
}

/// What every engine command ends with.
pub(crate) struct Ending<'a> {
    /// The document's schema name.
    pub schema: &'static str,
    /// The run's id in the store.
    pub run_id: Option<i64>,
    /// The environment recorded with the run.
    pub environment: &'a [(String, String)],
    /// The warnings: the engine's, then how many repetitions other activity disturbed.
    pub warnings: Vec<String>,
    /// The error that ended the run early, if any.
    pub error: Option<&'a anyhow::Error>,
}

/// When the "stored as run N" line is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoredLine {
    /// After every run (a failed repetition is stored too).
    Always,
    /// Only after a run without error (the error is then the one line).
    OnSuccess,
}

/// The results of an engine run, whatever its number of cells.
impl<R> crate::runner::adhoc::Ran<R> {
    /// Its ending, with the document's schema and the warnings (the engine's, and the line
    /// of [`disturbed_warning`]).
    pub(crate) fn ending<'a>(&'a self, schema: &'static str, warnings: &[String]) -> Ending<'a> {
        let mut warnings = warnings.to_vec();
        warnings.extend(disturbed_warning(&self.disturbed));
        Ending {
            schema,
            run_id: self.study,
            environment: &self.environment,
            warnings,
            error: self.error.as_ref(),
        }
    }
}

/// How many repetitions other activity disturbed, how the policy treated them and the worst
/// one's figures; where most were disturbed, that the machine was busy and to quiet it
/// rather than add repetitions. `None` when none was. The advice reads the policy in force
/// (no `--disturbed repeat` advised once it re-ran some).
pub(crate) fn disturbed_warning(d: &Disturbance) -> Option<String> {
    use crate::report::disturbed;
    let n = d.disturbed();
    if n == 0 {
        return None;
    }
    let how: Vec<String> = [
        (d.counted, "counted"),
        (d.rerun, "re-run"),
        (d.dropped, "dropped"),
    ]
    .into_iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, w)| format!("{k} {w}"))
    .collect();
    let worst = disturbed::worst(&d.lines).unwrap_or_default();
    let what = format!(
        "{n} of {} repetitions were disturbed by other activity ({}; the worst: {})",
        d.run,
        how.join(", "),
        worst.replace("; ", ", ")
    );
    Some(if disturbed::busy(n as usize, d.run as usize) {
        format!("the machine was busy: {what}; {}", disturbed::BUSY_ADVICE)
    } else if d.rerun > 0 {
        format!("{what}; --settle waits for a quiet machine before each repetition")
    } else {
        format!("{what}; --settle waits for a quiet machine, --disturbed repeat re-runs them")
    })
}

/// What a one-cell engine command records: its engine, its parameters, its label, the
/// options every engine command shares, the store and, under MPI, the job. The engine
/// brings its own parts to [`Recorded::run`] (its workload, progress and what it does after
/// each repetition) and to [`EngineRan::print`] (its part of the document, its lines).
pub(crate) struct Recorded<'a> {
    kind: WorkloadKind,
    params: serde_json::Value,
    label: String,
    options: &'a RunArgs,
    store: Option<Store>,
    mpi: Option<UnderMpi>,
    /// Whether this process prints the ending (under MPI rank 0 alone): only it summarises.
    speaks: bool,
}

/// A one-cell engine command that ran: the results, their summary and the warnings.
pub(crate) struct EngineRan {
    /// The results.
    pub result: AdhocResult,
    /// Their summary, metric by metric.
    pub sums: Vec<MetricSummary>,
    /// The warnings about them ([`summarize`]).
    pub warnings: Vec<String>,
}

impl<'a> Recorded<'a> {
    /// `kind` run with `params` under `label`, with the common `options`, stored in `store`
    /// ([`store_for`]; under MPI rank 0's, none on the others).
    pub fn new(
        kind: WorkloadKind,
        params: &impl Serialize,
        label: String,
        options: &'a RunArgs,
        store: Option<Store>,
    ) -> Result<Self> {
        Ok(Recorded {
            kind,
            params: serde_json::to_value(params)?,
            label,
            options,
            store,
            mpi: None,
            speaks: true,
        })
    }

    /// The same run by every rank of the MPI job `mpi`: stored with the job among its
    /// parameters, its command line with `mpiexec -n N` in front; `root`: this rank prints
    /// the ending (the others neither summarise nor probe the machine for its warnings).
    #[cfg(feature = "mpi")]
    pub fn under(self, mpi: &UnderMpi, root: bool) -> Self {
        let mpi = Some(mpi.clone());
        Recorded {
            mpi,
            speaks: root,
            ..self
        }
    }

    /// What the run document says ran: this engine with these parameters in `dir`,
    /// `--repeat` times (under MPI, by the job's ranks).
    pub fn subject<'d>(&self, dir: &'d Path) -> Result<Subject<'d>> {
        let s = Subject::new(self.kind, dir, &self.params, self.options.repeat)?;
        Ok(s.under(self.mpi.as_ref()))
    }

    /// How the repetition loop records it: its name, parameters (under MPI with the job) and
    /// label, the command line as typed (under MPI with the launcher and the number of ranks
    /// in front), the common options and `steps`, which shows where the run is.
    fn adhoc<'s>(&'s mut self, steps: Option<&'s dyn Steps>) -> AdhocOptions<'s> {
        let (run, mpi, typed) = (self.options, self.mpi.as_ref(), super::command_line());
        AdhocOptions {
            repeat: run.repeat,
            disturbed: run.disturbed,
            settle: run.settle,
            timeline: run.timeline,
            steps,
            store: self.store.as_mut(),
            name: self.kind.as_str().into(),
            command_line: match mpi {
                Some(m) => format!("mpiexec -n {} {typed}", m.ranks),
                None => typed,
            },
            params: mpi.map_or_else(|| self.params.clone(), |m| m.stored(&self.params)),
            label: self.label.clone(),
        }
    }

    /// Run it as the cells of an IOzone sweep (each `--repeat` times, interleaved; stored
    /// unless `--no-store`); the engine summarises them per point.
    pub fn run_cells<W: Workload>(
        &mut self,
        cells: &mut [AdhocCell<W>],
        target: &Target,
        (obs, steps): (&dyn Observer, Option<&dyn Steps>),
        on_rep: CellHook<'_, W>,
    ) -> Result<CellsResult> {
        adhoc::run_cells(self.adhoc(steps), cells, target, obs, on_rep)
    }

    /// Run it (`--repeat` times, stored unless `--no-store`) and summarise it. `steps` shows
    /// where the run is (`rep 2/3 · ETA 00:11`).
    pub fn run<W: Workload>(
        &mut self,
        engine: &mut W,
        target: &Target,
        obs: &dyn Observer,
        steps: Option<&dyn Steps>,
        on_rep: &mut dyn FnMut(u32, &[Metric], &W),
    ) -> Result<EngineRan> {
        let result = adhoc::run(self.adhoc(steps), engine, target, obs, on_rep)?;
        let (kind, params, min_phase) = (self.kind, &self.params, self.options.min_phase);
        let (sums, warnings) = match self.speaks {
            true => summarize(&result.reps, min_phase, kind, params),
            false => (Vec::new(), Vec::new()),
        };
        Ok(EngineRan {
            result,
            sums,
            warnings,
        })
    }
}

impl EngineRan {
    /// What every one-cell engine command prints at its end: with `json` the run document
    /// of schema `schema` (the subject and the engine's part from `doc`), else the engine's
    /// own lines and the tail (`text`, given the ending). The run's error stays in
    /// `result.error`, for the command to return once it has said the rest.
    pub fn print<'d, P: Serialize>(
        &self,
        schema: &'static str,
        json: bool,
        doc: impl FnOnce() -> Result<(Subject<'d>, P)>,
        text: impl FnOnce(&Ending<'_>),
    ) -> Result<()> {
        let end = self.result.ending(schema, &self.warnings);
        if json {
            let (subject, part) = doc()?;
            let measured = rundoc::measured(&self.result.reps, &self.sums);
            rundoc::print(&end.document(subject, measured, part))
        } else {
            text(&end);
            Ok(())
        }
    }
}

impl Ending<'_> {
    /// The run document: the envelope (`subject`, the repetitions and their summary as
    /// [`rundoc::measured`] gives them) with the engine's own part.
    pub fn document<'d, P: Serialize>(
        &'d self,
        subject: Subject<'d>,
        measured: Measured,
        part: P,
    ) -> RunDoc<'d, P> {
        let (repetitions, summary) = measured;
        RunDoc {
            schema: self.schema,
            fslab_version: env!("CARGO_PKG_VERSION"),
            subject,
            outcome: Outcome::Ran(Ran {
                dry_run: false,
                run_id: self.run_id,
                warnings: &self.warnings,
                environment: self
                    .environment
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
                error: self.error.map(|e| format!("{e:#}")),
                repetitions,
                summary,
            }),
            part,
        }
    }

    /// Print the warnings, then say where the run is stored (`what` follows the command,
    /// e.g. " --all (all metrics)"), unless `quiet` (`-q`: the warnings alone).
    pub fn print_tail(&self, stored: StoredLine, what: &str, quiet: bool) {
        for w in &self.warnings {
            crate::outln!("warning: {w}");
        }
        if quiet || (stored == StoredLine::OnSuccess && self.error.is_some()) {
            return;
        }
        if let Some(id) = self.run_id {
            eprintln!("stored as run {id}: fslab show {id}{what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::adaptive::Fate;

    fn run(events: &[(Option<&str>, Fate)]) -> Disturbance {
        let mut d = Disturbance::default();
        for (line, fate) in events {
            d.add(*line, *fate);
        }
        d
    }

    #[test]
    fn the_summary_counts_disturbed_repetitions_and_names_a_busy_machine() {
        let io = "2.4 GiB of other I/O on vda";
        let cpu = "other processes used 0.52 CPU-s (13.0% of all CPUs)";
        assert_eq!(disturbed_warning(&run(&[(None, Fate::Count)])), None);
        // One of three, kept: the count, the worst, and both remedies.
        let one = run(&[
            (None, Fate::Count),
            (Some(cpu), Fate::Count),
            (None, Fate::Count),
        ]);
        assert_eq!(
            disturbed_warning(&one).unwrap(),
            "1 of 3 repetitions were disturbed by other activity (1 counted; the worst: other processes used 0.52 CPU-s (13.0% of all CPUs)); --settle waits for a quiet machine, --disturbed repeat re-runs them"
        );
        // Every one: the machine was busy, the worst is the largest other I/O.
        let all = run(&[
            (Some(cpu), Fate::Rerun),
            (Some(io), Fate::Rerun),
            (Some(cpu), Fate::Count),
            (Some(cpu), Fate::Count),
        ]);
        let w = disturbed_warning(&all).unwrap();
        assert!(
            w.starts_with("the machine was busy: 4 of 4 repetitions were disturbed by other activity (2 counted, 2 re-run; the worst: 2.4 GiB of other I/O on vda); quiet the machine"),
            "{w}"
        );
        assert!(!w.contains("--disturbed repeat"), "{w}");
        // Under repeat, not busy: no advice to use repeat.
        let some = run(&[
            (Some(io), Fate::Rerun),
            (None, Fate::Count),
            (None, Fate::Count),
            (None, Fate::Count),
        ]);
        let w = disturbed_warning(&some).unwrap();
        assert!(
            w.ends_with("--settle waits for a quiet machine before each repetition"),
            "{w}"
        );
    }
}
