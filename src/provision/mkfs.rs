//! The exact mkfs, tune2fs, mount and inspection command lines for a cell.
//!
//! Pure functions of the configuration and the device names, so `fslab study plan` prints
//! the same lines the run executes. Follows mke2fs(8)/tune2fs(8)/dumpe2fs(8) for ext2/3/4,
//! mkfs.xfs(8)/xfs_info(8) for XFS, mkfs.btrfs(8)/btrfs-inspect-internal(8) for btrfs.
//!
//! fslab's own choices, all stated in `doc/studies.md`:
//! - ext: `-E lazy_itable_init=0,lazy_journal_init=0`, so mke2fs initialises inode tables and
//!   the journal now instead of a kernel thread doing it in the background during the
//!   benchmark; merged into a `-E` the study gives.
//! - ext with an external journal: `-b` is always passed (default 4096) because the journal
//!   device and the file system must agree, and mke2fs picks 1024 for small devices.
//! - force flags (`-F`, `-f`): the devices have passed the safety checks first.

use super::exec::CmdLine;
use super::spec::{FsConfig, FsType, Journal};
use std::path::Path;

const LAZY: [&str; 2] = ["lazy_itable_init=0", "lazy_journal_init=0"];

/// A size for mkfs.xfs and friends: `64m`, `1g`, or bytes.
fn xfs_size(n: u64) -> String {
    super::spec::size_in(n, &[("g", 30), ("m", 20), ("k", 10)])
}

/// `c` with `flag VALUE` added when there is a value.
fn opt(c: CmdLine, flag: &str, value: Option<impl std::fmt::Display>) -> CmdLine {
    match value {
        Some(v) => c.arg(flag).arg(v.to_string()),
        None => c,
    }
}

/// The study's extra mke2fs arguments with fslab's `-E` flags merged in; returns fslab's
/// own `-E` argument separately when the study gave none.
fn ext_user_args(user: &[String]) -> (Option<String>, Vec<String>) {
    let mut out = user.to_vec();
    let merge = |v: &str| {
        let mut parts: Vec<String> = v
            .split(',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        for l in LAZY {
            let key = l.split('=').next().unwrap_or(l);
            if !parts.iter().any(|p| p.split('=').next() == Some(key)) {
                parts.push(l.to_string());
            }
        }
        parts.join(",")
    };
    if let Some(i) = out.iter().position(|a| a == "-E") {
        if let Some(v) = out.get(i + 1).cloned() {
            out[i + 1] = merge(&v);
            return (None, out);
        }
    }
    if let Some(i) = out.iter().position(|a| a.starts_with("-E") && a.len() > 2) {
        let v = out[i][2..].to_string();
        out[i] = format!("-E{}", merge(&v));
        return (None, out);
    }
    (Some(LAZY.join(",")), out)
}

/// The command that prepares an external journal device before the data device's mkfs:
/// `mke2fs -O journal_dev` for ext3/4, `jfs_mkfs -J journal_dev` for JFS; `None` for other
/// layouts (XFS and ReiserFS write their external log from the data device's mkfs).
pub fn journal_mkfs(cfg: &FsConfig, jdev: &str) -> Option<CmdLine> {
    if !matches!(cfg.journal, Journal::External(_)) {
        return None;
    }
    if cfg.fs == FsType::Jfs {
        return Some(
            CmdLine::new(cfg.fs.mkfs_program())
                .args(["-q", "-J", "journal_dev"])
                .arg(jdev)
                .confined([jdev]),
        );
    }
    if !matches!(cfg.fs, FsType::Ext3 | FsType::Ext4) {
        return None;
    }
    let bs = cfg.ext_block_size();
    let mut c = CmdLine::new("mke2fs")
        .args(["-F", "-q", "-O", "journal_dev", "-b"])
        .arg(bs.to_string())
        .arg(jdev);
    if let Some(j) = cfg.journal_size {
        // The journal uses this many blocks of the device (mke2fs's blocks-count argument).
        c = c.arg((j / bs).to_string());
    }
    Some(c.confined([jdev]))
}

