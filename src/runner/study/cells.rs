//! A study's cells as the loop sees them: handed to the provisioner when their turn comes
//! (mkfs, mount, the telemetry sources), made again for `fresh`, taken down when their
//! series are done, failed or interrupted, with the cell's and its series' statuses stored.

use super::super::series::SeriesState;
use super::super::telemetry::Sources;
use super::{Ground, Live, Runner, Show};
use crate::provision::ProvisionError;
use crate::store::{CellStatus, SeriesStatus};
use crate::telemetry::Devices;
use anyhow::Result;
use std::collections::BTreeMap;

/// Clean up after the cell's engines (what a repetition in flight left) and tear its file
/// system down.
fn take_down(live: Live) -> Result<(), ProvisionError> {
    let mut engines = live.engines;
    for e in engines.values_mut() {
        let _ = e.cleanup(&live.target);
    }
    live.prov.map_or(Ok(()), |p| p.teardown())
}

impl Runner<'_> {
    /// Make the cell's file system (a study's), or take the command's directory as it is.
    pub(super) fn bring_up(&mut self, cell: usize) -> Result<()> {
        let cid = self.cell_ids[cell];
        self.store.set_cell_status(cid, CellStatus::Running, None)?;
        let (prov, target, sources) = match &mut self.ground {
            Ground::Made { study, prov, .. } => {
                let c = &study.cells[cell];
                if let Show::Study(p) = &self.show {
                    p.println(&format!("provisioning cell {}: {}", cell, c.label));
                }
                let prov = prov.provision(cell, &c.fs)?;
                self.store
                    .set_cell_provisioning(cid, &prov.commands, &prov.dump)?;
                let sources = Sources::of(Devices::for_cell(&prov.data, prov.journal.as_deref()));
                let target = prov.target();
                (Some(prov), target, sources)
            }
            Ground::Dir {
                target, sources, ..
            } => (None, target.clone(), sources.clone()),
        };
        self.live.insert(
            cell,
            Live {
                prov,
                target,
                engines: BTreeMap::new(),
                warmed: BTreeMap::new(),
                sources,
                used: false,
            },
        );
        Ok(())
    }

    /// `fresh`: take the cell's file system down and make it again (mkfs, mount), so the
    /// next repetition starts on a new one.
    pub(super) fn renew(&mut self, cell: usize) -> Result<()> {
        if let Some(live) = self.live.remove(&cell) {
            take_down(live)?;
        }
        self.bring_up(cell)?;
        // In a guest, the host's page cache holds what mkfs just wrote to the image files.
        super::super::guest::drop_host_caches()
    }

    pub(super) fn fail_cell(&mut self, cell: usize, err: &str) -> Result<()> {
        if let Show::Study(p) = &self.show {
            p.println(&format!("cell {} failed: {err}", self.cell_labels[cell]));
        }
        for si in 0..self.series.len() {
            if self.series[si].cell == cell && self.series[si].is_active() {
                self.mark_failed(si, err, err.to_string())?;
            }
        }
        self.retire(cell, false)
    }

    /// Series `si` failed with `err`; its cell carries `cell_error` (the first one counts).
    pub(super) fn mark_failed(&mut self, si: usize, err: &str, cell_error: String) -> Result<()> {
        self.series[si].state = SeriesState::Failed(err.to_string());
        let (c, w) = self.ids(si);
        self.store
            .set_series(c, w, SeriesStatus::Failed, None, Some(err))?;
        self.cell_errors
            .entry(self.series[si].cell)
            .or_insert(cell_error);
        self.update_total();
        Ok(())
    }

    pub(super) fn fail_series(&mut self, si: usize, err: &str) -> Result<()> {
        let s = &self.series[si];
        let label = self.wl_label(s.wl);
        if let Show::Study(p) = &self.show {
            p.println(&format!(
                "{} · {label} failed: {err}",
                self.cell_labels[s.cell]
            ));
        }
        let cell_error = match self.ground {
            Ground::Made { .. } => format!("workload {label}: {err}"),
            Ground::Dir { .. } => err.to_string(),
        };
        self.mark_failed(si, err, cell_error)
    }

    /// The label of workload `wl` (the study's; an engine command's name).
    pub(super) fn wl_label(&self, wl: usize) -> String {
        match &self.ground {
            Ground::Made { study, .. } => study.workloads[wl].spec.label(),
            Ground::Dir { .. } => self.name.clone(),
        }
    }

    pub(super) fn retire_if_done(&mut self, cell: usize) -> Result<()> {
        if self.series.iter().any(|s| s.cell == cell && s.is_active()) {
            return Ok(());
        }
        self.retire(cell, false)
    }

    /// Tear a cell down and set its final status.
    pub(super) fn retire(&mut self, cell: usize, interrupted: bool) -> Result<()> {
        if let Some(live) = self.live.remove(&cell) {
            if let Err(e) = take_down(live) {
                self.leftovers
                    .push(format!("cell {}: {e}", self.cell_labels[cell]));
            }
        }
        let cid = self.cell_ids[cell];
        match self.cell_errors.get(&cell) {
            Some(e) => self
                .store
                .set_cell_status(cid, CellStatus::Failed, Some(e))?,
            None if interrupted || self.series.iter().any(|s| s.cell == cell && s.is_active()) => {
                self.store.set_cell_status(cid, CellStatus::Pending, None)?
            }
            None => self
                .store
                .set_cell_status(cid, CellStatus::Complete, None)?,
        }
        Ok(())
    }
}
