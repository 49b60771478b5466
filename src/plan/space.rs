//! The space a study writes in its work directory against what is free there, and the
//! memory its `ram:` devices take against what the machine can spare: what `study plan`
//! warns of and `study run` refuses before it provisions or stores anything.
//!
//! What is written counts mkfs's own writes, not only the workload's data: a loop image is
//! sparse, but mkfs writes its inode tables in full (fslab makes ext file systems with
//! `lazy_itable_init=0`), its journal or log, and its other metadata. A 48 MiB work
//! directory given two 1 GiB ext4 images was not refused by a count that left these out,
//! and the run failed in mkfs with "No space left on device" after storing a study.

use super::Study;
use crate::provision::{DeviceSpec, FsConfig, FsType, Journal};
use crate::units::fmt_bytes;

/// The space and memory a study needs against what the machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// About this many bytes written at the peak if every cell is mounted at once: per cell
    /// what mkfs writes on its loop images ([`mkfs_written`]), its largest workload's data
    /// and its journal (loop images are sparse otherwise).
    pub written: u64,
    /// Bytes free under the work directory (or its nearest existing parent).
    pub free: u64,
    /// Bytes the `ram:` devices take together (all may be mounted at once).
    pub ram: u64,
    /// Bytes of memory a User-mode Linux guest takes beside them (its memory file).
    pub guest: u64,
    /// Bytes of memory the machine can spare for them: what it has available less a reserve
    /// ([`reserve`]).
    pub spare: u64,
}

/// Memory kept free of `ram:` devices: a tenth of the machine's, at least 512 MiB.
pub fn reserve(total: u64) -> u64 {
    (total / 10).max(512 << 20)
}

/// Memory this machine can spare for `ram:` devices and a guest: what it has available less
/// the [`reserve`].
pub fn spare_ram() -> u64 {
    crate::sysinfo::available_ram().saturating_sub(reserve(crate::sysinfo::total_ram()))
}

/// About what mkfs writes on a device of `size` bytes for `cfg` (its journal included when
/// internal): ext inode tables in full (`lazy_itable_init=0`), the journal (ext's default for
/// the size, or the one asked), XFS's log, and a share for the rest of the metadata. An
/// estimate on the safe side, for refusing a study whose images cannot be written.
pub fn mkfs_written(cfg: &FsConfig, size: u64) -> u64 {
    let meta = size / 100;
    let internal = matches!(cfg.journal, Journal::Internal);
    match cfg.fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
            // mke2fs's "small" type below 512 MiB: an inode per 4 KiB, 128-byte inodes;
            // above, an inode per 16 KiB, 256-byte inodes.
            let small = size < 512 << 20;
            let ratio = if small { 4096 } else { 16384 };
            let inode = cfg.inode_size.unwrap_or(if small { 128 } else { 256 });
            let tables = size / ratio * inode;
            let journal = if cfg.fs == FsType::Ext2 || !internal {
                0
            } else {
                cfg.journal_size
                    .unwrap_or_else(|| ext_default_journal(size))
            };
            tables + journal + meta
        }
        FsType::Xfs => {
            let log = if internal {
                cfg.journal_size.unwrap_or((64u64 << 20).min(size / 4))
            } else {
                0
            };
            log + meta
        }
        FsType::Btrfs => meta + (16 << 20).min(size / 4),
        _ => {
            let journal = if internal {
                cfg.journal_size.unwrap_or(32 << 20).min(size / 4)
            } else {
                0
            };
            journal + 2 * meta
        }
    }
}

/// mke2fs's default journal size for a file system of `size` bytes (4 KiB blocks).
fn ext_default_journal(size: u64) -> u64 {
    let blocks = size / 4096;
    let journal_blocks = match blocks {
        b if b < 2048 => 0,
        b if b < 32768 => 1024,
        b if b < 256 * 1024 => 4096,
        b if b < 512 * 1024 => 8192,
        b if b < 4096 * 1024 => 16384,
        b if b < 8192 * 1024 => 32768,
        b if b < 16384 * 1024 => 65536,
        b if b < 32768 * 1024 => 131072,
        _ => 262144,
    };
    journal_blocks * 4096
}

/// What mkfs writes on the cell's loop images (external journals formatted apart).
fn cell_mkfs_written(cfg: &FsConfig) -> u64 {
    let data = match cfg.data {
        DeviceSpec::Loop(n) => mkfs_written(cfg, n),
        _ => 0,
    };
    let journal = match &cfg.journal {
        // A journal device is written in full by mke2fs -O journal_dev (its journal).
        Journal::External(DeviceSpec::Loop(n)) => cfg.journal_size.unwrap_or(*n).min(*n),
        _ => 0,
    };
    data.saturating_add(journal)
}

