//! Facts about the machine and its file systems: free space, file-system type and effective
//! mount options, memory, kernel, CPU, virtualisation, and what the block device under a file
//! system is. Read from statvfs, /proc and /sys; the one external command is
//! `systemd-detect-virt`, when installed (`virt.rs`), started through `process::Spawn`, the
//! only part of fslab this module uses.
//!
//! `/proc/self/mountinfo` is parsed here by hand: the `procfs` crate's `MountInfo` keeps the
//! options in hash maps, which lose their order, and the order is part of what `mount` was
//! told. `/proc/cpuinfo` goes through `procfs-core` (`cpu.rs`).

mod block;
mod cpu;
pub mod vectors;
mod virt;

pub use block::{BlockFacts, Sysfs};
pub use cpu::{cpu_facts, parse_cpuinfo, CpuFacts};
pub use virt::{container_from_files, virtualization, vm_from_clues, Virtualization, VmClues};

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Free space of a file system, as statvfs reports it to an unprivileged writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeSpace {
    /// Bytes available to non-root users (f_bavail × f_frsize).
    pub bytes: u64,
    /// Size of the file system in bytes (f_blocks × f_frsize).
    pub total_bytes: u64,
    /// Free inodes available (f_favail).
    pub inodes: u64,
    /// Total inodes (0 where the file system has no fixed inode count, e.g. btrfs).
    pub inodes_total: u64,
}

/// statvfs of the file system holding `dir`.
pub fn free_space(dir: &Path) -> Result<FreeSpace> {
    let st = rustix::fs::statvfs(dir).with_context(|| format!("statvfs {}", dir.display()))?;
    Ok(FreeSpace {
        bytes: st.f_bavail.saturating_mul(st.f_frsize),
        total_bytes: st.f_blocks.saturating_mul(st.f_frsize),
        inodes: st.f_favail,
        inodes_total: st.f_files,
    })
}

/// One line of /proc/self/mountinfo that matters to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// File-system type (`ext4`, `tmpfs`, …).
    pub fs_type: String,
    /// The mount source (a device path for block file systems).
    pub source: String,
    /// The effective options: per-mount then super-block options, each once, in order
    /// (`rw,relatime` + `rw,discard` = `rw,relatime,discard`); `ro` on either side wins over
    /// `rw`.
    pub options: String,
}

/// Per-mount and super-block options as one list: each option once, first place kept, and
/// `rw` dropped when either side says `ro` (the mount is read-only then).
pub fn effective_options(per_mount: &str, super_block: &str) -> String {
    let all: Vec<&str> = per_mount
        .split(',')
        .chain(super_block.split(','))
        .filter(|o| !o.is_empty())
        .collect();
    let read_only = all.contains(&"ro");
    let mut out: Vec<&str> = Vec::with_capacity(all.len());
    for o in all {
        let dropped = read_only && o == "rw";
        if !dropped && !out.contains(&o) {
            out.push(o);
        }
    }
    out.join(",")
}

/// Unescape the octal escapes (`\040` for space) used in /proc mount tables.
fn unescape_mount_field(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = (b[i] == b'\\').then(|| b.get(i + 1..i + 4)).flatten();
        // A byte's escape: \000 to \377.
        match octal.filter(|d| d[0] <= b'3' && d.iter().all(|c| (b'0'..=b'7').contains(c))) {
            Some(d) => {
                out.push(d.iter().fold(0, |v, c| v * 8 + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse the text of /proc/self/mountinfo.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let entry = |line: &str| {
        let (left, right) = line.split_once(" - ")?;
        let lf: Vec<&str> = left.split(' ').collect();
        let rf: Vec<&str> = right.split(' ').collect();
        if lf.len() < 6 || rf.len() < 2 {
            return None;
        }
        Some(MountEntry {
            mount_point: PathBuf::from(unescape_mount_field(lf[4])),
            fs_type: rf[0].to_string(),
            source: unescape_mount_field(rf[1]),
            options: effective_options(lf[5], rf.get(2).copied().unwrap_or("")),
        })
    };
    text.lines().filter_map(entry).collect()
}

/// The mounts of this process's namespace.
pub fn mounts() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// The mount holding `path` (longest mount-point prefix of its canonical path).
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let canon = std::fs::canonicalize(path).ok()?;
    mount_holding(&mounts(), &canon).cloned()
}

/// The entry of `mounts` holding `path`: the longest mount-point prefix.
fn mount_holding<'m>(mounts: &'m [MountEntry], path: &Path) -> Option<&'m MountEntry> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        // Later entries shadow earlier ones on the same mount point.
        .max_by_key(|(i, m)| (m.mount_point.as_os_str().len(), *i))
        .map(|(_, m)| m)
}

/// The file-system type of the mount holding `path`, if it can be found.
pub fn fs_type_of(path: &Path) -> Option<String> {
    mount_of(path).map(|m| m.fs_type)
}

/// Total RAM in bytes (MemTotal from /proc/meminfo).
pub fn total_ram() -> u64 {
    meminfo_kib("MemTotal:") * 1024
}

/// Memory available for new uses without swapping, in bytes (MemAvailable from
/// /proc/meminfo; 0 when it cannot be read).
pub fn available_ram() -> u64 {
    meminfo_kib("MemAvailable:") * 1024
}

fn meminfo_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .unwrap_or(0)
}

