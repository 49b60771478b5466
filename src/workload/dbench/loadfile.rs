//! Parser for dbench's NBENCH loadfile format (`client.txt`), plain or gzip-compressed.
//!
//! Follows dbench's `child.c`: a line is `[TIMESTAMP] OPERATION ARGS… STATUS`; a leading
//! token that starts with a digit is the time in seconds from the start of the pass; the
//! last token is the expected status; backslashes become `/`; double quotes group a token
//! and are dropped; blank lines and lines starting with `#` are skipped. Numbers are read
//! like `strtol(s, NULL, 0)` (decimal, `0x` hexadecimal, leading-`0` octal).
//!
//! Where dbench prints a warning and carries on (a badly formed status, an unknown
//! operation, a short line), fslab refuses the loadfile with the line number and its text,
//! so a garbled file never turns into a silently different load. dbench 5's directives
//! (`LOOP`, `REPEAT`, `RANDOMSTRING`, `*`/`+` argument expressions, …) are not supported and
//! are reported as such.
//!
//! Paths are interned once and rewritten per client when the replay starts: every path
//! component equal to `client1` becomes `client<N>` (0-based, as dbench numbers its
//! clients), so each client works in its own tree `clients/client<N>`.

use super::ops::{Expect, OpKind};
pub use super::parse::{parse_int, tokenize};
use anyhow::Result;
use std::path::Path;

/// Index into [`Loadfile::paths`].
pub type PathId = u32;
/// Dense index of a handle number of the loadfile (see [`Loadfile::handles`]).
pub type HandleId = u32;

/// The largest ReadX/WriteX size accepted (dbench's own buffer is far smaller).
pub const MAX_IO: u32 = 64 << 20;

/// The component rewritten per client.
pub const CLIENT_COMPONENT: &str = "client1";

/// A path of the loadfile, relative to the target directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadPath {
    /// `/`-separated, no leading `/`, `.` for the target itself; a trailing `/` is kept.
    pub text: String,
    /// The directory holding it (`None` for the target itself).
    pub parent: Option<PathId>,
}

impl LoadPath {
    /// The path for client `n`: every component `client1` becomes `client<n>`.
    pub fn for_client(&self, n: usize) -> String {
        if !self.text.split('/').any(|c| c == CLIENT_COMPONENT) {
            return self.text.clone();
        }
        let name = format!("client{n}");
        let mut parts: Vec<&str> = self.text.split('/').collect();
        for c in parts.iter_mut().filter(|c| **c == CLIENT_COMPONENT) {
            *c = &name;
        }
        parts.join("/")
    }

    /// Whether this is the target directory itself.
    pub fn is_root(&self) -> bool {
        self.text == "."
    }
}

/// The arguments of one operation, already converted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Args {
    /// Only a level or nothing that matters (QUERY_FS_INFORMATION).
    None,
    /// One path (Unlink, Deltree, Rmdir, Mkdir, QUERY_PATH_INFORMATION).
    Path(PathId),
    /// Old and new path (Rename).
    Rename(PathId, PathId),
    /// NTCreateX.
    Create(Create),
    /// A handle (Close, Flush, QUERY/SET_FILE_INFORMATION).
    Handle(HandleId),
    /// ReadX / WriteX.
    Io(Io),
    /// LockX / UnlockX.
    Lock(Lock),
    /// FIND_FIRST.
    Find(Find),
}

/// The arguments of LockX and UnlockX.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lock {
    /// The handle.
    pub handle: HandleId,
    /// First byte of the range.
    pub offset: u64,
    /// Length of the range.
    pub len: u64,
}

/// The arguments of FIND_FIRST.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Find {
    /// The pattern path (directory plus a name that may hold wildcards).
    pub pattern: PathId,
    /// Whether the name holds wildcards (`*?<>`); without them it is a lookup.
    pub wildcard: bool,
    /// How many matches the client asked for.
    pub maxcnt: u32,
}

/// The arguments of NTCreateX.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Create {
    /// The path.
    pub path: PathId,
    /// NT create options (0x1 = directory).
    pub options: u32,
    /// NT create disposition (1 open, 2 create, 5 overwrite-if, …).
    pub disposition: u32,
    /// The handle bound on success.
    pub handle: HandleId,
}

/// The arguments of ReadX and WriteX.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Io {
    /// The handle.
    pub handle: HandleId,
    /// Byte offset.
    pub offset: u64,
    /// Bytes requested (counted in the throughput, as dbench does).
    pub size: u32,
    /// Bytes the traced server returned (a write must return exactly this).
    pub ret: u32,
}

/// One line of the loadfile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    /// 1-based line number in the file.
    pub line: u32,
    /// The operation.
    pub kind: OpKind,
    /// What the status column expects.
    pub expect: Expect,
    /// Index of the status text in [`Loadfile::statuses`].
    pub status: u16,
    /// Seconds from the start of the pass, if the line has a timestamp.
    pub time: Option<f64>,
    /// Arguments.
    pub args: Args,
}

