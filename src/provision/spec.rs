//! What one cell asks to be provisioned: the file system, its devices and its knobs, with the
//! checks that need no machine (is this knob meaningful for this file system, do the sizes fit).
//!
//! Knob semantics follow the tools: ext2/3/4 as mke2fs(8) and tune2fs(8) (`-b`, `-I`,
//! `-J size=`/`-J device=`, `-O journal_dev`), XFS as mkfs.xfs(8) (`-b size=`, `-i size=`,
//! `-l size=`/`-l logdev=`), btrfs as mkfs.btrfs(8) (`-s` sector size).

use serde::{Serialize, Serializer};
use std::fmt;
use std::path::PathBuf;

/// File systems fslab can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    /// ext2 (no journal).
    Ext2,
    /// ext3.
    Ext3,
    /// ext4.
    Ext4,
    /// XFS.
    Xfs,
    /// btrfs.
    Btrfs,
    /// NILFS2 (log-structured), where kernel and nilfs-tools exist.
    Nilfs2,
    /// JFS, where kernel and jfsutils exist.
    Jfs,
    /// ReiserFS (3.6), where kernel and reiserfsprogs exist (removed from Linux in 6.13: a
    /// User-mode Linux guest has it, see `doc/guest.md`).
    Reiserfs,
}

impl FsType {
    /// All types, in documentation order.
    pub const ALL: [FsType; 8] = [
        FsType::Ext2,
        FsType::Ext3,
        FsType::Ext4,
        FsType::Xfs,
        FsType::Btrfs,
        FsType::Nilfs2,
        FsType::Jfs,
        FsType::Reiserfs,
    ];

    /// The name used by mount(8) and in study files.
    pub fn as_str(self) -> &'static str {
        TOOLS[self as usize].0
    }

    /// Parse a study-file name.
    pub fn parse(s: &str) -> Result<FsType, String> {
        FsType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown file system '{s}'; use one of {}",
                    FsType::ALL.map(|t| t.as_str()).join(", ")
                )
            })
    }

    /// The mkfs program.
    pub fn mkfs_program(self) -> &'static str {
        TOOLS[self as usize].1
    }

    /// Whether this is one of the ext family (mke2fs, tune2fs, dumpe2fs).
    pub fn is_ext(self) -> bool {
        matches!(self, FsType::Ext2 | FsType::Ext3 | FsType::Ext4)
    }

    /// Every program provisioning and inspection of this type runs, besides losetup/mount.
    pub fn programs(self) -> Vec<&'static str> {
        let (_, mkfs, others) = TOOLS[self as usize];
        std::iter::once(mkfs)
            .chain(others.iter().copied())
            .collect()
    }
}

/// Each type's name, mkfs program and the other programs that make and inspect it, in the
/// order of the variants (and of [`FsType::ALL`]).
const TOOLS: [(&str, &str, &[&str]); 8] = [
    ("ext2", "mkfs.ext2", &["mke2fs", "dumpe2fs", "tune2fs"]),
    ("ext3", "mkfs.ext3", &["mke2fs", "dumpe2fs", "tune2fs"]),
    ("ext4", "mkfs.ext4", &["mke2fs", "dumpe2fs", "tune2fs"]),
    ("xfs", "mkfs.xfs", &["xfs_info"]),
    ("btrfs", "mkfs.btrfs", &["btrfs"]),
    ("nilfs2", "mkfs.nilfs2", &["nilfs-tune"]),
    ("jfs", "mkfs.jfs", &["jfs_tune"]),
    ("reiserfs", "mkreiserfs", &["debugreiserfs"]),
];

impl fmt::Display for FsType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A block device for data or journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// A sparse image of this many bytes in the work directory, attached with losetup.
    Loop(u64),
    /// A RAM-backed device of this many bytes: a loop device over a file in a tmpfs that
    /// fslab mounts in the work directory.
    Ram(u64),
    /// An existing block device, guarded by the safety checks.
    Path(PathBuf),
}

impl DeviceSpec {
    /// Parse `loop:SIZE`, `ram:SIZE` or an absolute device path.
    pub fn parse(s: &str) -> Result<DeviceSpec, String> {
        let size = |v: &str, what: &str| -> Result<u64, String> {
            let n = crate::units::parse_size(v).map_err(|e| format!("{what}: {e}"))?;
            if n < 16 << 20 {
                return Err(format!(
                    "{what}: {} is too small for a file system; use at least 16M",
                    crate::units::fmt_bytes(n)
                ));
            }
            Ok(n)
        };
        if let Some(v) = s.strip_prefix("loop:") {
            Ok(DeviceSpec::Loop(size(v, s)?))
        } else if let Some(v) = s.strip_prefix("ram:") {
            Ok(DeviceSpec::Ram(size(v, s)?))
        } else if s.starts_with('/') {
            Ok(DeviceSpec::Path(PathBuf::from(s)))
        } else {
            Err(format!(
                "device '{s}' is not loop:SIZE, ram:SIZE or an absolute path such as /dev/sdb"
            ))
        }
    }

