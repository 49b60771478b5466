//! The store side of an engine command: the run recorded as a study of kind `run` and
//! claimed in the same transaction, every entry a repetition will create recorded before it
//! exists and its device and inode within milliseconds of the engine making it (a watcher
//! thread on a connection of its own), and the final statuses of the cells and the run.

use super::super::repetition::Around;
use super::AdhocCell;
use super::AdhocOptions;
use crate::metric::Metric;
use crate::stats::adaptive::StopReason;
use crate::store::{CellStatus, NewCell, NewStudy, OwnedKind, SeriesStatus, Store, StudyStatus};
use crate::workload::{Creates, Workload};
use anyhow::Result;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The store side of a run: ids, the claim, and the entries recorded before they exist.
pub(super) struct Recording<'s> {
    /// The store the run is recorded in.
    pub(super) store: &'s mut Store,
    /// The run's study id.
    pub(super) study: i64,
    /// Cell ids, in the command's order.
    pub(super) cells: Vec<i64>,
    /// The one workload's id.
    pub(super) workload: i64,
    /// Recorded entries by path (`owned_path` ids), forgotten once removed.
    owned: HashMap<PathBuf, i64>,
    /// Held until the run returns, however it returns; a killed run leaves it behind for
    /// `fslab cleanup` to find.
    _claim: crate::store::Claim,
    /// Records each entry's device and inode as soon as the engine has made it.
    watcher: Option<Watcher>,
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

impl Recording<'_> {
    /// Record the run (study, environment, workload, cells, running series) and claim it.
    pub(super) fn begin<'s, W: Workload>(
        st: &'s mut Store,
        opts: &AdhocOptions<'_>,
        cells: &[AdhocCell<W>],
        environment: &[(String, String)],
    ) -> Result<Recording<'s>> {
        let new = NewStudy {
            kind: "run",
            name: opts.name.clone(),
            description: String::new(),
            command_line: opts.command_line.clone(),
            spec: opts.params.to_string(),
            spec_hash: String::new(),
            seed: None,
        };
        // Claimed in the transaction that records it: no unclaimed `running` row is ever seen.
        let (study, claim) = st.immediate("recording the run", |st| {
            let study = st.begin_study(&new)?;
            Ok((study, st.claim_in_transaction(study)?))
        })?;
        st.set_environment(study, environment)?;
        let kind = cells.first().map_or("unknown", |c| c.workload.name());
        let workload = st.add_workload(study, 0, kind, &opts.label, &opts.params)?;
        let mut ids = Vec::new();
        for (idx, c) in cells.iter().enumerate() {
            let id = st.add_cell(
                study,
                &NewCell {
                    idx,
                    label: c.label.clone(),
                    factors: c.factors.clone(),
                    config: c.config.clone(),
                },
            )?;
            st.set_cell_status(id, CellStatus::Running, None)?;
            st.set_series(id, workload, SeriesStatus::Running, None, None)?;
            ids.push(id);
        }
        Ok(Recording {
            store: st,
            study,
            cells: ids,
            workload,
            owned: HashMap::new(),
            _claim: claim,
            watcher: None,
        })
    }

    /// Final statuses: the failed cell, the cells not reached, the run. `placed` counts each
    /// cell's repetitions that took their place (counted, or dropped as disturbed).
    pub(super) fn finish(
        &mut self,
        reps: &[Vec<Vec<Metric>>],
        placed: &[u32],
        repeat: u32,
        failed: Option<(usize, &anyhow::Error)>,
    ) -> Result<()> {
        let msg = failed.map(|(_, e)| format!("{e:#}"));
        let interrupted =
            failed.is_some_and(|(_, e)| e.chain().any(|c| c.is::<crate::signal::Interrupted>()));
        for (ci, &cell) in self.cells.iter().enumerate() {
            let full = placed[ci] == repeat.max(1);
            let (series, cellst, m) = if failed.is_some_and(|(f, _)| f == ci) {
                (SeriesStatus::Failed, CellStatus::Failed, msg.as_deref())
            } else if full {
                (SeriesStatus::Complete, CellStatus::Complete, None)
            } else {
                (
                    SeriesStatus::Failed,
                    CellStatus::Failed,
                    Some("not run: the run stopped at an earlier error"),
                )
            };
            self.store
                .set_series(cell, self.workload, series, Some(StopReason::Fixed), m)?;
            self.store.set_cell_status(cell, cellst, m)?;
        }
        let any_done = reps.iter().any(|r| !r.is_empty());
        let status = match (failed, interrupted) {
            (None, _) => StudyStatus::Complete,
            (Some(_), true) => StudyStatus::Interrupted,
            (Some(_), false) if any_done => StudyStatus::Partial,
            (Some(_), false) => StudyStatus::Failed,
        };
        self.store.set_study_status(self.study, status)
    }
}

impl Around for Recording<'_> {
    /// Record, before they exist, the entries the repetition will create.
    fn before_run(&mut self, creates: &[Creates]) -> Result<()> {
        for c in creates {
            if self.owned.contains_key(&c.path) {
                continue;
            }
            let kind = OwnedKind::new(c.engine, c.kind);
            let path = std::path::absolute(&c.path)?;
            let id = self
                .store
                .add_owned_path(self.study, &path, kind, &c.detail)?;
            self.owned.insert(c.path.clone(), id);
        }
        let watch: Vec<(i64, PathBuf)> = creates
            .iter()
            .filter_map(|c| {
                Some((
                    *self.owned.get(&c.path)?,
                    std::path::absolute(&c.path).ok()?,
                ))
            })
            .collect();
        if !watch.is_empty() {
            self.watcher = Some(Watcher::start(self.store.owned_recorder()?, watch));
        }
        Ok(())
    }

    /// What the repetition made is either gone (`removed`, and forgotten, so a later
    /// repetition that makes it again records it anew) or kept on purpose (`-C`, `-w`,
    /// `--keep`, or left because it holds a user's files): then its device and inode numbers
    /// are recorded, so only that very entry is ever taken for fslab's.
    fn after_cleanup(&mut self, creates: &[Creates]) -> Result<()> {
        if let Some(w) = self.watcher.take() {
            w.finish();
        }
        for c in creates {
            let Some(&id) = self.owned.get(&c.path) else {
                continue;
            };
            match std::fs::symlink_metadata(&c.path) {
                Ok(md) => self.store.set_owned_created(id, md.dev(), md.ino())?,
                Err(_) => {
                    self.store.set_owned_removed(id)?;
                    self.owned.remove(&c.path);
                }
            }
        }
        Ok(())
    }
}
