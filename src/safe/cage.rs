//! A cage for every program fslab runs as root on a user's behalf or for a cell (fio and
//! every command its job runs; mkfs and the tools that inspect what it made): the kernel,
//! not a reading of names, decides what it can touch.
//!
//! Built between `fork` and `exec` (`Command::pre_exec`), with system calls only:
//!
//! 1. its own session (`setsid`): nothing inside can signal fslab's process group;
//! 2. private mount, PID, network, IPC and UTS namespaces (`unshare`), mount events private:
//!    no socket of the host (unix, abstract or TCP on 127.0.0.1) can be reached, no SysV
//!    shared memory or semaphore of the host seen, only a loopback interface of its own;
//! 3. every writable directory bound onto itself, then the whole tree made read-only,
//!    `nodev` and `nosuid` at once (`mount_setattr(2)` with `AT_RECURSIVE`, Linux 5.12),
//!    then the writable binds made writable again, each bind alone (still `nodev`,
//!    `nosuid`): a mount below a writable directory keeps its read-only flag;
//! 4. a fresh tmpfs on `/dev` holding only `null`, `zero`, `random`, `urandom` and the cell's
//!    own block devices (made by device number, at the paths the command line names them),
//!    and a writable directory below `/dev/shm` if one was named ([`writable_under_dev`]:
//!    cloned with `open_tree(2)` before the tmpfs hides it, attached again with
//!    `move_mount(2)`), then made read-only: a device that is not the cell's cannot be named
//!    at all;
//! 5. a fork: a first child stays outside the new PID namespace, forwards SIGINT/SIGTERM/
//!    SIGHUP and exits as the program did; inside, process 1 is a small init of fslab's
//!    that starts the program as process 2, passes the signals on and waits. The init is
//!    tied to fslab by a pipe whose only writer is fslab: when fslab dies, for any reason,
//!    the pipe reports it and the init exits, and the kernel kills everything in the
//!    namespace — whatever users the programs switched to (a parent-death signal is
//!    forgotten when a process changes its user; the pipe is not);
//! 6. limits (locked memory 64 MiB, no real-time priority, processes per user), the
//!    capabilities that could undo any of this dropped from the bounding set and from the
//!    process — a job keeps only those its profile names ([`Profile`]), a tool none (mkfs.xfs
//!    `CAP_SYS_ADMIN` for one ioctl) —, `PR_SET_NO_NEW_PRIVS`, a seccomp filter that refuses
//!    every call that mounts, makes or enters namespaces, loads code into the kernel, or makes
//!    a unix-domain socket, and every inherited descriptor but standard input, output and
//!    error closed at `exec` (no lock of fslab's lives on in the program).
//!
//! User-mode Linux ([`Profile::Guest`]) skips steps 3 and 4: its root is the host's (hostfs)
//! and its results go to the host's store, so it sees the host's files as fslab does; the
//! rest holds, so the guest's kernel and every process it started die with `linux.uml` and
//! with fslab.
//!
//! A step that fails makes the spawn fail (nothing runs uncaged as root). As a user without
//! root, the program runs with that user's rights: no namespace, but its own session, no new
//! privileges and no inherited descriptors.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// The environment variable that names the fslab process a caged program belongs to
/// (`<pid>:<start time>`), so `fslab cleanup` can stop exactly what a killed run left.
pub const OWNER_ENV: &str = "FSLAB_CAGE_OWNER";

/// What a caged program may keep of root's powers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A job run on a user's behalf (fio): owning and writing its own files and changing to
    /// another user (fio's `uid=`/`gid=`). No locking memory past the limit, no real-time
    /// priority, no raising a limit.
    Job,
    /// A tool run on a cell's devices (mkfs, tune2fs, dumpe2fs, xfs_info, …): nothing beyond
    /// opening the devices its cage holds.
    Tool,
    /// A tool that must set its devices' block size (mkfs.xfs: `BLKBSZSET` needs
    /// `CAP_SYS_ADMIN`): that capability alone, with everything it could undo the cage with
    /// refused by the seccomp filter ([`denied`]).
    BlockTool,
    /// User-mode Linux (`fslab study run --guest`): a job's powers, and the host's files as
    /// fslab sees them (its root is the host's through hostfs, its results go to the host's
    /// store), so no read-only tree and no `/dev` of its own; everything else of the cage —
    /// above all the PID namespace whose init ends with `linux.uml` or with fslab, so no
    /// guest process ever runs on the host untraced.
    Guest,
}

