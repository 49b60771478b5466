//! The work directory fslab owns and the state file of every run in it.
//!
//! Layout: `<workdir>/runs/<pid>-<millis>/` holds `lock`, `state.json`, `images/` (sparse
//! loop images), `mnt/` (mount points) and `ram/` (a tmpfs for `ram:` devices). Every
//! resource (image, loop device, mount, tmpfs, directory) is written to `state.json` —
//! atomically, with fsync — *before* it is made, and removed from it after it is torn down.
//!
//! Images and directories get their device and inode numbers recorded right after they are
//! made (images are created `O_CREAT | O_EXCL`, so a file planted at the path is never
//! adopted), and are removed only when those still match.
//!
//! A live run holds an exclusive `flock` on `lock`. The descriptor is inherited by the mkfs
//! and mount commands it spawns (never by fio, whose cage closes it), so the lock is only
//! free once the run and every mkfs/mount it started are gone. `fslab cleanup` (and the start
//! of every study run) takes the lock of each run directory; a free lock means the run was
//! killed, and exactly the resources in its state file are removed, newest first (see
//! [`super::state_cleanup`]). Every path is resolved beneath the work directory without
//! following a symbolic link or `..`; nothing outside the run directory is touched.

use super::ProvisionError;
use crate::safe::beneath;
use rustix::fd::AsFd;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One thing a run made and must remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Resource {
    /// A directory fslab created (mount points, image directories).
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// A sparse image file.
    Image {
        /// The image.
        path: PathBuf,
    },
    /// A loop device over an image; `device` is known only after losetup returned.
    Loop {
        /// The backing image.
        image: PathBuf,
        /// The device, once attached.
        device: Option<PathBuf>,
    },
    /// A mounted file system.
    Mount {
        /// The mount point.
        path: PathBuf,
        /// The device mounted there.
        device: PathBuf,
    },
    /// The tmpfs that holds `ram:` device files.
    Tmpfs {
        /// The mount point.
        path: PathBuf,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) id: u64,
    #[serde(flatten)]
    pub(super) res: Resource,
    /// When it was recorded, before it was made (RFC 3339, nanoseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) at: Option<String>,
    /// Device and inode numbers, recorded right after it was made (images, directories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) dev: Option<u64>,
    /// See `dev`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) ino: Option<u64>,
}