/// The text of a small file (a sysfs or /sys/class attribute), trimmed; `None` when it cannot
/// be read or is empty.
pub(crate) fn read_trimmed(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The short host name (up to the first dot), as `hostname -s` prints it.
pub fn short_hostname() -> String {
    let uts = rustix::system::uname();
    let full = uts.nodename().to_string_lossy().into_owned();
    full.split('.').next().unwrap_or("localhost").to_string()
}

/// Kernel release and version (`uname -r -v`).
pub fn kernel() -> String {
    let uts = rustix::system::uname();
    format!(
        "{} {} {}",
        uts.sysname().to_string_lossy(),
        uts.release().to_string_lossy(),
        uts.version().to_string_lossy()
    )
}

/// CPU model name and the number of CPUs this process may use (`AMD EPYC (2 CPUs)`).
pub fn cpu() -> String {
    let model = cpu_facts()
        .and_then(|c| c.model)
        .unwrap_or_else(|| "unknown".into());
    format!("{model} ({} CPUs)", usable_cpus())
}

/// The CPUs this process may run on: its affinity mask and its cgroup's CPU quota taken
/// into account (`taskset -c 0-3` on a 64-CPU machine gives 4).
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Whether a thread of this process may have a file-descriptor table of its own, as
/// fslab's workers ask for (`unshare(CLONE_FILES)`, tried on a thread that then ends):
/// `own`, or `shared: <why>` where a seccomp filter (a container's, by default) refuses it.
pub fn worker_file_tables() -> String {
    let tried = std::thread::Builder::new()
        .name("fslab-probe".into())
        .spawn(|| rustix::thread::unshare(rustix::thread::UnshareFlags::FILES))
        .map_err(|e| e.to_string())
        .and_then(|h| {
            h.join()
                .map_err(|_| "the probe thread panicked".to_string())
        });
    match tried {
        Ok(Ok(())) => "own".into(),
        Ok(Err(e)) => format!("shared: unshare(CLONE_FILES) refused ({e})"),
        Err(e) => format!("unknown: {e}"),
    }
}

/// Whether the process runs as root (euid 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Facts about the block device of a mount source or device path, as environment keys
/// (`model`, `kind`, `vendor`, `vendor_id`, `device_id`, `bus`, `driver`, `disk`,
/// `backing_file`, `backing_device`, `slaves`, `bytes`, `rotational`, `scheduler`; see
/// [`BlockFacts::pairs`]) for the caller to prefix.
pub fn device_facts(source: &str) -> Vec<(String, String)> {
    Sysfs::describe_here(source).pairs()
}

/// The environment recorded with every run: host, kernel, CPU, RAM, virtualisation, fslab
/// version, and (when `target` is given) the file system, its effective mount options and
/// the device under it (`target_device_model`, …).
pub fn environment(target: Option<&Path>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("host", short_hostname()),
        ("kernel", kernel()),
        ("cpu", cpu()),
        ("cpus_usable", usable_cpus().to_string()),
        ("worker_file_tables", worker_file_tables()),
        ("ram_bytes", total_ram().to_string()),
        ("fslab_version", env!("CARGO_PKG_VERSION").to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .into();
    if let Some(c) = cpu_facts() {
        if let Some(m) = c.model {
            env.push(("cpu_model".into(), m));
        }
        env.push(("cpu_count".into(), c.count.to_string()));
    }
    let v = virtualization();
    env.push(("virtualization".into(), v.vm));
    env.push(("virtualization_source".into(), v.vm_source));
    env.push(("container".into(), v.container));
    if let Some(m) = target.and_then(mount_of) {
        env.push(("target_fs".into(), m.fs_type.clone()));
        env.push(("target_mount".into(), m.mount_point.display().to_string()));
        env.push(("target_mount_options".into(), m.options.clone()));
        env.push(("target_device".into(), m.source.clone()));
        let dev = Sysfs::describe_here(&m.source);
        // The disk's queue: a partition's scheduler is its disk's.
        if let Some(sched) = dev
            .scheduler
            .clone()
            .or_else(|| scheduler_of_device(&m.source))
        {
            env.push(("target_scheduler".into(), sched));
        }
        for (k, v) in dev.pairs() {
            if k != "scheduler" {
                env.push((format!("target_device_{k}"), v));
            }
        }
    }
    env.sort();
    env
}

/// The active entry of a `queue/scheduler` file (`none [mq-deadline] kyber` = `mq-deadline`),
/// or the text as it is when nothing is bracketed.
pub(crate) fn active_scheduler(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| text.trim().to_string())
}

/// The active I/O scheduler of a block device (`/sys/block/<dev>/queue/scheduler`, the
/// bracketed entry), or `None` for non-block sources and partitions we cannot map.
pub fn scheduler_of_device(source: &str) -> Option<String> {
    let name = Path::new(source).file_name()?.to_str()?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).ok()?;
    Some(active_scheduler(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
30 22 0:25 / /dev/shm rw,nosuid shared:2 - tmpfs tmpfs rw,size=100k
41 22 7:0 / /mnt/with\\040space rw,noatime - xfs /dev/loop0 rw,logbufs=8
";

    #[test]
    fn parses_mountinfo_lines() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].mount_point, PathBuf::from("/"));
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].source, "/dev/vda");
        assert_eq!(m[1].fs_type, "tmpfs");
        assert_eq!(m[2].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(m[2].options, "rw,noatime,logbufs=8");
        // Above \377 is no byte: kept as written (the kernel writes a backslash as \134).
        let odd = parse_mountinfo("41 22 7:0 / /x\\777 rw - xfs /dev/loop0 rw\n");
        assert_eq!(odd[0].mount_point, PathBuf::from("/x\\777"));
    }

    #[test]
    fn effective_options_are_each_given_once_in_order() {
        // This lab's root file system, as /proc/self/mountinfo gives it.
        let root = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n";
        assert_eq!(
            parse_mountinfo(root)[0].options,
            "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534"
        );
        assert_eq!(effective_options("rw,relatime", "rw"), "rw,relatime");
        // Read-only on either side makes the mount read-only.
        assert_eq!(
            effective_options("ro,relatime", "rw,errors=remount-ro"),
            "ro,relatime,errors=remount-ro"
        );
        assert_eq!(effective_options("rw,noatime", "ro"), "noatime,ro");
        assert_eq!(effective_options("rw", ""), "rw");
    }

    #[test]
    fn the_environment_says_cpu_and_virtualisation_and_the_targets_device() {
        let env = environment(Some(Path::new("/")));
        let get = |k: &str| {
            env.iter()
                .find(|(a, _)| a == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {k} in {env:?}"))
        };
        for k in [
            "virtualization",
            "virtualization_source",
            "container",
            "cpu_model",
            "cpu_count",
            "target_device_model",
            "target_device_kind",
        ] {
            assert!(!get(k).is_empty(), "{k}");
        }
        assert!(get("cpu_count").parse::<usize>().unwrap() >= 1);
        assert_eq!(get("worker_file_tables"), "own");
        // The CPUs this process may use: never more than the machine has.
        let usable = get("cpus_usable").parse::<usize>().unwrap();
        assert!(usable >= 1 && usable <= get("cpu_count").parse::<usize>().unwrap());
        assert!(!get("target_device_model").starts_with("0x"));
        let opts: Vec<&str> = get("target_mount_options").split(',').collect();
        let mut once = opts.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), opts.len(), "{opts:?}");
    }

    #[test]
    fn free_space_of_tmp_is_positive() {
        let f = free_space(Path::new("/tmp")).unwrap();
        assert!(f.bytes > 0);
    }

    #[test]
    fn root_mount_is_found() {
        let m = mount_of(Path::new("/")).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/"));
    }

    #[test]
    fn hostname_has_no_dot() {
        assert!(!short_hostname().contains('.'));
        assert!(total_ram() > 0);
    }
}
