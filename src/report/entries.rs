//! How the entries and labels of the human formats read, shared by the terminal, Markdown
//! and HTML reports: `mean ± sd` with its interval under it (or not: [`EntryStyle`]), the
//! words for a table's intervals, a comparison's name, percentile labels, the header block
//! and the repetitions table.

use super::model::*;
use super::verdict::fmt_interval;
use crate::stats::interval::INTERVAL_MIN_N;
use crate::units::Scale;

/// How the entries of one table read: whether each interval prints under its mean, whether
/// the standard deviation does (a long sweep prints means only, as IOzone does), and the
/// number of repetitions when every entry has the same (then said once, in the heading).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryStyle {
    /// Intervals under the means.
    pub intervals: bool,
    /// `± sd` beside the means.
    pub sd: bool,
    /// The common n, if every entry has the same.
    pub n: Option<usize>,
}

impl EntryStyle {
    /// The style of a table of these statistics: intervals under the means unless `compact`
    /// and the table has more than [`super::view::ROWS_WITH_INTERVALS`] rows, and means alone
    /// beyond [`super::view::ROWS_WITH_SD`]; never an interval below three repetitions
    /// ([`crate::stats::interval::INTERVAL_MIN_N`]).
    pub fn of<'a>(
        stats: impl Iterator<Item = &'a CellMetric>,
        rows: usize,
        compact: bool,
    ) -> EntryStyle {
        let n = common_n(stats);
        let many = compact && rows > super::view::ROWS_WITH_INTERVALS;
        EntryStyle {
            intervals: !many && n.map_or(true, |n| n >= INTERVAL_MIN_N),
            sd: !(compact && rows > super::view::ROWS_WITH_SD),
            n,
        }
    }

    /// An entry: `mean ± sd`, then (on a second line, after `sep`) its interval, with `n=5`
    /// beside it when the table's entries differ in n.
    pub fn text(&self, s: &CellMetric, sc: &Scale, sep: &str) -> String {
        let mut t = if self.sd {
            mean_sd(s, sc)
        } else {
            format!("{}{}", sc.num(s.summary.mean), disturbed_mark(s))
        };
        if self.intervals && s.summary.ci95.is_some() {
            t.push_str(sep);
            t.push_str(&format!("[{}]", fmt_interval(s.summary.ci95, sc)));
            if self.n.is_none() {
                t.push_str(&format!(" n={}", s.summary.n));
            }
        } else if self.n.is_none() {
            t.push_str(&format!(" (n={})", s.summary.n));
        }
        t
    }

    /// What the entries are, for the table's heading: `mean ± sd; 95% CI of the geometric
    /// mean (log scale) under it; n = 5 each`.
    pub fn words(&self, ci: &str) -> String {
        match (self.n, self.intervals, self.sd) {
            (Some(1), _, _) => "one repetition each: no spread or interval".into(),
            (Some(n), _, _) if n < INTERVAL_MIN_N => format!(
                "{}; n = {n} each, too few for a 95% interval",
                if self.sd { "mean ± sd" } else { "means" }
            ),
            (Some(n), true, _) => format!("mean ± sd, the {ci} under it; n = {n} each"),
            (Some(n), false, true) => {
                format!("mean ± sd; n = {n} each (95% intervals: in the verdicts, all with --all)")
            }
            (Some(n), false, false) => {
                format!("means of n = {n} each (± sd and 95% intervals: --all)")
            }
            (None, true, _) => format!("mean ± sd, the {ci} and n under it"),
            (None, false, true) => "mean ± sd (n)".into(),
            (None, false, false) => "means (n; ± sd and 95% intervals: --all)".into(),
        }
    }
}

/// The number of repetitions of these statistics when they all have the same.
pub(crate) fn common_n<'a>(stats: impl Iterator<Item = &'a CellMetric>) -> Option<usize> {
    match super::distinct(stats.map(|s| s.summary.n)).as_slice() {
        [n] => Some(*n),
        _ => None,
    }
}

/// The header block shared by the text formats: what was reported.
pub(crate) fn source_lines(r: &ReportData) -> Vec<String> {
    let mut out = Vec::new();
    for s in &r.sources {
        out.push(format!(
            "{} {} '{}' [{}] — created {}, finished {}, fslab {}",
            s.kind,
            s.id,
            s.name,
            s.status,
            s.created_at,
            s.finished_at.as_deref().unwrap_or("-"),
            s.tool_version
        ));
        out.push(format!("command: {}", s.command_line));
        if let Some(r) = s.resumed_line() {
            out.push(r);
        }
        if !s.description.is_empty() {
            out.push(format!("about: {}", s.description));
        }
    }
    out
}

