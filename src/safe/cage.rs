//! A cage for a program fslab runs as root on a user's behalf (fio and every command its job
//! runs): the kernel, not a reading of the job, decides what it can touch.
//!
//! Built between `fork` and `exec` (`Command::pre_exec`), with system calls only:
//!
//! 1. a private mount namespace and a PID namespace (`unshare`), mount events private;
//! 2. every writable directory bound onto itself, then the whole tree made read-only,
//!    `nodev` and `nosuid` at once (`mount_setattr(2)` with `AT_RECURSIVE`, Linux 5.12),
//!    then the writable binds made writable again (still `nodev`, `nosuid`);
//! 3. a fresh tmpfs on `/dev` holding only `null`, `zero`, `random` and `urandom`, then
//!    made read-only (no other device node is usable anywhere: every other mount is `nodev`);
//! 4. a fork: the caged program becomes process 1 of its PID namespace, with a fresh
//!    read-only `/proc` that shows only its own processes (no `/proc/<pid>/root` of a process
//!    outside); the first child stays outside, forwards SIGINT/SIGTERM/SIGHUP and exits as
//!    the program did. When the program ends, the kernel kills whatever it started; when
//!    fslab dies, both die (parent-death SIGKILL), and the namespace with them;
//! 5. the capabilities that could undo any of this dropped from the bounding set and from
//!    the process (`CAP_SYS_ADMIN`, `CAP_MKNOD`, `CAP_SYS_RAWIO`, `CAP_SYS_MODULE`,
//!    `CAP_DAC_READ_SEARCH`, `CAP_SYS_PTRACE`, …: everything but the few kept below),
//!    `PR_SET_NO_NEW_PRIVS`, and every inherited descriptor but standard input, output and
//!    error closed at `exec` (no lock of fslab's lives on in the program).
//!
//! A step that fails makes the spawn fail (nothing runs uncaged as root). As a user without
//! root, the program runs with that user's rights: no namespace, but no new privileges and
//! no inherited descriptors.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// The environment variable that names the fslab process a caged program belongs to
/// (`<pid>:<start time>`), so `fslab cleanup` can stop exactly what a killed run left.
pub const OWNER_ENV: &str = "FSLAB_CAGE_OWNER";

/// Capabilities the caged program keeps: owning and writing its own files, locking memory
/// and I/O priorities, resource limits, and changing to another user (fio's `uid=`/`gid=`).
/// Nothing here mounts, makes device nodes, reaches raw devices or other processes, loads
/// code into the kernel or opens files by handle.
const KEPT_CAPS: [u32; 9] = [
    0,  // CAP_CHOWN
    1,  // CAP_DAC_OVERRIDE
    3,  // CAP_FOWNER
    4,  // CAP_FSETID
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    14, // CAP_IPC_LOCK
    23, // CAP_SYS_NICE
    24, // CAP_SYS_RESOURCE
];

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The caged program's pid, for the first child's signal forwarder.
static INNER: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = INNER.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// What the cage lets the program write, and where it starts.
#[derive(Debug, Clone)]
pub struct Cage {
    /// Directories the program may write (each with everything below it).
    pub writable: Vec<PathBuf>,
    /// Its working directory (entered again once the mounts are made, so relative paths
    /// reach the writable bind).
    pub cwd: PathBuf,
}

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path holds NUL"))
}

fn last() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn check(r: libc::c_int) -> std::io::Result<()> {
    if r < 0 {
        Err(last())
    } else {
        Ok(())
    }
}

/// Whether this process runs as root (the cage is built only then).
pub fn caged() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Cage {
    /// Make `cmd` run in this cage. `owner` is written to [`OWNER_ENV`]. The paths must be
    /// absolute and exist; `/dev` and anything below it cannot be writable (the cage
    /// replaces `/dev`).
    pub fn apply(&self, cmd: &mut Command, owner: &str) -> std::io::Result<()> {
        cmd.env(OWNER_ENV, owner);
        let root = caged();
        let mut writable = Vec::new();
        for w in &self.writable {
            if !w.is_absolute() || w.starts_with("/dev") || w == Path::new("/") {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "{} cannot be made writable in the cage (an absolute directory outside /dev, not /)",
                        w.display()
                    ),
                ));
            }
            writable.push(cstr(w)?);
        }
        let cwd = cstr(&self.cwd)?;
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and makes system calls
        // only (no allocation, no locks); every string it uses was made above.
        unsafe {
            cmd.pre_exec(move || {
                // Caged, the program and all it started die with its namespace; uncaged,
                // fio is asked to stop (it ends its jobs on SIGTERM).
                let death = if root { libc::SIGKILL } else { libc::SIGTERM };
                if libc::prctl(libc::PR_SET_PDEATHSIG, death) != 0 {
                    return Err(last());
                }
                // fslab died before the line above: do not run at all.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                if root {
                    build(&writable)?;
                    split()?;
                    // Now process 1 of the new PID namespace.
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(last());
                    }
                    let proc_flags =
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                    check(libc::mount(
                        c"proc".as_ptr(),
                        c"/proc".as_ptr(),
                        c"proc".as_ptr(),
                        proc_flags,
                        std::ptr::null(),
                    ))?;
                    check(libc::chdir(cwd.as_ptr()))?;
                    drop_caps()?;
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(last());
                }
                cloexec_from(3);
                Ok(())
            });
        }
        Ok(())
    }
}

