//! O_DIRECT support of a target: refused on memory file systems, probed with a file elsewhere,
//! alignment from statx `STATX_DIOALIGN`.

use super::io::{Io, OpenFlags, RealIo};
use anyhow::Result;
use std::path::Path;

/// What the target's file system says about O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectSupport {
    /// Required alignment of file offsets and lengths in bytes (statx `STATX_DIOALIGN`;
    /// 512 when the kernel does not say).
    pub offset_align: u32,
    /// Required alignment of buffer addresses.
    pub mem_align: u32,
}

/// Check that `dir`'s file system takes O_DIRECT and find its alignment, with a probe file
/// that is removed again. File systems that keep data only in memory (tmpfs, ramfs) are
/// refused: Linux ≥ 6.6 accepts O_DIRECT on tmpfs but it still copies through memory.
pub fn probe_direct(dir: &Path, fs_type: Option<&str>) -> Result<DirectSupport> {
    if let Some(fs @ ("tmpfs" | "ramfs" | "devtmpfs")) = fs_type {
        crate::bail_usage!(
            "-I (O_DIRECT) on {fs} ({}) measures memory copies, not a device: {fs} has no device to bypass the cache to; drop -I or put the file on a disk-backed file system with -f",
            dir.display()
        );
    }
    let probe = dir.join(format!(".fslab-odirect-probe.{}", std::process::id()));
    if probe.symlink_metadata().is_ok() {
        crate::bail_usage!(
            "{} exists and is not fslab's to replace; remove it or choose another directory",
            probe.display()
        );
    }
    let mut io = RealIo::default();
    let flags = OpenFlags {
        direct: true,
        ..OpenFlags::CREATE
    };
    let opened = io.open(&probe, flags);
    let created = opened.is_ok();
    let result = match opened {
        Ok(fd) => {
            let st = rustix::fs::statx(
                rustix::fs::CWD,
                &probe,
                rustix::fs::AtFlags::empty(),
                rustix::fs::StatxFlags::DIOALIGN,
            );
            let _ = io.close(fd);
            let (off, mem) = match st {
                Ok(s) if s.stx_mask & rustix::fs::StatxFlags::DIOALIGN.bits() != 0 => {
                    (s.stx_dio_offset_align, s.stx_dio_mem_align)
                }
                _ => (512, 512),
            };
            Ok(DirectSupport {
                offset_align: if off == 0 { 512 } else { off },
                mem_align: if mem == 0 { 512 } else { mem },
            })
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(crate::error::usage(format!(
            "-I (O_DIRECT): the {} file system at {} does not support direct I/O; drop -I or choose a file on ext4, xfs or btrfs with -f",
            fs_type.unwrap_or("unknown"),
            dir.display()
        ))),
        Err(e) => Err(anyhow::Error::new(e)
            .context(format!("cannot create a probe file in {}", dir.display()))),
    };
    if created {
        let _ = std::fs::remove_file(&probe);
    }
    result
}