impl Entry {
    /// The identity recorded after it was made.
    pub(super) fn ident(&self) -> Option<beneath::Ident> {
        Some(beneath::Ident {
            dev: self.dev?,
            ino: self.ino?,
        })
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct StateDoc {
    pub(super) version: u32,
    pub(super) pid: u32,
    /// The run's start time (`/proc/<pid>/stat` field 22): with `pid`, the owner mark of the
    /// fio processes it ran in their cage (absent in older state files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) start_time: Option<u64>,
    pub(super) started_at: String,
    pub(super) study: Option<i64>,
    /// The results database the study is recorded in, so `fslab cleanup` can mark it
    /// interrupted there whatever `--db` it is given (absent in older state files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) db: Option<PathBuf>,
    pub(super) next_id: u64,
    pub(super) resources: Vec<Entry>,
}

/// The work directory.
#[derive(Debug, Clone)]
pub struct WorkDir {
    root: PathBuf,
}

/// The default work directory: `$FSLAB_WORKDIR`, else `/var/tmp/fslab`.
pub fn default_workdir() -> PathBuf {
    std::env::var_os("FSLAB_WORKDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/fslab"))
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> ProvisionError {
    move |e| ProvisionError::Io(format!("{what}: {e}"))
}

impl WorkDir {
    /// A work directory at `root` (created when a run starts). A relative path is made
    /// absolute, so state files and cleanup agree on every path.
    pub fn new(root: impl Into<PathBuf>) -> WorkDir {
        let root: PathBuf = root.into();
        let root = std::fs::canonicalize(&root)
            .or_else(|_| std::path::absolute(&root))
            .unwrap_or(root);
        WorkDir { root }
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// Start a run: make its directory, take its lock, write an empty state file.
    pub fn start_run(&self, study: Option<i64>) -> Result<Arc<RunDir>, ProvisionError> {
        let runs = self.runs();
        std::fs::create_dir_all(&runs).map_err(io(format!(
            "cannot create work directory {} (choose another with --workdir)",
            runs.display()
        )))?;
        let root = std::fs::canonicalize(&runs).map_err(io(format!("{}", runs.display())))?;
        let millis = chrono::Utc::now().timestamp_millis();
        let name = format!("{}-{millis}", std::process::id());
        // Made under a dot name and renamed once locked, so a concurrent cleanup never sees
        // a run directory without its lock.
        let tmp = root.join(format!(".{name}"));
        let path = root.join(&name);
        std::fs::create_dir(&tmp).map_err(io(format!("cannot create {}", tmp.display())))?;
        let lock = create_new(&tmp.join("lock"), 0o644)
            .map_err(io(format!("lock in {}", tmp.display())))?;
        self::lock(&lock)
            .map_err(|e| ProvisionError::Io(format!("cannot lock {}: {e}", tmp.display())))?;
        // Children (mkfs, mount) inherit the descriptor: the lock outlives us until they exit.
        rustix::io::fcntl_setfd(&lock, rustix::io::FdFlags::empty())
            .map_err(|e| ProvisionError::Io(format!("fcntl on lock: {e}")))?;
        std::fs::rename(&tmp, &path).map_err(io(format!("cannot rename {}", tmp.display())))?;
        let run = RunDir {
            path,
            work_root: self.root.clone(),
            _lock: lock,
            doc: Mutex::new(StateDoc {
                version: 1,
                pid: std::process::id(),
                start_time: crate::safe::procs::start_time(std::process::id()).map(|(s, _)| s),
                started_at: crate::units::timestamp_now(),
                study,
                next_id: 1,
                ..StateDoc::default()
            }),
        };
        run.persist()?;
        Ok(Arc::new(run))
    }

    /// Run directories present (live or left by killed runs).
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.runs())
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
                    .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The study ids of runs that are alive right now.
    pub fn live_studies(&self) -> Vec<(i64, u32)> {
        self.run_dirs()
            .into_iter()
            // Alive: its lock is held (or cannot be taken).
            .filter(|d| !File::open(d.join("lock")).is_ok_and(|f| lock(&f).is_ok()))
            .filter_map(|d| read_doc(d.join("state.json")).ok())
            .filter_map(|doc| doc.study.map(|s| (s, doc.pid)))
            .collect()
    }
}

/// The open parent of `path` beneath the run directory `run`, and its name; `None` when a
/// directory on the way is gone (nothing is at `path`). The one mount crossed is the run's
/// own tmpfs (`ram/`, recorded in `doc`) for the files inside it.
pub(super) fn place(
    run: &beneath::Root,
    doc: &StateDoc,
    path: &Path,
) -> Result<Option<(rustix::fd::OwnedFd, std::ffi::OsString)>, String> {
    let tmpfs = doc.resources.iter().find_map(|e| match &e.res {
        Resource::Tmpfs { path: t } if path.starts_with(t) && path != t => Some(t),
        _ => None,
    });
    match tmpfs {
        // Unmounted already: what was in it is gone with it.
        Some(t) => match run.mount_root(t) {
            Ok(m) => m.parent_if_any(path),
            Err(_)
                if !matches!(
                    run.parent_if_any(t)?
                        .map(|(d, n)| beneath::mounted_at(d.as_fd(), &n)),
                    Some(Ok(Some(_)))
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        },
        None => run.parent_if_any(path),
    }
}

pub(super) use crate::safe::create_new;

pub(super) fn read_doc(p: PathBuf) -> Result<StateDoc, String> {
    let t = crate::safe::input::read_text_limited(
        &p,
        crate::safe::input::RECORD_LIMIT,
        "a run's state file",
    )
    .map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&t).map_err(|e| format!("{} is not a valid state file: {e}", p.display()))
}

/// Take the lock of a run directory's open `lock` file if nobody holds it (held until the
/// file is closed).
pub(super) fn lock(f: &File) -> rustix::io::Result<()> {
    rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive)
}

/// A live run's directory and state file.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    work_root: PathBuf,
    _lock: File,
    doc: Mutex<StateDoc>,
}

