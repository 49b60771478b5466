//! Reading back what mkfs made and failing the cell when it is not what was asked.
//!
//! Parses the text of `dumpe2fs -h` (e2fsprogs: `Total journal blocks`, `Block size`,
//! `Journal UUID`, `Journal device`), `xfs_info` (the `log =` and `data =` lines) and
//! `btrfs inspect-internal dump-super` (`sectorsize`). A study that asks for a 64 MiB journal
//! on an external device gets exactly that, or a failed cell saying what came out instead.

use super::spec::{size_word, FsConfig, FsType, Journal};

/// The value after `key:` on the first line that starts with `key` (dumpe2fs style).
pub fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?;
        let rest = rest.trim_start();
        rest.strip_prefix(':').map(str::trim)
    })
}

fn num(text: &str, key: &str) -> Result<u64, String> {
    let v = field(text, key).ok_or_else(|| format!("dumpe2fs printed no '{key}'"))?;
    v.split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("dumpe2fs '{key}' is not a number: {v}"))
}

/// `what` (`block size`, `inode size`) as `cfg` asks it: `Ok` when it asks nothing; else `got`
/// (read only then) must be `want`, or the error says what it is and what was asked.
fn as_asked<T: PartialEq + std::fmt::Display>(
    what: &str,
    want: Option<T>,
    got: impl FnOnce() -> Result<T, String>,
) -> Result<(), String> {
    let Some(want) = want else {
        return Ok(());
    };
    let got = got()?;
    if got != want {
        return Err(format!("{what} is {got}, asked {want}"));
    }
    Ok(())
}

/// A size, shown as a size word (`64M`).
#[derive(PartialEq)]
struct Size(u64);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&size_word(self.0))
    }
}

/// Device numbers as dumpe2fs prints `Journal device` (old 16-bit or new encoding).
fn dev_encodings(major: u32, minor: u32) -> [u64; 2] {
    let new =
        (minor as u64 & 0xff) | ((major as u64 & 0xfff) << 8) | ((minor as u64 & !0xff) << 12);
    [old_dev(major, minor), new]
}

/// Check an ext file system: journal presence, size and device, block and inode size.
/// `journal_dump` is `dumpe2fs -h` of the external journal device; `journal_dev` its
/// (major, minor).
pub fn verify_ext(
    cfg: &FsConfig,
    data_dump: &str,
    journal_dump: Option<&str>,
    journal_dev: Option<(u32, u32)>,
) -> Result<(), String> {
    let features = field(data_dump, "Filesystem features").unwrap_or("");
    let has_journal = features.split_whitespace().any(|f| f == "has_journal");
    let want_journal = cfg.fs != FsType::Ext2 && !cfg.features.iter().any(|f| f == "^has_journal");
    if has_journal != want_journal {
        return Err(format!(
            "mkfs made a file system {} a journal, but {} asks for {}",
            if has_journal { "with" } else { "without" },
            cfg.fs,
            if want_journal { "one" } else { "none" }
        ));
    }
    let bs = num(data_dump, "Block size")?;
    as_asked("block size", cfg.block_size, || Ok(bs))?;
    as_asked("inode size", cfg.inode_size, || {
        num(data_dump, "Inode size")
    })?;
    if !want_journal {
        return Ok(());
    }
    match &cfg.journal {
        Journal::Internal => {
            if field(data_dump, "Journal UUID").is_some_and(|u| u != "<none>") {
                return Err("the journal is external, asked internal".into());
            }
            as_asked("the internal journal", cfg.journal_size.map(Size), || {
                Ok(Size(num(data_dump, "Total journal blocks")? * bs))
            })?;
        }
        Journal::External(_) => {
            let uuid = field(data_dump, "Journal UUID")
                .ok_or("the file system has no external journal (no 'Journal UUID'), asked one")?;
            let jd = journal_dump.ok_or("no dump of the journal device")?;
            let juuid = field(jd, "Filesystem UUID").unwrap_or("");
            if juuid != uuid {
                return Err(format!(
                    "the file system's journal UUID {uuid} is not the journal device's UUID {juuid}"
                ));
            }
            if let (Some((ma, mi)), Some(dev)) = (journal_dev, field(data_dump, "Journal device")) {
                let dev = u64::from_str_radix(dev.trim_start_matches("0x"), 16)
                    .map_err(|_| format!("cannot read 'Journal device: {dev}'"))?;
                if !dev_encodings(ma, mi).contains(&dev) {
                    return Err(format!(
                        "the superblock names journal device {dev:#06x}, not {ma}:{mi}"
                    ));
                }
            }
            as_asked("the external journal", cfg.journal_size.map(Size), || {
                Ok(Size(
                    num(jd, "Block size")? * num(jd, "Total journal blocks")?,
                ))
            })?;
        }
    }
    Ok(())
}

