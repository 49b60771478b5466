//! `fslab iozone` on file systems this test mounts itself (root): no space left part-way
//! through a test on a small tmpfs, and O_DIRECT refused by a file system without it (ramfs).

mod common;

use common::{fslab, require_root, TempMount};

#[test]
fn privileged_no_space_mid_test_reports_bytes_removes_the_file_and_fails() {
    if !require_root("privileged_no_space_mid_test_reports_bytes_removes_the_file_and_fails") {
        return;
    }
    let m = TempMount::new("tmpfs", "size=1m");
    let db = tempfile::tempdir().unwrap();
    let f = m.path().join("full.tmp");
    let out = fslab(db.path())
        .args([
            "iozone",
            "-i",
            "0",
            "-s",
            "4m",
            "-r",
            "64k",
            "--no-space-check",
            "-f",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    let done: u64 = err
        .split("failed after ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("bytes written are reported");
    assert!(done > 0 && done <= 1 << 20, "{err}");
    let fail: Vec<&str> = err.lines().filter(|l| l.starts_with("fslab:")).collect();
    assert_eq!(fail.len(), 1, "{err}");
    assert_eq!(fail[0].matches("No space left").count(), 1, "{err}");
    assert!(err.contains("removed the test file"), "{err}");
    assert!(!f.exists(), "the file must be removed");
    // Without --no-space-check the run is refused before anything is written.
    let out = fslab(db.path())
        .args(["iozone", "-i", "0", "-s", "4m", "-r", "64k", "-f"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("free"));
}

#[test]
fn privileged_o_direct_refused_where_the_file_system_lacks_it() {
    if !require_root("privileged_o_direct_refused_where_the_file_system_lacks_it") {
        return;
    }
    let m = TempMount::new("ramfs", "mode=755");
    let db = tempfile::tempdir().unwrap();
    let out = fslab(db.path())
        .args(["iozone", "-I", "-s", "64k", "-f"])
        .arg(m.path().join("f"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("ramfs"), "{err}");
    assert_eq!(
        std::fs::read_dir(m.path()).unwrap().count(),
        0,
        "probe file removed"
    );
}

#[test]
fn privileged_drop_caches_between_tests() {
    if !require_root("privileged_drop_caches_between_tests") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = fslab(d.path())
        .args([
            "iozone",
            "-i",
            "0",
            "-i",
            "1",
            "-s",
            "64k",
            "-r",
            "4k",
            "--drop-caches",
            "--fadvise",
            "--no-store",
            "-f",
        ])
        .arg(d.path().join("f"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ext4 on a loop device over an image in a temporary directory; torn down when dropped.
struct LoopExt4 {
    dev: String,
    mnt: tempfile::TempDir,
    _img: tempfile::TempDir,
}

impl LoopExt4 {
    fn new(size: &str) -> LoopExt4 {
        let img = tempfile::tempdir_in("/var/tmp").expect("image directory");
        let file = img.path().join("ext4.img");
        let run = |cmd: &mut std::process::Command| {
            let out = cmd.output().expect("run a set-up command");
            assert!(out.status.success(), "{cmd:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        run(std::process::Command::new("truncate")
            .args(["-s", size])
            .arg(&file));
        run(std::process::Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&file));
        let dev = run(std::process::Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&file));
        let mnt = tempfile::tempdir().expect("mount point");
        let m = LoopExt4 {
            dev,
            mnt,
            _img: img,
        };
        run(std::process::Command::new("mount")
            .arg(&m.dev)
            .arg(m.mnt.path()));
        m
    }

    /// The device's file `rel` under `/sys/block/<dev>/`.
    fn sysfs(&self, rel: &str) -> String {
        let base = self.dev.trim_start_matches("/dev/");
        std::fs::read_to_string(format!("/sys/block/{base}/{rel}")).unwrap()
    }

    /// The device's `queue/<name>` attribute.
    fn queue(&self, name: &str) -> u64 {
        self.sysfs(&format!("queue/{name}")).trim().parse().unwrap()
    }

    /// Completed read requests so far (the first field of `/sys/block/<dev>/stat`).
    fn reads(&self) -> u64 {
        let stat = self.sysfs("stat");
        stat.split_whitespace().next().unwrap().parse().unwrap()
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.mnt.path())
            .status();
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.dev])
            .status();
    }
}

/// With -I the record buffer's pages decide the device requests: by default fslab's buffer
/// follows the system's THP policy as IOzone's does (1 MiB in 4 KiB pages = 256 segments,
/// split in two by a loop device's 128-segment limit unless adjacent pages merge);
/// `--huge-buffer` makes it one request per record.
#[test]
fn privileged_o_direct_buffer_pages_decide_the_device_requests() {
    if !require_root("privileged_o_direct_buffer_pages_decide_the_device_requests") {
        return;
    }
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
    assert!(
        !thp.contains("[never]") && !thp.contains("[always]"),
        "this test needs transparent huge pages in madvise mode (found: {thp})"
    );
    let m = LoopExt4::new("256M");
    assert!(
        m.queue("max_segments") < 256 && m.queue("max_sectors_kb") >= 1024,
        "a loop device is expected to split 256 segments and take 1 MiB requests"
    );
    let db = tempfile::tempdir().unwrap();
    let reads_of = |extra: &[&str]| {
        let before = m.reads();
        let out = fslab(db.path())
            .args([
                "iozone", "-I", "-i", "0", "-i", "1", "-s", "16m", "-r", "1m",
            ])
            .args(extra)
            .args(["--no-store", "--quiet", "-f"])
            .arg(m.mnt.path().join("f"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (m.reads() - before, text)
    };
    // Read and re-read: 16 records each, plus one untimed priming read each.
    let records = 2 * 16 + 2;
    let (plain, text) = reads_of(&[]);
    assert!(!text.contains("huge page"), "{text}");
    // In 4 KiB pages a record's 256 segments exceed the loop device's limit unless the block
    // layer merges physically adjacent pages: on a fragmented machine every record is split
    // in two, on a freshly booted one many pages happen to be adjacent (38 reads for 34
    // records was seen in CI). So: never fewer requests than records, and never fewer than
    // with the huge page.
    assert!(
        plain >= records,
        "4 KiB pages: at least one request per record ({plain} reads for {records} records)"
    );
    eprintln!(
        "4 KiB pages: {plain} reads for {records} records ({})",
        if plain >= 2 * records {
            "every record split in two"
        } else {
            "some pages were physically adjacent and merged"
        }
    );
    let (huge, text) = reads_of(&["--huge-buffer"]);
    assert!(
        text.contains("Record buffer in a transparent huge page"),
        "{text}"
    );
    assert!(
        (records..records + 4).contains(&huge),
        "one huge page: one request per record ({huge} reads for {records} records)"
    );
    assert!(
        huge <= plain,
        "the huge page never needs more requests than 4 KiB pages ({huge} vs {plain})"
    );
}
