//! The environment stored with a run on a real device: an ext4 partition of a loop device
//! over an image in the test's directory. fslab walks partition → loop disk → backing file →
//! the device under it, names that device's model as the kernel gives it (never a raw id),
//! stores the effective mount options once each, and says whether the machine is virtual.

mod common;
mod testdev;

use common::{fslab, require_root};
use std::collections::BTreeMap;
use testdev::{sh, TestLoop, TestMount};

#[test]
fn privileged_a_run_on_a_loop_partition_names_the_device_under_it() {
    if !require_root("privileged_a_run_on_a_loop_partition_names_the_device_under_it") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(t.path(), "env.img", 64, true);
    let part = testdev::sfdisk(lo.path(), "label: dos\n,32M\n", 1)
        .remove(0)
        .to_str()
        .unwrap()
        .to_string();
    sh("mkfs.ext4", &["-q", "-F", &part]);
    let mnt = t.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    sh("mount", &["-o", "noatime,rw", &part, mnt.to_str().unwrap()]);
    let _m = TestMount(mnt.clone());

    let out = fslab(t.path())
        .args([
            "fdtree", "-q", "-d", "1", "-l", "1", "-f", "2", "-s", "1", "-o",
        ])
        .arg(&mnt)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = fslab(t.path())
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let env: BTreeMap<String, String> = doc["environment"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            // Sizes, counts and flags are JSON numbers, other values strings.
            let v = match &kv[1] {
                serde_json::Value::Number(n) => {
                    let k = kv[0].as_str().unwrap();
                    assert!(
                        k.ends_with("_bytes")
                            || k.ends_with("_count")
                            || k.ends_with("_rotational"),
                        "{k} is a number"
                    );
                    n.to_string()
                }
                other => other.as_str().unwrap().to_string(),
            };
            (kv[0].as_str().unwrap().to_string(), v)
        })
        .collect();
    let get = |k: &str| {
        env.get(k)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {k} in {env:?}"))
    };
    let disk = lo.dev.file_name().unwrap().to_str().unwrap();
    assert_eq!(get("target_device"), part);
    assert_eq!(get("target_device_kind"), "partition");
    assert_eq!(get("target_device_disk"), disk);
    assert_eq!(
        get("target_device_backing_file"),
        std::fs::canonicalize(&lo.image).unwrap().to_str().unwrap()
    );
    // The model is that of the device holding the image, as fslab names it for the test's
    // directory (on this lab's KVM machine: "virtio block device", not 0x1af4).
    let holder = fslab::sysinfo::mount_of(t.path()).unwrap();
    let under: BTreeMap<String, String> = fslab::sysinfo::device_facts(&holder.source)
        .into_iter()
        .collect();
    assert_eq!(get("target_device_model"), under["model"]);
    assert!(!get("target_device_model").starts_with("0x"));
    if under["kind"] != "not a block device" {
        assert!(get("target_device_backing_device").starts_with("/dev/"));
    }
    let opts: Vec<&str> = get("target_mount_options").split(',').collect();
    assert_eq!(opts.iter().filter(|o| **o == "rw").count(), 1, "{opts:?}");
    assert!(opts.contains(&"noatime"), "{opts:?}");
    assert!(!get("target_scheduler").is_empty());
    assert!(!get("virtualization").is_empty());
    assert!(!get("cpu_model").is_empty());
}
