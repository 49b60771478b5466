//! What a block device is, as the kernel names it in sysfs: from a mount source or a device
//! path to its sysfs node (`/sys/dev/block/MAJ:MIN`), a partition to its disk, a loop device
//! to the device under its backing file, device-mapper and md devices to the disks under
//! them; then the model and vendor the kernel gives (`device/model`, `device/vendor`), the
//! bus and driver, and the raw ids. Virtio disks have no `device/model`, only ids (`vendor`
//! 0x1af4, `device` 0x0002): they are named "virtio block device", never by a raw id.
//!
//! sysfs holds one value per file, so there is nothing to parse and no crate to use: files are
//! read with `std::fs`, symlinks (`subsystem`, `driver`) with `read_link`. The sysfs root and
//! the mount table are parameters so tests run on a tree they build.

use super::read_trimmed;
use super::MountEntry;
use std::path::{Path, PathBuf};

/// What was found about one block device. Missing facts are `None` (the kernel does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockFacts {
    /// `disk`, `partition`, `loop`, `device-mapper`, `md`, `zram`, `ram`, `nbd`, or
    /// `not a block device` (tmpfs, overlay, …).
    pub kind: String,
    /// The whole disk whose queue serves it (`vda` for `vda1`; `loop3` for `loop3`).
    pub disk: Option<String>,
    /// A readable model: the kernel's `device/model`, else a name for what the ids or the
    /// driver say (`virtio block device`), else `unknown`.
    pub model: String,
    /// A readable vendor: the kernel's `device/vendor` when it is a name (`ATA`, `QEMU`),
    /// else the name of a known vendor id.
    pub vendor: Option<String>,
    /// The vendor id the kernel gives (`0x1af4`): virtio's for a virtio disk, PCI's for NVMe.
    pub vendor_id: Option<String>,
    /// The device id beside it (`0x0002`, virtio's id of a block device).
    pub device_id: Option<String>,
    /// The bus of the device (`virtio`, `scsi`, `nvme`, `mmc`, …).
    pub bus: Option<String>,
    /// The driver bound to it (`virtio_blk`, `sd`, `nvme`, …).
    pub driver: Option<String>,
    /// A loop device's backing file.
    pub backing_file: Option<String>,
    /// The device holding that backing file (`/dev/vda`).
    pub backing_device: Option<String>,
    /// The devices under a device-mapper or md device.
    pub slaves: Vec<String>,
    /// Size of the disk in bytes.
    pub bytes: Option<u64>,
    /// `queue/rotational` of the disk (`0` or `1`).
    pub rotational: Option<String>,
    /// The disk's active I/O scheduler.
    pub scheduler: Option<String>,
}

impl BlockFacts {
    /// As environment keys (the caller prefixes them): `model`, `kind`, then whichever of
    /// `vendor`, `vendor_id`, `device_id`, `bus`, `driver`, `disk`, `backing_file`,
    /// `backing_device`, `slaves`, `bytes`, `rotational`, `scheduler` are known.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("model".to_string(), self.model.clone()),
            ("kind".to_string(), self.kind.clone()),
        ];
        let slaves = (!self.slaves.is_empty()).then(|| self.slaves.join(","));
        let optional = [
            ("vendor", self.vendor.clone()),
            ("vendor_id", self.vendor_id.clone()),
            ("device_id", self.device_id.clone()),
            ("bus", self.bus.clone()),
            ("driver", self.driver.clone()),
            ("disk", self.disk.clone()),
            ("backing_file", self.backing_file.clone()),
            ("backing_device", self.backing_device.clone()),
            ("slaves", slaves),
            ("bytes", self.bytes.map(|b| b.to_string())),
            ("rotational", self.rotational.clone()),
            ("scheduler", self.scheduler.clone()),
        ];
        v.extend(
            optional
                .into_iter()
                .filter_map(|(k, val)| val.map(|x| (k.to_string(), x))),
        );
        v
    }
}

/// Vendor ids seen on storage, named as the PCI ID repository names them (short form).
const VENDORS: [(&str, &str); 14] = [
    ("0x1af4", "Red Hat, Inc. (virtio)"),
    ("0x1b36", "Red Hat, Inc. (QEMU)"),
    ("0x1d0f", "Amazon.com, Inc."),
    ("0x1414", "Microsoft Corporation"),
    ("0x15ad", "VMware"),
    ("0x8086", "Intel Corporation"),
    ("0x144d", "Samsung Electronics Co Ltd"),
    ("0x15b7", "Sandisk Corp"),
    ("0x1e0f", "KIOXIA Corporation"),
    ("0x1344", "Micron Technology Inc"),
    ("0x1c5c", "SK hynix"),
    ("0x1987", "Phison Electronics Corporation"),
    ("0x2646", "Kingston Technology Company, Inc."),
    ("0x126f", "Silicon Motion, Inc."),
];