impl RunDir {
    /// The run directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state document, locked.
    fn doc(&self) -> std::sync::MutexGuard<'_, StateDoc> {
        self.doc.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn persist(&self) -> Result<(), ProvisionError> {
        write_doc(&self.path, &self.doc())
    }

    /// Change the state document with `f`, then write it.
    fn edit(&self, f: impl FnOnce(&mut StateDoc)) -> Result<(), ProvisionError> {
        f(&mut self.doc());
        self.persist()
    }

    /// Change the entry of resource `id` with `f` (if it is still recorded), then write it.
    fn edit_entry(&self, id: u64, f: impl FnOnce(&mut Entry)) -> Result<(), ProvisionError> {
        self.edit(|doc| doc.resources.iter_mut().find(|e| e.id == id).map_or((), f))
    }

    /// Record a resource before making it; returns its id.
    pub fn record(&self, res: Resource) -> Result<u64, ProvisionError> {
        let mut id = 0;
        self.edit(|doc| {
            id = doc.next_id;
            doc.next_id += 1;
            doc.resources.push(Entry {
                id,
                res,
                at: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)),
                dev: None,
                ino: None,
            });
        })?;
        Ok(id)
    }

    /// Replace a recorded resource (a loop device's name once known).
    pub fn update(&self, id: u64, res: Resource) -> Result<(), ProvisionError> {
        self.edit_entry(id, |e| e.res = res)
    }

    /// This run's directory, opened beneath the work directory (no symbolic link, no `..`).
    fn open_beneath(&self) -> Result<beneath::Root, ProvisionError> {
        let work = beneath::Root::open(&self.work_root)
            .map_err(|e| ProvisionError::Io(format!("{}: {e}", self.work_root.display())))?;
        work.sub(&self.path)
            .map_err(|e| ProvisionError::Io(format!("{}: {e}", self.path.display())))
    }

    /// The open parent of `path` beneath this run's directory, and its name.
    fn place(
        &self,
        path: &Path,
    ) -> Result<Option<(rustix::fd::OwnedFd, std::ffi::OsString)>, ProvisionError> {
        let run = self.open_beneath()?;
        let doc = self.doc().clone();
        place(&run, &doc, path).map_err(ProvisionError::Io)
    }

    /// Record the device and inode numbers of resource `id`, made just now at `path`.
    pub fn created(&self, id: u64, path: &Path) -> Result<(), ProvisionError> {
        let found = match self.place(path)? {
            Some((dir, name)) => beneath::ident_at(dir.as_fd(), &name)
                .map_err(|e| ProvisionError::Io(format!("{}: {e}", path.display())))?,
            None => None,
        };
        let Some((ident, _)) = found else {
            return Err(ProvisionError::Io(format!(
                "{} is gone right after it was made",
                path.display()
            )));
        };
        self.edit_entry(id, |e| {
            e.dev = Some(ident.dev);
            e.ino = Some(ident.ino);
        })
    }

    /// Remove the image or directory recorded as `id` — resolved beneath the work directory,
    /// only if it is still the entry made (its recorded device and inode) — and forget it.
    pub fn remove(&self, id: u64) -> Result<(), ProvisionError> {
        let Some(entry) = self.doc().resources.iter().find(|e| e.id == id).cloned() else {
            return Ok(());
        };
        let (path, kind) = match &entry.res {
            Resource::Image { path } => (path, beneath::Kind::File),
            Resource::Dir { path } => (path, beneath::Kind::EmptyDir),
            other => {
                return Err(ProvisionError::Io(format!(
                    "internal: {other:?} is not removed as a file"
                )))
            }
        };
        let Some((dir, name)) = self.place(path)? else {
            return self.forget(id);
        };
        beneath::remove_at(dir.as_fd(), &name, kind, entry.ident())
            .map_err(|e| ProvisionError::Io(format!("cannot remove {}: {e}", path.display())))?;
        self.forget(id)
    }

    /// Check, beneath the work directory, that `device` is what is mounted at `path` (before
    /// fslab unmounts it).
    pub fn check_mounted(&self, path: &Path, device: &Path) -> Result<(), ProvisionError> {
        let Some((dir, name)) = self.place(path)? else {
            return Ok(());
        };
        match beneath::mounted_at(dir.as_fd(), &name) {
            Ok(Some((_, _, source))) if Path::new(&source) == device => Ok(()),
            Ok(Some((_, _, source))) => Err(ProvisionError::Io(format!(
                "{source} is mounted at {}, not {}; left alone",
                path.display(),
                device.display()
            ))),
            Ok(None) => Ok(()),
            Err(e) => Err(ProvisionError::Io(format!("{}: {e}", path.display()))),
        }
    }

    /// Forget a resource after it was torn down.
    pub fn forget(&self, id: u64) -> Result<(), ProvisionError> {
        self.edit(|doc| doc.resources.retain(|e| e.id != id))
    }

    /// Record the results database the study is stored in (for `fslab cleanup`).
    pub fn set_db(&self, db: &Path) -> Result<(), ProvisionError> {
        let db = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf());
        self.edit(|doc| doc.db = Some(db))
    }

    /// Resources still recorded (newest last).
    pub fn resources(&self) -> Vec<Resource> {
        self.doc().resources.iter().map(|e| e.res.clone()).collect()
    }

    /// Remove the run directory once everything in it was torn down. When resources are
    /// left (a teardown failed), the directory stays for `fslab cleanup`.
    pub fn finish(&self) -> Result<(), ProvisionError> {
        if !self.resources().is_empty() {
            return Err(ProvisionError::Io(format!(
                "some resources of {} could not be removed; run `fslab cleanup` once they are free",
                self.path.display()
            )));
        }
        let run = self.open_beneath()?;
        for f in ["state.json", "state.json.tmp", "lock"] {
            let _ = rustix::fs::unlinkat(run.fd(), f, rustix::fs::AtFlags::empty());
        }
        let (runs, name) = beneath::Root::open(&self.work_root)
            .map_err(|e| ProvisionError::Io(e.to_string()))?
            .parent_of(&self.path)
            .map_err(ProvisionError::Io)?;
        rustix::fs::unlinkat(runs.as_fd(), &name, rustix::fs::AtFlags::REMOVEDIR)
            .map_err(|e| ProvisionError::Io(format!("cannot remove {}: {e}", self.path.display())))
    }
}

