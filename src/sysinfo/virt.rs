//! Is this machine virtual? A benchmark on a virtual machine (or in a container) must say so:
//! its disks are the host's files, its CPUs are shared.
//!
//! `systemd-detect-virt --vm` and `--container` answer when installed (they know every
//! hypervisor and container manager, through CPUID, DMI, device tree and more). Without it:
//! `/sys/hypervisor/type` (Xen), the DMI strings of `/sys/class/dmi/id/` matched as
//! systemd does, then the `hypervisor` flag of `/proc/cpuinfo` (`vm-other`: some hypervisor,
//! which is not named). Words are systemd's (`none`, `kvm`, `qemu`, `vmware`, `microsoft`,
//! `oracle`, `xen`, `docker`, `podman`, `lxc`, …), so both paths store the same values.
//! These are one-word files: read with `std::fs`, no parser needed. `systemd-detect-virt`
//! runs through the [`Spawn`] seam like every process fslab starts, so a test can answer for
//! it ([`crate::process::RecordingSpawn`]).

use super::read_trimmed;
use crate::process::{RealSpawn, Spawn};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The virtualisation of this machine, with how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Virtualization {
    /// The hypervisor, in systemd's words: `none`, `kvm`, `qemu`, `vmware`, `vm-other`, ….
    pub vm: String,
    /// How `vm` was found (`systemd-detect-virt --vm`, `DMI sys_vendor`, …).
    pub vm_source: String,
    /// The container manager, in systemd's words: `none`, `docker`, `podman`, `lxc`, ….
    pub container: String,
}

/// DMI strings of virtual machines (systemd's `dmi_vendor_table`), matched at the start of
/// `product_name`, `sys_vendor`, `board_vendor`, `bios_vendor` and `product_version`.
const DMI_VENDORS: [(&str, &str); 16] = [
    ("KVM", "kvm"),
    ("OpenStack", "kvm"),
    ("KubeVirt", "kvm"),
    ("Amazon EC2", "amazon"),
    ("QEMU", "qemu"),
    ("VMware", "vmware"),
    ("VMW", "vmware"),
    ("innotek GmbH", "oracle"),
    ("VirtualBox", "oracle"),
    ("Xen", "xen"),
    ("Bochs", "bochs"),
    ("Parallels", "parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "microsoft"),
    ("Apple Virtualization", "apple"),
    ("Google Compute Engine", "google"),
];

/// The DMI files looked at, in systemd's order.
pub const DMI_FILES: [&str; 5] = [
    "product_name",
    "sys_vendor",
    "board_vendor",
    "bios_vendor",
    "product_version",
];

/// What the fallback looks at when `systemd-detect-virt` is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmClues {
    /// `/sys/hypervisor/type` (`xen`).
    pub hypervisor_type: Option<String>,
    /// `/proc/xen/capabilities` (`control_d` on the Xen host itself, dom0).
    pub xen_capabilities: Option<String>,
    /// `(file, value)` of the DMI files that exist.
    pub dmi: Vec<(String, String)>,
    /// The `hypervisor` flag of `/proc/cpuinfo`.
    pub cpu_hypervisor_flag: bool,
}

/// The hypervisor named by the clues, and which clue named it.
pub fn vm_from_clues(c: &VmClues) -> (String, String) {
    if let Some(t) = c.hypervisor_type.as_deref().filter(|t| !t.is_empty()) {
        let dom0 = t == "xen"
            && c.xen_capabilities
                .as_deref()
                .is_some_and(|cap| cap.contains("control_d"));
        if !dom0 {
            return (t.to_string(), "/sys/hypervisor/type".into());
        }
    }
    for (file, value) in &c.dmi {
        // Hyper-V guests say `Microsoft Corporation` / `Virtual Machine`.
        if file == "product_name" && value == "Virtual Machine" {
            let ms = c
                .dmi
                .iter()
                .any(|(f, v)| f == "sys_vendor" && v == "Microsoft Corporation");
            if ms {
                return ("microsoft".into(), "DMI product_name".into());
            }
        }
        if let Some((_, word)) = DMI_VENDORS.iter().find(|(p, _)| value.starts_with(p)) {
            // EC2 bare-metal instances carry the vendor string but no hypervisor.
            if *word == "amazon" && !c.cpu_hypervisor_flag {
                continue;
            }
            return (word.to_string(), format!("DMI {file}"));
        }
    }
    if c.cpu_hypervisor_flag {
        return ("vm-other".into(), "/proc/cpuinfo hypervisor flag".into());
    }
    (
        "none".into(),
        "no hypervisor in /sys/hypervisor, DMI or /proc/cpuinfo".into(),
    )
}

