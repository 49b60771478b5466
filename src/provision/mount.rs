//! A mounted file system as an RAII guard: recorded in the state file before `mount` runs,
//! unmounted by [`Mounted::unmount`] (explicit, errors reported) or, as a best-effort
//! fallback, when dropped.

use super::exec::{CmdLine, Exec, RecordingExec};
use super::mkfs;
use super::spec::FsType;
use super::state::{Resource, RunDir};
use super::ProvisionError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file system fslab mounted.
pub struct Mounted {
    exec: Arc<dyn Exec>,
    run: Option<Arc<RunDir>>,
    state_id: Option<u64>,
    device: PathBuf,
    mountpoint: PathBuf,
    fs: FsType,
    options: Vec<String>,
    active: bool,
}

impl Mounted {
    /// Record, then mount `device` on `mountpoint`. `run` is `None` in plan mode.
    pub fn mount(
        exec: Arc<dyn Exec>,
        run: Option<Arc<RunDir>>,
        fs: FsType,
        options: Vec<String>,
        device: &Path,
        mountpoint: &Path,
    ) -> Result<Mounted, ProvisionError> {
        let mount = Resource::Mount {
            path: mountpoint.to_path_buf(),
            device: device.to_path_buf(),
        };
        let state_id = run.as_ref().map(|r| r.record(mount)).transpose()?;
        let mut m = Mounted {
            exec,
            run,
            state_id,
            device: device.to_path_buf(),
            mountpoint: mountpoint.to_path_buf(),
            fs,
            options,
            active: false,
        };
        m.mount_again()?;
        Ok(m)
    }

    /// `device` on `mountpoint` as a plan shows it: "mounted" through a [`RecordingExec`]
    /// (returned too, holding the commands), with nothing recorded in a state file.
    pub fn recorded(
        fs: FsType,
        options: Vec<String>,
        device: impl AsRef<Path>,
        mountpoint: impl AsRef<Path>,
    ) -> Result<(Arc<RecordingExec>, Mounted), ProvisionError> {
        let exec = Arc::new(RecordingExec::new());
        let m = Mounted::mount(
            exec.clone(),
            None,
            fs,
            options,
            device.as_ref(),
            mountpoint.as_ref(),
        )?;
        Ok((exec, m))
    }

    /// The mount command line.
    pub fn mount_cmd(&self) -> CmdLine {
        let dev = self.device.to_string_lossy();
        mkfs::mount(self.fs, &self.options, &dev, &self.mountpoint)
    }

    /// The umount command line.
    pub fn umount_cmd(&self) -> CmdLine {
        CmdLine::new("umount").path(&self.mountpoint)
    }

    /// Where it is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// Unmount, keeping the record (for a remount cycle).
    pub fn unmount_only(&mut self) -> Result<(), ProvisionError> {
        if self.active {
            // What is mounted there is checked beneath the work directory first: the device
            // fslab mounted, at the path it made.
            if let Some(r) = &self.run {
                r.check_mounted(&self.mountpoint, &self.device)?;
            }
            self.exec.run(&self.umount_cmd())?;
            self.active = false;
        }
        Ok(())
    }

    /// Mount again after [`Mounted::unmount_only`].
    pub fn mount_again(&mut self) -> Result<(), ProvisionError> {
        if !self.active {
            self.exec.run(&self.mount_cmd())?;
            self.active = true;
        }
        Ok(())
    }

    /// Unmount for good and drop the record.
    pub fn unmount(mut self) -> Result<(), ProvisionError> {
        self.unmount_only()?;
        self.forget();
        Ok(())
    }

    fn forget(&mut self) {
        if let (Some(r), Some(id)) = (&self.run, self.state_id.take()) {
            if let Err(e) = r.forget(id) {
                eprintln!("fslab: {e}");
            }
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.active {
            match self.exec.run(&self.umount_cmd()) {
                Ok(_) => self.active = false,
                Err(e) => {
                    eprintln!(
                        "fslab: could not unmount {} ({e}); `fslab cleanup` will retry",
                        self.mountpoint.display()
                    );
                    return;
                }
            }
        }
        self.forget();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_cycle_and_drop_unmounts() {
        let (ex, mut m) = Mounted::recorded(
            FsType::Ext4,
            vec!["noatime".into()],
            "/dev/loop0",
            "/w/mnt/c0",
        )
        .unwrap();
        m.unmount_only().unwrap();
        m.mount_again().unwrap();
        drop(m);
        assert_eq!(
            ex.lines(),
            vec![
                "mount -t ext4 -o noatime /dev/loop0 /w/mnt/c0",
                "umount /w/mnt/c0",
                "mount -t ext4 -o noatime /dev/loop0 /w/mnt/c0",
                "umount /w/mnt/c0",
            ]
        );
    }
}
