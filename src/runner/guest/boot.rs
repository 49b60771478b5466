//! Booting `linux.uml` and serving it until it halts: its consoles (the guest's stdout and
//! stderr, the host's stop request, the guest's requests to drop the host's caches), the
//! kernel's own log (kept, shown only when the guest fails), the boot time, Ctrl-C.

use super::display::Display;
use super::images::Image;
use crate::process::Spawn;
use anyhow::{Context, Result};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the guest may take to stop after Ctrl-C before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(120);
/// How often the host's stop request is said again until the guest ends.
const STOP_AGAIN: Duration = Duration::from_secs(1);
/// Lines of the kernel's log kept for a failure message.
const LOG_LINES: usize = 400;

/// Where a guest's console output goes.
#[derive(Clone)]
pub(super) enum Sink {
    /// Straight to the host's stdout or stderr (a study's progress and report).
    Host,
    /// Into memory, returned in [`Outcome::captured`] (`fslab doctor`).
    Capture,
    /// Through the host's display of the guest's progress (see [`Display`]).
    Shown(Display),
}

/// One boot.
pub(super) struct Launch<'a> {
    /// `linux.uml`.
    pub kernel: &'a Path,
    /// Guest memory, as the kernel command line takes it (`512M`).
    pub mem_word: String,
    /// The host's directory for this guest (init script, exit code, shim).
    pub dir: &'a Path,
    /// Its block devices, `ubd0` first.
    pub images: &'a [Image],
    /// Environment of `linux.uml` itself (the shim's preload).
    pub host_env: Vec<(String, PathBuf)>,
    /// Where the guest's stdout goes.
    pub stdout: Sink,
    /// Where its stderr goes: [`Sink::Host`], or [`Sink::Shown`] (its progress lines drawn
    /// by the host).
    pub stderr: Sink,
    /// Where `linux.uml` is started and the host's caches are dropped.
    pub spawn: Arc<dyn Spawn>,
}

/// How a boot ended.
pub(super) struct Outcome {
    /// The exit code of the guest's fslab (None: the guest ended without one).
    pub code: Option<u8>,
    /// How `linux.uml` ended.
    pub status: ExitStatus,
    /// From the start to the init's first line.
    pub booted: Option<Duration>,
    /// From the start to the end.
    pub elapsed: Duration,
    /// The kernel's last lines.
    pub kernel_log: Vec<String>,
    /// The guest's stdout, with [`Sink::Capture`].
    pub captured: Vec<u8>,
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

fn null() -> Result<OwnedFd> {
    Ok(std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .context("opening /dev/null for the guest's consoles")?
        .into())
}

/// Boot, serve, wait.
pub(super) fn boot(l: Launch<'_>) -> Result<Outcome> {
    // Consoles, each with descriptors of its own (UML polls every console's input
    // separately): 0 the guest's stdout, 1 its stderr, 2 the stop request, 3 the cache
    // requests and the boot line, 4 the kernel's console (its log, with UML's own stdout and
    // stderr).
    // Every console is a pipe fslab reads, never one of fslab's own descriptors: nothing in
    // the guest holds the host's standard output or error (a guest process that outlived
    // its tracer once wrote the guest's database pages into the host's output file).
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (null0, null1, null2, null3) = (null()?, null()?, null()?, null()?);
    let (stop_r, stop_w) = pipe()?;
    let (req_r, req_w) = pipe()?; // guest → host
    let (ack_r, ack_w) = pipe()?; // host → guest
    let (log_r, log_w) = pipe()?;
    let mut cmd = command(&l);
    // Target descriptor ← source, applied in the child.
    let fds: [(i32, i32); 12] = [
        (1, log_w.as_raw_fd()),
        (2, log_w.as_raw_fd()),
        (3, null0.as_raw_fd()),
        (4, out_w.as_raw_fd()),
        (5, null1.as_raw_fd()),
        (6, err_w.as_raw_fd()),
        (7, stop_r.as_raw_fd()),
        (8, null2.as_raw_fd()),
        (9, ack_r.as_raw_fd()),
        (10, req_w.as_raw_fd()),
        (11, null3.as_raw_fd()),
        (12, log_w.as_raw_fd()),
    ];
    // The cage first: its own session (the terminal's Ctrl-C reaches fslab, which asks the
    // guest to stop) and a PID namespace whose init ends when `linux.uml` ends or fslab
    // dies, and the kernel then kills every process of the guest, traced or not.
    crate::safe::cage::Cage::guest(
        std::env::current_dir().context("reading the current directory")?,
    )
    .apply(&mut cmd, &crate::safe::procs::my_owner_mark())
    .context("caging the guest")?;
    consoles_at(&mut cmd, fds);
    let started = Instant::now();
    let mut child = l
        .spawn
        .start(cmd)
        .with_context(|| format!("starting {}", l.kernel.display()))?;
    drop((stop_r, ack_r, req_w, log_w, out_w, err_w));
    drop((null0, null1, null2, null3));
    let booted: Arc<Mutex<Option<Duration>>> = Arc::default();
    {
        let booted = Arc::clone(&booted);
        let spawn = Arc::clone(&l.spawn);
        std::thread::spawn(move || serve_requests(req_r, ack_w, started, &booted, spawn.as_ref()));
    }
    let log: Arc<Mutex<VecDeque<String>>> = Arc::default();
    let log_done = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || keep_log(log_r, &log))
    };
    let captured: Arc<Mutex<Vec<u8>>> = Arc::default();
    let (capture_done, shown_done) = outputs(&l, (out_r, err_r), &captured);
    // Kept open until the guest ends: an end of file on a console hangs it up, and the
    // guest would lose the line before reading it.
    let mut stop = std::fs::File::from(stop_w);
    let status = wait(&mut child, &mut stop)?;
    let elapsed = started.elapsed();
    let kernel_log = drain(&l, [&log_done, &capture_done, &shown_done], &log);
    let captured = captured.lock().map(|c| c.clone()).unwrap_or_default();
    let code = std::fs::read_to_string(l.dir.join(super::script::EXIT_FILE))
        .ok()
        .and_then(|t| t.trim().parse::<u8>().ok());
    let booted = booted.lock().ok().and_then(|b| *b);
    Ok(Outcome {
        code,
        status,
        booted,
        elapsed,
        kernel_log,
        captured,
    })
}

