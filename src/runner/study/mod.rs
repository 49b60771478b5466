//! Running a study: provision every cell for real, run every workload on it with the cache
//! policy, in the chosen order, until each series' stopping rule or the budget says stop,
//! storing every repetition in one transaction as it completes.
//!
//! Failure semantics: a cell whose provisioning or remount fails is recorded failed with its
//! error; a repetition that fails fails its series (and marks the cell failed); the study
//! goes on with the other cells. Ctrl-C stops at the next safe point, the repetition in
//! flight is dropped (not stored), everything is unmounted and detached, and
//! `--resume` continues later with exactly the planned repetitions.
//!
//! The parts: `setup.rs` records the study or finds it again for `--resume` (and the series
//! with what earlier runs stored), `schedule.rs` is the loop that picks the next repetition
//! (order, budget, stopping rule, ETA), `cells.rs` hands cells to the provisioner and takes
//! them down, `attempt.rs` runs one repetition of a series through the one protocol
//! ([`super::telemetry::run_observed`]) and stores it. The display is
//! [`super::progress`].

mod attempt;
mod cells;
pub mod command;
#[cfg(test)]
mod one_loop_tests;
mod recording;
mod schedule;
mod setup;

use super::progress::Progress;
use super::progress::Steps;
use super::repetition::is_interrupt;
use super::series::{Series, SeriesState};
use super::telemetry::Sources;
use crate::metric::Metric;
use crate::plan::{Repetitions, Study};
use crate::provision::exec::Exec;
use crate::provision::state::{self, CleanupReport, WorkDir};
use crate::provision::{Provisioned, Provisioner};
use crate::stats::adaptive::{Disturbed, Fate, Rule};
use crate::store::{CellStatus, Store, StudyStatus};
use crate::workload::{Observer, Target, Workload};
use anyhow::{Context, Result};
use command::{Disturbance, Engines, Owned};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run a study.
pub struct StudyRun<'a> {
    /// The validated study.
    pub study: &'a Study,
    /// Where results go.
    pub store: &'a mut Store,
    /// The work directory for images, mounts and state.
    pub workdir: WorkDir,
    /// Runs the external commands.
    pub exec: Arc<dyn Exec>,
    /// Continue the newest unfinished study of this name.
    pub resume: bool,
    /// The command line as typed.
    pub command_line: String,
    /// Show progress on stderr.
    pub progress: bool,
    /// Under `[repetitions] detect`, the repetitions a series needs by the spread an earlier
    /// study of this name measured of it, keyed by (cell index, workload index); the others
    /// run the study's `min`.
    pub design: std::collections::BTreeMap<(usize, usize), u32>,
    /// `--wait-quiet`: wait up to this long for a quiet machine before the study starts
    /// ([`busy_check`]).
    pub wait_quiet: Option<Duration>,
}

/// What a study run ended with.
#[derive(Debug)]
pub struct Outcome {
    /// The study id in the store.
    pub study_id: i64,
    /// Complete, partial, failed or interrupted.
    pub status: StudyStatus,
    /// Failed cells: label and error.
    pub failed_cells: Vec<(String, String)>,
    /// Number of cells.
    pub total_cells: usize,
    /// What the start-of-run cleanup removed (left by killed runs).
    pub cleaned: CleanupReport,
    /// Teardown problems, if any (run `fslab cleanup`).
    pub leftovers: Vec<String>,
    /// Whether this run continued an earlier one.
    pub resumed: bool,
}

/// A cell in use: its file system (a study's) or the command's directory, and its engines.
struct Live {
    /// The file system made for it; `None` on an engine command's directory.
    prov: Option<Provisioned>,
    /// Where its repetitions run.
    target: Target,
    engines: BTreeMap<usize, Box<dyn Workload>>,
    /// Warm-up repetitions run per workload since the cell was (re)provisioned.
    warmed: BTreeMap<usize, u32>,
    /// The cell's devices and file-system counters, for telemetry.
    sources: Sources,
    /// Whether a counted repetition ran on this file system (`fresh` makes a new one).
    used: bool,
}

