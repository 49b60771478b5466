//! How much space one client's tree needs: a dry run of one pass over a model of the
//! file system (sizes per path, directories), so a run that cannot fit is refused before
//! anything is created.
//!
//! The model follows the loadfile's own view: creates and overwrites make files, writes
//! extend them, renames move them, unlinks and deltrees remove them. Files are rounded up to
//! 4 KiB and every directory counts one 4 KiB block. It does not model data kept alive by a
//! handle that is still open after its name was unlinked; such a run can still meet ENOSPC,
//! which then fails it with the same one-line message.

use super::loadfile::{Args, Loadfile, PathId};
use super::ops::{Expect, OpKind};
use std::collections::HashMap;

/// Peak bytes and inodes of one client's tree during one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// Peak bytes (files rounded to 4 KiB plus 4 KiB per directory).
    pub bytes: u64,
    /// Peak number of files plus directories.
    pub inodes: u64,
}

const BLOCK: u64 = 4096;

fn blocks(size: u64) -> u64 {
    size.div_ceil(BLOCK) * BLOCK
}

/// Simulate one pass of `lf` for one client.
pub fn footprint(lf: &Loadfile) -> Footprint {
    let mut files: HashMap<PathId, u64> = HashMap::new();
    let mut dirs: HashMap<PathId, ()> = HashMap::new();
    let mut handles: HashMap<u32, PathId> = HashMap::new();
    let mut bytes: u64 = 0;
    let mut peak = Footprint::default();
    let text = |p: PathId| lf.paths[p as usize].text.trim_end_matches('/');
    for op in &lf.ops {
        // Lines that expect a failure change nothing in the model.
        let ok = !matches!(op.expect, Expect::Failure(_));
        match (op.kind, op.args) {
            (OpKind::NtCreateX, Args::Create(c)) if ok => {
                if c.options & 1 != 0 {
                    dirs.insert(c.path, ());
                } else if matches!(c.disposition, 0 | 2 | 3 | 4 | 5) {
                    let old = files.insert(c.path, 0).unwrap_or(0);
                    if matches!(c.disposition, 2 | 3) {
                        files.insert(c.path, old);
                    } else {
                        bytes -= blocks(old);
                    }
                }
                handles.insert(c.handle, c.path);
            }
            (OpKind::WriteX, Args::Io(io)) => {
                if let Some(cur) = handles.get(&io.handle).and_then(|p| files.get_mut(p)) {
                    let new = (*cur).max(io.offset + u64::from(io.size));
                    bytes = bytes - blocks(*cur) + blocks(new);
                    *cur = new;
                }
            }
            (OpKind::Rename, Args::Rename(from, to)) if ok => {
                // A file renamed over another replaces it.
                if let Some(old) = files.remove(&from).and_then(|sz| files.insert(to, sz)) {
                    bytes -= blocks(old);
                }
            }
            (OpKind::Unlink, Args::Path(p)) if ok => {
                if let Some(sz) = files.remove(&p) {
                    bytes -= blocks(sz);
                }
            }
            (OpKind::Mkdir, Args::Path(p)) => {
                dirs.insert(p, ());
            }
            (OpKind::Rmdir, Args::Path(p)) if ok => {
                dirs.remove(&p);
            }
            (OpKind::Deltree, Args::Path(p)) => {
                let root = text(p).to_string();
                let under = |q: PathId| {
                    let t = text(q);
                    t == root
                        || (t.starts_with(&root) && t.as_bytes().get(root.len()) == Some(&b'/'))
                };
                files.retain(|&q, sz| {
                    let keep = !under(q);
                    if !keep {
                        bytes -= blocks(*sz);
                    }
                    keep
                });
                dirs.retain(|&q, _| !under(q));
            }
            _ => {}
        }
        let now = bytes + dirs.len() as u64 * BLOCK;
        peak.bytes = peak.bytes.max(now);
        peak.inodes = peak.inodes.max((files.len() + dirs.len()) as u64);
    }
    peak
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_follows_creates_writes_and_unlinks() {
        let lf = Loadfile::parse(
            r#"NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\a" 0x40 0x2 2 NT_STATUS_OK
WriteX 2 0 10000 10000 NT_STATUS_OK
Close 2 NT_STATUS_OK
NTCreateX "\clients\client1\b" 0x40 0x5 3 NT_STATUS_OK
WriteX 3 0 4096 4096 NT_STATUS_OK
Close 3 NT_STATUS_OK
Unlink "\clients\client1\a" 0x6 NT_STATUS_OK
Rename "\clients\client1\b" "\clients\client1\c" NT_STATUS_OK
"#,
            "t",
        )
        .unwrap();
        let f = footprint(&lf);
        // dir (4 KiB) + a (12 KiB) + b (4 KiB) at the peak; 3 inodes.
        assert_eq!(f.bytes, 4096 + 12288 + 4096);
        assert_eq!(f.inodes, 3);
    }
}