/// After the guest ended: wait (a second at most) for the readers of its consoles, close the
/// displays, and return the kernel's log.
fn drain(
    l: &Launch<'_>,
    readers: [&std::thread::JoinHandle<()>; 3],
    log: &Mutex<VecDeque<String>>,
) -> Vec<String> {
    // UML's helper processes may hold the write ends a little longer; what arrived by then
    // is all there is (the guest has halted).
    let deadline = Instant::now() + Duration::from_secs(1);
    while readers.iter().any(|h| !h.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for sink in [&l.stdout, &l.stderr] {
        if let Sink::Shown(d) = sink {
            d.close();
        }
    }
    log.lock()
        .map(|l| l.iter().cloned().collect())
        .unwrap_or_default()
}

/// In the child, put each console on its descriptor: `fds` lists (target ← source).
fn consoles_at(cmd: &mut Command, fds: [(i32, i32); 12]) {
    // SAFETY: only async-signal-safe calls (fcntl, dup2, close) between fork and exec; this
    // runs after the cage's steps, in the process that becomes `linux.uml` (the cage marks
    // inherited descriptors close-on-exec; dup2 gives the consoles new ones without it).
    unsafe {
        cmd.pre_exec(move || {
            // Copies above the targets first, so no target overwrites a source.
            let mut high = [0; 12];
            for (h, (_, src)) in high.iter_mut().zip(fds) {
                *h = libc::fcntl(src, libc::F_DUPFD, 32);
                if *h < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for (h, (target, _)) in high.iter().zip(fds) {
                if libc::dup2(*h, target) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(*h);
            }
            Ok(())
        });
    }
}

/// The threads that take the guest's stdout and stderr where the launch wants them: shown
/// (through the display), captured, or the host's own.
fn outputs(
    l: &Launch<'_>,
    (out_r, err_r): (OwnedFd, OwnedFd),
    captured: &Arc<Mutex<Vec<u8>>>,
) -> (std::thread::JoinHandle<()>, std::thread::JoinHandle<()>) {
    let capture_done = match &l.stdout {
        Sink::Shown(d) => {
            let d = d.clone();
            // The guest's stdout as it arrives, past the host's bars.
            std::thread::spawn(move || {
                each_chunk(out_r, |b| {
                    d.stdout(b);
                    true
                })
            })
        }
        Sink::Capture => {
            let captured = Arc::clone(captured);
            std::thread::spawn(move || {
                each_chunk(out_r, |b| {
                    if let Ok(mut v) = captured.lock() {
                        v.extend_from_slice(b);
                    }
                    true
                })
            })
        }
        Sink::Host => std::thread::spawn(move || copy(out_r, &mut std::io::stdout())),
    };
    let shown_done = match &l.stderr {
        Sink::Shown(d) => {
            let d = d.clone();
            std::thread::spawn(move || pass_stderr(err_r, &d))
        }
        Sink::Host | Sink::Capture => {
            std::thread::spawn(move || copy(err_r, &mut std::io::stderr()))
        }
    };
    (capture_done, shown_done)
}

/// The guest kernel's command line: its memory, the host's root, one `ubd` per image, the
/// init, the consoles on descriptors 3 to 12, and the host's variables for the guest.
fn command(l: &Launch<'_>) -> Command {
    let mut cmd = Command::new(l.kernel);
    cmd.arg(format!("mem={}", l.mem_word)).args([
        "root=/dev/root",
        "rootfstype=hostfs",
        "rootflags=/",
        "rw",
    ]);
    for (n, i) in l.images.iter().enumerate() {
        cmd.arg(format!("ubd{n}={}", i.path.display()));
    }
    if l.images.is_empty() {
        cmd.arg("ubd0=/dev/null");
    }
    cmd.arg(format!(
        "init={}",
        l.dir.join(super::script::INIT_FILE).display()
    ))
    .args([
        "con=null",
        "con0=fd:3,fd:4",
        "con1=fd:5,fd:6",
        "con2=fd:7,fd:8",
        "con3=fd:9,fd:10",
        "con4=fd:11,fd:12",
        "console=tty4",
    ])
    .stdin(Stdio::null());
    for (k, v) in &l.host_env {
        cmd.env(k, v);
    }
    cmd
}

/// Wait for the guest to end; when fslab is asked to stop, ask the guest to stop (again
/// every [`STOP_AGAIN`]) and kill it after [`STOP_GRACE`].
fn wait(
    child: &mut std::process::Child,
    stop: &mut std::fs::File,
) -> Result<std::process::ExitStatus> {
    let mut stop_sent: Option<Instant> = None;
    let mut last_sent: Option<Instant> = None;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        // Again every second: a line that comes before the guest's init listens (while it
        // boots) is lost, and the guest would run its whole study.
        if crate::signal::interrupted() && !last_sent.is_some_and(|t| t.elapsed() < STOP_AGAIN) {
            let _ = stop.write_all(b"stop\n");
            stop_sent.get_or_insert_with(Instant::now);
            last_sent = Some(Instant::now());
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
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Hand everything read from `r` to `take` as it arrives, until the end or `take` says stop.
fn each_chunk(r: OwnedFd, mut take: impl FnMut(&[u8]) -> bool) {
    let mut f = std::fs::File::from(r);
    let mut buf = [0u8; 4096];
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 || !take(&buf[..n]) {
            break;
        }
    }
}

/// Copy everything read from `r` to `to` (the host's stdout or stderr) as it arrives.
fn copy(r: OwnedFd, to: &mut dyn Write) {
    each_chunk(r, |b| to.write_all(b).and_then(|()| to.flush()).is_ok());
}

/// Hand each line of the guest's stderr to the host's display.
fn pass_stderr(r: OwnedFd, d: &Display) {
    for line in BufReader::new(std::fs::File::from(r)).split(b'\n') {
        let Ok(line) = line else { break };
        d.stderr_line(String::from_utf8_lossy(&line).trim_end_matches('\r'));
    }
}

/// Keep the kernel's last [`LOG_LINES`] lines.
fn keep_log(r: OwnedFd, log: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(std::fs::File::from(r)).split(b'\n') {
        let Ok(line) = line else { break };
        let text = String::from_utf8_lossy(&line).trim_end().to_string();
        if let Ok(mut l) = log.lock() {
            if l.len() == LOG_LINES {
                l.pop_front();
            }
            l.push_back(text);
        }
    }
}

/// Serve the guest's control console until it closes: the boot line, and requests to drop
/// the host's caches.
fn serve_requests(
    req: OwnedFd,
    ack: OwnedFd,
    started: Instant,
    booted: &Mutex<Option<Duration>>,
    spawn: &dyn Spawn,
) {
    let mut ack = std::fs::File::from(ack);
    let reader = BufReader::new(std::fs::File::from(req));
    for line in reader.lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            super::script::BOOTED => {
                if let Ok(mut b) = booted.lock() {
                    b.get_or_insert(started.elapsed());
                }
            }
            "drop" => {
                let reply = match drop_caches(spawn) {
                    Ok(()) => "ok\n".to_string(),
                    Err(e) => format!("{e}\n"),
                };
                if ack.write_all(reply.as_bytes()).is_err() {
                    break;
                }
            }
            _ => {}
        }
    }
}

/// The host's half of the cold policy: write back, then drop page cache, dentries and inodes.
fn drop_caches(spawn: &dyn Spawn) -> std::result::Result<(), String> {
    rustix::fs::sync();
    let path = Path::new(super::super::cache::DROP_CACHES);
    spawn
        .write_file(path, "3")
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Why a guest ended without fslab's exit code, in one line, from what the kernel and the
/// shim said.
pub(super) fn cause(o: &Outcome, shim: Option<&super::shim::Decision>) -> String {
    if let Some(d) = shim.filter(|d| !d.widened) {
        return format!(
            "the host's XSAVE area ({} bytes) is larger than the {} User-mode Linux keeps per thread and fslab's shim could not widen it safely ({})",
            d.host_bytes, d.uml_bytes, d.line
        );
    }
    let has = |needle: &str| o.kernel_log.iter().any(|l| l.contains(needle));
    if has("ptrace set fp regs failed") {
        return format!(
            "User-mode Linux could not set a guest thread's vector registers (the host's XSAVE area is larger than UML's buffer); the shim is {}",
            if super::shim::switched_off() {
                format!("switched off ({}=off): unset it", super::shim::SWITCH_VAR)
            } else {
                "in place but was not used: report this with the kernel's lines above".to_string()
            }
        );
    }
    if has("Out of memory") || has("oom-kill") {
        return "the guest ran out of memory: give it more (--guest uml:1G)".to_string();
    }
    if has("Kernel panic") {
        return "the guest's kernel panicked (its last lines are above)".to_string();
    }
    if o.kernel_log.is_empty() {
        return format!("{} printed nothing", "linux.uml");
    }
    "see the kernel's last lines above".to_string()
}

#[cfg(test)]
#[path = "boot_tests.rs"]
mod tests;
