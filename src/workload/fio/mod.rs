//! fio inside fslab: the real fio (Debian's `fio` package) run once per repetition on the
//! mounted cell, its `json+` output stored as fslab metrics and latency histograms.
//!
//! fslab does not re-implement fio and adds nothing to its measurement (fio times itself).
//! What fslab adds is around it: the job checked before anything is provisioned
//! (`fio --parse-only`, paths that would write outside the cell, the data set against the
//! device), fio's `directory` set to a directory of its own inside the cell, a cage in which
//! fio can write nothing else (`safe::cage`), the cache policy before every repetition, and
//! the store. See `doc/fio.md`.

mod def;
pub use def::{CAPS, NAME};
pub mod engine;
pub mod jobfile;
pub mod output;
pub mod paths;
pub mod status;

pub use engine::{Fio, FIO_DIR};
pub use jobfile::JobFile;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Blocks of at least this many bytes make a sequential job's headline its throughput.
pub const LARGE_BLOCK: u64 = 128 * 1024;

/// A value of a fio option in a study file: a string (`"4k"`), an integer or a boolean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FioValue {
    /// `true` sets a flag option (`time_based`); `false` leaves it out.
    Bool(bool),
    /// An integer (`iodepth = 16`).
    Int(i64),
    /// Anything else, as fio reads it (`bs = "4k"`).
    Str(String),
}

impl FioValue {
    /// The value as fio reads it, a boolean as `1` or `0`.
    fn value(&self) -> String {
        match self {
            FioValue::Bool(b) => u8::from(*b).to_string(),
            FioValue::Int(i) => i.to_string(),
            FioValue::Str(s) => s.clone(),
        }
    }

    /// The option's line, `key=value` or `key`; `None` for `false`.
    fn line(&self, key: &str) -> Option<String> {
        match self {
            FioValue::Bool(b) => b.then(|| key.to_string()),
            v => Some(format!("{key}={}", v.value())),
        }
    }
}

/// `allow_outside_cell`: the directories outside the cell fio may write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowOutside {
    /// `false` (none), or `true`, which fslab no longer accepts: it does not say where.
    Flag(bool),
    /// The directories.
    Dirs(Vec<PathBuf>),
}

impl Default for AllowOutside {
    fn default() -> Self {
        AllowOutside::Flag(false)
    }
}

impl AllowOutside {
    fn is_none(&self) -> bool {
        matches!(self, AllowOutside::Flag(false))
    }

    /// The directories, checked: `true` is refused (it names no directory), each must be
    /// absolute.
    pub fn dirs(&self) -> Result<Vec<PathBuf>> {
        match self {
            AllowOutside::Flag(false) => Ok(Vec::new()),
            AllowOutside::Flag(true) => crate::bail_param!(
                "{{allow_outside_cell=true}} does not say where fio may write; list the directories instead, {{allow_outside_cell=[\"/scratch/fio\"]}} (fio runs in a cage where everything else is read-only)"
            ),
            AllowOutside::Dirs(d) => {
                d.iter().map(|p| check_allowed_dir(p).map(|()| p.clone())).collect()
            }
        }
    }
}

/// A directory fio may write outside the cell: absolute, and not `/`, `/dev`, `/proc` or
/// `/sys` (the cage replaces or protects those) — judged on the path as written and on the
/// directory it resolves to (`..` and symbolic links followed), so `/tmp/x/../../sys` or a
/// link to `/sys` is refused like `/sys`.
pub fn check_allowed_dir(p: &Path) -> Result<()> {
    let resolved = std::fs::canonicalize(p).ok();
    let bad = |q: &Path| {
        q == Path::new("/") || ["/dev", "/proc", "/sys"].iter().any(|r| q.starts_with(r))
    };
    let bad_root = bad(p) || resolved.as_deref().is_some_and(bad);
    if !p.is_absolute() || bad_root {
        crate::bail_param!(
            "{{allow_outside_cell=}} {}: give an absolute directory (not /, /dev, /proc or /sys) that fio may write",
            p.display()
        );
    }
    Ok(())
}

/// Where the job comes from: a job file or an inline table of sections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JobSource {
    /// A fio job file (in a study: relative to the study file).
    File(PathBuf),
    /// `[workload.job]` with `[workload.job.global]` and one table per job.
    Inline(toml::Table),
}

