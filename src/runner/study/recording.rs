//! The entries an engine command's repetitions make in a directory of the user's: each
//! recorded in the store before it exists, and its device and inode within milliseconds of
//! the engine making it (a watcher thread on a connection of its own), so that if the process
//! is killed, `fslab cleanup` sees the dead claim and removes exactly those entries.

use super::super::repetition::Around;
use crate::store::{OwnedKind, Store};
use crate::workload::Creates;
use anyhow::Result;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The entries a run's repetitions make, recorded by path (`owned_path` ids) and forgotten
/// once removed.
pub struct Owned {
    /// The run's study id.
    study: i64,
    paths: HashMap<PathBuf, i64>,
    /// Records each entry's device and inode as soon as the engine has made it.
    watcher: Option<Watcher>,
}

/// [`Owned`] with the store to record in, for one repetition.
pub(super) struct Recording<'r> {
    store: &'r mut Store,
    owned: &'r mut Owned,
}

/// How often the watcher looks for the entries a repetition makes.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// A thread that records, on a connection of its own, each recorded entry's device and inode
/// numbers within [`WATCH_EVERY`] of the engine making it (and then stops watching it), so
/// a run killed mid-repetition leaves records that name exactly the entries it made.
struct Watcher {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

impl Watcher {
    fn start(rec: crate::store::OwnedRecorder, mut left: Vec<(i64, PathBuf)>) -> Watcher {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            while !left.is_empty() && !flag.load(Ordering::Relaxed) {
                left.retain(|(id, p)| match std::fs::symlink_metadata(p) {
                    Ok(md) => rec.created(*id, md.dev(), md.ino()).is_err(),
                    Err(_) => true,
                });
                std::thread::sleep(WATCH_EVERY);
            }
        });
        Watcher { stop, handle }
    }

    fn finish(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

impl Owned {
    /// Nothing recorded yet for study `study`.
    pub(super) fn new(study: i64) -> Owned {
        Owned {
            study,
            paths: HashMap::new(),
            watcher: None,
        }
    }

    /// What records one repetition's entries in `store`.
    pub(super) fn around<'r>(&'r mut self, store: &'r mut Store) -> Recording<'r> {
        Recording { store, owned: self }
    }
}

impl Around for Recording<'_> {
    /// Record, before they exist, the entries the repetition will create.
    fn before_run(&mut self, creates: &[Creates]) -> Result<()> {
        for c in creates {
            if self.owned.paths.contains_key(&c.path) {
                continue;
            }
            let kind = OwnedKind::new(c.engine, c.kind);
            let path = std::path::absolute(&c.path)?;
            let id = self
                .store
                .add_owned_path(self.owned.study, &path, kind, &c.detail)?;
            self.owned.paths.insert(c.path.clone(), id);
        }
        let watch: Vec<(i64, PathBuf)> = creates
            .iter()
            .filter_map(|c| {
                Some((
                    *self.owned.paths.get(&c.path)?,
                    std::path::absolute(&c.path).ok()?,
                ))
            })
            .collect();
        if !watch.is_empty() {
            self.owned.watcher = Some(Watcher::start(self.store.owned_recorder()?, watch));
        }
        Ok(())
    }

    /// What the repetition made is either gone (`removed`, and forgotten, so a later
    /// repetition that makes it again records it anew) or kept on purpose (`-C`, `-w`,
    /// `--keep`, or left because it holds a user's files): then its device and inode numbers
    /// are recorded, so only that very entry is ever taken for fslab's.
    fn after_cleanup(&mut self, creates: &[Creates]) -> Result<()> {
        if let Some(w) = self.owned.watcher.take() {
            w.finish();
        }
        for c in creates {
            let Some(&id) = self.owned.paths.get(&c.path) else {
                continue;
            };
            match std::fs::symlink_metadata(&c.path) {
                Ok(md) => self.store.set_owned_created(id, md.dev(), md.ino())?,
                Err(_) => {
                    self.store.set_owned_removed(id)?;
                    self.owned.paths.remove(&c.path);
                }
            }
        }
        Ok(())
    }
}
