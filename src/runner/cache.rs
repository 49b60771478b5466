//! The cache policy applied before each counted repetition.
//!
//! `cold` follows Traeger et al. (2008), "caches should be cleared before each run …
//! remounting the file system": `sync`, unmount (which also writes back and drops the file
//! system's own caches), `echo 3 > /proc/sys/vm/drop_caches` (page cache, dentries and
//! inodes, including the block devices' caches), mount again. `warm` runs one discarded
//! repetition first; `none` does nothing. The policy is stored with every trial.

use crate::plan::CachePolicy;
use crate::provision::exec::{write_line, CmdLine, Exec};
use crate::provision::mount::Mounted;
use crate::provision::ProvisionError;
use std::path::Path;

/// The kernel's cache-drop control file.
pub const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Make the caches cold: sync, unmount, drop caches, mount.
pub fn make_cold(exec: &dyn Exec, m: &mut Mounted) -> Result<(), ProvisionError> {
    exec.run(&CmdLine::new("sync"))?;
    m.unmount_only()?;
    exec.write_file(Path::new(DROP_CACHES), "3")?;
    // In a guest, the host's page cache holds the image files too.
    super::guest::drop_host_caches().map_err(|e| ProvisionError::Io(format!("{e:#}")))?;
    m.mount_again()
}

/// The commands a policy runs before each counted repetition, for `fslab study plan`.
pub fn plan_lines(policy: CachePolicy, m: &Mounted) -> Vec<String> {
    match policy {
        CachePolicy::Cold => vec![
            "sync".into(),
            m.umount_cmd().to_string(),
            write_line(Path::new(DROP_CACHES), "3"),
            m.mount_cmd().to_string(),
        ],
        // Unmounted and taken down as above, then made again with the cell's own commands.
        CachePolicy::Fresh => vec![
            "sync".into(),
            m.umount_cmd().to_string(),
            "(tear the cell down and make it again: the provisioning commands above, mkfs included)"
                .into(),
        ],
        CachePolicy::Warm | CachePolicy::None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::FsType;

    #[test]
    fn cold_is_sync_umount_drop_mount() {
        let (ex, mut m) = Mounted::recorded(FsType::Xfs, vec![], "/dev/loop2", "/m").unwrap();
        make_cold(ex.as_ref(), &mut m).unwrap();
        let lines = ex.lines();
        assert_eq!(
            lines[1..],
            [
                "sync",
                "umount /m",
                "echo 3 > /proc/sys/vm/drop_caches",
                "mount -t xfs /dev/loop2 /m"
            ]
        );
        assert_eq!(plan_lines(CachePolicy::Cold, &m), lines[1..]);
        assert!(plan_lines(CachePolicy::Warm, &m).is_empty());
    }
}
