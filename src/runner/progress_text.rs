//! The words of every progress display, as pure functions: the counters ("rep 2/3 · point
//! 4/9"), the ETA from measured durations ("ETA 00:11"), rates with units and three
//! significant digits, and the plain lines printed when stderr is not a terminal.

/// Where a run is: repetition `rep` of `reps`, and point `point` of `points` (an IOzone
/// sweep's (file size, record size) point; one point for the other engines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based repetition.
    pub rep: u32,
    /// Repetitions planned.
    pub reps: u32,
    /// 1-based point.
    pub point: usize,
    /// Points per repetition.
    pub points: usize,
}

/// The name before an engine command's bar: the engine and the phase (`fdtree
/// file_create`), the engine alone when its one phase has its name (`fio`).
pub fn bar_name(engine: &str, phase: &str) -> String {
    if phase == engine || phase.is_empty() {
        engine.to_string()
    } else if engine.is_empty() {
        phase.to_string()
    } else {
        format!("{engine} {phase}")
    }
}

/// `rep 2/3`, or `rep 2/3 · point 4/9` when there is more than one point.
pub fn counter(p: Position) -> String {
    let rep = format!("rep {}/{}", p.rep, p.reps);
    if p.points > 1 {
        format!("{rep} · point {}/{}", p.point, p.points)
    } else {
        rep
    }
}

/// Seconds as a clock: `00:11`, `12:05`, `1:02:03` (hours only when there are any).
pub fn clock(secs: f64) -> String {
    let s = positive(secs).round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}")
    }
}

/// ` · ETA 00:11`, or nothing when there is no estimate.
pub fn eta_suffix(eta: Option<f64>) -> String {
    eta.map(|e| format!(" · ETA {}", clock(e)))
        .unwrap_or_default()
}

/// What is left of one unit of work (a point of a run, a series of a study).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Left {
    /// Steps (repetitions) still to run.
    pub steps: u64,
    /// Mean measured seconds per step of this unit, if any step was measured.
    pub mean: Option<f64>,
    /// Work of one step (the bytes an IOzone point moves; 1 where all are alike), to estimate
    /// an unmeasured unit from the measured ones.
    pub work: f64,
}

/// Seconds left: each unit's steps at its own measured mean; an unmeasured unit by
/// [`per_step`] from the measured ones, or at `prior` seconds per unit of work (a plan's
/// estimate) when nothing is measured yet. `None` when nothing is measured and there is no
/// prior: no ETA rather than a made-up one. Zero when nothing is left.
pub fn eta(units: &[Left], prior: Option<f64>) -> Option<f64> {
    let measured: Vec<(f64, f64)> = units
        .iter()
        .filter_map(|u| u.mean.map(|m| (u.work, m)))
        .collect();
    let model = per_step(&measured, prior);
    let mut total = 0.0;
    for u in units.iter().filter(|u| u.steps > 0) {
        let per_step = match (u.mean, model, prior) {
            (Some(m), _, _) => m,
            (None, Some((fixed, per_work)), _) => fixed + per_work * u.work,
            (None, None, Some(p)) => p * u.work,
            (None, None, None) => return None,
        };
        total += per_step * u.steps as f64;
    }
    Some(total)
}

/// Seconds per step of `work` as `fixed + per_work × work`, from the measured (work, mean
/// seconds) pairs: a least-squares line once they span [`FIT_SPAN`]× in work, so a per-step
/// cost (an IOzone point's open, fsync and unlink) is not charged per byte — a 64 KiB
/// point's seconds per byte, scaled to 512 MiB files, predicted 78 minutes for an 85-second
/// `iozone -a`. Before that (one size measured, or sizes too close for their difference to
/// stand above the noise) the cost is per unit of work at most at `prior`'s rate, the rest
/// fixed. `None` when nothing is measured.
pub fn per_step(measured: &[(f64, f64)], prior: Option<f64>) -> Option<(f64, f64)> {
    if measured.is_empty() {
        return None;
    }
    let n = measured.len() as f64;
    let (sw, st) = measured
        .iter()
        .fold((0.0, 0.0), |(a, b), (w, t)| (a + w, b + t));
    let (mw, mt) = (sw / n, st / n);
    let lo = measured.iter().map(|m| m.0).fold(f64::INFINITY, f64::min);
    let hi = measured.iter().map(|m| m.0).fold(0.0, f64::max);
    if !(lo > 0.0 && hi >= FIT_SPAN * lo) {
        let proportional = if sw > 0.0 { st / sw } else { 0.0 };
        let per_work = prior.map_or(proportional, |p| p.min(proportional));
        return Some((mt - per_work * mw, per_work));
    }
    let var: f64 = measured.iter().map(|(w, _)| (w - mw).powi(2)).sum();
    let cov: f64 = measured.iter().map(|(w, t)| (w - mw) * (t - mt)).sum();
    let slope = (cov / var).max(0.0);
    let fixed = mt - slope * mw;
    if fixed < 0.0 {
        // Costs that grow faster than the work (a cache overflowing): through the origin.
        let through = measured.iter().map(|(w, t)| w * t).sum::<f64>()
            / measured.iter().map(|(w, _)| w * w).sum::<f64>();
        return Some((0.0, through));
    }
    Some((fixed, slope))
}

