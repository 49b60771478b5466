//! The block devices of a cell, by role, as `/proc/diskstats` names them.
//!
//! A path (a device node such as `/dev/loop3`, a mount point, or any file in a mounted
//! directory) is resolved with stat(2): a block device node's `st_rdev`, otherwise the
//! `st_dev` of the file system holding it; file systems with anonymous device numbers
//! (major 0: btrfs, overlay) are resolved through the mount's source device. The name comes
//! from `/sys/dev/block/<major>:<minor>` (sysfs writes `/` in names as `!`). Lines of
//! `/proc/diskstats` are matched by major:minor, so a rename cannot confuse them.
//!
//! A loop device's backing device is the device of the file system holding its backing file
//! (`/sys/block/loopN/loop/backing_file`): the partition or dm device that file system is on,
//! as diskstats names it (`vda1`, `dm-0`), not the whole disk. A loop device over a file in
//! tmpfs (fslab's `ram:` journals) has no backing device.

use super::fs::external_journal_in;
use anyhow::{bail, Context, Result};
use rustix::fs::{major, minor, FileType};
use std::path::{Path, PathBuf};

/// A block device: its number and its kernel name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockDev {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Kernel name, as in `/proc/diskstats` (`loop3`, `vda1`, `dm-0`).
    pub name: String,
}

impl BlockDev {
    /// The block device with this number (its name read from sysfs).
    pub fn from_number(major: u32, minor: u32) -> Result<BlockDev> {
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let target = std::fs::read_link(&link).with_context(|| {
            format!(
                "no block device {major}:{minor} in sysfs ({})",
                link.display()
            )
        })?;
        let name = target
            .file_name()
            .with_context(|| format!("{} points nowhere", link.display()))?
            .to_string_lossy()
            .replace('!', "/");
        Ok(BlockDev { major, minor, name })
    }

    /// The block device behind `path`: the device itself for a block device node, else the
    /// device of the file system holding `path`. `Ok(None)` when that file system has no
    /// block device (tmpfs, proc, NFS).
    pub fn of_path(path: &Path) -> Result<Option<BlockDev>> {
        let st = rustix::fs::stat(path).with_context(|| format!("stat {}", path.display()))?;
        let node = FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice;
        let d = if node { st.st_rdev } else { st.st_dev };
        if node || major(d) != 0 {
            return BlockDev::from_number(major(d), minor(d)).map(Some);
        }
        // Anonymous device numbers: find the mount's source device.
        let Some(m) = crate::sysinfo::mount_of(path) else {
            return Ok(None);
        };
        let src = Path::new(&m.source);
        match rustix::fs::stat(src) {
            Ok(s)
                if src.is_absolute()
                    && FileType::from_raw_mode(s.st_mode) == FileType::BlockDevice =>
            {
                BlockDev::from_number(major(s.st_rdev), minor(s.st_rdev)).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn sys(&self) -> PathBuf {
        PathBuf::from(format!("/sys/dev/block/{}:{}", self.major, self.minor))
    }

    /// For a loop device: its backing file (`None` for other devices or a detached loop).
    pub fn loop_backing_file(&self) -> Option<PathBuf> {
        let t = std::fs::read_to_string(self.sys().join("loop/backing_file")).ok()?;
        let t = t.trim_end_matches('\n');
        (!t.is_empty()).then(|| PathBuf::from(t))
    }

    /// For a loop device: whether it does direct I/O to its backing file.
    pub fn loop_direct_io(&self) -> Option<bool> {
        let t = std::fs::read_to_string(self.sys().join("loop/dio")).ok()?;
        Some(t.trim() == "1")
    }
}

/// The part a device plays in a cell; its label is the `<role>` of `dev.<role>.*` metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The device the file system is on.
    Data,
    /// The external journal or log device.
    Journal,
    /// The device holding the data device's loop image (or the only backing device).
    Backing,
    /// The device holding the journal's loop image, when it differs from `Backing`.
    JournalBacking,
}

impl Role {
    /// `data`, `journal`, `backing`, `journal_backing`.
    pub fn label(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Journal => "journal",
            Role::Backing => "backing",
            Role::JournalBacking => "journal_backing",
        }
    }

    /// Whether the cell's file system does its I/O on it (data or journal).
    pub fn is_cell(self) -> bool {
        matches!(self, Role::Data | Role::Journal)
    }
}

/// One device of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Its role.
    pub role: Role,
    /// The device.
    pub dev: BlockDev,
    /// For a loop device: whether it does direct I/O (then its reads and writes reach the
    /// backing device one for one; buffered loops go through the page cache).
    pub direct_io: Option<bool>,
    /// For a loop device: the role of the device its image is on.
    pub backed_by: Option<Role>,
}

impl Device {
    /// A device with no loop details (direct I/O, backing role) recorded: a backing device.
    fn plain(role: Role, dev: BlockDev) -> Device {
        Device {
            role,
            dev,
            direct_io: None,
            backed_by: None,
        }
    }
}

/// The devices of a cell by role.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Devices {
    list: Vec<Device>,
}

impl Devices {
    /// Devices from a list (tests, or callers that resolved them otherwise).
    pub fn from_list(list: Vec<Device>) -> Devices {
        Devices { list }
    }

    /// The devices of a cell: its data device, its external journal device if any, and the
    /// devices holding the loop images of either.
    pub fn for_cell(data: &Path, journal: Option<&Path>) -> Result<Devices> {
        let on = |p: &Path| {
            BlockDev::of_path(p)?
                .with_context(|| format!("{} is not on a block device", p.display()))
        };
        Devices::build(on(data)?, journal.map(on).transpose()?)
    }

