//! Provisioning: make each cell's file system for real and take it down again.
//!
//! Devices (`loop:SIZE` sparse images, `ram:SIZE` loop devices over a tmpfs file, guarded
//! real block devices), mkfs for ext2/3/4, XFS and btrfs (nilfs2 and jfs where the kernel and
//! tools exist), internal or external journals and their sizes, block/inode/log sizes, mkfs
//! and mount options, tune2fs features and the I/O scheduler. After mkfs the result is read
//! back (dumpe2fs, xfs_info, btrfs dump-super) and the cell fails when it differs from what
//! was asked. Every external command goes through [`exec::Exec`]; every device and mount is
//! recorded in the run's state file before it is made ([`state`]).
//!
//! The provisioner knows nothing about workloads.

pub mod exec;
pub mod guard;
pub mod inspect;
pub mod loopdev;
pub mod mkfs;
pub mod mount;
pub mod plan;
mod provisioned;
mod provisioner;
pub mod signature;
pub mod spec;
pub mod state;
mod state_cleanup;
pub mod support;

pub use provisioned::Provisioned;
pub use provisioner::Provisioner;
pub use spec::{DeviceSpec, FsConfig, FsType, Journal};

/// Why provisioning failed. Callers branch on `Refused` (never retried) and `NotInstalled`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProvisionError {
    /// A program is missing.
    #[error("{program} is not installed; run scripts/install-deps or apt-get install {package}")]
    NotInstalled {
        /// The program.
        program: String,
        /// The Debian package that has it.
        package: &'static str,
    },
    /// A command exited with an error.
    #[error("`{cmdline}` failed (exit {code}): {stderr}")]
    CommandFailed {
        /// The command as a shell line.
        cmdline: String,
        /// Its exit status.
        code: i32,
        /// The line of its output that says why.
        stderr: String,
    },
    /// The safety checks refused a device.
    #[error("refusing to format {device}: {reason}")]
    Refused {
        /// The device.
        device: String,
        /// Why, and what to do.
        reason: String,
    },
    /// What mkfs made is not what was asked.
    #[error("{0}")]
    Verify(String),
    /// A file or system call failed.
    #[error("{0}")]
    Io(String),
}
