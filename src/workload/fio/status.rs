//! fio's running status. With `--status-interval=1` fio prints its whole JSON document every
//! second while the jobs run, then the final one (its helper thread stops before the final
//! report, so the last document on standard output is always the final one). [`Splitter`]
//! cuts standard output into documents as they arrive; [`Reading`] takes the few fields a
//! progress display needs; [`status`] turns two consecutive readings into a
//! [`PhaseStatus`]:
//!
//! * the fraction done as fio's own status line computes it (`eta.c`:
//!   `elapsed / (elapsed + eta)`, from the document's `elapsed` and `eta`, which are the whole
//!   run's — every job carries the same two);
//! * the rates over the last interval: the bytes read, written and trimmed by all jobs since
//!   the previous document, and their I/O operations (fio's IOPS), over the time between the
//!   two documents' `timestamp_ms` (none over less than [`MIN_INTERVAL`]: the display keeps
//!   the rates it has);
//! * fio's ETA, unless fio does not know it yet (it then prints `INT_MAX` or more);
//! * what fio does: `setting up` from the start until a job moves data (fio lays out the
//!   jobs' files first, which takes seconds for large ones), then the jobs whose data moved in
//!   the interval and their directions (`wr/write`), named as the results name them.

use crate::workload::{Observer, PhaseStatus};
use serde::Deserialize;

/// Cuts fio's standard output into its JSON documents. fio prints each document from a line
/// `{` to a line `}` (members are indented; a string never holds a raw newline); anything
/// else (a rare `fio: …` notice) is kept apart.
#[derive(Debug, Default)]
pub struct Splitter {
    doc: Option<String>,
    /// Lines outside any document.
    pub outside: String,
}

/// The most of one document, or of the lines outside documents, kept in memory: fio's
/// final document is far smaller; a job that floods standard output is cut here (and said
/// so) instead of being held whole.
pub const KEEP_LIMIT: usize = 64 << 20;

impl Splitter {
    /// Take one line (without its newline); a finished document when this line ends one.
    pub fn line(&mut self, line: &str) -> Option<String> {
        match &mut self.doc {
            Some(d) => {
                if d.len() + line.len() < KEEP_LIMIT {
                    d.push_str(line);
                    d.push('\n');
                }
                if line.trim_end() == "}" {
                    return self.doc.take();
                }
            }
            None if line.trim_end() == "{" => self.doc = Some("{\n".to_string()),
            None => {
                if self.outside.len() + line.len() < crate::process::KEEP {
                    self.outside.push_str(line);
                    self.outside.push('\n');
                } else if !self.outside.ends_with(CUT) {
                    self.outside.push_str(CUT);
                }
            }
        }
        None
    }

    /// A document left unfinished (fio killed mid-print): its text, for error messages.
    pub fn unfinished(self) -> (String, Option<String>) {
        (self.outside, self.doc)
    }
}

/// Where the lines outside documents were cut.
const CUT: &str = "[fslab: more output not kept here]\n";

/// Read one line into `buf` (its newline included), at most `cap` bytes of it: the rest of a
/// longer line is read and dropped. Returns the bytes read from `r` (0 at the end).
fn read_line_capped(
    r: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..used.min(room)]);
        r.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// What a display needs of one of fio's documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// fio's clock when it made the document, in ms (`timestamp_ms`), if it says.
    pub at_ms: Option<f64>,
    /// Seconds since fio started (`elapsed`).
    pub elapsed: f64,
    /// Seconds fio expects still to run (`eta`); `None` while fio does not know.
    pub eta: Option<f64>,
    /// Bytes moved so far by all jobs, every direction.
    pub bytes: f64,
    /// I/O operations so far by all jobs, every direction.
    pub ios: f64,
    /// Per job, in fio's order: its name and the bytes it moved so far in each direction.
    pub jobs: Vec<(String, [f64; 3])>,
}

/// fio's directions, in the order of [`Reading::jobs`]' bytes, as the results name them.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// What fio does before any job moves data (and between groups of jobs, while a later one
/// lays out its files): fio's own word for its state `P`.
pub const SETTING_UP: &str = "setting up";

#[derive(Deserialize)]
struct Doc {
    timestamp_ms: Option<f64>,
    #[serde(default)]
    jobs: Vec<Job>,
}

#[derive(Deserialize)]
struct Job {
    #[serde(default)]
    jobname: String,
    eta: Option<f64>,
    elapsed: Option<f64>,
    read: Option<Dir>,
    write: Option<Dir>,
    trim: Option<Dir>,
}

