//! mkfs and its relatives run in the cage with the cell's own devices only (issue 32): extra
//! mkfs arguments in a study file cannot reach a device the checks never looked at, nor write
//! a file outside the work directory. The victims are a loop device holding ext4 and a
//! directory, both made by this test.

mod common;
mod testdev;

use common::{fslab, require_root};
use testdev::{sh, TestLoop};

fn study(data_dir: &std::path::Path, victim_dev: &str, victim_dir: &str) -> std::path::PathBuf {
    let text = format!(
        r#"
name = "caged-tools"
[repetitions]
min = 1
max = 1

[device]
data = "loop:320M"

[[factor]]
name = "cell"
values = [
  {{ label = "btrfs-extra-device", fs = "btrfs", mkfs = ["{victim_dev}"] }},
  {{ label = "xfs-foreign-log", fs = "xfs", mkfs = ["-l", "logdev={victim_dev}"] }},
  {{ label = "xfs-log-file-outside", fs = "xfs", mkfs = ["-l", "file,name={victim_dir}/planted-log.img,size=9m"] }},
  {{ label = "ext4-plain", fs = "ext4" }},
]

[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#
    );
    let p = data_dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn privileged_extra_mkfs_arguments_reach_no_other_device_and_write_nothing_outside() {
    if !require_root(
        "privileged_extra_mkfs_arguments_reach_no_other_device_and_write_nothing_outside",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // The victims: a loop device holding ext4 with a file on it, and a directory.
    let victim = TestLoop::new(t.path(), "victim.img", 300, false);
    let vdev = victim.dev.to_str().unwrap().to_string();
    sh("mkfs.ext4", &["-q", "-F", "-L", "victim", &vdev]);
    let uuid_before = sh("blkid", &["-p", "-s", "UUID", "-o", "value", &vdev]);
    let victim_dir = t.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("keep"), b"precious").unwrap();

    let file = study(t.path(), &vdev, victim_dir.to_str().unwrap());
    let out = fslab(t.path())
        .args(["study", "run", "-q"])
        .arg(&file)
        .arg("--workdir")
        .arg(t.path().join("work"))
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The three cells with arguments that reach outside fail; the plain one runs.
    assert_eq!(out.status.code(), Some(1), "{err}\n{stdout}");
    assert!(err.contains("3 of 4 cells failed"), "{err}\n{stdout}");
    for cell in [
        "cell=btrfs-extra-device",
        "cell=xfs-foreign-log",
        "cell=xfs-log-file-outside",
    ] {
        assert!(
            stdout.contains(&format!("FAILED cell {cell}")),
            "{cell}: {stdout}"
        );
    }
    // The victim device still holds the same ext4, and nothing was written beside the file.
    let kind = sh("blkid", &["-p", "-s", "TYPE", "-o", "value", &vdev]);
    assert_eq!(kind.trim(), "ext4", "the victim device was formatted");
    assert_eq!(
        sh("blkid", &["-p", "-s", "UUID", "-o", "value", &vdev]),
        uuid_before
    );
    let names: Vec<_> = std::fs::read_dir(&victim_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("keep")],
        "a file appeared outside"
    );
    drop(victim);
}
