//! dbench with its clients spread over MPI ranks: `mpiexec -n N fslab dbench NCLIENTS` runs
//! NCLIENTS clients in all (not per rank), rank r taking a contiguous block of them with their
//! global numbers (`clients/client<k>` under the shared `-D`, exactly the tree one dbench
//! process with NCLIENTS clients makes). Every rank's clients are released at one instant
//! chosen by rank 0 and converted to each rank's clock, so the warmup and the measured window
//! are the same interval on all ranks; throughput is all ranks' bytes in that window divided by
//! its length. Each rank merges its clients' HDR histograms, serializes them (hdrhistogram's
//! V2 format) and rank 0 merges the ranks' histograms exactly.

mod watch;

use super::clock::ClockInfo;
use super::comm::Comm;
use super::rank::{Gathered, RankMode};
use crate::metric::{Metric, Unit};
use crate::workload::dbench::conduct::LocalRep;
use crate::workload::dbench::ops::OpKind;
use crate::workload::dbench::{Dbench, DbenchParams, RepOutcome};
use crate::workload::{Observer, Requirements, Target, Workload};
use anyhow::{anyhow, Result};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;
use watch::RankConductor;

/// Values per rank sent to rank 0 (see [`DistDbench::phase`](RankMode::phase)).
const REC: usize = 9;

/// The clients of rank `rank` out of `total` over `size` ranks: (first client, count), a
/// contiguous block, the first `total mod size` ranks one client more.
pub fn share(total: usize, size: usize, rank: usize) -> (usize, usize) {
    let size = size.max(1);
    let (base, extra) = (total / size, total % size);
    (
        rank * base + rank.min(extra),
        base + usize::from(rank < extra),
    )
}

/// One rank's part of a repetition (times in seconds from the planned common start).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RankClients {
    /// The rank.
    pub rank: u32,
    /// Its first client's number.
    pub first_client: u64,
    /// Its number of clients.
    pub clients: u64,
    /// ReadX/WriteX bytes of operations completed in the measured window.
    pub measured_bytes: u64,
    /// Operations completed in the measured window.
    pub measured_ops: u64,
    /// Complete passes over the loadfile.
    pub passes: u64,
    /// Loadfile lines executed, warmup included.
    pub lines: u64,
    /// When its clients were actually released (late if positive).
    pub start: f64,
    /// When its last client ended.
    pub finish: f64,
    /// Its bytes over the common window, MB/s.
    pub throughput_mb_s: f64,
}

/// One repetition at rank 0.
#[derive(Debug, Clone, Serialize)]
pub struct DbenchRep {
    /// Every rank's part.
    pub ranks: Vec<RankClients>,
    /// Latest release − earliest release.
    pub start_skew: f64,
    /// Latest end − earliest end of the ranks' last clients.
    pub end_skew: f64,
    /// The combined outcome (what dbench prints).
    pub outcome: RepOutcome,
    /// Clock offsets used.
    pub clock: ClockInfo,
}

/// The engine on one rank.
pub struct DistDbench {
    comm: Rc<Comm>,
    /// All clients of the job (the stored and printed parameters).
    total: DbenchParams,
    /// This rank's clients.
    pub(crate) engine: Dbench,
    /// Clients writing to the file system this rank sees (space check).
    fit_clients: usize,
    /// Removes the client trees after a repetition: rank 0 when all ranks share `-D`, every
    /// rank otherwise.
    remover: bool,
    /// This rank's clock minus rank 0's, for the current repetition.
    offset: f64,
    /// This rank's latency histograms of the current repetition, until sent to rank 0.
    local_hists: Vec<Option<Histogram<u64>>>,
    /// Rank 0: the merged histograms of the last repetition, for the store.
    hists: Vec<crate::metric::Histogram>,
}

/// Histograms as bytes: per operation kind a u32 length (0 = none) and hdrhistogram's V2
/// serialization.
fn pack_hists(hists: &[Option<Histogram<u64>>]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = V2Serializer::new();
    for k in 0..OpKind::COUNT {
        let mut data = Vec::new();
        if let Some(Some(h)) = hists.get(k) {
            ser.serialize(h, &mut data)
                .map_err(|e| anyhow!("serializing a latency histogram: {e:?}"))?;
        }
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&data);
    }
    Ok(out)
}

