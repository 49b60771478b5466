//! `mpiexec -n N fslab dbench NCLIENTS …`: dbench's checks agreed by all ranks, the run
//! (stored by rank 0 only), and rank 0's dbench-style report with the MPI figures.

use super::{conclude, params_from, Console};
use crate::app::finish::{EngineRan, Recorded};
use crate::app::rundoc::UnderMpi;
use crate::cli::DbenchArgs;
use crate::mpi::comm::Comm;
use crate::mpi::dbench::{share, DbenchRep, DistDbench};
use crate::mpi::job;
use crate::mpi::rank::Ranks;
use crate::workload::dbench::{clients_text, DbenchParams};
use crate::workload::{Observer, Target, Workload, WorkloadKind};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::rc::Rc;

/// Version of the JSON document printed by `--json` under MPI.
pub const JSON_SCHEMA: &str = "fslab.dbench.mpi.v2";

fn validate(comm: &Comm, a: &DbenchArgs) -> Result<(DbenchParams, PathBuf)> {
    let p = params_from(a)?;
    let n = comm.size() as usize;
    if p.clients < n {
        crate::bail_usage!(
            "{} for {n} ranks: under mpiexec NCLIENTS counts the clients of all ranks together and every rank needs at least one; give at least {n} clients or start fewer ranks",
            clients_text(p.clients)
        );
    }
    let dir = std::fs::canonicalize(&a.directory)
        .with_context(|| format!("cannot resolve {}", a.directory.display()))?;
    Ok((p, dir))
}

/// "2 per rank" or "2–3 per rank": the clients of the ranks.
fn per_rank_text(total: usize, size: usize) -> String {
    job::per_rank((0..size).map(|r| share(total, size, r).1 as u64))
}

/// Run `fslab dbench` as one rank of the job.
/// The first lines of an MPI run: dbench's, then the ranks, how the clients are spread over
/// them, and whether every rank sees `-D`.
fn header(comm: &Comm, params: &DbenchParams, target: &Target, all_see: bool) -> String {
    format!(
        "{}\n\
         MPI: {}; clients {} (contiguous numbers), released together at one instant on rank 0's clock; -D {}",
        super::header(params, target),
        job::ranks_text(comm),
        per_rank_text(params.clients, comm.size() as usize),
        if all_see {
            "seen by all ranks"
        } else {
            "NOT the same directory on every node"
        }
    )
}

pub fn run(comm: &Rc<Comm>, a: DbenchArgs, db: Option<PathBuf>) -> Result<()> {
    let (params, dir) = comm.agree(validate(comm, &a))?;
    // -D may differ per node (node-local directories); the load and the timing may not.
    let mine = serde_json::json!({
        "params": params, "repeat": a.run.repeat,
        "loadfile_ops": params.loadfile.ops.len(), "loadfile_bytes": params.loadfile.bytes_per_pass(),
    });
    let tag = job::start(comm, mine, "dbench")?;
    let all_see = job::seen_by_all(comm, &dir, &tag, None)?;
    let target = Target::new(&dir);
    let dist = DistDbench::new(Rc::clone(comm), params.clone(), all_see);
    let mut engine = Ranks::new(comm, dist);
    engine.prepare(&target)?;
    let root = comm.is_root();
    let console = Console {
        json: a.run.json,
        quiet: a.run.quiet || !root,
    };
    console.message(&header(comm, &params, &target, all_see));
    let store = job::open_store(comm, a.run.no_store, db)?;
    let mut on_rep = |rep: u32, _m: &[crate::metric::Metric], w: &Ranks<DistDbench>| {
        if let (true, Some(r)) = (root, w.reps.last()) {
            super::print_rep(&a, &params, rep, &r.outcome);
            if !a.run.json {
                crate::outln!("{}", mpi_line(r));
            }
        }
    };
    let label = super::label(&params, a.load.loadfile.is_some(), Some(comm.size()));
    let mpi = under_mpi(comm, &params, all_see);
    let mut recorded = Recorded::new(WorkloadKind::Dbench, &params, label, &a.run, store)?
        .under(&mpi, comm.is_root());
    // Rank 0 counts the repetitions in lines on stderr, as `fslab dbench` does.
    let steps = super::steps(&params, root && !a.run.quiet);
    let mut ran = recorded.run(&mut engine, &target, &console, Some(&steps), &mut on_rep)?;
    if root {
        finish(
            comm,
            (&a, &params, &dir),
            &engine,
            (&recorded, &mut ran),
            mpi,
        )?;
    }
    let names = || engine.mode.engine.top_level_names();
    conclude(&params, &dir, root, names, ran.result.error)
}

