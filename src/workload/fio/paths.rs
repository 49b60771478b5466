//! Where a fio job would write, read early for clear errors: the options that name files
//! (`filename`, logs, `opendir`, …), job names (fio names its files after the job), and the
//! options passed through on the command line, spelled any way fio accepts them.
//!
//! These checks only give a clear error before anything runs. Safety does not depend on
//! them: fio runs in a cage where everything but its own directory (and the directories the
//! user allowed) is read-only (see `safe::cage`).

use super::jobfile::JobFile;
use std::path::{Component, Path, PathBuf};

/// Job-file options whose value names a file or directory fio creates, writes or removes
/// (fio matches job-file option names exactly).
pub const PATH_OPTIONS: [&str; 11] = [
    "directory",
    "filename",
    "filename_format",
    "opendir",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "write_iolog",
    "merge_blktrace_file",
    "replay_redirect",
];

/// Options naming a memory source that may be a file (`mem=mmap:/path`).
const MEM_OPTIONS: [&str; 2] = ["mem", "iomem"];

/// Command-line options fslab sets itself.
const OWN: [&str; 3] = ["output", "output-format", "directory"];

/// Command-line options that make fio something other than a benchmark of this cell: a
/// network client or server, a daemon, a trigger that runs commands, a help text.
const REFUSED: [&str; 18] = [
    "client",
    "server",
    "daemonize",
    "remote-config",
    "trigger",
    "trigger-file",
    "trigger-remote",
    "trigger-timeout",
    "parse-only",
    "inflate-log",
    "merge-blktrace-only",
    "cmdhelp",
    "enghelp",
    "help",
    "version",
    "showcmd",
    "crctest",
    "memcpytest",
];

/// Command-line options that take no separate value (fio's flags and value-less options):
/// the argument after one of them is not its value.
const FLAGS: [&str; 21] = [
    "bs_unaligned",
    "blocksize_unaligned",
    "exitall",
    "exitall_on_error",
    "group_reporting",
    "new_group",
    "norandommap",
    "refill_buffers",
    "stonewall",
    "wait_for_previous",
    "thread",
    "time_based",
    "verify_only",
    "zero_buffers",
    "minimal",
    "readonly",
    "warnings-fatal",
    "cpuclock-test",
    "bandwidth-log",
    "append-terse",
    "version",
];

/// fio's one-letter options that [`OWN`] or [`REFUSED`] cover.
const SHORT: [(char, &str); 14] = [
    ('o', "output"),
    ('F', "output-format"),
    ('D', "daemonize"),
    ('S', "server"),
    ('C', "client"),
    ('R', "remote-config"),
    ('P', "parse-only"),
    ('W', "trigger-file"),
    ('H', "trigger"),
    ('J', "trigger-remote"),
    ('X', "inflate-log"),
    ('c', "cmdhelp"),
    ('i', "enghelp"),
    ('h', "help"),
];

/// Where fio may write: inside its directory in the cell (relative paths), and in the
/// directories the user allowed explicitly (`allow_outside_cell`, `--allow-outside`).
#[derive(Debug, Clone, Copy)]
pub struct Allowed<'a> {
    /// Absolute directories fio may also write.
    pub dirs: &'a [PathBuf],
    /// fio's own directory when it is known (`fslab fio`), to place a relative path with
    /// `..`; in a study it is not known before the run.
    pub cell: Option<&'a Path>,
}

/// `p` with `.` and `..` applied lexically (no file system access); `None` when `..`
/// climbs above the root.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    Some(out)
}

impl Allowed<'_> {
    fn inside_allowed(&self, p: &Path) -> bool {
        normalize(p).is_some_and(|n| {
            self.dirs
                .iter()
                .any(|d| normalize(d).is_some_and(|d| n.starts_with(d)))
        })
    }

    /// Why the path `name` given to `key` leaves fio's directory and the allowed ones, if
    /// it does.
    fn why(&self, key: &str, name: &str) -> Option<String> {
        let p = Path::new(name);
        if name.starts_with("/dev/") {
            return Some(format!(
                "{key}={name} is a device: fio would write the raw device, not the cell"
            ));
        }
        if p.is_absolute() {
            return (!self.inside_allowed(p)).then(|| {
                format!("{key}={name} is an absolute path: fio would write outside the cell")
            });
        }
        if p.components().any(|c| c == Component::ParentDir) {
            let placed = self.cell.map(|c| c.join(p));
            let stays = placed.as_deref().is_some_and(|q| {
                normalize(q).is_some_and(|n| self.cell.is_some_and(|c| n.starts_with(c)))
                    || self.inside_allowed(q)
            });
            return (!stays).then(|| {
                format!("{key}={name} climbs out with '..': fio would write outside the cell")
            });
        }
        None
    }
}

/// Why option `key=value` would make fio write outside the cell and the allowed
/// directories, if it would. `filename` may list several names separated by `:` (fio
/// escapes a `:` inside a name as `\:`).
pub fn outside(key: &str, value: &str, allowed: Allowed<'_>) -> Option<String> {
    if key == "directory" {
        return Some(format!(
            "directory={value}: fslab sets fio's directory to its own inside the cell; remove it"
        ));
    }
    if MEM_OPTIONS.contains(&key) {
        let (kind, file) = value.split_once(':')?;
        return kind
            .starts_with("mmap")
            .then(|| allowed.why(key, file))
            .flatten();
    }
    if !PATH_OPTIONS.contains(&key) {
        return None;
    }
    let names: Vec<&str> = if key == "filename" {
        split_unescaped(value)
    } else {
        vec![value]
    };
    names.into_iter().find_map(|n| allowed.why(key, n))
}