fn unpack_hists(mut b: &[u8]) -> Result<Vec<Option<Histogram<u64>>>> {
    let mut de = Deserializer::new();
    let mut v = Vec::with_capacity(OpKind::COUNT);
    let truncated = || anyhow!("a rank's latency histograms are truncated");
    for _ in 0..OpKind::COUNT {
        let (len, rest) = b.split_first_chunk::<4>().ok_or_else(truncated)?;
        let len = u32::from_le_bytes(*len) as usize;
        let (data, rest) = rest.split_at_checked(len).ok_or_else(truncated)?;
        v.push(if len == 0 {
            None
        } else {
            let mut h: Histogram<u64> = de
                .deserialize(&mut &data[..])
                .map_err(|e| anyhow!("reading a rank's latency histogram: {e:?}"))?;
            h.auto(true);
            Some(h)
        });
        b = rest;
    }
    Ok(v)
}

impl DistDbench {
    /// The engine of one rank: `total` are the job's parameters (all clients).
    pub fn new(comm: Rc<Comm>, total: DbenchParams, all_see: bool) -> Self {
        let (size, rank) = (comm.size() as usize, comm.rank() as usize);
        let (first, count) = share(total.clients, size, rank);
        let mut mine = total.clone();
        mine.clients = count;
        let me = &comm.hosts()[rank];
        let fit_clients = if all_see {
            total.clients
        } else {
            (0..size)
                .filter(|&r| &comm.hosts()[r] == me)
                .map(|r| share(total.clients, size, r).1)
                .sum()
        };
        DistDbench {
            engine: Dbench::new(mine).with_first_client(first),
            remover: !all_see || comm.is_root(),
            comm,
            total,
            fit_clients,
            offset: 0.0,
            local_hists: Vec::new(),
            hists: Vec::new(),
        }
    }

    /// The engine for the clients writing to the file system this rank sees.
    fn fitting(&self) -> Dbench {
        let mut p = self.total.clone();
        p.clients = self.fit_clients;
        Dbench::new(p)
    }
}

impl RankMode for DistDbench {
    type Rep = DbenchRep;

    fn name(&self) -> &'static str {
        "dbench"
    }

    /// The trees of every client writing to the file system this rank sees.
    fn requirements(&self) -> Requirements {
        self.fitting().requirements()
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        self.fitting().prepare(target)
    }

    /// Every rank learns its clock's offset from rank 0's; this rank's clients get ready.
    fn begin(&mut self, dir: &Path, clock: Option<&ClockInfo>) -> Result<()> {
        self.hists.clear();
        let mut offsets = vec![0f64; self.comm.size() as usize];
        if let Some(c) = clock {
            for (o, c) in offsets.iter_mut().zip(&c.offsets) {
                *o = c.offset;
            }
        }
        self.comm.broadcast_f64s(&mut offsets);
        self.offset = offsets[self.comm.rank() as usize];
        self.engine.begin(dir)
    }

    fn phases(&self) -> Vec<(&'static str, u64)> {
        vec![("dbench", 0)]
    }

    /// All clients released at one instant; the record: first client, clients, measured
    /// bytes and operations, passes, lines, worst lag, last finish, lateness of the release.
    fn phase(&mut self, _i: usize, dir: &Path, obs: &dyn Observer) -> Result<Vec<f64>> {
        let comm = &*self.comm;
        let conductor = RankConductor {
            comm,
            offset: self.offset,
            planned: Cell::new(0.0),
            released: Cell::new(0.0),
        };
        let obs: &dyn Observer = if comm.is_root() {
            obs
        } else {
            &crate::workload::Quiet
        };
        let local = self.engine.run_clients(dir, obs, &conductor)?;
        let (size, rank) = (comm.size() as usize, comm.rank() as usize);
        let (first, count) = share(self.total.clients, size, rank);
        let rec = vec![
            first as f64,
            count as f64,
            local.measured_bytes as f64,
            local.measured_ops as f64,
            local.passes as f64,
            local.lines as f64,
            local.max_lag,
            local.last_finish,
            conductor.released.get() - conductor.planned.get(),
        ];
        self.local_hists = local.hists;
        Ok(rec)
    }

    fn complete(&mut self) -> Result<Vec<u8>> {
        pack_hists(&std::mem::take(&mut self.local_hists))
    }

    /// Rank 0: the ranks' records and histograms as one repetition.
    fn combine(&mut self, g: Gathered) -> Result<(DbenchRep, Vec<Metric>)> {
        let (recs, hists, clock) = (&g.recs, &g.bytes, g.clock);
        let mut merged: Option<LocalRep> = None;
        let mut ranks = Vec::new();
        for (r, (v, h)) in recs.chunks(REC).zip(hists).enumerate() {
            let part = LocalRep {
                last_finish: v[7],
                measured_bytes: v[2] as u64,
                measured_ops: v[3] as u64,
                passes: v[4] as u64,
                lines: v[5] as u64,
                max_lag: v[6],
                hists: unpack_hists(h)?,
            };
            ranks.push(RankClients {
                rank: r as u32,
                first_client: v[0] as u64,
                clients: v[1] as u64,
                measured_bytes: part.measured_bytes,
                measured_ops: part.measured_ops,
                passes: part.passes,
                lines: part.lines,
                start: v[8],
                finish: v[7],
                throughput_mb_s: 0.0,
            });
            match &mut merged {
                Some(m) => m.merge(part)?,
                None => merged = Some(part),
            }
        }
        let merged = merged.ok_or_else(|| anyhow!("no rank reported; this is a bug"))?;
        // Under the engine's own parameters the window checks count all clients.
        let mut all = Dbench::new(self.total.clone());
        let outcome = all.conclude(merged)?;
        self.hists = all.take_histograms();
        for r in &mut ranks {
            r.throughput_mb_s = r.measured_bytes as f64 / 1e6 / outcome.measured_seconds;
        }
        let span = |f: fn(&RankClients) -> f64| {
            let v: Vec<f64> = ranks.iter().map(f).collect();
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                - v.iter().copied().fold(f64::INFINITY, f64::min)
        };
        let rep = DbenchRep {
            start_skew: span(|r| r.start),
            end_skew: span(|r| r.finish),
            ranks,
            outcome,
            clock,
        };
        let mut m = self.engine.metrics(&rep.outcome);
        m.extend(mpi_metrics(&rep));
        Ok((rep, m))
    }

    fn cleanup(&mut self, target: &Target) -> Result<()> {
        if self.remover {
            self.engine.cleanup(target)
        } else {
            Ok(())
        }
    }

    fn take_histograms(&mut self) -> Vec<crate::metric::Histogram> {
        std::mem::take(&mut self.hists)
    }
}