/// The container manager from the files container managers leave (systemd's own
/// `/run/systemd/container`, podman's `/run/.containerenv`, docker's `/.dockerenv`) under
/// `root`.
pub fn container_from_files(root: &Path) -> String {
    read_trimmed(&root.join("run/systemd/container")).unwrap_or_else(|| {
        let files = [("run/.containerenv", "podman"), (".dockerenv", "docker")];
        let found = files.into_iter().find(|(f, _)| root.join(f).exists());
        found.map_or("none", |(_, c)| c).into()
    })
}

/// `systemd-detect-virt ARG`'s answer: one word on stdout (exit status 1 with `none` is an
/// answer too); `None` when it is not installed or says nothing usable.
fn detect_virt(spawn: &dyn Spawn, arg: &str) -> Option<String> {
    let mut cmd = Command::new("systemd-detect-virt");
    cmd.arg(arg);
    let out = spawn.run(cmd, &[]).ok()?;
    let word = out.stdout.trim().to_string();
    let usable = !word.is_empty()
        && !word.contains(char::is_whitespace)
        && (out.status == 0 || word == "none");
    usable.then_some(word)
}

/// Read the fallback's clues from this machine.
pub fn clues(cpu_hypervisor_flag: bool) -> VmClues {
    let dmi = DMI_FILES.iter().filter_map(|f| {
        read_trimmed(&Path::new("/sys/class/dmi/id").join(f)).map(|v| (f.to_string(), v))
    });
    VmClues {
        hypervisor_type: read_trimmed(Path::new("/sys/hypervisor/type")),
        xen_capabilities: read_trimmed(Path::new("/proc/xen/capabilities")),
        dmi: dmi.collect(),
        cpu_hypervisor_flag,
    }
}

/// The virtualisation of this machine (found once per process: it does not change).
pub fn virtualization() -> Virtualization {
    static FOUND: OnceLock<Virtualization> = OnceLock::new();
    FOUND.get_or_init(|| detect(&RealSpawn)).clone()
}

