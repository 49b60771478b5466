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

/// Write the shim into `dir` (a new file) and return the environment that preloads it into
/// `linux.uml`; nothing when it is switched off or this build has none.
pub(super) fn install(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    if switched_off() || SHIM.is_empty() {
        return Ok(Vec::new());
    }
    let path = dir.join(SHIM_FILE);
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&path)
            .with_context(|| format!("writing the guest's XSAVE shim {}", path.display()))?;
        f.write_all(SHIM)
            .with_context(|| format!("writing {}", path.display()))?;
    }
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
    fn install_writes_a_new_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let env = install(dir.path()).unwrap();
        if SHIM.is_empty() || switched_off() {
            return;
        }
        assert_eq!(env[0].0, "LD_PRELOAD");
        assert_eq!(std::fs::read(&env[0].1).unwrap(), SHIM);
        assert!(
            install(dir.path()).is_err(),
            "an existing file is not reused"
        );
    }
}