/// The mkfs command for the data device, caged with the cell's devices only (so no extra
/// argument can reach another device or write a file anywhere).
pub fn mkfs(cfg: &FsConfig, data: &str, jdev: Option<&str>) -> CmdLine {
    let devices: Vec<&str> = std::iter::once(data).chain(jdev).collect();
    let line = mkfs_line(cfg, data, jdev);
    if cfg.fs == FsType::Xfs {
        // mkfs.xfs sets the devices' block size (BLKBSZSET), which needs CAP_SYS_ADMIN.
        line.confined_setting_block_size(devices)
    } else {
        line.confined(devices)
    }
}

fn mkfs_line(cfg: &FsConfig, data: &str, jdev: Option<&str>) -> CmdLine {
    let prog = cfg.fs.mkfs_program();
    match cfg.fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
            let (own_e, user) = ext_user_args(&cfg.mkfs);
            let external = matches!(cfg.journal, Journal::External(_));
            let bs = (cfg.block_size.is_some() || external).then(|| cfg.ext_block_size());
            let c = opt(CmdLine::new(prog).args(["-F", "-q"]), "-E", own_e);
            let c = opt(opt(c, "-b", bs), "-I", cfg.inode_size);
            let c = match (external, jdev) {
                (true, Some(j)) => c.arg("-J").arg(format!("device={j}")),
                _ => opt(
                    c,
                    "-J",
                    cfg.journal_size.map(|n| format!("size={}", n >> 20)),
                ),
            };
            c.args(user).arg(data)
        }
        FsType::Xfs => {
            let c = CmdLine::new(prog).args(["-f", "-q"]);
            let c = opt(c, "-b", cfg.block_size.map(|b| format!("size={b}")));
            let c = opt(c, "-i", cfg.inode_size.map(|i| format!("size={i}")));
            let size = cfg.journal_size.map(xfs_size);
            let log = match (jdev, size) {
                (Some(j), Some(s)) => Some(format!("logdev={j},size={s}")),
                (Some(j), None) => Some(format!("logdev={j}")),
                (None, Some(s)) => Some(format!("size={s}")),
                (None, None) => None,
            };
            opt(c, "-l", log).args(&cfg.mkfs).arg(data)
        }
        FsType::Btrfs | FsType::Nilfs2 => {
            // The block size: mkfs.btrfs's sector size (-s), mkfs.nilfs2's -b.
            let flag = if cfg.fs == FsType::Btrfs { "-s" } else { "-b" };
            let c = CmdLine::new(prog).args(["-f", "-q"]);
            opt(c, flag, cfg.block_size).args(&cfg.mkfs).arg(data)
        }
        FsType::Jfs => {
            let c = CmdLine::new(prog).arg("-q");
            let c = match jdev {
                Some(j) => c.arg("-J").arg(format!("device={j}")),
                None => opt(c, "-s", cfg.journal_size.map(|n| n >> 20)),
            };
            c.args(&cfg.mkfs).arg(data)
        }
        FsType::Reiserfs => {
            // -ff: no question even on a whole device; -q: no progress.
            let c = CmdLine::new(prog).args(["-q", "-ff"]);
            let c = opt(opt(c, "-b", cfg.block_size), "-j", jdev);
            let c = opt(c, "-s", cfg.journal_size.map(reiserfs_journal_blocks));
            c.args(&cfg.mkfs).arg(data)
        }
    }
}

/// mkreiserfs's `-s` for a journal of `bytes`: its 4 KiB blocks plus the header block, as
/// debugreiserfs prints it back ("Size 8193 blocks (including 1 for journal header)").
pub fn reiserfs_journal_blocks(bytes: u64) -> u64 {
    bytes / 4096 + 1
}

/// `tune2fs -O …` when the study sets ext features.
pub fn tune(cfg: &FsConfig, data: &str) -> Option<CmdLine> {
    if cfg.features.is_empty() || !cfg.fs.is_ext() {
        return None;
    }
    Some(
        CmdLine::new("tune2fs")
            .arg("-O")
            .arg(cfg.features.join(","))
            .arg(data)
            .confined([data]),
    )
}

