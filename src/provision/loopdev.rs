//! Loop devices over sparse images (`loop:SIZE`) and over files in a tmpfs (`ram:SIZE`),
//! made with `truncate` and `losetup --find --show`, and found again through
//! `/sys/block/loop*/loop/backing_file` so a killed run's devices can be detached by image.
//!
//! Direct I/O (`losetup --direct-io=on`) is used by default: the loop driver then reads and
//! writes the image with O_DIRECT, so the page cache is not doubled under the file system
//! being measured and `drop_caches` means what it says. Whether the kernel kept it on is read
//! back from `/sys/block/loopN/loop/dio` and stored with the cell.

use super::exec::{CmdLine, Exec};
use super::ProvisionError;
use std::path::{Path, PathBuf};

/// `truncate -s SIZE IMAGE`: a sparse image (blocks are allocated only when written).
pub fn truncate_cmd(image: &Path, size: u64) -> CmdLine {
    CmdLine::new("truncate")
        .arg("-s")
        .arg(size.to_string())
        .path(image)
}

/// `losetup --find --show [--direct-io=on] IMAGE`.
pub fn attach_cmd(image: &Path, direct_io: bool) -> CmdLine {
    let mut c = CmdLine::new("losetup").args(["--find", "--show"]);
    if direct_io {
        c = c.arg("--direct-io=on");
    }
    c.path(image)
}

/// `losetup -d DEVICE`.
pub fn detach_cmd(dev: &Path) -> CmdLine {
    CmdLine::new("losetup").arg("-d").path(dev)
}

/// Attach `image` to a free loop device and return the device path. Retries when another
/// process took the device `--find` chose (two losetup calls can race for the same one).
pub fn attach(exec: &dyn Exec, image: &Path, direct_io: bool) -> Result<PathBuf, ProvisionError> {
    let cmd = attach_cmd(image, direct_io);
    let mut last = None;
    for attempt in 0..5 {
        match exec.run(&cmd) {
            Ok(out) => {
                let dev = out.stdout.trim();
                if dev.is_empty() {
                    return Err(ProvisionError::Io(format!(
                        "`{cmd}` printed no device name"
                    )));
                }
                return Ok(PathBuf::from(dev));
            }
            Err(ProvisionError::CommandFailed { stderr, .. })
                if stderr.contains("busy") || stderr.contains("Resource temporarily") =>
            {
                last = Some(stderr);
                std::thread::sleep(std::time::Duration::from_millis(50 << attempt));
            }
            Err(e) => return Err(e),
        }
    }
    Err(ProvisionError::Io(format!(
        "`{cmd}` kept failing ({}); free some loop devices (losetup -a) and retry",
        last.unwrap_or_default()
    )))
}

/// Loop devices whose backing file is `file` (by the path the kernel recorded).
pub fn loops_backed_by(file: &Path) -> Vec<PathBuf> {
    loops_where(|name, _| backing_file(name).as_deref() == Some(file))
}

/// The loop devices (`/dev/loopN`, sorted) whose name and path pass `keep`.
fn loops_where(keep: impl Fn(&str, &Path) -> bool) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .map(|n| (PathBuf::from("/dev").join(&n), n))
        .filter(|(d, n)| keep(n, d))
        .map(|(d, _)| d)
        .collect();
    out.sort();
    out
}

/// `struct loop_info64` of `<linux/loop.h>`: what `LOOP_GET_STATUS64` returns.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The device and inode numbers of the file behind loop device `dev` (`LOOP_GET_STATUS64`),
/// if it is attached and can be asked (root).
pub fn backing_ident(dev: &Path) -> Option<(u64, u64)> {
    let f = std::fs::File::open(dev).ok()?;
    // SAFETY: all-zero is a valid loop_info64.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 fills a struct loop_info64 through the pointer.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    (r == 0).then_some((info.lo_device, info.lo_inode))
}

/// The loop devices whose backing file is the inode (`dev`, `ino`): the image fslab made,
/// whatever its path is now (removed, or its directory replaced).
pub fn loops_backed_by_ident(dev: u64, ino: u64) -> Vec<PathBuf> {
    loops_where(|_, d| backing_ident(d) == Some((dev, ino)))
}

/// The backing file of loop device `name` (`loop3`), if attached.
pub fn backing_file(name: &str) -> Option<PathBuf> {
    let t = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let t = t.trim_end_matches('\n');
    (!t.is_empty()).then(|| PathBuf::from(t))
}

/// Whether loop device `dev` does direct I/O (`/sys/block/loopN/loop/dio`).
pub fn direct_io_of(dev: &Path) -> Option<bool> {
    let name = dev.file_name()?.to_str()?;
    let t = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).ok()?;
    Some(t.trim() == "1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::exec::{Output, RecordingExec};

    #[test]
    fn command_lines() {
        let img = Path::new("/var/tmp/fslab/runs/1/images/c0-data.img");
        assert_eq!(
            truncate_cmd(img, 1 << 30).to_string(),
            "truncate -s 1073741824 /var/tmp/fslab/runs/1/images/c0-data.img"
        );
        assert_eq!(
            attach_cmd(img, true).to_string(),
            "losetup --find --show --direct-io=on /var/tmp/fslab/runs/1/images/c0-data.img"
        );
        assert_eq!(
            detach_cmd(Path::new("/dev/loop4")).to_string(),
            "losetup -d /dev/loop4"
        );
    }

    #[test]
    fn attach_retries_a_busy_device_then_returns_the_name() {
        let n = std::sync::atomic::AtomicU32::new(0);
        let ex = RecordingExec::with(Box::new(move |_| {
            if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                Output {
                    status: 1,
                    stdout: String::new(),
                    stderr: "losetup: /x: failed to set up loop device: Device or resource busy"
                        .into(),
                }
            } else {
                Output::ok("/dev/loop7\n")
            }
        }));
        let dev = attach(&ex, Path::new("/x"), false).unwrap();
        assert_eq!(dev, PathBuf::from("/dev/loop7"));
        assert_eq!(ex.lines().len(), 2);
    }

    #[test]
    fn nothing_is_backed_by_a_file_that_does_not_exist() {
        assert!(loops_backed_by(Path::new("/nonexistent/fslab-image")).is_empty());
    }
}
