//! `fslab doctor`: what this machine can do for fslab, checked before the first study. Each
//! line says ✓ (ready), ✗ (not ready, and the one thing to do) or · (a fact, nothing to do):
//! root, the file systems the host can make and those only the guest can, whether the
//! User-mode Linux guest boots here and how fast (with its vector-state check), telemetry
//! sources, cache drops, loop devices, fio, dbench, MPI, the store and the work directory.
//!
//! `fslab guest-selftest` (hidden) is what the doctor's guest runs inside itself.

use crate::cli::{DoctorArgs, TextFormat};
use crate::provision::exec::{package_of, RealExec};
use crate::provision::spec::FsType;
use crate::provision::support::{find_program, kernel_has};
use crate::runner::env::tool_version;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

mod guest;
use guest::guest_checks;
pub use guest::guest_selftest;

/// One line of the doctor's table.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked (`fs.ext4`, `guest.boot`, `fio`, …).
    pub check: String,
    /// true ✓, false ✗, None · (a fact).
    pub ok: Option<bool>,
    /// What was found.
    pub detail: String,
    /// What to do, where something is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// A measured time, where the check has one (`guest.boot`: seconds to the guest's init).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// A line without a measured time.
fn line(check: &str, ok: Option<bool>, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check {
        check: check.into(),
        ok,
        detail: detail.into(),
        fix,
        seconds: None,
    }
}

fn yes(check: &str, detail: impl Into<String>) -> Check {
    line(check, Some(true), detail, None)
}

fn no(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    line(check, Some(false), detail, Some(fix.into()))
}

fn fact(check: &str, detail: impl Into<String>) -> Check {
    line(check, None, detail, None)
}

/// Run `fslab doctor`.
pub fn run(a: DoctorArgs, db: Option<std::path::PathBuf>) -> Result<()> {
    let mem = crate::units::parse_size(&a.guest_mem)
        .map_err(|e| crate::error::usage(format!("--guest-mem {}: {e}", a.guest_mem)))?;
    let mut checks = host_checks(db);
    let guest_fs = if a.no_guest {
        checks.push(fact("guest", "not checked (--no-guest)"));
        None
    } else {
        if a.format == TextFormat::Table {
            eprintln!("booting a User-mode Linux guest to check it…");
        }
        let (c, fs) = guest_checks(mem);
        checks.extend(c);
        fs
    };
    checks.splice(2..2, fs_checks(guest_fs.as_deref()));
    match a.format {
        TextFormat::Json => {
            crate::outln!("{}", serde_json::to_string_pretty(&checks)?);
        }
        TextFormat::Table => crate::out!("{}", render(&checks)),
    }
    if checks.iter().any(|c| c.ok == Some(false)) {
        // Exit 1: something is not ready (each ✗ line says what to do).
        return Err(anyhow::Error::new(crate::error::Collective {
            code: 1,
            message: String::new(),
        }));
    }
    Ok(())
}

/// The table: a mark, the check, what was found; the fix on the next line.
fn render(checks: &[Check]) -> String {
    let width = checks.iter().map(|c| c.check.len()).max().unwrap_or(0);
    let mut s = String::new();
    for c in checks {
        let mark = match c.ok {
            Some(true) => "✓",
            Some(false) => "✗",
            None => "·",
        };
        s.push_str(&format!("{mark} {:<width$}  {}\n", c.check, c.detail));
        if let Some(fix) = &c.fix {
            s.push_str(&format!("  {:<width$}  → {fix}\n", ""));
        }
    }
    let bad = checks.iter().filter(|c| c.ok == Some(false)).count();
    s.push_str(&match bad {
        0 => "everything fslab checks is ready\n".to_string(),
        n => format!("{n} not ready (✗): each names what to do\n"),
    });
    s
}

