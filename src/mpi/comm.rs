//! Every MPI call fslab makes, in one place (rsmpi over the system's MPI library).
//!
//! All calls happen on the main thread; other threads (dbench's clients) never call MPI, so
//! `MPI_THREAD_FUNNELED` is requested and required. Three rules keep a failure on one rank
//! from hanging the others:
//!
//! 1. every step that can fail on some ranks ends in [`Comm::agree`], a collective that all
//!    ranks enter whatever happened locally, so they leave it with the same verdict;
//! 2. inside a phase, a failing rank *notifies* all others at once (a small non-blocking
//!    message); the others poll for notices every few dozen items and stop early; the
//!    phase's closing collective ([`Comm::settle`]) then receives every notice sent, so no
//!    message outlives its phase;
//! 3. an error that escapes outside these collectives (for example rank 0 cannot write the
//!    database) ends the whole job with `MPI_Abort` after printing it (see `super::run`), and
//!    so does a panic (a panic hook installed at `MPI_Init`).

use super::clock::{self, ClockInfo, Offset, PingSample};
use crate::error::Collective;
use ::mpi::collective::SystemOperation;
use ::mpi::datatype::PartitionMut;
use ::mpi::environment::{Threading, Universe};
use ::mpi::point_to_point::{Destination, Source};
use ::mpi::request::{Request, StaticScope};
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::traits::{CommunicatorCollectives, Root};
use anyhow::Result;
use std::cell::RefCell;

/// Tag of the clock ping-pong.
const TAG_PING: i32 = 0x5101;
/// Tag of in-phase notices.
const TAG_NOTICE: i32 = 0x5102;
/// Notice payload: the sender finished its share of the phase (stonewall).
static FINISHED: i32 = 1;
/// Notice payload: the sender failed (or was interrupted) and stopped.
static FAILED: i32 = 2;
/// How often a rank waiting in a phase's closing collective checks whether it completed.
const SETTLE_NAP: std::time::Duration = std::time::Duration::from_micros(200);
/// Bytes of a host name or error message sent between ranks.
const HOST_LEN: usize = 256;
const MSG_LEN: usize = 1024;

/// Notices sent and seen during the current phase.
#[derive(Default)]
struct Notices {
    sent: Vec<Request<'static, i32, StaticScope>>,
    sent_finished: bool,
    sent_failed: bool,
    seen_finished: u64,
    seen_failed: u64,
}

/// What a rank has seen from the others during a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    /// Ranks that announced they finished (stonewall).
    pub finished: u64,
    /// Ranks that announced a failure.
    pub failed: u64,
}

