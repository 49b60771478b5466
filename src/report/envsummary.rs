//! The environment and the configurations in a few lines, for the compact reports: the
//! machine, its storage, the tools, the protocol, a guest — each one line of the values that
//! tell runs apart — and of each configuration's provisioning the commands that made its file
//! system (`mkfs`, `mount`, …). Everything else is counted and shown with `--all`.

use super::model::{entry, CellInfo, Environment};
use super::view::Detail;
use crate::units::fmt_bytes;

/// Tools (`tool_*` entries) the compact summary leaves out: every study uses them.
const PLUMBING: [&str; 8] = [
    "losetup", "mount", "umount", "blkid", "wipefs", "truncate", "dumpe2fs", "xfs_info",
];

/// One line of the summary: a label and its values joined with ` · `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `machine`, `storage`, `tools`, …
    pub label: &'static str,
    /// The values.
    pub text: String,
}

/// The summary of an environment and how many of its entries it leaves out.
pub fn summary(e: &Environment) -> (Vec<Line>, usize) {
    let get = |k: &str| entry(&e.entries, k);
    let mut used: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    let mut add = |label: &'static str, keys: Vec<String>, used: &mut Vec<String>| {
        let mut values = Vec::new();
        for k in keys {
            let Some(v) = get(&k).filter(|v| !v.is_empty()) else {
                continue;
            };
            let text = match (v.parse::<u64>(), k.as_str()) {
                (Ok(b), _) if k.ends_with("ram_bytes") => format!("{} RAM", fmt_bytes(b)),
                (Ok(b), _) if k.ends_with("_bytes") => fmt_bytes(b),
                (_, "cache_policy") => format!("cache {v}"),
                (_, "order") => format!("order {v}"),
                (_, "fslab_version") => format!("fslab {v}"),
                _ => v.to_string(),
            };
            values.push(text);
            used.push(k);
        }
        if !values.is_empty() {
            lines.push(Line {
                label,
                text: values.join(" · "),
            });
        }
    };
    let owned = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    add(
        "machine",
        owned(&[
            "host",
            "kernel",
            "cpu",
            "ram_bytes",
            "virtualization",
            "container",
        ]),
        &mut used,
    );
    for prefix in ["workdir", "target"] {
        let keys = [
            "",
            "_device",
            "_device_model",
            "_device_scheduler",
            "_scheduler",
            "_fs",
        ]
        .iter()
        .map(|s| format!("{prefix}{s}"))
        .collect();
        add(
            if prefix == "workdir" {
                "work dir"
            } else {
                "target"
            },
            keys,
            &mut used,
        );
    }
    // The tools that measure or make the file systems; the plumbing (loop devices, mount,
    // signature checks) is counted with the rest.
    let mut tools: Vec<String> = e
        .entries
        .iter()
        .filter(|(k, _)| k.starts_with("tool_") && !PLUMBING.contains(&&k[5..]))
        .map(|(k, _)| k.clone())
        .collect();
    tools.sort();
    add("tools", tools, &mut used);
    add(
        "guest",
        owned(&[
            "guest",
            "guest_kernel",
            "guest_mem",
            "host_kernel",
            "host_ram_bytes",
        ]),
        &mut used,
    );
    add(
        "protocol",
        owned(&["cache_policy", "order", "fslab_version"]),
        &mut used,
    );
    let left = e.entries.len() - used.len();
    (lines, left)
}

/// The provisioning commands of configuration `c` shown at `detail`: every one with
/// `--all`, else the key ones ([`is_key_command`]).
pub fn shown_commands(c: &CellInfo, detail: Detail) -> Vec<&String> {
    c.commands
        .iter()
        .filter(|cmd| detail == Detail::All || is_key_command(cmd))
        .collect()
}

/// Whether a provisioning command is one that makes the configuration what it is (makes or
/// tunes the file system, mounts it, sets the scheduler), rather than plumbing (images, loop
/// devices, signature checks, directories, dumps).
pub fn is_key_command(cmd: &str) -> bool {
    let program = cmd
        .split_whitespace()
        .next()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("");
    program.starts_with("mkfs")
        || program.starts_with("mke2fs")
        || [
            "mount",
            "tune2fs",
            "xfs_admin",
            "btrfstune",
            "mkswap",
            "jfs_tune",
        ]
        .contains(&program)
        || cmd.contains("/queue/scheduler")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_that_tell_runs_apart_in_a_few_lines() {
        let e = Environment::of(&[
            ("cache_policy", "cold"),
            ("cpu", "Xeon (2 CPUs)"),
            ("cpu_model", "Xeon"),
            ("host", "vm"),
            ("kernel", "Linux 6.1"),
            ("ram_bytes", "25325268992"),
            ("tool_fio", "fio-3.33"),
            ("tool_mkfs.ext4", "mke2fs 1.47.0"),
            ("tool_mount", "mount from util-linux 2.38.1"),
            ("workdir", "/var/tmp/fslab"),
            ("workdir_device", "/dev/vda"),
            ("workdir_device_model", "virtio block device"),
            ("workdir_device_scheduler", "mq-deadline"),
            ("workdir_device_vendor_id", "0x1af4"),
            ("workdir_fs", "ext4"),
        ]);
        let (lines, left) = summary(&e);
        let text: Vec<(&str, &str)> = lines.iter().map(|l| (l.label, l.text.as_str())).collect();
        assert_eq!(
            text,
            [
                ("machine", "vm · Linux 6.1 · Xeon (2 CPUs) · 23.6 GiB RAM"),
                (
                    "work dir",
                    "/var/tmp/fslab · /dev/vda · virtio block device · mq-deadline · ext4"
                ),
                ("tools", "fio-3.33 · mke2fs 1.47.0"),
                ("protocol", "cache cold"),
            ]
        );
        // cpu_model, the vendor id and mount (plumbing) are left out, and counted.
        assert_eq!(left, 3);
        // An engine command's run describes its target instead.
        let (lines, left) = summary(&Environment::of(&[
            ("target", "/mnt/x"),
            ("target_fs", "xfs"),
        ]));
        assert_eq!(lines[0].label, "target");
        assert_eq!(lines[0].text, "/mnt/x · xfs");
        assert_eq!(left, 0);
    }

    #[test]
    fn key_commands_make_the_file_system() {
        for c in [
            "mkfs.ext4 -F -q -J size=16 /dev/loop4",
            "mount -t ext4 -o noatime /dev/loop4 /mnt/c0",
            "tune2fs -O ^has_journal /dev/loop4",
            "/sbin/mkfs.xfs -f /dev/loop1",
            "sh -c echo none > /sys/block/loop4/queue/scheduler",
        ] {
            assert!(is_key_command(c), "{c}");
        }
        for c in [
            "truncate -s 1073741824 /tmp/c0-data.img",
            "losetup --find --show /tmp/c0-data.img",
            "blkid -p -o export /dev/loop4",
            "wipefs -n /dev/loop4",
            "mkdir /tmp/mnt/c0",
            "dumpe2fs -h /dev/loop4",
        ] {
            assert!(!is_key_command(c), "{c}");
        }
    }
}
