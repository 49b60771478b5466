//! The work directory fslab owns and the state file of every run in it.
//!
//! Layout: `<workdir>/runs/<pid>-<millis>/` holds `lock`, `state.json`, `images/` (sparse
//! loop images), `mnt/` (mount points) and `ram/` (a tmpfs for `ram:` devices). Every
//! resource (image, loop device, mount, tmpfs, directory) is written to `state.json` —
//! atomically, with fsync — *before* it is made, and removed from it after it is torn down.
//!
//! A live run holds an exclusive `flock` on `lock`. The descriptor is inherited by the
//! commands it spawns, so the lock is only free once the run and every mkfs/mount it started
//! are gone. `fslab cleanup` (and the start of every study run) takes the lock of each run
//! directory; a free lock means the run was killed, and exactly the resources in its state
//! file are removed, newest first: unmount, detach the loop devices whose backing file is a
//! recorded image, delete the image, unmount the tmpfs, remove the directories. Nothing
//! outside the run directory is touched.

use super::exec::{CmdLine, Exec};
use super::{loopdev, ProvisionError};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
struct Entry {
    id: u64,
    #[serde(flatten)]
    res: Resource,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateDoc {
    version: u32,
    pid: u32,
    started_at: String,
    study: Option<i64>,
    /// The results database the study is recorded in, so `fslab cleanup` can mark it
    /// interrupted there whatever `--db` it is given (absent in older state files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    db: Option<PathBuf>,
    next_id: u64,
    resources: Vec<Entry>,
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
        let lock =
            File::create(tmp.join("lock")).map_err(io(format!("lock in {}", tmp.display())))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| ProvisionError::Io(format!("cannot lock {}: {e}", tmp.display())))?;
        // Children (mkfs, mount) inherit the descriptor: the lock outlives us until they exit.
        rustix::io::fcntl_setfd(&lock, rustix::io::FdFlags::empty())
            .map_err(|e| ProvisionError::Io(format!("fcntl on lock: {e}")))?;
        std::fs::rename(&tmp, &path).map_err(io(format!("cannot rename {}", tmp.display())))?;
        let run = RunDir {
            path,
            _lock: lock,
            doc: Mutex::new(StateDoc {
                version: 1,
                pid: std::process::id(),
                started_at: crate::units::timestamp_now(),
                study,
                db: None,
                next_id: 1,
                resources: Vec::new(),
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
            .filter(|d| try_lock(d).is_none())
            .filter_map(|d| read_doc(d.join("state.json")).ok())
            .filter_map(|doc| doc.study.map(|s| (s, doc.pid)))
            .collect()
    }
}

fn read_doc(p: PathBuf) -> Result<StateDoc, String> {
    let t = crate::safe::input::read_text_limited(
        &p,
        crate::safe::input::RECORD_LIMIT,
        "a run's state file",
    )
    .map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&t).map_err(|e| format!("{} is not a valid state file: {e}", p.display()))
}

/// Take the lock of a run directory if nobody holds it.
fn try_lock(dir: &Path) -> Option<File> {
    let f = File::open(dir.join("lock")).ok()?;
    rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(f)
}

/// A live run's directory and state file.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    _lock: File,
    doc: Mutex<StateDoc>,
}

impl RunDir {
    /// The run directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn persist(&self) -> Result<(), ProvisionError> {
        let doc = self.doc.lock().unwrap_or_else(|p| p.into_inner());
        write_doc(&self.path, &doc)
    }

    /// Record a resource before making it; returns its id.
    pub fn record(&self, res: Resource) -> Result<u64, ProvisionError> {
        let id = {
            let mut doc = self.doc.lock().unwrap_or_else(|p| p.into_inner());
            let id = doc.next_id;
            doc.next_id += 1;
            doc.resources.push(Entry { id, res });
            id
        };
        self.persist()?;
        Ok(id)
    }

    /// Replace a recorded resource (a loop device's name once known).
    pub fn update(&self, id: u64, res: Resource) -> Result<(), ProvisionError> {
        {
            let mut doc = self.doc.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(e) = doc.resources.iter_mut().find(|e| e.id == id) {
                e.res = res;
            }
        }
        self.persist()
    }

    /// Forget a resource after it was torn down.
    pub fn forget(&self, id: u64) -> Result<(), ProvisionError> {
        {
            let mut doc = self.doc.lock().unwrap_or_else(|p| p.into_inner());
            doc.resources.retain(|e| e.id != id);
        }
        self.persist()
    }

    /// Record which study this run works for (shown by cleanup, checked by --resume).
    pub fn set_study(&self, study: i64) -> Result<(), ProvisionError> {
        self.doc.lock().unwrap_or_else(|p| p.into_inner()).study = Some(study);
        self.persist()
    }

    /// Record the results database the study is stored in (for `fslab cleanup`).
    pub fn set_db(&self, db: &Path) -> Result<(), ProvisionError> {
        let db = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf());
        self.doc.lock().unwrap_or_else(|p| p.into_inner()).db = Some(db);
        self.persist()
    }

    /// Resources still recorded (newest last).
    pub fn resources(&self) -> Vec<Resource> {
        let doc = self.doc.lock().unwrap_or_else(|p| p.into_inner());
        doc.resources.iter().map(|e| e.res.clone()).collect()
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
        let _ = std::fs::remove_file(self.path.join("state.json"));
        let _ = std::fs::remove_file(self.path.join("lock"));
        std::fs::remove_dir(&self.path)
            .map_err(io(format!("cannot remove {}", self.path.display())))
    }
}

