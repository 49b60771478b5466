//! A study's progress as data: the line protocol between the fslab inside a User-mode Linux
//! guest and the host that booted it. The guest's consoles are terminals whatever the host's
//! stderr is, and bars drawn inside would reach the host as escape codes sized to the guest's
//! idea of the terminal. Instead, when the host's stderr is a terminal
//! (`FSLAB_GUEST_TERMINAL=1`), the guest's [`Progress`] writes one line per event on its
//! stderr, and the host parses them and draws its own bars; every other line is printed as it
//! is, above the bars.
//!
//! A line is [`PREFIX`] and one event, words separated by single spaces, numbers as Rust
//! prints them, `-` for nothing; a name comes last and runs to the end of the line:
//!
//! ```text
//! @fslab-progress begin 12                       a study of 12 repetitions starts
//! @fslab-progress total 14                       the repetitions planned now
//! @fslab-progress done 3 41.5                    3 done, 41.5 s left (or -)
//! @fslab-progress rep journal=16MB · fio · rep 1/5
//! @fslab-progress phase files 5000 file_create   a phase: its unit, units of work (0: unknown), name
//! @fslab-progress progress 1200                  units done
//! @fslab-progress status 0.523 18500000 1000 15  fraction, bytes/s, their base, seconds left
//! @fslab-progress status 0.5 680000000 1024 3 166000 rd/read     … ops/s, what it does (if any)
//! @fslab-progress end                            the phase ended
//! @fslab-progress finish                         the study ended: bars away
//! ```
//!
//! Units: a counted thing (`files`, `dirs`, `trees`, `lines`, `ops`, `items`), `B4096` for
//! records of 4096 bytes, `MB` for bytes in powers of 1000. The guest runs this very binary
//! (the host's root is its root), so both sides always speak the same version.
//!
//! [`Progress`]: super::progress::Progress

use super::progress_text::RateUnit;
use crate::workload::PhaseStatus;

/// What starts every line of the protocol.
pub const PREFIX: &str = "@fslab-progress ";

/// One event of a study's progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A study of this many repetitions starts (the host makes its bars).
    Begin(u64),
    /// The repetitions planned now.
    Total(u64),
    /// Repetitions done, and seconds left if known.
    Done(u64, Option<f64>),
    /// A repetition starts: cell, workload, repetition.
    Rep(String),
    /// A phase starts: what it counts, units of work in it (0: unknown), its name.
    Phase(RateUnit, u64, String),
    /// Units of the phase done.
    Progress(u64),
    /// The engine's own status of the phase.
    Status(PhaseStatus),
    /// The phase ended.
    End,
    /// The study ended.
    Finish,
}

/// Counted things the protocol names; anything else arrives as `items`.
const THINGS: [&str; 6] = ["files", "dirs", "trees", "lines", "ops", "items"];

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// One line of text: no line breaks inside.
fn flat(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn unit_word(u: RateUnit) -> String {
    match u {
        RateUnit::Items(what) => flat(what).replace(' ', "_"),
        RateUnit::Bytes(n) => format!("B{n}"),
        RateUnit::DecimalBytes => "MB".to_string(),
    }
}

fn parse_unit(w: &str) -> Option<RateUnit> {
    if w == "MB" {
        return Some(RateUnit::DecimalBytes);
    }
    if let Some(n) = w.strip_prefix('B') {
        return n.parse().ok().map(RateUnit::Bytes);
    }
    Some(RateUnit::Items(
        THINGS.iter().find(|t| **t == w).copied().unwrap_or("items"),
    ))
}

/// The line of `e` (with [`PREFIX`], without a newline).
pub fn encode(e: &Event) -> String {
    let body = match e {
        Event::Begin(n) => format!("begin {n}"),
        Event::Total(n) => format!("total {n}"),
        Event::Done(n, eta) => format!("done {n} {}", opt(*eta)),
        Event::Rep(what) => format!("rep {}", flat(what)),
        Event::Phase(u, total, name) => format!("phase {} {total} {}", unit_word(*u), flat(name)),
        Event::Progress(n) => format!("progress {n}"),
        Event::Status(s) => {
            let mut line = format!(
                "status {} {} {} {}",
                opt(s.done),
                opt(s.bytes_per_sec),
                if s.decimal { 1000 } else { 1024 },
                opt(s.eta)
            );
            if s.ops_per_sec.is_some() || s.doing.is_some() {
                line += &format!(" {}", opt(s.ops_per_sec));
            }
            if let Some(d) = &s.doing {
                line += &format!(" {}", flat(d));
            }
            line
        }
        Event::End => "end".to_string(),
        Event::Finish => "finish".to_string(),
    };
    format!("{PREFIX}{body}")
}

/// A number or `-`; `None` (not a line of the protocol) for anything else.
fn num(w: &str) -> Option<Option<f64>> {
    if w == "-" {
        return Some(None);
    }
    w.parse::<f64>().ok().filter(|v| v.is_finite()).map(Some)
}

/// The event of `line`; `None` when the line is not one of the protocol (print it as it is).
pub fn parse(line: &str) -> Option<Event> {
    let body = line.trim_end_matches(['\n', '\r']).strip_prefix(PREFIX)?;
    let (word, rest) = body.split_once(' ').unwrap_or((body, ""));
    let mut words = rest.split(' ');
    let mut next = || words.next().unwrap_or("");
    let count = |w: &str| w.parse::<u64>().ok();
    Some(match word {
        "begin" => Event::Begin(count(rest)?),
        "total" => Event::Total(count(rest)?),
        "done" => {
            let n = count(next())?;
            Event::Done(n, num(next())?)
        }
        "rep" => Event::Rep(rest.to_string()),
        "phase" => {
            let unit = parse_unit(next())?;
            let total = count(next())?;
            let name = rest.splitn(3, ' ').nth(2).unwrap_or("").to_string();
            Event::Phase(unit, total, name)
        }
        "progress" => Event::Progress(count(rest)?),
        "status" => {
            let done = num(next())?;
            let bytes_per_sec = num(next())?;
            let decimal = match next() {
                "1000" => true,
                "1024" => false,
                _ => return None,
            };
            let eta = num(next())?;
            let ops_per_sec = match next() {
                "" => None,
                w => num(w)?,
            };
            let doing = rest.splitn(6, ' ').nth(5).map(str::to_string);
            Event::Status(PhaseStatus {
                done,
                bytes_per_sec,
                decimal,
                eta,
                ops_per_sec,
                doing,
            })
        }
        "end" if rest.is_empty() => Event::End,
        "finish" if rest.is_empty() => Event::Finish,
        _ => return None,
    })
}

#[cfg(test)]
#[path = "progress_wire_tests.rs"]
mod tests;