/// Where a run's cells stand.
enum Ground<'a> {
    /// A study's: a file system made for each cell, its engines built from the study's specs.
    Made {
        study: &'a Study,
        prov: Provisioner,
        exec: Arc<dyn Exec>,
    },
    /// An engine command's: the directory it was given, with the engine it built per cell.
    Dir {
        target: Target,
        sources: Sources,
        engines: &'a mut dyn Engines,
        /// The entries its repetitions make, recorded before they exist.
        owned: Owned,
    },
}

/// How the loop speaks: a study's display, or an engine command's counters on stderr.
enum Show<'a> {
    Study(Progress),
    Command {
        obs: &'a dyn Observer,
        steps: Option<&'a dyn Steps>,
    },
}

struct Runner<'a> {
    // Dropped first on an early error: cells are taken down before the provisioner's
    // tmpfs and directories (fields drop in declaration order).
    live: BTreeMap<usize, Live>,
    ground: Ground<'a>,
    /// The run's name, repetition policy, and its cells' and workloads' labels.
    name: String,
    reps: Repetitions,
    cell_labels: Vec<String>,
    store: &'a mut Store,
    study_id: i64,
    series: Vec<Series>,
    cell_ids: Vec<i64>,
    wl_ids: Vec<i64>,
    cell_errors: BTreeMap<usize, String>,
    order_index: u32,
    show: Show<'a>,
    spent_before: f64,
    started: Instant,
    rule: Rule,
    leftovers: Vec<String>,
    /// Per cell, the metrics of every counted repetition, in order.
    counted: Vec<Vec<Vec<Metric>>>,
    /// The repetitions other activity disturbed.
    disturbance: Disturbance,
    /// The error that ended an engine command (its first failure ends it).
    failure: Option<anyhow::Error>,
}

enum RepEnd {
    Ok,
    /// A disturbed repetition was stored as left out; the series runs it again.
    Rerun,
    /// The repetition failed; `cell_level` when the cell itself is unusable.
    Failed {
        err: anyhow::Error,
        cell_level: bool,
    },
    Interrupted,
}

impl Show<'_> {
    /// A line between the bars (a study's) or on stderr (`fslab: …`).
    fn println(&self, msg: &str) {
        match self {
            Show::Study(p) => p.println(msg),
            Show::Command { .. } => eprintln!("fslab: {msg}"),
        }
    }

    /// How the disturbed policy is set where this run was asked for.
    fn policy(&self, p: Disturbed) -> String {
        match self {
            Show::Study(_) => format!("disturbed = \"{}\"", p.as_str()),
            Show::Command { .. } => format!("--disturbed {}", p.as_str()),
        }
    }

    fn observer(&self) -> &dyn Observer {
        match self {
            Show::Study(p) => p,
            Show::Command { obs, .. } => *obs,
        }
    }
}

/// The line a disturbed repetition gets by its fate (`who`: which repetition; `reruns`: how
/// many its series re-ran already); `None` for one that counts and was quiet, or counts
/// under a policy that keeps them all.
fn fate_line(
    fate: Fate,
    who: &str,
    why: &str,
    policy: (Disturbed, String),
    reruns: u32,
) -> Option<String> {
    match fate {
        Fate::Rerun => Some(format!(
            "{who}: disturbed ({why}); stored, left out, and run again ({})",
            policy.1
        )),
        Fate::Drop => Some(format!(
            "{who}: disturbed ({why}); stored and left out ({})",
            policy.1
        )),
        Fate::Count if policy.0 == Disturbed::Repeat && !why.is_empty() => Some(format!(
            "{who}: disturbed ({why}); kept: this series has re-run {reruns} repetitions, its limit"
        )),
        Fate::Count => None,
    }
}