/// `key=value` from an xfs_info line such as `log =internal log bsize=4096 blocks=16384`.
fn xfs_kv(line: &str, key: &str) -> Option<u64> {
    line.split(|c: char| c.is_whitespace() || c == ',')
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// Check an XFS file system from `xfs_info MOUNTPOINT`: log placement and size, block and
/// inode size.
pub fn verify_xfs(cfg: &FsConfig, info: &str, journal_dev: Option<&str>) -> Result<(), String> {
    let line = |key| info.lines().find(|l| l.trim_start().starts_with(key));
    let log = line("log ").ok_or("xfs_info printed no 'log' line")?;
    let place = log
        .split_once('=')
        .map(|(_, r)| r.split_whitespace().next().unwrap_or(""))
        .unwrap_or("");
    match (&cfg.journal, journal_dev) {
        (Journal::Internal, _) if place != "internal" => {
            return Err(format!("the log is on {place}, asked internal"))
        }
        (Journal::External(_), Some(j)) if place != j && place != "external" => {
            return Err(format!("the log is on {place}, asked {j}"))
        }
        _ => {}
    }
    as_asked("the log", cfg.journal_size.map(Size), || {
        Ok(Size(
            xfs_kv(log, "bsize").unwrap_or(0) * xfs_kv(log, "blocks").unwrap_or(0),
        ))
    })?;
    as_asked("block size", cfg.block_size, || {
        let data = line("data ").ok_or("xfs_info printed no 'data' line")?;
        Ok(xfs_kv(data, "bsize").unwrap_or(0))
    })?;
    as_asked("inode size", cfg.inode_size, || {
        Ok(info.lines().find_map(|l| xfs_kv(l, "isize")).unwrap_or(0))
    })
}

/// Check a btrfs file system from `btrfs inspect-internal dump-super`.
pub fn verify_btrfs(cfg: &FsConfig, dump: &str) -> Result<(), String> {
    as_asked("sector size", cfg.block_size, || {
        Ok(dump
            .lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("sectorsize")).then(|| w.next()?.parse::<u64>().ok())?
            })
            .ok_or("dump-super printed no sectorsize")?)
    })
}

/// A number after `key` on the first line that has it, skipping `:`, `[` and `0x`
/// (`Blocksize: 4096`, `Device [0x6210]`, `Log device number:\t0x6210`).
fn after(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(key)?;
        let w = rest
            .trim_start_matches(|c: char| c == ':' || c == '[' || c.is_whitespace())
            .split(|c: char| c.is_whitespace() || c == ']')
            .next()?;
        match w.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => w.parse().ok(),
        }
    })
}

/// A device number as JFS and ReiserFS store it (`0x6210`: major 98, minor 16).
fn old_dev(major: u32, minor: u32) -> u64 {
    ((major as u64) << 8) | (minor as u64 & 0xff)
}