/// `mean ± sd` of an entry, in `sc`; `4000 ± 50.99*` when some of its repetitions were
/// disturbed and counted (kept, or past the re-run limit), see [`DISTURBED_NOTE`].
pub(crate) fn mean_sd(s: &CellMetric, sc: &Scale) -> String {
    let mark = disturbed_mark(s);
    match s.summary.sd {
        Some(sd) => format!("{} ± {}{mark}", sc.num(s.summary.mean), sc.num(sd)),
        None => format!("{}{mark}", sc.num(s.summary.mean)),
    }
}

/// `*` for an entry some of whose repetitions other activity disturbed.
pub(crate) fn disturbed_mark(s: &CellMetric) -> &'static str {
    if s.disturbed.is_empty() {
        ""
    } else {
        "*"
    }
}

/// The line under a table whose entries carry the mark of [`disturbed_mark`].
pub(crate) const DISTURBED_NOTE: &str =
    "* includes repetitions other activity disturbed, counted in the statistics (see Warnings)";

/// Whether any entry of table `t` carries the disturbed mark.
pub(crate) fn any_disturbed(w: &WorkloadReport, t: &TableSpec) -> bool {
    w.stats
        .iter()
        .any(|s| s.name == t.metric && !s.disturbed.is_empty())
}

/// What the intervals of a table are, from the methods of its entries:
/// `95% CI of the geometric mean (log scale)`.
pub(crate) fn interval_words(w: &WorkloadReport, t: &TableSpec) -> String {
    ci_words(w.stats.iter().filter(|s| s.name == t.metric))
}

/// What the 95% intervals of these statistics are, from their methods:
/// `95% CI of the geometric mean (log scale)`, or several joined with "or".
pub(crate) fn ci_words<'a>(stats: impl Iterator<Item = &'a CellMetric>) -> String {
    use crate::stats::IntervalMethod;
    let mut methods: Vec<IntervalMethod> = stats
        .filter(|s| s.summary.ci95.is_some())
        .map(|s| s.summary.ci95_method)
        .collect();
    methods.sort_by_key(|m| m.as_str());
    methods.dedup();
    let words: Vec<&str> = methods
        .iter()
        .map(|m| match m {
            IntervalMethod::LogT => "of the geometric mean (log scale)",
            IntervalMethod::T => "of the mean (Student t)",
            IntervalMethod::TClipped => "of the mean (Student t, clipped at 0, where a value is 0)",
        })
        .collect();
    if words.is_empty() {
        "95% CI".into()
    } else {
        format!("95% CI {}", words.join(" or "))
    }
}

/// The comparison's name: `journal 16MB → 64MB (fs=ext4)`.
pub(crate) fn comparison_name(c: &Comparison) -> String {
    let base = if c.factor == "cell" || c.factor == "source" {
        format!("{} → {}", c.from, c.to)
    } else {
        format!("{} {} → {}", c.factor, c.from, c.to)
    };
    if c.context.is_empty() {
        base
    } else {
        format!("{base} ({})", c.context)
    }
}

/// Percentile column label: `p50`, `p99.9`, `max`.
pub(crate) fn percentile_label(p: f64) -> String {
    if p >= 100.0 {
        "max".into()
    } else {
        format!("p{}", super::levels::fmt_number_label(p))
    }
}

/// Repetitions and stop reasons table rows: (configuration, workload, n, failed, discarded,
/// stop reason, status).
pub(crate) fn series_rows(r: &ReportData) -> Vec<[String; 7]> {
    r.series
        .iter()
        .map(|s| {
            [
                r.cells[s.cell].label.clone(),
                r.workloads[s.workload].label.clone(),
                s.ok.to_string(),
                s.failed.to_string(),
                discarded_text(s),
                s.stop_reason
                    .map_or_else(|| "-".into(), |r| r.as_str().to_string()),
                s.status.as_str().to_string(),
            ]
        })
        .collect()
}

/// The discarded warm-ups, and the disturbed repetitions left out (`0 + 2 re-run`).
fn discarded_text(s: &SeriesInfo) -> String {
    let mut t = s.discarded.to_string();
    if s.rerun > 0 {
        t.push_str(&format!(" + {} re-run", s.rerun));
    }
    if s.dropped > 0 {
        t.push_str(&format!(" + {} dropped", s.dropped));
    }
    t
}

/// Column names of [`series_rows`].
pub(crate) const SERIES_HEADER: [&str; 7] = [
    "configuration",
    "workload",
    "n",
    "failed",
    "discarded",
    "stop reason",
    "status",
];

/// `text` with its first letter in upper case (a sentence).
pub(crate) fn upper_first(text: &str) -> String {
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
