//! fslab removes only what it made (issue: "never delete what fslab did not create").
//!
//! For every engine a user's files are planted beside the target directory and inside it,
//! and must survive a successful run, a failed run, Ctrl-C and (fdtree) a failed `-R`; paths
//! that are not fslab's (a user's directory given as `--root`, a device node or a document
//! given as `-f`) are refused with nothing touched. Failures are real: a write past
//! `RLIMIT_FSIZE` (EFBIG, with SIGXFSZ ignored) or a dbench loadfile whose expectation fails.
//! Every path here is one the test made.

mod common;

use common::{fslab, tree_root, wait_for};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A work area: `area/target` is where the engine runs; user files beside and inside it.
struct Area {
    dir: tempfile::TempDir,
}

impl Area {
    fn new() -> Area {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("beside.txt"), b"beside").unwrap();
        std::fs::write(dir.path().join("target/inside.txt"), b"inside").unwrap();
        std::fs::create_dir(dir.path().join("target/results")).unwrap();
        std::fs::write(dir.path().join("target/results/run1.csv"), b"data").unwrap();
        Area { dir }
    }

    fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    /// The planted files, byte for byte.
    fn assert_user_files(&self, when: &str) {
        for (p, c) in [
            ("beside.txt", "beside"),
            ("target/inside.txt", "inside"),
            ("target/results/run1.csv", "data"),
        ] {
            let got = std::fs::read_to_string(self.dir.path().join(p))
                .unwrap_or_else(|e| panic!("{when}: the user's {p} is gone ({e})"));
            assert_eq!(got, c, "{when}: the user's {p} changed");
        }
    }

    /// The planted files intact and nothing else left in the target.
    fn assert_clean(&self, when: &str) {
        self.assert_user_files(when);
        assert!(self.extra().is_empty(), "{when}: left {:?}", self.extra());
    }

    /// Entries of the target other than the planted ones.
    fn extra(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.target())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "inside.txt" && n != "results")
            .collect();
        v.sort();
        v
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The binary as a plain command (for rlimits and signals).
fn bin(area: &Area) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    c.env("FSLAB_DB", area.db()).env_remove("RUST_BACKTRACE");
    common::default_signals(&mut c);
    c
}

/// Run with writes limited to `limit` bytes per file: a longer write fails with EFBIG.
fn run_with_fsize_limit(mut c: Command, limit: u64) -> Output {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let l = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().unwrap()
}

fn interrupt(child: std::process::Child) -> Output {
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

// ---- fdtree ----

#[test]
fn fdtree_success_failure_and_ctrl_c_leave_user_files() {
    let area = Area::new();
    let t = area.target();
    fslab(area.dir.path())
        .args([
            "fdtree", "-q", "-d", "2", "-f", "3", "-s", "1", "-l", "2", "-o",
        ])
        .arg(&t)
        .assert()
        .success();
    area.assert_clean("after a successful run");

    // Failure: the first 4 KiB file write is cut at 1 KiB (EFBIG).
    let mut c = bin(&area);
    c.args([
        "fdtree",
        "-q",
        "--no-store",
        "-d",
        "2",
        "-f",
        "3",
        "-s",
        "1",
        "-l",
        "2",
        "-o",
    ])
    .arg(&t);
    let out = run_with_fsize_limit(c, 1024);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("File too large"),
        "{}",
        text(&out.stderr)
    );
    area.assert_user_files("after a failed run");
    assert!(
        area.extra().is_empty(),
        "partial tree left: {:?}",
        area.extra()
    );

    // Ctrl-C in a long repetition, with a user's file put inside the tree meanwhile: the
    // tree goes, that file and the directory holding it stay, and the run says so.
    let child = bin(&area)
        .args([
            "fdtree",
            "-q",
            "--no-store",
            "-d",
            "10",
            "-f",
            "100",
            "-s",
            "0",
            "-l",
            "4",
            "-o",
        ])
        .arg(&t)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the tree to appear", || {
        tree_root(&t).is_some_and(|r| r.join("L4D1").is_dir())
    });
    let root = tree_root(&t).unwrap();
    std::fs::write(root.join("L4D1/notes.txt"), b"mine").unwrap();
    let out = interrupt(child);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    area.assert_user_files("after Ctrl-C");
    assert_eq!(std::fs::read(root.join("L4D1/notes.txt")).unwrap(), b"mine");
    assert!(
        text(&out.stderr).contains("notes.txt"),
        "the kept entry is named: {}",
        text(&out.stderr)
    );
    // Only the user's file, its directory and the root (with its record) are left.
    let left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["L4D1".to_string()]);
    assert_eq!(std::fs::read_dir(root.join("L4D1")).unwrap().count(), 1);
}