/// How many times the largest measured work must be the smallest before [`per_step`] fits
/// a line through them (IOzone's `-a`: once its 512 KiB files are measured beside its 64 KiB
/// ones, about 1% into the run).
pub const FIT_SPAN: f64 = 8.0;

/// Units left after the step at `done` of an interleaved run (repetition 1 of every point,
/// then repetition 2, …): per point, the repetitions still to run. `done` is `None` before
/// the first step.
pub fn interleaved_left(reps: u32, points: usize, done: Option<Position>) -> Vec<u64> {
    (1..=points)
        .map(|q| match done {
            None => u64::from(reps),
            Some(d) => u64::from(reps.saturating_sub(d.rep)) + u64::from(q > d.point),
        })
        .collect()
}

/// How a rate is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// Things per second (`files`, `dirs`, `ops`).
    Items(&'static str),
    /// Units of this many bytes per second (IOzone's records): shown as bytes/s.
    Bytes(u64),
    /// Bytes per second in powers of 1000 (dbench's MB/s).
    DecimalBytes,
}

/// `48.1k files/s`, `912 dirs/s`, `818 MiB/s`, `18.5 MB/s`: three significant digits, SI
/// prefixes for counts, binary ones for bytes (decimal ones where the tool speaks them).
pub fn rate(per_sec: f64, unit: RateUnit) -> String {
    let v = positive(per_sec);
    let (bytes, step, prefixes) = match unit {
        RateUnit::Items(what) => return format!("{} {what}/s", counted(v)),
        RateUnit::Bytes(size) => (
            v * size as f64,
            1024.0,
            ["B", "KiB", "MiB", "GiB", "TiB", "PiB"],
        ),
        RateUnit::DecimalBytes => (v, 1000.0, ["B", "kB", "MB", "GB", "TB", "PB"]),
    };
    let (x, p) = scaled(bytes, step, &prefixes);
    format!("{} {p}/s", three_digits(x))
}

/// `48.1k`: a count with three significant digits and an SI prefix.
fn counted(v: f64) -> String {
    let (x, p) = scaled(v, 1000.0, &["", "k", "M", "G", "T"]);
    format!("{}{p}", three_digits(x))
}

/// `31.5k IOPS`: operations per second as fio prints them.
pub fn iops(per_sec: f64) -> String {
    format!("{} IOPS", counted(positive(per_sec)))
}

/// `x` where it is a finite number above 0, else 0 (nothing measured yet, or nonsense).
fn positive(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

fn scaled(mut v: f64, step: f64, prefixes: &[&'static str]) -> (f64, &'static str) {
    let mut i = 0;
    // 999.5 would round to "1000": move to the next prefix first.
    while v >= step - 0.5 && i + 1 < prefixes.len() {
        v /= step;
        i += 1;
    }
    (v, prefixes[i])
}

fn three_digits(x: f64) -> String {
    if x >= 99.95 {
        format!("{x:.0}")
    } else if x >= 9.995 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The plain line after a finished step of an engine command, for a log:
/// `iozone rep 1/2 · point 4/9 (1024k, 64k): 0.97 s · ETA 00:11`.
pub fn step_line(prefix: &str, at: Position, what: &str, secs: f64, eta: Option<f64>) -> String {
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    };
    format!(
        "{prefix} {}{what}: {secs:.2} s{}",
        counter(at),
        eta_suffix(eta.filter(|&e| e > 0.0))
    )
}

/// The plain line after a study's repetition: `[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s
/// · ETA 00:11`.
pub fn study_line(done: u64, total: u64, what: &str, secs: f64, eta: Option<f64>) -> String {
    format!(
        "[{done}/{total}] {what}: {secs:.2} s{}",
        eta_suffix(eta.filter(|&e| e > 0.0))
    )
}

#[cfg(test)]
#[path = "progress_text_tests.rs"]
mod tests;
