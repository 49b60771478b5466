//! What a report was made from: its sources, their environments, and what differs between
//! the two sides of a comparison.

use serde::Serialize;

/// A study or run the report was made from.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    /// How the user named it (`12`, `quickstart`, `12:3`), or the id.
    pub spec: String,
    /// Store id.
    pub id: i64,
    /// A study or an engine run.
    pub kind: crate::vocab::StudyKind,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Status.
    pub status: crate::store::StudyStatus,
    /// Command line that made it.
    pub command_line: String,
    /// fslab version that measured it.
    pub tool_version: String,
    /// Start time as stored.
    pub created_at: String,
    /// End time as stored.
    pub finished_at: Option<String>,
    /// When a study was resumed (`--resume`; environment keys `resumed_at.N`), in order;
    /// each resume made its configurations' file systems again.
    pub resumed_at: Vec<String>,
}

impl Source {
    /// The header line saying that (and when) the study was resumed, if it was.
    pub fn resumed_line(&self) -> Option<String> {
        match self.resumed_at.len() {
            0 => None,
            1 => Some(format!(
                "resumed at {}: the repetitions after it ran on file systems made again",
                self.resumed_at[0]
            )),
            n => Some(format!(
                "resumed {n} times, at {}: the repetitions after each ran on file systems made again",
                self.resumed_at.join(", ")
            )),
        }
    }
}

/// When the two sides of `fslab compare` ran, from their counted repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct SourceTiming {
    /// Whether their repetitions overlapped in time (two cells of one study run in
    /// interleaved order), so that drift of the machine touched both alike. When not (two
    /// separate runs), a drift cannot be told from a difference.
    pub interleaved: bool,
    /// Each side's span, A first.
    pub spans: Vec<Span>,
}

/// One side's time span.
#[derive(Debug, Clone, Serialize)]
pub struct Span {
    /// The source's spec.
    pub source: String,
    /// Its first counted repetition's start, as stored.
    pub first_start: String,
    /// Its last counted repetition's end, as stored.
    pub last_end: String,
}

/// Environment of one source.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    /// The source's spec (matches `Source::spec`).
    pub source: String,
    /// Key/value pairs, sorted by key. In JSON, sizes and counts (`*_bytes`, `*_count`,
    /// `*_rotational`) are numbers, every other value a string.
    #[serde(serialize_with = "entries_json")]
    pub entries: Vec<(String, String)>,
}

/// The value of `key` among environment entries.
pub fn entry<'a>(entries: &'a [(String, String)], key: &str) -> Option<&'a str> {
    entries
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
impl Environment {
    /// For tests: the environment of source `1` with `pairs`.
    pub(crate) fn of(pairs: &[(&str, &str)]) -> Environment {
        Environment {
            source: "1".into(),
            entries: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// Whether an environment value is a number in JSON: a whole number under a key that
/// names a size, a count or a flag.
pub fn env_is_number(key: &str, value: &str) -> Option<u64> {
    let numeric_key = ["_bytes", "_count", "_rotational"]
        .iter()
        .any(|s| key.ends_with(s));
    let plain = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'));
    if numeric_key && plain {
        value.parse().ok()
    } else {
        None
    }
}

/// Environment entries as JSON, sizes and counts as numbers (see [`env_is_number`]).
pub fn env_json(entries: &[(String, String)]) -> serde_json::Value {
    serde_json::Value::Array(
        entries
            .iter()
            .map(|(k, v)| match env_is_number(k, v) {
                Some(n) => serde_json::json!([k, n]),
                None => serde_json::json!([k, v]),
            })
            .collect(),
    )
}

fn entries_json<S: serde::Serializer>(
    entries: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    env_json(entries).serialize(s)
}

/// Where a difference was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffSection {
    /// A workload parameter (`sync`, `files`, `record_size`, …).
    Parameters,
    /// A setting of the configuration (file system, target, journal, mount options, …).
    Configuration,
    /// An environment entry (kernel, device, mount options as found, …).
    Environment,
}

impl DiffSection {
    /// The word printed in the text formats.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffSection::Parameters => "parameters",
            DiffSection::Configuration => "configuration",
            DiffSection::Environment => "environment",
        }
    }
}

/// One entry whose value differs between A and B (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// Where it was found.
    pub section: DiffSection,
    /// The key (`sync`, `fs_type`, `target_fs`); a parameter of one of several workloads is
    /// prefixed with the workload's label.
    pub key: String,
    /// A's value.
    pub a: Option<String>,
    /// B's value.
    pub b: Option<String>,
}