/// The MPI figures of a repetition, beside dbench's.
fn mpi_metrics(rep: &DbenchRep) -> Vec<Metric> {
    let mut m = vec![
        ("ranks", Unit::Count, rep.ranks.len() as f64),
        ("start_skew", Unit::Seconds, rep.start_skew),
        ("end_skew", Unit::Seconds, rep.end_skew),
    ];
    let rates: Vec<f64> = rep.ranks.iter().map(|r| r.throughput_mb_s).collect();
    if let Some(s) = super::aggregate::spread(&rates) {
        m.push(("rank_throughput_min", Unit::MBPerSec, s.min));
        m.push(("rank_throughput_max", Unit::MBPerSec, s.max));
        m.push(("rank_throughput_mean", Unit::MBPerSec, s.mean));
        m.push(("rank_throughput_spread", Unit::Percent, s.spread_pct));
    }
    super::aggregate::metrics("total", m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_shared_in_contiguous_blocks() {
        let all: Vec<(usize, usize)> = (0..4).map(|r| share(10, 4, r)).collect();
        assert_eq!(all, [(0, 3), (3, 3), (6, 2), (8, 2)]);
        assert_eq!(share(4, 4, 3), (3, 1));
        assert_eq!(share(8, 1, 0), (0, 8));
    }

    #[test]
    fn histograms_survive_the_trip_to_rank_0() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.auto(true);
        for v in [1u64, 10, 1000, 123_456_789] {
            h.record(v).unwrap();
        }
        let mut hists: Vec<Option<Histogram<u64>>> = vec![None; OpKind::COUNT];
        hists[2] = Some(h.clone());
        let back = unpack_hists(&pack_hists(&hists).unwrap()).unwrap();
        assert_eq!(back.len(), OpKind::COUNT);
        let b = back[2].as_ref().unwrap();
        assert_eq!((b.len(), b.max(), b.min()), (h.len(), h.max(), h.min()));
        assert!(back.iter().enumerate().all(|(k, x)| k == 2 || x.is_none()));
        assert!(unpack_hists(&[1, 0]).is_err());
    }
}
