//! `fslab cleanup` of the work directory: what killed study runs left (mounts, loop devices,
//! images, the tmpfs, directories), removed from the state file's record, newest first.
//!
//! Nothing here follows a path as written: the work directory is opened once, every run
//! directory and every recorded path is resolved beneath it without following a symbolic
//! link, `..` or crossing a mount ([`crate::safe::beneath`]), and each step acts on a name
//! inside an open directory. A mount is unmounted only when the recorded device (or, for the
//! tmpfs, a tmpfs) is what is mounted there; a loop device is detached only when its backing
//! file is the recorded image (device and inode); an image or directory is removed only when
//! its recorded device and inode match — or, killed before those were recorded, when it came
//! into being within [`CREATE_WINDOW`](crate::safe::beneath::CREATE_WINDOW) of the record (statx birth time). Before any of it, the
//! caged fio processes the run left are stopped (found by the run's owner mark).

use super::exec::Exec;
use super::loopdev;
use super::state::{lock, place, read_doc, write_doc, Entry, Resource, StateDoc, WorkDir};
use crate::safe::beneath::{self, Root};
use rustix::fd::{AsFd, OwnedFd};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a busy mount of a killed run is tried again (its processes may still be exiting).
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// What `cleanup` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CleanupReport {
    /// Actions taken, one line each (`umount /…`, `losetup -d /dev/loop3`, `rm …`).
    pub actions: Vec<String>,
    /// Runs left alone because they are still alive.
    pub alive: Vec<String>,
    /// What could not be removed, with the reason.
    pub errors: Vec<String>,
    /// The studies of the killed runs cleaned, with the results database each is recorded
    /// in (when the state file says), so they can be marked interrupted there.
    pub studies: Vec<(i64, Option<PathBuf>)>,
}

/// Take the lock of run directory `run` if nobody holds it (opened beneath, no link).
fn lock_of(run: &Root) -> Option<Result<std::fs::File, ()>> {
    let fd = rustix::fs::openat(
        run.fd(),
        "lock",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    );
    let f = std::fs::File::from(fd.ok()?);
    Some(lock(&f).map(|_| f).map_err(|_| ()))
}

/// The run directories under `runs` (real directories, not dot-named).
fn run_names(runs: &Root) -> Vec<OsString> {
    let Ok(d) = rustix::fs::Dir::read_from(runs.fd()) else {
        return Vec::new();
    };
    let mut v: Vec<OsString> = d
        .flatten()
        .filter(|e| e.file_type() == rustix::fs::FileType::Directory)
        .map(|e| {
            use std::os::unix::ffi::OsStrExt;
            std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_os_string()
        })
        .filter(|n| !n.to_string_lossy().starts_with('.'))
        .collect();
    v.sort();
    v
}

