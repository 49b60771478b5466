//! The doctor's guest: boot one, report its XSAVE situation, boot time and the vector-state
//! check it ran; and `fslab guest-selftest`, what that guest runs inside itself.

use super::{no, yes, Check};
use anyhow::Result;

/// Boot the guest and say what it did; also the guest kernel's file systems.
pub(super) fn guest_checks(mem: u64) -> (Vec<Check>, Option<Vec<String>>) {
    let mut v = Vec::new();
    let t = match crate::runner::guest::selftest(mem) {
        Ok(t) => t,
        Err(e) => {
            v.push(no(
                "guest",
                e,
                "studies of nilfs2, JFS or ReiserFS need the guest where the host kernel lacks them",
            ));
            return (v, None);
        }
    };
    v.push(yes("guest.xsave", t.host.xsave_words()));
    let boot = t
        .boot_seconds
        .map(|b| format!("booted in {b:.1} s"))
        .unwrap_or_else(|| "booted".into());
    let guest = t.guest.as_ref();
    let kernel = guest
        .and_then(|g| g["kernel"].as_str())
        .unwrap_or("unknown")
        .to_string();
    let halted = t.total_seconds;
    let line = format!("{boot} (User-mode Linux {kernel}); halted after {halted:.1} s");
    v.push(Check {
        seconds: t.boot_seconds,
        ..yes("guest.boot", line)
    });
    let vectors: Option<crate::sysinfo::vectors::VectorCheck> =
        guest.and_then(|g| serde_json::from_value(g["vectors"].clone()).ok());
    v.push(match vectors {
        Some(c) if c.kept() => yes(
            "guest.vectors",
            format!(
                "{} threads kept their {} across {} switches each",
                c.threads,
                c.width.describe(),
                c.switches
            ),
        ),
        Some(c) => no(
            "guest.vectors",
            format!("vector registers lost in the guest: {}", c.lost.join("; ")),
            "do not trust guest figures of multi-threaded programs on this host; report this",
        ),
        None => no(
            "guest.vectors",
            "the guest's self-test printed nothing readable",
            "run fslab guest-selftest inside the guest by hand to see why",
        ),
    });
    let fs: Option<Vec<String>> =
        guest.and_then(|g| serde_json::from_value(g["filesystems"].clone()).ok());
    (v, fs)
}

/// What `fslab guest-selftest` prints (JSON) and checks: the guest's kernel and file
/// systems, and whether threads keep their vector registers. Exit 1 when they do not.
pub fn guest_selftest() -> Result<()> {
    let vectors = crate::sysinfo::vectors::check(4, 2000);
    let filesystems: Vec<String> = std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    let doc = serde_json::json!({
        "kernel": rustix::system::uname().release().to_string_lossy(),
        "inside_guest": crate::runner::guest::inside(),
        "filesystems": filesystems,
        "vectors": vectors,
    });
    crate::outln!("{}", serde_json::to_string(&doc)?);
    if !vectors.kept() {
        return Err(anyhow::Error::new(crate::error::Collective {
            code: 1,
            message: format!(
                "vector registers were not kept: {}",
                vectors.lost.join("; ")
            ),
        }));
    }
    Ok(())
}