impl Profile {
    /// The capabilities the program keeps.
    fn keep(self) -> &'static [u32] {
        match self {
            Profile::Job | Profile::Guest => &[
                0, // CAP_CHOWN
                1, // CAP_DAC_OVERRIDE
                3, // CAP_FOWNER
                4, // CAP_FSETID
                6, // CAP_SETGID
                7, // CAP_SETUID
            ],
            Profile::Tool => &[],
            Profile::BlockTool => &[21], // CAP_SYS_ADMIN
        }
    }
}

/// The most memory a caged program may lock (`RLIMIT_MEMLOCK`; lower if the limit fslab
/// runs under is lower).
pub const MEMLOCK_LIMIT: u64 = 64 << 20;
/// The most processes the user a caged program runs as may have (`RLIMIT_NPROC`; the
/// kernel does not count root's, so it holds once a job switched to another user).
pub const NPROC_LIMIT: u64 = 4096;

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

#[repr(C)]
#[derive(Default)]
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
#[derive(Clone, Copy, Default)]
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

/// What the cage lets the program write and open, where it starts, and what it keeps.
#[derive(Debug, Clone)]
pub struct Cage {
    /// Directories the program may write (each with everything below it).
    pub writable: Vec<PathBuf>,
    /// Its working directory (entered again once the mounts are made, so relative paths
    /// reach the writable bind).
    pub cwd: PathBuf,
    /// Block devices the program may open: the cell's own, each at its path under `/dev`.
    pub devices: Vec<PathBuf>,
    /// What it keeps of root's powers.
    pub profile: Profile,
    /// It may use io_uring (a fio job whose engine is io_uring). io_uring makes sockets and
    /// connects them without the system calls the seccomp filter sees, so a program that
    /// does not need it is refused it.
    pub io_uring: bool,
}

impl Cage {
    /// A cage for a job (fio) that may write `writable` and starts in `cwd`.
    pub fn job(writable: Vec<PathBuf>, cwd: PathBuf) -> Cage {
        Cage {
            writable,
            ..Cage::bare(Profile::Job, cwd)
        }
    }

    /// A cage with `profile` started in `cwd` that may write nothing, open no device and
    /// use no io_uring.
    fn bare(profile: Profile, cwd: PathBuf) -> Cage {
        Cage {
            writable: Vec::new(),
            cwd,
            devices: Vec::new(),
            profile,
            io_uring: false,
        }
    }

    /// The same cage, with io_uring allowed (a job whose engine needs it).
    pub fn with_io_uring(mut self, on: bool) -> Cage {
        self.io_uring = on;
        self
    }

    /// A cage for User-mode Linux ([`Profile::Guest`]), started in `cwd`.
    pub fn guest(cwd: PathBuf) -> Cage {
        Cage::bare(Profile::Guest, cwd)
    }

    /// A cage for a tool (mkfs and its relatives) that may open `devices` and write
    /// `writable`, keeping what `profile` says ([`Profile::Tool`] or [`Profile::BlockTool`]).
    pub fn tool(devices: Vec<PathBuf>, writable: Vec<PathBuf>, profile: Profile) -> Cage {
        Cage {
            writable,
            devices,
            ..Cage::bare(profile, PathBuf::from("/"))
        }
    }
}

/// The one directory below `/dev` a program may write in: the shared-memory tmpfs, which
/// every user may write already.
pub const SHM: &str = "/dev/shm";

/// Whether `dir` (absolute, resolved) may be writable in the cage although it lies below
/// `/dev`: strictly below [`SHM`] and on a tmpfs. The cage's own `/dev` hides the host's, so
/// such a directory is bound into it (Linux 5.2's `open_tree`/`move_mount`).
pub fn writable_under_dev(dir: &Path) -> bool {
    dir.starts_with(SHM) && dir != Path::new(SHM) && on_tmpfs(dir)
}

/// Whether `p` exists on a tmpfs.
pub fn on_tmpfs(p: &Path) -> bool {
    let Ok(c) = cstr(p) else { return false };
    // SAFETY: statfs writes into the zeroed struct; the path is NUL-terminated.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC
    }
}

/// The most directories below `/dev` one cage binds (fio's own directory needs one).
const DEV_BINDS: usize = 4;

/// A device node to make in the cage's `/dev`: its path, the directories above it (below
/// `/dev`) and its number.
struct Node {
    path: CString,
    parents: Vec<CString>,
    rdev: libc::dev_t,
}

