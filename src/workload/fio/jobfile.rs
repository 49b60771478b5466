//! fio job files as fslab reads them: sections (`[global]`, one per job) with their lines
//! kept verbatim, the options parsed from them, and what fslab needs to know before fio runs:
//! which options write where (so a job cannot write outside the cell), how much data each
//! job will have on disk, and each job's effective `rw` and `bs`. Where it writes is read
//! in [`super::paths`].
//!
//! fio itself stays the judge of the file's validity (`fio --parse-only`); this reader only
//! understands what it must check. It follows fio's INI dialect (`fio(1)`, "JOB FILE
//! FORMAT"): `;` and `#` start comments, an option is `key=value` or a bare `key`, a later
//! value of the same option wins, sections named `global` set defaults for the jobs after
//! them, `include FILE` inside a section pulls in another file's options (fslab puts them in
//! place, resolving a relative name against the including file's directory), `${VAR}` in an
//! option is the environment variable's value.

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
    /// An empty section named `name`.
    fn new(name: &str) -> Section {
        Section {
            name: name.into(),
            lines: Vec::new(),
            opts: Vec::new(),
        }
    }

    /// Keep a line as written, and the option it sets (`content`: the line as [`content`]
    /// reads it).
    fn push_line(&mut self, raw: &str, content: &str) {
        self.lines.push(raw.to_string());
        if let Some(opt) = option(content) {
            self.opts.push(opt);
        }
    }

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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobFile {
    /// Lines before the first section (comments, `include`), verbatim.
    pub preamble: Vec<String>,
    /// The sections in file order.
    pub sections: Vec<Section>,
}

impl JobFile {
    /// Parse job-file text. `base` is the directory relative `include` paths are resolved
    /// against (the job file's own directory): every included file is read (size-limited)
    /// and its options put in place of the `include` line, so fio gets one self-contained
    /// job and never opens an include itself.
    pub fn parse(text: &str, base: Option<&Path>) -> Result<JobFile, String> {
        let mut budget = crate::safe::input::JOB_LIMIT.saturating_sub(text.len() as u64);
        JobFile::parse_in(text, base, &mut budget)
    }

    fn parse_in(text: &str, base: Option<&Path>, budget: &mut u64) -> Result<JobFile, String> {
        let mut jf = JobFile::default();
        for (n, raw) in (1usize..).zip(text.lines()) {
            let content = content(raw);
            if let Some(file) = include_target(content) {
                let Some(s) = jf.sections.last_mut() else {
                    return Err(format!(
                        "line {n}: include outside any [section]; fio reads include lines only inside a section"
                    ));
                };
                include(s, file, base, 0, budget).map_err(|e| format!("line {n}: {e}"))?;
                continue;
            }
            if content.starts_with('[') {
                let Some(name) = content.strip_prefix('[').and_then(|c| c.strip_suffix(']')) else {
                    return Err(format!("line {n}: section header '{content}' has no ']'"));
                };
                jf.sections.push(Section::new(name.trim()));
                continue;
            }
            let Some(s) = jf.sections.last_mut() else {
                jf.preamble.push(raw.to_string());
                if !content.is_empty() {
                    return Err(format!(
                        "line {n}: option '{content}' is outside any [section]; put it under [global] or a job"
                    ));
                }
                continue;
            };
            s.push_line(raw, content);
        }
        if !jf.sections.iter().any(|s| !s.is_global()) {
            return Err("it has no job: add a [section] other than [global]".into());
        }
        Ok(jf)
    }

