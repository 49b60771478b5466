//! `study run` refuses before provisioning what `study plan` already knows will fail (issue
//! 24): a file system whose mkfs tool is missing (hidden through `FSLAB_PROGRAM_PATH`, the
//! only directories fslab then takes programs from) and a work directory too small for what
//! the study writes (a 16 MiB tmpfs the test mounts). Exit 2, the plan's one line, nothing
//! provisioned and nothing stored: no results database, nothing in the work directory.
//! Needs root (`study run` refuses without it before these checks).

mod common;

use common::{fslab, require_root};
use std::path::{Path, PathBuf};

fn study(fs: &str) -> String {
    format!(
        r#"
name = "refused"
[repetitions]
min = 1
[device]
data = "loop:512M"
[filesystem]
type = "{fs}"
[[workload]]
kind = "fdtree"
dirs = 10
files = 4
size_blocks = 1
levels = 4
"#
    )
}

/// `fslab study ARGS FILE --workdir WORK`: exit code, stdout, stderr.
fn study_cmd(
    t: &Path,
    verb: &str,
    file: &Path,
    work: &Path,
    env: Option<&Path>,
) -> (Option<i32>, String, String) {
    let mut c = fslab(t);
    c.args(["study", verb])
        .arg(file)
        .arg("--workdir")
        .arg(work)
        .timeout(std::time::Duration::from_secs(60));
    if let Some(dir) = env {
        c.env("FSLAB_PROGRAM_PATH", dir);
    }
    let out = c.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn which(p: &str) -> PathBuf {
    [
        "/usr/local/sbin",
        "/usr/sbin",
        "/sbin",
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
    ]
    .iter()
    .map(|d| Path::new(d).join(p))
    .find(|x| x.is_file())
    .unwrap_or_else(|| panic!("{p} is not installed; run scripts/install-deps"))
}

#[test]
fn privileged_run_refuses_a_missing_mkfs_tool_and_stores_nothing() {
    if !require_root("privileged_run_refuses_a_missing_mkfs_tool_and_stores_nothing") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // Every program a btrfs study needs but mkfs.btrfs.
    let bin = t.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for p in [
        "losetup", "mount", "umount", "truncate", "blkid", "wipefs", "btrfs",
    ] {
        std::os::unix::fs::symlink(which(p), bin.join(p)).unwrap();
    }
    let file = t.path().join("s.toml");
    std::fs::write(&file, study("btrfs")).unwrap();
    let work = t.path().join("work");
    let (code, _, err) = study_cmd(t.path(), "run", &file, &work, Some(&bin));
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("mkfs.btrfs is missing") && err.contains("btrfs-progs"),
        "{err}"
    );
    assert!(!t.path().join("results.db").exists(), "nothing stored");
    assert!(!work.exists(), "nothing provisioned: {work:?}");
    // The plan says the same line.
    let (code, _, plan_err) = study_cmd(t.path(), "plan", &file, &work, Some(&bin));
    assert_eq!(code, Some(2), "{plan_err}");
    assert_eq!(plan_err, err);
    // With the tool there again, the same study passes the plan: the refusal was the tool.
    std::os::unix::fs::symlink(which("mkfs.btrfs"), bin.join("mkfs.btrfs")).unwrap();
    let (code, out, e) = study_cmd(t.path(), "plan", &file, &work, Some(&bin));
    if common_kernel_has("btrfs") {
        assert_eq!(code, Some(0), "{e}");
        assert!(out.contains("mkfs.btrfs"), "{out}");
    }
}

fn common_kernel_has(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .map(|t| t.lines().any(|l| l.split_whitespace().last() == Some(fs)))
        .unwrap_or(false)
}

/// A tmpfs the test mounts, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn privileged_run_refuses_a_work_directory_too_small_and_stores_nothing() {
    if !require_root("privileged_run_refuses_a_work_directory_too_small_and_stores_nothing") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let small = t.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let st = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "fslab-test-small"])
        .arg(&small)
        .status()
        .unwrap();
    assert!(st.success(), "mount tmpfs");
    let _mounted = Tmpfs(small.clone());
    let file = t.path().join("s.toml");
    std::fs::write(&file, study("ext4")).unwrap();
    let work = small.join("work");
    let (code, _, err) = study_cmd(t.path(), "run", &file, &work, None);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("more than the") && err.contains("choose another --workdir"),
        "{err}"
    );
    assert!(!t.path().join("results.db").exists(), "nothing stored");
    assert!(!work.exists(), "nothing provisioned: {work:?}");
    assert_eq!(std::fs::read_dir(&small).unwrap().count(), 0);
    // The plan warns with the same line.
    let (code, out, e) = study_cmd(t.path(), "plan", &file, &work, None);
    assert_eq!(code, Some(0), "{e}");
    let line = err.trim_end().trim_start_matches("fslab: ");
    assert!(out.contains(&format!("warning: {line}")), "{out}\n{line}");
}

/// A study of two 1 GiB ext4 images and a small tree in a 48 MiB work directory: their data
/// and journals alone are nothing (sparse images), but mkfs writes each image's inode tables
/// and journal in full, about 58 MiB. Refused before anything is made or stored (issue 32;
/// before, mkfs failed with "No space left on device" after a failed study was stored).
#[test]
fn privileged_run_counts_what_mkfs_writes_and_refuses_what_cannot_fit() {
    if !require_root("privileged_run_counts_what_mkfs_writes_and_refuses_what_cannot_fit") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let small = t.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let st = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=48m", "fslab-test-small"])
        .arg(&small)
        .status()
        .unwrap();
    assert!(st.success(), "mount tmpfs");
    let _mounted = Tmpfs(small.clone());
    let file = t.path().join("s.toml");
    std::fs::write(
        &file,
        r#"
name = "two-images"
[repetitions]
min = 1
[device]
data = "loop:1G"
[[factor]]
name = "fs"
values = [ { label = "a", fs = "ext4" }, { label = "b", fs = "ext4", mount = ["noatime"] } ]
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#,
    )
    .unwrap();
    let work = small.join("work");
    let (code, _, err) = study_cmd(t.path(), "run", &file, &work, None);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("mkfs's own writes"), "{err}");
    assert!(!t.path().join("results.db").exists(), "nothing stored");
    assert!(!work.exists(), "nothing provisioned: {work:?}");
}

/// `ram:` devices larger than the machine can spare are refused before anything is made
/// (issue 32: `data = "ram:100G"` was mounted on a 23 GiB machine).
#[test]
fn privileged_run_refuses_ram_devices_the_machine_cannot_spare() {
    if !require_root("privileged_run_refuses_ram_devices_the_machine_cannot_spare") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("s.toml");
    // Four times the machine's memory: more than any machine can spare.
    let ram_gib = 4 * (fslab::sysinfo::total_ram() >> 30) + 4;
    std::fs::write(
        &file,
        format!(
            r#"
name = "too-much-ram"
[repetitions]
min = 1
[device]
data = "ram:{ram_gib}G"
[filesystem]
type = "ext4"
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#
        ),
    )
    .unwrap();
    let work = t.path().join("work");
    let (code, _, err) = study_cmd(t.path(), "run", &file, &work, None);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("the ram: devices take") && err.contains("use smaller ram: sizes"),
        "{err}"
    );
    assert!(!t.path().join("results.db").exists(), "nothing stored");
    assert!(!work.exists(), "nothing provisioned");
}
