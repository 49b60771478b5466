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
pub mod sys;
mod worker;

pub use client::ClientOptions;
pub use engine::{Dbench, OpRow, RepOutcome};
pub use loadfile::Loadfile;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
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

impl DbenchParams {
    /// Parameters with dbench's defaults for `loadfile`.
    pub fn new(loadfile: Loadfile) -> DbenchParams {
        let duration = Duration::from_secs(DEFAULT_TIMELIMIT);
        DbenchParams {
            clients: DEFAULT_CLIENTS,
            duration,
            warmup: duration / 5,
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

/// A dbench workload as written in a study file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbenchSpec {
    /// Label in reports; default derived from the parameters.
    #[serde(default)]
    pub label: Option<String>,
    /// Number of clients (default 10).
    #[serde(default = "d_clients")]
    pub clients: usize,
    /// Measured run time after the warmup, e.g. "60s" (default "600s").
    #[serde(default = "d_duration")]
    pub duration: String,
    /// Warmup, e.g. "10s" (default a fifth of `duration`).
    #[serde(default)]
    pub warmup: Option<String>,
    /// An NBENCH loadfile, plain or gzip (default: fslab's generated office load).
    #[serde(default)]
    pub loadfile: Option<PathBuf>,
    /// Open files with O_SYNC (dbench --sync).
    #[serde(default)]
    pub sync: bool,
    /// fsync after every write (dbench --fsync).
    #[serde(default)]
    pub fsync: bool,
}

fn d_clients() -> usize {
    DEFAULT_CLIENTS
}
fn d_duration() -> String {
    format!("{DEFAULT_TIMELIMIT}s")
}

/// "1 client", "4 clients".
pub fn clients_text(n: usize) -> String {
    if n == 1 {
        "1 client".into()
    } else {
        format!("{n} clients")
    }
}

/// Parse a duration option, as a usage error naming the key.
pub fn parse_duration_opt(s: &str, what: &str) -> Result<Duration> {
    crate::units::parse_duration(s).map_err(|e| crate::error::usage(format!("{what}: {e}")))
}

impl DbenchSpec {
    /// The label, or `dbench N clients, DURATION[, sync][, fsync][, LOADFILE]`.
    pub fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| {
            let mut s = format!("dbench {} clients, {}", self.clients, self.duration);
            if self.sync {
                s.push_str(", sync");
            }
            if self.fsync {
                s.push_str(", fsync");
            }
            if let Some(l) = &self.loadfile {
                s.push_str(&format!(", {}", l.display()));
            }
            s
        })
    }

    /// Validated engine parameters (reads the loadfile).
    pub fn to_params(&self) -> Result<DbenchParams> {
        let lf = match &self.loadfile {
            Some(p) => Loadfile::from_path(p)?,
            None => generate::default_loadfile(),
        };
        let mut p = DbenchParams::new(lf);
        p.clients = self.clients;
        p.duration = parse_duration_opt(&self.duration, "duration")?;
        p.warmup = match &self.warmup {
            Some(w) => parse_duration_opt(w, "warmup")?,
            None => p.duration / 5,
        };
        p.client.sync_open = self.sync;
        p.client.fsync = self.fsync;
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_defaults_and_unknown_keys() {
        let s: DbenchSpec = toml::from_str("clients = 4\nduration = \"60s\"").unwrap();
        assert_eq!(s.clients, 4);
        assert!(!s.sync && !s.fsync && s.loadfile.is_none() && s.warmup.is_none());
        let p = s.to_params().unwrap();
        assert_eq!(p.duration, Duration::from_secs(60));
        assert_eq!(p.warmup, Duration::from_secs(12));
        assert!(toml::from_str::<DbenchSpec>("client = 4").is_err());
        let d: DbenchSpec = toml::from_str("").unwrap();
        assert_eq!((d.clients, d.duration.as_str()), (10, "600s"));
        assert_eq!(d.label(), "dbench 10 clients, 600s");
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let zero: DbenchSpec = toml::from_str("clients = 0").unwrap();
        let said = zero.to_params().unwrap_err().to_string();
        assert!(said.contains("0 clients"), "{said}");
        assert!(said.contains("e.g. clients = 10"), "study words: {said}");
        let many: DbenchSpec = toml::from_str("clients = 100000").unwrap();
        let said = many.to_params().unwrap_err().to_string();
        assert!(said.contains("clients = 100000: at most"), "{said}");
        let t0: DbenchSpec = toml::from_str("duration = \"0s\"").unwrap();
        assert!(t0
            .to_params()
            .unwrap_err()
            .to_string()
            .contains("0 seconds"));
        let bad: DbenchSpec = toml::from_str("warmup = \"soon\"").unwrap();
        assert!(bad.to_params().unwrap_err().to_string().contains("warmup"));
    }
}
