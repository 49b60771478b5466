//! Before a guest boots: can it? Checks, in well under a second and without booting, what
//! has made User-mode Linux fail on hosts tried so far, and names the cause and the fix in
//! one line: `linux.uml` missing, ptrace forbidden (containers, Yama), the host's XSAVE area
//! larger than UML keeps per thread (CPUs with AMX; fslab's shim widens it when that is
//! lossless), no room for the guest's memory.

use std::path::{Path, PathBuf};

/// Bytes of XSAVE state UML keeps per guest thread (x87 to PKRU: Debian's 6.1 and 6.12).
pub const UML_XSTATE_BYTES: u64 = 2696;

/// One XSAVE state component that lies beyond what UML keeps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Component {
    /// Its number (the bit in XCR0).
    pub number: u32,
    /// Offset in the standard XSAVE layout.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// What it holds.
    pub name: &'static str,
}

impl Component {
    /// AMX's tile configuration and data, which a guest's processes can never hold (the
    /// host grants them only to a process that asks; UML's processes never do).
    pub fn guest_cannot_hold(&self) -> bool {
        matches!(self.number, 17 | 18)
    }
}

/// What the probe found on this host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostFacts {
    /// The UML kernel.
    pub kernel: PathBuf,
    /// The host's user XSAVE area in bytes, as ptrace moves it (None: not x86-64).
    pub xsave_bytes: Option<u64>,
    /// Components beyond [`UML_XSTATE_BYTES`].
    pub beyond: Vec<Component>,
    /// Whether the shim will widen UML's sets (the area is larger, every component beyond
    /// is one a guest cannot hold, and the shim is not switched off).
    pub shim_widens: bool,
    /// Where UML keeps the guest's memory, and its free bytes.
    pub memory_dir: PathBuf,
    /// Free bytes there.
    pub memory_free: u64,
}

impl HostFacts {
    /// One line: the XSAVE situation in words.
    pub fn xsave_words(&self) -> String {
        match self.xsave_bytes {
            None => "no XSAVE state to move".to_string(),
            Some(n) if n <= UML_XSTATE_BYTES => format!(
                "the host's XSAVE area ({n} bytes) fits UML's {UML_XSTATE_BYTES}: no shim needed"
            ),
            Some(n) => format!(
                "the host's XSAVE area is {n} bytes ({}), UML keeps {UML_XSTATE_BYTES}: fslab's shim widens UML's register sets, the rest starts from its initial state",
                names(&self.beyond)
            ),
        }
    }
}

fn names(c: &[Component]) -> String {
    c.iter()
        .map(|c| format!("{} (component {}, {} bytes)", c.name, c.number, c.size))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Check that a guest of `mem` bytes can start here: Ok with the facts, or one line that
/// names the cause and what to do.
pub fn probe(mem: u64) -> Result<HostFacts, String> {
    let kernel = crate::provision::support::find_program("linux.uml").ok_or_else(|| {
        "linux.uml is missing: install the User-mode Linux kernel with scripts/install-deps --guest (apt-get install user-mode-linux)".to_string()
    })?;
    if std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").is_ok_and(|s| s.trim() == "3")
    {
        return Err("ptrace is disabled on this host (kernel.yama.ptrace_scope = 3), and User-mode Linux runs its guest's processes under ptrace: boot with a lower ptrace_scope (3 cannot be lowered until a reboot)".to_string());
    }
    let area = xsave_area()?;
    let xsave_bytes = area.as_ref().map(|a| a.len() as u64);
    let beyond = area
        .as_deref()
        .map(|a| components_beyond(xfeatures(a), UML_XSTATE_BYTES))
        .unwrap_or_default();
    let needs = xsave_bytes.is_some_and(|n| n > UML_XSTATE_BYTES);
    if needs {
        if let Some(c) = beyond.iter().find(|c| !c.guest_cannot_hold()) {
            return Err(format!(
                "the host's XSAVE area is {} bytes and its {} lies beyond the {UML_XSTATE_BYTES} bytes User-mode Linux keeps per thread: a guest thread's registers could be lost, so fslab does not boot it here; run guest studies on another host",
                xsave_bytes.unwrap_or(0),
                names(std::slice::from_ref(c))
            ));
        }
        if super::shim::switched_off() {
            return Err(format!(
                "the host's XSAVE area is {} bytes and User-mode Linux sets only {UML_XSTATE_BYTES}: the guest would panic at its first process (ptrace EFAULT); unset {} to let fslab's shim widen UML's sets",
                xsave_bytes.unwrap_or(0),
                super::shim::SWITCH_VAR
            ));
        }
    }
    super::shim::check(&kernel)?;
    let spare = crate::plan::space::spare_ram();
    if mem > spare {
        return Err(format!(
            "the guest's {} of memory is more than the {} this machine can spare (its available memory less a reserve of a tenth, at least 512 MiB): give the guest less memory (--guest uml:SIZE, or fslab doctor --guest-mem SIZE)",
            crate::units::fmt_bytes(mem),
            crate::units::fmt_bytes(spare)
        ));
    }
    let memory_dir = uml_memory_dir();
    let memory_free = crate::sysinfo::free_space(&memory_dir)
        .map(|f| f.bytes)
        .unwrap_or(0);
    if memory_free < mem {
        return Err(format!(
            "User-mode Linux keeps the guest's {} of memory in {}, which has {} free: make room there, set TMPDIR to a directory with room, or give the guest less memory (--guest uml:256M)",
            crate::units::fmt_bytes(mem),
            memory_dir.display(),
            crate::units::fmt_bytes(memory_free)
        ));
    }
    Ok(HostFacts {
        kernel,
        xsave_bytes,
        beyond,
        shim_widens: needs,
        memory_dir,
        memory_free,
    })
}

/// The directory UML 6.1 makes its memory file in: `$TMPDIR` (or `$TMP`, `$TEMP`), else
/// `/dev/shm` when it is a tmpfs, else `/tmp`.
fn uml_memory_dir() -> PathBuf {
    for var in ["TMPDIR", "TMP", "TEMP"] {
        if let Some(d) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            return PathBuf::from(d);
        }
    }
    let shm = Path::new("/dev/shm");
    // f_type is i64 on x86-64, u32 elsewhere.
    let tmpfs =
        rustix::fs::statfs(shm).is_ok_and(|s| u64::try_from(s.f_type).ok() == Some(0x0102_1994));
    if tmpfs {
        shm.to_path_buf()
    } else {
        PathBuf::from("/tmp")
    }
}

