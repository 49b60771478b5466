//! Running fio for one repetition: `fio --output-format=json+ --directory=<cell>/fslab-fio
//! [options] -` with the job file on standard input and the working directory inside the
//! cell, then its JSON read back ([`super::output`]).
//!
//! fio measures itself; fslab only starts it, waits and reads what it printed. Its data
//! files live in `fslab-fio/` inside the target, made before the run and removed at cleanup
//! (recorded first, so `fslab cleanup` can remove what a killed run left).

use super::output::{self, FioRun};
use super::status;
use super::{FioParams, JobFile};
use crate::metric::{Histogram, Metric};
use crate::process::{RealSpawn, Spawn};
use crate::safe::cage::Cage;
use crate::vocab::EntryKind;
use crate::workload::{Creates, Observer, Requirements, Target, Workload};
use anyhow::{anyhow, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// The kernel's cache-drop control file.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// The directory fio works in, inside the target.
pub const FIO_DIR: &str = "fslab-fio";

/// The fio binary: `$FSLAB_FIO` if set, else `fio` on the `PATH`.
pub fn fio_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("FSLAB_FIO") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            crate::bail_usage!(
                "FSLAB_FIO={} is not a file; point it at a fio binary or unset it",
                p.display()
            );
        }
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("fio"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            crate::error::usage(
                "fio is not installed; install Debian's fio package (apt-get install fio, or scripts/install-deps)",
            )
        })
}

/// The first lines fio wrote to stderr that say what is wrong, as one line.
fn fio_message(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(':') && !l.starts_with("valid values"))
        .filter(|l| !l.ends_with("dropped"))
        .take(2)
        .collect();
    if lines.is_empty() {
        "no message".into()
    } else {
        lines.join("; ")
    }
}

/// One of fio's verdicts: the job text, the pass-through options, the refusal (if any).
type Verdict = (String, Vec<String>, Option<String>);

/// fio's verdicts on the jobs judged so far in this process, by job text and options: a
/// study's cells share their jobs, so each distinct job is parsed once.
static JUDGED: std::sync::Mutex<Vec<Verdict>> = std::sync::Mutex::new(Vec::new());

/// [`JUDGED`], locked (a panic elsewhere leaves the verdicts usable).
fn judged() -> std::sync::MutexGuard<'static, Vec<Verdict>> {
    JUDGED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Let fio judge the job file (`fio --parse-only`, in the cage with nothing writable): a
/// usage error with fio's own message when it refuses it. Each distinct job (text and
/// options) is judged once per process.
pub fn parse_only(job: &JobFile, extra: &[String]) -> Result<()> {
    let text = job.render();
    let known = judged()
        .iter()
        .find(|(t, e, _)| *t == text && e == extra)
        .map(|(_, _, v)| v.clone());
    let verdict = match known {
        Some(v) => v,
        None => {
            let v = judge(&RealSpawn, &text, extra)?;
            judged().push((text, extra.to_vec(), v.clone()));
            v
        }
    };
    verdict.map_or(Ok(()), |msg| Err(crate::error::usage(msg)))
}

/// How many verdicts on the job `text` this process keeps (fio judged it that many times).
pub fn times_judged(text: &str) -> usize {
    judged().iter().filter(|(t, _, _)| t == text).count()
}

/// Run `fio --parse-only` on `text`: `None` when fio accepts it, else its refusal.
fn judge(spawn: &dyn Spawn, text: &str, extra: &[String]) -> Result<Option<String>> {
    let fio = fio_binary()?;
    let mut cmd = Command::new(&fio);
    cmd.arg("--parse-only").args(extra).arg("-");
    cmd.current_dir("/");
    let cage = Cage::job(Vec::new(), PathBuf::from("/"));
    cage.apply(&mut cmd, &crate::safe::procs::my_owner_mark())?;
    let out = spawn
        .run(cmd, text.as_bytes())
        .map_err(|e| cage_error(&fio, e))?;
    if out.status == 0 {
        return Ok(None);
    }
    let mut said = out.stderr;
    said.push_str(&out.stdout);
    Ok(Some(format!(
        "fio rejects the job (fio --parse-only): {}; fix the job",
        fio_message(&said)
    )))
}

