//! One phase's bar, the same in an engine command's display and in a study's: the units the
//! phase counts (`1200/5000`, with its rate as `48.1k files/s`) or, when the engine reports
//! its own status (fio's status documents, dbench's per-second line), the fraction done
//! (`52.3%`) with the engine's rate in bytes per second (`1.23 GiB/s`). [`PhaseView`] is the
//! pure state and words; [`PhaseBar`] draws it with indicatif.

use super::lock;
use super::progress_text::{self as text, RateUnit};
use crate::workload::{Counts, PhaseStatus, WorkloadKind, WorkloadSpec};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::sync::{Arc, Mutex};

/// Bar positions per whole when the engine gives a fraction.
const PER_WHOLE: u64 = 1000;

/// What a phase's bar knows: its counts, and the engine's status once it sent one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseView {
    /// Units of work in the phase (0 when unknown).
    pub total: u64,
    /// Units done.
    pub done: u64,
    /// The engine's last status.
    pub status: Option<PhaseStatus>,
}

impl PhaseView {
    /// A phase of `total` units starts.
    pub fn new(total: u64) -> PhaseView {
        PhaseView {
            total,
            ..PhaseView::default()
        }
    }

    /// Whether the bar follows the engine's fraction rather than the counts.
    fn by_fraction(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.done.is_some())
    }

    /// The bar's (position, length): the engine's fraction in thousandths once it gives
    /// one, else the counts (length 0 when the total is unknown).
    pub fn position(&self) -> (u64, u64) {
        match self.status.as_ref().and_then(|s| s.done) {
            Some(f) => (
                (f.clamp(0.0, 1.0) * PER_WHOLE as f64).round() as u64,
                PER_WHOLE,
            ),
            None => (self.done, self.total),
        }
    }

    /// After the bar: `52.3%` from the engine's fraction, `1200/5000` counted, `1200` when
    /// the total is unknown, nothing before anything is known.
    pub fn counts_text(&self) -> String {
        if let Some(f) = self.status.as_ref().and_then(|s| s.done) {
            return format!("{:.1}%", f.clamp(0.0, 1.0) * 100.0);
        }
        match (self.done, self.total) {
            (0, 0) => String::new(),
            (d, 0) => d.to_string(),
            (d, t) => format!("{d}/{t}"),
        }
    }

    /// The rate: the engine's bytes per second when it gives them, with its operations per
    /// second when it counts them (`651 MiB/s 166k IOPS`), else `counted` units per second in
    /// `unit`; nothing while an engine that gives its own rate has not yet.
    pub fn rate_text(&self, counted: f64, unit: RateUnit) -> String {
        let Some(s) = &self.status else {
            return match self.done {
                0 => String::new(),
                _ => text::rate(counted, unit),
            };
        };
        let unit = match s.decimal {
            true => RateUnit::DecimalBytes,
            false => RateUnit::Bytes(1),
        };
        let bytes = s.bytes_per_sec.map(|b| text::rate(b, unit));
        [bytes, s.ops_per_sec.map(text::iops)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The bar's name: `base` (the engine and its phase) and what the engine says it does
    /// now (`fio setting up`, `fio rd/read`).
    pub fn name(&self, base: &str) -> String {
        match self.status.as_ref().and_then(|s| s.doing.as_deref()) {
            Some(d) if !d.is_empty() => format!("{base} {d}"),
            _ => base.to_string(),
        }
    }

    /// Take the engine's new status. What it does not know this time (fio's ETA for a
    /// moment, a rate over too short an interval, what it does) keeps its last value: the
    /// bar neither empties nor loses its rate or its name between two readings.
    pub fn take(&mut self, s: PhaseStatus) {
        let old = self.status.take().unwrap_or_default();
        self.status = Some(PhaseStatus {
            done: s.done.or(old.done),
            bytes_per_sec: s.bytes_per_sec.or(old.bytes_per_sec),
            decimal: s.decimal,
            eta: s.eta,
            ops_per_sec: s.ops_per_sec.or(old.ops_per_sec),
            doing: s.doing.or(old.doing),
        });
    }
}

/// What a phase of an engine counts, for its rate, as the engine declares it
/// ([`crate::workload::Caps::counts`]): directories, files, loadfile lines, fio's ops, or
/// records of `record` bytes (IOzone), shown as bytes per second.
pub fn rate_unit(kind: WorkloadKind, phase: &str, record: u64) -> RateUnit {
    match (kind.caps().counts)(phase) {
        Counts::Items(word) => RateUnit::Items(word),
        Counts::Records => RateUnit::Bytes(record.max(1)),
    }
}

/// [`rate_unit`] for a study's workload (IOzone's record size from its spec).
pub fn spec_unit(spec: &WorkloadSpec) -> impl Fn(&str) -> RateUnit + Send + Sync + 'static {
    let kind = spec.workload_kind();
    let record = match spec {
        WorkloadSpec::Iozone(s) => s.to_params().map_or(1, |p| p.record),
        _ => 1,
    };
    move |phase: &str| rate_unit(kind, phase, record)
}