/// The pipe every init of a cage watches: fslab holds its only writing end for as long as it
/// lives (close-on-exec, so no program inherits it; the processes of a cage that do not
/// `exec` close it). Made once per process.
fn tie() -> std::io::Result<(libc::c_int, libc::c_int)> {
    static TIE: std::sync::OnceLock<(libc::c_int, libc::c_int)> = std::sync::OnceLock::new();
    if let Some(t) = TIE.get() {
        return Ok(*t);
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    match TIE.set((fds[0], fds[1])) {
        Ok(()) => Ok((fds[0], fds[1])),
        // Another thread made one first: use it, close ours.
        Err(_) => {
            // SAFETY: closing the two descriptors just made.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            TIE.get().copied().ok_or_else(last)
        }
    }
}

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path holds NUL"))
}

fn last() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// The result of a call that returns 0 on success (and -1 with `errno` on failure).
fn check(r: impl Into<i64>) -> std::io::Result<()> {
    (r.into() == 0).then_some(()).ok_or_else(last)
}

/// Whether this process runs as root (the cage is built only then).
pub fn caged() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Cage {
    /// Make `cmd` run in this cage. `owner` is written to [`OWNER_ENV`]. The paths must be
    /// absolute and exist; `/dev` and anything below it cannot be writable (the cage
    /// replaces `/dev`); every device must be a block device named by a path under `/dev`
    /// without a symbolic link.
    pub fn apply(&self, cmd: &mut Command, owner: &str) -> std::io::Result<()> {
        cmd.env(OWNER_ENV, owner);
        let root = caged();
        let mut writable = Vec::new();
        // Below /dev: the directory and the ones to make for it in the cage's /dev.
        let mut under_dev: Vec<(CString, Vec<CString>)> = Vec::new();
        for w in &self.writable {
            let in_dev = w.starts_with("/dev");
            if !w.is_absolute() || (in_dev && !writable_under_dev(w)) || w == Path::new("/") {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "{} cannot be made writable in the cage (an absolute directory outside /dev, not /, or one below {SHM} on its tmpfs)",
                        w.display()
                    ),
                ));
            }
            if in_dev {
                under_dev.push((cstr(w)?, below_dev(w)?));
            }
            writable.push(cstr(w)?);
        }
        if under_dev.len() > DEV_BINDS {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("at most {DEV_BINDS} writable directories below {SHM}"),
            ));
        }
        let nodes: Vec<Node> = self
            .devices
            .iter()
            .map(|d| node(d))
            .collect::<Result<_, _>>()?;
        let cwd = cstr(&self.cwd)?;
        let keep = self.profile.keep();
        let own_files = self.profile != Profile::Guest;
        let seccomp = filter(self.io_uring);
        let (tie_r, tie_w) = if root { tie()? } else { (-1, -1) };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and makes system calls
        // only (no allocation, no locks); every string it uses was made above.
        unsafe {
            cmd.pre_exec(move || {
                // Caged, the program and all it started die with its namespace; uncaged,
                // it is asked to stop (fio ends its jobs on SIGTERM).
                let death = if root { libc::SIGKILL } else { libc::SIGTERM };
                check(libc::prctl(libc::PR_SET_PDEATHSIG, death))?;
                // fslab died before the line above: do not run at all.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                own_session()?;
                if root {
                    if own_files {
                        build(&writable, &nodes, &under_dev)?;
                    } else {
                        namespaces()?;
                    }
                    loopback_up();
                    split()?;
                    // Now process 1 of the new PID namespace.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
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
                    limits()?;
                    drop_caps(keep)?;
                }
                check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                install(&seccomp)?;
                if root {
                    // Process 1 becomes the init; the program goes on as process 2.
                    init(tie_r, tie_w)?;
                }
                cloexec_from(3);
                Ok(())
            });
        }
        Ok(())
    }
}

/// The directories from below `/dev` down to `dir` itself, in order (`/dev/shm`,
/// `/dev/shm/a`, `/dev/shm/a/b`), to make in the cage's `/dev`.
fn below_dev(dir: &Path) -> std::io::Result<Vec<CString>> {
    let mut out: Vec<CString> = dir
        .ancestors()
        .take_while(|a| *a != Path::new("/dev"))
        .map(cstr)
        .collect::<std::io::Result<_>>()?;
    out.reverse();
    Ok(out)
}

