//! Telemetry in studies, for real on loop devices the test makes (issue 12): per-phase device,
//! journal and machine samples are stored; a background writer on the cell's backing device
//! during chosen repetitions gets exactly those repetitions flagged; `cache = "fresh"` makes a
//! new file system before every repetition. The work directory lives on a file system of the
//! test's own (an ext4 on a loop device over an image in a temp dir), so other processes'
//! I/O on the machine's disk is not on the cells' backing device.

mod common;
mod testdev;

use common::require_root;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An ext4 on a loop device of the test's own, mounted on `dir/fs`; undone when dropped.
struct OwnFs {
    dir: tempfile::TempDir,
    dev: String,
}

impl OwnFs {
    fn new() -> OwnFs {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(6 << 30)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&img)
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup failed");
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let fs = OwnFs { dir, dev };
        // Inode tables and the journal zeroed now, not by a kernel thread in the background
        // (that would be other I/O on the backing device during the repetitions).
        assert!(Command::new("mkfs.ext4")
            .args([
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &fs.dev,
            ])
            .status()
            .unwrap()
            .success());
        std::fs::create_dir(fs.mnt()).unwrap();
        assert!(Command::new("mount")
            .arg(&fs.dev)
            .arg(fs.mnt())
            .status()
            .unwrap()
            .success());
        fs
    }

    fn mnt(&self) -> PathBuf {
        self.dir.path().join("fs")
    }
}

impl Drop for OwnFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt()).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn study(name: &str, cache: &str, min: u32, workload: &str) -> String {
    format!(
        r#"
name = "{name}"
[repetitions]
min = {min}
cache = "{cache}"
order = "sequential"
[device]
data = "loop:512M"
journal = "loop:64M"
[filesystem]
type = "ext4"
[[workload]]
{workload}
"#
    )
}

