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

use super::ops::{parse_status, Expect, OpKind};
use anyhow::Result;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
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
        self.text
            .split('/')
            .map(|c| {
                if c == CLIENT_COMPONENT {
                    name.as_str()
                } else {
                    c
                }
            })
            .collect::<Vec<_>>()
            .join("/")
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
    Create {
        /// The path.
        path: PathId,
        /// NT create options (0x1 = directory).
        options: u32,
        /// NT create disposition (1 open, 2 create, 5 overwrite-if, …).
        disposition: u32,
        /// The handle bound on success.
        handle: HandleId,
    },
    /// A handle (Close, Flush, QUERY/SET_FILE_INFORMATION).
    Handle(HandleId),
    /// ReadX / WriteX.
    Io {
        /// The handle.
        handle: HandleId,
        /// Byte offset.
        offset: u64,
        /// Bytes requested (counted in the throughput, as dbench does).
        size: u32,
        /// Bytes the traced server returned (a write must return exactly this).
        ret: u32,
    },
    /// LockX / UnlockX.
    Lock {
        /// The handle.
        handle: HandleId,
        /// First byte of the range.
        offset: u64,
        /// Length of the range.
        len: u64,
    },
    /// FIND_FIRST.
    Find {
        /// The pattern path (directory plus a name that may hold wildcards).
        pattern: PathId,
        /// Whether the name holds wildcards (`*?<>`); without them it is a lookup.
        wildcard: bool,
        /// How many matches the client asked for.
        maxcnt: u32,
    },
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

/// Split a line into tokens the way dbench's `next_token` does: whitespace separates,
/// double quotes group and are dropped. Backslashes are kept here; paths treat `\\` and `/`
/// alike. Tokens borrow from the line unless a quote sits inside them.
pub fn tokenize(line: &str) -> Vec<Cow<'_, str>> {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(8);
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        let start = i;
        let mut quoted = false;
        let mut quotes = 0;
        while i < b.len() && (quoted || (b[i] != b' ' && b[i] != b'\t')) {
            if b[i] == b'"' {
                quoted = !quoted;
                quotes += 1;
            }
            i += 1;
        }
        let tok = &line[start..i];
        if quotes == 0 {
            out.push(Cow::Borrowed(tok));
        } else if quotes == 2 && tok.starts_with('"') && tok.ends_with('"') {
            out.push(Cow::Borrowed(&tok[1..tok.len() - 1]));
        } else {
            out.push(Cow::Owned(tok.replace('"', "")));
        }
    }
    out
}

/// Parse a number like `strtol(s, NULL, 0)`, but the whole token must be a number.
pub fn parse_int(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let (digits, radix) = if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' {
        (&b[2..], 16)
    } else if b.len() > 1 && b[0] == b'0' {
        (&b[1..], 8)
    } else {
        (b, 10)
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => u64::from(c - b'0'),
            b'a'..=b'f' => u64::from(c - b'a' + 10),
            b'A'..=b'F' => u64::from(c - b'A' + 10),
            _ => return None,
        };
        if d >= radix {
            return None;
        }
        v = v.checked_mul(radix)?.checked_add(d)?;
    }
    Some(v)
}

const DIRECTIVES: [&str; 8] = [
    "REPEAT",
    "LOOP",
    "ENDLOOP",
    "SLEEP",
    "SETSP",
    "WAITSP",
    "WRITEPATTERN",
    "RANDOMSTRING",
];

#[derive(Default)]
struct Builder {
    lf: Loadfile,
    path_ids: HashMap<String, PathId>,
    /// Path tokens as written (before normalisation), so repeated paths cost one lookup.
    raw_ids: HashMap<String, PathId>,
    status_ids: HashMap<String, u16>,
    handle_ids: HashMap<i64, HandleId>,
}

impl Builder {
    fn path(&mut self, raw: &str) -> std::result::Result<PathId, String> {
        if let Some(&id) = self.raw_ids.get(raw) {
            return Ok(id);
        }
        let id = self.normalize(raw)?;
        self.raw_ids.insert(raw.to_string(), id);
        Ok(id)
    }

    fn normalize(&mut self, raw: &str) -> std::result::Result<PathId, String> {
        let trailing = raw.len() > 1 && raw.ends_with(['/', '\\']);
        let mut comps = Vec::new();
        for c in raw.split(['/', '\\']) {
            match c {
                "" | "." => {}
                ".." => {
                    return Err(format!(
                        "path {} leaves the client tree (`..`)",
                        raw.replace('\\', "/")
                    ))
                }
                c => comps.push(c),
            }
        }
        let mut text = if comps.is_empty() {
            ".".to_string()
        } else {
            comps.join("/")
        };
        if trailing && !comps.is_empty() {
            text.push('/');
        }
        Ok(self.intern(text, &comps))
    }

