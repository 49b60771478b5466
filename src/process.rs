//! The command lines of external programs, and the seam every process fslab starts for an
//! engine or a runner goes through ([`Spawn`]), a leaf of its own.
//!
//! Two seams share [`CmdLine`] and [`Output`]: `provision::exec::Exec` runs the tools of
//! provisioning to completion (mkfs, mount, losetup, …) with provisioning's errors, and
//! [`Spawn`] — this module's — starts what runs longer or needs more: fio (its job on standard
//! input, SIGINT passed on when fslab is asked to stop, in its cage), the guest kernel (its
//! consoles on descriptors), and the cache drops engines and the guest's host ask for. The
//! real implementation ([`RealSpawn`]) does it; [`RecordingSpawn`] records every command line
//! and file write instead and answers with scripted output, so tests see exactly what would
//! run, without root and without fio.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// A program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdLine {
    /// The program: a path, or a name looked up as `provision::support::find_program` does.
    pub program: String,
    /// The arguments.
    pub args: Vec<String>,
    /// For a tool run on a cell's devices (mkfs and its relatives): what its cage holds.
    /// `None` for fslab's own mechanics (mount, losetup, truncate), which act on the host.
    pub confine: Option<Confine>,
}

/// What a tool's cage holds ([`CmdLine::confined`]): the block devices it may open, the only
/// ones in its `/dev`, and the directories it may write (none for mkfs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confine {
    /// Block devices, at the paths its command line names them.
    pub devices: Vec<std::path::PathBuf>,
    /// Directories it may write.
    pub writable: Vec<std::path::PathBuf>,
    /// It must set its devices' block size (mkfs.xfs), which needs `CAP_SYS_ADMIN`.
    pub sets_block_size: bool,
}

impl CmdLine {
    /// A command with no arguments yet.
    pub fn new(program: impl Into<String>) -> CmdLine {
        CmdLine {
            program: program.into(),
            args: Vec::new(),
            confine: None,
        }
    }

    /// Run it in a cage holding only `devices` (and nothing writable): a tool that works on
    /// a cell's devices cannot reach any other, whatever its arguments say.
    pub fn confined<I, P>(mut self, devices: I) -> CmdLine
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let devices = devices.into_iter().map(|d| d.as_ref().to_path_buf());
        self.confine = Some(Confine {
            devices: devices.collect(),
            ..Confine::default()
        });
        self
    }

    /// [`CmdLine::confined`], for a tool that must set its devices' block size.
    pub fn confined_setting_block_size<I, P>(self, devices: I) -> CmdLine
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut c = self.confined(devices);
        if let Some(conf) = c.confine.as_mut() {
            conf.sets_block_size = true;
        }
        c
    }

    /// Add one argument.
    pub fn arg(mut self, a: impl AsRef<str>) -> CmdLine {
        self.args.push(a.as_ref().to_string());
        self
    }

    /// Add a path argument.
    pub fn path(self, p: &Path) -> CmdLine {
        self.arg(p.to_string_lossy())
    }

    /// Add several arguments.
    pub fn args<I, S>(mut self, it: I) -> CmdLine
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(it.into_iter().map(|s| s.as_ref().to_string()));
        self
    }
}

/// Quote a word for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:@%+$".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl fmt::Display for CmdLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shell_quote(&self.program))?;
        for a in &self.args {
            write!(f, " {}", shell_quote(a))?;
        }
        Ok(())
    }
}

/// What a finished command printed and how it exited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit status (-1 if killed by a signal).
    pub status: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// A successful output with this stdout.
    pub fn ok(stdout: impl Into<String>) -> Output {
        Output {
            stdout: stdout.into(),
            ..Output::default()
        }
    }
}

/// How a file write is shown in transcripts.
pub fn write_line(path: &Path, value: &str) -> String {
    format!(
        "echo {} > {}",
        shell_quote(value),
        shell_quote(&path.to_string_lossy())
    )
}