#[test]
fn fdtree_remove_only_refuses_what_it_did_not_make() {
    let area = Area::new();
    let t = area.target();
    // The issue's reproduction: a user's directory, `.`, paths outside -o.
    for root in ["results", ".", "..", "../target", "inside.txt"] {
        let out = fslab(area.dir.path())
            .args(["fdtree", "--no-store", "-q", "-R", "--root", root, "-o"])
            .arg(&t)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "--root {root}: {}",
            text(&out.stderr)
        );
        area.assert_user_files(&format!("after -R --root {root}"));
    }
    // A directory named like a tree but not made by fslab (no record): refused, intact.
    let fake = t.join(format!("LEVEL0.{}.1", host()));
    std::fs::create_dir_all(fake.join("L4D1")).unwrap();
    std::fs::write(fake.join("L4F1"), b"mine").unwrap();
    for args in [
        vec!["-R"],
        vec!["-R", "--root", fake.file_name().unwrap().to_str().unwrap()],
    ] {
        let out = fslab(area.dir.path())
            .args(["fdtree", "--no-store", "-q"])
            .args(&args)
            .arg("-o")
            .arg(&t)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("record"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(std::fs::read(fake.join("L4F1")).unwrap(), b"mine");
        assert!(fake.join("L4D1").is_dir());
    }
    std::fs::remove_dir_all(&fake).unwrap();
    area.assert_user_files("after refusals");
}

#[test]
fn fdtree_failed_remove_only_keeps_the_users_files() {
    let area = Area::new();
    let t = area.target();
    let shape = ["-d", "2", "-f", "3", "-s", "1", "-l", "2"];
    fslab(area.dir.path())
        .args(["fdtree", "-q", "-C"])
        .args(shape)
        .arg("-o")
        .arg(&t)
        .assert()
        .success();
    let root = tree_root(&t).unwrap();
    // A file of the tree goes missing (the remove phase fails on it), and the user keeps
    // a file inside the tree.
    std::fs::remove_file(root.join("L2D1/L1F2")).unwrap();
    std::fs::write(root.join("L2D2/L1D1/mine.txt"), b"mine").unwrap();
    let out = fslab(area.dir.path())
        .args(["fdtree", "-q", "-R"])
        .args(shape)
        .arg("-o")
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("L1F2"), "{}", text(&out.stderr));
    area.assert_user_files("after a failed -R");
    assert_eq!(
        std::fs::read(root.join("L2D2/L1D1/mine.txt")).unwrap(),
        b"mine"
    );
    // Everything else of the tree went; the record stays with what is left.
    assert!(!root.join("L2D1").exists());
    assert!(!root.join("L2F1").exists());
    let record = t.join(format!(
        ".fslab-tree.{}",
        root.file_name().unwrap().to_string_lossy()
    ));
    assert!(record.is_file());
}

#[test]
fn fdtree_remove_only_needs_the_shape_it_was_made_with() {
    let area = Area::new();
    let t = area.target();
    fslab(area.dir.path())
        .args([
            "fdtree", "-q", "-C", "-d", "2", "-f", "3", "-s", "1", "-l", "2", "-o",
        ])
        .arg(&t)
        .assert()
        .success();
    let out = fslab(area.dir.path())
        .args([
            "fdtree", "-q", "-R", "-d", "3", "-f", "3", "-s", "1", "-l", "2", "-o",
        ])
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("was made with -d 2 -f 3 -s 1 -l 2"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        tree_root(&t).unwrap().join("L2D2/L1F3").is_file(),
        "nothing removed"
    );
}

fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let h = String::from_utf8_lossy(&buf[..end]).into_owned();
    h.split('.').next().unwrap_or("").to_string()
}

// ---- iozone ----

#[test]
fn iozone_success_failure_and_ctrl_c_leave_user_files() {
    let area = Area::new();
    let f = area.target().join("iozone.tmp");
    fslab(area.dir.path())
        .args([
            "iozone", "--quiet", "-i", "0", "-i", "1", "-s", "256k", "-r", "4k", "-f",
        ])
        .arg(&f)
        .assert()
        .success();
    area.assert_clean("after a successful run");

    let mut c = bin(&area);
    c.args([
        "iozone",
        "--quiet",
        "--no-store",
        "-i",
        "0",
        "-s",
        "1m",
        "-r",
        "4k",
        "-f",
    ])
    .arg(&f);
    let out = run_with_fsize_limit(c, 64 * 1024);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    area.assert_clean("after a failed run");

    let child = bin(&area)
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "--repeat",
            "1000",
            "-i",
            "0",
            "-s",
            "8m",
            "-r",
            "4k",
            "-f",
        ])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the test file", || f.exists());
    let out = interrupt(child);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    area.assert_clean("after Ctrl-C");
}