    fn intern(&mut self, text: String, comps: &[&str]) -> PathId {
        if let Some(&id) = self.path_ids.get(&text) {
            return id;
        }
        let parent = if comps.is_empty() {
            None
        } else {
            let ptext = if comps.len() == 1 {
                ".".to_string()
            } else {
                comps[..comps.len() - 1].join("/")
            };
            Some(self.intern(ptext, &comps[..comps.len() - 1]))
        };
        let id = self.lf.paths.len() as PathId;
        self.lf.paths.push(LoadPath {
            text: text.clone(),
            parent,
        });
        self.path_ids.insert(text, id);
        id
    }

    fn status(&mut self, s: &str) -> u16 {
        if let Some(&id) = self.status_ids.get(s) {
            return id;
        }
        let id = self.lf.statuses.len() as u16;
        self.lf.statuses.push(s.to_string());
        self.status_ids.insert(s.to_string(), id);
        id
    }

    fn handle(&mut self, n: u64) -> HandleId {
        let n = n as i64;
        if let Some(&id) = self.handle_ids.get(&n) {
            return id;
        }
        let id = self.lf.handles.len() as HandleId;
        self.lf.handles.push(n);
        self.handle_ids.insert(n, id);
        id
    }

    /// Parse one line; `Ok(None)` for lines that carry no operation.
    fn line(&mut self, lineno: u32, line: &str) -> std::result::Result<Option<Op>, String> {
        let toks = tokenize(line);
        if toks.is_empty() || toks[0].starts_with('#') {
            return Ok(None);
        }
        let mut t: &[Cow<'_, str>] = &toks;
        let mut time = None;
        if t[0].starts_with(|c: char| c.is_ascii_digit()) {
            let v: f64 = t[0]
                .parse()
                .map_err(|_| format!("timestamp {} is not a number of seconds", t[0]))?;
            if !v.is_finite() || v < 0.0 {
                return Err(format!("timestamp {} is not a number of seconds", t[0]));
            }
            time = Some(v);
            t = &t[1..];
        }
        let Some(opname) = t.first() else {
            return Err("a timestamp without an operation".into());
        };
        let Some(kind) = OpKind::from_name(opname) else {
            if opname.starts_with("SMB") {
                return Err(
                    "this is a dbench 1 loadfile (SMB… operations); use a dbench 3/4 NBENCH loadfile"
                        .into(),
                );
            }
            if let Some(d) = DIRECTIVES.iter().find(|d| opname.as_ref() == **d) {
                return Err(format!(
                    "the dbench 5 directive {d} is not supported; expand it into plain operations"
                ));
            }
            return Err(format!(
                "unknown operation {opname} (dbench's file back end has NTCreateX, Close, ReadX, WriteX, …)"
            ));
        };
        if t.len() < 2 {
            return Err(format!(
                "{kind} has no status (NT_STATUS_…, 0x…, SUCCESS, ERROR or *) at the end"
            ));
        }
        let status_tok = &t[t.len() - 1];
        let expect = parse_status(status_tok).ok_or_else(|| {
            format!("badly formed status {status_tok}; use NT_STATUS_…, 0x…, SUCCESS, ERROR or *")
        })?;
        let a = &t[1..t.len() - 1];
        let arity_ok = match kind {
            OpKind::NtCreateX | OpKind::FindFirst | OpKind::WriteX | OpKind::ReadX => a.len() == 4,
            OpKind::LockX | OpKind::UnlockX => a.len() == 3,
            OpKind::Rename
            | OpKind::QueryPathInformation
            | OpKind::QueryFileInformation
            | OpKind::SetFileInformation => a.len() == 2,
            OpKind::Unlink => a.len() == 1 || a.len() == 2,
            OpKind::Close
            | OpKind::Flush
            | OpKind::Deltree
            | OpKind::Rmdir
            | OpKind::Mkdir
            | OpKind::QueryFsInformation => a.len() == 1,
        };
        if !arity_ok {
            return Err(format!(
                "{kind} takes {} and a status, found {} argument(s)",
                kind.usage(),
                a.len()
            ));
        }
        let num = |i: usize, what: &str| -> std::result::Result<u64, String> {
            let s = &a[i];
            if s.starts_with('*') || s.starts_with('+') {
                return Err(format!(
                    "{what} {s}: dbench 5 random/relative argument expressions are not supported"
                ));
            }
            parse_int(s).ok_or_else(|| format!("{what} {s} is not a number"))
        };
        let num32 = |i: usize, what: &str| -> std::result::Result<u32, String> {
            let v = num(i, what)?;
            u32::try_from(v).map_err(|_| format!("{what} {} is too large", a[i]))
        };
        let args = match kind {
            OpKind::NtCreateX => {
                let path = self.path(&a[0])?;
                Args::Create {
                    path,
                    options: num32(1, "create options")?,
                    disposition: num32(2, "create disposition")?,
                    handle: {
                        let h = num(3, "handle")?;
                        self.handle(h)
                    },
                }
            }
            OpKind::Close
            | OpKind::Flush
            | OpKind::QueryFileInformation
            | OpKind::SetFileInformation => {
                let h = num(0, "handle")?;
                if a.len() == 2 {
                    num(1, "level")?;
                }
                Args::Handle(self.handle(h))
            }
            OpKind::Rename => Args::Rename(self.path(&a[0])?, self.path(&a[1])?),
            OpKind::Unlink
            | OpKind::Deltree
            | OpKind::Rmdir
            | OpKind::Mkdir
            | OpKind::QueryPathInformation => {
                if a.len() == 2 {
                    num(
                        1,
                        if kind == OpKind::Unlink {
                            "attributes"
                        } else {
                            "level"
                        },
                    )?;
                }
                Args::Path(self.path(&a[0])?)
            }
            OpKind::QueryFsInformation => {
                num(0, "level")?;
                Args::None
            }
            OpKind::FindFirst => {
                num(1, "level")?;
                let maxcnt = num32(2, "maximum count")?;
                num(3, "count")?;
                let pattern = self.path(&a[0])?;
                let text = &self.lf.paths[pattern as usize].text;
                let base = text.rsplit('/').next().unwrap_or("");
                Args::Find {
                    pattern,
                    wildcard: base.contains(['*', '?', '<', '>']),
                    maxcnt,
                }
            }
            OpKind::WriteX | OpKind::ReadX => {
                let h = num(0, "handle")?;
                let offset = num(1, "offset")?;
                let size = num32(2, "size")?;
                let ret = num32(3, "returned size")?;
                if size > MAX_IO {
                    return Err(format!("size {size} is above the supported {MAX_IO} bytes"));
                }
                if ret > size {
                    return Err(format!(
                        "returned size {ret} is larger than the size {size}"
                    ));
                }
                Args::Io {
                    handle: self.handle(h),
                    offset,
                    size,
                    ret,
                }
            }
            OpKind::LockX | OpKind::UnlockX => {
                let h = num(0, "handle")?;
                Args::Lock {
                    handle: self.handle(h),
                    offset: num(1, "offset")?,
                    len: num(2, "length")?,
                }
            }
        };
        // Operations that change the tree must not touch the target directory itself.
        let touches_root = |p: PathId| self.lf.paths[p as usize].is_root();
        let bad_root = match (kind, args) {
            (OpKind::Unlink | OpKind::Rmdir | OpKind::Deltree, Args::Path(p)) => touches_root(p),
            (OpKind::Rename, Args::Rename(a, b)) => touches_root(a) || touches_root(b),
            _ => false,
        };
        if bad_root {
            return Err(format!("{kind} of the target directory itself is refused"));
        }
        let status = self.status(status_tok);
        Ok(Some(Op {
            line: lineno,
            kind,
            expect,
            status,
            time,
            args,
        }))
    }
}

impl Loadfile {
    /// Parse loadfile text. `source` names it in messages.
    pub fn parse(text: &str, source: &str) -> std::result::Result<Loadfile, LineError> {
        let mut b = Builder::default();
        b.lf.source = source.to_string();
        let mut n = 0u32;
        for line in text.lines() {
            n += 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            match b.line(n, line) {
                Ok(Some(op)) => {
                    if let Args::Io { size, .. } = op.args {
                        b.lf.max_io = b.lf.max_io.max(size);
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
                    return Err(LineError {
                        source_name: source.to_string(),
                        line: n,
                        text: shown,
                        reason,
                    });
                }
            }
        }
        b.lf.lines = n;
        if b.lf.statuses.len() > u16::MAX as usize || b.lf.ops.is_empty() {
            return Err(LineError {
                source_name: source.to_string(),
                line: n,
                text: String::new(),
                reason: if b.lf.ops.is_empty() {
                    "the loadfile contains no operations".into()
                } else {
                    "too many distinct status texts".into()
                },
            });
        }
        Ok(b.lf)
    }

    /// Read and parse a loadfile, gunzipping it when it starts with the gzip magic bytes.
    /// Errors are usage errors naming the file, the line and the fix.
    pub fn from_path(path: &Path) -> Result<Loadfile> {
        let raw = std::fs::read(path).map_err(|e| {
            crate::error::usage(format!(
                "cannot read loadfile {}: {e}; check the path given with -c/--loadfile",
                path.display()
            ))
        })?;
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .map_err(|e| {
                    crate::error::usage(format!(
                        "loadfile {} looks gzip-compressed but cannot be decompressed: {e}; check the file",
                        path.display()
                    ))
                })?;
            out
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
                Args::Io { size, .. } => u64::from(size),
                _ => 0,
            })
            .sum()
    }

    /// The distinct first components of all paths for client `n` (what cleanup removes).
    pub fn top_level_names(&self, n: usize) -> Vec<String> {
        let mut v: Vec<String> = self
            .paths
            .iter()
            .filter(|p| !p.is_root())
            .filter_map(|p| p.for_client(n).split('/').next().map(str::to_string))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
#[path = "loadfile_tests.rs"]
mod tests;