    /// The device under `dir` as the backing device of cells not made yet (a study's work
    /// directory before it starts, where its loop images will be): all its I/O is other I/O.
    pub fn backing_of(dir: &Path) -> Result<Devices> {
        let list = BlockDev::of_path(dir)?
            .map(|dev| Device::plain(Role::Backing, dev))
            .into_iter()
            .collect();
        Ok(Devices { list })
    }

    /// The devices under a directory, for ad-hoc engine runs: the device of its file
    /// system, that file system's external ext3/ext4 journal if it has one, and the backing
    /// devices of whichever of them are loop devices. Empty for a file system without a
    /// block device (tmpfs); machine and process figures are still recorded then.
    pub fn for_target(dir: &Path) -> Result<Devices> {
        let Some(d) = BlockDev::of_path(dir)? else {
            return Ok(Devices::default());
        };
        let j = match external_journal_in(Path::new("/"), &d.name) {
            None => xfs_logdev(dir)?,
            Some(name) => {
                let dev = std::fs::read_to_string(format!("/sys/class/block/{name}/dev"))
                    .with_context(|| {
                        format!("the journal device {name} of {} has no sysfs entry", d.name)
                    })?;
                let (ma, mi) = dev
                    .trim()
                    .split_once(':')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                    .with_context(|| format!("bad device number `{}` of {name}", dev.trim()))?;
                Some(BlockDev::from_number(ma, mi)?)
            }
        };
        Devices::build(d, j)
    }

    fn build(data: BlockDev, journal: Option<BlockDev>) -> Result<Devices> {
        if journal.as_ref() == Some(&data) {
            bail!("the journal device {} is the data device", data.name);
        }
        let mut list = Vec::new();
        let mut backings: Vec<Device> = Vec::new();
        for (role, dev) in [(Role::Data, Some(data)), (Role::Journal, journal)] {
            let Some(dev) = dev else { continue };
            let mut backed_by = None;
            if let Some(file) = dev.loop_backing_file() {
                let file = PathBuf::from(file.to_string_lossy().trim_end_matches(" (deleted)"));
                let b = BlockDev::of_path(&file).with_context(|| {
                    format!(
                        "finding the device under {}'s image {}",
                        dev.name,
                        file.display()
                    )
                })?;
                if let Some(b) = b {
                    let existing = backings.iter().find(|x| x.dev == b).map(|x| x.role);
                    let r = existing.unwrap_or(if backings.is_empty() {
                        Role::Backing
                    } else {
                        Role::JournalBacking
                    });
                    if existing.is_none() {
                        backings.push(Device::plain(r, b));
                    }
                    backed_by = Some(r);
                }
            }
            let direct_io = dev.loop_direct_io();
            list.push(Device {
                role,
                dev,
                direct_io,
                backed_by,
            });
        }
        list.extend(backings);
        Ok(Devices { list })
    }

    /// The device with this role.
    pub fn get(&self, role: Role) -> Option<&Device> {
        self.list.iter().find(|d| d.role == role)
    }

    /// All devices, cell devices first.
    pub fn iter(&self) -> impl Iterator<Item = &Device> {
        self.list.iter()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Their device numbers, in order.
    pub(crate) fn numbers(&self) -> Vec<(u32, u32)> {
        self.list
            .iter()
            .map(|d| (d.dev.major, d.dev.minor))
            .collect()
    }
}

/// The external log device of an XFS mounted at or above `dir` (its `logdev=` mount option).
fn xfs_logdev(dir: &Path) -> Result<Option<BlockDev>> {
    let Some(m) = crate::sysinfo::mount_of(dir).filter(|m| m.fs_type == "xfs") else {
        return Ok(None);
    };
    match m.options.split(',').find_map(|o| o.strip_prefix("logdev=")) {
        Some(p) => BlockDev::of_path(Path::new(p))
            .with_context(|| format!("the XFS log device {p} of {}", m.mount_point.display())),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_file_system_has_a_block_device_named_as_in_diskstats() {
        let d = BlockDev::of_path(Path::new("/")).unwrap().unwrap();
        let stats = std::fs::read_to_string("/proc/diskstats").unwrap();
        let line = super::super::diskstats::parse_wanted(&stats, &[(d.major, d.minor)]);
        assert_eq!(
            line[0].as_ref().map(|l| l.name.as_str()),
            Some(d.name.as_str())
        );
        // A file inside resolves to the same device.
        let f = BlockDev::of_path(Path::new("/etc/hostname")).unwrap();
        assert_eq!(f.as_ref(), Some(&d));
        let t = Devices::for_target(Path::new("/")).unwrap();
        assert_eq!(t.get(Role::Data).map(|x| &x.dev), Some(&d));
    }

    #[test]
    fn proc_has_no_block_device_and_a_missing_path_is_an_error() {
        assert_eq!(BlockDev::of_path(Path::new("/proc/self")).unwrap(), None);
        assert!(Devices::for_target(Path::new("/proc")).unwrap().is_empty());
        let e = BlockDev::of_path(Path::new("/nonexistent/x")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/x"));
        assert!(Devices::for_cell(Path::new("/proc"), None).is_err());
    }

    #[test]
    fn labels_are_the_metric_roles() {
        let l = [
            Role::Data,
            Role::Journal,
            Role::Backing,
            Role::JournalBacking,
        ]
        .map(Role::label);
        assert_eq!(l, ["data", "journal", "backing", "journal_backing"]);
        assert!(Role::Journal.is_cell() && !Role::Backing.is_cell());
    }
}