/// The device node for `dev`: a block device at a canonical path under `/dev`.
fn node(dev: &Path) -> std::io::Result<Node> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let bad = |why: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} cannot be given to the cage: {why}", dev.display()),
        )
    };
    let md = std::fs::symlink_metadata(dev)?;
    if !md.file_type().is_block_device() {
        return Err(bad(
            "not a block device (a symbolic link is resolved first)",
        ));
    }
    let rel = dev
        .strip_prefix("/dev")
        .map_err(|_| bad("not a path under /dev"))?;
    if rel
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(bad("not a plain path under /dev"));
    }
    Ok(Node {
        path: cstr(dev)?,
        // The directories above it, below `/dev`.
        parents: below_dev(dev.parent().unwrap_or(Path::new("/dev")))?,
        rdev: md.rdev() as libc::dev_t,
    })
}

/// A session of its own, so nothing inside can signal fslab's process group. A process
/// already leading a group of its own (a caller's `process_group(0)`) keeps it.
///
/// # Safety
/// Between fork and exec only.
unsafe fn own_session() -> std::io::Result<()> {
    if libc::setsid() < 0 && libc::getpgrp() != libc::getpid() {
        return Err(last());
    }
    Ok(())
}

/// Bring the namespace's own loopback interface up (best effort: without it the program
/// simply has no network at all).
///
/// # Safety
/// Between fork and exec only.
unsafe fn loopback_up() {
    let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if s < 0 {
        return;
    }
    let mut req: libc::ifreq = std::mem::zeroed();
    for (i, b) in b"lo\0".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    if libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req) == 0 {
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        libc::ioctl(s, libc::SIOCSIFFLAGS, &req);
    }
    libc::close(s);
}

/// The audit architecture of this build, as a seccomp filter sees it.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: u32 = 0;

/// System calls a caged program may not make, whatever capabilities it kept: everything
/// that mounts, unmounts or changes a mount (the read-only tree could be made writable
/// again), enters or makes namespaces, loads code or programs into the kernel, or reaches
/// files by handle — so even a tool that must keep `CAP_SYS_ADMIN` for a block-size ioctl
/// ([`Profile::BlockTool`]) cannot undo the cage with it — and io_uring unless `io_uring`
/// (its operations make and connect sockets unseen by the filter).
fn denied(io_uring: bool) -> Vec<i64> {
    let mut v = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_mount_setattr,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_pivot_root,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_open_by_handle_at,
    ];
    if !io_uring {
        v.extend([
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ]);
    }
    v
}

/// The seccomp filter every caged program runs under (it lasts across `exec`): the
/// [`denied`] calls fail with EPERM, and so does a new unix-domain socket (`socket(AF_UNIX,
/// …)`). A socket bound to a path is a file, which no network namespace hides: without this
/// a job could reach a daemon's socket on the host (a container runtime's, the init system's)
/// and have it act as root outside the cage. Abstract sockets and TCP are the network
/// namespace's already. Empty on an architecture without a known audit number (no filter).
fn filter(io_uring: bool) -> Vec<libc::sock_filter> {
    if AUDIT_ARCH == 0 {
        return Vec::new();
    }
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k: u32, jt: usize, jf: usize| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt: jt as u8,
        jf: jf as u8,
        k,
    };
    let ld = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let deny = denied(io_uring);
    let n = deny.len();
    // Layout: 0 load arch, 1 check it, 2 load nr, 3.. one check per denied call, then the
    // socket check (3+n: nr, 3+n+1: load args[0], 3+n+2: AF_UNIX), ALLOW at 3+n+3, DENY after.
    let allow = 3 + n + 3;
    let deny_at = allow + 1;
    let mut f = vec![stmt(ld, 4), jump(AUDIT_ARCH, 0, allow - 2), stmt(ld, 0)];
    for (k, nr) in deny.iter().enumerate() {
        f.push(jump(*nr as u32, deny_at - (3 + k + 1), 0));
    }
    // struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low half, little-endian).
    f.push(jump(libc::SYS_socket as u32, 0, allow - (3 + n + 1)));
    f.push(stmt(ld, 16));
    f.push(jump(libc::AF_UNIX as u32, deny_at - (3 + n + 3), 0));
    f.push(stmt(ret, libc::SECCOMP_RET_ALLOW));
    f.push(stmt(ret, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32));
    f
}

/// Install `filter` (no-op when it is empty).
///
/// # Safety
/// Between fork and exec only, after `PR_SET_NO_NEW_PRIVS`.
unsafe fn install(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    if filter.is_empty() {
        return Ok(());
    }
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    check(libc::prctl(
        libc::PR_SET_SECCOMP,
        libc::SECCOMP_MODE_FILTER,
        &prog as *const libc::sock_fprog,
    ))
}