/// Mount options including the journal device where the file system needs it named.
pub fn mount_options(cfg: &FsConfig, jdev: Option<&str>) -> Vec<String> {
    let mut o = cfg.mount.clone();
    if let Some(j) = jdev {
        match cfg.fs {
            // The superblock records the journal's device number, which changes when loop
            // devices are attached again; naming the path is always right.
            FsType::Ext3 | FsType::Ext4 => o.push(format!("journal_path={j}")),
            FsType::Xfs => o.push(format!("logdev={j}")),
            // Found by device number otherwise, which changes when devices are attached again.
            FsType::Reiserfs => o.push(format!("jdev={j}")),
            // JFS finds its log by the UUID in the superblock (no mount option).
            _ => {}
        }
    }
    o
}

/// The mount command.
pub fn mount(fs: FsType, options: &[String], data: &str, mountpoint: &Path) -> CmdLine {
    let mut c = CmdLine::new("mount").arg("-t").arg(fs.as_str());
    if !options.is_empty() {
        c = c.arg("-o").arg(options.join(","));
    }
    c.arg(data).path(mountpoint)
}

/// The commands that read back what mkfs made (run after mounting), in order, each caged
/// with the devices it reads.
pub fn inspect(cfg: &FsConfig, data: &str, jdev: Option<&str>, mountpoint: &Path) -> Vec<CmdLine> {
    let dump =
        |prog: &str, flag: &str, dev: &str| CmdLine::new(prog).arg(flag).arg(dev).confined([dev]);
    // The data device's superblock, then an external journal's.
    let both = |prog: &str, flag: &str| -> Vec<CmdLine> {
        std::iter::once(data)
            .chain(jdev)
            .map(|d| dump(prog, flag, d))
            .collect()
    };
    match cfg.fs {
        FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => both("dumpe2fs", "-h"),
        FsType::Jfs => both("jfs_tune", "-l"),
        // xfs_info asks the mounted file system, and finds it by its devices.
        FsType::Xfs => vec![CmdLine::new("xfs_info")
            .path(mountpoint)
            .confined(std::iter::once(data).chain(jdev))],
        FsType::Btrfs => vec![CmdLine::new("btrfs")
            .args(["inspect-internal", "dump-super"])
            .arg(data)
            .confined([data])],
        FsType::Nilfs2 => vec![dump("nilfs-tune", "-l", data)],
        FsType::Reiserfs => vec![opt(CmdLine::new("debugreiserfs"), "-j", jdev)
            .arg(data)
            .confined(std::iter::once(data).chain(jdev))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::spec::DeviceSpec;

    fn ext4() -> FsConfig {
        FsConfig::new(FsType::Ext4, DeviceSpec::Loop(1 << 30))
    }

    #[test]
    fn ext4_internal_journal() {
        let mut c = ext4();
        c.journal_size = Some(64 << 20);
        c.mkfs = vec!["-m".into(), "0".into()];
        assert_eq!(
            mkfs(&c, "/dev/loop0", None).to_string(),
            "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -J size=64 -m 0 /dev/loop0"
        );
        assert!(journal_mkfs(&c, "/dev/loop1").is_none());
    }

    /// mkfs, mount (at /m) and the first inspection of `c` on `data` with the external `log`.
    fn external(c: &FsConfig, data: &str, log: &str) -> [String; 3] {
        let o = mount_options(c, Some(log));
        let m = Path::new("/m");
        [
            mkfs(c, data, Some(log)).to_string(),
            mount(c.fs, &o, data, m).to_string(),
            inspect(c, data, Some(log), m)[0].to_string(),
        ]
    }

    #[test]
    fn ext4_jfs_and_reiserfs_external_journals_and_logs() {
        let on = |fs, log: u64| FsConfig {
            journal: Journal::External(DeviceSpec::Loop(log)),
            ..FsConfig::new(fs, DeviceSpec::Loop(1 << 30))
        };
        let jfs = on(FsType::Jfs, 32 << 20);
        // Each file system, the journal device's own mkfs, then its mkfs, mount and first
        // inspection. ext4's journal device and file system agree on the block size.
        for (c, journal, lines) in [
            (
                FsConfig {
                    journal_size: Some(16 << 20),
                    ..on(FsType::Ext4, 1 << 30)
                },
                Some("mke2fs -F -q -O journal_dev -b 4096 /dev/ubdb 4096"),
                [
                    "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -b 4096 -J device=/dev/ubdb /dev/ubda",
                    "mount -t ext4 -o journal_path=/dev/ubdb /dev/ubda /m",
                    "dumpe2fs -h /dev/ubda",
                ],
            ),
            (
                jfs.clone(),
                Some("mkfs.jfs -q -J journal_dev /dev/ubdb"),
                [
                    "mkfs.jfs -q -J device=/dev/ubdb /dev/ubda",
                    "mount -t jfs /dev/ubda /m",
                    "jfs_tune -l /dev/ubda",
                ],
            ),
            (
                FsConfig {
                    journal_size: Some(32 << 20),
                    mount: vec!["notail".into()],
                    ..on(FsType::Reiserfs, 64 << 20)
                },
                None,
                [
                    "mkreiserfs -q -ff -j /dev/ubdb -s 8193 /dev/ubda",
                    "mount -t reiserfs -o notail,jdev=/dev/ubdb /dev/ubda /m",
                    "debugreiserfs -j /dev/ubdb /dev/ubda",
                ],
            ),
        ] {
            let made = journal_mkfs(&c, "/dev/ubdb").map(|j| j.to_string());
            assert_eq!(made.as_deref(), journal, "{}", c.fs);
            assert_eq!(external(&c, "/dev/ubda", "/dev/ubdb"), lines, "{}", c.fs);
        }
        // JFS has no mount option for its log; both devices are inspected.
        assert!(mount_options(&jfs, Some("/dev/ubdb")).is_empty());
        let m = Path::new("/m");
        assert_eq!(inspect(&jfs, "/dev/ubda", Some("/dev/ubdb"), m).len(), 2);
    }

    #[test]
    fn user_e_flags_are_merged_not_replaced() {
        let mut c = ext4();
        c.mkfs = vec!["-E".into(), "stride=16,lazy_itable_init=1".into()];
        assert_eq!(
            mkfs(&c, "/dev/x", None).to_string(),
            "mkfs.ext4 -F -q -E stride=16,lazy_itable_init=1,lazy_journal_init=0 /dev/x"
        );
        c.mkfs = vec!["-Estride=8".into()];
        assert!(mkfs(&c, "/dev/x", None)
            .to_string()
            .contains("-Estride=8,lazy_itable_init=0,lazy_journal_init=0"));
    }

    #[test]
    fn xfs_lines() {
        let mut c = FsConfig::new(FsType::Xfs, DeviceSpec::Loop(1 << 30));
        c.journal_size = Some(64 << 20);
        c.block_size = Some(4096);
        c.inode_size = Some(512);
        assert_eq!(
            mkfs(&c, "/dev/loop0", None).to_string(),
            "mkfs.xfs -f -q -b size=4096 -i size=512 -l size=64m /dev/loop0"
        );
        c.journal = Journal::External(DeviceSpec::Ram(256 << 20));
        c.mount = vec!["logbufs=8".into(), "logbsize=256k".into()];
        assert_eq!(
            external(&c, "/dev/loop0", "/dev/loop1"),
            [
                "mkfs.xfs -f -q -b size=4096 -i size=512 -l logdev=/dev/loop1,size=64m /dev/loop0",
                "mount -t xfs -o logbufs=8,logbsize=256k,logdev=/dev/loop1 /dev/loop0 /m",
                "xfs_info /m"
            ]
        );
    }

    #[test]
    fn btrfs_ext2_and_features() {
        let c = FsConfig::new(FsType::Btrfs, DeviceSpec::Loop(1 << 30));
        assert_eq!(
            mkfs(&c, "/dev/l", None).to_string(),
            "mkfs.btrfs -f -q /dev/l"
        );
        let mut e = FsConfig::new(FsType::Ext2, DeviceSpec::Loop(1 << 30));
        e.features = vec!["^dir_index".into(), "large_dir".into()];
        assert_eq!(
            tune(&e, "/dev/l").unwrap().to_string(),
            "tune2fs -O '^dir_index,large_dir' /dev/l"
        );
        assert!(tune(&c, "/dev/l").is_none());
        assert_eq!(
            mount(FsType::Ext2, &[], "/dev/l", Path::new("/m")).to_string(),
            "mount -t ext2 /dev/l /m"
        );
    }
}