#[test]
fn iozone_refuses_special_files_and_users_data() {
    let area = Area::new();
    let t = area.target();
    let fifo = t.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink(&fifo, t.join("link")).unwrap();
    for (path, needle) in [
        (fifo.clone(), "a FIFO"),
        (t.join("link"), "a FIFO"),
        (t.join("results"), "is a directory"),
        (t.join("inside.txt"), "--overwrite"),
    ] {
        let out = fslab(area.dir.path())
            .args([
                "iozone",
                "--quiet",
                "--no-store",
                "-i",
                "0",
                "-s",
                "64k",
                "-r",
                "4k",
                "-f",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            path.display(),
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains(needle), "{}: {err}", path.display());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert!(fifo.exists() && t.join("link").is_symlink());
    area.assert_user_files("after refusals");

    // Throughput mode with -F checks every file.
    let out = fslab(area.dir.path())
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-t",
            "2",
            "-F",
        ])
        .arg(t.join("new"))
        .arg(t.join("inside.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-F"), "{}", text(&out.stderr));
    assert!(!t.join("new").exists());
    area.assert_user_files("after the -F refusal");

    // --overwrite: IOzone's semantics on a copy the user chose to sacrifice.
    std::fs::write(t.join("scratch"), b"old").unwrap();
    fslab(area.dir.path())
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "--overwrite",
            "-w",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
        ])
        .arg(t.join("scratch"))
        .assert()
        .success();
    assert_eq!(
        std::fs::metadata(t.join("scratch")).unwrap().len(),
        64 * 1024,
        "-w keeps it"
    );
    fslab(area.dir.path())
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "--overwrite",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
        ])
        .arg(t.join("scratch"))
        .assert()
        .success();
    assert!(
        !t.join("scratch").exists(),
        "removed at the end, as IOzone does"
    );

    // An empty file of the user's is used and emptied again, never removed.
    std::fs::write(t.join("empty"), b"").unwrap();
    fslab(area.dir.path())
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "-i",
            "0",
            "-s",
            "64k",
            "-r",
            "4k",
            "-f",
        ])
        .arg(t.join("empty"))
        .assert()
        .success();
    assert_eq!(std::fs::metadata(t.join("empty")).unwrap().len(), 0);
}

#[test]
fn privileged_iozone_leaves_a_device_node_alone() {
    if !common::require_root("privileged_iozone_leaves_a_device_node_alone") {
        return;
    }
    let area = Area::new();
    let node = area.target().join("fakenull");
    let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: a valid path in the test's own directory; char device 1:3 (null).
    assert_eq!(
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) },
        0
    );
    let out = fslab(area.dir.path())
        .args([
            "iozone",
            "--quiet",
            "--no-store",
            "--overwrite",
            "-i",
            "0",
            "-s",
            "1m",
            "-r",
            "4k",
            "-f",
        ])
        .arg(&node)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a character device"),
        "{}",
        text(&out.stderr)
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&node)
        .unwrap()
        .file_type()
        .is_char_device());
}

// ---- dbench ----

const LOAD: &str = "Mkdir \"\\clients\" NT_STATUS_OK\n\
Mkdir \"\\clients\\client1\" NT_STATUS_OK\n\
NTCreateX \"\\clients\\client1\\a.doc\" 0x0 0x2 1 NT_STATUS_OK\n\
WriteX 1 0 4096 4096 NT_STATUS_OK\n\
Close 1 NT_STATUS_OK\n\
Unlink \"\\clients\\client1\\a.doc\" 0x6 NT_STATUS_OK\n";

#[test]
fn dbench_success_failure_and_ctrl_c_leave_user_files() {
    let area = Area::new();
    let load = area.dir.path().join("load.txt");
    std::fs::write(&load, LOAD).unwrap();
    let dir = area.target();
    let run = |extra: &[&str], loadfile: &Path| {
        let mut c = bin(&area);
        c.args(["dbench", "--quiet", "--no-store", "-c"])
            .arg(loadfile)
            .args(extra)
            .arg("-D")
            .arg(&dir)
            .arg("2");
        c
    };
    let out = run(&["--run-once"], &load).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    area.assert_clean("after a successful run");

    // Failure: an expectation that does not hold.
    let bad = area.dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        format!("{LOAD}Unlink \"\\clients\\client1\\b.doc\" 0x6 NT_STATUS_OK\n"),
    )
    .unwrap();
    let out = run(&["--run-once"], &bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    area.assert_clean("after a failed run");

    let child = run(&["-t", "30", "--warmup", "0"], &load)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the client trees", || dir.join("clients").exists());
    std::thread::sleep(Duration::from_millis(300));
    let out = interrupt(child);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    area.assert_clean("after Ctrl-C");
}
