//! dbench's parameters, declared once: the study file's keys (serde, `kind = "dbench"`) and
//! the command line's arguments (clap, flattened into `fslab dbench`, whose own options are
//! only the command's: where, the command-only load options, output, `--generate`). Both
//! build the engine's [`DbenchParams`] through [`DbenchSpec::params`].

use super::{generate, DbenchParams, Loadfile, DEFAULT_CLIENTS};
use crate::workload::param::Words;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// dbench's default run time (`-t`, study key `duration`): 600 seconds.
pub const DEFAULT_DURATION: &str = "600s";

/// How `fslab dbench` names the parameters in its refusals, from the clap definition: the
/// client count is the positional argument.
pub fn flags() -> Words {
    Words::of_args::<DbenchSpec>("fslab dbench")
}

/// A dbench load: the study file's `[[workload]] kind = "dbench"` keys and `fslab dbench`'s
/// arguments of the same meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct DbenchSpec {
    /// Label in reports; default derived from the parameters (study files only).
    #[serde(default)]
    #[arg(skip)]
    pub label: Option<String>,
    /// Number of clients; each replays the loadfile in its own tree clients/client<N> (dbench's
    /// NPROCS; study key `clients`, default 10). Required on the command line, except with
    /// --generate.
    #[serde(default = "d_clients")]
    #[arg(value_name = "NCLIENTS")]
    pub clients: Option<usize>,
    /// Measured run time after the warmup: seconds, or a duration such as 90s or 5m (dbench -t;
    /// study key `duration`).
    #[serde(default = "d_duration")]
    #[arg(
        short = 't',
        long = "timelimit",
        default_value = DEFAULT_DURATION,
        value_name = "TIME"
    )]
    pub duration: String,
    /// Warmup before the measured time, not counted (study key `warmup`). Default: a fifth of
    /// -t, like dbench (0 with --run-once).
    #[serde(default)]
    #[arg(long, value_name = "TIME")]
    pub warmup: Option<String>,
    /// NBENCH loadfile, plain or gzip-compressed (dbench -c; study key `loadfile`). Default:
    /// fslab's generated small-office load (see --generate).
    #[serde(default)]
    #[arg(short = 'c', long = "loadfile", value_name = "FILE")]
    pub loadfile: Option<PathBuf>,
    /// Open files with O_SYNC (dbench -s; study key `sync`). Default: off.
    #[serde(default)]
    #[arg(short = 's', long)]
    pub sync: bool,
    /// fsync after every write (dbench -F; study key `fsync`). Default: off.
    #[serde(default)]
    #[arg(short = 'F', long)]
    pub fsync: bool,
}

fn d_clients() -> Option<usize> {
    Some(DEFAULT_CLIENTS)
}
fn d_duration() -> String {
    DEFAULT_DURATION.into()
}

/// Parse a duration option, as a usage error naming the key.
pub fn parse_duration_opt(s: &str, what: &str) -> Result<Duration> {
    crate::units::parse_duration(s).map_err(|e| crate::error::usage(format!("{what}: {e}")))
}