/// The command line of a prepared [`Command`], as a shell would show it.
pub fn line_of(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| shell_quote(&w.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts processes for engines and runners, and writes kernel control files for them.
pub trait Spawn: Send + Sync {
    /// Run a prepared command (arguments, directory, cage) to its end with `stdin` on its
    /// standard input, collecting its output. When fslab is asked to stop (Ctrl-C, SIGTERM)
    /// the process gets SIGINT as a terminal's Ctrl-C would (again each second until it
    /// ends). Errors only when it could not be started or read.
    fn run(&self, cmd: Command, stdin: &[u8]) -> io::Result<Output> {
        self.run_reading(cmd, stdin, &read_bounded)
    }

    /// As [`Spawn::run`], with standard output handed to `stdout` as it arrives (fio's
    /// status documents, one a second); what `stdout` returns is the output's `stdout`.
    fn run_reading(
        &self,
        cmd: Command,
        stdin: &[u8],
        stdout: &StdoutReader<'_>,
    ) -> io::Result<Output>;

    /// Start a prepared command (descriptors, session, environment set by the caller) and
    /// hand its child back.
    fn start(&self, cmd: Command) -> io::Result<Child>;

    /// Write `value` to a kernel control file (`echo 3 > /proc/sys/vm/drop_caches`).
    fn write_file(&self, path: &Path, value: &str) -> io::Result<()>;
}

/// Reads a process's standard output to its end and returns the text to keep.
pub type StdoutReader<'a> = dyn Fn(&mut dyn Read) -> String + Sync + 'a;

/// How much of a program's output is kept at each end: the first and the last MiB. The rest
/// is counted and said where it was cut, never held in memory (a job that printed 300 MB made
/// fslab hold 600 MB).
pub const KEEP: usize = 1 << 20;

/// Output kept up to a bound: its first `head` bytes, its last `tail` bytes, and how many
/// bytes between them were not kept.
#[derive(Debug)]
pub struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    dropped: u64,
}

impl Bounded {
    /// Keep at most `head` bytes at the start and `tail` bytes at the end.
    pub fn new(head: usize, tail: usize) -> Bounded {
        Bounded {
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            head_cap: head,
            tail_cap: tail,
            dropped: 0,
        }
    }

    /// Take more output.
    pub fn push(&mut self, mut b: &[u8]) {
        let room = self.head_cap.saturating_sub(self.head.len());
        let n = room.min(b.len());
        self.head.extend_from_slice(&b[..n]);
        b = &b[n..];
        if b.len() >= self.tail_cap {
            self.dropped += (self.tail.len() + b.len() - self.tail_cap) as u64;
            self.tail.clear();
            self.tail.extend(&b[b.len() - self.tail_cap..]);
            return;
        }
        let over = (self.tail.len() + b.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..over);
        self.dropped += over as u64;
        self.tail.extend(b);
    }

    /// Bytes that were not kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The text kept, with a line where the middle was left out.
    pub fn into_text(self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out.push_str(&format!(
                "\n[fslab: {} bytes of output not kept here]\n",
                self.dropped
            ));
        }
        let (a, b) = self.tail.as_slices();
        out.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        out
    }
}

/// Read `r` to its end, keeping its first and last [`KEEP`] bytes.
pub fn read_bounded(r: &mut dyn Read) -> String {
    let mut keep = Bounded::new(KEEP, KEEP);
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => keep.push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    keep.into_text()
}

/// Starts the real processes.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealSpawn;

impl Spawn for RealSpawn {
    fn run_reading(
        &self,
        mut cmd: Command,
        stdin: &[u8],
        stdout: &StdoutReader<'_>,
    ) -> io::Result<Output> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let pipe = child.stdout.take();
        std::thread::scope(|scope| {
            let out = scope.spawn(move || pipe.map_or_else(String::new, |mut p| stdout(&mut p)));
            let err = drain(child.stderr.take());
            let mut rest = wait_telling(&mut child, stdin)?;
            rest.stdout = out.join().unwrap_or_default();
            rest.stderr = err.join().unwrap_or_default();
            Ok(rest)
        })
    }

    fn start(&self, mut cmd: Command) -> io::Result<Child> {
        cmd.spawn()
    }

    fn write_file(&self, path: &Path, value: &str) -> io::Result<()> {
        std::fs::write(path, value)
    }
}

/// How long a process asked to stop may take before it is killed.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Feed `stdin` to `child` and wait for its end; when fslab is asked to stop, pass the
/// request on (SIGINT, again every second until it ends, SIGKILL after [`STOP_GRACE`]). The output's text is left empty
/// for the caller.
fn wait_telling(child: &mut Child, stdin: &[u8]) -> io::Result<Output> {
    if let Some(mut w) = child.stdin.take() {
        // The process may stop reading early (it refused its input): its verdict is what
        // counts, so a broken pipe is not an error here.
        let _ = w.write_all(stdin);
    }
    // A request that arrives while the process is still setting up may be lost (fio installs
    // its handlers late): it is repeated every second until the process ends. A process that
    // has not ended [`STOP_GRACE`] after the first request is killed (fio deadlocks now and
    // then in its own SIGINT handler when the signal comes early): for a caged program the
    // killed process is the cage's outer one, whose death ends its init and the namespace.
    let mut told: Option<std::time::Instant> = None;
    let mut first: Option<std::time::Instant> = None;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        let due = told.map_or(true, |t| t.elapsed() >= std::time::Duration::from_secs(1));
        if due && crate::signal::interrupted() {
            let pid = rustix::process::Pid::from_child(child);
            let past = first.get_or_insert_with(std::time::Instant::now).elapsed();
            let sig = if past >= STOP_GRACE {
                rustix::process::Signal::Kill
            } else {
                rustix::process::Signal::Int
            };
            let _ = rustix::process::kill_process(pid, sig);
            told = Some(std::time::Instant::now());
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    Ok(Output {
        status: status.code().unwrap_or(-1),
        ..Output::default()
    })
}

/// Read a child's pipe to its end on a thread of its own, keeping it up to the bound.
pub fn drain<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || r.map_or_else(String::new, |mut r| read_bounded(&mut r)))
}

/// What a [`Recording`] double answers a command with, given the command: its line
/// ([`RecordingSpawn`]) or, for provisioning's double, the [`CmdLine`].
pub type Responder<Q> = Box<dyn Fn(&Q) -> Output + Send + Sync>;