/// Find the virtualisation: `systemd-detect-virt`, started through `spawn`, else the
/// fallback's clues and files of this machine.
pub fn detect(spawn: &dyn Spawn) -> Virtualization {
    let (vm, vm_source) = match detect_virt(spawn, "--vm") {
        Some(vm) => (vm, "systemd-detect-virt --vm".to_string()),
        None => {
            let flag = super::cpu::cpu_facts().is_some_and(|c| c.hypervisor_flag);
            vm_from_clues(&clues(flag))
        }
    };
    let container =
        detect_virt(spawn, "--container").unwrap_or_else(|| container_from_files(Path::new("/")));
    Virtualization {
        vm,
        vm_source,
        container,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dmi(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect()
    }

    /// A machine known by its DMI product name and vendor.
    fn machine(product: &str, vendor: &str) -> VmClues {
        VmClues {
            dmi: dmi(&[("product_name", product), ("sys_vendor", vendor)]),
            ..Default::default()
        }
    }

    /// What the clues name and how, as `vm (source)`.
    fn found(c: &VmClues) -> String {
        let (vm, source) = vm_from_clues(c);
        format!("{vm} ({source})")
    }

    fn xen() -> VmClues {
        VmClues {
            hypervisor_type: Some("xen".into()),
            ..Default::default()
        }
    }

    #[test]
    fn clues_name_the_hypervisor_in_systemds_words() {
        let qemu = VmClues {
            // A KVM guest of libvirt/QEMU: /sys/class/dmi/id as the kernel gives it.
            dmi: dmi(&[
                ("product_name", "Standard PC (Q35 + ICH9, 2009)"),
                ("sys_vendor", "QEMU"),
                ("bios_vendor", "SeaBIOS"),
                ("product_version", "pc-q35-7.2"),
            ]),
            cpu_hypervisor_flag: true,
            ..Default::default()
        };
        assert_eq!(found(&qemu), "qemu (DMI sys_vendor)");
        let vmware = machine("VMware7,1", "VMware, Inc.");
        assert_eq!(vm_from_clues(&vmware).0, "vmware");
        let hyperv = machine("Virtual Machine", "Microsoft Corporation");
        assert_eq!(vm_from_clues(&hyperv).0, "microsoft");
        assert_eq!(found(&xen()), "xen (/sys/hypervisor/type)");
    }

    #[test]
    fn bare_metal_and_unnamed_hypervisors() {
        // A Xen host (dom0) is not a guest; an EC2 metal instance neither.
        let dom0 = VmClues {
            xen_capabilities: Some("control_d".into()),
            ..xen()
        };
        let ec2_metal = VmClues {
            dmi: dmi(&[("sys_vendor", "Amazon EC2")]),
            ..Default::default()
        };
        for clues in [machine("PowerEdge R650", "Dell Inc."), dom0, ec2_metal] {
            assert_eq!(vm_from_clues(&clues).0, "none", "{clues:?}");
        }
        // Only the CPU flag: some hypervisor, not named (this lab's KVM machine has no DMI).
        let flag = VmClues {
            cpu_hypervisor_flag: true,
            ..Default::default()
        };
        assert_eq!(found(&flag), "vm-other (/proc/cpuinfo hypervisor flag)");
    }

    #[test]
    fn containers_are_known_by_the_files_they_leave() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(container_from_files(root.path()), "none");
        std::fs::write(root.path().join(".dockerenv"), "").unwrap();
        assert_eq!(container_from_files(root.path()), "docker");
        std::fs::create_dir_all(root.path().join("run/systemd")).unwrap();
        std::fs::write(root.path().join("run/systemd/container"), "lxc\n").unwrap();
        assert_eq!(container_from_files(root.path()), "lxc");
    }

    #[test]
    fn systemd_detect_virt_is_asked_through_the_seam() {
        use crate::process::{Output, RecordingSpawn};
        let spawn = RecordingSpawn::with(Box::new(|line| match line {
            "systemd-detect-virt --vm" => Output::ok("kvm\n"),
            // `none` comes with exit status 1, and is an answer.
            _ => Output {
                status: 1,
                ..Output::ok("none\n")
            },
        }));
        let v = detect(&spawn);
        assert_eq!(
            spawn.lines(),
            [
                "systemd-detect-virt --vm",
                "systemd-detect-virt --container"
            ]
        );
        assert_eq!(
            (v.vm.as_str(), v.vm_source.as_str(), v.container.as_str()),
            ("kvm", "systemd-detect-virt --vm", "none")
        );
    }

    #[test]
    fn without_a_usable_answer_the_clues_decide() {
        use crate::process::{Output, RecordingSpawn};
        // Not installed (the shell's 127), or an answer that is not one word, or a failure
        // that is not `none`: none of them is taken.
        for answer in [
            Output {
                status: 127,
                stderr: "not found".into(),
                ..Output::ok("")
            },
            Output::ok("two words\n"),
            Output {
                status: 1,
                ..Output::ok("kvm\n")
            },
        ] {
            let spawn = RecordingSpawn::with(Box::new(move |_| answer.clone()));
            let v = detect(&spawn);
            assert_eq!(spawn.lines().len(), 2, "both were asked");
            assert_ne!(v.vm_source, "systemd-detect-virt --vm", "{v:?}");
            assert!(!v.vm.is_empty() && !v.container.is_empty(), "{v:?}");
        }
    }

    #[test]
    fn this_machine_says_what_it_is() {
        let v = virtualization();
        for word in [&v.vm, &v.vm_source, &v.container] {
            assert!(!word.is_empty() && !word.contains('\n'), "{v:?}");
        }
    }
}