/// The fio options a study may set on the workload (and so in a factor), each a field of
/// [`FioSpec`], written once here: [`FioSpec::overrides`] follows the list.
macro_rules! fio_spec {
    ($($opt:ident),+ $(,)?) => {
        /// A fio workload as written in a study file.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FioSpec {
            /// Label in reports; default `fio <job file>` or `fio <jobs>`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub label: Option<String>,
            /// The job: `job = "jobs/randread.fio"` or `[workload.job]`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub job: Option<JobSource>,
            /// Directories outside the cell fio may also write (absolute): the job may name
            /// files there, and fio's cage leaves them writable. Raw devices (`/dev/…`) are
            /// refused all the same. Default none.
            #[serde(default, skip_serializing_if = "AllowOutside::is_none")]
            pub allow_outside_cell: AllowOutside,
            $(
                #[doc = concat!(
                    "`", stringify!($opt), "`: a fio option applied to every job (a workload ",
                    "parameter: factors may set it)."
                )]
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $opt: Option<FioValue>,
            )+
        }

        impl FioSpec {
            /// The overrides that are set, in the order of the list: applied to every job
            /// of the job file in this order.
            pub fn overrides(&self) -> Vec<(&'static str, &FioValue)> {
                [$((stringify!($opt), self.$opt.as_ref())),+]
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, v?)))
                    .collect()
            }
        }
    };
}

fio_spec! {
    ioengine,
    rw,
    rwmixread,
    bs,
    iodepth,
    numjobs,
    size,
    filesize,
    nrfiles,
    direct,
    fsync,
    end_fsync,
    time_based,
    runtime,
    ramp_time,
    group_reporting,
}

impl FioSpec {
    /// The label, or `fio FILE` / `fio JOB, JOB` with the overrides.
    pub fn label(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let mut s = match &self.job {
            Some(JobSource::File(p)) => format!("fio {}", p.display()),
            Some(JobSource::Inline(t)) => {
                let jobs: Vec<&str> = t
                    .keys()
                    .map(String::as_str)
                    .filter(|k| *k != "global")
                    .collect();
                format!("fio {}", jobs.join(", "))
            }
            None => "fio".into(),
        };
        for l in self.overrides().into_iter().filter_map(|(k, v)| v.line(k)) {
            s.push_str(&format!(", {l}"));
        }
        s
    }

    /// The job file this spec runs, overrides applied (reads the file; does not run fio).
    pub fn job_file(&self) -> Result<(JobFile, String)> {
        let (mut jf, source) = match &self.job {
            None => crate::bail_param!(
                "a fio workload needs a job: {{job=\"jobs/NAME.fio\"}} (relative to the study file) or a [workload.job] table"
            ),
            Some(JobSource::File(p)) => (read_job_file(p)?, p.display().to_string()),
            Some(JobSource::Inline(t)) => (inline_job(t)?, "inline [workload.job]".to_string()),
        };
        for (k, v) in self.overrides() {
            jf.set_everywhere(k, &v.value());
        }
        Ok((jf, source))
    }

    /// Validated engine parameters: the job read and checked (paths, `fio --parse-only`).
    pub fn to_params(&self) -> Result<FioParams> {
        let (job, source) = self.job_file()?;
        let p = FioParams {
            job,
            source,
            allow_outside: self.allow_outside_cell.dirs()?,
            ..FioParams::default()
        };
        p.validate()?;
        Ok(p)
    }
}

/// Read and parse a job file, at most [`crate::safe::input::JOB_LIMIT`] with what it
/// includes (`include` paths relative to its directory, put in place).
pub fn read_job_file(p: &Path) -> Result<JobFile> {
    use crate::safe::input::{read_text_limited, JOB_LIMIT};
    let text = read_text_limited(p, JOB_LIMIT, "a fio job with its includes").map_err(|e| {
        crate::error::usage(format!(
            "cannot read fio job file {}: {e}; check the path (in a study it is relative to the study file)",
            p.display()
        ))
    })?;
    JobFile::parse(&text, p.parent())
        .map_err(|e| crate::error::usage(format!("fio job file {}: {e}", p.display())))
}

