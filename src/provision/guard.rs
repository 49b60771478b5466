//! Safety checks before anything is formatted. fslab runs mkfs as root; these checks make
//! formatting the wrong device impossible rather than unlikely.
//!
//! A device is refused when it: is not a block device; is mounted; has a mounted partition;
//! holds the root file system (through partitions, device mapper or loop devices too); is
//! swap; backs a loop device or is held by device mapper/RAID (`holders/`); is a loop device
//! under something mounted; cannot be opened exclusively (`O_EXCL`, the kernel's own "in use"
//! test); or carries a file-system, RAID or partition-table signature (`blkid -p`,
//! `wipefs -n`) or partitions. A partition's entry in its disk's table (blkid's
//! `PART_ENTRY_*` tags) is not a signature on the partition: a blank partition passes.
//! `allow_format` in the study waives only the signature test, for that exact path: it says
//! "its old contents may go", never "format it while in use".

use super::exec::{CmdLine, Exec};
use super::signature::Signature;
use super::{loopdev, ProvisionError};
use std::collections::HashMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A device number (major, minor).
pub type DevNum = (u32, u32);

fn devnum_of_rdev(rdev: u64) -> DevNum {
    (rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// The sysfs directory of a block device.
fn sys_dir(d: DevNum) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{}:{}", d.0, d.1)).ok()
}

/// `major:minor` as sysfs and mountinfo write it.
fn parse_devnum(t: &str) -> Option<DevNum> {
    let (a, b) = t.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn read_devnum(sys: &Path) -> Option<DevNum> {
    parse_devnum(std::fs::read_to_string(sys.join("dev")).ok()?.trim())
}

fn children(sys: &Path, sub: &str) -> Vec<PathBuf> {
    std::fs::read_dir(sys.join(sub))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::canonicalize(e.path()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Partitions of a whole disk (`sda1`, `loop0p1`), as sysfs directories.
fn partitions(sys: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(sys)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("partition").exists())
                .collect()
        })
        .unwrap_or_default()
}

fn block_devnum(path: &Path) -> Option<DevNum> {
    let m = std::fs::metadata(path).ok()?;
    m.file_type()
        .is_block_device()
        .then(|| devnum_of_rdev(m.rdev()))
}

/// How a device relates to the in-use device it was reached from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rel {
    /// The device itself.
    Itself,
    /// The whole disk holding the (partition) device.
    DiskOf,
    /// A device further down (slave of device mapper/RAID, loop backing device, …).
    Under,
}

/// Every device a block device depends on: itself, the disk of a partition, the slaves of a
/// device-mapper/RAID device, the block device under a loop device — recursively.
fn underlying(d: DevNum, rel: Rel, out: &mut Vec<(DevNum, Rel)>) {
    if out.iter().any(|(x, _)| *x == d) || out.len() > 256 {
        return;
    }
    out.push((d, rel));
    let Some(sys) = sys_dir(d) else { return };
    if sys.join("partition").exists() {
        if let Some(parent) = sys.parent().and_then(read_devnum) {
            let up = if rel == Rel::Itself {
                Rel::DiskOf
            } else {
                Rel::Under
            };
            underlying(parent, up, out);
        }
    }
    for s in children(&sys, "slaves") {
        if let Some(n) = read_devnum(&s) {
            underlying(n, Rel::Under, out);
        }
    }
    if let Some(name) = sys.file_name().and_then(|n| n.to_str()) {
        if let Some(back) = loopdev::backing_file(name) {
            if let Some(n) = block_devnum(&back) {
                underlying(n, Rel::Under, out);
            }
        }
    }
}

/// `d` and every device it depends on ([`underlying`]).
fn deps_of(d: DevNum) -> Vec<(DevNum, Rel)> {
    let mut deps = Vec::new();
    underlying(d, Rel::Itself, &mut deps);
    deps
}

