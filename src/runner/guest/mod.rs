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

mod boot;
mod display;
mod images;
mod leftovers;
pub mod probe;
mod script;
pub mod shim;

pub use images::MAX_UBD;
pub use leftovers::clean_killed_guests;

use crate::plan::{GuestSpec, Study};
use crate::process::RealSpawn;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// Set inside the guest, for a study with `[guest] calibrate`: the names of its calibration
/// studies on the host and in the guest, `HOST;GUEST` (recorded in the environment as
/// `guest_calibration_host` and `guest_calibration_guest`, which the report reads).
pub const FSLAB_GUEST_CALIBRATION: &str = "FSLAB_GUEST_CALIBRATION";

/// Set for the guest side's calibration study: its fslab prints one line, not its report
/// (the report of the study itself shows the calibration).
pub const FSLAB_GUEST_CALIBRATING: &str = "FSLAB_GUEST_CALIBRATING";

/// The guests' own work directory, below the host's (one for every guest of that work
/// directory, so a resumed study finds its runs).
pub(super) const GUEST_WORK: &str = "guest-work";

/// The calibration study's file in `guest-PID/`, written for the guest's fslab.
pub(super) const CALIBRATION_FILE: &str = "calibration.toml";

/// Set inside the guest: `1` when the host's stderr is a terminal, so the guest's fslab
/// sends its progress as data for the host to draw (`runner::progress_wire`); `0` when it
/// goes to a file or a pipe (plain lines only).
pub const FSLAB_GUEST_TERMINAL: &str = "FSLAB_GUEST_TERMINAL";

/// Whether this process runs inside a guest that fslab booted.
pub fn inside() -> bool {
    std::env::var_os(FSLAB_GUEST).is_some()
}

/// Whether progress may be drawn with terminal escape codes on stderr: never inside a guest
/// (its consoles are terminals whatever the host's stderr is; the host draws, see
/// [`stderr_wire`]), else when stderr is a terminal.
pub fn stderr_draws() -> bool {
    !inside() && std::io::stderr().is_terminal()
}

/// Whether a study's progress goes to stderr as the lines of `runner::progress_wire`: inside
/// a guest whose host's stderr is a terminal ([`FSLAB_GUEST_TERMINAL`]).
pub fn stderr_wire() -> bool {
    inside() && std::env::var(FSLAB_GUEST_TERMINAL).is_ok_and(|v| v == "1")
}

/// This kernel's release (`uname -r`): the host's, or inside a guest the guest's.
pub(super) fn kernel_release() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
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

/// What the host needs to boot the guest for a study.
pub struct Boot<'a> {
    /// The validated study.
    pub study: &'a Study,
    /// What the probe found on the host (checked before anything was measured or made).
    pub facts: probe::HostFacts,
    /// The guest.
    pub spec: GuestSpec,
    /// The arguments of `fslab` inside the guest (global options, `study run FILE …`),
    /// without `--guest`.
    pub args: Vec<String>,
    /// The host's work directory: the guest's images go in `guest-PID/` below it (removed
    /// when the guest ends), the guest's own work directory is `guest-work/`.
    pub workdir: PathBuf,
    /// The guest side of `[guest] calibrate`, run before the study.
    pub calibration: Option<GuestCalibration<'a>>,
}

/// The calibration study the guest runs before the study itself.
pub struct GuestCalibration<'a> {
    /// The derived study (`plan::calibration`).
    pub study: &'a Study,
    /// Global options and `study run`, before the file (`--db DB study run`).
    pub args: Vec<String>,
    /// Options after the file (`--resume`, `--quiet`).
    pub options: Vec<String>,
    /// The names the main study records: host side, guest side.
    pub names: (String, String),
}

/// The directories the host makes for one guest; removed on drop, whatever happened.
struct GuestDirs {
    dir: PathBuf,
    ram: PathBuf,
}