    /// The size fslab will create, if it creates the device.
    pub fn created_size(&self) -> Option<u64> {
        match self {
            DeviceSpec::Loop(n) | DeviceSpec::Ram(n) => Some(*n),
            DeviceSpec::Path(_) => None,
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Loop(n) => write!(f, "loop:{}", size_word(*n)),
            DeviceSpec::Ram(n) => write!(f, "ram:{}", size_word(*n)),
            DeviceSpec::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

impl Serialize for DeviceSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// A size as the shortest exact word: `1G`, `64M`, `4k`, or bytes.
pub fn size_word(n: u64) -> String {
    size_in(n, &[("T", 40), ("G", 30), ("M", 20), ("k", 10)])
}

/// `n` in the largest of `units` (suffix, power of two, largest first) that divides it
/// exactly, or in bytes.
pub(super) fn size_in(n: u64, units: &[(&str, u32)]) -> String {
    units
        .iter()
        .find(|(_, shift)| n >= 1 << shift && n % (1 << shift) == 0)
        .map_or_else(
            || n.to_string(),
            |(suffix, shift)| format!("{}{suffix}", n >> shift),
        )
}

/// Where the journal (XFS: log) lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Journal {
    /// Inside the data device (the mkfs default).
    Internal,
    /// On its own device.
    External(DeviceSpec),
}

impl Journal {
    /// Parse `internal` or a device spec.
    pub fn parse(s: &str) -> Result<Journal, String> {
        if s == "internal" {
            Ok(Journal::Internal)
        } else {
            DeviceSpec::parse(s).map(Journal::External)
        }
    }
}

impl fmt::Display for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Journal::Internal => f.write_str("internal"),
            Journal::External(d) => d.fmt(f),
        }
    }
}

impl Serialize for Journal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// The full configuration of one cell's file system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsConfig {
    /// File-system type.
    pub fs: FsType,
    /// The data device.
    pub data: DeviceSpec,
    /// Journal / log placement.
    pub journal: Journal,
    /// Journal size (ext3/4) or log size (XFS), bytes.
    pub journal_size: Option<u64>,
    /// Block size, bytes.
    pub block_size: Option<u64>,
    /// Inode size, bytes.
    pub inode_size: Option<u64>,
    /// Extra mkfs arguments, appended after fslab's own.
    pub mkfs: Vec<String>,
    /// Mount options.
    pub mount: Vec<String>,
    /// ext features set with `tune2fs -O` after mkfs (`^name` clears one).
    pub features: Vec<String>,
    /// I/O scheduler of the data device (`none`, `mq-deadline`, `bfq`, `kyber`).
    pub scheduler: Option<String>,
    /// Attach loop and RAM devices with direct I/O (no second page cache under the file system).
    pub direct_io: bool,
}

impl FsConfig {
    /// A configuration with defaults: internal journal, no extra options.
    pub fn new(fs: FsType, data: DeviceSpec) -> FsConfig {
        FsConfig {
            fs,
            data,
            journal: Journal::Internal,
            journal_size: None,
            block_size: None,
            inode_size: None,
            mkfs: Vec::new(),
            mount: Vec::new(),
            features: Vec::new(),
            scheduler: None,
            direct_io: true,
        }
    }

    /// The data device, then the external journal's device, if any.
    pub fn devices(&self) -> impl Iterator<Item = &DeviceSpec> {
        let journal = match &self.journal {
            Journal::External(d) => Some(d),
            Journal::Internal => None,
        };
        std::iter::once(&self.data).chain(journal)
    }

    /// The block size fslab passes explicitly where tools must agree (ext data and journal
    /// devices): the asked one, else 4096 (mke2fs would pick 1024 for file systems under 512 MiB).
    pub fn ext_block_size(&self) -> u64 {
        self.block_size.unwrap_or(4096)
    }

