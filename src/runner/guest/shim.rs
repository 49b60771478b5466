//! The XSAVE shim (`xstate_shim.c`, built by build.rs and carried inside this binary): what
//! lets User-mode Linux run on hosts whose XSAVE area is larger than the buffer UML keeps per
//! guest thread (CPUs with AMX). Written next to the guest's images and preloaded into
//! `linux.uml`; its one-line report says what it decided.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The shared object, as build.rs compiled it (empty where there is no guest).
const SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/xstate_shim.so"));

/// Its file name in `guest-PID/`.
pub(super) const SHIM_FILE: &str = "xstate-shim.so";
/// The file its report goes to, in `guest-PID/`.
pub(super) const REPORT_FILE: &str = "xstate.report";
/// The variable that names the report file to the shim.
const REPORT_VAR: &str = "FSLAB_XSTATE_REPORT";
/// `FSLAB_GUEST_XSTATE_SHIM=off` boots the guest without the shim: for showing what it fixes.
pub const SWITCH_VAR: &str = "FSLAB_GUEST_XSTATE_SHIM";

/// Whether the shim is switched off on purpose (`FSLAB_GUEST_XSTATE_SHIM=off`).
pub fn switched_off() -> bool {
    std::env::var(SWITCH_VAR).is_ok_and(|v| v == "off" || v == "0")
}

/// Whether `kernel` (`linux.uml`) loads the shim at `path`: it runs `kernel --version` with
/// the shim preloaded, and the dynamic loader's complaint (a bad ELF header, another
/// architecture, a short file), which would otherwise be a warning the guest goes on past,
/// becomes one line naming the cause.
fn loads(kernel: &Path, path: &Path) -> std::result::Result<(), String> {
    let out = std::process::Command::new(kernel)
        .arg("--version")
        .env("LD_PRELOAD", path)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {} --version: {e}", kernel.display()))?;
    // Only the loader's word counts: a kernel that fails otherwise shows why when it boots.
    let err = String::from_utf8_lossy(&out.stderr);
    match err.lines().find(|l| l.contains("LD_PRELOAD")).map(str::trim) {
        None => Ok(()),
        Some(complaint) => Err(format!(
            "fslab's XSAVE shim cannot be loaded into {} ({complaint}): rebuild fslab (cargo build --release), or set {SWITCH_VAR}=off on a host whose XSAVE area fits User-mode Linux",
            kernel.display()
        )),
    }
}

/// Check, before anything is made or measured, that `kernel` loads the shim this binary
/// carries (written to an anonymous memory file for the test).
pub fn check(kernel: &Path) -> std::result::Result<(), String> {
    if switched_off() || SHIM.is_empty() {
        return Ok(());
    }
    let fd = rustix::fs::memfd_create("fslab-xstate-shim", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| format!("making a memory file for the XSAVE shim: {e}"))?;
    let mut f = std::fs::File::from(fd);
    std::io::Write::write_all(&mut f, SHIM)
        .map_err(|e| format!("writing the XSAVE shim to a memory file: {e}"))?;
    use std::os::fd::AsRawFd;
    let path = PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), f.as_raw_fd()));
    loads(kernel, &path)
}

/// Write the shim into `dir` (a new file), check that `kernel` loads it, and return the
/// environment that preloads it into `linux.uml`; nothing when it is switched off or this
/// build has none.
pub(super) fn install(dir: &Path, kernel: &Path) -> Result<Vec<(String, PathBuf)>> {
    if switched_off() || SHIM.is_empty() {
        return Ok(Vec::new());
    }
    let path = dir.join(SHIM_FILE);
    let mut f = crate::safe::create_new(&path, 0o755)
        .with_context(|| format!("writing the guest's XSAVE shim {}", path.display()))?;
    std::io::Write::write_all(&mut f, SHIM)
        .with_context(|| format!("writing {}", path.display()))?;
    drop(f);
    loads(kernel, &path).map_err(crate::error::usage)?;
    Ok(vec![
        ("LD_PRELOAD".to_string(), path),
        (REPORT_VAR.to_string(), dir.join(REPORT_FILE)),
    ])
}

/// What the shim decided, from its report file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    /// True: it widened UML's sets to the host's size; false: it refused.
    pub widened: bool,
    /// UML's buffer per guest thread, bytes.
    pub uml_bytes: u64,
    /// The host's XSAVE area, bytes.
    pub host_bytes: u64,
    /// The report line itself.
    pub line: String,
}

/// Read the shim's report from a guest directory (absent when UML never needed it).
pub(super) fn decision(dir: &Path) -> Option<Decision> {
    let text = std::fs::read_to_string(dir.join(REPORT_FILE)).ok()?;
    parse(text.trim())
}

fn parse(line: &str) -> Option<Decision> {
    let mut words = line.split_whitespace();
    let widened = match words.next()? {
        "widened" => true,
        "refused" => false,
        _ => return None,
    };
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
    };
    Some(Decision {
        widened,
        uml_bytes: field("uml")?,
        host_bytes: field("host")?,
        line: line.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_is_built_into_the_binary_on_x86_64() {
        if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            assert_eq!(&SHIM[..4], b"\x7fELF", "build.rs compiled a shared object");
        }
    }

    #[test]
    fn reports_parse() {
        let d = parse("widened uml=2696 host=11008 initialised=17,18").unwrap();
        assert!(d.widened);
        assert_eq!((d.uml_bytes, d.host_bytes), (2696, 11008));
        let r = parse("refused uml=2696 host=12000 component=19 offset=2696 size=128").unwrap();
        assert!(!r.widened);
        assert!(parse("something else").is_none());
    }

    #[test]
    fn a_shim_the_loader_refuses_is_an_error_naming_the_cause() {
        // Any dynamically linked program shows what the loader says.
        let prog = Path::new("/bin/true");
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.so");
        std::fs::write(&bad, [b'x'; 4096]).unwrap();
        let e = loads(prog, &bad).unwrap_err();
        assert!(
            e.contains("cannot be loaded into /bin/true") && e.contains("invalid ELF header"),
            "{e}"
        );
        assert!(e.contains(SWITCH_VAR), "{e}");
        if !SHIM.is_empty() {
            let good = dir.path().join("good.so");
            std::fs::write(&good, SHIM).unwrap();
            assert_eq!(loads(prog, &good), Ok(()));
            assert_eq!(check(prog), Ok(()), "the shim this binary carries loads");
        }
    }

    #[test]
    fn install_writes_a_new_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let env = install(dir.path(), Path::new("/bin/true")).unwrap();
        if SHIM.is_empty() || switched_off() {
            return;
        }
        assert_eq!(env[0].0, "LD_PRELOAD");
        assert_eq!(std::fs::read(&env[0].1).unwrap(), SHIM);
        assert!(
            install(dir.path(), Path::new("/bin/true")).is_err(),
            "an existing file is not reused"
        );
    }
}