impl GuestDirs {
    /// `guest-PID/` under `base` (made now, new) and `/dev/shm/fslab-guest-PID/` (made when
    /// a `ram:` image needs it).
    fn new(base: &Path) -> Result<GuestDirs> {
        let pid = std::process::id();
        let dirs = GuestDirs {
            dir: base.join(format!("guest-{pid}")),
            ram: PathBuf::from(format!("/dev/shm/fslab-guest-{pid}")),
        };
        std::fs::create_dir(&dirs.dir)
            .with_context(|| format!("creating the guest's directory {}", dirs.dir.display()))?;
        Ok(dirs)
    }
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

/// The environment of the guest's fslab: where it runs, what the host is, where its devices
/// and consoles are, whether it may draw on a terminal.
fn guest_env(spec: &GuestSpec) -> Vec<(String, String)> {
    let terminal = u8::from(std::io::stderr().is_terminal());
    let ram = crate::sysinfo::total_ram().to_string();
    let mut env: Vec<(String, String)> = [
        (FSLAB_GUEST, "uml".to_string()),
        (FSLAB_GUEST_MEM, spec.mem_word()),
        (FSLAB_GUEST_HOST_KERNEL, kernel_release()),
        (FSLAB_GUEST_HOST_RAM, ram),
        (FSLAB_GUEST_CONTROL, "/dev/tty3".to_string()),
        (FSLAB_GUEST_TERMINAL, terminal.to_string()),
        (
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOME", "/root".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .into();
    if let Some(cols) = std::env::var_os("COLUMNS") {
        env.push(("COLUMNS".to_string(), cols.to_string_lossy().into_owned()));
    }
    env
}

/// Write the init script that runs each fslab command in the guest.
fn write_init(
    dir: &Path,
    commands: &[script::GuestCommand],
    env: &[(String, String)],
) -> Result<()> {
    let exe = std::env::current_exe().context("finding fslab's own binary")?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let init = dir.join(script::INIT_FILE);
    let text = script::init_script(&exe, commands, env, &cwd, dir);
    write_new(&init, &text, 0o755)
}

/// The error of a guest that ended without fslab's exit code: the kernel's last lines on
/// stderr, then one line with the cause.
fn failure(o: &boot::Outcome, dir: &Path) -> anyhow::Error {
    let shown: Vec<&String> = o
        .kernel_log
        .iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = &shown[shown.len().saturating_sub(12)..];
    if !tail.is_empty() {
        eprintln!("fslab: the guest kernel's last lines:");
        for l in tail {
            eprintln!("  {l}");
        }
    }
    let decision = shim::decision(dir);
    // A runtime failure, not bad input: exit 1.
    anyhow::Error::new(crate::error::Collective {
        code: 1,
        message: format!(
            "the guest ended ({}) after {:.1} s without fslab's exit code: {}",
            o.status,
            o.elapsed.as_secs_f64(),
            boot::cause(o, decision.as_ref())
        ),
    })
}

/// Write a new file in the guest's directory, with permissions `mode`.
fn write_new(path: &Path, text: &str, mode: u32) -> Result<()> {
    crate::safe::create_new(path, mode)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

/// Boot a guest for a study and wait for it: returns the exit code of `fslab` inside it.
pub fn run(b: Boot<'_>) -> Result<u8> {
    let facts = &b.facts;
    let dirs = GuestDirs::new(&b.workdir)?;
    let main = images::images(b.study, 'c', &dirs.dir, &dirs.ram).map_err(crate::error::usage)?;
    let cal = match &b.calibration {
        Some(c) => {
            images::images(c.study, 'k', &dirs.dir, &dirs.ram).map_err(crate::error::usage)?
        }
        None => Vec::new(),
    };
    images::check_count(main.len() + cal.len()).map_err(crate::error::usage)?;
    let all: Vec<images::Image> = main.iter().chain(&cal).cloned().collect();
    if all.iter().any(|i| i.path.starts_with(&dirs.ram)) {
        std::fs::create_dir(&dirs.ram)
            .with_context(|| format!("creating {}", dirs.ram.display()))?;
    }
    images::create(&all)?;
    let env = guest_env(&b.spec);
    // One work directory for every guest run, so a resumed study finds its own and the
    // guest's fslab cleans up after a killed guest as it would on the host.
    let work = b.workdir.join(GUEST_WORK).to_string_lossy().into_owned();
    let mut commands = Vec::new();
    let mut main_env = vec![(
        FSLAB_GUEST_DEVICES.to_string(),
        images::device_pairs(&main, 0),
    )];
    if let Some(c) = &b.calibration {
        let file = dirs.dir.join(CALIBRATION_FILE);
        write_new(&file, &c.study.text, 0o666)?;
        let mut args = c.args.clone();
        args.push(file.to_string_lossy().into_owned());
        args.extend(c.options.iter().cloned());
        args.extend(["--workdir".to_string(), work.clone()]);
        commands.push(script::GuestCommand {
            args,
            env: vec![
                (
                    FSLAB_GUEST_DEVICES.to_string(),
                    images::device_pairs(&cal, main.len()),
                ),
                (FSLAB_GUEST_CALIBRATING.to_string(), "1".to_string()),
            ],
        });
        main_env.push((
            FSLAB_GUEST_CALIBRATION.to_string(),
            format!("{};{}", c.names.0, c.names.1),
        ));
    }
    let mut args = b.args.clone();
    args.extend(["--workdir".to_string(), work]);
    commands.push(script::GuestCommand {
        args,
        env: main_env,
    });
    write_init(&dirs.dir, &commands, &env)?;
    // The guest sends its progress as data when the host draws (guest_env's terminal).
    let shown = if std::io::stderr().is_terminal() {
        boot::Sink::Shown(display::Display::default())
    } else {
        boot::Sink::Host
    };
    let o = boot::boot(boot::Launch {
        kernel: &facts.kernel,
        mem_word: b.spec.mem_word(),
        dir: &dirs.dir,
        images: &all,
        host_env: shim::install(&dirs.dir, &facts.kernel)?,
        stdout: shown.clone(),
        stderr: shown,
        spawn: Arc::new(RealSpawn),
    })?;
    match o.code {
        Some(c) => Ok(c),
        None => Err(failure(&o, &dirs.dir)),
    }
}

/// What `fslab doctor` learns by booting a guest.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SelfTest {
    /// What the probe found on the host.
    pub host: probe::HostFacts,
    /// From the start of `linux.uml` to the guest's init.
    pub boot_seconds: Option<f64>,
    /// From the start to the halt.
    pub total_seconds: f64,
    /// What the shim decided (None: UML never needed it).
    pub shim: Option<shim::Decision>,
    /// What the guest's fslab reported (`fslab guest-selftest`).
    pub guest: Option<serde_json::Value>,
}

/// Boot a guest of `mem` bytes that runs `fslab guest-selftest` and report what it found.
/// `Err` is one line: why the guest cannot run here.
pub fn selftest(mem: u64) -> std::result::Result<SelfTest, String> {
    let host = probe::probe(mem)?;
    let spec = GuestSpec::new(Some(&crate::provision::spec::size_word(mem)))?;
    let base = std::env::temp_dir();
    let run = || -> Result<SelfTest> {
        let dirs = GuestDirs::new(&base)?;
        let env = guest_env(&spec);
        let selftest = script::GuestCommand {
            args: vec!["guest-selftest".to_string()],
            env: Vec::new(),
        };
        write_init(&dirs.dir, &[selftest], &env)?;
        let o = boot::boot(boot::Launch {
            kernel: &host.kernel,
            mem_word: spec.mem_word(),
            dir: &dirs.dir,
            images: &[],
            host_env: shim::install(&dirs.dir, &host.kernel)?,
            stdout: boot::Sink::Capture,
            stderr: boot::Sink::Host,
            spawn: Arc::new(RealSpawn),
        })?;
        if o.code.is_none() {
            return Err(failure(&o, &dirs.dir));
        }
        let guest = serde_json::from_slice(&o.captured).ok();
        Ok(SelfTest {
            host: host.clone(),
            boot_seconds: o.booted.map(|d| d.as_secs_f64()),
            total_seconds: o.elapsed.as_secs_f64(),
            shim: shim::decision(&dirs.dir),
            guest,
        })
    };
    run().map_err(|e| format!("{e:#}"))
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
    }
}