    /// Check that every knob means something for this file system and that sizes fit.
    /// Needs nothing from the machine.
    pub fn validate(&self) -> Result<(), String> {
        let fs = self.fs;
        let external = matches!(self.journal, Journal::External(_));
        let no_journal = |what: &str| {
            format!(
                "{fs} has no journal to {what}; drop journal/journal_size/log_size for {fs} cells"
            )
        };
        match fs {
            FsType::Ext2 if external || self.journal_size.is_some() => {
                return Err(format!(
                    "{} (or use ext3/ext4)",
                    no_journal("size or move")
                ))
            }
            FsType::Btrfs | FsType::Nilfs2 if external || self.journal_size.is_some() => {
                return Err(no_journal("size or move"))
            }
            FsType::Jfs if external && self.journal_size.is_some() => {
                return Err(
                    "an external jfs log fills its whole device (jfs_mkfs -J journal_dev); drop journal_size and size the journal device instead".into(),
                )
            }
            _ => {}
        }
        if let (DeviceSpec::Path(d), Journal::External(DeviceSpec::Path(j))) =
            (&self.data, &self.journal)
        {
            // Path equality compares components: `/dev/./sdb` and `/dev//sdb` are `/dev/sdb`.
            if d == j {
                return Err(format!(
                    "data and journal are the same device {}; an external journal needs a device of its own: use journal = \"internal\" or another device",
                    d.display()
                ));
            }
        }
        if !self.features.is_empty() && !fs.is_ext() {
            return Err(format!(
                "features (tune2fs -O) apply to ext2/3/4 only; pass {fs} options through mkfs = [...]"
            ));
        }
        if let Some(b) = self.block_size {
            let ok = match fs {
                FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
                    [1024, 2048, 4096, 65536].contains(&b)
                }
                FsType::Xfs => b.is_power_of_two() && (512..=65536).contains(&b),
                FsType::Btrfs | FsType::Nilfs2 => {
                    b.is_power_of_two() && (1024..=65536).contains(&b)
                }
                // jfs_mkfs has no block-size option: JFS always uses 4096.
                FsType::Jfs => b == 4096,
                // mkreiserfs -b: 512 to 8192, and Linux mounts only the page size.
                FsType::Reiserfs => b == 4096,
            };
            if !ok {
                return Err(format!(
                    "block_size {b} is not valid for {fs}; use e.g. 4096"
                ));
            }
        }
        if let Some(i) = self.inode_size {
            match fs {
                FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
                    if !i.is_power_of_two() || i < 128 || i > self.ext_block_size() {
                        return Err(format!(
                            "inode_size {i} is not valid for {fs}; use a power of two from 128 to the block size (e.g. 256)"
                        ));
                    }
                }
                FsType::Xfs => {
                    if !i.is_power_of_two() || !(256..=2048).contains(&i) {
                        return Err(format!(
                            "inode_size {i} is not valid for xfs; use 256, 512, 1024 or 2048"
                        ));
                    }
                }
                _ => {
                    return Err(format!(
                        "{fs} has no inode size to choose; drop inode_size for {fs} cells"
                    ))
                }
            }
        }
        if let Some(j) = self.journal_size {
            match fs {
                FsType::Ext3 | FsType::Ext4 => {
                    let bs = self.ext_block_size();
                    if !external && j % (1 << 20) != 0 {
                        return Err(format!(
                            "journal_size {j} is not a whole number of MiB (mke2fs -J size= takes MiB); use e.g. 64M"
                        ));
                    }
                    if j % bs != 0 || j / bs < 1024 {
                        return Err(format!(
                            "journal_size {} is too small or not a multiple of the {bs}-byte block; an ext journal needs at least 1024 blocks ({})",
                            size_word(j),
                            size_word(1024 * bs)
                        ));
                    }
                }
                // mkfs.xfs (xfsprogs 5.19 and later) refuses logs under 64 MiB.
                FsType::Xfs if j < 64 << 20 => {
                    return Err(format!(
                        "an xfs log of {} is below mkfs.xfs's minimum of 64M; use 64M or more",
                        size_word(j)
                    ));
                }
                FsType::Jfs if j % (1 << 20) != 0 => {
                    return Err("a jfs log size must be whole MiB (mkfs.jfs -s)".into());
                }
                // mkreiserfs -s counts blocks: the journal's blocks plus one header block;
                // 513 to 32749 blocks for a journal on the data device.
                FsType::Reiserfs => {
                    let blocks = j / 4096;
                    if j % 4096 != 0 || blocks < 512 || (!external && blocks > 32748) {
                        return Err(format!(
                            "journal_size {} is not valid for reiserfs: use a multiple of 4k from 2M to 127M (internal; 32M is mkreiserfs's default)",
                            size_word(j)
                        ));
                    }
                }
                _ => {}
            }
            if let Journal::External(dev) = &self.journal {
                if let Some(n) = dev.created_size() {
                    if n < j {
                        return Err(format!(
                            "journal_size {} does not fit on journal device {dev}; make the device at least as large",
                            size_word(j)
                        ));
                    }
                }
            }
        }
        let data_size = self.data.created_size().filter(|_| fs == FsType::Xfs);
        if let Some(n) = data_size.filter(|n| *n < 300 << 20) {
            return Err(format!(
                "xfs needs a data device of at least 300M (mkfs.xfs refuses smaller); {} is {}",
                self.data,
                size_word(n)
            ));
        }
        for opt in &self.mount {
            if opt.is_empty() || opt.contains(char::is_whitespace) {
                return Err(format!(
                    "mount option '{opt}' is empty or has spaces; write one option per list item"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(fs: FsType) -> FsConfig {
        FsConfig::new(fs, DeviceSpec::Loop(1 << 30))
    }

    #[test]
    fn device_specs_parse_and_print() {
        for (text, spec) in [
            ("loop:8G", DeviceSpec::Loop(8 << 30)),
            ("ram:512M", DeviceSpec::Ram(512 << 20)),
            ("/dev/sdb", DeviceSpec::Path("/dev/sdb".into())),
        ] {
            assert_eq!(DeviceSpec::parse(text).unwrap(), spec, "{text}");
        }
        assert!(DeviceSpec::parse("sdb").is_err());
        assert!(DeviceSpec::parse("loop:1M")
            .unwrap_err()
            .contains("too small"));
        assert_eq!(DeviceSpec::Loop(1536 << 20).to_string(), "loop:1536M");
        assert_eq!(Journal::parse("internal").unwrap(), Journal::Internal);
        assert_eq!(size_word(4096), "4k");
        assert_eq!(size_word(1000), "1000");
    }

    #[test]
    fn knobs_that_mean_nothing_are_refused() {
        let mut c = cfg(FsType::Ext2);
        c.journal_size = Some(64 << 20);
        assert!(c.validate().unwrap_err().contains("ext2 has no journal"));
        let mut c = cfg(FsType::Btrfs);
        c.journal = Journal::External(DeviceSpec::Loop(1 << 30));
        assert!(c.validate().unwrap_err().contains("btrfs has no journal"));
        let mut c = cfg(FsType::Xfs);
        c.features = vec!["dir_index".into()];
        assert!(c.validate().unwrap_err().contains("ext2/3/4 only"));
        let mut c = cfg(FsType::Btrfs);
        c.inode_size = Some(256);
        assert!(c.validate().is_err());
    }

    #[test]
    fn sizes_are_checked() {
        let mut c = cfg(FsType::Ext4);
        c.journal_size = Some(16 << 20);
        assert!(c.validate().is_ok());
        c.journal_size = Some((16 << 20) + 4096);
        assert!(c.validate().unwrap_err().contains("whole number of MiB"));
        c.journal_size = Some(2 << 20);
        assert!(c.validate().unwrap_err().contains("1024 blocks"));
        c.journal_size = Some(256 << 20);
        c.journal = Journal::External(DeviceSpec::Loop(128 << 20));
        assert!(c.validate().unwrap_err().contains("does not fit"));
        let mut x = cfg(FsType::Xfs);
        x.journal_size = Some(16 << 20);
        assert!(x.validate().unwrap_err().contains("64M"));
        x.journal_size = Some(64 << 20);
        assert!(x.validate().is_ok());
        x.data = DeviceSpec::Loop(256 << 20);
        assert!(x.validate().unwrap_err().contains("300M"));
        let mut b = cfg(FsType::Ext4);
        b.block_size = Some(3000);
        assert!(b.validate().is_err());
        b.block_size = Some(1024);
        b.inode_size = Some(2048);
        assert!(b.validate().unwrap_err().contains("inode_size"));
    }

    #[test]
    fn the_data_device_is_no_journal_device() {
        let mut c = FsConfig::new(FsType::Ext4, DeviceSpec::Path("/dev/sdx".into()));
        c.journal = Journal::External(DeviceSpec::Path("/dev//./sdx".into()));
        assert!(c.validate().unwrap_err().contains("same device /dev/sdx"));
        c.journal = Journal::External(DeviceSpec::Path("/dev/sdy".into()));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn fs_names_round_trip() {
        for t in FsType::ALL {
            assert_eq!(FsType::parse(t.as_str()).unwrap(), t);
            // The name table follows the variants: each name is the one serde writes.
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{t}\""));
        }
        assert!(FsType::parse("reiser4").unwrap_err().contains("reiserfs"));
    }

    #[test]
    fn jfs_and_reiserfs_journals_are_checked() {
        let mut c = cfg(FsType::Jfs);
        c.journal = Journal::External(DeviceSpec::Loop(32 << 20));
        assert!(c.validate().is_ok());
        c.journal_size = Some(16 << 20);
        assert!(c.validate().unwrap_err().contains("whole device"));
        let mut c = cfg(FsType::Reiserfs);
        c.journal_size = Some(32 << 20);
        assert!(c.validate().is_ok());
        c.journal_size = Some(1 << 20);
        assert!(c.validate().unwrap_err().contains("not valid for reiserfs"));
        c.journal_size = Some(256 << 20);
        assert!(c.validate().unwrap_err().contains("127M"));
        c.journal = Journal::External(DeviceSpec::Loop(512 << 20));
        assert!(c.validate().is_ok(), "an external journal may be larger");
        c.block_size = Some(1024);
        assert!(c.validate().unwrap_err().contains("block_size 1024"));
    }
}
