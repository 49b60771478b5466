//! Making one cell's file system for real: devices, safety checks, scheduler, mkfs, tune2fs,
//! mount, read-back and verification — and taking it all down again.
//!
//! The same code runs in plan mode (no run directory): commands are recorded, not run, loop
//! devices are named `$DATA` and `$JOURNAL`, paths start with `$RUN`, and nothing on the
//! machine is touched. So `fslab study plan` prints exactly the sequence a run executes
//! (see [`super::plan`]).

use super::exec::{write_line, CmdLine, Exec};
use super::mount::Mounted;
use super::provisioned::{LoopDev, Provisioned};
use super::spec::{DeviceSpec, FsConfig, FsType, Journal};
use super::state::{Resource, RunDir};
use super::{guard, inspect, loopdev, mkfs, ProvisionError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Makes and removes cells' file systems.
pub struct Provisioner {
    exec: Arc<dyn Exec>,
    run: Option<Arc<RunDir>>,
    base: PathBuf,
    allow_format: Vec<PathBuf>,
    ram_total: u64,
    tmpfs: Mutex<Option<(u64, u64)>>,
    dirs: Mutex<Vec<u64>>,
    /// Real devices this run has formatted, by identity (device number and, for a loop
    /// device, its backing file): their signature is ours, so a later cell on the same device
    /// may format it again. Never by path: a path re-pointed meanwhile names another device.
    formatted: Mutex<Vec<guard::DevIdent>>,
    /// In a guest: the block device the host made for a cell's `loop:`/`ram:` device, by
    /// (cell index, `data`/`journal`), used instead of an image and a loop device.
    guest_devices: std::collections::BTreeMap<(usize, String), PathBuf>,
}

impl Provisioner {
    /// Use these block devices (made by the host of a guest) for the cells' `loop:` and
    /// `ram:` devices.
    pub fn with_guest_devices(
        mut self,
        devices: std::collections::BTreeMap<(usize, String), PathBuf>,
    ) -> Provisioner {
        self.guest_devices = devices;
        self
    }

    /// A provisioner for a live run. `ram_total` is the tmpfs size for all `ram:` devices.
    pub fn new(
        exec: Arc<dyn Exec>,
        run: Arc<RunDir>,
        allow_format: Vec<PathBuf>,
        ram_total: u64,
    ) -> Result<Provisioner, ProvisionError> {
        let mut p = Provisioner::dry(exec, run.path().to_path_buf(), allow_format, ram_total);
        p.run = Some(run);
        p.make_dir(&p.base.join("images"))?;
        p.make_dir(&p.base.join("mnt"))?;
        Ok(p)
    }

    /// A provisioner whose commands go to `exec` and that touches nothing else on the
    /// machine: no state file, no directories, no safety checks, no verification.
    pub fn dry(
        exec: Arc<dyn Exec>,
        base: PathBuf,
        allow_format: Vec<PathBuf>,
        ram_total: u64,
    ) -> Provisioner {
        Provisioner {
            exec,
            run: None,
            base,
            allow_format,
            ram_total,
            tmpfs: Mutex::new(None),
            dirs: Mutex::new(Vec::new()),
            formatted: Mutex::new(Vec::new()),
            guest_devices: Default::default(),
        }
    }

    fn make_dir(&self, dir: &Path) -> Result<(), ProvisionError> {
        let Some(run) = &self.run else { return Ok(()) };
        let id = run.record(Resource::Dir {
            path: dir.to_path_buf(),
        })?;
        if let Err(e) = std::fs::create_dir(dir) {
            run.forget(id)?;
            return Err(ProvisionError::Io(format!(
                "cannot create {}: {e}",
                dir.display()
            )));
        }
        run.created(id, dir)?;
        self.dirs.lock().unwrap_or_else(|p| p.into_inner()).push(id);
        Ok(())
    }

    fn ram_dir(&self) -> PathBuf {
        self.base.join("ram")
    }

    /// Mount the run's tmpfs for `ram:` devices once.
    fn ensure_tmpfs(&self, log: &mut Vec<String>) -> Result<(), ProvisionError> {
        let mut t = self.tmpfs.lock().unwrap_or_else(|p| p.into_inner());
        if t.is_some() {
            return Ok(());
        }
        let dir = self.ram_dir();
        self.make_dir(&dir)?;
        let id = match &self.run {
            Some(r) => r.record(Resource::Tmpfs { path: dir.clone() })?,
            None => 0,
        };
        // Room for every ram: device of the study plus tmpfs's own overhead.
        let size = self.ram_total + (16 << 20);
        let cmd = CmdLine::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size},mode=0700"))
            .arg("fslab-ram")
            .path(&dir);
        log.push(cmd.to_string());
        self.exec.run(&cmd)?;
        *t = Some((id, size));
        Ok(())
    }

    fn device(
        &self,
        idx: usize,
        role: &str,
        spec: &DeviceSpec,
        direct_io: bool,
        log: &mut Vec<String>,
        loops: &mut Vec<LoopDev>,
    ) -> Result<PathBuf, ProvisionError> {
        let guest = self.guest_devices.get(&(idx, role.to_string()));
        if let Some(dev) = guest.filter(|_| !matches!(spec, DeviceSpec::Path(_))) {
            // Made blank by the host for this cell; formatted again only by this run.
            log.push(format!(
                "# {role}: {} (the host's image for {spec})",
                dev.display()
            ));
            self.check(dev, log)?;
            self.remember(dev);
            return Ok(dev.clone());
        }
        let (size, dir) = match spec {
            DeviceSpec::Path(p) => {
                // Resolved once: every command of the cell names the device checked here,
                // whatever the path (a symbolic link) names later.
                let dev = self.resolve(p)?;
                self.check(&dev, log)?;
                self.remember(&dev);
                return Ok(dev);
            }
            DeviceSpec::Loop(n) => (*n, self.base.join("images")),
            DeviceSpec::Ram(n) => {
                self.ensure_tmpfs(log)?;
                (*n, self.ram_dir())
            }
        };
        let image = dir.join(format!("c{idx}-{role}.img"));
        let record = |res: Resource| self.run.as_ref().map(|r| r.record(res)).transpose();
        let image_id = record(Resource::Image {
            path: image.clone(),
        })?;
        if let (Some(r), Some(id)) = (&self.run, image_id) {
            // Made exclusively: a file already at the path (planted, or left by anyone) is
            // never adopted, grown or formatted.
            if let Err(e) = super::state::create_new(&image, 0o644) {
                // Not made: what is at the path is not the run's, and its record goes.
                r.forget(id)?;
                return Err(ProvisionError::Io(format!(
                    "cannot create image {}: {e}; fslab makes its images itself and adopts no file",
                    image.display()
                )));
            }
            r.created(id, &image)?;
        }
        let t = loopdev::truncate_cmd(&image, size);
        log.push(t.to_string());
        self.exec.run(&t)?;
        let loop_id = record(Resource::Loop {
            image: image.clone(),
            device: None,
        })?;
        log.push(loopdev::attach_cmd(&image, direct_io).to_string());
        let dev = loopdev::attach(self.exec.as_ref(), &image, direct_io)?;
        if let (Some(r), Some(id)) = (&self.run, loop_id) {
            r.update(
                id,
                Resource::Loop {
                    image: image.clone(),
                    device: Some(dev.clone()),
                },
            )?;
        }
        loops.push(LoopDev {
            device: dev.clone(),
            image,
            ids: image_id.zip(loop_id),
        });
        // A fresh sparse image has no signature; checking anyway costs two commands and
        // catches the impossible (a reused path, a losetup that returned the wrong device).
        self.check(&dev, log)?;
        Ok(dev)
    }

    /// The device `p` names now, as a path without symbolic links (in a dry run, `p`).
    fn resolve(&self, p: &Path) -> Result<PathBuf, ProvisionError> {
        if self.run.is_none() {
            return Ok(p.to_path_buf());
        }
        std::fs::canonicalize(p).map_err(|e| ProvisionError::Refused {
            device: p.display().to_string(),
            reason: format!(
                "cannot resolve it ({e}); give an existing block device such as /dev/sdb"
            ),
        })
    }

    /// Remember that this run formats `dev` (by identity).
    fn remember(&self, dev: &Path) {
        if let Some(id) = guard::identity(dev) {
            let mut f = self.formatted.lock().unwrap_or_else(|e| e.into_inner());
            if !f.contains(&id) {
                f.push(id);
            }
        }
    }

    fn check(&self, dev: &Path, log: &mut Vec<String>) -> Result<(), ProvisionError> {
        // The allow list names paths: they count for the device they name now.
        let named = |a: &PathBuf| a == dev || std::fs::canonicalize(a).is_ok_and(|c| c == dev);
        let ours = guard::identity(dev).is_some_and(|id| {
            self.formatted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&id)
        });
        let allowed = self.allow_format.iter().any(named) || ours;
        if self.run.is_some() {
            guard::check_formattable(dev, allowed, self.exec.as_ref(), guard::Thoroughness::FULL)?;
        }
        if !allowed {
            log.extend(guard::probe_commands(dev).iter().map(|c| c.to_string()));
        }
        Ok(())
    }

    /// Make, mount and verify one cell's file system. On error, everything made so far is
    /// torn down before the error is returned.
    pub fn provision(&self, idx: usize, cfg: &FsConfig) -> Result<Provisioned, ProvisionError> {
        let mut p = Provisioned {
            exec: self.exec.clone(),
            run: self.run.clone(),
            config: cfg.clone(),
            data: PathBuf::new(),
            journal: None,
            commands: Vec::new(),
            dump: String::new(),
            mounted: None,
            mountpoint_id: None,
            mountpoint: self.base.join("mnt").join(format!("c{idx}")),
            loops: Vec::new(),
        };
        match self.build(idx, cfg, &mut p) {
            Ok(()) => Ok(p),
            Err(e) => {
                if let Err(t) = p.teardown_inner() {
                    eprintln!("fslab: after a failed provisioning: {t}");
                }
                Err(e)
            }
        }
    }

    /// The steps of [`Provisioner::provision`], each command logged in `p.commands` and each
    /// loop device kept in `p.loops` as it goes (so a failed step is torn down too).
    fn build(&self, idx: usize, cfg: &FsConfig, p: &mut Provisioned) -> Result<(), ProvisionError> {
        let exec = self.exec.as_ref();
        let (log, loops) = (&mut p.commands, &mut p.loops);
        let data = self.device(idx, "data", &cfg.data, cfg.direct_io, log, loops)?;
        p.data = data.clone();
        let jdev = match &cfg.journal {
            Journal::External(spec) => {
                let j = self.device(idx, "journal", spec, cfg.direct_io, log, loops)?;
                p.journal = Some(j.clone());
                Some(j)
            }
            Journal::Internal => None,
        };
        let data_s = data.to_string_lossy().into_owned();
        let jdev_s = jdev.as_ref().map(|j| j.to_string_lossy().into_owned());
        if let Some(sched) = &cfg.scheduler {
            self.set_scheduler(&data, sched, log)?;
        }
        let mut cmds: Vec<CmdLine> = Vec::new();
        if let Some(j) = &jdev_s {
            cmds.extend(mkfs::journal_mkfs(cfg, j));
        }
        cmds.push(mkfs::mkfs(cfg, &data_s, jdev_s.as_deref()));
        cmds.extend(mkfs::tune(cfg, &data_s));
        for c in &cmds {
            log.push(c.to_string());
            exec.run(c)?;
        }
        let mnt = p.mountpoint.clone();
        log.push(CmdLine::new("mkdir").path(&mnt).to_string());
        if let Some(run) = &self.run {
            let id = run.record(Resource::Dir { path: mnt.clone() })?;
            p.mountpoint_id = Some(id);
            if let Err(e) = std::fs::create_dir(&mnt) {
                run.forget(id)?;
                p.mountpoint_id = None;
                return Err(ProvisionError::Io(format!(
                    "cannot create {}: {e}",
                    mnt.display()
                )));
            }
            run.created(id, &mnt)?;
        }
        let options = mkfs::mount_options(cfg, jdev_s.as_deref());
        log.push(mkfs::mount(cfg.fs, &options, &data_s, &mnt).to_string());
        p.mounted = Some(Mounted::mount(
            self.exec.clone(),
            self.run.clone(),
            cfg.fs,
            options,
            &data,
            &mnt,
        )?);
        let mut outputs = Vec::new();
        for c in mkfs::inspect(cfg, &data_s, jdev_s.as_deref(), &mnt) {
            log.push(c.to_string());
            let out = exec.run(&c)?;
            p.dump
                .push_str(&format!("# {c}\n{}\n", out.stdout.trim_end()));
            outputs.push(out.stdout);
        }
        for l in loops.iter() {
            if let Some(dio) = loopdev::direct_io_of(&l.device) {
                p.dump.push_str(&format!(
                    "# {} -> {} (direct I/O {})\n",
                    l.device.display(),
                    l.image.display(),
                    if dio { "on" } else { "off" }
                ));
                if cfg.direct_io && !dio {
                    p.dump.push_str("# note: direct I/O was asked but the kernel kept buffered I/O for this image\n");
                }
            }
        }
        if self.run.is_some() {
            self.verify(cfg, &outputs, jdev.as_deref())
                .map_err(|m| ProvisionError::Verify(format!(
                    "{} on {}: {m}; the cell is failed rather than measured in a configuration that was not asked for",
                    cfg.fs, data_s
                )))?;
        }
        Ok(())
    }

    fn verify(&self, cfg: &FsConfig, out: &[String], jdev: Option<&Path>) -> Result<(), String> {
        // The journal device's (major, minor), which the superblocks record.
        let jnum = |j: Option<&Path>| {
            j.and_then(|j| std::fs::metadata(j).ok())
                .map(|m| (rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev())))
        };
        let first = out.first().map(String::as_str).unwrap_or("");
        let second = out.get(1).map(String::as_str);
        match cfg.fs {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => {
                inspect::verify_ext(cfg, first, second, jnum(jdev))
            }
            FsType::Xfs => inspect::verify_xfs(
                cfg,
                first,
                jdev.map(|j| j.to_string_lossy().into_owned()).as_deref(),
            ),
            FsType::Btrfs => inspect::verify_btrfs(cfg, first),
            FsType::Nilfs2 => inspect::verify_nilfs2(cfg, first),
            FsType::Jfs => inspect::verify_jfs(cfg, first, second, jnum(jdev)),
            FsType::Reiserfs => inspect::verify_reiserfs(cfg, first, jnum(jdev)),
        }
    }

    fn set_scheduler(
        &self,
        dev: &Path,
        sched: &str,
        log: &mut Vec<String>,
    ) -> Result<(), ProvisionError> {
        let name = dev
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Partitions share their disk's queue.
        let disk = if self.run.is_some() {
            std::fs::canonicalize(format!("/sys/class/block/{name}"))
                .ok()
                .filter(|p| p.join("partition").exists())
                .and_then(|p| {
                    p.parent()
                        .and_then(|d| d.file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .unwrap_or(name)
        } else {
            name
        };
        let path = PathBuf::from(format!("/sys/block/{disk}/queue/scheduler"));
        log.push(write_line(&path, sched));
        self.exec.write_file(&path, sched).map_err(|e| {
            let avail = std::fs::read_to_string(&path).unwrap_or_default();
            ProvisionError::Io(format!(
                "cannot set I/O scheduler '{sched}' on {}: {e}; available: {}",
                dev.display(),
                avail.trim()
            ))
        })?;
        if self.run.is_some() {
            let now = crate::sysinfo::scheduler_of_device(&disk).unwrap_or_default();
            if now != sched {
                return Err(ProvisionError::Verify(format!(
                    "I/O scheduler of {} is '{now}' after setting '{sched}'",
                    dev.display()
                )));
            }
        }
        Ok(())
    }

    /// Unmount the tmpfs and remove the run's directories (after every cell's teardown).
    pub fn finish(&self) -> Result<(), ProvisionError> {
        if let Some((id, _)) = self.tmpfs.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let c = CmdLine::new("umount").path(&self.ram_dir());
            self.exec.run(&c)?;
            if let Some(r) = &self.run {
                r.forget(id)?;
            }
        }
        let dirs = std::mem::take(&mut *self.dirs.lock().unwrap_or_else(|p| p.into_inner()));
        for id in dirs.into_iter().rev() {
            if let Some(r) = &self.run {
                r.remove(id)?;
            }
        }
        Ok(())
    }
}

impl Drop for Provisioner {
    /// Best effort after an early error; `finish` already ran on the normal path.
    fn drop(&mut self) {
        if self.run.is_some() {
            if let Err(e) = self.finish() {
                eprintln!("fslab: {e}; `fslab cleanup` will retry");
            }
        }
    }
}

#[cfg(test)]
#[path = "provisioner_tests.rs"]
mod tests;