/// The MPI world of this job.
pub struct Comm {
    world: SimpleCommunicator,
    rank: u32,
    size: u32,
    hosts: Vec<String>,
    notices: RefCell<Notices>,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

fn to_fixed(s: &str, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    let mut end = s.len().min(len - 1);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    b[..end].copy_from_slice(&s.as_bytes()[..end]);
    b
}

fn from_fixed(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

impl Comm {
    /// `MPI_Init_thread` (funneled), then exchange host names.
    pub fn init() -> Result<Comm> {
        let (universe, threading) = ::mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "MPI was initialised twice; this is a bug in fslab, please report it"
                )
            })?;
        let world = universe.world();
        if threading < Threading::Funneled {
            // Every rank gets the same answer from one library, so all stop here together.
            crate::bail_usage!(
                "the MPI library offers only MPI_THREAD_SINGLE, but fslab's dbench clients are threads; use an MPI built with thread support (MPICH and Open MPI are)"
            );
        }
        // A panic (a bug) on one rank must not leave the others waiting in a collective, and
        // MPI_Finalize during unwinding could wait for them: print it, then end the job.
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default_hook(info);
            SimpleCommunicator::world().abort(101);
        }));
        let rank = world.rank() as u32;
        let size = world.size() as u32;
        let mine = to_fixed(&crate::sysinfo::short_hostname(), HOST_LEN);
        let mut all = vec![0u8; HOST_LEN * size as usize];
        world.all_gather_into(&mine[..], &mut all[..]);
        let hosts = all.chunks(HOST_LEN).map(from_fixed).collect();
        Ok(Comm {
            world,
            rank,
            size,
            hosts,
            notices: RefCell::new(Notices::default()),
            _universe: universe,
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// True on rank 0.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Short host name of every rank (index = rank).
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Number of ranks on this rank's host.
    pub fn ranks_on_my_host(&self) -> u64 {
        let me = &self.hosts[self.rank as usize];
        self.hosts.iter().filter(|h| *h == me).count() as u64
    }

    /// `MPI_Wtime`.
    pub fn wtime(&self) -> f64 {
        ::mpi::time()
    }

    /// `MPI_Barrier`.
    pub fn barrier(&self) {
        self.world.barrier();
    }

    /// End the whole job at once (`MPI_Abort`).
    pub fn abort(&self, code: u8) -> ! {
        self.world.abort(i32::from(code))
    }

    /// The MPI library's version string (first line).
    pub fn library(&self) -> String {
        ::mpi::environment::library_version()
            .ok()
            .and_then(|v| {
                v.lines()
                    .next()
                    .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .unwrap_or_else(|| "unknown MPI library".into())
    }

    /// True on every rank iff `local` is true on every rank.
    pub fn all(&self, local: bool) -> bool {
        let mut out = 0i32;
        self.world
            .all_reduce_into(&i32::from(local), &mut out, SystemOperation::min());
        out == 1
    }

    /// Rank 0's string on every rank.
    pub fn broadcast_text(&self, s: &str) -> String {
        let root = self.world.process_at_rank(0);
        let mut len = s.len() as u64;
        root.broadcast_into(&mut len);
        let mut b = if self.is_root() {
            s.as_bytes().to_vec()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut b[..]);
        String::from_utf8_lossy(&b).into_owned()
    }

    /// Gather equal-length vectors at rank 0 (concatenated by rank); `None` elsewhere.
    pub fn gather(&self, local: &[f64]) -> Option<Vec<f64>> {
        let root = self.world.process_at_rank(0);
        if self.is_root() {
            let mut all = vec![0f64; local.len() * self.size as usize];
            root.gather_into_root(local, &mut all[..]);
            Some(all)
        } else {
            root.gather_into(local);
            None
        }
    }

    /// Rank 0's values on every rank (`v` must have the same length everywhere).
    pub fn broadcast_f64s(&self, v: &mut [f64]) {
        self.world.process_at_rank(0).broadcast_into(v);
    }

    /// Gather byte strings of any length at rank 0 (index = rank); `None` elsewhere.
    pub fn gather_bytes(&self, local: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = local.len() as i32;
        if self.is_root() {
            let mut lens = vec![0i32; self.size as usize];
            root.gather_into_root(&len, &mut lens[..]);
            let displs: Vec<i32> = lens
                .iter()
                .scan(0i32, |acc, &l| {
                    let d = *acc;
                    *acc += l;
                    Some(d)
                })
                .collect();
            let total: i32 = lens.iter().sum();
            let mut all = vec![0u8; total.max(0) as usize];
            {
                let mut part = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
                root.gather_varcount_into_root(local, &mut part);
            }
            Some(
                lens.iter()
                    .zip(&displs)
                    .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
                    .collect(),
            )
        } else {
            root.gather_into(&len);
            root.gather_varcount_into(local);
            None
        }
    }

    /// Element-wise `op` of `local` over all ranks (collective), waiting without spinning:
    /// the reduction is started non-blocking and tested every `nap`, so a rank that arrives
    /// early leaves the CPU to the ranks (and threads) still working. (MPICH's blocking
    /// collectives poll the CPU at 100% while they wait.)
    fn all_reduce_napping(
        &self,
        local: &[u64],
        op: SystemOperation,
        nap: std::time::Duration,
    ) -> Vec<u64> {
        let mut out = vec![0u64; local.len()];
        ::mpi::request::scope(|scope| {
            let mut req = self
                .world
                .immediate_all_reduce_into(scope, local, &mut out[..], op);
            while let Err(r) = req.test() {
                req = r;
                std::thread::sleep(nap);
            }
        });
        out
    }

    /// Element-wise sums of `sums` and maxima of `maxes` over all ranks, napping while it
    /// waits (see `all_reduce_napping`).
    pub fn sum_max_napping(
        &self,
        sums: &[u64],
        maxes: &[u64],
        nap: std::time::Duration,
    ) -> (Vec<u64>, Vec<u64>) {
        let s = self.all_reduce_napping(sums, SystemOperation::sum(), nap);
        let m = self.all_reduce_napping(maxes, SystemOperation::max(), nap);
        (s, m)
    }

    /// Collective verdict: `Ok` on every rank iff `local` is `Ok` on every rank. Otherwise
    /// every rank gets a [`Collective`] error with one exit code; rank 0's message names each
    /// failed rank and its error (identical messages are grouped), the others' is empty.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        // i32, not u8: MPICH reduces 1-byte integers as signed, so 130 would lose to 0.
        let code = match &local {
            Ok(_) => 0i32,
            Err(e) => i32::from(crate::error::exit_code(e).max(1)),
        };
        let mut worst = 0i32;
        self.world
            .all_reduce_into(&code, &mut worst, SystemOperation::max());
        let worst = u8::try_from(worst).unwrap_or(2);
        if worst == 0 {
            return local;
        }
        let text = match &local {
            Ok(_) => String::new(),
            Err(e) => format!("{e:#}"),
        };
        let message = match self.gather_bytes(&to_fixed(&text, MSG_LEN)) {
            Some(all) => {
                self.describe_failures(&all.iter().map(|b| from_fixed(b)).collect::<Vec<_>>())
            }
            None => String::new(),
        };
        Err(Collective {
            code: worst,
            message,
        }
        .into())
    }

    fn describe_failures(&self, texts: &[String]) -> String {
        // Group ranks by message, in order of the first rank with it.
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        for (rank, t) in texts.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            match groups.iter_mut().find(|(text, _)| text == t) {
                Some((_, ranks)) => ranks.push(rank),
                None => groups.push((t, vec![rank])),
            }
        }
        let total = groups.len();
        let mut parts: Vec<String> = groups
            .into_iter()
            .take(8)
            .map(|(text, ranks)| {
                if ranks.len() == 1 {
                    format!("rank {} on {}: {text}", ranks[0], self.hosts[ranks[0]])
                } else {
                    let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
                    format!("ranks {}: {text}", list.join(","))
                }
            })
            .collect();
        if total > 8 {
            parts.push(format!("and {} more different errors", total - 8));
        }
        if parts.is_empty() {
            // Cannot happen (some rank failed), but never print an empty error.
            return "a rank failed without a message".into();
        }
        parts.join("; ")
    }

    /// Estimate every rank's clock offset from rank 0's (collective; `Some` on rank 0).
    /// Ranks on rank 0's host share its clock and are not measured unless `all` is set
    /// (a self-check: their estimate must then lie within its own uncertainty of 0).
    pub fn clocks(&self, rounds: usize, all: bool) -> Option<ClockInfo> {
        let measured = |r: usize| r != 0 && (all || self.hosts[r] != self.hosts[0]);
        let mut offsets = vec![Offset::SAME_CLOCK; self.size as usize];
        for (r, slot) in offsets.iter_mut().enumerate().skip(1) {
            if !measured(r) {
                continue;
            }
            let peer = self.world.process_at_rank(r as i32);
            if self.is_root() {
                let mut samples = Vec::with_capacity(rounds);
                for _ in 0..rounds {
                    let sent = ::mpi::time();
                    peer.send_with_tag(&0u8, TAG_PING);
                    let (remote, _) = peer.receive_with_tag::<f64>(TAG_PING);
                    samples.push(PingSample {
                        sent,
                        remote,
                        received: ::mpi::time(),
                    });
                }
                if let Some(o) = clock::estimate(&samples) {
                    *slot = o;
                }
            } else if self.rank as usize == r {
                let root = self.world.process_at_rank(0);
                for _ in 0..rounds {
                    let _ = root.receive_with_tag::<u8>(TAG_PING);
                    root.send_with_tag(&::mpi::time(), TAG_PING);
                }
            }
        }
        self.is_root().then(|| ClockInfo {
            offsets,
            tick: ::mpi::time_resolution(),
        })
    }

    /// Send `payload` to every other rank, unless this rank already sent a notice this phase.
    fn notify(&self, payload: &'static i32) {
        let mut n = self.notices.borrow_mut();
        if n.sent_finished || n.sent_failed {
            return;
        }
        n.sent_failed = *payload == FAILED;
        n.sent_finished = !n.sent_failed;
        for r in (0..self.size).filter(|&r| r != self.rank) {
            let req = self
                .world
                .process_at_rank(r as i32)
                .immediate_send_with_tag(StaticScope, payload, TAG_NOTICE);
            n.sent.push(req);
        }
    }

    /// Tell every other rank that this one finished its share of the phase (once per phase).
    pub fn notify_finished(&self) {
        self.notify(&FINISHED);
    }

    /// Tell every other rank that this one failed and stopped (once per phase).
    pub fn notify_failed(&self) {
        self.notify(&FAILED);
    }

    fn count(n: &mut Notices, payload: i32) {
        if payload == FAILED {
            n.seen_failed += 1;
        } else {
            n.seen_finished += 1;
        }
    }

    /// Receive the notices that have arrived (never blocks).
    pub fn poll(&self) -> Seen {
        let mut n = self.notices.borrow_mut();
        while let Some(status) = self
            .world
            .any_process()
            .immediate_probe_with_tag(TAG_NOTICE)
        {
            let (payload, _) = self
                .world
                .process_at_rank(status.source_rank())
                .receive_with_tag::<i32>(TAG_NOTICE);
            Self::count(&mut n, payload);
        }
        Seen {
            finished: n.seen_finished,
            failed: n.seen_failed,
        }
    }

    /// Close a phase (collective, and the phase's closing barrier): learn how many ranks
    /// failed, receive every notice sent to this rank, complete this rank's sends. Returns
    /// true if any rank failed.
    pub fn settle(&self) -> bool {
        let (sent_failed, sent_finished) = {
            let n = self.notices.borrow();
            (u64::from(n.sent_failed), u64::from(n.sent_finished))
        };
        // A rank that finished early naps here instead of spinning, so on a node with more
        // ranks than cores it does not take the CPU from the ranks still in the phase.
        let totals = self.all_reduce_napping(
            &[sent_failed, sent_finished],
            SystemOperation::sum(),
            SETTLE_NAP,
        );
        let mut n = self.notices.borrow_mut();
        let expect_failed = totals[0] - sent_failed;
        let expect_finished = totals[1] - sent_finished;
        while n.seen_failed < expect_failed || n.seen_finished < expect_finished {
            let (payload, _) = self.world.any_process().receive_with_tag::<i32>(TAG_NOTICE);
            Self::count(&mut n, payload);
        }
        for req in n.sent.drain(..) {
            req.wait();
        }
        *n = Notices::default();
        totals[0] > 0
    }
}
