//! fio job files as fslab reads them: sections (`[global]`, one per job) with their lines
//! kept verbatim, the options parsed from them, and what fslab needs to know before fio runs:
//! which options write where (so a job cannot write outside the cell), how much data each
//! job will have on disk, and each job's effective `rw` and `bs`.
//!
//! fio itself stays the judge of the file's validity (`fio --parse-only`); this reader only
//! understands what it must check. It follows fio's INI dialect (`fio(1)`, "JOB FILE
//! FORMAT"): `;` and `#` start comments, an option is `key=value` or a bare `key`, a later
//! value of the same option wins, sections named `global` set defaults for the jobs after
//! them, `include FILE` pulls in another file.

use std::path::{Path, PathBuf};

/// One line of an option: `key` and its value (`None` for a bare flag such as `time_based`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// Option name, lower case as fio matches it.
    pub key: String,
    /// Its value, trimmed; `None` for a flag.
    pub value: Option<String>,
}

/// One `[section]` with its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section name (`global` or the job's name).
    pub name: String,
    /// Lines as written (comments included), rendered back unchanged.
    pub lines: Vec<String>,
    /// The options among those lines, in order.
    pub opts: Vec<Opt>,
}

impl Section {
    /// Whether this is a `[global]` section.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }

    /// The last value given to `key` in this section (`Some(None)` for a bare flag).
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        last_value(&self.opts, key)
    }

    /// Set `key` (appended, so it wins over any earlier value in the section).
    pub fn set(&mut self, key: &str, value: &str) {
        self.lines.push(format!("{key}={value}"));
        self.opts.push(Opt {
            key: key.into(),
            value: Some(value.into()),
        });
    }
}

/// A parsed job file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    /// Lines before the first section (comments, `include`), verbatim.
    pub preamble: Vec<String>,
    /// The sections in file order.
    pub sections: Vec<Section>,
}

/// Options whose value names files fio writes: checked so that none points outside the
/// cell. `directory` is fslab's to set; `filename` and `filename_format` are relative to it.
pub const PATH_OPTIONS: [&str; 3] = ["directory", "filename", "filename_format"];

/// Options naming log files fio writes (relative to its working directory, which fslab
/// makes inside the cell).
pub const LOG_OPTIONS: [&str; 7] = [
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "write_iolog",
    "write_iolog_chunked",
    "ioscheduler_log",
];

impl JobFile {
    /// Parse job-file text. `base` is the directory `include` paths are relative to.
    pub fn parse(text: &str, base: Option<&Path>) -> Result<JobFile, String> {
        let mut jf = JobFile {
            preamble: Vec::new(),
            sections: Vec::new(),
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            // fio's comments are whole lines starting with ';' or '#'.
            let content = if line.starts_with([';', '#']) {
                ""
            } else {
                line
            };
            if let Some(rest) = line.strip_prefix("include ") {
                let file = rest.trim();
                let path = match base {
                    Some(b) if !Path::new(file).is_absolute() => b.join(file),
                    _ => PathBuf::from(file),
                };
                let l = format!("include {}", path.display());
                match jf.sections.last_mut() {
                    Some(s) => s.lines.push(l),
                    None => jf.preamble.push(l),
                }
                continue;
            }
            if content.starts_with('[') {
                let Some(name) = content.strip_prefix('[').and_then(|c| c.strip_suffix(']')) else {
                    return Err(format!(
                        "line {}: section header '{content}' has no ']'",
                        n + 1
                    ));
                };
                jf.sections.push(Section {
                    name: name.trim().to_string(),
                    lines: Vec::new(),
                    opts: Vec::new(),
                });
                continue;
            }
            let Some(s) = jf.sections.last_mut() else {
                jf.preamble.push(raw.to_string());
                if !content.is_empty() {
                    return Err(format!(
                        "line {}: option '{content}' is outside any [section]; put it under [global] or a job",
                        n + 1
                    ));
                }
                continue;
            };
            s.lines.push(raw.to_string());
            if content.is_empty() {
                continue;
            }
            let opt = match content.split_once('=') {
                Some((k, v)) => Opt {
                    key: k.trim().to_ascii_lowercase(),
                    value: Some(v.trim().to_string()),
                },
                None => Opt {
                    key: content.to_ascii_lowercase(),
                    value: None,
                },
            };
            s.opts.push(opt);
        }
        if !jf.sections.iter().any(|s| !s.is_global()) {
            return Err("it has no job: add a [section] other than [global]".into());
        }
        Ok(jf)
    }

    /// The file as fio reads it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in &self.preamble {
            out.push_str(l);
            out.push('\n');
        }
        for s in &self.sections {
            out.push_str(&format!("[{}]\n", s.name));
            for l in &s.lines {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// Set `key=value` for every job: in the first `[global]` section (added if there is
    /// none) and in every section that sets `key` itself, so the value wins everywhere.
    pub fn set_everywhere(&mut self, key: &str, value: &str) {
        if !self.sections.iter().any(Section::is_global) {
            self.sections.insert(
                0,
                Section {
                    name: "global".into(),
                    lines: Vec::new(),
                    opts: Vec::new(),
                },
            );
        }
        let mut first_global = true;
        for s in &mut self.sections {
            let global_here = s.is_global() && first_global;
            if global_here {
                first_global = false;
            }
            if global_here || s.get(key).is_some() {
                s.set(key, value);
            }
        }
    }

    /// The jobs with their effective options: every `[global]` before a job and then the
    /// job's own section, later values winning (fio's rule).
    pub fn jobs(&self) -> Vec<Job> {
        let mut defaults: Vec<Opt> = Vec::new();
        let mut out = Vec::new();
        for s in &self.sections {
            if s.is_global() {
                defaults.extend(s.opts.iter().cloned());
            } else {
                let mut opts = defaults.clone();
                opts.extend(s.opts.iter().cloned());
                out.push(Job {
                    name: s.name.clone(),
                    opts,
                });
            }
        }
        out
    }

    /// Every place an option names a path fio would write, with the section: for the
    /// outside-the-cell check.
    pub fn path_options(&self) -> Vec<(&str, &str, &str)> {
        let mut v = Vec::new();
        for s in &self.sections {
            for o in &s.opts {
                if PATH_OPTIONS.contains(&o.key.as_str()) || LOG_OPTIONS.contains(&o.key.as_str()) {
                    v.push((
                        s.name.as_str(),
                        o.key.as_str(),
                        o.value.as_deref().unwrap_or(""),
                    ));
                }
            }
        }
        v
    }
}

/// One job with the options it runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The section name (fio's `jobname`).
    pub name: String,
    /// Effective options, globals first; the last of a key wins.
    pub opts: Vec<Opt>,
}

