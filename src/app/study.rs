//! `fslab study plan` and `fslab study run`.

use crate::cli::StudyRunArgs;
use crate::plan::calibration::{self, Side};
use crate::plan::{GuestSpec, Study};
use crate::provision::exec::RealExec;
use crate::provision::guard;
use crate::provision::state::{default_workdir, WorkDir};
use crate::report;
use crate::runner::guest::GuestCalibration;
use crate::runner::study::{self, StudyRun};
use crate::store::{StudyStatus, TrialStatus};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::study_plan::plan;

/// Run `fslab study run`.
pub fn run(a: StudyRunArgs, db: Option<PathBuf>) -> Result<()> {
    let study = Study::load(&a.file)?;
    super::study_plan::check_budget(&study, &a.file)?;
    if !crate::sysinfo::is_root() {
        crate::bail_usage!(
            "fslab study run makes loop devices, file systems and mounts and needs root; run it as root (e.g. sudo -E), or see what it would do with `fslab study plan {}`",
            a.file.display()
        );
    }
    if let Some(spec) = guest_of(&a, &study)? {
        return in_guest(&a, db, &study, spec);
    }
    let (store, outcome) = on_host(&study, &a, db, a.resume)?;
    if std::env::var_os(crate::runner::guest::FSLAB_GUEST_CALIBRATING).is_some() {
        // The guest side of a calibration: the study's own report shows it.
        eprintln!(
            "guest calibration in the guest: study {} ({})",
            outcome.study_id, outcome.status
        );
    } else {
        print_summary(&store, outcome.study_id)?;
        let how = if outcome.resumed {
            "resumed"
        } else {
            "stored as"
        };
        let id = outcome.study_id;
        eprintln!("{how} study {id}: fslab show {id}");
    }
    for (label, err) in &outcome.failed_cells {
        crate::outln!("FAILED cell {label}: {err}");
    }
    leftover_lines(&outcome);
    if outcome.status == StudyStatus::Interrupted {
        // Inside a guest the host says it, naming the user's file (the guest's calibration
        // runs from a file of its own).
        if !crate::runner::guest::inside() {
            resume_hint(&a);
        }
        return Err(anyhow::Error::new(crate::signal::Interrupted));
    }
    if !outcome.failed_cells.is_empty() {
        return Err(anyhow::Error::new(crate::error::CellsFailed {
            failed: outcome.failed_cells.len(),
            total: outcome.total_cells,
            study: outcome.study_id,
        }));
    }
    Ok(())
}

/// How to go on with an interrupted study: the command the user ran, with `--resume`.
fn resume_hint(a: &StudyRunArgs) {
    let guest = a.guest.as_ref().map(|g| format!(" --guest {g}"));
    let guest = guest.unwrap_or_default();
    eprintln!(
        "interrupted: completed repetitions are stored; continue with `fslab study run {} --resume{guest}`",
        a.file.display()
    );
}

fn leftover_lines(outcome: &study::Outcome) {
    for act in &outcome.cleaned.actions {
        eprintln!("cleaned up after a killed run: {act}");
    }
    for l in &outcome.leftovers {
        eprintln!("fslab: warning: {l}");
    }
    if !outcome.leftovers.is_empty() {
        eprintln!("fslab: run `fslab cleanup` to remove what is left");
    }
}