/// Records instead of starting: every command line (with what its standard input would have
/// been) and every file write, in order; [`Spawn::run`] answers with the responder's output,
/// [`Spawn::start`] refuses (there is no child to hand back).
pub type RecordingSpawn = Recording<str>;

/// The recording double of both seams: [`RecordingSpawn`], and
/// `provision::exec::RecordingExec` for provisioning's tools.
pub struct Recording<Q: ?Sized + 'static> {
    records: Mutex<Vec<(String, Vec<u8>)>>,
    responder: Responder<Q>,
}

impl<Q: ?Sized + 'static> Recording<Q> {
    /// Every command succeeds with empty output.
    pub fn new() -> Recording<Q> {
        Recording::with(Box::new(|_| Output::ok("")))
    }

    /// Commands are answered by `responder` (given the command line, or the [`CmdLine`]).
    pub fn with(responder: Responder<Q>) -> Recording<Q> {
        Recording {
            records: Mutex::new(Vec::new()),
            responder,
        }
    }

    fn records(&self) -> std::sync::MutexGuard<'_, Vec<(String, Vec<u8>)>> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record `line`, which would have read `stdin`.
    pub(crate) fn record(&self, line: String, stdin: &[u8]) {
        self.records().push((line, stdin.to_vec()));
    }

    /// Record the command `cmd` as `line` and answer it.
    pub(crate) fn answer(&self, cmd: &Q, line: String, stdin: &[u8]) -> Output {
        self.record(line, stdin);
        (self.responder)(cmd)
    }

    /// The command lines and file writes (`echo V > PATH`) recorded so far, in order.
    pub fn lines(&self) -> Vec<String> {
        self.records().iter().map(|(l, _)| l.clone()).collect()
    }

    /// What the recorded command `i` would have read on its standard input.
    pub fn stdin(&self, i: usize) -> Option<Vec<u8>> {
        self.records().get(i).map(|(_, s)| s.clone())
    }
}

impl<Q: ?Sized + 'static> Default for Recording<Q> {
    fn default() -> Self {
        Recording::new()
    }
}

impl Spawn for RecordingSpawn {
    fn run_reading(
        &self,
        cmd: Command,
        stdin: &[u8],
        stdout: &StdoutReader<'_>,
    ) -> io::Result<Output> {
        let line = line_of(&cmd);
        let mut out = self.answer(&line, line.clone(), stdin);
        // The answer's output goes through the reader, as a real process's would.
        out.stdout = stdout(&mut out.stdout.as_bytes());
        Ok(out)
    }

    fn start(&self, cmd: Command) -> io::Result<Child> {
        self.record(line_of(&cmd), &[]);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "recorded, not started",
        ))
    }

    fn write_file(&self, path: &Path, value: &str) -> io::Result<()> {
        self.record(write_line(path, value), &[]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prepared_command_prints_as_shell_and_is_recorded_with_its_input() {
        let mut c = Command::new("fio");
        c.args(["--output-format=json+", "--directory=/t/my dir", "-"]);
        let line = "fio --output-format=json+ '--directory=/t/my dir' -";
        assert_eq!(line_of(&c), line);
        let rec = RecordingSpawn::with(Box::new(|l| Output::ok(format!("ran {l}"))));
        let out = rec.run(c, b"[job]\n").unwrap();
        assert_eq!(out.stdout, format!("ran {line}"));
        let drop_caches = Path::new("/proc/sys/vm/drop_caches");
        rec.write_file(drop_caches, "3").unwrap();
        assert!(rec.start(Command::new("linux.uml")).is_err());
        let written = "echo 3 > /proc/sys/vm/drop_caches";
        assert_eq!(rec.lines(), [line, written, "linux.uml"]);
        assert_eq!(rec.stdin(0).unwrap(), b"[job]\n");
    }

    #[test]
    fn the_real_spawn_feeds_stdin_and_collects_both_outputs() {
        let mut c = Command::new("sh");
        c.args(["-c", "cat; echo err >&2; exit 3"]);
        let out = RealSpawn.run(c, b"in").unwrap();
        assert_eq!(
            (out.status, out.stdout.as_str(), out.stderr.as_str()),
            (3, "in", "err\n")
        );
    }

    #[test]
    fn small_output_is_kept_whole_and_a_large_one_by_its_ends() {
        let mut b = Bounded::new(4, 4);
        b.push(b"abc");
        assert_eq!((b.dropped(), b.into_text()), (0, "abc".to_string()));
        let mut b = Bounded::new(4, 4);
        b.push(b"abcdefgh");
        assert_eq!((b.dropped(), b.into_text()), (0, "abcdefgh".to_string()));
        let mut b = Bounded::new(4, 4);
        for chunk in [&b"abcdef"[..], b"ghij", b"k", b"lmnopqrstuvwxyz"] {
            b.push(chunk);
        }
        assert_eq!(b.dropped(), 26 - 8);
        assert_eq!(
            b.into_text(),
            "abcd\n[fslab: 18 bytes of output not kept here]\nwxyz"
        );
    }
}
