//! Every external command fslab runs (losetup, mkfs, tune2fs, mount, dumpe2fs, …) and every
//! write to a kernel control file (`/sys/block/*/queue/scheduler`, `/proc/sys/vm/drop_caches`)
//! goes through the [`Exec`] trait.
//!
//! The real implementation ([`RealExec`]) spawns the program; [`RecordingExec`] records the
//! command lines and answers with scripted outputs, so tests assert the exact mkfs and mount
//! lines without root (hyperfine's mock executor follows the same idea). Command lines print
//! as shell commands a user could paste, which is also how they are stored with each cell.

use super::ProvisionError;
use std::path::Path;
use std::process::Command;

pub use crate::process::{shell_quote, write_line, CmdLine, Output};

/// Runs external commands and writes kernel control files.
pub trait Exec: Send + Sync {
    /// Run a command to completion and return its output, whatever its exit status.
    /// Errors only when it could not be started (not installed, not executable).
    fn output(&self, cmd: &CmdLine) -> Result<Output, ProvisionError>;

    /// Write `value` to a kernel control file (shown as `echo VALUE > PATH`).
    fn write_file(&self, path: &Path, value: &str) -> Result<(), ProvisionError>;

    /// Run a command and fail unless it exits with status 0.
    fn run(&self, cmd: &CmdLine) -> Result<Output, ProvisionError> {
        let out = self.output(cmd)?;
        if out.status != 0 {
            return Err(ProvisionError::CommandFailed {
                cmdline: cmd.to_string(),
                code: out.status,
                stderr: first_meaningful_line(&out.stderr, &out.stdout),
            });
        }
        Ok(out)
    }
}

/// The line of a failed command's output that says what went wrong: the first non-empty
/// line of stderr (mkfs.xfs prints its reason and then the whole usage text), else stdout.
pub fn first_meaningful_line(stderr: &str, stdout: &str) -> String {
    let pick = |s: &str| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    pick(stderr)
        .or_else(|| pick(stdout))
        .unwrap_or_else(|| "no output".into())
}

/// The Debian package that provides a program, for "install it" messages.
pub fn package_of(program: &str) -> &'static str {
    match program {
        "mkfs.xfs" | "xfs_info" | "xfs_db" => "xfsprogs",
        "mkfs.btrfs" | "btrfs" => "btrfs-progs",
        "mkfs.nilfs2" | "nilfs-tune" => "nilfs-tools",
        "mkfs.jfs" | "jfs_tune" => "jfsutils",
        "mkreiserfs" | "debugreiserfs" => "reiserfsprogs",
        "linux.uml" => "user-mode-linux",
        p if p.starts_with("mkfs.ext") || ["mke2fs", "dumpe2fs", "tune2fs"].contains(&p) => {
            "e2fsprogs"
        }
        "mount" | "umount" => "mount",
        _ => "util-linux",
    }
}

/// Spawns the real programs.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealExec;

impl Exec for RealExec {
    fn output(&self, cmd: &CmdLine) -> Result<Output, ProvisionError> {
        use std::os::unix::process::CommandExt;
        // The program the checks found (`support::find_program`), not whatever `PATH` alone
        // gives: a plan that passed does not fail here for a tool it saw in /usr/sbin.
        let not_installed = || ProvisionError::NotInstalled {
            program: cmd.program.clone(),
            package: package_of(&cmd.program),
        };
        let program = if cmd.program.contains('/') {
            std::path::PathBuf::from(&cmd.program)
        } else {
            super::support::find_program(&cmd.program).ok_or_else(not_installed)?
        };
        let mut c = Command::new(&program);
        // Messages in English so that parsing and error texts are stable.
        c.args(&cmd.args).env("LC_ALL", "C");
        match &cmd.confine {
            // A tool on a cell's devices: in the cage (its own session: Ctrl-C in the
            // terminal reaches fslab only, which stops at a safe point).
            Some(conf) => {
                use crate::safe::cage::{Cage, Profile};
                let profile = if conf.sets_block_size {
                    Profile::BlockTool
                } else {
                    Profile::Tool
                };
                let cage = Cage::tool(conf.devices.clone(), conf.writable.clone(), profile);
                cage.apply(&mut c, &crate::safe::procs::my_owner_mark())
                    .map_err(|e| ProvisionError::Io(format!("cannot cage `{cmd}`: {e}")))?;
            }
            // fslab's own mechanics (mount, losetup): its own process group, for the same
            // reason, instead of killing a umount or losetup -d half-way.
            None => {
                c.process_group(0);
            }
        }
        bounded_output(&mut c).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                not_installed()
            } else {
                ProvisionError::Io(format!("cannot start `{cmd}`: {e}"))
            }
        })
    }

    fn write_file(&self, path: &Path, value: &str) -> Result<(), ProvisionError> {
        std::fs::write(path, value).map_err(|e| {
            ProvisionError::Io(format!("cannot write '{value}' to {}: {e}", path.display()))
        })
    }
}