/// Check and run a study on this machine (the host, or inside a guest); the caller prints.
fn on_host(
    study: &Study,
    a: &StudyRunArgs,
    db: Option<PathBuf>,
    resume: bool,
) -> Result<(crate::store::Store, study::Outcome)> {
    // What `study plan` already knows will fail is refused before anything is provisioned
    // or stored: missing tools and kernel support, then the space.
    study.check_machine().map_err(crate::error::usage)?;
    let workdir = WorkDir::new(a.workdir.clone().unwrap_or_else(default_workdir));
    // Inside a guest the ram: devices are the host's images and the work directory is the
    // host's: the host checked both before it booted the guest.
    if !resume && !crate::runner::guest::inside() {
        if let Some(line) =
            crate::plan::space::Space::of(study, workdir.root()).shortfall(workdir.root())
        {
            crate::bail_usage!("{line}");
        }
    }
    // Real devices are checked before anything starts: a refusal is bad input, not a
    // failed cell.
    for dev in study.real_devices() {
        let allowed = study.allow_format().contains(&dev);
        guard::check_formattable(&dev, allowed, &RealExec, guard::Thoroughness::FULL)
            .map_err(|e| crate::error::usage(e.to_string()))?;
    }
    // Under detect: each series' n by the spread an earlier study of this name measured.
    let design = super::study_plan::design(
        study,
        super::study_plan::history(study, db.clone()).0.as_ref(),
    );
    let mut store = super::open_store(db)?;
    if !resume {
        if let Some(prev) = store.latest_study_named(study.name())? {
            if prev.spec_hash == study.hash && prev.status != StudyStatus::Complete {
                eprintln!(
                    "note: study {} of this name is unfinished ({}); this starts a new one — use --resume to continue it",
                    prev.id, prev.status
                );
            }
        }
    }
    let outcome = study::run(StudyRun {
        study,
        store: &mut store,
        workdir,
        exec: Arc::new(RealExec),
        resume,
        command_line: super::command_line(),
        progress: !a.quiet,
        design,
        wait_quiet: a.wait_quiet,
    })?;
    Ok((store, outcome))
}

/// How a calibration study runs with `--resume`: not again when the newest of its name and
/// content is complete (None), resumed when it is unfinished, new otherwise.
fn calibration_mode(db: &Path, study: &Study, resume: bool) -> Result<Option<bool>> {
    if !resume {
        return Ok(Some(false));
    }
    let store = crate::store::Store::open(db)?;
    Ok(match store.latest_study_named(study.name())? {
        Some(r) if r.spec_hash == study.hash && r.status == StudyStatus::Complete => None,
        Some(r) if r.spec_hash == study.hash => Some(true),
        _ => Some(false),
    })
}

/// The host side of `[guest] calibrate`: its calibration study, run on the host before the
/// guest boots. A failure is reported and the study goes on (its report then has no
/// calibration).
fn calibrate_on_host(a: &StudyRunArgs, db: &Path, cal: &Study) -> Result<()> {
    let Some(resume) = calibration_mode(db, cal, a.resume)? else {
        eprintln!(
            "guest calibration on the host: already complete ('{}')",
            cal.name()
        );
        return Ok(());
    };
    // How long it adds, by the plan's model: the guest side takes several times as long.
    let (lo, hi, _) = super::study_plan::estimate(cal, None);
    eprintln!(
        "guest calibration on the host: the study's workloads on {} (about {} here by the plan's model, then the same in the guest; [guest] calibrate = [] turns it off)",
        cal.fs_words(),
        super::study_plan::range_text(lo, hi)
    );
    match on_host(cal, a, Some(db.to_path_buf()), resume) {
        Ok((_, o)) => {
            leftover_lines(&o);
            eprintln!(
                "guest calibration on the host: study {} ({}): fslab report {}",
                o.study_id, o.status, o.study_id
            );
            if o.status == StudyStatus::Interrupted {
                resume_hint(a);
                return Err(anyhow::Error::new(crate::signal::Interrupted));
            }
        }
        Err(e) if crate::signal::interrupted() => {
            resume_hint(a);
            return Err(e);
        }
        Err(e) => eprintln!("fslab: warning: the guest calibration on the host failed: {e:#}"),
    }
    Ok(())
}

/// The guest to run in: `--guest`, else the study file's `[guest]`; never inside a guest.
fn guest_of(a: &StudyRunArgs, study: &Study) -> Result<Option<GuestSpec>> {
    if crate::runner::guest::inside() {
        return Ok(None);
    }
    guest_spec(a.guest.as_deref(), &a.file, study)
}

/// The guest of `--guest` (`guest`), else of the study file's `[guest]` (`file`, `study`).
pub(crate) fn guest_spec(
    guest: Option<&str>,
    file: &Path,
    study: &Study,
) -> Result<Option<GuestSpec>> {
    match guest {
        Some(g) => GuestSpec::parse(g)
            .map(Some)
            .map_err(|e| crate::error::usage(format!("--guest {g}: {e}"))),
        None => study
            .guest()
            .map_err(|e| crate::error::usage(format!("{}: {e}", file.display()))),
    }
}