fn host_checks(db: Option<std::path::PathBuf>) -> Vec<Check> {
    let mut v = Vec::new();
    let uname = rustix::system::uname();
    let cpu = crate::sysinfo::cpu_facts().and_then(|c| c.model);
    let cpu = cpu.unwrap_or_else(|| "an unknown CPU".into());
    let release = uname.release().to_string_lossy();
    v.push(fact("host", format!("Linux {release} on {cpu}")));
    v.push(if crate::sysinfo::is_root() {
        yes(
            "root",
            "running as root: studies can make loop devices, file systems and mounts",
        )
    } else {
        no(
            "root",
            "not root: `study run` and cold-cache repetitions need root",
            "run fslab as root (sudo -E fslab …)",
        )
    });
    // (file systems are inserted here once the guest has said what it has)
    v.push(if Path::new("/dev/loop-control").exists() {
        yes("loop devices", "/dev/loop-control is there")
    } else {
        no(
            "loop devices",
            "no /dev/loop-control: loop:SIZE devices cannot be made",
            "modprobe loop (or give studies real devices)",
        )
    });
    let drop = std::fs::OpenOptions::new()
        .write(true)
        .open(crate::runner::cache::DROP_CACHES);
    v.push(match drop {
        Ok(_) => yes("cache drops", "/proc/sys/vm/drop_caches is writable: cache = \"cold\" works"),
        Err(e) => no(
            "cache drops",
            format!("{}: {e}", crate::runner::cache::DROP_CACHES),
            "run as root outside a read-only /proc/sys, or use cache = \"none\" (figures then include the page cache)",
        ),
    });
    v.extend(telemetry_checks());
    v.push(tool("fio", "fio", "kind = \"fio\" and fslab fio"));
    v.push(dbench_check());
    v.push(mpi_check());
    let db = db.unwrap_or_else(crate::store::default_path);
    v.push(fact("store", format!("results go to {}", db.display())));
    let work = crate::provision::state::default_workdir();
    let existing = work
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    v.push(match crate::sysinfo::free_space(existing) {
        Ok(f) => {
            let free = crate::units::fmt_bytes(f.bytes);
            let line = format!("{} ({free} free for loop images)", work.display());
            fact("work directory", line)
        }
        Err(e) => no(
            "work directory",
            format!("{}: {e:#}", work.display()),
            "set FSLAB_WORKDIR or --workdir to a directory with room",
        ),
    });
    v
}

fn tool(check: &str, program: &str, for_what: &str) -> Check {
    if find_program(program).is_none() {
        return no(
            check,
            format!("{program} is missing (needed for {for_what})"),
            format!("apt-get install {program} (or scripts/install-deps)"),
        );
    }
    let version = tool_version(&RealExec, program);
    yes(check, format!("{version} (for {for_what})"))
}

fn dbench_check() -> Check {
    let client = Path::new("/usr/share/dbench/client.txt");
    if client.exists() {
        let client = client.display();
        let line =
            format!("{client} is there (dbench's own load); fslab's office load needs nothing");
        yes("dbench", line)
    } else {
        fact(
            "dbench",
            "dbench's client.txt is not installed: fslab dbench uses its generated office load (apt-get install dbench for dbench's own)",
        )
    }
}

/// `mpiexec --version`: MPICH's Hydra prints "HYDRA build details:" first and its version
/// on a later `Version:` line; Open MPI prints one line.
fn mpiexec_version() -> String {
    let first = tool_version(&RealExec, "mpiexec");
    if !first.ends_with(':') {
        return first;
    }
    let cmd = crate::provision::exec::CmdLine::new("mpiexec").args(["--version"]);
    crate::provision::exec::Exec::output(&RealExec, &cmd)
        .ok()
        .and_then(|o| {
            o.stdout.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("Version:")
                    .map(|v| v.trim().to_string())
            })
        })
        .map(|v| format!("mpiexec (MPICH Hydra) {v}"))
        .unwrap_or(first)
}

fn mpi_check() -> Check {
    if find_program("mpiexec").is_none() {
        return fact(
            "mpi",
            "no mpiexec: engines run in one process (scripts/install-deps --mpi, then cargo build --features mpi, for MPI)",
        );
    }
    let version = mpiexec_version();
    if cfg!(feature = "mpi") {
        yes("mpi", format!("{version}; this fslab is built with MPI"))
    } else {
        fact(
            "mpi",
            format!("{version} is installed, but this fslab is built without MPI (cargo build --release --features mpi)"),
        )
    }
}