/// Steps 1–3 (see the module header): namespaces, read-only tree, writable binds, `/dev`.
///
/// # Safety
/// Between fork and exec only.
unsafe fn build(writable: &[CString]) -> std::io::Result<()> {
    check(libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID))?;
    check(libc::mount(
        std::ptr::null(),
        c"/".as_ptr(),
        std::ptr::null(),
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ))?;
    for w in writable {
        check(libc::mount(
            w.as_ptr(),
            w.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))?;
    }
    let ro = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    setattr(c"/".as_ptr(), &ro)?;
    let rw = MountAttr {
        attr_set: 0,
        attr_clr: MOUNT_ATTR_RDONLY,
        propagation: 0,
        userns_fd: 0,
    };
    for w in writable {
        setattr(w.as_ptr(), &rw)?;
    }
    check(libc::mount(
        c"tmpfs".as_ptr(),
        c"/dev".as_ptr(),
        c"tmpfs".as_ptr(),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"mode=0755,size=64k,nr_inodes=16".as_ptr().cast(),
    ))?;
    let nodes = [
        (c"/dev/null", 3),
        (c"/dev/zero", 5),
        (c"/dev/random", 8),
        (c"/dev/urandom", 9),
    ];
    for (path, minor) in nodes {
        check(libc::mknod(
            path.as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(1, minor),
        ))?;
        // mknod applies the umask.
        check(libc::chmod(path.as_ptr(), 0o666))?;
    }
    check(libc::mount(
        std::ptr::null(),
        c"/dev".as_ptr(),
        std::ptr::null(),
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
        std::ptr::null(),
    ))
}

/// `mount_setattr(path, AT_RECURSIVE, attr)`.
///
/// # Safety
/// `path` is a NUL-terminated string.
unsafe fn setattr(path: *const libc::c_char, attr: &MountAttr) -> std::io::Result<()> {
    let r = libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path,
        libc::AT_RECURSIVE,
        attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    );
    if r < 0 {
        Err(last())
    } else {
        Ok(())
    }
}

/// Step 4: fork. The child returns (to be exec'd as process 1 of the new PID namespace);
/// this process closes every descriptor, forwards stop signals to the child, waits for it
/// and ends as it ended. It never returns.
///
/// # Safety
/// Between fork and exec only.
unsafe fn split() -> std::io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = forward as extern "C" fn(libc::c_int) as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        check(libc::sigaction(sig, &sa, std::ptr::null_mut()))?;
    }
    // A raw fork: no atfork handlers of the parent's libc run in this copy of a threaded
    // process.
    let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0);
    if pid < 0 {
        return Err(last());
    }
    if pid == 0 {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_DFL);
        }
        return Ok(());
    }
    let pid = pid as libc::pid_t;
    INNER.store(pid, Ordering::Relaxed);
    // Nothing of fslab's (its output pipes, its locks, the spawn's error pipe) stays open
    // here: fslab sees the end of fio's output when fio ends.
    if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
        for fd in 0..65536 {
            libc::close(fd);
        }
    }
    let mut status = 0;
    loop {
        let r = libc::waitpid(pid, &mut status, 0);
        if r == pid {
            break;
        }
        if r < 0 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// Step 5: capabilities. Every capability but [`KEPT_CAPS`] leaves the bounding set (so no
/// `exec` gets it back), the ambient set is emptied, and the process keeps only those.
///
/// # Safety
/// Between fork and exec only.
unsafe fn drop_caps() -> std::io::Result<()> {
    let mut keep: u64 = 0;
    for c in KEPT_CAPS {
        keep |= 1 << c;
    }
    for cap in 0..64u32 {
        if keep & (1 << cap) != 0 {
            continue;
        }
        // EINVAL: this kernel has no such capability.
        if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
            && *libc::__errno_location() != libc::EINVAL
        {
            return Err(last());
        }
    }
    if libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
        0,
        0,
    ) != 0
    {
        return Err(last());
    }
    let mut hdr = CapHeader {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    // Keep only what this process has (a container may have withheld some already).
    let mut now = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    if libc::syscall(
        libc::SYS_capget,
        &mut hdr as *mut CapHeader,
        now.as_mut_ptr(),
    ) != 0
    {
        return Err(last());
    }
    let lo = keep as u32 & now[0].permitted;
    let hi = (keep >> 32) as u32 & now[1].permitted;
    let data = [
        CapData {
            effective: lo,
            permitted: lo,
            inheritable: 0,
        },
        CapData {
            effective: hi,
            permitted: hi,
            inheritable: 0,
        },
    ];
    if libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) != 0 {
        return Err(last());
    }
    Ok(())
}

/// Mark every descriptor from `first` on close-on-exec (`close_range`, else one by one).
///
/// # Safety
/// Between fork and exec only.
unsafe fn cloexec_from(first: u32) {
    const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
    if libc::syscall(libc::SYS_close_range, first, u32::MAX, CLOSE_RANGE_CLOEXEC) != 0 {
        for fd in first as i32..65536 {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

#[cfg(test)]
#[path = "cage_tests.rs"]
mod tests;