impl DbenchSpec {
    /// The label, or `dbench N clients, DURATION[, sync][, fsync][, LOADFILE]`.
    pub fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| {
            let clients = self.clients.unwrap_or(DEFAULT_CLIENTS);
            let mut s = format!("dbench {clients} clients, {}", self.duration);
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

    /// Validated engine parameters of a study's workload (reads the loadfile).
    pub fn to_params(&self) -> Result<DbenchParams> {
        let mut p = self.params(Words::Keys, false)?;
        self.load(&mut p)?;
        Ok(p)
    }

    /// The engine parameters this spec sets, checked, but without the loadfile (the empty
    /// default's place): the cheap checks, so `fslab dbench 0` does not read a 26 MB loadfile
    /// to say no. Parse errors name the parameter in `words`; refusals of
    /// [`DbenchParams::validate`] are [`crate::workload::param::ParamError`]s for the caller to
    /// render. `run_once` (a command-line option) makes the default warmup 0.
    pub fn params(&self, words: Words, run_once: bool) -> Result<DbenchParams> {
        let duration = parse_duration_opt(&self.duration, words.name("duration"))?;
        let warmup = match &self.warmup {
            Some(w) => parse_duration_opt(w, words.name("warmup"))?,
            None if run_once => Duration::ZERO,
            None => super::default_warmup(duration),
        };
        let mut p = DbenchParams::new(Loadfile::default());
        p.clients = self.clients.unwrap_or(0);
        p.duration = duration;
        p.warmup = warmup;
        p.client.sync_open = self.sync;
        p.client.fsync = self.fsync;
        p.run_once = run_once;
        p.validate()?;
        Ok(p)
    }

    /// Read the loadfile (or generate the default one) into `p`.
    pub fn load(&self, p: &mut DbenchParams) -> Result<()> {
        let lf = match &self.loadfile {
            Some(path) => Loadfile::from_path(path)?,
            None => generate::default_loadfile(),
        };
        p.loadfile_source = lf.source.clone();
        p.loadfile = Arc::new(lf);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn spec_defaults_and_unknown_keys() {
        let s: DbenchSpec = toml::from_str("clients = 4\nduration = \"60s\"").unwrap();
        assert_eq!(s.clients, Some(4));
        assert!(!s.sync && !s.fsync && s.loadfile.is_none() && s.warmup.is_none());
        let p = s.to_params().unwrap();
        assert_eq!(p.duration, Duration::from_secs(60));
        assert_eq!(p.warmup, Duration::from_secs(12));
        assert!(toml::from_str::<DbenchSpec>("client = 4").is_err());
        let d: DbenchSpec = toml::from_str("").unwrap();
        assert_eq!((d.clients, d.duration.as_str()), (Some(10), "600s"));
        assert_eq!(d.label(), "dbench 10 clients, 600s");
        let stored = serde_json::to_value(&d).unwrap();
        assert_eq!(stored["clients"], 10, "stored as a number, as before");
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let refusal = |text: &str| {
            let spec: DbenchSpec = toml::from_str(text).unwrap();
            spec.to_params().unwrap_err().to_string()
        };
        let said = refusal("clients = 0");
        assert!(said.contains("0 clients"), "{said}");
        assert!(said.contains("e.g. clients = 10"), "study words: {said}");
        let said = refusal("clients = 100000");
        assert!(said.contains("clients = 100000: at most"), "{said}");
        assert!(refusal("duration = \"0s\"").contains("0 seconds"));
        assert!(refusal("warmup = \"soon\"").contains("warmup"));
    }

    /// The spec as `fslab dbench` reads it: the same struct, its flags.
    #[derive(Debug, Parser)]
    struct Cmd {
        #[command(flatten)]
        spec: DbenchSpec,
    }

    #[test]
    fn the_command_line_reads_the_same_declaration() {
        let c =
            Cmd::try_parse_from(["dbench", "4", "-t", "90s", "-s", "-F", "-c", "x.txt"]).unwrap();
        let from_toml: DbenchSpec = toml::from_str(
            "clients = 4\nduration = \"90s\"\nsync = true\nfsync = true\nloadfile = \"x.txt\"",
        )
        .unwrap();
        assert_eq!(c.spec, from_toml);
        let d = Cmd::try_parse_from(["dbench", "1"]).unwrap().spec;
        assert_eq!(d.duration, DEFAULT_DURATION, "the same default run time");
        assert_eq!(
            crate::units::parse_duration(DEFAULT_DURATION).unwrap(),
            Duration::from_secs(super::super::DEFAULT_TIMELIMIT)
        );
        let bad = Cmd::try_parse_from(["dbench", "1", "-t", "soon"])
            .unwrap()
            .spec;
        let said = bad.params(flags(), false).unwrap_err().to_string();
        assert!(said.starts_with("-t: "), "flag words: {said}");
        let once = d.params(flags(), true).unwrap();
        assert_eq!(once.warmup, Duration::ZERO, "--run-once: no warmup");
        assert_eq!(
            d.params(flags(), false).unwrap().warmup,
            Duration::from_secs(120)
        );
    }
}