#[derive(Deserialize)]
struct Dir {
    #[serde(default)]
    io_bytes: f64,
    #[serde(default)]
    total_ios: f64,
}

/// fio's value for an ETA it cannot tell yet is `INT_MAX` (or, unsigned, more).
const UNKNOWN_ETA: f64 = 2_147_483_647.0;

/// The reading of one document; `None` if it is not one of fio's run documents.
pub fn reading(doc: &str) -> Option<Reading> {
    let d: Doc = serde_json::from_str(doc).ok()?;
    let first = d.jobs.first()?;
    let dirs = || {
        d.jobs
            .iter()
            .flat_map(|j| [&j.read, &j.write, &j.trim])
            .flatten()
    };
    let bytes_of = |x: &Option<Dir>| x.as_ref().map_or(0.0, |x| x.io_bytes);
    Some(Reading {
        at_ms: d.timestamp_ms,
        elapsed: first.elapsed.unwrap_or(0.0),
        eta: first.eta.filter(|&e| (0.0..UNKNOWN_ETA).contains(&e)),
        bytes: dirs().map(|x| x.io_bytes).sum(),
        ios: dirs().map(|x| x.total_ios).sum(),
        jobs: d
            .jobs
            .iter()
            .map(|j| {
                let moved = [bytes_of(&j.read), bytes_of(&j.write), bytes_of(&j.trim)];
                (j.jobname.clone(), moved)
            })
            .collect(),
    })
}

/// The shortest interval a rate is measured over: fio's final document follows its last
/// status document by a fraction of a second (the jobs' last moments), and the bytes of that
/// moment are no rate to show.
pub const MIN_INTERVAL: f64 = 0.5;

/// The status shown after reading `now`, the previous reading being `before` (with the
/// seconds between them measured by fslab, used when fio gives no timestamps).
pub fn status(before: Option<&Reading>, now: &Reading, secs_between: f64) -> PhaseStatus {
    let done = match now.eta {
        Some(eta) if now.elapsed > 0.0 => Some(now.elapsed / (now.elapsed + eta)),
        _ => None,
    };
    // The previous reading and the seconds since, if long enough to measure over.
    let interval = before
        .map(|b| {
            let secs = match (b.at_ms, now.at_ms) {
                (Some(x), Some(y)) => (y - x) / 1000.0,
                _ => secs_between,
            };
            (b, secs)
        })
        .filter(|&(_, secs)| secs >= MIN_INTERVAL);
    let per_sec =
        |of: fn(&Reading) -> f64| interval.map(|(b, secs)| (of(now) - of(b)).max(0.0) / secs);
    PhaseStatus {
        done,
        bytes_per_sec: per_sec(|r| r.bytes),
        decimal: false,
        eta: now.eta,
        ops_per_sec: per_sec(|r| r.ios),
        doing: match before {
            // Every byte of the first document is new.
            None => doing(&[], now),
            Some(_) => interval.and_then(|(b, _)| doing(&b.jobs, now)),
        },
    }
}

/// What fio does, from the jobs' bytes `before` (in fio's order) and `now`: `setting up`
/// while no job has moved data, or while nothing moves and a job has yet to start (a later
/// group lays out its files); else the jobs whose data moved and in which directions, as the
/// results name them (`wr/write`, `mix/read+write`; the first, then how many more: `wr/write
/// +1`).
/// `None` (the last word stands) when nothing moved and every job has run.
fn doing(before: &[(String, [f64; 3])], now: &Reading) -> Option<String> {
    let idle = |b: &[f64; 3]| b.iter().all(|&x| x <= 0.0);
    if now.jobs.iter().all(|(_, b)| idle(b)) {
        return Some(SETTING_UP.to_string());
    }
    let mut moving: Vec<String> = Vec::new();
    for (i, (name, bytes)) in now.jobs.iter().enumerate() {
        let old = before.get(i).map_or([0.0; 3], |j| j.1);
        let dirs: Vec<&str> = DIRECTIONS
            .iter()
            .zip(bytes.iter().zip(old))
            .filter(|(_, (&b, o))| b > *o)
            .map(|(d, _)| *d)
            .collect();
        let label = format!("{name}/{}", dirs.join("+"));
        if !dirs.is_empty() && !moving.contains(&label) {
            moving.push(label);
        }
    }
    if moving.is_empty() {
        let waiting = now.jobs.iter().any(|(_, b)| idle(b));
        return (waiting && now.eta != Some(0.0)).then(|| SETTING_UP.to_string());
    }
    // The first, cut short if long, and how many more: the bar must fit a terminal's line.
    let mut text = moving[0].clone();
    if text.chars().count() > DOING_WIDTH {
        text = text.chars().take(DOING_WIDTH - 1).collect::<String>() + "…";
    }
    if moving.len() > 1 {
        text += &format!(" +{}", moving.len() - 1);
    }
    Some(text)
}