/// Step 6's limits: locked memory, real-time priority, processes per user.
///
/// # Safety
/// Between fork and exec only.
unsafe fn limits() -> std::io::Result<()> {
    // Only ever lowered: raising a hard limit needs CAP_SYS_RESOURCE, which a container may
    // have withheld, and a lower limit set by the user stays.
    let set = |res, n: u64| {
        let mut now: libc::rlimit = std::mem::zeroed();
        check(libc::getrlimit(res, &mut now))?;
        let n = (n as libc::rlim_t).min(now.rlim_max);
        let l = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        check(libc::setrlimit(res, &l))
    };
    set(libc::RLIMIT_MEMLOCK, MEMLOCK_LIMIT)?;
    set(libc::RLIMIT_RTPRIO, 0)?;
    set(libc::RLIMIT_NPROC, NPROC_LIMIT)
}

/// Step 2: the namespaces, mount events private (nothing mounted inside reaches the host).
///
/// # Safety
/// Between fork and exec only.
unsafe fn namespaces() -> std::io::Result<()> {
    check(libc::unshare(
        libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS,
    ))?;
    check(libc::mount(
        std::ptr::null(),
        c"/".as_ptr(),
        std::ptr::null(),
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ))
}

/// Steps 2–4 (see the module header): namespaces, read-only tree, writable binds, `/dev`
/// (with the writable directories `under_dev` bound into it again, each with the directories
/// to make for it).
///
/// # Safety
/// Between fork and exec only.
unsafe fn build(
    writable: &[CString],
    devices: &[Node],
    under_dev: &[(CString, Vec<CString>)],
) -> std::io::Result<()> {
    namespaces()?;
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
        ..MountAttr::default()
    };
    setattr(c"/".as_ptr(), &ro, libc::AT_RECURSIVE)?;
    let rw = MountAttr {
        attr_clr: MOUNT_ATTR_RDONLY,
        ..MountAttr::default()
    };
    // Only the bind itself becomes writable: a mount below a writable directory (a
    // read-only one among them) stays read-only.
    for w in writable {
        setattr(w.as_ptr(), &rw, 0)?;
    }
    // A copy of each writable bind below /dev, as it is now (writable, nodev, nosuid), taken
    // before the new /dev hides it.
    let mut clones = [-1; DEV_BINDS];
    for ((dir, _), fd) in under_dev.iter().zip(clones.iter_mut()) {
        let r = libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            dir.as_ptr(),
            libc::OPEN_TREE_CLONE
                | libc::OPEN_TREE_CLOEXEC as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint,
        );
        if r < 0 {
            return Err(last());
        }
        *fd = r as libc::c_int;
    }
    check(libc::mount(
        c"tmpfs".as_ptr(),
        c"/dev".as_ptr(),
        c"tmpfs".as_ptr(),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"mode=0755,size=64k,nr_inodes=256".as_ptr().cast(),
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
    for n in devices {
        mkdirs(&n.parents)?;
        check(libc::mknod(n.path.as_ptr(), libc::S_IFBLK | 0o600, n.rdev))?;
    }
    for ((dir, parents), fd) in under_dev.iter().zip(clones) {
        mkdirs(parents)?;
        check(libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            dir.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        ))?;
        libc::close(fd);
    }
    check(libc::mount(
        std::ptr::null(),
        c"/dev".as_ptr(),
        std::ptr::null(),
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
        std::ptr::null(),
    ))
}

/// Make each directory of `dirs` (in order, parents first) that does not exist yet.
///
/// # Safety
/// Between fork and exec only.
unsafe fn mkdirs(dirs: &[CString]) -> std::io::Result<()> {
    for p in dirs {
        if libc::mkdir(p.as_ptr(), 0o755) != 0 && *libc::__errno_location() != libc::EEXIST {
            return Err(last());
        }
    }
    Ok(())
}

/// `mount_setattr(path, flags, attr)`.
///
/// # Safety
/// `path` is a NUL-terminated string.
unsafe fn setattr(
    path: *const libc::c_char,
    attr: &MountAttr,
    flags: libc::c_int,
) -> std::io::Result<()> {
    check(libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path,
        flags,
        attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    ))
}

/// Step 5, the first fork. The child returns (to become process 1 of the new PID namespace);
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