/// The study recorded anew, or found again for `--resume`, and claimed for this process:
/// the claim is held until the run returns, however it returns (an early `?` included); a
/// run killed outright leaves a claim of a dead process, which the next run takes over.
fn open(r: &mut StudyRun<'_>) -> Result<(setup::Ids, crate::store::Claim)> {
    let study = r.study;
    let nothing_stored = r.store.latest_study_named(study.name())?.is_none();
    if r.resume && nothing_stored {
        // Killed before its plan was stored (one transaction): nothing was measured yet.
        eprintln!(
            "note: no study named '{}' in {} yet; starting it",
            study.name(),
            r.store.path().display()
        );
    }
    let (ids, claim) = if r.resume && !nothing_stored {
        setup::open_existing(r.store, &r.workdir, r.exec.as_ref(), study)?
    } else {
        setup::create_new(r.store, r.exec.as_ref(), &r.workdir, study, &r.command_line)?
    };
    if let Some(gone) = claim.taken_over() {
        eprintln!(
            "fslab: note: study {} was claimed by process {} on this host since {}, which is gone; taking it over",
            ids.0, gone.pid, gone.claimed_at
        );
    }
    Ok((ids, claim))
}

/// Run (or resume) a study.
pub fn run(mut r: StudyRun<'_>) -> Result<Outcome> {
    let study = r.study;
    let ((study_id, cell_ids, wl_ids, seed, resumed), _claim) = open(&mut r)?;
    if !crate::runner::guest::inside() {
        busy_check(r.wait_quiet, r.workdir.root());
    }
    let trials = r.store.trials(study_id)?;
    let rule = study.repetitions.rule();
    let series = setup::load_series(
        r.store,
        study,
        study_id,
        (&cell_ids, &wl_ids),
        &trials,
        (&rule, &r.design),
    )?;
    let spent_before: f64 = trials.iter().map(|t| t.window.wall_seconds).sum();

    // What killed runs left, then our own run directory.
    let cleaned = state::cleanup(&r.workdir, r.exec.as_ref(), Duration::from_secs(10));
    let (run_dir, prov) = provisioner(&r, study_id)?;
    let progress = schedule::display(r.progress, &series, &rule);
    let order_index = r.store.next_order_index(study_id)?;
    let mut runner = Runner {
        name: study.name().to_string(),
        reps: study.repetitions.clone(),
        cell_labels: study.cells.iter().map(|c| c.label.clone()).collect(),
        ground: Ground::Made {
            study,
            prov,
            exec: r.exec.clone(),
        },
        store: r.store,
        study_id,
        series,
        live: BTreeMap::new(),
        counted: vec![Vec::new(); cell_ids.len()],
        cell_ids,
        wl_ids,
        cell_errors: BTreeMap::new(),
        order_index,
        show: Show::Study(progress),
        spent_before,
        started: Instant::now(),
        rule,
        leftovers: Vec::new(),
        disturbance: Disturbance::default(),
        failure: None,
    };
    let interrupted = runner.main_loop(seed)?;
    let status = runner.end(interrupted)?;
    if let Err(e) = run_dir.finish() {
        runner.leftovers.push(e.to_string());
    }
    Ok(Outcome {
        study_id,
        status,
        failed_cells: runner
            .cell_errors
            .iter()
            .map(|(&c, e)| (runner.cell_labels[c].clone(), e.clone()))
            .collect(),
        total_cells: study.cells.len(),
        cleaned,
        leftovers: runner.leftovers,
        resumed,
    })
}

/// This run's directory in the work directory (it names the results database) and the
/// provisioner that makes the study's cells in it.
fn provisioner(
    r: &StudyRun<'_>,
    study_id: i64,
) -> Result<(Arc<crate::provision::state::RunDir>, Provisioner)> {
    let run_dir = r
        .workdir
        .start_run(Some(study_id))
        .context("preparing the work directory")?;
    run_dir
        .set_db(r.store.path())
        .context("preparing the work directory")?;
    let prov = Provisioner::new(
        r.exec.clone(),
        run_dir.clone(),
        r.study.allow_format(),
        r.study.ram_bytes(),
    )?
    .with_guest_devices(super::guest::devices_from_env()?);
    Ok((run_dir, prov))
}