/// Why a job name would place fio's files outside the cell: fio names a job's files after
/// it (`filename_format` `$jobname.$jobnum.$filenum`) and its logs too.
pub fn bad_job_name(name: &str) -> Option<String> {
    name.contains('/').then(|| {
        format!("job [{name}] has a '/' in its name: fio names the job's files after it, so they would land outside the cell; rename the job")
    })
}

/// Every problem of the job file's own lines, as (section, message): paths outside the
/// cell and job names that are paths.
pub fn check_job(job: &JobFile, allowed: Allowed<'_>) -> Option<(String, String)> {
    job.sections.iter().find_map(|s| {
        let job_name = Some(s.name.as_str()).filter(|_| !s.is_global());
        let why = job_name.and_then(bad_job_name).or_else(|| {
            s.opts.iter().find_map(|o| {
                let value = o.value.as_deref();
                let named = value.filter(|_| o.key == "name").and_then(bad_job_name);
                named.or_else(|| outside(&o.key, value.unwrap_or(""), allowed))
            })
        });
        why.map(|why| (s.name.clone(), why))
    })
}

/// One option given on fio's command line, as fio reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgOpt {
    /// The name as typed, without its dashes.
    pub typed: String,
    /// The option it stands for among those fslab checks (exact, or the one a prefix may
    /// stand for), if any.
    pub resolved: Option<&'static str>,
    /// Its value (after `=`, or the next argument).
    pub value: Option<String>,
}

fn known() -> impl Iterator<Item = &'static str> {
    OWN.into_iter()
        .chain(REFUSED)
        .chain(PATH_OPTIONS)
        .chain(MEM_OPTIONS)
        .chain(["aux-path", "name"])
}

/// The option `typed` stands for among those fslab checks: an exact name, else (fio's
/// `getopt_long_only` takes unique prefixes, and among job options the first of several)
/// any checked option it is a prefix of — the strictest reading, since a check may err
/// only on the side of refusing.
fn resolve(typed: &str, single_dash: bool) -> Option<&'static str> {
    if let Some(exact) = known().find(|k| *k == typed) {
        return Some(exact);
    }
    if FLAGS.contains(&typed) {
        return None;
    }
    let short = || {
        let first = typed.chars().next()?;
        SHORT.iter().find(|(c, _)| *c == first).map(|(_, n)| *n)
    };
    // `-o x`, `-ox`: one letter after one dash is fio's short option.
    if single_dash && typed.chars().count() == 1 {
        return short();
    }
    let by_prefix = known()
        .filter(|k| !typed.is_empty() && k.starts_with(typed))
        // Refusals first, then paths.
        .min_by_key(|k| !(OWN.contains(k) || REFUSED.contains(k)));
    // `-ofile`: a one-letter option with its value attached, when no long option matches.
    by_prefix.or_else(|| single_dash.then(short).flatten())
}

/// Read the pass-through arguments as fio does: `--name=value`, `-name=value`, `--name
/// value` (the next argument is the value unless the option is a flag), unique prefixes.
/// An argument that is not an option would be read by fio as a second job file: an error.
pub fn parse_args(args: &[String]) -> Result<Vec<ArgOpt>, String> {
    let mut out = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let (single, body) = match (a.strip_prefix("--"), a.strip_prefix('-')) {
            (Some(b), _) => (false, b),
            (None, Some(b)) if !b.is_empty() => (true, b),
            _ => {
                return Err(format!(
                    "{a}: fio would read it as a second job file; fslab checks and runs one job file, so put its jobs in JOBFILE (fio options after it are --name=value)"
                ))
            }
        };
        let (typed, value) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        let resolved = resolve(&typed, single);
        let takes_value =
            !FLAGS.contains(&typed.as_str()) && !resolved.is_some_and(|r| FLAGS.contains(&r));
        let value = match value {
            None if takes_value => it.next().cloned(),
            v => v,
        };
        out.push(ArgOpt {
            typed,
            resolved,
            value,
        });
    }
    Ok(out)
}

/// Check the pass-through arguments: options fslab sets or that change what fio is are
/// refused, paths are checked like the job's. The message names the fix.
pub fn check_args(args: &[String], allowed: Allowed<'_>) -> Result<(), String> {
    for o in parse_args(args)? {
        let Some(r) = o.resolved else { continue };
        let as_typed = if o.typed == r {
            format!("--{r}")
        } else {
            format!("{} (fio reads it as --{r})", o.typed)
        };
        if OWN.contains(&r) {
            return Err(format!(
                "{as_typed} is fslab's to set (it reads fio's json+ output and runs fio in a directory of its own); leave it out{}",
                if r == "directory" { " and choose the directory with -D" } else { "" }
            ));
        }
        if REFUSED.contains(&r) {
            return Err(format!(
                "{as_typed} makes fio something other than a benchmark of this directory (a client, server, daemon, trigger or help text); leave it out"
            ));
        }
        let value = o.value.as_deref().unwrap_or("");
        if r == "name" {
            bad_job_name(value).map_or(Ok(()), Err)?;
            continue;
        }
        let why = if r == "aux-path" {
            allowed.why(r, value)
        } else {
            outside(r, value, allowed)
        };
        if let Some(why) = why {
            return Err(format!("{as_typed}: {why}; name files relative to -D"));
        }
    }
    Ok(())
}

fn split_unescaped(v: &str) -> Vec<&str> {
    let mut escaped = false;
    v.split(|c| {
        let cut = c == ':' && !escaped;
        escaped = c == '\\';
        cut
    })
    .collect()
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
