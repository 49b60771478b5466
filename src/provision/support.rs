//! What this machine can provision: file systems the kernel knows (`/proc/filesystems` or a
//! module under `/lib/modules/$(uname -r)/kernel/fs/`) and programs that are installed.
//! Read-only, no root needed, so `fslab study plan` can say "not supported on this machine"
//! before anything runs.

use super::exec::package_of;
use super::spec::FsType;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Programs every study needs besides the mkfs tools.
pub const COMMON_PROGRAMS: [&str; 6] =
    ["losetup", "mount", "umount", "truncate", "blkid", "wipefs"];

/// The variable that names, PATH-style, the only directories fslab takes the programs it
/// runs from (mkfs, mount, losetup, …): a tool built elsewhere, or — in tests — a tool
/// hidden on purpose.
pub const PROGRAM_PATH: &str = "FSLAB_PROGRAM_PATH";

/// Find a program: in `$FSLAB_PROGRAM_PATH` only when it is set, else in `PATH`, then in the
/// sbin directories (absent from a user's `PATH` on some systems, while root's has them).
/// The checks (`study plan`, `study run`, `fslab doctor`) and the runs ([`super::exec::RealExec`])
/// both look here, so a tool the check found is the tool that runs.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = match std::env::var_os(PROGRAM_PATH) {
        Some(only) => std::env::split_paths(&only).collect(),
        None => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
                .collect()
        }
    };
    dirs.into_iter()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        // An executable file.
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// Whether the running kernel has (or can load) this file system.
pub fn kernel_has(fs: &str) -> bool {
    let listed = std::fs::read_to_string("/proc/filesystems")
        .map(|t| t.lines().any(|l| l.split_whitespace().last() == Some(fs)))
        .unwrap_or(false);
    if listed {
        return true;
    }
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    Path::new(&format!("/lib/modules/{release}/kernel/fs/{fs}")).is_dir()
}

/// `Ok` if cells of this type can be made here, else one line saying what is missing and
/// what to do.
pub fn check_fs(fs: FsType) -> Result<(), String> {
    let mut missing = Vec::new();
    let no_kernel = !kernel_has(fs.as_str());
    if no_kernel {
        missing.push(format!(
            "the kernel has no {fs} (not in /proc/filesystems, no module under /lib/modules/{}/kernel/fs/{fs})",
            rustix::system::uname().release().to_string_lossy()
        ));
    }
    missing.extend(missing_tools(fs));
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{fs} is not supported on this machine: {}; remove the {fs} cells, or {}",
        missing.join(" and "),
        if no_kernel {
            "run the study in a User-mode Linux guest, whose kernel has it: fslab study run --guest uml (scripts/install-deps --guest installs it)"
        } else {
            "install the tools with scripts/install-deps"
        }
    ))
}

fn missing_tools(fs: FsType) -> Vec<String> {
    fs.programs()
        .into_iter()
        .filter(|p| find_program(p).is_none())
        .map(|p| format!("{p} is missing (apt-get install {})", package_of(p)))
        .collect()
}

/// `Ok` if the tools for this file system are installed (for a guest, which runs the host's
/// programs with a kernel that has every file system fslab makes).
pub fn check_tools(fs: FsType) -> Result<(), String> {
    let missing = missing_tools(fs);
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{fs} cannot be made: {}; install the tools with scripts/install-deps --guest",
        missing.join(" and ")
    ))
}

/// `Ok` if the programs every study runs are installed.
pub fn check_common() -> Result<(), String> {
    let missing: Vec<String> = COMMON_PROGRAMS
        .iter()
        .filter(|p| find_program(p).is_none())
        .map(|p| format!("{p} ({})", package_of(p)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "missing programs: {}; run scripts/install-deps",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sh_is_found_and_nonsense_is_not() {
        assert!(find_program("sh").is_some());
        assert!(find_program("fslab-no-such-program").is_none());
    }

    #[test]
    fn unsupported_fs_message_names_the_fix() {
        // A file system no kernel has: the message must say so and name the package.
        if kernel_has("nilfs2") && find_program("mkfs.nilfs2").is_some() {
            assert!(check_fs(FsType::Nilfs2).is_ok());
        } else {
            let e = check_fs(FsType::Nilfs2).unwrap_err();
            assert!(e.contains("not supported on this machine"), "{e}");
        }
        assert!(kernel_has("tmpfs") || kernel_has("proc"));
    }
}
