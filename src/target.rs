//! The directory a workload runs in, and what is known about its file system. Made by the
//! provisioner (a mounted cell) or by an engine command (`-o`, `-f`, `-D`), used by the
//! workloads; neither side knows the other.

use std::path::{Path, PathBuf};

/// Where a workload runs: a writable directory, plus what is known about the file system.
#[derive(Debug, Clone)]
pub struct Target {
    /// The directory the workload creates its files in (it must exist and be writable).
    pub dir: PathBuf,
    /// The file-system type if known (`ext4`, `tmpfs`, …), for messages and warnings.
    pub fs_type: Option<String>,
}

impl Target {
    /// A target directory whose file-system type is looked up from `/proc/self/mountinfo`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let fs_type = crate::sysinfo::fs_type_of(&dir);
        Target { dir, fs_type }
    }

    /// The target directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
