//! Loop devices, mounts and swap made by privileged tests, each removed when dropped.
#![allow(dead_code)]

pub mod hog;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Run a command, panic with its stderr if it fails, return stdout.
pub fn sh(prog: &str, args: &[&str]) -> String {
    let out = Command::new(prog)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{prog}: {e}"));
    assert!(
        out.status.success(),
        "{prog} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A loop device over a sparse image in a directory of the test.
pub struct TestLoop {
    pub dev: PathBuf,
    pub image: PathBuf,
}

impl TestLoop {
    /// A `mb` MiB loop device over `dir/name`; `partscan` enables partitions.
    pub fn new(dir: &Path, name: &str, mb: u64, partscan: bool) -> TestLoop {
        let image = dir.join(name);
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(mb << 20).unwrap();
        drop(f);
        TestLoop::over(&image, partscan)
    }

    /// A loop device over an existing file or block device.
    pub fn over(backing: &Path, partscan: bool) -> TestLoop {
        let b = backing.to_str().unwrap();
        let mut args = vec!["--find", "--show"];
        if partscan {
            args.push("-P");
        }
        args.push(b);
        let dev = PathBuf::from(sh("losetup", &args).trim());
        TestLoop {
            dev,
            image: backing.to_path_buf(),
        }
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A mount made by a test.
pub struct TestMount(pub PathBuf);

impl TestMount {
    pub fn new(dev: &str, dir: &Path) -> TestMount {
        std::fs::create_dir_all(dir).unwrap();
        sh("mount", &[dev, dir.to_str().unwrap()]);
        TestMount(dir.to_path_buf())
    }
}

impl Drop for TestMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Swap enabled on a device by a test.
pub struct TestSwap(pub String);

impl Drop for TestSwap {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.0).status();
    }
}

/// Write a DOS partition table with one Linux partition (sectors 2048..2048+count) into
/// the first sector of `image`.
pub fn write_mbr(image: &Path, count: u32) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    let off = 0x1BE;
    mbr[off + 4] = 0x83;
    mbr[off + 8..off + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[off + 12..off + 16].copy_from_slice(&count.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    let mut f = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&mbr).unwrap();
}

/// Make sure the kernel created the partition devices of a partscan loop device.
pub fn ensure_partitions(dev: &str) -> PathBuf {
    let p1 = PathBuf::from(format!("{dev}p1"));
    for _ in 0..50 {
        if p1.exists() {
            return p1;
        }
        let _ = Command::new("partx").args(["-a", dev]).status();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} did not appear", p1.display());
}

/// Loop devices whose backing file lies under `dir`.
pub fn loops_under(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Ok(b) = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")) {
            if Path::new(b.trim()).starts_with(dir) {
                v.push(format!("{name} -> {}", b.trim()));
            }
        }
    }
    v
}

/// Mount points under `dir`.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|m| Path::new(m).starts_with(dir))
        .collect()
}

/// Write a partition table with `sfdisk` (script on standard input, e.g. "label: dos\n,16M\n")
/// and make sure the kernel made the first `parts` partition devices; returns their paths.
pub fn sfdisk(dev: &str, script: &str, parts: usize) -> Vec<PathBuf> {
    use std::io::Write;
    let mut child = Command::new("sfdisk")
        .args(["-q", dev])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "sfdisk: {e}; install it with scripts/install-deps --test (apt-get install fdisk)"
            )
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "sfdisk {dev} failed");
    let paths: Vec<PathBuf> = (1..=parts)
        .map(|i| PathBuf::from(format!("{dev}p{i}")))
        .collect();
    for _ in 0..50 {
        if paths.iter().all(|p| p.exists()) {
            return paths;
        }
        // Without udev the kernel's re-read may not be enough: add the partitions explicitly.
        let _ = Command::new("partx").args(["-a", dev]).output();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the partitions of {dev} did not appear");
}
