//! The line parser of NBENCH loadfiles: tokens as dbench's `next_token` splits them,
//! numbers as `strtol(s, NULL, 0)` reads them, and one [`Op`] per line with its arguments
//! converted, paths interned and handles made dense. See `loadfile.rs` for the format.

use super::loadfile::MAX_IO;
use super::loadfile::{Args, Create, Find, HandleId, Io, LoadPath, Loadfile, Lock, Op, PathId};
use super::ops::{parse_status, OpKind};
use std::borrow::Cow;
use std::collections::HashMap;

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
        (&s[2..], 16)
    } else if b.len() > 1 && b[0] == b'0' {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    // `from_str_radix` would also take a sign, which is no digit here.
    if digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
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

/// The path of components `comps`: `/`-separated, `.` for none.
fn joined(comps: &[&str]) -> String {
    if comps.is_empty() {
        ".".to_string()
    } else {
        comps.join("/")
    }
}

/// Builds a [`Loadfile`] line by line.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) lf: Loadfile,
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
        let mut text = joined(&comps);
        if trailing && !comps.is_empty() {
            text.push('/');
        }
        Ok(self.intern(text, &comps))
    }

    fn intern(&mut self, text: String, comps: &[&str]) -> PathId {
        if let Some(&id) = self.path_ids.get(&text) {
            return id;
        }
        let parent = comps
            .split_last()
            .map(|(_, up)| self.intern(joined(up), up));
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
        let handles = &mut self.lf.handles;
        *self.handle_ids.entry(n as i64).or_insert_with(|| {
            handles.push(n as i64);
            (handles.len() - 1) as HandleId
        })
    }

    /// Parse one line; `Ok(None)` for lines that carry no operation.
    pub(super) fn line(
        &mut self,
        lineno: u32,
        line: &str,
    ) -> std::result::Result<Option<Op>, String> {
        let toks = tokenize(line);
        if toks.is_empty() || toks[0].starts_with('#') {
            return Ok(None);
        }
        let mut t: &[Cow<'_, str>] = &toks;
        let mut time = None;
        if t[0].starts_with(|c: char| c.is_ascii_digit()) {
            // A token that is not a number is NaN, refused with the negative ones.
            let v: f64 = t[0].parse().unwrap_or(f64::NAN);
            if !v.is_finite() || v < 0.0 {
                return Err(format!("timestamp {} is not a number of seconds", t[0]));
            }
            // The client adds it to the start of the pass: keep it a usable duration.
            if v > crate::units::MAX_DURATION.as_secs_f64() {
                return Err(format!(
                    "timestamp {} is out of range; use 0 to {} seconds (365 days)",
                    t[0],
                    crate::units::MAX_DURATION.as_secs()
                ));
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
        let (least, most) = kind.arity();
        if !(least..=most).contains(&a.len()) {
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
                Args::Create(Create {
                    path,
                    options: num32(1, "create options")?,
                    disposition: num32(2, "create disposition")?,
                    handle: self.handle(num(3, "handle")?),
                })
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
                    let unlink = kind == OpKind::Unlink;
                    num(1, if unlink { "attributes" } else { "level" })?;
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
                Args::Find(Find {
                    pattern,
                    wildcard: base.contains(['*', '?', '<', '>']),
                    maxcnt,
                })
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
                Args::Io(Io {
                    handle: self.handle(h),
                    offset,
                    size,
                    ret,
                })
            }
            OpKind::LockX | OpKind::UnlockX => Args::Lock(Lock {
                handle: self.handle(num(0, "handle")?),
                offset: num(1, "offset")?,
                len: num(2, "length")?,
            }),
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