/// The last value given to `key` among `opts` (`Some(None)` for a bare flag): fio's rule,
/// the later setting wins.
fn last_value<'a>(opts: &'a [Opt], key: &str) -> Option<Option<&'a str>> {
    opts.iter()
        .rev()
        .find(|o| o.key == key)
        .map(|o| o.value.as_deref())
}

impl Job {
    /// The effective value of `key` (`Some(None)` for a bare flag).
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        last_value(&self.opts, key)
    }

    /// The effective value of `key` when it has one.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).flatten()
    }

    /// Bytes this job will have on disk at most: (`filesize` × `nrfiles`, else `size`) ×
    /// `numjobs`. `None` when fio decides at run time (a percentage, a range, no size).
    pub fn bytes(&self) -> Option<u64> {
        let numjobs = match self.value("numjobs") {
            Some(n) => n.parse::<u64>().ok()?,
            None => 1,
        };
        let per = match self.value("filesize") {
            Some(fs) => {
                let nr = match self.value("nrfiles").or(self.value("nr_files")) {
                    Some(n) => n.parse::<u64>().ok()?,
                    None => 1,
                };
                // A range `lo-hi`: the largest.
                let hi = fs.rsplit('-').next().unwrap_or(fs);
                parse_size(hi)?.checked_mul(nr)?
            }
            None => parse_size(self.value("size")?)?,
        };
        per.checked_mul(numjobs)
    }

    /// The block size of direction `dir` (`read`, `write`, `trim`) in bytes: `bs` may give
    /// one value, or `read,write[,trim]` (fio's per-direction form), `blocksize` is its long
    /// name; fio's default is 4 KiB.
    pub fn block_size(&self, dir: &str) -> Option<u64> {
        let bs = self.value("bs").or(self.value("blocksize")).unwrap_or("4k");
        let parts: Vec<&str> = bs.split(',').collect();
        let idx = match dir {
            "read" => 0,
            "write" => 1,
            _ => 2,
        };
        let p = parts
            .get(idx)
            .filter(|p| !p.is_empty())
            .or(parts.last())?
            .trim();
        // A range `min-max` (bsrange syntax): the smaller end.
        parse_size(p.split('-').next().unwrap_or(p))
    }

    /// Whether the job's I/O is sequential: `rw` (`readwrite`) is `read`, `write`, `rw`,
    /// `readwrite`, `trim` (fio's default is `read`), with an optional `:N` offset suffix.
    pub fn sequential(&self) -> bool {
        let rw = self
            .value("rw")
            .or(self.value("readwrite"))
            .unwrap_or("read");
        let base = rw.split(':').next().unwrap_or(rw).trim();
        matches!(base, "read" | "write" | "rw" | "readwrite" | "trim")
    }
}

/// A size as fio reads it: an integer with an optional suffix, binary by default (fio's
/// `kb_base=1024`): `k`/`kb`/`kib` = 1024, `m` = 1024², `g`, `t`, `p`. `None` for anything
/// else (a percentage, a range).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits_end == 0 {
        return None;
    }
    let n: u64 = s[..digits_end].parse().ok()?;
    let suffix = s[digits_end..].trim();
    let suffix = suffix
        .strip_suffix("ib")
        .or_else(|| suffix.strip_suffix('b'))
        .unwrap_or(suffix);
    let shift = match suffix {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// Why a path option's value points outside the cell (relative to fio's `directory`, which
/// fslab sets to the cell): an absolute path, a `..` component, a block device. `None` when
/// it stays inside. `filename` may list several names separated by `:`.
pub fn outside_cell(key: &str, value: &str) -> Option<String> {
    if key == "directory" {
        return Some(format!(
            "directory={value}: fslab sets fio's directory to the mounted cell; remove it"
        ));
    }
    let names: Vec<&str> = if key == "filename" {
        // fio escapes a ':' inside a name as '\:'.
        split_unescaped(value)
    } else {
        vec![value]
    };
    for n in names {
        let p = Path::new(n);
        if n.starts_with("/dev/") {
            return Some(format!(
                "{key}={value} is a device: fio would write the raw device, not the cell"
            ));
        }
        if p.is_absolute() {
            return Some(format!(
                "{key}={value} is an absolute path: fio would write outside the cell"
            ));
        }
        if p.components().any(|c| c == std::path::Component::ParentDir) {
            return Some(format!(
                "{key}={value} climbs out with '..': fio would write outside the cell"
            ));
        }
    }
    None
}

fn split_unescaped(v: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = v.as_bytes();
    for i in 0..b.len() {
        if b[i] == b':' && (i == 0 || b[i - 1] != b'\\') {
            out.push(&v[start..i]);
            start = i + 1;
        }
    }
    out.push(&v[start..]);
    out
}

#[cfg(test)]
#[path = "jobfile_tests.rs"]
mod tests;
