//! Studies in a User-mode Linux guest (`fslab study run --guest uml[:MEM]`): file systems the
//! host kernel lacks (nilfs2, JFS, ReiserFS, which left Linux in 6.13) measured with the same
//! binary, the same study and the same store.
//!
//! One guest per study run. The host makes every cell's device as an image file (sparse, or
//! in the host's `/dev/shm` for `ram:` devices) and hands them to the guest as `ubd` block
//! devices; the guest boots with the host's root as its root (hostfs), so it runs this very
//! `fslab` on the study file and writes the results into the same database. Inside, the study
//! runs as it would on the host, with `/dev/ubdX` instead of loop devices
//! ([`FSLAB_GUEST_DEVICES`]). Consoles carry the guest's stdout and stderr to the host's, a
//! third one carries the host's stop request (Ctrl-C), a fourth the cold cache policy's
//! request to drop the *host's* page cache, which holds the image files. Everything the host
//! made for the guest is removed when the guest ends, however it ends.

use crate::plan::{GuestSpec, Study};
use crate::provision::{DeviceSpec, Journal};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set inside the guest: the guest's kind (`uml`).
pub const FSLAB_GUEST: &str = "FSLAB_GUEST";
/// Set inside the guest: its memory (`512M`).
pub const FSLAB_GUEST_MEM: &str = "FSLAB_GUEST_MEM";
/// Set inside the guest: the host's kernel release, for the environment.
pub const FSLAB_GUEST_HOST_KERNEL: &str = "FSLAB_GUEST_HOST_KERNEL";
/// Set inside the guest: the host's RAM in bytes (its page cache holds the guest's images).
pub const FSLAB_GUEST_HOST_RAM: &str = "FSLAB_GUEST_HOST_RAM";
/// Set inside the guest: `IDX.ROLE=/dev/ubdX` pairs separated by `;`, the block device of
/// each cell's `data` and `journal`.
pub const FSLAB_GUEST_DEVICES: &str = "FSLAB_GUEST_DEVICES";
/// Set inside the guest: the console through which the host drops its caches.
pub const FSLAB_GUEST_CONTROL: &str = "FSLAB_GUEST_CONTROL";

/// The most block devices a UML guest has (`ubd0` … `ubd15`).
pub const MAX_UBD: usize = 16;

/// How long the guest may take to stop after Ctrl-C before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(120);

/// Whether this process runs inside a guest that fslab booted.
pub fn inside() -> bool {
    std::env::var_os(FSLAB_GUEST).is_some()
}

/// Inside a guest: the block device of each cell's data and journal, by (cell index, role).
pub fn devices_from_env() -> Result<BTreeMap<(usize, String), PathBuf>> {
    let Ok(text) = std::env::var(FSLAB_GUEST_DEVICES) else {
        return Ok(BTreeMap::new());
    };
    parse_devices(&text).map_err(|e| anyhow::anyhow!("{FSLAB_GUEST_DEVICES}: {e}"))
}

fn parse_devices(text: &str) -> std::result::Result<BTreeMap<(usize, String), PathBuf>, String> {
    let mut m = BTreeMap::new();
    for pair in text.split(';').filter(|p| !p.is_empty()) {
        let (key, dev) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not IDX.ROLE=DEVICE"))?;
        let (idx, role) = key
            .split_once('.')
            .ok_or_else(|| format!("'{key}' is not IDX.ROLE"))?;
        let idx: usize = idx
            .parse()
            .map_err(|_| format!("'{idx}' is not a cell index"))?;
        m.insert((idx, role.to_string()), PathBuf::from(dev));
    }
    Ok(m)
}

/// Inside a guest: ask the host to write back and drop its page cache (which holds the
/// guest's image files), and wait until it has. Outside a guest: nothing.
pub fn drop_host_caches() -> Result<()> {
    let Ok(console) = std::env::var(FSLAB_GUEST_CONTROL) else {
        return Ok(());
    };
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&console)
        .with_context(|| format!("opening the host's control console {console}"))?;
    f.write_all(b"drop\n")?;
    let mut line = String::new();
    BufReader::new(f)
        .read_line(&mut line)
        .with_context(|| format!("waiting for the host on {console}"))?;
    match line.trim() {
        "ok" => Ok(()),
        other => anyhow::bail!("the host could not drop its caches: {other}"),
    }
}

/// One device the host makes for the guest.
#[derive(Debug, Clone, PartialEq)]
struct Image {
    idx: usize,
    role: &'static str,
    path: PathBuf,
    size: u64,
}