pub(super) fn write_doc(dir: &Path, doc: &StateDoc) -> Result<(), ProvisionError> {
    let tmp = dir.join("state.json.tmp");
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| ProvisionError::Io(format!("state file: {e}")))?;
    // A leftover (or planted) temporary file, or a link, is removed, never written through.
    let _ = std::fs::remove_file(&tmp);
    let mut f = create_new(&tmp, 0o644).map_err(io(format!("cannot write {}", tmp.display())))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(io(format!("cannot write {}", tmp.display())))?;
    std::fs::rename(&tmp, dir.join("state.json"))
        .map_err(io(format!("cannot rename {}", tmp.display())))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

pub use super::state_cleanup::{cleanup, CleanupReport};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::exec::RecordingExec;
    use std::time::Duration;

    #[test]
    fn a_finished_run_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let w = WorkDir::new(t.path());
        let run = w.start_run(Some(3)).unwrap();
        let d = run.path().join("mnt");
        let id = run.record(Resource::Dir { path: d.clone() }).unwrap();
        std::fs::create_dir(&d).unwrap();
        let text = std::fs::read_to_string(run.path().join("state.json")).unwrap();
        assert!(text.contains("\"kind\": \"dir\""), "{text}");
        // A live run is not cleaned.
        let rep = cleanup(&w, &RecordingExec::new(), Duration::ZERO);
        assert_eq!(rep.alive.len(), 1, "{rep:?}");
        assert!(d.exists());
        assert_eq!(w.live_studies(), vec![(3, std::process::id())]);
        assert!(run.finish().is_err(), "resources are still recorded");
        std::fs::remove_dir(&d).unwrap();
        run.forget(id).unwrap();
        run.finish().unwrap();
        assert!(w.run_dirs().is_empty());
    }

    #[test]
    fn a_dead_runs_study_and_results_database_are_reported() {
        let t = tempfile::tempdir().unwrap();
        let w = WorkDir::new(t.path().join("work"));
        let db = t.path().join("elsewhere.db");
        std::fs::write(&db, b"").unwrap();
        let run = w.start_run(Some(7)).unwrap();
        run.set_db(&db).unwrap();
        // Dropped without finishing: the lock goes as it would with the process.
        drop(run);
        let rep = cleanup(&w, &RecordingExec::new(), Duration::ZERO);
        assert_eq!(
            rep.studies,
            vec![(7, Some(std::fs::canonicalize(&db).unwrap()))]
        );
        assert!(w.run_dirs().is_empty(), "{rep:?}");
    }

    #[test]
    fn a_dead_run_is_removed_newest_first_and_only_inside_its_dir() {
        let t = tempfile::tempdir().unwrap();
        let w = WorkDir::new(t.path());
        let run = w.start_run(None).unwrap();
        let dir = run.path().to_path_buf();
        let images = dir.join("images");
        run.record(Resource::Dir {
            path: images.clone(),
        })
        .unwrap();
        std::fs::create_dir(&images).unwrap();
        let img = images.join("c0-data.img");
        run.record(Resource::Image { path: img.clone() }).unwrap();
        std::fs::write(&img, b"x").unwrap();
        run.record(Resource::Loop {
            image: img.clone(),
            device: None,
        })
        .unwrap();
        let outside = t.path().join("not-ours");
        std::fs::write(&outside, b"keep").unwrap();
        // Simulate death: a pid that cannot exist, then drop the run (releases the lock)
        // without tearing down. Other tests of this process may spawn commands that
        // briefly inherit the lock, hence the wait.
        run.edit(|d| d.pid = u32::MAX).unwrap();
        drop(run);
        let ex = RecordingExec::new();
        let rep = cleanup(&w, &ex, Duration::from_secs(10));
        assert!(rep.errors.is_empty(), "{rep:?}");
        assert!(!img.exists() && !images.exists() && !dir.exists());
        assert!(outside.exists());
        assert!(rep.actions.iter().any(|a| a.starts_with("rm ")), "{rep:?}");
        // No loop device is backed by the image, so no losetup was run.
        assert!(ex.lines().is_empty(), "{:?}", ex.lines());
    }

    #[test]
    fn a_relative_workdir_is_made_absolute() {
        let w = WorkDir::new("some/relative/dir");
        assert!(w.root().is_absolute());
        assert!(w.root().ends_with("some/relative/dir"));
    }

    #[test]
    fn a_tampered_state_file_cannot_point_outside() {
        let t = tempfile::tempdir().unwrap();
        let w = WorkDir::new(t.path().join("w"));
        let run = w.start_run(None).unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"data").unwrap();
        run.record(Resource::Image {
            path: victim.clone(),
        })
        .unwrap();
        run.edit(|d| d.pid = u32::MAX).unwrap();
        drop(run);
        let rep = cleanup(&w, &RecordingExec::new(), Duration::from_secs(10));
        assert!(victim.exists());
        assert_eq!(rep.errors.len(), 1, "{rep:?}");
        assert!(rep.errors[0].contains("left alone"));
    }
}