/// The error of a fio that could not be started in its cage.
fn cage_error(fio: &Path, e: std::io::Error) -> anyhow::Error {
    if crate::safe::cage::caged() {
        anyhow!(
            "cannot start {} in its cage ({e}): as root fslab runs fio only in private mount and PID namespaces with a read-only tree, which needs Linux 5.12 or later (mount_setattr) and permission to make namespaces (a container may withhold it)",
            fio.display()
        )
    } else {
        anyhow!("cannot start {}: {e}", fio.display())
    }
}

/// The fio engine.
pub struct Fio {
    params: FioParams,
    hists: Vec<Histogram>,
    live: Option<PathBuf>,
    /// The last repetition's run, as fio reported it.
    pub last: Option<FioRun>,
    /// fio's JSON document of the last repetition, verbatim.
    pub last_json: Option<String>,
    /// Where fio is started and caches are dropped.
    spawn: Arc<dyn Spawn>,
    /// The fio binary, when not [`fio_binary`]'s.
    binary: Option<PathBuf>,
}

impl Fio {
    /// An engine for validated parameters.
    pub fn new(params: FioParams) -> Fio {
        Fio {
            params,
            hists: Vec::new(),
            live: None,
            last: None,
            last_json: None,
            spawn: Arc::new(RealSpawn),
            binary: None,
        }
    }

    /// The same engine running the fio binary at `path`.
    pub fn with_binary(mut self, path: PathBuf) -> Fio {
        self.binary = Some(path);
        self
    }

    /// The same engine starting fio and dropping caches through `spawn` (a recording one in
    /// tests).
    pub fn with_spawn(mut self, spawn: Arc<dyn Spawn>) -> Fio {
        self.spawn = spawn;
        self
    }

    fn work_dir(target: &Target) -> PathBuf {
        target.dir().join(FIO_DIR)
    }

    /// fio's arguments for a run in `dir`: JSON+ output, the directory, the pass-through
    /// options, and `-` (the job file comes on standard input).
    pub fn args(&self, dir: &Path) -> Vec<String> {
        let mut a = vec![
            "--output-format=json+".to_string(),
            format!("--directory={}", dir.display()),
        ];
        a.extend(self.params.extra_args.iter().cloned());
        a.push("-".into());
        a
    }

    /// The command line fio runs with (the job file comes on standard input), in its cage:
    /// as root, only `dir` and the allowed directories are writable, and fio (with all it
    /// started) dies with fslab; see `safe::cage`.
    /// With `status`, fio prints its JSON document every second as well (see
    /// [`super::status`]).
    pub fn command(&self, dir: &Path, status: bool) -> Result<Command> {
        let mut c = Command::new(self.binary.clone().map_or_else(fio_binary, Ok)?);
        let mut args = self.args(dir);
        if status {
            args.insert(1, "--status-interval=1".into());
        }
        c.args(args).current_dir(dir);
        let mut writable = vec![dir.to_path_buf()];
        for d in &self.params.allow_outside {
            let real = std::fs::canonicalize(d).map_err(|e| {
                crate::error::usage(format!(
                    "allowed directory {}: {e}; create it or leave it out",
                    d.display()
                ))
            })?;
            // Judged again as resolved: what the cage makes writable is this directory.
            super::check_allowed_dir(&real)?;
            writable.push(real);
        }
        let cage = Cage::job(writable, dir.to_path_buf()).with_io_uring(self.uses_io_uring());
        cage.apply(&mut c, &crate::safe::procs::my_owner_mark())?;
        Ok(c)
    }

    /// Whether a job of it (or an option passed through) names an io_uring engine.
    fn uses_io_uring(&self) -> bool {
        let named = |v: &str| v.contains("io_uring");
        self.params
            .job
            .jobs()
            .iter()
            .any(|j| j.value("ioengine").is_some_and(named))
            || self.params.extra_args.iter().any(|a| named(a))
    }