/// Run `c` to its end with its output kept up to the bound (`process::KEEP` at each end).
fn bounded_output(c: &mut Command) -> std::io::Result<Output> {
    use std::process::Stdio;
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let out = crate::process::drain(child.stdout.take());
    let err = crate::process::drain(child.stderr.take());
    let status = child.wait()?;
    Ok(Output {
        status: status.code().unwrap_or(-1),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// A responder decides what a recorded command "printed".
pub type Responder = crate::process::Responder<CmdLine>;

/// Records command lines instead of running them; answers with a scripted [`Output`].
pub type RecordingExec = crate::process::Recording<CmdLine>;

impl Exec for RecordingExec {
    fn output(&self, cmd: &CmdLine) -> Result<Output, ProvisionError> {
        Ok(self.answer(cmd, cmd.to_string(), &[]))
    }

    fn write_file(&self, path: &Path, value: &str) -> Result<(), ProvisionError> {
        self.record(write_line(path, value), &[]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_print_as_shell() {
        let c = CmdLine::new("mount")
            .args(["-t", "ext4", "-o", "noatime,data=ordered"])
            .arg("/dev/loop3")
            .arg("/var/tmp/my dir");
        assert_eq!(
            c.to_string(),
            "mount -t ext4 -o noatime,data=ordered /dev/loop3 '/var/tmp/my dir'"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn failing_command_reports_first_stderr_line() {
        let ex = RecordingExec::with(Box::new(|_| Output {
            status: 1,
            stdout: String::new(),
            stderr: "\nLog size must be at least 64MB.\nUsage: mkfs.xfs\n".into(),
        }));
        let e = ex.run(&CmdLine::new("mkfs.xfs").arg("-f")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`mkfs.xfs -f` failed (exit 1): Log size must be at least 64MB."
        );
        assert_eq!(ex.lines(), vec!["mkfs.xfs -f"]);
    }

    #[test]
    fn real_exec_reports_missing_program_with_package() {
        let e = RealExec
            .output(&CmdLine::new("mkfs.xfs-that-does-not-exist"))
            .unwrap_err();
        assert!(matches!(e, ProvisionError::NotInstalled { .. }), "{e}");
        assert_eq!(package_of("mkfs.xfs"), "xfsprogs");
        assert_eq!(package_of("mkfs.ext4"), "e2fsprogs");
        assert_eq!(package_of("losetup"), "util-linux");
    }

    #[test]
    fn real_exec_keeps_only_the_ends_of_a_flood_of_output() {
        // 40 MiB on standard output: the first and last MiB are kept, the rest counted.
        let out = RealExec
            .run(&CmdLine::new("sh").args([
                "-c",
                "echo first; head -c 41943040 /dev/zero | tr '\\0' x; echo; echo last",
            ]))
            .unwrap();
        assert!(
            out.stdout.len() < 3 << 20,
            "{} bytes kept",
            out.stdout.len()
        );
        assert!(out.stdout.starts_with("first\n"));
        assert!(out.stdout.ends_with("\nlast\n"));
        assert!(out.stdout.contains("bytes of output not kept here]"));
    }

    #[test]
    fn real_exec_runs_and_captures() {
        let out = RealExec
            .run(&CmdLine::new("sh").args(["-c", "echo hi; echo err >&2"]))
            .unwrap();
        assert_eq!(out.stdout, "hi\n");
        assert_eq!(out.stderr, "err\n");
        let e = RealExec
            .run(&CmdLine::new("sh").args(["-c", "echo bad >&2; exit 3"]))
            .unwrap_err();
        assert!(e.to_string().contains("exit 3): bad"), "{e}");
    }
}