/// Virtio device ids (virtio specification, "Device Types") that can carry a disk.
fn virtio_device_name(id: &str) -> String {
    match u32::from_str_radix(id.trim_start_matches("0x"), 16) {
        Ok(2) => "virtio block device".into(),
        Ok(8) => "virtio SCSI host".into(),
        _ => format!("virtio device {id}"),
    }
}

/// How deep loop → backing file → device chains and stacked devices are followed.
const MAX_DEPTH: usize = 4;

/// Reads a sysfs tree (`/sys`, or one a test built) with a mount table.
pub struct Sysfs<'a> {
    root: PathBuf,
    mounts: &'a [MountEntry],
}

fn link_name(p: &Path) -> Option<String> {
    std::fs::read_link(p)
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

fn is_hex_id(s: &str) -> bool {
    s.len() > 2 && s.starts_with("0x") && s[2..].chars().all(|c| c.is_ascii_hexdigit())
}

impl<'a> Sysfs<'a> {
    /// A sysfs tree at `root` and the mount table to find backing files' devices in.
    pub fn new(root: impl Into<PathBuf>, mounts: &'a [MountEntry]) -> Self {
        Sysfs {
            root: root.into(),
            mounts,
        }
    }

    /// Describe the device of a mount source or device path (`/dev/vda1`, `/dev/loop3`,
    /// `/dev/mapper/vg-root`), or say it is not a block device (`tmpfs`, `overlay`).
    pub fn describe(&self, source: &str) -> BlockFacts {
        match self.node_of(source) {
            Some(node) => self.describe_node(&node, 0),
            None => BlockFacts {
                kind: "not a block device".into(),
                model: "unknown".into(),
                ..Default::default()
            },
        }
    }

    /// The sysfs node of a device: through its device number when the path is a block
    /// device here, else by its name under `class/block` (names in `/dev` are the kernel's).
    fn node_of(&self, source: &str) -> Option<PathBuf> {
        let by_number = rustix::fs::stat(source).ok().and_then(|st| {
            let is_block = (st.st_mode & libc::S_IFMT) == libc::S_IFBLK;
            let (maj, min) = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
            is_block.then(|| self.root.join(format!("dev/block/{maj}:{min}")))
        });
        let by_name = Path::new(source)
            .file_name()
            .map(|n| self.root.join("class/block").join(n));
        [by_number, by_name]
            .into_iter()
            .flatten()
            .find_map(|p| std::fs::canonicalize(p).ok())
    }

    /// The sysfs node of the device holding `file`: its `st_dev` when that is a block device
    /// (not btrfs's anonymous numbers), else the source of the mount holding it.
    fn node_holding(&self, file: &str) -> Option<(PathBuf, String)> {
        if let Ok(st) = rustix::fs::stat(file) {
            let (maj, min) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
            let p = self.root.join(format!("dev/block/{maj}:{min}"));
            if maj != 0 {
                if let Ok(node) = std::fs::canonicalize(p) {
                    let name = node.file_name()?.to_string_lossy().into_owned();
                    return Some((node, format!("/dev/{name}")));
                }
            }
        }
        let m = super::mount_holding(self.mounts, Path::new(file))?;
        Some((self.node_of(&m.source)?, m.source.clone()))
    }

    fn describe_node(&self, node: &Path, depth: usize) -> BlockFacts {
        let disk_dir = if node.join("partition").exists() {
            node.parent().unwrap_or(node).to_path_buf()
        } else {
            node.to_path_buf()
        };
        let disk = disk_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut f = BlockFacts {
            kind: "disk".into(),
            model: "unknown".into(),
            bytes: read_trimmed(&disk_dir.join("size"))
                .and_then(|s| s.parse::<u64>().ok())
                .map(|s| s * 512),
            rotational: read_trimmed(&disk_dir.join("queue/rotational")),
            scheduler: read_trimmed(&disk_dir.join("queue/scheduler"))
                .map(|t| super::active_scheduler(&t)),
            ..Default::default()
        };
        let mut slaves: Vec<String> = std::fs::read_dir(disk_dir.join("slaves"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        slaves.sort();
        if let Some(file) = read_trimmed(&disk_dir.join("loop/backing_file")) {
            f.kind = "loop".into();
            f.model = "loop device".into();
            let file = file.trim_end_matches(" (deleted)").to_string();
            if let Some((under, source)) = self.node_holding(&file).filter(|_| depth < MAX_DEPTH) {
                f.identity_from(&self.describe_node(&under, depth + 1));
                f.backing_device = Some(source);
            }
            f.backing_file = Some(file);
        } else if !slaves.is_empty() {
            f.kind = if disk_dir.join("md").exists() {
                "md"
            } else {
                "device-mapper"
            }
            .into();
            if depth < MAX_DEPTH {
                let under: Vec<BlockFacts> = slaves
                    .iter()
                    .filter_map(|s| {
                        std::fs::canonicalize(self.root.join("class/block").join(s)).ok()
                    })
                    .map(|p| self.describe_node(&p, depth + 1))
                    .collect();
                if let Some(first) = under.first() {
                    f.identity_from(first);
                    let mut models: Vec<&str> = Vec::new();
                    for u in &under {
                        if !models.contains(&u.model.as_str()) {
                            models.push(&u.model);
                        }
                    }
                    f.model = models.join(" + ");
                }
            }
            f.slaves = slaves;
        } else if disk_dir.join("device").exists() {
            self.identify(&disk_dir.join("device"), &mut f);
        } else {
            let virtual_kind = [
                ("zram", "zram compressed RAM disk"),
                ("ram", "RAM disk"),
                ("nbd", "network block device"),
                ("loop", "loop device (detached)"),
            ]
            .into_iter()
            .find(|(p, _)| disk.starts_with(p));
            if let Some((p, model)) = virtual_kind {
                f.kind = p.into();
                f.model = model.into();
            }
        }
        // A partition says so; what its disk is shows in `disk`, `backing_file`, `slaves`.
        if disk_dir != node {
            f.kind = "partition".into();
        }
        f.disk = Some(disk);
        f
    }

    /// Model, vendor, ids, bus and driver from a disk's `device` directory.
    fn identify(&self, dev: &Path, f: &mut BlockFacts) {
        f.bus = link_name(&dev.join("subsystem"));
        f.driver = link_name(&dev.join("driver"));
        let vendor = read_trimmed(&dev.join("vendor"));
        // Ids: the device's own (virtio), else for NVMe the PCI function of the controller,
        // which is the drive. A SCSI or ATA disk's ancestors are its host adapter: not it.
        let id_dir = if vendor.as_deref().is_some_and(is_hex_id) {
            Some(dev.to_path_buf())
        } else if f.bus.as_deref() == Some("nvme") {
            Some(dev.join("device"))
        } else {
            None
        };
        if let Some(d) = id_dir {
            f.vendor_id = read_trimmed(&d.join("vendor")).filter(|v| is_hex_id(v));
            f.device_id = read_trimmed(&d.join("device")).filter(|v| is_hex_id(v));
        }
        f.vendor = vendor.filter(|v| !is_hex_id(v)).or_else(|| {
            let id = f.vendor_id.as_deref()?;
            VENDORS
                .iter()
                .find(|(k, _)| *k == id)
                .map(|(_, n)| n.to_string())
        });
        f.model = read_trimmed(&dev.join("model"))
            .or_else(|| {
                // MMC/SD cards: `name` (the card's product name) and `type` (SD, MMC).
                let name = read_trimmed(&dev.join("name"))?;
                Some(match read_trimmed(&dev.join("type")) {
                    Some(t) => format!("{t} card {name}"),
                    None => name,
                })
            })
            .or_else(|| match (f.bus.as_deref(), f.driver.as_deref()) {
                (Some("virtio"), _) | (_, Some("virtio_blk")) => Some(
                    f.device_id
                        .as_deref()
                        .map_or("virtio block device".into(), virtio_device_name),
                ),
                (Some("xen"), _) | (_, Some("vbd")) => Some("Xen virtual block device".into()),
                _ => None,
            })
            .unwrap_or_else(|| "unknown".into());
    }

    /// The system's sysfs and mount table.
    pub fn describe_here(source: &str) -> BlockFacts {
        let mounts = super::mounts();
        Sysfs::new("/sys", &mounts).describe(source)
    }
}

impl BlockFacts {
    /// Take the identity (model, vendor, ids, bus, driver) of the device underneath.
    fn identity_from(&mut self, under: &BlockFacts) {
        self.model = under.model.clone();
        self.vendor = under.vendor.clone();
        self.vendor_id = under.vendor_id.clone();
        self.device_id = under.device_id.clone();
        self.bus = under.bus.clone();
        self.driver = under.driver.clone();
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
