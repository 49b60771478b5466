//! The dbench-compatible client load: N clients replay an NBENCH loadfile in their own
//! trees, and the engine reports throughput in MB/s and per-operation latency percentiles.
//!
//! Follows dbench 4.0 (Tridgell; `child.c`, `fileio.c`, `dbench.c`): the loadfile format,
//! the file back end's system calls, the per-client `clients/client<N>` trees, the options
//! (`-t` 600 s, warmup a fifth of it, `-c`, `-D`, `-s`/`--sync`, `-F`/`--fsync`,
//! `-S`/`--sync-dir`, `--no-resolve`, `--run-once`, `--skip-cleanup`) and the throughput
//! definition. Differs where dbench is silent or lossy: every operation's outcome is checked
//! against the loadfile, a malformed line is refused, and latency is a merged HDR histogram.
//! See `doc/dbench.md`.

mod def;
pub use def::{CAPS, NAME};
pub mod client;
pub(crate) mod conduct;
pub mod engine;
pub mod footprint;
pub mod generate;
pub mod loadfile;
pub mod ops;
mod parse;
pub mod report;
mod spec;
pub mod sys;
mod worker;

pub use client::ClientOptions;
pub use engine::{Dbench, OpRow, RepOutcome};
pub use loadfile::Loadfile;
pub use spec::{flags, parse_duration_opt, DbenchSpec, DEFAULT_DURATION};

use anyhow::Result;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// dbench's default run time in seconds (`-t`).
pub const DEFAULT_TIMELIMIT: u64 = 600;
/// dbench's default number of clients.
pub const DEFAULT_CLIENTS: usize = 10;
/// The most clients fslab starts (threads).
pub const MAX_CLIENTS: usize = 4096;

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Everything one dbench run needs.
#[derive(Debug, Clone, Serialize)]
pub struct DbenchParams {
    /// Number of clients (threads), each with its own tree.
    pub clients: usize,
    /// Measured time after the warmup (`-t`).
    #[serde(serialize_with = "secs")]
    pub duration: Duration,
    /// Warmup before the measured time (not counted).
    #[serde(serialize_with = "secs")]
    pub warmup: Duration,
    /// The parsed loadfile, shared by the clients.
    #[serde(skip)]
    pub loadfile: Arc<Loadfile>,
    /// Where the loadfile came from (a path or the default generator and seed).
    pub loadfile_source: String,
    /// How operations are issued.
    pub client: ClientOptions,
    /// Honour the loadfile's timestamps (dbench does); false replays as fast as possible.
    pub timestamps: bool,
    /// Play the loadfile once per client instead of looping until the time is up.
    pub run_once: bool,
    /// Leave the client trees in place after the run (dbench `--skip-cleanup`).
    pub skip_cleanup: bool,
}

/// dbench's warm-up when none is given: a fifth of the measured time.
pub fn default_warmup(duration: Duration) -> Duration {
    duration / 5
}

impl DbenchParams {
    /// Parameters with dbench's defaults for `loadfile`.
    pub fn new(loadfile: Loadfile) -> DbenchParams {
        let duration = Duration::from_secs(DEFAULT_TIMELIMIT);
        DbenchParams {
            clients: DEFAULT_CLIENTS,
            duration,
            warmup: default_warmup(duration),
            loadfile_source: loadfile.source.clone(),
            loadfile: Arc::new(loadfile),
            client: ClientOptions::default(),
            timestamps: true,
            run_once: false,
            skip_cleanup: false,
        }
    }

    /// Check values that make no sense, with a message naming the fix.
    pub fn validate(&self) -> Result<()> {
        if self.clients == 0 {
            crate::bail_param!("0 clients: at least one client is needed, e.g. {{clients=10}}");
        }
        if self.clients > MAX_CLIENTS {
            crate::bail_param!(
                "{{clients={}}}: at most {MAX_CLIENTS} clients are supported; use fewer",
                self.clients
            );
        }
        if self.duration.is_zero() {
            crate::bail_param!(
                "a run time of 0 seconds measures nothing; give {{duration=}} a positive time such as 60"
            );
        }
        Ok(())
    }
}

/// "1 client", "4 clients".
pub fn clients_text(n: usize) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}