/// Check a JFS file system from `jfs_tune -l` of the data device and, with an external log,
/// of the log device: block size, log placement (inline, or the log device's number and
/// UUID).
pub fn verify_jfs(
    cfg: &FsConfig,
    data: &str,
    log: Option<&str>,
    journal_dev: Option<(u32, u32)>,
) -> Result<(), String> {
    let bs = after(data, "Aggregate block size").ok_or("jfs_tune printed no block size")?;
    as_asked("block size", cfg.block_size, || Ok(bs))?;
    let inline = data.contains("JFS_INLINELOG");
    match (&cfg.journal, journal_dev) {
        (Journal::Internal, _) if !inline => Err("the log is not inline, asked internal".into()),
        (Journal::External(_), Some((ma, mi))) => {
            if inline {
                return Err("the log is inline, asked an external log".into());
            }
            let got = after(data, "Log device number").unwrap_or(0);
            if got != old_dev(ma, mi) {
                return Err(format!(
                    "the log device number is {got:#x}, asked {:#x} ({ma}:{mi})",
                    old_dev(ma, mi)
                ));
            }
            let want_uuid = field(data, "External log UUID").unwrap_or("");
            let log_uuid = log.and_then(|l| field(l, "Log device UUID")).unwrap_or("");
            if want_uuid.is_empty() || want_uuid != log_uuid {
                return Err(format!(
                    "the file system names log {want_uuid:?} but the log device is {log_uuid:?}"
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Check a ReiserFS file system from `debugreiserfs [-j LOG] DATA`: block size, journal size
/// and device.
pub fn verify_reiserfs(
    cfg: &FsConfig,
    dump: &str,
    journal_dev: Option<(u32, u32)>,
) -> Result<(), String> {
    let bs = after(dump, "Blocksize").ok_or("debugreiserfs printed no Blocksize")?;
    as_asked("block size", cfg.block_size, || Ok(bs))?;
    let blocks = after(dump, "Size").ok_or("debugreiserfs printed no journal Size")?;
    if let Some(want) = cfg.journal_size {
        let want_blocks = super::mkfs::reiserfs_journal_blocks(want);
        if blocks != want_blocks {
            return Err(format!(
                "the journal has {blocks} blocks, asked {want_blocks} ({} and a header block)",
                size_word(want)
            ));
        }
    }
    // The superblock names the journal's device only when it is external.
    let dev = after(dump, "Device");
    match (&cfg.journal, journal_dev) {
        (Journal::Internal, _) if dev.is_some_and(|d| d != 0) => Err(format!(
            "the journal is on device {:#x}, asked internal",
            dev.unwrap_or(0)
        )),
        (Journal::External(_), Some((ma, mi))) if dev != Some(old_dev(ma, mi)) => Err(format!(
            "the journal is on device {:#x}, asked {:#x} ({ma}:{mi})",
            dev.unwrap_or(0),
            old_dev(ma, mi)
        )),
        _ => Ok(()),
    }
}

/// Check a NILFS2 file system from `nilfs-tune -l`: block size.
pub fn verify_nilfs2(cfg: &FsConfig, dump: &str) -> Result<(), String> {
    let bs = after(dump, "Block size").ok_or("nilfs-tune printed no Block size")?;
    as_asked("block size", cfg.block_size, || Ok(bs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::spec::DeviceSpec;

    /// Assert that `r` failed with an error that says `says`.
    fn fails(r: Result<(), String>, says: &str) {
        let e = r.expect_err(says);
        assert!(e.contains(says), "{e:?} does not say {says:?}");
    }

    // Lines of jfs_tune 1.1.15, debugreiserfs 3.6.27 and nilfs-tune 2.2.9 as printed in a
    // User-mode Linux guest for 256 MiB data and 64 MiB journal devices (/dev/ubda 98:0,
    // /dev/ubdb 98:16).
    const JFS_EXTERNAL: &str = "JFS filesystem superblock:\n\
JFS flags:\t\tJFS_LINUX  JFS_COMMIT  JFS_GROUPCOMMIT  \n\
Aggregate block size:\t4096 bytes\n\
Log device number:\t0x6210\n\
External log UUID:\t12d853ab-c3d1-4b22-8293-3cba8efebca2\n";
    const JFS_LOG: &str = "JFS external log superblock:\n\
Log size:\t\t16384 blocks\n\
Log device UUID:\t12d853ab-c3d1-4b22-8293-3cba8efebca2\n";
    const JFS_INTERNAL: &str =
        "JFS flags:\t\tJFS_LINUX  JFS_COMMIT  JFS_GROUPCOMMIT  JFS_INLINELOG  \n\
Aggregate block size:\t4096 bytes\n\
Log device number:\t0x0\n";
    const REISER_EXTERNAL: &str = "Blocksize: 4096\n\
Journal parameters:\n\
\tDevice [0x6210]\n\
\tMagic [0x14bbe6cc]\n\
\tSize 8193 blocks (including 1 for journal header) (first block 0)\n";
    const REISER_INTERNAL: &str = "Blocksize: 4096\n\
Journal parameters:\n\
\tSize 4097 blocks (including 1 for journal header) (first block 18)\n";

    #[test]
    fn jfs_log_placement_is_checked() {
        let mut c = FsConfig::new(FsType::Jfs, DeviceSpec::Loop(256 << 20));
        assert!(verify_jfs(&c, JFS_INTERNAL, None, None).is_ok());
        fails(verify_jfs(&c, JFS_EXTERNAL, None, None), "not inline");
        c.journal = Journal::External(DeviceSpec::Loop(64 << 20));
        assert!(verify_jfs(&c, JFS_EXTERNAL, Some(JFS_LOG), Some((98, 16))).is_ok());
        fails(
            verify_jfs(&c, JFS_EXTERNAL, Some(JFS_LOG), Some((7, 1))),
            "0x6210",
        );
        fails(
            verify_jfs(
                &c,
                JFS_EXTERNAL,
                Some("Log device UUID:\tother\n"),
                Some((98, 16)),
            ),
            "names log",
        );
        fails(verify_jfs(&c, JFS_INTERNAL, None, Some((98, 16))), "inline");
    }

    #[test]
    fn reiserfs_journal_size_and_device_are_checked() {
        let mut c = FsConfig::new(FsType::Reiserfs, DeviceSpec::Loop(256 << 20));
        c.journal_size = Some(16 << 20);
        assert!(verify_reiserfs(&c, REISER_INTERNAL, None).is_ok());
        c.journal_size = Some(32 << 20);
        fails(
            verify_reiserfs(&c, REISER_INTERNAL, None),
            "4097 blocks, asked 8193",
        );
        c.journal = Journal::External(DeviceSpec::Loop(64 << 20));
        assert!(verify_reiserfs(&c, REISER_EXTERNAL, Some((98, 16))).is_ok());
        fails(
            verify_reiserfs(&c, REISER_EXTERNAL, Some((98, 32))),
            "asked 0x6220",
        );
        c.journal = Journal::Internal;
        fails(verify_reiserfs(&c, REISER_EXTERNAL, None), "asked internal");
    }

    #[test]
    fn nilfs2_block_size_is_checked() {
        let mut c = FsConfig::new(FsType::Nilfs2, DeviceSpec::Loop(256 << 20));
        let dump = "Filesystem magic number:  0x3434\nBlock size:\t\t  2048\n";
        assert!(verify_nilfs2(&c, dump).is_ok());
        c.block_size = Some(4096);
        fails(verify_nilfs2(&c, dump), "2048, asked 4096");
    }

    const EXT4_INTERNAL: &str = "Filesystem UUID:          ad3cf5cb\n\
Filesystem features:      has_journal ext_attr dir_index extent 64bit\n\
Block size:               4096\n\
Inode size:\t          256\n\
Journal inode:            8\n\
Total journal size:       64M\n\
Total journal blocks:     16384\n";

    const EXT4_EXTERNAL: &str = "Filesystem UUID:          ad3cf5cb\n\
Filesystem features:      has_journal ext_attr dir_index extent 64bit\n\
Block size:               4096\n\
Inode size:\t          256\n\
Journal UUID:             9fb7a0f5\n\
Journal device:\t          0x0701\n";

    const JDEV: &str = "Filesystem UUID:          9fb7a0f5\n\
Filesystem features:      journal_dev\n\
Block size:               4096\n\
Total journal size:       16M\n\
Total journal blocks:     4096\n\
Journal users:            ad3cf5cb\n";

    fn ext4(size: u64) -> FsConfig {
        let mut c = FsConfig::new(FsType::Ext4, DeviceSpec::Loop(1 << 30));
        c.journal_size = Some(size);
        c.inode_size = Some(256);
        c
    }

    #[test]
    fn internal_journal_size_is_checked() {
        assert_eq!(field(EXT4_INTERNAL, "Inode size"), Some("256"));
        assert!(verify_ext(&ext4(64 << 20), EXT4_INTERNAL, None, None).is_ok());
        let e = verify_ext(&ext4(128 << 20), EXT4_INTERNAL, None, None).unwrap_err();
        assert_eq!(e, "the internal journal is 64M, asked 128M");
        let mut c = ext4(64 << 20);
        c.inode_size = Some(512);
        fails(verify_ext(&c, EXT4_INTERNAL, None, None), "inode size");
    }

    #[test]
    fn external_journal_device_uuid_and_size_are_checked() {
        let mut c = ext4(16 << 20);
        c.journal = Journal::External(DeviceSpec::Loop(1 << 30));
        assert!(verify_ext(&c, EXT4_EXTERNAL, Some(JDEV), Some((7, 1))).is_ok());
        let e = verify_ext(&c, EXT4_EXTERNAL, Some(JDEV), Some((7, 2)));
        fails(e, "journal device 0x0701, not 7:2");
        c.journal_size = Some(64 << 20);
        let e = verify_ext(&c, EXT4_EXTERNAL, Some(JDEV), Some((7, 1))).unwrap_err();
        assert_eq!(e, "the external journal is 16M, asked 64M");
        // Internal asked, external made.
        let e = verify_ext(&ext4(16 << 20), EXT4_EXTERNAL, None, None);
        fails(e, "external, asked internal");
        // External asked, internal made.
        fails(
            verify_ext(&c, EXT4_INTERNAL, Some(JDEV), Some((7, 1))),
            "no external journal",
        );
    }

    #[test]
    fn ext2_must_have_no_journal() {
        let c = FsConfig::new(FsType::Ext2, DeviceSpec::Loop(1 << 30));
        fails(verify_ext(&c, EXT4_INTERNAL, None, None), "with a journal");
    }

    const XFS: &str =
        "meta-data=/dev/loop0             isize=512    agcount=4, agsize=65536 blks\n\
data     =                       bsize=4096   blocks=262144, imaxpct=25\n\
log      =/dev/loop1             bsize=4096   blocks=16384, version=2\n";

    #[test]
    fn xfs_log_placement_and_size() {
        let mut c = FsConfig::new(FsType::Xfs, DeviceSpec::Loop(1 << 30));
        c.journal = Journal::External(DeviceSpec::Loop(1 << 30));
        c.journal_size = Some(64 << 20);
        c.inode_size = Some(512);
        assert!(verify_xfs(&c, XFS, Some("/dev/loop1")).is_ok());
        fails(verify_xfs(&c, XFS, Some("/dev/loop2")), "asked /dev/loop2");
        c.journal_size = Some(128 << 20);
        assert_eq!(
            verify_xfs(&c, XFS, Some("/dev/loop1")).unwrap_err(),
            "the log is 64M, asked 128M"
        );
        let i = FsConfig::new(FsType::Xfs, DeviceSpec::Loop(1 << 30));
        fails(verify_xfs(&i, XFS, None), "asked internal");
        let internal = XFS.replace("/dev/loop1            ", "internal log");
        assert!(verify_xfs(&i, &internal, None).is_ok());
    }

    #[test]
    fn btrfs_sector_size() {
        let mut c = FsConfig::new(FsType::Btrfs, DeviceSpec::Loop(1 << 30));
        c.block_size = Some(4096);
        assert!(verify_btrfs(&c, "csum_size\t\t4\nsectorsize\t\t4096\n").is_ok());
        assert!(verify_btrfs(&c, "sectorsize\t\t65536\n").is_err());
    }
}