fn write_doc(dir: &Path, doc: &StateDoc) -> Result<(), ProvisionError> {
    let tmp = dir.join("state.json.tmp");
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| ProvisionError::Io(format!("state file: {e}")))?;
    let mut f = File::create(&tmp).map_err(io(format!("cannot write {}", tmp.display())))?;
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

/// Whether `path` is a mount point right now.
pub fn is_mountpoint(path: &Path) -> bool {
    let Ok(canon) = std::fs::canonicalize(path) else {
        return false;
    };
    crate::sysinfo::mounts()
        .iter()
        .any(|m| m.mount_point == canon)
}

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

/// Remove what killed runs left in `work`. Runs whose process is gone but whose lock is
/// still held (a mkfs or mount they started is finishing) are waited for up to `wait`.
pub fn cleanup(work: &WorkDir, exec: &dyn Exec, wait: Duration) -> CleanupReport {
    let mut rep = CleanupReport::default();
    for dir in work.run_dirs() {
        let doc = read_doc(dir.join("state.json")).ok();
        let pid_alive = doc
            .as_ref()
            .is_some_and(|d| Path::new(&format!("/proc/{}", d.pid)).exists());
        let deadline = Instant::now() + wait;
        let lock = loop {
            match try_lock(&dir) {
                Some(l) => break Some(l),
                None if !dir.join("lock").exists() => break None,
                None if pid_alive || Instant::now() >= deadline => break None,
                None => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        if lock.is_none() && dir.join("lock").exists() {
            let who = doc
                .as_ref()
                .map(|d| format!("pid {}", d.pid))
                .unwrap_or_else(|| "unknown pid".into());
            rep.alive
                .push(format!("{} ({who}) is still running", dir.display()));
            continue;
        }
        if let Some(study) = doc.as_ref().and_then(|d| d.study) {
            rep.studies
                .push((study, doc.as_ref().and_then(|d| d.db.clone())));
        }
        clean_run(&dir, doc, exec, &mut rep);
    }
    rep
}

fn clean_run(dir: &Path, doc: Option<StateDoc>, exec: &dyn Exec, rep: &mut CleanupReport) {
    let mut doc = doc.unwrap_or(StateDoc {
        version: 1,
        pid: 0,
        started_at: String::new(),
        study: None,
        db: None,
        next_id: 1,
        resources: Vec::new(),
    });
    let inside = |p: &Path| p.starts_with(dir);
    while let Some(entry) = doc.resources.last().cloned() {
        let result = match &entry.res {
            // A state file only ever names things inside its own run directory; anything
            // else is not ours to touch.
            Resource::Mount { path, .. } | Resource::Tmpfs { path } if !inside(path) => {
                Err(format!(
                    "{} is outside {}; left alone",
                    path.display(),
                    dir.display()
                ))
            }
            Resource::Mount { path, .. } | Resource::Tmpfs { path } => {
                if is_mountpoint(path) {
                    let c = CmdLine::new("umount").path(path);
                    exec.run(&c)
                        .map(|_| rep.actions.push(c.to_string()))
                        .map_err(|e| {
                            format!(
                                "{e}; stop what uses it (fuser -vm {}) and run fslab cleanup again",
                                path.display()
                            )
                        })
                } else {
                    Ok(())
                }
            }
            Resource::Loop { image, .. } if inside(image) => {
                let mut r = Ok(());
                for dev in loopdev::loops_backed_by(image) {
                    let c = loopdev::detach_cmd(&dev);
                    match exec.run(&c) {
                        Ok(_) => rep.actions.push(c.to_string()),
                        Err(e) => r = Err(e.to_string()),
                    }
                }
                r
            }
            Resource::Image { path } if inside(path) => match std::fs::remove_file(path) {
                Ok(()) => {
                    rep.actions.push(format!("rm {}", path.display()));
                    Ok(())
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
            },
            Resource::Dir { path } if inside(path) => match std::fs::remove_dir(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(format!("cannot remove directory {}: {e}", path.display())),
            },
            other => Err(format!(
                "{other:?} is outside {}; left alone",
                dir.display()
            )),
        };
        match result {
            Ok(()) => {
                doc.resources.pop();
                if let Err(e) = write_doc(dir, &doc) {
                    rep.errors.push(e.to_string());
                    return;
                }
            }
            Err(e) => {
                rep.errors.push(e);
                return;
            }
        }
    }
    let _ = std::fs::remove_file(dir.join("state.json"));
    let _ = std::fs::remove_file(dir.join("state.json.tmp"));
    let _ = std::fs::remove_file(dir.join("lock"));
    match std::fs::remove_dir(dir) {
        Ok(()) => rep.actions.push(format!("rmdir {}", dir.display())),
        Err(e) => rep
            .errors
            .push(format!("cannot remove {}: {e}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::exec::RecordingExec;

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
        run.doc.lock().unwrap().pid = u32::MAX;
        run.persist().unwrap();
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
        run.doc.lock().unwrap().pid = u32::MAX;
        run.persist().unwrap();
        drop(run);
        let rep = cleanup(&w, &RecordingExec::new(), Duration::from_secs(10));
        assert!(victim.exists());
        assert_eq!(rep.errors.len(), 1, "{rep:?}");
        assert!(rep.errors[0].contains("left alone"));
    }
}