extern "C" fn noop(_: libc::c_int) {}

/// Forward a stop signal to the program (process 2); if the program changed to a user this
/// init may not signal, the init ends instead, and the namespace with it.
extern "C" fn forward_or_end(sig: libc::c_int) {
    let pid = INNER.load(Ordering::Relaxed);
    // SAFETY: kill(2) and _exit(2) are async-signal-safe.
    unsafe {
        if pid > 0 && libc::kill(pid, sig) != 0 {
            libc::_exit(128 + sig);
        }
    }
}

/// Step 5, the init: fork the program as process 2 (the child returns, to be exec'd) and
/// stay as process 1: pass stop signals on, reap, and end as the program ended — or at once
/// when `tie_r` reports that fslab, its only writer, is gone. When process 1 ends, the kernel
/// kills everything left in the namespace. It never returns.
///
/// # Safety
/// Between fork and exec only.
unsafe fn init(tie_r: libc::c_int, tie_w: libc::c_int) -> std::io::Result<()> {
    // Only fslab may hold the writing end, or the pipe would never report its end.
    libc::close(tie_w);
    let mut chld: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut chld);
    libc::sigaddset(&mut chld, libc::SIGCHLD);
    let mut before: libc::sigset_t = std::mem::zeroed();
    check(libc::sigprocmask(libc::SIG_BLOCK, &chld, &mut before))?;
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = noop as extern "C" fn(libc::c_int) as *const () as usize;
    libc::sigemptyset(&mut sa.sa_mask);
    check(libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut()))?;
    let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0);
    if pid < 0 {
        return Err(last());
    }
    if pid == 0 {
        // The program: no tie, the parent's signal mask and default dispositions.
        libc::close(tie_r);
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        check(libc::sigprocmask(
            libc::SIG_SETMASK,
            &before,
            std::ptr::null_mut(),
        ))?;
        return Ok(());
    }
    let pid = pid as libc::pid_t;
    INNER.store(pid, Ordering::Relaxed);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = forward_or_end as extern "C" fn(libc::c_int) as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
    // Nothing of fslab's stays open here but the tie.
    if tie_r > 0 {
        libc::syscall(libc::SYS_close_range, 0u32, (tie_r - 1) as u32, 0u32);
    }
    libc::syscall(libc::SYS_close_range, (tie_r + 1) as u32, u32::MAX, 0u32);
    let mut open: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut open);
    loop {
        loop {
            let mut status = 0;
            let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
            if r == pid {
                if libc::WIFSIGNALED(status) {
                    // Process 1 cannot raise a default-action signal on itself: the exit
                    // status says it, as a shell's would.
                    libc::_exit(128 + libc::WTERMSIG(status));
                }
                libc::_exit(libc::WEXITSTATUS(status));
            }
            if r <= 0 {
                break;
            }
        }
        let mut fds = [libc::pollfd {
            fd: tie_r,
            events: libc::POLLIN,
            revents: 0,
        }];
        // SIGCHLD (and the stop signals) interrupt the wait; nothing else wakes it but the
        // tie's end.
        let r = libc::ppoll(fds.as_mut_ptr(), 1, std::ptr::null(), &open);
        if r > 0 && fds[0].revents != 0 {
            // Nobody writes to the tie: readable or hung up means fslab has gone.
            libc::_exit(137);
        }
    }
}

/// Step 6, capabilities. Every capability but `keep` leaves the bounding set (so no `exec`
/// gets it back), the ambient set is emptied, and the process keeps only those.
///
/// # Safety
/// Between fork and exec only.
unsafe fn drop_caps(kept: &[u32]) -> std::io::Result<()> {
    let keep: u64 = kept.iter().fold(0, |k, c| k | 1 << c);
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
    check(libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
        0,
        0,
    ))?;
    let mut hdr = CapHeader {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    // Keep only what this process has (a container may have withheld some already).
    let mut now = [CapData::default(); 2];
    check(libc::syscall(
        libc::SYS_capget,
        &mut hdr as *mut CapHeader,
        now.as_mut_ptr(),
    ))?;
    let lo = keep as u32 & now[0].permitted;
    let hi = (keep >> 32) as u32 & now[1].permitted;
    let data = [lo, hi].map(|set| CapData {
        effective: set,
        permitted: set,
        inheritable: 0,
    });
    check(libc::syscall(
        libc::SYS_capset,
        &mut hdr as *mut CapHeader,
        data.as_ptr(),
    ))
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