/// What the job adds to the stored parameters, the JSON document and the ending.
fn under_mpi(comm: &Comm, params: &DbenchParams, all_see: bool) -> UnderMpi {
    let per_rank = per_rank_text(params.clients, comm.size() as usize);
    let extra = [
        ("clients_per_rank", per_rank.into()),
        ("directory_seen_by_all_ranks", all_see.into()),
    ];
    crate::app::mpi::under_mpi(comm, &extra)
}

/// The MPI line under dbench's report.
fn mpi_line(r: &DbenchRep) -> String {
    let rates: Vec<f64> = r.ranks.iter().map(|x| x.throughput_mb_s).collect();
    let s = crate::mpi::aggregate::spread(&rates);
    format!(
        "MPI: {} ranks, start skew {:.3} ms, finish skew {:.3} ms; per rank {:.3}–{:.3} MB/sec (spread {:.0}%); {}",
        r.ranks.len(),
        r.start_skew * 1e3,
        r.end_skew * 1e3,
        s.map_or(0.0, |x| x.min),
        s.map_or(0.0, |x| x.max),
        s.map_or(0.0, |x| x.spread_pct),
        job::clock_line(&r.clock)
    )
}

fn per_rank_table(comm: &Comm, r: &DbenchRep) -> String {
    let head = "rank|host|clients|start +ms|ops|MB|passes|MB/sec";
    let rows = r.ranks.iter().map(|x| {
        let last = x.first_client + x.clients.max(1) - 1;
        vec![
            x.rank.to_string(),
            job::host_of(comm, x.rank),
            format!("{}–{last}", x.first_client),
            format!("{:.3}", x.start * 1e3),
            x.measured_ops.to_string(),
            format!("{:.1}", x.measured_bytes as f64 / 1e6),
            x.passes.to_string(),
            format!("{:.3}", x.throughput_mb_s),
        ]
    });
    job::rank_table(head, &[1], rows.collect())
}

/// Rank 0's ending: the engine's, given the job (`mpi`), with the MPI warnings, figures and
/// table.
fn finish(
    comm: &Comm,
    (a, params, dir): (&DbenchArgs, &DbenchParams, &std::path::Path),
    engine: &Ranks<DistDbench>,
    (recorded, ran): (&Recorded, &mut EngineRan),
    mpi: UnderMpi,
) -> Result<()> {
    if let Some(r) = engine.reps.last() {
        let ranks: Vec<crate::mpi::aggregate::RankPhase> = r
            .ranks
            .iter()
            .map(|x| crate::mpi::aggregate::RankPhase {
                rank: x.rank,
                items: x.measured_ops,
                bytes: x.measured_bytes,
                start: x.start,
                // Every rank's window ends at the same instant.
                end: params.warmup.as_secs_f64() + r.outcome.measured_seconds,
                sync: 0.0,
                stonewall: None,
            })
            .collect();
        if let Some(agg) = crate::mpi::aggregate::aggregate(&ranks) {
            ran.warnings.extend(crate::mpi::aggregate::warnings_with(
                "dbench",
                &agg,
                "the clients of the slower ranks got less done in the same window",
            ));
        }
    }
    let mpi = mpi.with_reps(&engine.reps, a.mpi.per_rank, |r| per_rank_table(comm, r))?;
    super::print_end(
        (recorded, &*ran, JSON_SCHEMA),
        (a, params, dir),
        engine.reps.iter().map(|r| &r.outcome).collect(),
        Some(&mpi),
    )
}