    /// The file as fio reads it.
    pub fn render(&self) -> String {
        let mut lines = self.preamble.clone();
        for s in &self.sections {
            lines.push(format!("[{}]", s.name));
            lines.extend(s.lines.iter().cloned());
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Set `key=value` for every job: in the first `[global]` section (added if there is
    /// none) and in every section that sets `key` itself, so the value wins everywhere.
    pub fn set_everywhere(&mut self, key: &str, value: &str) {
        if !self.sections.iter().any(Section::is_global) {
            self.sections.insert(0, Section::new("global"));
        }
        let first_global = self.sections.iter().position(Section::is_global);
        for (i, s) in self.sections.iter_mut().enumerate() {
            if Some(i) == first_global || s.get(key).is_some() {
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
                let opts = [defaults.as_slice(), &s.opts].concat();
                out.push(Job {
                    name: s.name.clone(),
                    opts,
                });
            }
        }
        out
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

/// Nested includes deeper than this are refused (an include cycle ends here).
const MAX_INCLUDE_DEPTH: usize = 8;

/// The file an `include` line names: fio takes a line that starts with `include` and reads
/// the file name after one separating character (`include common.fio`, `include=x`).
fn include_target(content: &str) -> Option<&str> {
    let rest = content.strip_prefix("include")?;
    let mut chars = rest.chars();
    chars.next()?;
    let file = chars.as_str().trim();
    (!file.is_empty()).then_some(file)
}

/// What line `raw` says, trimmed: nothing for a comment (fio's comments are whole lines
/// starting with ';' or '#').
fn content(raw: &str) -> &str {
    let line = raw.trim();
    if line.starts_with([';', '#']) {
        ""
    } else {
        line
    }
}

/// One option line: `${VAR}` replaced by the environment's value (empty when unset), as fio
/// does before it reads the option, then `key=value` or a bare `key`.
fn option(content: &str) -> Option<Opt> {
    if content.is_empty() {
        return None;
    }
    let content = expand_env(content);
    let (key, value) = match content.split_once('=') {
        Some((k, v)) => (k, Some(v.trim().to_string())),
        None => (content.as_str(), None),
    };
    Some(Opt {
        key: key.trim().to_ascii_lowercase(),
        value,
    })
}

/// fio's `${VAR}` substitution: every `${NAME}` with a closing `}` becomes the value of the
/// environment variable `NAME`, or nothing when it is unset.
pub fn expand_env(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) => {
                if let Some(v) = std::env::var_os(&after[..j]).filter(|_| j > 0) {
                    out.push_str(&v.to_string_lossy());
                }
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Put the options of the included `file` (relative paths against `base`) into section `s`,
/// in place of the `include` line, as fio would read them; nested includes likewise.
fn include(
    s: &mut Section,
    file: &str,
    base: Option<&Path>,
    depth: usize,
    budget: &mut u64,
) -> Result<(), String> {
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(format!(
            "include {file}: includes nest deeper than {MAX_INCLUDE_DEPTH} (a cycle?); flatten them"
        ));
    }
    let path = match base {
        Some(b) if !Path::new(file).is_absolute() => b.join(file),
        _ => PathBuf::from(file),
    };
    let text = crate::safe::input::read_text_limited(&path, *budget, "a fio job with its includes")
        .map_err(|e| format!("cannot read included file {}: {e}; check the include line (a relative path is relative to the including file)", path.display()))?;
    *budget = budget.saturating_sub(text.len() as u64);
    s.lines
        .push(format!("; fslab: include {} (inlined)", path.display()));
    let inner_base = path.parent().map(Path::to_path_buf);
    for (n, raw) in (1usize..).zip(text.lines()) {
        let content = content(raw);
        if content.starts_with('[') {
            return Err(format!(
                "included file {} line {n}: a [section]; fio allows only options in included files",
                path.display()
            ));
        }
        if let Some(f) = include_target(content) {
            include(s, f, inner_base.as_deref(), depth + 1, budget)?;
            continue;
        }
        s.push_line(raw, content);
    }
    Ok(())
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
        let numjobs = self
            .value("numjobs")
            .map_or(Some(1), |n| n.parse::<u64>().ok())?;
        let per = match self.value("filesize") {
            Some(fs) => {
                let nr = self.value("nrfiles").or(self.value("nr_files"));
                let nr = nr.map_or(Some(1), |n| n.parse::<u64>().ok())?;
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
        let idx = ["read", "write"]
            .iter()
            .position(|d| *d == dir)
            .unwrap_or(2);
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

#[cfg(test)]
#[path = "jobfile_tests.rs"]
mod tests;