/// A parsed loadfile, shared read-only by all clients.
#[derive(Debug, Clone, Default)]
pub struct Loadfile {
    /// Where it came from, for messages (a path or `generated (seed N)`).
    pub source: String,
    /// Operations in file order.
    pub ops: Vec<Op>,
    /// Interned paths.
    pub paths: Vec<LoadPath>,
    /// Interned status texts.
    pub statuses: Vec<String>,
    /// Original handle numbers, indexed by [`HandleId`].
    pub handles: Vec<i64>,
    /// Lines in the file (including skipped ones).
    pub lines: u32,
    /// Largest ReadX/WriteX size.
    pub max_io: u32,
    /// Whether any line has a timestamp.
    pub has_timestamps: bool,
}

/// A line the parser refused.
#[derive(Debug, thiserror::Error)]
#[error("{source_name} line {line}: {reason}: `{text}`")]
pub struct LineError {
    /// The loadfile, for the message.
    pub source_name: String,
    /// 1-based line number.
    pub line: u32,
    /// The line as written (shortened).
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Loadfile {
    /// Parse loadfile text. `source` names it in messages.
    pub fn parse(text: &str, source: &str) -> std::result::Result<Loadfile, LineError> {
        let refuse = |line, text, reason| LineError {
            source_name: source.to_string(),
            line,
            text,
            reason,
        };
        let mut b = super::parse::Builder::default();
        b.lf.source = source.to_string();
        let mut n = 0u32;
        for line in text.lines() {
            n += 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            match b.line(n, line) {
                Ok(Some(op)) => {
                    if let Args::Io(io) = op.args {
                        b.lf.max_io = b.lf.max_io.max(io.size);
                    }
                    b.lf.has_timestamps |= op.time.is_some();
                    b.lf.ops.push(op);
                }
                Ok(None) => {}
                Err(reason) => {
                    let mut shown: String = line.chars().take(120).collect();
                    if shown.len() < line.len() {
                        shown.push('…');
                    }
                    return Err(refuse(n, shown, reason));
                }
            }
        }
        b.lf.lines = n;
        if b.lf.statuses.len() > u16::MAX as usize || b.lf.ops.is_empty() {
            let reason = if b.lf.ops.is_empty() {
                "the loadfile contains no operations"
            } else {
                "too many distinct status texts"
            };
            return Err(refuse(n, String::new(), reason.into()));
        }
        Ok(b.lf)
    }

    /// Read and parse a loadfile, gunzipping it when it starts with the gzip magic bytes.
    /// Errors are usage errors naming the file, the line and the fix.
    pub fn from_path(path: &Path) -> Result<Loadfile> {
        use crate::safe::input::{read_all_limited, read_limited, ReadError, LOADFILE_LIMIT};
        const WHAT: &str = "a dbench loadfile";
        let raw = read_limited(path, LOADFILE_LIMIT, WHAT).map_err(|e| {
            crate::error::usage(format!(
                "cannot read loadfile {}: {e}; check the path given with -c/--loadfile",
                path.display()
            ))
        })?;
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let gz = flate2::read::MultiGzDecoder::new(&raw[..]);
            read_all_limited(gz, LOADFILE_LIMIT, WHAT).map_err(|e| {
                crate::error::usage(match e {
                    ReadError::Io(e) => format!(
                        "loadfile {} looks gzip-compressed but cannot be decompressed: {e}; check the file",
                        path.display()
                    ),
                    other => format!(
                        "cannot read loadfile {}: decompressed, {other}; check the path given with -c/--loadfile",
                        path.display()
                    ),
                })
            })?
        } else {
            raw
        };
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
                crate::bail_usage!(
                    "loadfile {} line {line} is not text (invalid UTF-8); it is not an NBENCH loadfile, choose another with -c",
                    path.display()
                );
            }
        };
        Loadfile::parse(&text, &path.display().to_string()).map_err(|e| {
            crate::error::usage(format!(
                "{e}; fix the line or choose another loadfile with -c"
            ))
        })
    }

    /// Count of operations per kind in one pass, indexed by [`OpKind::index`].
    pub fn op_counts(&self) -> [u64; OpKind::COUNT] {
        let mut c = [0u64; OpKind::COUNT];
        for op in &self.ops {
            c[op.kind.index()] += 1;
        }
        c
    }

    /// Bytes of ReadX plus WriteX sizes in one pass (what dbench counts as throughput).
    pub fn bytes_per_pass(&self) -> u64 {
        self.ops
            .iter()
            .map(|op| match op.args {
                Args::Io(io) => u64::from(io.size),
                _ => 0,
            })
            .sum()
    }

    /// The distinct first components of all paths for `clients` (what cleanup removes), sorted.
    pub fn top_level_names(&self, clients: std::ops::Range<usize>) -> Vec<String> {
        let mut names = std::collections::BTreeSet::new();
        for n in clients {
            for p in self.paths.iter().filter(|p| !p.is_root()) {
                names.extend(p.for_client(n).split('/').next().map(str::to_string));
            }
        }
        names.into_iter().collect()
    }
}

#[cfg(test)]
#[path = "loadfile_tests.rs"]
mod tests;