/// The images of every cell, in plan order, `ubd0` first; refuses real devices and more than
/// [`MAX_UBD`] devices.
fn images(study: &Study, dir: &Path, ram_dir: &Path) -> std::result::Result<Vec<Image>, String> {
    let mut out = Vec::new();
    for (idx, c) in study.cells.iter().enumerate() {
        let journal = match &c.fs.journal {
            Journal::External(d) => Some(d),
            Journal::Internal => None,
        };
        for (role, spec) in [("data", Some(&c.fs.data)), ("journal", journal)] {
            let Some(spec) = spec else { continue };
            let (size, base) = match spec {
                DeviceSpec::Loop(n) => (*n, dir),
                DeviceSpec::Ram(n) => (*n, ram_dir),
                DeviceSpec::Path(p) => {
                    return Err(format!(
                        "cell {}: {} is a real device; a guest study uses loop:SIZE or ram:SIZE devices, which fslab hands to the guest",
                        c.label,
                        p.display()
                    ))
                }
            };
            out.push(Image {
                idx,
                role,
                path: base.join(format!("c{idx}-{role}.img")),
                size,
            });
        }
    }
    if out.len() > MAX_UBD {
        return Err(format!(
            "the study needs {} devices but a User-mode Linux guest has at most {MAX_UBD}; split the study into smaller ones",
            out.len()
        ));
    }
    Ok(out)
}

/// `/dev/ubda` … `/dev/ubdp`.
fn ubd_name(i: usize) -> String {
    format!("/dev/ubd{}", (b'a' + i as u8) as char)
}

/// Single-quote for sh.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What the host needs to boot the guest for a study.
pub struct Boot<'a> {
    /// The validated study.
    pub study: &'a Study,
    /// The guest.
    pub spec: GuestSpec,
    /// The arguments of `fslab` inside the guest (global options, `study run FILE …`),
    /// without `--guest`.
    pub args: Vec<String>,
    /// The host's work directory: the guest's images go in `guest-PID/` below it (removed
    /// when the guest ends), the guest's own work directory is `guest-work/`.
    pub workdir: PathBuf,
}

/// The init script of the guest: mount /proc and /sys, load the modules the host kernel
/// may lack, start fslab with stdout and stderr on the first two consoles, stop it when the
/// host says so, store its exit code, halt.
fn init_script(
    exe: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    exit_file: &Path,
) -> String {
    let mut s = format!("{INIT_MARK}: the guest's init.\n");
    s.push_str("mount -t proc proc /proc\nmount -t sysfs sysfs /sys\n");
    // The host's name, so the study's claim and environment name the machine.
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    s.push_str(&format!("hostname {} 2>/dev/null\n", q(&host)));
    s.push_str("for t in 0 1 2 3; do stty -F /dev/tty$t raw -echo 2>/dev/null; done\n");
    s.push_str(
        "M=/usr/lib/uml/modules/$(uname -r)/kernel\nfor m in fs/nilfs2/nilfs2.ko drivers/block/loop.ko; do\n  [ -f \"$M/$m\" ] && insmod \"$M/$m\" 2>/dev/null\ndone\n",
    );
    for (k, v) in env {
        s.push_str(&format!("export {k}={}\n", q(v)));
    }
    s.push_str(&format!("cd {} || exit 1\n", q(&cwd.to_string_lossy())));
    let cmd: Vec<String> = std::iter::once(exe.to_string_lossy().into_owned())
        .chain(args.iter().cloned())
        .map(|a| q(&a))
        .collect();
    s.push_str(&format!(
        "{} </dev/null >/dev/tty0 2>/dev/tty1 &\nchild=$!\n",
        cmd.join(" ")
    ));
    s.push_str("( read line </dev/tty2 && kill -TERM $child ) 2>/dev/null &\nreader=$!\n");
    s.push_str("wait $child\nrc=$?\nkill $reader 2>/dev/null\n");
    s.push_str(&format!(
        "echo $rc > {}\nsync\n",
        q(&exit_file.to_string_lossy())
    ));
    s.push_str("halt -f >/dev/null 2>&1\n");
    s
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two new descriptors that nothing else owns.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error())
            .context("making a pipe for the guest's console");
    }
    // SAFETY: as above; each is owned once.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The directories the host makes for one guest; removed on drop, whatever happened.
struct GuestDirs {
    dir: PathBuf,
    ram: PathBuf,
}