/// Why each in-use device is in use: mounts (with what they depend on) and swap.
fn in_use() -> HashMap<DevNum, String> {
    let mut map: HashMap<DevNum, String> = HashMap::new();
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|w| *w == "-") else {
            continue;
        };
        let (Some(num), Some(mp), Some(src)) = (f.get(2), f.get(4), f.get(sep + 2)) else {
            continue;
        };
        let mp = mp.replace("\\040", " ");
        // btrfs reports an anonymous device number here; the source path is the real one.
        let from_src = src.starts_with('/').then(|| block_devnum(Path::new(src)));
        for r in parse_devnum(num).into_iter().chain(from_src.flatten()) {
            for (d, rel) in deps_of(r) {
                let why = match (rel, mp.as_str()) {
                    (Rel::Itself, "/") => "holds the root file system (/)".to_string(),
                    (Rel::Itself, _) => format!("is mounted on {mp}"),
                    (_, "/") => format!("lies under the root file system (/, from {src})"),
                    (Rel::DiskOf, _) => format!("has partition {src} mounted on {mp}"),
                    (Rel::Under, _) => format!("lies under {src}, which is mounted on {mp}"),
                };
                map.entry(d).or_insert(why);
            }
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        let Some(p) = line.split_whitespace().next() else {
            continue;
        };
        if let Some(n) = block_devnum(Path::new(p)) {
            for (d, rel) in deps_of(n) {
                let why = if rel == Rel::Itself {
                    "is in use as swap".to_string()
                } else {
                    format!("lies under swap device {p}")
                };
                map.entry(d).or_insert(why);
            }
        }
    }
    map
}

/// Refuse a data device and an external journal device that are one device: the same
/// device number after following symlinks (`/dev/sdb` and `/dev/disk/by-id/…`), or one
/// lying on the other (a partition of it, a loop device over it). Paths that do not exist or
/// are not block devices are left to [`check_formattable`], which names them.
pub fn check_distinct(data: &Path, journal: &Path) -> Result<(), ProvisionError> {
    let (Some(d), Some(j)) = (block_devnum(data), block_devnum(journal)) else {
        return Ok(());
    };
    let refuse = |reason: String| ProvisionError::Refused {
        device: journal.display().to_string(),
        reason,
    };
    let fix = "an external journal needs a device of its own: use journal = \"internal\" or another device";
    if d == j {
        return Err(refuse(format!(
            "it is the same device as the data device {} ({}:{}) under another path; {fix}",
            data.display(),
            d.0,
            d.1
        )));
    }
    for ((a, on, on_path), (b, under, under_path)) in [
        ((j, "the journal", journal), (d, "the data device", data)),
        ((d, "the data device", data), (j, "the journal", journal)),
    ] {
        if deps_of(a).iter().any(|(x, _)| *x == b) {
            return Err(refuse(format!(
                "{on} {} lies on {under} {} (a partition of it or a device over it); {fix}",
                on_path.display(),
                under_path.display()
            )));
        }
    }
    Ok(())
}

/// A block device as a run knows it: its device number, and for a loop device the file
/// behind it (device and inode). Two paths name the same device only when these agree, so a
/// path re-pointed meanwhile (a symbolic link) names another device, whatever it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevIdent {
    /// `st_rdev` of the device node.
    pub rdev: u64,
    /// For a loop device, its backing file's `st_dev` and `st_ino`.
    pub backing: Option<(u64, u64)>,
}

/// The identity of the block device at `dev` (following symbolic links), if it is one.
pub fn identity(dev: &Path) -> Option<DevIdent> {
    let md = std::fs::metadata(dev).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let rdev = md.rdev();
    let backing = sys_dir(devnum_of_rdev(rdev))
        .and_then(|sys| std::fs::read_to_string(sys.join("loop/backing_file")).ok())
        .and_then(|f| std::fs::metadata(f.trim()).ok())
        .map(|b| (b.dev(), b.ino()));
    Some(DevIdent { rdev, backing })
}

/// The read-only commands that look for signatures: `blkid -p` and `wipefs -n`.
pub fn probe_commands(dev: &Path) -> [CmdLine; 2] {
    [
        CmdLine::new("blkid")
            .args(["-p", "-o", "export"])
            .path(dev)
            .confined([dev]),
        CmdLine::new("wipefs")
            .args(["-n", "--noheadings", "--output", "TYPE,OFFSET"])
            .path(dev)
            .confined([dev]),
    ]
}

/// How thorough a check is: `plan` runs without root and skips what needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thoroughness {
    /// Open the device with O_EXCL (needs read permission, i.e. root).
    pub exclusive_open: bool,
    /// Look for signatures with blkid and wipefs (needs root).
    pub signatures: bool,
}

impl Thoroughness {
    /// Everything (what a run does before mkfs).
    pub const FULL: Thoroughness = Thoroughness {
        exclusive_open: true,
        signatures: true,
    };
}

