//! Set-up steps and report pieces that every engine's MPI mode shares: the job tag, the check
//! that all ranks got the same options, whether all ranks see the target directory, the
//! results database (rank 0 only), and the header lines about hosts and clocks.

use super::clock::ClockInfo;
use super::comm::Comm;
use anyhow::{Context, Result};
use comfy_table::{presets, Cell, CellAlignment, Table};
use std::path::{Path, PathBuf};

/// The start of every engine's MPI job, on every rank: the same options everywhere, then
/// the job's tag.
///
/// Every rank must run the same phases and repetitions, or the collectives would not match
/// (mpiexec's `A : B` syntax can give ranks different command lines). `mine` is this rank's
/// options; `command` names the engine for the message. The tag, `<host of rank 0>.<pid of
/// rank 0>` on every rank, names what the job creates, so two jobs in one directory never
/// collide.
pub fn start(comm: &Comm, mine: serde_json::Value, command: &str) -> Result<String> {
    let mine = mine.to_string();
    let rank0 = comm.broadcast_text(&mine);
    let local = if mine == rank0 {
        Ok(())
    } else {
        Err(crate::error::usage(format!(
            "was started with other {command} options than rank 0 (mine: {mine}; rank 0: {rank0}); give every rank the same command line"
        )))
    };
    comm.agree(local)?;
    let host = crate::sysinfo::short_hostname();
    Ok(comm.broadcast_text(&format!("{host}.{}", std::process::id())))
}

/// `FSLAB_MPI_CLOCK_CHECK=1` as rank 0 sees it, on every rank (it decides which ranks take
/// part in the clock ping-pong, so all must agree).
pub fn clock_check(comm: &Comm) -> bool {
    let mine = std::env::var("FSLAB_MPI_CLOCK_CHECK").unwrap_or_default();
    comm.broadcast_text(&mine) == "1"
}

/// Does every rank see the directory rank 0 sees? Rank 0 creates a marker file in its `dir`,
/// every rank looks for it in its own `dir`. With `required`, a rank that does not see it
/// fails (the message says why the layout needs a shared directory).
pub fn seen_by_all(comm: &Comm, dir: &Path, tag: &str, required: Option<&str>) -> Result<bool> {
    let marker = dir.join(format!(".fslab-mpi.{tag}"));
    let made = if comm.is_root() {
        std::fs::File::create(&marker)
            .map(drop)
            .with_context(|| format!("cannot create {}", marker.display()))
    } else {
        Ok(())
    };
    comm.agree(made)?;
    let sees = marker.symlink_metadata().is_ok();
    let all = comm.all(sees);
    if comm.is_root() {
        // Every rank has looked (the reduction above needs all of them).
        let _ = std::fs::remove_file(&marker);
    }
    let local = match required {
        Some(why) if !sees => Err(crate::error::usage(format!(
            "does not see {}, which rank 0 created: {why}",
            marker.display()
        ))),
        _ => Ok(()),
    };
    comm.agree(local)?;
    Ok(all)
}

/// How many ranks write to the file system this rank sees: all of them when every rank sees
/// rank 0's directory, else the ranks on this host (node-local directories).
pub fn ranks_sharing_my_fs(comm: &Comm, all_see: bool) -> u64 {
    if all_see {
        u64::from(comm.size())
    } else {
        comm.ranks_on_my_host()
    }
}

/// Rank 0 opens the results database (`None` with `--no-store` and on other ranks); a
/// failure ends the run on all ranks.
pub fn open_store(
    comm: &Comm,
    no_store: bool,
    db: Option<PathBuf>,
) -> Result<Option<crate::store::Store>> {
    comm.agree(if comm.is_root() && !no_store {
        crate::store::Store::open(&db.unwrap_or_else(crate::store::default_path)).map(Some)
    } else {
        Ok(None)
    })
}

/// Hosts in rank order with their number of ranks.
pub fn hosts(comm: &Comm) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = Vec::new();
    for h in comm.hosts() {
        match v.iter_mut().find(|(n, _)| n == h) {
            Some(e) => e.1 += 1,
            None => v.push((h.clone(), 1)),
        }
    }
    v
}

/// "4 ranks on 1 host(s) (node01 ×4)".
pub fn ranks_text(comm: &Comm) -> String {
    let hosts = hosts(comm);
    let list: Vec<String> = hosts
        .iter()
        .take(4)
        .map(|(h, n)| format!("{h} ×{n}"))
        .collect();
    let more = if hosts.len() > 4 { ", …" } else { "" };
    format!(
        "{} ranks on {} host(s) ({}{more})",
        comm.size(),
        hosts.len(),
        list.join(", ")
    )
}

/// The facts about the job that every engine's JSON and stored parameters carry, with the
/// engine's own (`extra`).
pub fn mpi_json(comm: &Comm, extra: &[(&str, serde_json::Value)]) -> serde_json::Value {
    let mut v = serde_json::json!({
        "ranks": comm.size(),
        "hosts": hosts(comm).into_iter().map(|(h, n)| serde_json::json!({"host": h, "ranks": n})).collect::<Vec<_>>(),
        "library": comm.library(),
    });
    if let Some(o) = v.as_object_mut() {
        o.extend(extra.iter().map(|(k, x)| ((*k).to_string(), x.clone())));
    }
    v
}

/// The header line about clocks.
pub fn clock_line(c: &ClockInfo) -> String {
    let tick = format!("MPI_Wtime, resolution {:.0} ns", c.tick * 1e9);
    if c.max_uncertainty() == 0.0 {
        format!("clock: {tick}; every rank on rank 0's node (one clock, no correction)")
    } else {
        format!(
            "clock: {tick}; offsets to rank 0 up to {:.1} µs, each known to ±{:.1} µs (ping-pong), corrected",
            c.max_offset() * 1e6,
            c.max_uncertainty() * 1e6
        )
    }
}

/// How much each rank has of something, from every rank's share: "3 per rank", or
/// "2–3 per rank" when the shares differ.
pub fn per_rank(shares: impl IntoIterator<Item = u64>) -> String {
    let (lo, hi) = shares
        .into_iter()
        .fold((u64::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
    match lo >= hi {
        true => format!("{hi} per rank"),
        false => format!("{lo}–{hi} per rank"),
    }
}

/// Rank `rank`'s short host name ("?" for a rank the job does not have).
pub fn host_of(comm: &Comm, rank: u32) -> String {
    comm.hosts()
        .get(rank as usize)
        .map_or_else(|| "?".into(), String::clone)
}

/// A table of per-rank figures as every MPI report prints it: `head` (the column names
/// separated by `|`) over `rows`, the columns in `left` aligned left, the others (numbers)
/// right.
pub fn rank_table(head: &str, left: &[usize], rows: Vec<Vec<String>>) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_BORDERS_ONLY);
    t.set_header(head.split('|'));
    for row in rows {
        t.add_row(
            row.into_iter()
                .enumerate()
                .map(|(i, v)| match left.contains(&i) {
                    true => Cell::new(v),
                    false => Cell::new(v).set_alignment(CellAlignment::Right),
                }),
        );
    }
    t.to_string()
}