impl Drop for GuestDirs {
    fn drop(&mut self) {
        for d in [&self.dir, &self.ram] {
            if d.exists() {
                if let Err(e) = std::fs::remove_dir_all(d) {
                    eprintln!("fslab: could not remove the guest's {}: {e}", d.display());
                }
            }
        }
    }
}

/// Boot a guest for a study and wait for it: returns the exit code of `fslab` inside it.
pub fn run(b: Boot<'_>) -> Result<u8> {
    let kernel = crate::provision::support::find_program("linux.uml").ok_or_else(|| {
        crate::error::usage(
            "linux.uml is missing: install the User-mode Linux kernel with scripts/install-deps --guest (apt-get install user-mode-linux)",
        )
    })?;
    let exe = std::env::current_exe().context("finding fslab's own binary")?;
    let pid = std::process::id();
    let dirs = GuestDirs {
        dir: b.workdir.join(format!("guest-{pid}")),
        ram: PathBuf::from(format!("/dev/shm/fslab-guest-{pid}")),
    };
    let images = images(b.study, &dirs.dir, &dirs.ram).map_err(crate::error::usage)?;
    std::fs::create_dir_all(&dirs.dir)
        .with_context(|| format!("creating {}", dirs.dir.display()))?;
    if images.iter().any(|i| i.path.starts_with(&dirs.ram)) {
        std::fs::create_dir_all(&dirs.ram)
            .with_context(|| format!("creating {}", dirs.ram.display()))?;
    }
    for i in &images {
        let f = std::fs::File::create(&i.path)
            .with_context(|| format!("creating the guest's image {}", i.path.display()))?;
        f.set_len(i.size)
            .with_context(|| format!("sizing {}", i.path.display()))?;
    }
    let devices: Vec<String> = images
        .iter()
        .enumerate()
        .map(|(n, i)| format!("{}.{}={}", i.idx, i.role, ubd_name(n)))
        .collect();
    let host_kernel = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let env = vec![
        (FSLAB_GUEST.to_string(), "uml".to_string()),
        (FSLAB_GUEST_MEM.to_string(), b.spec.mem_word()),
        (FSLAB_GUEST_HOST_KERNEL.to_string(), host_kernel),
        (
            FSLAB_GUEST_HOST_RAM.to_string(),
            crate::sysinfo::total_ram().to_string(),
        ),
        (FSLAB_GUEST_DEVICES.to_string(), devices.join(";")),
        (FSLAB_GUEST_CONTROL.to_string(), "/dev/tty3".to_string()),
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOME".to_string(), "/root".to_string()),
    ];
    let exit_file = dirs.dir.join("exit");
    let mut args = b.args.clone();
    args.push("--workdir".into());
    // One work directory for every guest run, so a resumed study finds its own and the
    // guest's fslab cleans up after a killed guest as it would on the host.
    args.push(b.workdir.join("guest-work").to_string_lossy().into_owned());
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let init = dirs.dir.join("init");
    std::fs::write(&init, init_script(&exe, &args, &env, &cwd, &exit_file))
        .with_context(|| format!("writing {}", init.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755))?;
    }

    // Consoles: 0 stdout, 1 stderr, 2 the stop request, 3 the cache requests; each with
    // descriptors of its own (UML polls every console's input separately).
    let null = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
    };
    let (null0, null1, null2) = (null()?, null()?, null()?);
    let (stop_r, stop_w) = pipe()?;
    let (req_r, req_w) = pipe()?; // guest → host
    let (ack_r, ack_w) = pipe()?; // host → guest
    let mut cmd = Command::new(&kernel);
    cmd.arg("quiet")
        .arg("loglevel=0")
        .arg(format!("mem={}", b.spec.mem_word()))
        .args(["root=/dev/root", "rootfstype=hostfs", "rootflags=/", "rw"]);
    for (n, i) in images.iter().enumerate() {
        cmd.arg(format!("ubd{n}={}", i.path.display()));
    }
    if images.is_empty() {
        cmd.arg("ubd0=/dev/null");
    }
    cmd.arg(format!("init={}", init.display()))
        .args([
            "con=null",
            "con0=fd:3,fd:1",
            "con1=fd:4,fd:2",
            "con2=fd:5,fd:6",
            "con3=fd:7,fd:8",
        ])
        .stdin(Stdio::null());
    let fds = [
        null0.as_raw_fd(),
        null1.as_raw_fd(),
        stop_r.as_raw_fd(),
        null2.as_raw_fd(),
        ack_r.as_raw_fd(),
        req_w.as_raw_fd(),
    ];
    // SAFETY: only async-signal-safe calls (dup2, setsid, prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Its own session: the terminal's Ctrl-C reaches fslab, which asks the guest to
            // stop; the guest dies with fslab if fslab is killed.
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // Copies above the targets first, so no target overwrites a source.
            let mut high = [0; 6];
            for (h, fd) in high.iter_mut().zip(fds) {
                *h = libc::fcntl(fd, libc::F_DUPFD, 32);
                if *h < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for (n, h) in high.iter().enumerate() {
                if libc::dup2(*h, 3 + n as i32) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(*h);
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", kernel.display()))?;
    drop((stop_r, ack_r, req_w));
    let server = std::thread::spawn(move || serve_cache_requests(req_r, ack_w));
    // Kept open until the guest ends: an end of file on a console hangs it up, and the
    // guest would lose the line before reading it.
    let mut stop = std::fs::File::from(stop_w);
    let mut stop_sent: Option<Instant> = None;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if crate::signal::interrupted() && stop_sent.is_none() {
            let _ = stop.write_all(b"stop\n");
            stop_sent = Some(Instant::now());
        }
        if stop_sent.is_some_and(|t| t.elapsed() > STOP_GRACE) {
            eprintln!(
                "fslab: the guest did not stop within {} s; killing it",
                STOP_GRACE.as_secs()
            );
            // The whole session: UML's helper processes too.
            // SAFETY: kill(2) on the process group the guest leads (setsid above).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The cache server ends when the guest's end of its console closes; a guest killed
    // above may leave it waiting, so it is not joined.
    drop(server);
    let code = std::fs::read_to_string(&exit_file)
        .ok()
        .and_then(|t| t.trim().parse::<u8>().ok());
    match code {
        Some(c) => Ok(c),
        None => Err(anyhow::anyhow!(
            "the guest ended ({status}) after {:.1} s without fslab's exit code; its output is above",
            started.elapsed().as_secs_f64()
        )),
    }
}

/// The first lines of every init script fslab writes for a guest: what proves a
/// `guest-PID` directory is fslab's.
const INIT_MARK: &str = "#!/bin/sh\n# Written by fslab study run --guest";

/// Whether a file name is one of the images the host makes (`c3-data.img`, `c0-journal.img`).
fn is_image_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('c') else {
        return false;
    };
    let Some((idx, role)) = rest.split_once('-') else {
        return false;
    };
    !idx.is_empty()
        && idx.bytes().all(|b| b.is_ascii_digit())
        && (role == "data.img" || role == "journal.img")
}

/// Remove what a killed host left for its guest in `workdir`: the images in `guest-PID/` and
/// `/dev/shm/fslab-guest-PID/` of a process that is gone, where the directory holds the init
/// script fslab wrote. Only fslab's own file names are removed; a directory with anything
/// else in it is left and named. Returns (what was done, what was left).
pub fn clean_killed_guests(workdir: &Path) -> (Vec<String>, Vec<String>) {
    clean_killed_guests_in(workdir, Path::new("/dev/shm"))
}

fn clean_killed_guests_in(workdir: &Path, shm: &Path) -> (Vec<String>, Vec<String>) {
    let (mut done, mut left) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(workdir) else {
        return (done, left);
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("guest-") else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let dir = e.path();
        let ours =
            std::fs::read_to_string(dir.join("init")).is_ok_and(|t| t.starts_with(INIT_MARK));
        if !ours || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for d in [dir.clone(), shm.join(format!("fslab-guest-{pid}"))] {
            let Ok(files) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut foreign = Vec::new();
            for f in files.flatten() {
                let n = f.file_name().to_string_lossy().into_owned();
                let mine = is_image_name(&n) || (d == dir && (n == "init" || n == "exit"));
                if mine && f.file_type().is_ok_and(|t| t.is_file()) {
                    if let Err(err) = std::fs::remove_file(f.path()) {
                        left.push(format!("{}: {err}", f.path().display()));
                    }
                } else {
                    foreign.push(n);
                }
            }
            if foreign.is_empty() {
                match std::fs::remove_dir(&d) {
                    Ok(()) => done.push(format!(
                        "removed the images of a killed guest (process {pid}): {}",
                        d.display()
                    )),
                    Err(err) => left.push(format!("{}: {err}", d.display())),
                }
            } else {
                left.push(format!(
                    "{} holds files fslab did not make ({}); left in place",
                    d.display(),
                    foreign.join(", ")
                ));
            }
        }
    }
    (done, left)
}

/// Serve the guest's requests to drop the host's caches until the guest closes its end.
fn serve_cache_requests(req: OwnedFd, ack: OwnedFd) {
    let mut ack = std::fs::File::from(ack);
    let reader = BufReader::new(std::fs::File::from(req));
    for line in reader.lines() {
        let Ok(line) = line else { break };
        if line.trim() != "drop" {
            continue;
        }
        let reply = match drop_caches() {
            Ok(()) => "ok\n".to_string(),
            Err(e) => format!("{e}\n"),
        };
        if ack.write_all(reply.as_bytes()).is_err() {
            break;
        }
    }
}

/// The host's half of the cold policy: write back, then drop page cache, dentries and inodes.
fn drop_caches() -> std::result::Result<(), String> {
    rustix::fs::sync();
    std::fs::write(super::cache::DROP_CACHES, "3")
        .map_err(|e| format!("writing {}: {e}", super::cache::DROP_CACHES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_pairs_round_trip() {
        let m = parse_devices("0.data=/dev/ubda;0.journal=/dev/ubdb;3.data=/dev/ubdc").unwrap();
        assert_eq!(m[&(0, "journal".to_string())], PathBuf::from("/dev/ubdb"));
        assert_eq!(m[&(3, "data".to_string())], PathBuf::from("/dev/ubdc"));
        assert_eq!(m.len(), 3);
        assert!(parse_devices("x.data=/dev/ubda").is_err());
        assert!(parse_devices("0data").is_err());
        assert_eq!(ubd_name(0), "/dev/ubda");
        assert_eq!(ubd_name(15), "/dev/ubdp");
    }

    #[test]
    fn the_init_script_quotes_and_reports_the_exit_code() {
        let s = init_script(
            Path::new("/usr/bin/fslab"),
            &["study".into(), "run".into(), "it's.toml".into()],
            &[("FSLAB_GUEST".into(), "uml".into())],
            Path::new("/w"),
            Path::new("/w/guest-1/exit"),
        );
        assert!(s.contains("export FSLAB_GUEST='uml'\n"));
        assert!(s.contains(
            "'/usr/bin/fslab' 'study' 'run' 'it'\\''s.toml' </dev/null >/dev/tty0 2>/dev/tty1 &"
        ));
        assert!(s.contains("echo $rc > '/w/guest-1/exit'"));
        assert!(s.contains("kill -TERM $child"));
    }

    #[test]
    fn cleanup_removes_only_a_dead_guests_own_files() {
        let work = tempfile::tempdir().unwrap();
        let shm = tempfile::tempdir().unwrap();
        // A process id above the kernel's limit (2^22) never exists.
        let dead = "99999999";
        let g = work.path().join(format!("guest-{dead}"));
        std::fs::create_dir(&g).unwrap();
        let init = init_script(Path::new("/f"), &[], &[], Path::new("/"), &g.join("exit"));
        std::fs::write(g.join("init"), init).unwrap();
        std::fs::write(g.join("c0-data.img"), b"x").unwrap();
        std::fs::write(g.join("c1-journal.img"), b"x").unwrap();
        let ram = shm.path().join(format!("fslab-guest-{dead}"));
        std::fs::create_dir(&ram).unwrap();
        std::fs::write(ram.join("c2-data.img"), b"x").unwrap();
        std::fs::write(ram.join("notes.txt"), b"mine").unwrap();
        // Not fslab's: no init it wrote.
        let other = work.path().join("guest-99999998");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("c0-data.img"), b"x").unwrap();
        // A live process's (this test's own).
        let live = work.path().join(format!("guest-{}", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        std::fs::write(live.join("init"), format!("{INIT_MARK}\n")).unwrap();
        std::fs::write(live.join("c0-data.img"), b"x").unwrap();

        let (done, left) = clean_killed_guests_in(work.path(), shm.path());
        assert!(!g.exists(), "{done:?} {left:?}");
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!ram.join("c2-data.img").exists());
        assert!(ram.join("notes.txt").exists(), "a user's file stays");
        assert!(left.iter().any(|l| l.contains("notes.txt")), "{left:?}");
        assert!(
            other.join("c0-data.img").exists(),
            "no fslab init: untouched"
        );
        assert!(
            live.join("c0-data.img").exists(),
            "a live process: untouched"
        );
        assert!(is_image_name("c12-journal.img"));
        assert!(!is_image_name("c-data.img") && !is_image_name("cx-data.img"));
    }
}