    fn run_fio(&mut self, dir: &Path, obs: &dyn Observer) -> Result<FioRun> {
        // Its status documents go to `obs` as they arrive; the final one is kept.
        let read = |r: &mut dyn std::io::Read| status::read_stdout(r, obs).text();
        let (cmd, job) = (
            self.command(dir, obs.wants_status())?,
            self.params.job.render(),
        );
        let out = self.spawn.run_reading(cmd, job.as_bytes(), &read);
        let out = out.map_err(|e| cage_error(Path::new("fio"), e))?;
        // A stop request (Ctrl-C, SIGTERM) ends fio early; what it measured until then is
        // not a repetition.
        if crate::signal::interrupted() {
            return Err(anyhow!(crate::signal::Interrupted));
        }
        let (stdout, stderr) = (out.stdout, out.stderr.as_str());
        if out.status != 0 {
            anyhow::bail!(
                "fio failed ({}): {}",
                match out.status {
                    -1 => "killed by a signal".to_string(),
                    n => format!("exit status: {n}"),
                },
                fio_message(&format!(
                    "{stderr}\n{}",
                    stdout.lines().next().unwrap_or("")
                ))
            );
        }
        let run = output::parse(&stdout)?;
        if let Some(j) = run.jobs.iter().find(|j| j.error != 0) {
            anyhow::bail!(
                "fio job {} ended with error {} ({}); see fio's message: {}",
                j.name,
                j.error,
                std::io::Error::from_raw_os_error(j.error as i32),
                fio_message(stderr)
            );
        }
        if run.jobs.iter().all(|j| j.dirs.is_empty()) {
            anyhow::bail!("fio did no I/O; check the job's size and runtime");
        }
        self.last_json = Some(stdout);
        Ok(run)
    }
}

/// `sync`, then drop the page cache, dentries and inodes (root), through `spawn`.
fn drop_caches(spawn: &dyn Spawn) -> Result<()> {
    rustix::fs::sync();
    spawn.write_file(Path::new(DROP_CACHES), "3").map_err(|e| {
        crate::error::usage(format!(
            "cannot drop caches ({e}): writing /proc/sys/vm/drop_caches needs root; run as root or use --cache none"
        ))
    })
}

impl Workload for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }

    fn requirements(&self) -> Requirements {
        let jobs = self.params.job.jobs();
        Requirements {
            bytes: self.params.bytes(),
            // One file per job and process unless nrfiles says more; directories: ours.
            inodes: 1 + jobs
                .iter()
                .map(|j| {
                    let n = |k: &str| j.value(k).and_then(|v| v.parse::<u64>().ok());
                    n("numjobs").unwrap_or(1) * n("nrfiles").or(n("nr_files")).unwrap_or(1)
                })
                .sum::<u64>(),
        }
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        crate::workload::check_writable_dir(target.dir(), "-D")?;
        let dir = Self::work_dir(target);
        if dir.symlink_metadata().is_ok() {
            crate::bail_usage!(
                "{} already exists (left by an earlier run?); remove it or choose another directory with -D",
                dir.display()
            );
        }
        crate::workload::check_fits(target.dir(), self.requirements(), "this fio job")?;
        if self.params.drop_caches {
            drop_caches(self.spawn.as_ref())?;
        }
        Ok(())
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        self.hists.clear();
        let dir = Self::work_dir(target);
        self.live = Some(dir.clone());
        std::fs::create_dir(&dir)
            .map_err(|e| anyhow!("cannot make fio's directory {}: {e}", dir.display()))?;
        obs.phase_started("fio", 0);
        // Named from the start: fio sets up (lays out files) before its first document.
        obs.status(crate::workload::PhaseStatus {
            doing: Some(status::SETTING_UP.to_string()),
            ..Default::default()
        });
        let mut run = self.run_fio(&dir, obs)?;
        obs.phase_finished("fio");
        if let Some(m) = crate::sysinfo::mount_of(target.dir()) {
            if let Some(dev) = Path::new(&m.source).file_name() {
                run.name_data_disk(&dev.to_string_lossy());
            }
        }
        let p = &self.params;
        let metrics = run.metrics(&|job, d| p.large_sequential(job, d));
        self.hists = run.histograms()?;
        self.last = Some(run);
        Ok(metrics)
    }

    fn creates(&self, target: &Target) -> Vec<Creates> {
        let dir = [Self::work_dir(target)];
        Creates::each(super::NAME, EntryKind::Dir, serde_json::Value::Null, dir)
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        match self.live.take() {
            Some(d) if d.exists() => std::fs::remove_dir_all(&d)
                .map_err(|e| anyhow!("could not remove fio's directory {}: {e}", d.display())),
            _ => Ok(()),
        }
    }

    fn take_histograms(&mut self) -> Vec<Histogram> {
        std::mem::take(&mut self.hists)
    }
}