fn telemetry_checks() -> Vec<Check> {
    let mut v = Vec::new();
    v.push(if std::fs::read_to_string("/proc/diskstats").is_ok() {
        yes(
            "telemetry.diskstats",
            "/proc/diskstats is readable: device I/O per phase",
        )
    } else {
        no(
            "telemetry.diskstats",
            "/proc/diskstats is not readable: no device telemetry",
            "mount /proc (a container without /proc shows no device I/O)",
        )
    });
    v.push(if std::fs::read_to_string("/proc/stat").is_ok() {
        yes(
            "telemetry.cpu",
            "/proc/stat is readable: CPU split and interference detection",
        )
    } else {
        no("telemetry.cpu", "/proc/stat is not readable", "mount /proc")
    });
    v.push(if kernel_has("ext4") {
        yes(
            "telemetry.jbd2",
            "the kernel has jbd2: ext3/ext4 journal commits per phase (/proc/fs/jbd2, while mounted)",
        )
    } else {
        fact("telemetry.jbd2", "no ext4 in this kernel: no jbd2 journal statistics")
    });
    v.push(if kernel_has("xfs") {
        yes(
            "telemetry.xfs",
            "the kernel has XFS: log writes per phase (/sys/fs/xfs/<dev>/stats, while mounted)",
        )
    } else {
        fact(
            "telemetry.xfs",
            "no XFS in this kernel: no XFS log statistics",
        )
    });
    v
}

/// One line per file system: made on the host, only in the guest, or what is missing.
fn fs_checks(guest_fs: Option<&[String]>) -> Vec<Check> {
    FsType::ALL
        .iter()
        .map(|&fs| {
            let name = fs.as_str();
            let check = format!("fs.{name}");
            let missing: Vec<&str> = fs
                .programs()
                .into_iter()
                .filter(|p| find_program(p).is_none())
                .collect();
            if !missing.is_empty() {
                let pkgs: std::collections::BTreeSet<&str> =
                    missing.iter().map(|p| package_of(p)).collect();
                return no(
                    &check,
                    format!("{} missing", missing.join(", ")),
                    format!(
                        "apt-get install {} (or scripts/install-deps)",
                        pkgs.into_iter().collect::<Vec<_>>().join(" ")
                    ),
                );
            }
            if kernel_has(name) {
                return yes(&check, "made on the host");
            }
            match guest_fs {
                Some(list) if list.iter().any(|f| f == name) => yes(
                    &check,
                    "only in the guest (the host kernel lacks it): study run --guest uml",
                ),
                Some(_) => no(
                    &check,
                    "neither the host kernel nor the guest's has it",
                    "use another file system",
                ),
                None => fact(
                    &check,
                    "not in the host kernel; the guest may have it (fslab doctor without --no-guest checks)",
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_marks_each_line_and_counts_what_is_not_ready() {
        let t = render(&[
            yes("root", "running as root"),
            no("fio", "fio is missing", "apt-get install fio"),
            fact("store", "results go to x.db"),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "✓ root   running as root");
        assert_eq!(lines[1], "✗ fio    fio is missing");
        assert_eq!(lines[2], "         → apt-get install fio");
        assert_eq!(lines[3], "· store  results go to x.db");
        assert_eq!(lines[4], "1 not ready (✗): each names what to do");
    }

    #[test]
    fn file_systems_say_host_guest_or_missing() {
        let guest = vec!["ext4".to_string(), "nilfs2".to_string(), "jfs".to_string()];
        for c in fs_checks(Some(&guest)) {
            let fs = c.check.trim_start_matches("fs.");
            let tools = FsType::ALL
                .iter()
                .find(|t| t.as_str() == fs)
                .unwrap()
                .programs()
                .into_iter()
                .all(|p| find_program(p).is_some());
            match (tools, kernel_has(fs)) {
                (false, _) => assert_eq!(c.ok, Some(false), "{c:?}"),
                (true, true) => assert_eq!(c.detail, "made on the host"),
                (true, false) => assert_eq!(c.ok, Some(guest.iter().any(|g| g == fs)), "{c:?}"),
            }
        }
    }
}