/// The job file of an inline `[workload.job]`: `global` first, then the jobs (TOML tables
/// have no order: by name). Each section is a table of fio options.
pub fn inline_job(t: &toml::Table) -> Result<JobFile> {
    let mut text = String::new();
    let mut names: Vec<&String> = t.keys().collect();
    names.sort_by_key(|n| (n.as_str() != "global", n.as_str()));
    for name in names {
        let Some(section) = t.get(name).and_then(toml::Value::as_table) else {
            crate::bail_param!(
                "{{job=}}: '{name}' is not a section; put fio options under [workload.job.global] or [workload.job.JOBNAME]"
            );
        };
        text.push_str(&format!("[{name}]\n"));
        for (k, v) in section {
            let v: FioValue = v.clone().try_into().map_err(|_| {
                crate::error::usage(format!(
                    "[workload.job.{name}] {k}: a fio option takes a string, an integer or a boolean"
                ))
            })?;
            if let Some(l) = v.line(k) {
                text.push_str(&format!("{l}\n"));
            }
        }
    }
    JobFile::parse(&text, None).map_err(|e| crate::error::usage(format!("[workload.job]: {e}")))
}

/// Everything one fio run needs.
#[derive(Debug, Clone, Serialize, Default)]
pub struct FioParams {
    /// The job file as fio will read it (overrides applied).
    #[serde(serialize_with = "rendered")]
    pub job: JobFile,
    /// Where it came from (a path or `inline`).
    pub source: String,
    /// Directories outside the cell fio may also write (never raw devices).
    #[serde(rename = "allow_outside_cell")]
    pub allow_outside: Vec<PathBuf>,
    /// `sync` and drop the page cache before every repetition (`fslab fio --drop-caches`).
    pub drop_caches: bool,
    /// Options passed to fio unchanged (`fslab fio JOB --opt …`).
    pub extra_args: Vec<String>,
    /// fio's own directory when known before the run (`fslab fio`: `-D`/fslab-fio), so a
    /// relative path with `..` can be placed.
    #[serde(skip)]
    pub cell: Option<PathBuf>,
}

fn rendered<S: serde::Serializer>(j: &JobFile, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&j.render())
}

impl FioParams {
    /// Check the job: no path outside the cell and the allowed directories (raw devices
    /// never), no job named like a path, pass-through options as fio reads them, fio
    /// installed, and fio accepts it (`fio --parse-only`, once per distinct job).
    pub fn validate(&self) -> Result<()> {
        self.allow_outside
            .iter()
            .try_for_each(|d| check_allowed_dir(d))?;
        let allowed = paths::Allowed {
            dirs: &self.allow_outside,
            cell: self.cell.as_deref(),
        };
        if let Some((section, why)) = paths::check_job(&self.job, allowed) {
            crate::bail_param!(
                "job [{section}] {why}; {}",
                if why.contains("is a device") {
                    "fslab runs fio on a file system it provisioned, never on a raw device"
                } else if why.contains("in its name") {
                    "a job name is not a path"
                } else {
                    "let fslab choose where fio's files go (a directory inside the cell), or allow that directory explicitly with {allow_outside_cell=} if you mean it"
                }
            );
        }
        paths::check_args(&self.extra_args, allowed).map_err(crate::error::usage)?;
        engine::parse_only(&self.job, &self.extra_args)
    }

    /// Bytes of data the jobs will have on disk (jobs whose size fio decides at run time
    /// count 0).
    pub fn bytes(&self) -> u64 {
        self.job
            .jobs()
            .iter()
            .filter_map(|j| j.bytes())
            .fold(0u64, u64::saturating_add)
    }

    /// Whether direction `dir` of job `job` is sequential with blocks of at least
    /// [`LARGE_BLOCK`] (the headline rule of `doc/fio.md`).
    pub fn large_sequential(&self, job: &str, dir: &str) -> bool {
        self.job
            .jobs()
            .iter()
            .find(|j| output::job_phase(&j.name) == output::job_phase(job))
            .is_some_and(|j| j.sequential() && j.block_size(dir).is_some_and(|b| b >= LARGE_BLOCK))
    }
}

#[cfg(test)]
#[path = "fio_tests.rs"]
mod tests;