/// An unknown total (0) leaves the bar empty (indicatif draws a length of 0 as full).
fn set_length(bar: &ProgressBar, len: u64) {
    if len == 0 {
        bar.unset_length();
    } else {
        bar.set_length(len);
    }
}

/// A template key whose words `f` gives (the key's tracker for indicatif).
pub(super) fn words(
    f: impl Fn(&ProgressState) -> String + Clone + Send + Sync + 'static,
) -> impl Fn(&ProgressState, &mut dyn std::fmt::Write) + Clone + Send + Sync + 'static {
    move |st: &ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = w.write_str(&f(st));
    }
}

/// A [`PhaseView`] drawn by an indicatif bar.
pub struct PhaseBar {
    bar: ProgressBar,
    view: Arc<Mutex<PhaseView>>,
    /// The bar's name as it was made (the engine and its phase), before what the engine
    /// says it does.
    base: String,
}

impl PhaseBar {
    /// A bar for `total` units drawn with `template`, in which `{counts}` and `{rate}` are the
    /// view's words (rates in `unit`) and `{run}` is what `run` says.
    pub fn new(
        bar: ProgressBar,
        template: &str,
        total: u64,
        unit: RateUnit,
        run: impl Fn() -> String + Send + Sync + 'static,
    ) -> PhaseBar {
        let view = Arc::new(Mutex::new(PhaseView::new(total)));
        let (v1, v2) = (view.clone(), view.clone());
        let run = Arc::new(run);
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("counts", words(move |_| lock(&v1).counts_text()))
            .with_key(
                "rate",
                words(move |st| lock(&v2).rate_text(st.per_sec(), unit)),
            )
            .with_key("run", words(move |_| run()))
            .progress_chars("=> ");
        bar.set_style(style);
        set_length(&bar, total);
        let base = bar.message();
        PhaseBar { bar, view, base }
    }

    /// The indicatif bar (to set its prefix and message, or print above it).
    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// `done` units are finished.
    pub fn progress(&self, done: u64) {
        // Never hold the view while the bar draws: drawing reads it.
        let by_fraction = {
            let mut v = lock(&self.view);
            v.done = done;
            v.by_fraction()
        };
        if !by_fraction {
            self.bar.set_position(done);
        }
    }

    /// The engine's status.
    pub fn status(&self, s: PhaseStatus) {
        let (pos, len, name) = {
            let mut v = lock(&self.view);
            v.take(s);
            let (pos, len) = v.position();
            (pos, len, v.name(&self.base))
        };
        if name != self.bar.message() {
            self.bar.set_message(name);
        }
        if len == 0 {
            // No fraction yet: the counts stand; the rate changed.
            self.bar.tick();
        } else {
            // Length and position in one update: one frame, never the new percentage over
            // the old bar.
            self.bar.update(|st| {
                st.set_len(len);
                st.set_pos(pos);
            });
        }
    }

    /// What the bar knows now.
    pub fn view(&self) -> PhaseView {
        lock(&self.view).clone()
    }