/// Run a study on `fs`, calling `on_line` for every line it prints on stderr.
fn run(fs: &OwnFs, text: &str, mut on_line: impl FnMut(&str)) -> (i32, String) {
    let file = fs.dir.path().join("s.toml");
    std::fs::write(&file, text).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .env("FSLAB_DB", fs.dir.path().join("results.db"))
        .args(["study", "run"])
        .arg(&file)
        .arg("--workdir")
        .arg(fs.mnt().join("work"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut all = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        on_line(&line);
        all.push_str(&line);
        all.push('\n');
    }
    (child.wait().unwrap().code().unwrap_or(-1), all)
}

fn db(fs: &OwnFs) -> rusqlite::Connection {
    rusqlite::Connection::open(fs.dir.path().join("results.db")).unwrap()
}

#[test]
fn privileged_interference_flags_exactly_the_disturbed_repetitions() {
    if !require_root("privileged_interference_flags_exactly_the_disturbed_repetitions") {
        return;
    }
    let fs = OwnFs::new();
    let stop = Arc::new(AtomicBool::new(true));
    let target = fs.mnt().join("hog");
    let writer = {
        let (stop, target) = (Arc::clone(&stop), target.clone());
        std::thread::spawn(move || {
            // O_DIRECT in 256 KiB pieces: nothing is left in the page cache to be written
            // back after the writer stops, and a stop lands within one small write.
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(&target)
                .unwrap();
            let buf = AlignedBuf::new(256 << 10);
            let mut written: u64 = 0;
            loop {
                if stop.load(Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    if Arc::strong_count(&stop) == 1 {
                        return written;
                    }
                    continue;
                }
                use std::io::{Seek, SeekFrom, Write};
                if written >= 1 << 30 {
                    f.seek(SeekFrom::Start(0)).unwrap();
                    written = 0;
                }
                f.write_all(buf.bytes()).unwrap();
                written += buf.bytes().len() as u64;
            }
        })
    };
    // Four repetitions of two seconds each; the writer runs from the end of repetition 1 to
    // the end of repetition 3, so repetitions 2 and 3 see it and 1 and 4 do not.
    let text = study(
        "interference",
        "cold",
        4,
        "kind = \"dbench\"\nclients = 1\nduration = \"2s\"\nwarmup = \"0s\"",
    );
    let (code, err) = run(&fs, &text, |line| {
        if line.starts_with("[1/") {
            stop.store(false, Ordering::SeqCst);
        }
        if line.starts_with("[3/") {
            stop.store(true, Ordering::SeqCst);
        }
    });
    drop(stop);
    writer.join().unwrap();
    assert_eq!(code, 0, "{err}");
    // The piped log counts with totals: [k/4] … rep k/4, an ETA until the last.
    let reps: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(reps.len(), 4, "{err}");
    for (i, l) in reps.iter().enumerate() {
        let k = i + 1;
        assert!(
            l.starts_with(&format!("[{k}/4] ")) && l.contains(&format!("rep {k}/4: ")),
            "{l}"
        );
        assert_eq!(l.contains(" · ETA "), k < 4, "{l}");
    }
    let c = db(&fs);
    let mut st = c
        .prepare(
            "SELECT repetition, interference FROM trial WHERE status = 'ok' ORDER BY repetition",
        )
        .unwrap();
    let rows: Vec<(i64, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    // Other engineers' jobs on this shared machine may add CPU or load disturbances to any
    // repetition; the I/O on the test's own backing device is the writer's alone.
    let flagged: Vec<i64> = rows
        .iter()
        .filter(|(_, i)| i.as_deref().is_some_and(|w| w.contains("other I/O")))
        .map(|(n, _)| *n)
        .collect();
    let io: Vec<(i64, String, f64)> = c
        .prepare("SELECT t.repetition, s.metric, SUM(s.value) FROM sample s JOIN trial t ON t.id = s.trial_id WHERE s.metric LIKE 'dev.%write_bytes' AND t.status = 'ok' GROUP BY t.repetition, s.metric")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(flagged, vec![2, 3], "{rows:?}\n{io:?}");
}

#[test]
fn privileged_fresh_cells_and_per_phase_telemetry() {
    if !require_root("privileged_fresh_cells_and_per_phase_telemetry") {
        return;
    }
    let fs = OwnFs::new();
    let text = study(
        "fresh",
        "fresh",
        3,
        "kind = \"fdtree\"\ndirs = 3\nfiles = 10\nsize_blocks = 1\nlevels = 3\nsync = true",
    );
    let (code, err) = run(&fs, &text, |_| {});
    assert_eq!(code, 0, "{err}");
    // One file system per repetition.
    assert_eq!(err.matches("provisioning cell 0").count(), 3, "{err}");
    let c = db(&fs);
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM trial WHERE status = 'ok' AND cache_policy = 'fresh'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 3);
    let sample = |phase: &str, metric: &str| -> Vec<f64> {
        let mut st = c
            .prepare("SELECT s.value FROM sample s JOIN trial t ON t.id = s.trial_id WHERE t.status = 'ok' AND s.phase = ?1 AND s.metric = ?2")
            .unwrap();
        st.query_map([phase, metric], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    // file_create writes 400 files of 4 KiB (40 directories × 10) and syncs: the data device
    // wrote at least that, the external journal device wrote, jbd2 committed, and the device
    // under the images (the test's own loop device) is seen.
    let data = sample("file_create", "dev.data.write_bytes");
    assert_eq!(data.len(), 3, "one per repetition");
    assert!(data.iter().all(|&b| b >= 400.0 * 4096.0), "{data:?}");
    assert!(sample("file_create", "dev.journal.write_bytes")
        .iter()
        .all(|&b| b > 0.0));
    assert!(sample("file_create", "fs.journal.transactions")
        .iter()
        .all(|&t| t >= 1.0));
    assert_eq!(sample("file_create", "dev.backing.write_bytes").len(), 3);
    for phase in ["dir_create", "file_create", "file_remove", "dir_remove"] {
        for m in ["load.start", "load.end", "proc.user", "proc.sys"] {
            assert_eq!(sample(phase, m).len(), 3, "{phase}.{m}");
        }
    }
    // CPU shares need at least one clock tick (10 ms at 100 Hz) counted between the phase's
    // start and end: every repetition whose synced file_create lasted 20 ms or more has them
    // (a quick one on a quiet machine may not), all four together, and the cycle's phases
    // have some.
    let long = sample("file_create", "elapsed")
        .iter()
        .filter(|&&s| s >= 0.02)
        .count();
    let shares = sample("file_create", "cpu.user").len();
    assert!(
        shares >= long && shares <= 3,
        "{shares} shares, {long} phases of 20 ms or more"
    );
    for m in ["cpu.sys", "cpu.iowait", "cpu.steal"] {
        assert_eq!(sample("file_create", m).len(), shares, "{m}");
    }
    let all: usize = ["dir_create", "file_create", "file_remove", "dir_remove"]
        .iter()
        .map(|p| sample(p, "cpu.user").len())
        .sum();
    assert!(all >= 1, "no phase of the cycle counted a clock tick");
    assert!(testdev::loops_under(&fs.mnt().join("work")).is_empty());

    // Every report format shows what the data and journal devices wrote.
    let report = |format: &str| {
        let out = Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .env("FSLAB_DB", fs.dir.path().join("results.db"))
            .args(["report", "fresh", "--all", "--format", format])
            // Wide enough that no table header wraps.
            .args(["--width", "300"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // The telemetry tables, with every table (`--all`).
    for format in ["table", "markdown", "html"] {
        let text = report(format);
        assert!(
            text.contains("data written") && text.contains("journal written"),
            "{format}: {text}"
        );
    }
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let tele = json["workloads"][0]["telemetry"].as_array().unwrap();
    for name in ["dev.data.write_bytes", "dev.journal.write_bytes"] {
        assert!(
            tele.iter()
                .any(|t| t["name"] == name && t["phase"] == "file_create"),
            "{name}"
        );
    }
}

/// A page-aligned buffer for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: non-zero size, valid alignment; freed in Drop with the same layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        AlignedBuf { ptr, len }
    }
    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes were allocated and zeroed in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, 4096).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) };
    }
}

// SAFETY: the buffer is only read after creation.
unsafe impl Send for AlignedBuf {}