/// Refuse to format `dev` unless it is an idle block device without any signature.
/// `allow_listed` (the exact path is under `allow_format`) waives the signature test only.
pub fn check_formattable(
    dev: &Path,
    allow_listed: bool,
    exec: &dyn Exec,
    how: Thoroughness,
) -> Result<(), ProvisionError> {
    let refuse = |reason: String| ProvisionError::Refused {
        device: dev.display().to_string(),
        reason,
    };
    let meta = std::fs::metadata(dev).map_err(|e| {
        refuse(format!(
            "cannot stat it ({e}); give an existing block device such as /dev/sdb"
        ))
    })?;
    if !meta.file_type().is_block_device() {
        return Err(refuse(
            "it is not a block device; give a device such as /dev/sdb, or use loop:SIZE for an image fslab manages".into(),
        ));
    }
    let num = devnum_of_rdev(meta.rdev());
    let fix = "choose a device that nothing uses (fslab never formats a device in use)";
    let busy = in_use();
    if let Some(why) = busy.get(&num) {
        return Err(refuse(format!("it {why}; {fix}")));
    }
    let sys = sys_dir(num).ok_or_else(|| {
        refuse(format!(
            "no sysfs entry for {}:{}; is it a real block device?",
            num.0, num.1
        ))
    })?;
    let parts = partitions(&sys);
    for p in &parts {
        if let Some(pn) = read_devnum(p) {
            if let Some(why) = busy.get(&pn) {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                return Err(refuse(format!("its partition {name} {why}; {fix}")));
            }
        }
    }
    let holders: Vec<String> = children(&sys, "holders")
        .iter()
        .filter_map(|h| h.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if !holders.is_empty() {
        return Err(refuse(format!(
            "it is held by {} (device mapper, RAID or LVM); {fix}",
            holders.join(", ")
        )));
    }
    let canon = std::fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let loops = loopdev::loops_backed_by(&canon);
    if !loops.is_empty() {
        return Err(refuse(format!(
            "it backs loop device {}; detach it first (losetup -d) or {fix}",
            loops
                .iter()
                .map(|l| l.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if how.exclusive_open {
        use std::os::unix::fs::OpenOptionsExt;
        if let Err(e) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(dev)
        {
            if e.raw_os_error() == Some(libc::EBUSY) {
                return Err(refuse(format!(
                    "the kernel reports it busy (opened exclusively: mounted, swap, RAID or device-mapper member); {fix}"
                )));
            }
            return Err(refuse(format!("cannot open it ({e}); run as root")));
        }
    }
    if allow_listed {
        return Ok(());
    }
    let waive = format!(
        "if its contents may be destroyed, list \"{}\" under [device] allow_format",
        dev.display()
    );
    if !parts.is_empty() {
        return Err(refuse(format!(
            "it has {} partition(s); {waive}",
            parts.len()
        )));
    }
    if how.signatures {
        let [blkid_cmd, wipefs_cmd] = probe_commands(dev);
        let blkid = exec.output(&blkid_cmd)?;
        // blkid exits 2 when it finds nothing.
        if blkid.status == 0 {
            if let Some(sig) = Signature::from_blkid(&blkid.stdout) {
                return Err(refuse(format!("it carries {sig}; {waive}")));
            }
            // Only the partition's entry in its disk's table: a blank partition.
        } else if blkid.status != 2 {
            return Err(refuse(format!(
                "blkid -p could not probe it (exit {}): {}",
                blkid.status,
                super::exec::first_meaningful_line(&blkid.stderr, &blkid.stdout)
            )));
        }
        let wipefs = exec.run(&wipefs_cmd)?;
        let sigs: Vec<&str> = wipefs
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        if !sigs.is_empty() {
            return Err(refuse(format!(
                "wipefs finds signatures ({}); {waive}",
                sigs.join("; ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::exec::RecordingExec;

    #[test]
    fn regular_files_and_missing_paths_are_refused() {
        let t = tempfile::NamedTempFile::new().unwrap();
        for (path, said) in [
            (t.path(), "not a block device"),
            (Path::new("/dev/does-not-exist"), "cannot stat"),
            (Path::new("/dev/null"), "not a block device"),
        ] {
            let e = check_formattable(path, true, &RecordingExec::new(), Thoroughness::FULL)
                .unwrap_err();
            assert!(e.to_string().contains(said), "{e}");
        }
    }

    #[test]
    fn the_root_device_is_always_refused() {
        // Whatever the root file system sits on, its device is found in use. No command
        // is run: the refusal comes before any probing.
        let root = crate::sysinfo::mount_of(Path::new("/")).unwrap();
        if !root.source.starts_with("/dev/") || block_devnum(Path::new(&root.source)).is_none() {
            return; // root on overlay/tmpfs in some containers: nothing to test here
        }
        let ex = RecordingExec::new();
        let e =
            check_formattable(Path::new(&root.source), true, &ex, Thoroughness::FULL).unwrap_err();
        assert!(e.to_string().contains("root file system"), "{e}");
        assert!(ex.lines().is_empty());
    }
}