/// `fslab study run --guest`: boot a User-mode Linux guest that runs this study with this
/// binary into this store, and end with its exit code.
fn in_guest(a: &StudyRunArgs, db: Option<PathBuf>, study: &Study, spec: GuestSpec) -> Result<()> {
    study.check_machine_for(true).map_err(crate::error::usage)?;
    let abs = |p: &std::path::Path| -> Result<PathBuf> {
        Ok(if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir()?.join(p)
        })
    };
    let workdir = abs(&a.workdir.clone().unwrap_or_else(default_workdir))?;
    // Refused before anything is stored, measured or made (the host's calibration
    // included): a host that cannot run the guest, a study whose images and guest do not fit.
    let facts = crate::runner::guest::probe::probe(spec.mem).map_err(crate::error::usage)?;
    if !a.resume {
        let space = crate::plan::space::Space::of(study, &workdir).in_guest(spec.mem);
        if let Some(line) = space.shortfall(&workdir) {
            crate::bail_usage!("{line}");
        }
    }
    // The store is made (or migrated) here, so the guest finds it ready.
    let db = abs(&db.unwrap_or_else(crate::store::default_path))?;
    drop(crate::store::Store::open(&db)?);
    // `fslab --db DB study run`, the guest's command for the study and its calibration.
    let study_run: Vec<String> = vec![
        "--db".into(),
        db.to_string_lossy().into_owned(),
        "study".into(),
        "run".into(),
    ];
    let mut args = study_run.clone();
    args.push(abs(&a.file)?.to_string_lossy().into_owned());
    if a.resume {
        args.push("--resume".into());
    }
    if a.quiet {
        args.push("--quiet".into());
    }
    std::fs::create_dir_all(&workdir)?;
    let side = |s| study.calibration(s).map_err(crate::error::usage);
    let (cal_host, cal_guest) = (side(Side::Host)?, side(Side::Guest)?);
    match &cal_host {
        Some(cal) => calibrate_on_host(a, &db, cal)?,
        // The host's calibration looks at the machine before it starts; without one, here.
        None => study::busy_check(a.wait_quiet, &workdir),
    }
    let calibration = match &cal_guest {
        Some(cal) => calibration_mode(&db, cal, a.resume)?.map(|resume| GuestCalibration {
            study: cal,
            args: study_run,
            options: [resume.then_some("--resume"), a.quiet.then_some("--quiet")]
                .into_iter()
                .flatten()
                .map(String::from)
                .collect(),
            names: (
                calibration::name(study.name(), Side::Host),
                calibration::name(study.name(), Side::Guest),
            ),
        }),
        None => None,
    };
    eprintln!(
        "booting a User-mode Linux guest ({} of memory) for study '{}'",
        spec.mem_word(),
        study.name()
    );
    guest_exit(
        a,
        crate::runner::guest::run(crate::runner::guest::Boot {
            study,
            facts,
            spec,
            args,
            workdir,
            calibration,
        })?,
    )
}

/// What the guest's exit code means for this command.
fn guest_exit(a: &StudyRunArgs, code: u8) -> Result<()> {
    match code {
        0 => Ok(()),
        // Stopped: by its own handler (130), or, asked to stop before its fslab had started
        // far enough to handle the signal, by SIGTERM itself (143: nothing was stored yet).
        c if c == 130 || (c == 143 && crate::signal::interrupted()) => {
            resume_hint(a);
            Err(anyhow::Error::new(crate::signal::Interrupted))
        }
        // The guest's fslab said what happened; exit as it did.
        c => Err(anyhow::Error::new(crate::error::Collective {
            code: c,
            message: String::new(),
        })),
    }
}

/// The study's report (tables of the articles' layout, comparisons against each factor's
/// first level, stop reasons, warnings), as `fslab report ID` prints it.
///
/// A study with no completed repetition yet (interrupted at once, every cell failed) has
/// nothing to report: that is said in one line and the exit code is decided by what
/// happened (130, 1), not by the empty report.
fn print_summary(store: &crate::store::Store, id: i64) -> Result<()> {
    let completed = store
        .load(id)?
        .is_some_and(|d| d.trials.iter().any(|t| t.status == TrialStatus::Ok));
    if !completed {
        eprintln!("study {id} has no completed repetitions yet: no report to print");
        return Ok(());
    }
    let p = report::Presentation {
        width: super::report::text_width(None, false),
        ..report::Presentation::default()
    };
    super::report::print_table(store, id, &p)
}
