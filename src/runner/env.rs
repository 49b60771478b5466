//! The environment of a study, captured once when it starts: host, kernel, CPU, RAM, fslab
//! version, CPU frequency governor, the work directory's file system and the device under
//! it (model, scheduler, rotational), real data devices, and the versions of every tool the
//! study runs (`mkfs.ext4 -V`, `mkfs.xfs -V`, `mkfs.btrfs --version`, losetup, mount).
//! Traeger et al. found that papers omit exactly these; they are stored with the results.
//! The machine's own facts (CPU, virtualisation, what a device is) come from `sysinfo`.

use crate::plan::Study;
use crate::provision::exec::{CmdLine, Exec};
use crate::provision::{DeviceSpec, FsType, Journal};
use std::collections::BTreeSet;
use std::path::Path;

fn version_args(program: &str) -> &'static [&'static str] {
    match program {
        p if p.starts_with("mkfs.ext")
            || [
                "mke2fs",
                "mkfs.xfs",
                "mkfs.nilfs2",
                "mkreiserfs",
                "mkfs.jfs",
            ]
            .contains(&p) =>
        {
            &["-V"]
        }
        _ => &["--version"],
    }
}

/// First line of a tool's version output (some print it on stderr).
pub fn tool_version(exec: &dyn Exec, program: &str) -> String {
    let cmd = CmdLine::new(program).args(version_args(program));
    match exec.output(&cmd) {
        Ok(o) => {
            let text = if o.stdout.trim().is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            text.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("unknown")
                .to_string()
        }
        Err(e) => format!("not available ({e})"),
    }
}

/// Inside a guest: what it is, its kernel and memory, the host's kernel and memory, and the
/// calibration studies it belongs to (the figures are the guest's, on the host's devices).
fn guest(env: &mut Vec<(String, String)>) {
    let Ok(kind) = std::env::var(super::guest::FSLAB_GUEST) else {
        return;
    };
    env.push(("guest".into(), kind));
    env.push(("guest_kernel".into(), super::guest::kernel_release()));
    for (key, var) in [
        ("guest_mem", super::guest::FSLAB_GUEST_MEM),
        ("host_kernel", super::guest::FSLAB_GUEST_HOST_KERNEL),
        ("host_ram_bytes", super::guest::FSLAB_GUEST_HOST_RAM),
    ] {
        if let Ok(v) = std::env::var(var) {
            env.push((key.into(), v));
        }
    }
    if let Some((host, guest)) = std::env::var(super::guest::FSLAB_GUEST_CALIBRATION)
        .ok()
        .as_deref()
        .and_then(|v| v.split_once(';'))
    {
        env.push(("guest_calibration_host".into(), host.to_string()));
        env.push(("guest_calibration_guest".into(), guest.to_string()));
    }
}

/// Capture the environment of a study.
pub fn capture(exec: &dyn Exec, workdir: &Path, study: &Study) -> Vec<(String, String)> {
    let mut env = crate::sysinfo::environment(None);
    let governor = Path::new("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    if let Some(g) = crate::sysinfo::read_trimmed(governor) {
        env.push(("cpu_governor".into(), g));
    }
    env.push(("workdir".into(), workdir.display().to_string()));
    guest(&mut env);
    // The work directory may not exist yet: its nearest existing ancestor is on the same
    // file system.
    let existing = std::iter::successors(Some(workdir), |p| p.parent()).find(|p| p.exists());
    if let Some(m) = existing.and_then(crate::sysinfo::mount_of) {
        env.push(("workdir_fs".into(), m.fs_type.clone()));
        env.push(("workdir_mount_options".into(), m.options.clone()));
        env.push(("workdir_device".into(), m.source.clone()));
        for (k, v) in crate::sysinfo::device_facts(&m.source) {
            env.push((format!("workdir_device_{k}"), v));
        }
    }
    let r = &study.repetitions;
    env.push(("cache_policy".into(), r.cache.as_str().into()));
    env.push(("order".into(), r.order.as_str().into()));
    let mut paths = BTreeSet::new();
    let mut programs: BTreeSet<&str> = ["losetup", "mount"].into_iter().collect();
    let mut types: BTreeSet<FsType> = BTreeSet::new();
    for c in &study.cells {
        types.insert(c.fs.fs);
        if let DeviceSpec::Path(p) = &c.fs.data {
            paths.insert(p.display().to_string());
        }
        if let Journal::External(DeviceSpec::Path(p)) = &c.fs.journal {
            paths.insert(p.display().to_string());
        }
    }
    for t in &types {
        programs.insert(t.mkfs_program());
    }
    if study
        .workloads
        .iter()
        .any(|w| w.spec.workload_kind() == crate::workload::WorkloadKind::Fio)
    {
        programs.insert("fio");
    }
    for p in programs {
        env.push((format!("tool_{p}"), tool_version(exec, p)));
    }
    for p in paths {
        for (k, v) in crate::sysinfo::device_facts(&p) {
            env.push((format!("device {p} {k}"), v));
        }
    }
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::exec::{Output, RecordingExec};

    #[test]
    fn versions_come_from_stdout_or_stderr() {
        let ex = RecordingExec::with(Box::new(|c| {
            if c.program == "mkfs.ext4" {
                Output {
                    status: 0,
                    stdout: String::new(),
                    stderr: "mke2fs 1.47.0 (5-Feb-2023)\n\tUsing EXT2FS Library version 1.47.0\n"
                        .into(),
                }
            } else {
                Output::ok("mkfs.xfs version 6.1.0\n")
            }
        }));
        assert_eq!(tool_version(&ex, "mkfs.ext4"), "mke2fs 1.47.0 (5-Feb-2023)");
        assert_eq!(tool_version(&ex, "mkfs.xfs"), "mkfs.xfs version 6.1.0");
        assert_eq!(ex.lines(), vec!["mkfs.ext4 -V", "mkfs.xfs -V"]);
    }

    #[test]
    fn study_environment_names_tools_and_policy() {
        let s = crate::plan::Study::parse(
            "name = \"e\"\n[device]\ndata = \"loop:1G\"\n[filesystem]\ntype = \"xfs\"\n[[workload]]\nkind = \"fdtree\"\nlevels = 1\n",
        )
        .unwrap();
        let ex = RecordingExec::with(Box::new(|_| Output::ok("v1\n")));
        let env = capture(&ex, Path::new("/tmp"), &s);
        let get = |k: &str| env.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
        assert_eq!(get("tool_mkfs.xfs").as_deref(), Some("v1"));
        assert_eq!(get("cache_policy").as_deref(), Some("cold"));
        assert!(get("kernel").is_some());
        assert!(get("workdir_fs").is_some());
        // This lab is a virtual machine: whatever it is, the study says what it found.
        assert!(get("virtualization").is_some_and(|v| !v.is_empty()));
        assert!(get("workdir_mount_options").is_some_and(|v| !v.is_empty()));
        assert!(get("workdir_device_model").is_some_and(|m| !m.starts_with("0x")));
        assert!(get("workdir_device_kind").is_some());
    }
}
