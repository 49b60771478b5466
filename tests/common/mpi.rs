//! Helpers of the MPI tests (`tests/mpi_*.rs`, feature `mpi`): mpiexec under `timeout`,
//! output checks, a tmpfs scratch directory, and finding one rank's process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const FSLAB: &str = env!("CARGO_BIN_EXE_fslab");

/// `mpiexec` from PATH; panics with the fix when it is missing.
pub fn mpiexec() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("mpiexec"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("mpiexec not found in PATH: install MPICH with `scripts/install-deps --mpi` (apt-get install mpich libmpich-dev)")
        })
}

/// `timeout 180 mpiexec <groups…>`, where each group is (ranks, fslab arguments); groups
/// are joined with mpiexec's `:` (different command lines for different ranks).
pub fn mpi_command(db: &Path, groups: &[(usize, Vec<String>)]) -> Command {
    let mut c = Command::new("timeout");
    c.args(["--kill-after=10", "180"]).arg(mpiexec());
    for (i, (n, args)) in groups.iter().enumerate() {
        if i > 0 {
            c.arg(":");
        }
        c.arg("-n").arg(n.to_string()).arg(FSLAB).args(args);
    }
    c.env("FSLAB_DB", db.join("results.db"))
        .env_remove("FSLAB_MPI")
        .env_remove("FSLAB_MPI_CLOCK_CHECK")
        .env_remove("RUST_BACKTRACE");
    // A test interrupts a rank: its own handlers act, also under `nohup`.
    super::default_signals(&mut c);
    c
}

/// Run [`mpi_command`] to its end; fails the test if it hung (timeout's exit code 124).
pub fn run(db: &Path, groups: &[(usize, Vec<String>)]) -> Output {
    let out = mpi_command(db, groups)
        .output()
        .expect("timeout and mpiexec run");
    assert_ne!(
        out.status.code(),
        Some(124),
        "mpiexec hung: {}",
        text(&out.stderr)
    );
    out
}

/// Bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        text(&out.stderr)
    );
    // One document: only rank 0 prints.
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", text(&out.stdout)))
}

/// A scratch directory on tmpfs (fast, and what the documentation's examples use).
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fslab-mpi-test")
        .tempdir_in("/dev/shm")
        .expect("/dev/shm is writable")
}

/// The pid of the fslab rank `rank` whose environment carries `db` (this test's run).
pub fn rank_pid(rank: u32, db: &Path) -> Option<u32> {
    let want_rank = format!("PMI_RANK={rank}");
    let want_db = format!("FSLAB_DB={}", db.display());
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
        let has = |s: &str| vars.contains(&s.as_bytes());
        let exe = std::fs::read_link(e.path().join("exe")).unwrap_or_default();
        if has(&want_rank) && has(&want_db) && exe.ends_with("fslab") {
            return Some(pid);
        }
    }
    None
}

/// Start `cmd` (an mpiexec of this test, its database in `db`), wait until `ready()` says the
/// run is under way and rank `rank`'s process is found, interrupt that rank alone (SIGINT),
/// and return the job's output.
pub fn interrupt_rank(mut cmd: Command, db: &Path, rank: u32, ready: impl Fn() -> bool) -> Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("timeout and mpiexec start");
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        if let (true, Some(pid)) = (ready(), rank_pid(rank, &db.join("results.db"))) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the run never got under way");
        std::thread::sleep(Duration::from_millis(2));
    };
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().expect("the job ends");
    assert_ne!(
        out.status.code(),
        Some(124),
        "mpiexec hung: {}",
        text(&out.stderr)
    );
    out
}

/// The lines starting with `fslab:` (the job's error report) of `stderr`.
pub fn error_lines(stderr: &[u8]) -> Vec<String> {
    text(stderr)
        .lines()
        .filter(|l| l.starts_with("fslab:"))
        .map(String::from)
        .collect()
}

/// Whitespace-separated words as arguments.
pub fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Runs recorded in the results database of `db` (`fslab list --json`).
pub fn stored_runs(db: &Path) -> Vec<serde_json::Value> {
    let list = super::fslab(db).args(["list", "--json"]).output().unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    runs.as_array().expect("list --json is an array").clone()
}