impl Runner<'_> {
    /// Take everything down, whatever happened, and store the final statuses: the study's
    /// (returned), and of the cells whose series were all done before this run started.
    fn end(&mut self, interrupted: bool) -> Result<StudyStatus> {
        // An engine command's repetition a signal stopped is its failure.
        let interrupted = interrupted || self.failure.as_ref().is_some_and(is_interrupt);
        if let Show::Study(p) = &self.show {
            p.finish();
        }
        let cells: Vec<usize> = self.live.keys().copied().collect();
        for c in cells {
            self.retire(c, interrupted)?;
        }
        if let Ground::Made { prov, .. } = &mut self.ground {
            if let Err(e) = prov.finish() {
                self.leftovers.push(e.to_string());
            }
        }
        // A cell whose series were all done before this run started is never brought up, so
        // nothing above sets its status: a run killed while tearing it down left it `running`.
        // An engine command's cells its first failure left unreached fail with it.
        for cell in 0..self.cell_ids.len() {
            let done = self
                .series
                .iter()
                .filter(|s| s.cell == cell)
                .all(|s| matches!(s.state, SeriesState::Done(_)));
            let id = self.cell_ids[cell];
            match self.cell_errors.get(&cell) {
                None if done => self.store.set_cell_status(id, CellStatus::Complete, None)?,
                Some(e) if matches!(self.ground, Ground::Dir { .. }) => self
                    .store
                    .set_cell_status(id, CellStatus::Failed, Some(e))?,
                _ => {}
            }
        }
        let any_ok = self
            .series
            .iter()
            .any(|s| matches!(s.state, SeriesState::Done(_)))
            || self.counted.iter().any(|c| !c.is_empty());
        let status = if interrupted {
            StudyStatus::Interrupted
        } else if self.cell_errors.is_empty() {
            StudyStatus::Complete
        } else if any_ok {
            StudyStatus::Partial
        } else {
            StudyStatus::Failed
        };
        self.store.set_study_status(self.study_id, status)?;
        Ok(status)
    }
}

/// How long the look before a study watches the machine.
const BUSY_LOOK: std::time::Duration = std::time::Duration::from_secs(2);

/// Before a study starts (its claim taken, nothing provisioned), one look at the machine with the interference detector's own
/// signals (other I/O on the work directory's device, CPU steal, load beyond the CPUs, other
/// processes' CPU) over [`BUSY_LOOK`]: a busy machine gets one line and the study goes on;
/// with `--wait-quiet` it waits up to that long for a quiet window first, and says how long
/// it waited or that it gave up.
pub fn busy_check(wait: Option<std::time::Duration>, workdir: &std::path::Path) {
    use crate::units::fmt_duration;
    // The work directory may not exist yet: the device under its nearest existing ancestor.
    let at = workdir
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(std::path::Path::new("/"));
    let sources = crate::runner::telemetry::Sources::of(crate::telemetry::Devices::backing_of(at));
    match wait {
        None => {
            let look = sources.wait_quiet(std::time::Duration::ZERO, BUSY_LOOK);
            if let Some(s) = look.filter(|s| !s.quiet) {
                eprintln!(
                    "fslab: the machine is busy now ({}): its repetitions would be disturbed; quiet it, or run with --wait-quiet to wait for quiet first (going on)",
                    s.last
                );
            }
        }
        Some(max) => {
            eprintln!(
                "fslab: waiting up to {} for a quiet machine (--wait-quiet)",
                fmt_duration(max)
            );
            match sources.wait_quiet(max, BUSY_LOOK) {
                Some(s) if s.quiet => eprintln!(
                    "fslab: the machine was quiet after {}; starting",
                    fmt_duration(s.waited)
                ),
                Some(s) => eprintln!(
                    "fslab: the machine is still busy after {} ({}): going on; its repetitions will be marked disturbed",
                    fmt_duration(s.waited),
                    s.last
                ),
                None => eprintln!(
                    "fslab: warning: the kernel's counters could not be read: not waiting for quiet"
                ),
            }
        }
    }
}
