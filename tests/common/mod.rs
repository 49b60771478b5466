//! Helpers shared by the integration tests.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::Path;

/// Helpers of the MPI tests (builds with the `mpi` feature).
#[cfg(feature = "mpi")]
pub mod mpi;

/// The fslab binary with a private results database in `dir`.
pub fn fslab(db_dir: &Path) -> Command {
    let mut c = Command::cargo_bin("fslab").expect("fslab binary is built by cargo test");
    c.env("FSLAB_DB", db_dir.join("results.db"));
    c.env_remove("RUST_BACKTRACE");
    c
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Tests that need root (mkfs, mount, loop devices) call this first.
///
/// Without root they fail loudly, unless the developer explicitly sets
/// `FSLAB_SKIP_PRIVILEGED=1`, in which case they print SKIPPED and return `false`.
pub fn require_root(test: &str) -> bool {
    if is_root() {
        return true;
    }
    if std::env::var("FSLAB_SKIP_PRIVILEGED").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: needs root (FSLAB_SKIP_PRIVILEGED=1)");
        return false;
    }
    panic!("{test} needs root (mkfs, mount, loop devices); run as root or set FSLAB_SKIP_PRIVILEGED=1 to skip on purpose");
}

/// Whether fio (Debian's `fio`) is on the PATH.
pub fn have_fio() -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("fio").is_file()))
        .unwrap_or(false)
}

/// Tests that run the real fio call this first. When fio is missing it runs
/// `scripts/install-deps` (as root; fio is in its base list) and fails loudly if fio is
/// still missing, unless the developer sets `FSLAB_SKIP_FIO=1` on purpose (then it prints
/// SKIPPED and returns `false`).
pub fn require_fio(test: &str) -> bool {
    if have_fio() {
        return true;
    }
    if std::env::var("FSLAB_SKIP_FIO").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: fio missing (FSLAB_SKIP_FIO=1)");
        return false;
    }
    if is_root() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-deps");
        let st = std::process::Command::new(&script).status();
        eprintln!("ran {}: {st:?}", script.display());
    }
    assert!(
        have_fio(),
        "{test} needs fio: run `sudo scripts/install-deps` (or apt-get install fio), or set FSLAB_SKIP_FIO=1 to skip on purpose"
    );
    true
}

/// A file system mounted on a fresh temporary directory (root only), unmounted when dropped.
pub struct TempMount(tempfile::TempDir);

impl TempMount {
    /// `mount -t FSTYPE -o OPTS FSTYPE <tempdir>` (tmpfs, ramfs, …).
    pub fn new(fstype: &str, opts: &str) -> TempMount {
        let dir = tempfile::tempdir().expect("temporary directory");
        let st = std::process::Command::new("mount")
            .args(["-t", fstype, "-o", opts, fstype])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(st.success(), "mount -t {fstype} -o {opts} failed");
        TempMount(dir)
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// `mount -o remount,OPTS` (e.g. `ro`), keeping it mounted where it is.
    pub fn remount(&self, opts: &str) {
        let st = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(self.0.path())
            .status()
            .expect("run mount");
        assert!(st.success(), "mount -o remount,{opts} failed");
    }
}

impl Drop for TempMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// Wait (up to 60 s, polling every 5 ms) until `cond` holds; panic naming `what` otherwise.
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !cond() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "{what} did not happen in 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The first fdtree tree root (`LEVEL0.…`) in `dir`, if any.
pub fn tree_root(dir: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("LEVEL0."))
        .map(|e| e.path())
}

/// Tests that boot the User-mode Linux guest call this first: root, and `linux.uml` with the
/// mkfs tools of nilfs2, JFS and ReiserFS (`scripts/install-deps --test`). Without them they
/// fail loudly, unless the developer sets `FSLAB_SKIP_GUEST=1` on purpose (then SKIPPED and
/// `false`). Where they are installed the guest must run: a guest that cannot boot fails the
/// test, it is never skipped.
pub fn require_guest(test: &str) -> bool {
    if !require_root(test) {
        return false;
    }
    let missing: Vec<&str> = ["linux.uml", "jfs_mkfs", "mkreiserfs", "mkfs.nilfs2"]
        .into_iter()
        .filter(|p| {
            !["/usr/bin", "/usr/sbin", "/sbin", "/bin"]
                .iter()
                .any(|d| Path::new(d).join(p).exists())
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var("FSLAB_SKIP_GUEST").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: {missing:?} missing (FSLAB_SKIP_GUEST=1)");
        return false;
    }
    panic!("{test}: {missing:?} missing; run scripts/install-deps --test, or set FSLAB_SKIP_GUEST=1 to skip on purpose");
}

/// `c` starts with the default action for SIGHUP, SIGINT and SIGTERM and none of them
/// blocked, whatever this test was started under: `nohup` ignores SIGHUP and a shell's
/// background job ignores SIGINT, and an ignored disposition is inherited across `exec` —
/// a test that signals the child relies on the child's own handlers being the ones that act.
pub fn default_signals(c: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal, sigemptyset, sigaddset and sigprocmask are async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
                libc::sigaddset(&mut set, sig);
            }
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    c
}

/// The value of metric `phase`.`name` in `reps`, one repetition of a run document (a
/// stored run's `repetitions[i]`, or a point's).
pub fn metric(reps: &serde_json::Value, phase: &str, name: &str) -> f64 {
    reps.as_array()
        .unwrap()
        .iter()
        .find(|m| m["phase"] == phase && m["metric"] == name)
        .unwrap_or_else(|| panic!("no {phase}.{name}"))["value"]
        .as_f64()
        .unwrap()
}