impl Space {
    /// The study's space in the work directory `root`, and its memory on this machine.
    pub fn of(study: &Study, root: &std::path::Path) -> Space {
        let free = crate::sysinfo::free_space(
            std::iter::successors(Some(root), |p| p.parent())
                .find(|p| p.exists())
                .unwrap_or(std::path::Path::new("/")),
        )
        .map(|f| f.bytes)
        .unwrap_or(0);
        let written = study
            .cells
            .iter()
            .map(|c| {
                let data: u64 = c
                    .workloads
                    .iter()
                    .map(|w| w.build().map(|e| e.requirements().bytes).unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                let journal = match c.fs.journal {
                    Journal::Internal => 0,
                    _ => c.fs.journal_size.unwrap_or(0),
                };
                data.saturating_add(journal)
                    .saturating_add(cell_mkfs_written(&c.fs))
            })
            .fold(0u64, u64::saturating_add);
        let spare = spare_ram();
        Space {
            written,
            free,
            ram: study.ram_bytes(),
            guest: 0,
            spare,
        }
    }

    /// The same, for a study booted in a guest of `mem` bytes: the guest's memory is taken
    /// from the host's beside the `ram:` images (which the host keeps in `/dev/shm`).
    pub fn in_guest(self, mem: u64) -> Space {
        Space { guest: mem, ..self }
    }

    /// One line when the study's `ram:` devices need more memory than the machine can spare,
    /// or it may write more than is free (what `study plan` warns of and `study run`
    /// refuses), naming the fix.
    pub fn shortfall(&self, root: &std::path::Path) -> Option<String> {
        if self.ram.saturating_add(self.guest) > self.spare {
            let (what, fix) = if self.guest > 0 {
                (
                    format!(
                        "the guest's {} of memory and its ram: devices ({})",
                        fmt_bytes(self.guest),
                        fmt_bytes(self.ram)
                    ),
                    "give the guest less memory (--guest uml:SIZE), or use smaller ram: sizes or loop: devices",
                )
            } else {
                (
                    format!("the ram: devices take {}", fmt_bytes(self.ram)),
                    "use smaller ram: sizes or loop: devices",
                )
            };
            return Some(format!(
                "{what} together, more than the {} this machine can spare (its available memory less a reserve of a tenth, at least 512 MiB); {fix}",
                fmt_bytes(self.spare)
            ));
        }
        (self.written > self.free).then(|| {
            format!(
                "the study may write about {} at the peak (mkfs's own writes and the workloads' data), more than the {} free under the work directory {}; choose another --workdir",
                fmt_bytes(self.written),
                fmt_bytes(self.free),
                root.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_shortfall_is_one_line_naming_the_sizes_and_the_fix() {
        let root = Path::new("/var/tmp/w");
        let short = Space {
            written: 200 << 20,
            free: 64 << 20,
            ram: 0,
            guest: 0,
            spare: 1 << 30,
        };
        let line = short.shortfall(root).unwrap();
        assert!(
            line.contains("200.0 MiB") && line.contains("64.0 MiB"),
            "{line}"
        );
        assert!(
            line.ends_with("/var/tmp/w; choose another --workdir"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let fits = Space {
            written: 64 << 20,
            free: 64 << 20,
            ram: 1 << 30,
            guest: 0,
            spare: 1 << 30,
        };
        assert_eq!(fits.shortfall(root), None);
        let ram = Space {
            ram: 100 << 30,
            spare: 21 << 30,
            ..fits
        };
        let line = ram.shortfall(root).unwrap();
        assert!(
            line.starts_with("the ram: devices take 100.0 GiB together, more than the 21.0 GiB this machine can spare"),
            "{line}"
        );
        assert!(
            line.ends_with("use smaller ram: sizes or loop: devices"),
            "{line}"
        );
        // A guest's memory counts beside its ram: images, which the host keeps.
        let guest = Space {
            ram: 1 << 30,
            spare: 2 << 30,
            ..fits
        };
        assert_eq!(guest.shortfall(root), None);
        let line = guest.in_guest(40 << 30).shortfall(root).unwrap();
        assert!(
            line.starts_with("the guest's 40.0 GiB of memory and its ram: devices (1.0 GiB) together, more than the 2.0 GiB this machine can spare"),
            "{line}"
        );
        assert!(line.contains("--guest uml:SIZE"), "{line}");
    }

    #[test]
    fn mkfs_writes_its_tables_journal_and_log_on_a_sparse_image() {
        use crate::provision::{DeviceSpec, FsConfig, FsType};
        let gib = 1u64 << 30;
        let ext4 = FsConfig::new(FsType::Ext4, DeviceSpec::Loop(gib));
        // 1 GiB ext4: 16 MiB of inode tables, a 32 MiB journal, about 10 MiB else.
        let w = mkfs_written(&ext4, gib);
        assert!(w > 55 << 20 && w < 65 << 20, "{w}");
        // Two such images do not fit in 48 MiB; the old count (data and journal only) said 0.
        assert!(2 * w > 48 << 20);
        let mut ext2 = ext4.clone();
        ext2.fs = FsType::Ext2;
        assert!(mkfs_written(&ext2, gib) < w, "no journal on ext2");
        let mut big_journal = ext4.clone();
        big_journal.journal_size = Some(256 << 20);
        assert!(mkfs_written(&big_journal, gib) > 256 << 20);
        let xfs = FsConfig::new(FsType::Xfs, DeviceSpec::Loop(gib));
        assert!(mkfs_written(&xfs, gib) >= 64 << 20, "XFS's log");
        assert_eq!(ext_default_journal(gib), 32 << 20);
        assert_eq!(reserve(24 << 30), (24 << 30) / 10);
        assert_eq!(reserve(2 << 30), 512 << 20);
    }
}
