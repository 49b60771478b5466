//! `[guest]` and `--guest`: where a study runs when not on the host — a User-mode Linux guest
//! (`uml`, `uml:MEM`), whose kernel has nilfs2, JFS and ReiserFS. The runner boots it
//! (`runner::guest`).

/// Default guest memory.
pub const DEFAULT_MEM: u64 = 512 << 20;

/// A guest as asked on the command line (`uml`, `uml:1G`) or in `[guest]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestSpec {
    /// Guest memory in bytes (its page cache is bounded by it).
    pub mem: u64,
}

impl GuestSpec {
    /// Parse `uml` or `uml:MEM`.
    pub fn parse(s: &str) -> std::result::Result<GuestSpec, String> {
        let (kind, mem) = match s.split_once(':') {
            Some((k, m)) => (k, Some(m)),
            None => (s, None),
        };
        if kind != "uml" {
            return Err(format!(
                "guest '{s}' is not known; use uml or uml:MEM (e.g. uml:512M), a User-mode Linux guest"
            ));
        }
        GuestSpec::new(mem)
    }

    /// A UML guest with this memory (`None`: [`DEFAULT_MEM`]).
    pub fn new(mem: Option<&str>) -> std::result::Result<GuestSpec, String> {
        let mem = match mem {
            None => DEFAULT_MEM,
            Some(m) => crate::units::parse_size(m).map_err(|e| format!("guest memory: {e}"))?,
        };
        if mem < 128 << 20 {
            return Err(format!(
                "guest memory {} is too small; use at least 128M (e.g. uml:512M)",
                crate::units::fmt_bytes(mem)
            ));
        }
        Ok(GuestSpec { mem })
    }

    /// `512M`, as the guest's kernel command line takes it.
    pub fn mem_word(&self) -> String {
        crate::provision::spec::size_word(self.mem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_specs_parse_with_a_default_memory() {
        assert_eq!(GuestSpec::parse("uml").unwrap().mem, DEFAULT_MEM);
        assert_eq!(GuestSpec::parse("uml:1G").unwrap().mem, 1 << 30);
        assert_eq!(GuestSpec::parse("uml:1G").unwrap().mem_word(), "1G");
        assert!(GuestSpec::parse("kvm").unwrap_err().contains("use uml"));
        assert!(GuestSpec::parse("uml:64M")
            .unwrap_err()
            .contains("at least 128M"));
        assert!(GuestSpec::parse("uml:lots").is_err());
    }
}