    /// Remove the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(done: Option<f64>, bps: Option<f64>) -> PhaseStatus {
        PhaseStatus {
            done,
            bytes_per_sec: bps,
            ..PhaseStatus::default()
        }
    }

    #[test]
    fn fio_is_named_by_what_it_does_with_its_iops_beside_its_rate() {
        // Before this, fio's first seconds were an unnamed bar without a rate (`fio [ ]`), and
        // its rate came without IOPS.
        let mut v = PhaseView::new(0);
        assert_eq!(v.name("fio"), "fio");
        v.take(PhaseStatus {
            doing: Some("setting up".into()),
            ..PhaseStatus::default()
        });
        let ops = |v: &PhaseView| v.rate_text(0.0, RateUnit::Items("ops"));
        assert_eq!(
            (v.name("fio"), ops(&v)),
            ("fio setting up".into(), String::new())
        );
        v.take(PhaseStatus {
            ops_per_sec: Some(31_500.0),
            doing: Some("wr/write".into()),
            ..status(Some(0.5), Some(123.0 * 1048576.0))
        });
        assert_eq!(v.name("fio"), "fio wr/write");
        assert_eq!(ops(&v), "123 MiB/s 31.5k IOPS");
        // A reading that says neither keeps both, as it keeps the rate.
        v.take(status(Some(0.6), None));
        assert_eq!(v.name("fio"), "fio wr/write");
        assert_eq!(ops(&v), "123 MiB/s 31.5k IOPS");
    }

    #[test]
    fn counted_phases_show_counts_and_their_rate_in_units() {
        let mut v = PhaseView::new(5000);
        // Nothing done yet: the counts, and no rate rather than "0/s".
        assert_eq!(v.counts_text(), "0/5000");
        assert_eq!(v.rate_text(0.0, RateUnit::Items("files")), "");
        v.done = 1200;
        assert_eq!(v.position(), (1200, 5000));
        assert_eq!(v.counts_text(), "1200/5000");
        assert_eq!(
            v.rate_text(48_123.456_7, RateUnit::Items("files")),
            "48.1k files/s"
        );
        v.total = 0;
        assert_eq!(v.counts_text(), "1200");
    }

    #[test]
    fn an_engines_status_sets_the_fraction_and_the_rate_in_bytes() {
        // dbench counts lines and sends its status: the bar follows the status, not the
        // 18055 lines of an unknown total ("18055/0 18,054.6419/s" before).
        let mut v = PhaseView::new(0);
        v.done = 18055;
        v.take(PhaseStatus {
            decimal: true,
            ..status(Some(0.523), Some(18.5e6))
        });
        assert_eq!(v.position(), (523, 1000));
        assert_eq!(v.counts_text(), "52.3%");
        // In dbench's own unit (10^6 bytes).
        assert_eq!(
            v.rate_text(18_054.641_9, RateUnit::Items("lines")),
            "18.5 MB/s"
        );
        // fio before its first rate: the fraction only, no made-up rate ("0/s" before).
        let mut v = PhaseView::new(0);
        v.take(status(Some(0.1), None));
        assert_eq!(v.rate_text(0.0, RateUnit::Items("ops")), "");
        // fio's rate in MiB/s, as fio prints it.
        v.take(status(Some(0.2), Some(1.5 * 1048576.0)));
        assert_eq!(v.rate_text(0.0, RateUnit::Items("ops")), "1.50 MiB/s");
        // A status without a fraction or a rate keeps the last ones: the bar does not empty.
        v.take(status(None, None));
        assert_eq!(v.position(), (200, 1000));
        assert_eq!(v.rate_text(0.0, RateUnit::Items("ops")), "1.50 MiB/s");
    }

    #[test]
    fn a_status_without_a_fraction_leaves_the_counts() {
        // fio's ETA unknown at its first document: no fraction, the rate alone.
        let mut v = PhaseView::new(0);
        v.take(status(None, Some(1024.0)));
        assert_eq!(v.position(), (0, 0));
        assert_eq!(v.counts_text(), "");
        assert_eq!(v.rate_text(0.0, RateUnit::Items("ops")), "1.00 KiB/s");
    }

    #[test]
    fn fractions_are_clamped_to_the_bar() {
        let mut v = PhaseView::new(0);
        v.take(status(Some(1.7), None));
        assert_eq!(
            (v.position(), v.counts_text()),
            ((1000, 1000), "100.0%".to_string())
        );
    }

    #[test]
    fn each_engine_counts_its_own_units() {
        use WorkloadKind::*;
        assert_eq!(rate_unit(Fdtree, "dir_create", 1), RateUnit::Items("dirs"));
        assert_eq!(
            rate_unit(Fdtree, "file_remove", 1),
            RateUnit::Items("files")
        );
        assert_eq!(rate_unit(Iozone, "write", 65536), RateUnit::Bytes(65536));
        assert_eq!(rate_unit(Dbench, "dbench", 1), RateUnit::Items("lines"));
        let spec: WorkloadSpec =
            toml::from_str("kind = \"iozone\"\nfile_size = \"1m\"\nrecord_size = \"64k\"").unwrap();
        assert_eq!(spec_unit(&spec)("write"), RateUnit::Bytes(65536));
    }
}
