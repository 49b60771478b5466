//! A provisioned cell: its devices, mount and record of commands, and its teardown
//! (unmount, detach, delete) — explicit, or best-effort when dropped.

use super::exec::Exec;
use super::loopdev;
use super::mount::Mounted;
use super::spec::FsConfig;
use super::state::RunDir;
use super::ProvisionError;
use crate::target::Target;
use std::path::PathBuf;
use std::sync::Arc;

/// A loop device fslab attached over an image it created.
pub(super) struct LoopDev {
    pub(super) device: PathBuf,
    pub(super) image: PathBuf,
    pub(super) ids: Option<(u64, u64)>,
}

/// One provisioned, mounted cell.
pub struct Provisioned {
    pub(super) exec: Arc<dyn Exec>,
    pub(super) run: Option<Arc<RunDir>>,
    /// The configuration it was made from.
    pub config: FsConfig,
    /// The data device.
    pub data: PathBuf,
    /// The external journal device, if any.
    pub journal: Option<PathBuf>,
    /// Every command run, in order, as shell lines.
    pub commands: Vec<String>,
    /// What the read-back commands printed, each after a `# command` line.
    pub dump: String,
    pub(super) mounted: Option<Mounted>,
    pub(super) mountpoint_id: Option<u64>,
    pub(super) mountpoint: PathBuf,
    pub(super) loops: Vec<LoopDev>,
}

impl Provisioned {
    /// Where workloads run: the mount point.
    pub fn target(&self) -> Target {
        Target {
            dir: self.mountpoint.clone(),
            fs_type: Some(self.config.fs.as_str().to_string()),
        }
    }

    /// The mount, for remount cycles.
    pub fn mounted_mut(&mut self) -> Option<&mut Mounted> {
        self.mounted.as_mut()
    }

    /// Unmount, detach and delete everything this cell made.
    pub fn teardown(mut self) -> Result<(), ProvisionError> {
        self.teardown_inner()
    }

    pub(super) fn teardown_inner(&mut self) -> Result<(), ProvisionError> {
        let mut first: Option<ProvisionError> = None;
        let mut keep = |r: Result<(), ProvisionError>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        if let Some(m) = self.mounted.take() {
            keep(m.unmount());
        }
        if let (Some(run), Some(id)) = (&self.run, self.mountpoint_id) {
            // Resolved beneath the work directory, and only the directory fslab made.
            match run.remove(id) {
                Ok(()) => self.mountpoint_id = None,
                Err(e) => keep(Err(e)),
            }
        }
        while let Some(l) = self.loops.pop() {
            let r = self.exec.run(&loopdev::detach_cmd(&l.device)).map(|_| ());
            if r.is_err() {
                keep(r);
                continue;
            }
            if let (Some(run), Some((img_id, loop_id))) = (&self.run, l.ids) {
                keep(run.forget(loop_id));
                keep(run.remove(img_id));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Provisioned {
    fn drop(&mut self) {
        if self.mounted.is_some() || !self.loops.is_empty() {
            if let Err(e) = self.teardown_inner() {
                eprintln!("fslab: teardown: {e}; `fslab cleanup` will retry");
            }
        }
    }
}