/// The most characters of a job's name and directions that a bar shows.
const DOING_WIDTH: usize = 16;

/// fio's standard output: its final JSON document (the last one: with a status interval,
/// fio prints one every interval before it) and the lines outside any document.
#[derive(Debug, Default)]
pub struct FioStdout {
    /// The last document.
    pub last: Option<String>,
    /// Lines outside any document, and a document left unfinished.
    pub outside: String,
}

impl FioStdout {
    /// The text to read the run from: the final document, or everything fio printed.
    pub fn text(&self) -> String {
        self.last.clone().unwrap_or_else(|| self.outside.clone())
    }
}

/// Read fio's standard output line by line: each running status document goes to `obs` as
/// a [`PhaseStatus`]; the last document is kept.
pub fn read_stdout(r: impl std::io::Read, obs: &dyn Observer) -> FioStdout {
    let mut split = Splitter::default();
    let mut last: Option<String> = None;
    let mut before: Option<(Reading, std::time::Instant)> = None;
    let mut reader = std::io::BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line_capped(&mut reader, &mut buf, crate::process::KEEP) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        if let Some(doc) = split.line(line.trim_end_matches(['\n', '\r'])) {
            if let Some(now) = reading(&doc) {
                let t = std::time::Instant::now();
                let secs = before.as_ref().map_or(0.0, |(_, b)| (t - *b).as_secs_f64());
                let shown = status(before.as_ref().map(|b| &b.0), &now, secs);
                let measured = shown.bytes_per_sec.is_some();
                obs.status(shown);
                // A rate is measured from the last reading it used (see MIN_INTERVAL).
                if before.is_none() || measured {
                    before = Some((now, t));
                }
            }
            last = Some(doc);
        }
    }
    let (mut outside, open) = split.unfinished();
    outside.extend(open);
    FioStdout { last, outside }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document as fio 3.33 prints it (abridged: fio's other members are ignored).
    fn doc(ts: u64, eta: u64, elapsed: u64, read: u64, write: u64) -> String {
        format!(
            "{{\n  \"fio version\" : \"fio-3.33\",\n  \"timestamp_ms\" : {ts},\n  \"jobs\" : [\n    {{\n      \"jobname\" : \"a\",\n      \"eta\" : {eta},\n      \"elapsed\" : {elapsed},\n      \"read\" : {{\n        \"io_bytes\" : {read}\n      }},\n      \"write\" : {{\n        \"io_bytes\" : {write}\n      }}\n    }},\n    {{\n      \"jobname\" : \"b\",\n      \"eta\" : {eta},\n      \"elapsed\" : {elapsed},\n      \"read\" : {{\n        \"io_bytes\" : 0\n      }}\n    }}\n  ]\n}}\n"
        )
    }

    #[test]
    fn a_flood_of_output_is_cut_and_the_final_document_still_read() {
        // 20 MiB of one line without a newline, 2 MiB of short lines, then the document.
        let mut text = vec![b'x'; 20 << 20];
        text.push(b'\n');
        for _ in 0..(2 << 20) / 8 {
            text.extend_from_slice(b"noise 1\n");
        }
        text.extend_from_slice(doc(1000, 0, 2, 10, 20).as_bytes());
        let out = read_stdout(&text[..], &crate::workload::Quiet);
        assert!(
            out.outside.len() <= crate::process::KEEP + 64,
            "{}",
            out.outside.len()
        );
        assert!(out.outside.ends_with(CUT));
        assert!(out
            .last
            .as_deref()
            .is_some_and(|d| d.contains("\"jobname\" : \"a\"")));
    }

    #[test]
    fn splitter_cuts_documents_and_keeps_other_lines_apart() {
        let (a, b) = (doc(1000, 3, 1, 10, 20), doc(2000, 2, 2, 30, 40));
        let text = format!("fio: a notice\n{a}{b}");
        let mut s = Splitter::default();
        let docs: Vec<String> = text.lines().filter_map(|l| s.line(l)).collect();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1], doc(2000, 2, 2, 30, 40));
        let (outside, open) = s.unfinished();
        assert_eq!(outside, "fio: a notice\n");
        assert_eq!(open, None);
        // Every document is one of fio's, whole.
        assert_eq!(reading(&docs[0]).map(|r| r.bytes), Some(30.0));
    }

    #[test]
    fn fraction_is_fios_elapsed_over_elapsed_plus_eta() {
        let r = reading(&doc(5000, 3, 1, 0, 0)).unwrap();
        assert_eq!(r.eta, Some(3.0));
        assert_eq!(status(None, &r, 1.0).done, Some(0.25));
        assert_eq!(status(None, &r, 1.0).eta, Some(3.0));
        // No rate before a second document.
        assert_eq!(status(None, &r, 1.0).bytes_per_sec, None);
    }

    #[test]
    fn an_eta_fio_does_not_know_gives_no_fraction() {
        // fio 3.33 prints INT_MAX or 4294967294 before it can tell.
        for eta in [2_147_483_647, 4_294_967_294] {
            let r = reading(&doc(5000, eta, 1, 0, 0)).unwrap();
            assert_eq!(r.eta, None);
            assert_eq!(status(None, &r, 1.0).done, None);
        }
    }

    #[test]
    fn rate_is_bytes_between_documents_over_fios_own_clock() {
        let a = reading(&doc(10_000, 3, 1, 1 << 20, 1 << 20)).unwrap();
        let b = reading(&doc(10_500, 2, 2, 2 << 20, 3 << 20)).unwrap();
        // 3 MiB more in 0.5 s by fio's timestamps (fslab's 9 s between arrivals is ignored).
        assert_eq!(
            status(Some(&a), &b, 9.0).bytes_per_sec,
            Some(6.0 * 1048576.0)
        );
        // Without timestamps: fslab's measured seconds.
        let (mut a, mut b) = (a, b);
        a.at_ms = None;
        b.at_ms = None;
        assert_eq!(status(Some(&a), &b, 3.0).bytes_per_sec, Some(1048576.0));
        // fio's final document 0.12 s after the last status: no rate from that moment.
        let last = reading(&doc(20_000, 0, 6, 1 << 30, 0)).unwrap();
        let fin = reading(&doc(20_120, 0, 6, (1 << 30) + 4096, 0)).unwrap();
        assert_eq!(status(Some(&last), &fin, 0.12).bytes_per_sec, None);
        assert!(!status(Some(&last), &fin, 0.12).decimal, "fio speaks MiB/s");
    }

    /// Keeps every status it is told.
    #[derive(Default)]
    struct Seen(std::sync::Mutex<Vec<PhaseStatus>>);

    impl Observer for Seen {
        fn status(&self, s: PhaseStatus) {
            self.0.lock().unwrap().push(s);
        }
    }

    #[test]
    fn fios_stdout_gives_a_status_per_document_and_the_last_one_to_read() {
        // Three status documents a second apart (fio's ETA unknown in the first), a notice,
        // then the final document 0.1 s after the last.
        let text = [
            doc(1_000, 2_147_483_647, 1, 0, 1 << 20),
            doc(2_000, 3, 1, 0, 5 << 20),
            "fio: a notice\n".to_string(),
            doc(3_000, 2, 2, 0, 9 << 20),
            doc(3_100, 0, 3, 0, (9 << 20) + 4096),
        ]
        .concat();
        let seen = Seen::default();
        let out = read_stdout(text.as_bytes(), &seen);
        let s = seen.0.into_inner().unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!((s[0].done, s[0].bytes_per_sec), (None, None));
        assert_eq!(s[1].done, Some(0.25));
        assert_eq!(s[1].bytes_per_sec, Some(4.0 * 1048576.0));
        assert_eq!(s[2].bytes_per_sec, Some(4.0 * 1048576.0));
        // The final document: all done, no rate from its last 0.1 s.
        assert_eq!(
            (s[3].done, s[3].bytes_per_sec, s[3].eta),
            (Some(1.0), None, Some(0.0))
        );
        assert_eq!(out.text(), doc(3_100, 0, 3, 0, (9 << 20) + 4096));
        assert_eq!(out.outside, "fio: a notice\n");
    }

    #[test]
    fn without_a_document_the_text_is_all_fio_printed() {
        let seen = Seen::default();
        let out = read_stdout("fio: job 'a' failed\n{\n  \"jobs\" : [".as_bytes(), &seen);
        assert!(seen.0.into_inner().unwrap().is_empty());
        assert_eq!(out.text(), "fio: job 'a' failed\n{\n  \"jobs\" : [\n");
    }

    /// A document of two stonewalled jobs: per job its name, bytes read and written, and
    /// I/O operations (each job's `total_ios` split over the directions it moved).
    fn two_jobs(ts: u64, eta: u64, jobs: [(&str, u64, u64, u64); 2]) -> String {
        let job = |(name, read, write, ios): (&str, u64, u64, u64)| {
            let (r_ios, w_ios) = if read > 0 { (ios, 0) } else { (0, ios) };
            format!(
                "    {{\n      \"jobname\" : \"{name}\",\n      \"eta\" : {eta},\n      \"elapsed\" : 3,\n      \"read\" : {{\n        \"io_bytes\" : {read},\n        \"total_ios\" : {r_ios}\n      }},\n      \"write\" : {{\n        \"io_bytes\" : {write},\n        \"total_ios\" : {w_ios}\n      }}\n    }}"
            )
        };
        let (a, b) = (job(jobs[0]), job(jobs[1]));
        format!("{{\n  \"timestamp_ms\" : {ts},\n  \"jobs\" : [\n{a},\n{b}\n  ]\n}}\n")
    }

    #[test]
    fn the_status_names_what_fio_does_and_counts_its_iops() {
        // As fio 3.33 printed it for a write job then a stonewalled read job of 1 GiB each:
        // two seconds laying out files, the writes, a second between the jobs, the reads.
        let docs = [
            two_jobs(1_000, 2_147_483_647, [("wr", 0, 0, 0), ("rd", 0, 0, 0)]),
            two_jobs(2_000, 3, [("wr", 0, 4 << 20, 1024), ("rd", 0, 0, 0)]),
            two_jobs(3_000, 2, [("wr", 0, 12 << 20, 3072), ("rd", 0, 0, 0)]),
            two_jobs(4_000, 2, [("wr", 0, 12 << 20, 3072), ("rd", 0, 0, 0)]),
            two_jobs(
                5_000,
                1,
                [("wr", 0, 12 << 20, 3072), ("rd", 2 << 20, 0, 512)],
            ),
            two_jobs(
                5_100,
                0,
                [("wr", 0, 12 << 20, 3072), ("rd", 3 << 20, 0, 768)],
            ),
        ];
        let r: Vec<Reading> = docs.iter().map(|d| reading(d).unwrap()).collect();
        assert_eq!(r[2].ios, 3072.0);
        let shown = |i: usize| {
            let s = status(i.checked_sub(1).map(|p| &r[p]), &r[i], 1.0);
            (s.doing, s.ops_per_sec)
        };
        // Before a job moves data fio sets up, named so from the first document on.
        assert_eq!(shown(0), (Some(SETTING_UP.into()), None));
        // The writes: the job and its direction as the results name them, 1024 IOPS.
        assert_eq!(shown(1), (Some("wr/write".into()), Some(1024.0)));
        assert_eq!(shown(2), (Some("wr/write".into()), Some(2048.0)));
        // Nothing moves and rd has not started: the next job sets up.
        assert_eq!(shown(3), (Some(SETTING_UP.into()), Some(0.0)));
        assert_eq!(shown(4), (Some("rd/read".into()), Some(512.0)));
        // fio's final document 0.1 s later: too short to measure, the last words stand.
        assert_eq!(shown(5), (None, None));
        // Once every job has run, a second without I/O is no set-up.
        let ran = [("wr", 0, 1, 1), ("rd", 1, 0, 1)];
        let (a, b) = (two_jobs(6_000, 1, ran), two_jobs(7_000, 1, ran));
        let b = status(Some(&reading(&a).unwrap()), &reading(&b).unwrap(), 1.0);
        assert_eq!((b.doing, b.ops_per_sec), (None, Some(0.0)));
    }

    #[test]
    fn many_jobs_moving_at_once_are_named_two_and_counted() {
        let mut now = reading(&doc(2_000, 3, 1, 0, 0)).unwrap();
        now.jobs = ["a", "a", "b", "c", "d"]
            .iter()
            .map(|n| (n.to_string(), [1.0, 1.0, 0.0]))
            .collect();
        // numjobs clones share their name: `a` once, then b, c and d.
        assert_eq!(doing(&[], &now).as_deref(), Some("a/read+write +3"));
        // A long name is cut: the bar stays on one line.
        now.jobs[0].0 = "x".repeat(60);
        let long = doing(&[], &now).unwrap();
        assert_eq!(long.chars().count(), DOING_WIDTH + 3);
        assert!(long.starts_with("xxx") && long.ends_with("… +4"), "{long}");
    }

    #[test]
    fn text_that_is_not_a_run_document_gives_no_reading() {
        assert_eq!(reading("{\n}\n"), None);
        assert_eq!(reading("not json"), None);
    }
}