/// The user XSAVE area of a traced child, as `PTRACE_GETREGSET NT_X86_XSTATE` returns it,
/// read the way UML reads its guest's processes (the child asks to be traced). None on hosts
/// without XSAVE; Err when ptrace is forbidden.
#[cfg(target_arch = "x86_64")]
fn xsave_area() -> Result<Option<Vec<u8>>, String> {
    const NT_X86_XSTATE: usize = 0x202;
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: the child calls only async-signal-safe functions (ptrace, raise, _exit); the
    // parent reads its registers into `buf`, kills it and reaps it.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return Err(format!(
                "fork failed while probing ptrace: {}",
                std::io::Error::last_os_error()
            ));
        }
        if pid == 0 {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                let e = *libc::__errno_location();
                libc::_exit(100 + e.clamp(0, 100));
            }
            libc::raise(libc::SIGSTOP);
            libc::_exit(0);
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        if !libc::WIFSTOPPED(status) {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                0
            };
            let errno = std::io::Error::from_raw_os_error(code - 100);
            return Err(format!(
                "ptrace is forbidden here (PTRACE_TRACEME: {errno}), and User-mode Linux runs its guest's processes under ptrace: run fslab where ptrace is allowed (in a container: --cap-add SYS_PTRACE, or a seccomp profile that allows ptrace)"
            ));
        }
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let got = libc::ptrace(
            libc::PTRACE_GETREGSET,
            pid,
            NT_X86_XSTATE,
            &mut iov as *mut libc::iovec,
        );
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
        if got != 0 {
            return Ok(None);
        }
        buf.truncate(iov.iov_len);
    }
    Ok(Some(buf))
}

#[cfg(not(target_arch = "x86_64"))]
fn xsave_area() -> Result<Option<Vec<u8>>, String> {
    Ok(None)
}

/// The user state components the host kernel moves: ptrace's XSAVE area carries XCR0 in the
/// first word of its software-reserved bytes (464–471; what gdb reads, the kernel's
/// `USER_XSTATE_XCR0_WORD`).
fn xfeatures(area: &[u8]) -> u64 {
    area.get(464..472)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

/// The enabled components whose bytes lie (partly) beyond `keep` in the standard layout.
fn components_beyond(enabled: u64, keep: u64) -> Vec<Component> {
    (2..64)
        .filter(|i| enabled & (1u64 << i) != 0)
        .filter_map(|i| {
            let (size, offset) = xsave_component(i)?;
            (u64::from(offset) + u64::from(size) > keep).then(|| Component {
                number: i,
                offset,
                size,
                name: component_name(i),
            })
        })
        .collect()
}

/// (size, offset) of component `i`, from CPUID leaf 0xD.
#[cfg(target_arch = "x86_64")]
fn xsave_component(i: u32) -> Option<(u32, u32)> {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU.
    let r = unsafe { std::arch::x86_64::__cpuid_count(0xd, i) };
    (r.eax != 0).then_some((r.eax, r.ebx))
}

#[cfg(not(target_arch = "x86_64"))]
fn xsave_component(_: u32) -> Option<(u32, u32)> {
    None
}

fn component_name(i: u32) -> &'static str {
    match i {
        2 => "AVX upper halves",
        3 | 4 => "MPX state",
        5 => "AVX-512 mask registers",
        6 => "AVX-512 upper halves",
        7 => "AVX-512 registers 16-31",
        9 => "protection keys (PKRU)",
        17 => "AMX tile configuration",
        18 => "AMX tile data",
        19 => "APX registers",
        _ => "an XSAVE component",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xfeatures_is_the_xcr0_word_of_the_software_bytes() {
        let mut a = vec![0u8; 600];
        a[464..472].copy_from_slice(&0x602e7u64.to_le_bytes());
        assert_eq!(xfeatures(&a), 0x602e7);
        assert_eq!(xfeatures(&a[..100]), 0);
    }

    #[test]
    fn only_amx_is_what_a_guest_cannot_hold() {
        let c = |number| Component {
            number,
            offset: 0,
            size: 0,
            name: component_name(number),
        };
        assert!(c(17).guest_cannot_hold() && c(18).guest_cannot_hold());
        assert!(!c(7).guest_cannot_hold() && !c(19).guest_cannot_hold());
    }

    #[test]
    fn this_hosts_area_is_read_through_ptrace() {
        // Whatever the CPU: the probe either reads an area that starts with the legacy
        // region and header, or says in one line why ptrace is not allowed.
        match xsave_area() {
            Ok(Some(a)) => {
                assert!(a.len() >= 576, "{}", a.len());
                // x87 and SSE are always enabled.
                assert_eq!(xfeatures(&a) & 3, 3, "{:#x}", xfeatures(&a));
                // Components beyond the whole area cannot exist.
                assert!(components_beyond(xfeatures(&a), a.len() as u64).is_empty());
            }
            Ok(None) => {}
            Err(e) => assert!(e.contains("ptrace"), "{e}"),
        }
    }
}
