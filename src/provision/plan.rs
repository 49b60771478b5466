//! Planning a cell's provisioning for `fslab study plan`, without touching the machine: the
//! provisioner runs as for a real cell with its commands recorded instead of run, loop
//! devices named `$DATA` and `$JOURNAL` and the run directory `$RUN`, so the plan shows
//! exactly what a run executes. Block devices a study names get the read-only checks a plan
//! can make.

use super::exec::{CmdLine, Output, RealExec, RecordingExec};
use super::mount::Mounted;
use super::spec::{DeviceSpec, FsConfig, Journal};
use super::{guard, loopdev, mkfs, ProvisionError, Provisioner};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The run directory in a plan (made when the study runs).
pub const RUN: &str = "$RUN";
/// The data device in a plan's remount lines.
pub const DATA: &str = "$DATA";
/// The external journal device in a plan's remount lines.
pub const JOURNAL: &str = "$JOURNAL";

/// One cell's provisioning as a plan shows it.
pub struct PlannedCell {
    /// The commands provisioning runs, in order.
    pub commands: Vec<String>,
    /// The commands that take the cell down, in order.
    pub teardown: Vec<String>,
    /// The cell's mount as a run unmounts and mounts it again between repetitions (a cold
    /// cache), on a recording executor: nothing is mounted. Its device is `$DATA` and an
    /// external journal `$JOURNAL`, whatever the devices are (as `study plan` has always
    /// shown it).
    pub mount: Mounted,
}

/// Names the loop devices after their image's role (`c0-data.img` → `$DATA`); every other
/// command succeeds without output.
fn plan_responder(cmd: &CmdLine) -> Output {
    if cmd.program == "losetup" && cmd.args.iter().any(|a| a == "--find") {
        let role = cmd
            .args
            .last()
            .and_then(|img| img.rsplit('-').next())
            .map(|s| s.trim_end_matches(".img").to_ascii_uppercase())
            .unwrap_or_else(|| "DEV".into());
        return Output::ok(format!("${role}"));
    }
    Output::ok("")
}

impl Provisioner {
    /// A provisioner that only lists commands (for `fslab study plan`).
    pub fn planner(allow_format: Vec<PathBuf>, ram_total: u64) -> Provisioner {
        Provisioner::dry(
            Arc::new(RecordingExec::with(Box::new(plan_responder))),
            PathBuf::from(RUN),
            allow_format,
            ram_total,
        )
    }

    /// Cell `idx` as a plan shows it, with `$RUN`, `$DATA` and `$JOURNAL` standing for names
    /// only known at run time. Plan mode only.
    pub fn plan(&self, idx: usize, cfg: &FsConfig) -> Result<PlannedCell, ProvisionError> {
        let mut p = self.provision(idx, cfg)?;
        let commands = std::mem::take(&mut p.commands);
        let mut teardown = Vec::new();
        if let Some(m) = &p.mounted {
            teardown.push(m.umount_cmd().to_string());
        }
        for l in p.loops.iter().rev() {
            teardown.push(loopdev::detach_cmd(&l.device).to_string());
            teardown.push(format!("rm {}", l.image.display()));
        }
        let external = matches!(cfg.journal, Journal::External(_));
        let (_, mount) = Mounted::recorded(
            cfg.fs,
            mkfs::mount_options(cfg, external.then_some(JOURNAL)),
            DATA,
            &p.mountpoint,
        )?;
        // Tearing down in plan mode only records commands.
        drop(p);
        Ok(PlannedCell {
            commands,
            teardown,
            mount,
        })
    }
}

/// The block devices a configuration names by path (data, then an external journal): the
/// ones a plan checks with [`check_named_device`].
pub fn named_devices(cfg: &FsConfig) -> Vec<&Path> {
    cfg.devices()
        .filter_map(|d| match d {
            DeviceSpec::Path(p) => Some(p.as_path()),
            DeviceSpec::Loop(_) | DeviceSpec::Ram(_) => None,
        })
        .collect()
}

/// The safety checks of a named block device that a plan can make: all of them as root;
/// without root only those that need none (the busy and signature checks then run as root
/// before mkfs). `allow_format` is the study's list.
pub fn check_named_device(
    dev: &Path,
    allow_format: &[PathBuf],
    root: bool,
) -> Result<(), ProvisionError> {
    let allowed = allow_format.iter().any(|x| x == dev);
    let how = guard::Thoroughness {
        exclusive_open: root,
        signatures: root,
    };
    guard::check_formattable(dev, allowed, &RealExec, how)
}