/// Remove what killed runs left in `work`. Runs whose process is gone but whose lock is
/// still held (a mkfs or mount they started is finishing) are waited for up to `wait`.
pub fn cleanup(work: &WorkDir, exec: &dyn Exec, wait: Duration) -> CleanupReport {
    let mut rep = CleanupReport::default();
    let Ok(root) = Root::open(work.root()) else {
        return rep;
    };
    let runs = match root.sub(&work.root().join("runs")) {
        Ok(r) => r,
        Err(e) if work.root().join("runs").symlink_metadata().is_ok() => {
            rep.errors.push(e);
            return rep;
        }
        Err(_) => return rep,
    };
    for name in run_names(&runs) {
        let path = runs.path().join(&name);
        let run = match runs.sub(&path) {
            Ok(r) => r,
            Err(e) => {
                rep.errors.push(e);
                continue;
            }
        };
        let doc = read_doc(path.join("state.json")).ok();
        let pid_alive = doc
            .as_ref()
            .is_some_and(|d| Path::new(&format!("/proc/{}", d.pid)).exists());
        let deadline = Instant::now() + wait;
        let lock = loop {
            match lock_of(&run) {
                Some(Ok(l)) => break Some(l),
                None => break None,
                Some(Err(())) if pid_alive || Instant::now() >= deadline => break None,
                Some(Err(())) => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        if lock.is_none() && lock_of(&run).is_some() {
            let who = doc
                .as_ref()
                .map(|d| format!("pid {}", d.pid))
                .unwrap_or_else(|| "unknown pid".into());
            rep.alive
                .push(format!("{} ({who}) is still running", path.display()));
            continue;
        }
        if let Some(study) = doc.as_ref().and_then(|d| d.study) {
            rep.studies
                .push((study, doc.as_ref().and_then(|d| d.db.clone())));
        }
        clean_run(&runs, &run, &name, doc, exec, &mut rep);
    }
    rep
}

fn clean_run(
    runs: &Root,
    run: &Root,
    name: &OsString,
    doc: Option<StateDoc>,
    exec: &dyn Exec,
    rep: &mut CleanupReport,
) {
    // Without a state file there is nothing recorded to undo, only the directory to remove.
    let mut doc = doc.unwrap_or_default();
    // fio runs in a cage that dies with fslab; whatever of it is still running (a race with
    // the kill) is stopped before its mounts are touched.
    if let Some(start) = doc.start_time {
        let mark = crate::safe::procs::owner_mark(doc.pid, start);
        match crate::safe::procs::stop_caged(&mark) {
            Ok(0) => {}
            Ok(n) => rep.actions.push(format!(
                "stopped {n} fio process(es) of the killed run {}",
                run.path().display()
            )),
            Err(e) => {
                rep.errors.push(e);
                return;
            }
        }
    }
    while let Some(entry) = doc.resources.last().cloned() {
        let done = clean_one(run, &entry, &doc, exec, rep).and_then(|()| {
            doc.resources.pop();
            write_doc(run.path(), &doc).map_err(|e| e.to_string())
        });
        if let Err(e) = done {
            rep.errors.push(e);
            return;
        }
    }
    for f in ["state.json", "state.json.tmp", "lock"] {
        let _ = rustix::fs::unlinkat(run.fd(), f, rustix::fs::AtFlags::empty());
    }
    match rustix::fs::unlinkat(runs.fd(), name.as_os_str(), rustix::fs::AtFlags::REMOVEDIR) {
        Ok(()) => rep.actions.push(format!("rmdir {}", run.path().display())),
        Err(e) => rep
            .errors
            .push(format!("cannot remove {}: {e}", run.path().display())),
    }
}

/// An entry that is not what was recorded (a symbolic link where a directory was made, …).
fn odd(path: &Path, e: std::io::Error) -> String {
    format!(
        "{}: {e} (not what fslab made there: a symbolic link or another kind of file); left alone",
        path.display()
    )
}

/// Nanoseconds since the epoch of an RFC 3339 time.
fn nanos(t: &str) -> Option<i128> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()?
        .timestamp_nanos_opt()
        .map(i128::from)
}

/// Undo one recorded resource. An error says why it was left.
fn clean_one(
    run: &Root,
    entry: &Entry,
    doc: &StateDoc,
    exec: &dyn Exec,
    rep: &mut CleanupReport,
) -> Result<(), String> {
    match &entry.res {
        Resource::Mount { path, .. } | Resource::Tmpfs { path } => {
            let Some((dir, name)) = place(run, doc, path)? else {
                return Ok(());
            };
            let mounted = beneath::mounted_at(dir.as_fd(), &name).map_err(|e| odd(path, e))?;
            let Some((_, fstype, source)) = mounted else {
                return Ok(());
            };
            // Only what was recorded is unmounted: the recorded device, or fslab's tmpfs.
            match &entry.res {
                Resource::Mount { device, .. } if Path::new(&source) != device => Err(format!(
                    "{source} is mounted at {}, not the recorded {}; left alone",
                    path.display(),
                    device.display()
                )),
                Resource::Tmpfs { .. } if fstype != "tmpfs" => Err(format!(
                    "{fstype} is mounted at {}, not fslab's tmpfs; left alone",
                    path.display()
                )),
                _ => unmount(&dir, &name, path, rep),
            }
        }
        Resource::Loop { image, .. } => {
            let Some((dir, name)) = place(run, doc, image)? else {
                return Ok(());
            };
            // The image's identity: as it is now, else as recorded when it was made.
            let now = beneath::ident_at(dir.as_fd(), &name)
                .map_err(|e| odd(image, e))?
                .filter(|(_, t)| *t == rustix::fs::FileType::RegularFile)
                .map(|(i, _)| i);
            let recorded = doc
                .resources
                .iter()
                .find(|e| matches!(&e.res, Resource::Image { path } if path == image))
                .and_then(Entry::ident);
            let Some(id) = recorded.or(now) else {
                return Ok(());
            };
            let mut r = Ok(());
            for dev in loopdev::loops_backed_by_ident(id.dev, id.ino) {
                let c = loopdev::detach_cmd(&dev);
                match exec.run(&c) {
                    Ok(_) => rep.actions.push(c.to_string()),
                    Err(e) => r = Err(e.to_string()),
                }
            }
            r
        }
        Resource::Image { path } => remove(run, doc, entry, path, beneath::Kind::File, rep),
        Resource::Dir { path } => remove(run, doc, entry, path, beneath::Kind::EmptyDir, rep),
    }
}

fn unmount(
    dir: &OwnedFd,
    name: &OsString,
    path: &Path,
    rep: &mut CleanupReport,
) -> Result<(), String> {
    // Processes of the killed run may still be exiting (their files close as they go):
    // a busy mount is tried again for a few seconds.
    let t = Instant::now();
    loop {
        match beneath::unmount_at(dir.as_fd(), name) {
            Ok(()) => break,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && t.elapsed() < BUSY_WAIT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => {
                return Err(format!(
                    "cannot unmount {}: {e}; stop what uses it (fuser -vm {}) and run fslab cleanup again",
                    path.display(),
                    path.display()
                ))
            }
        }
    }
    rep.actions.push(format!("umount {}", path.display()));
    Ok(())
}

/// Remove a recorded image or directory: the recorded identity must match; without one
/// (killed between the record and the identity), it must have been born within
/// [`CREATE_WINDOW`](crate::safe::beneath::CREATE_WINDOW) of the record.
fn remove(
    run: &Root,
    doc: &StateDoc,
    entry: &Entry,
    path: &Path,
    kind: beneath::Kind,
    rep: &mut CleanupReport,
) -> Result<(), String> {
    let Some((dir, name)) = place(run, doc, path)? else {
        return Ok(());
    };
    let expect = entry.ident();
    let left = |e| format!("{} left alone: {e}", path.display());
    if expect.is_none() {
        if beneath::ident_at(dir.as_fd(), &name)
            .map_err(|e| odd(path, e))?
            .is_none()
        {
            return Ok(());
        }
        let Some(at) = entry.at.as_deref().and_then(nanos) else {
            return Err(format!(
                "{}: its identity and the time it was recorded are unknown (an older fslab's state file), so fslab cannot prove it made it; look at it and remove it yourself",
                path.display()
            ));
        };
        beneath::born_after_intent(dir.as_fd(), &name, at).map_err(left)?;
    }
    let done = beneath::remove_at(dir.as_fd(), &name, kind, expect).map_err(left)?;
    if done == beneath::Removed::Done && kind == beneath::Kind::File {
        rep.actions.push(format!("rm {}", path.display()));
    }
    Ok(())
}
