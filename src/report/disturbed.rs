//! Disturbed repetitions of one configuration, summed: the worst repetition with its figure,
//! how many of the counted repetitions were disturbed, and the other I/O (or other
//! processes' CPU) of all of them — "repetition 4 of journal=16MB: 2.4 GiB of other I/O on
//! vda — 5 of 6 disturbed, 5.1 GiB of other I/O in all".
//!
//! The runner stores each repetition's verdict as the one line `telemetry::Verdict` prints
//! (`2.1 GiB of other I/O on vda; CPU steal 4.1% of all CPUs`), so the figures are read back
//! from those words here (the report does not depend on the telemetry module).

use crate::stats::adaptive::{Disturbed, Fate};
use crate::units::fmt_bytes;

/// The disturbed policy repetitions ran under, read from what it left stored: a repetition
/// left out as re-run ([`Fate::Rerun`]) only happens under `repeat`, as dropped only under
/// `drop`; without either, disturbed repetitions were kept (`keep`, the default).
pub fn policy_of<'a>(excluded: impl IntoIterator<Item = &'a str>) -> Disturbed {
    let mut policy = Disturbed::Keep;
    for e in excluded {
        if Some(e) == Fate::Rerun.excluded() {
            return Disturbed::Repeat;
        }
        if Some(e) == Fate::Drop.excluded() {
            policy = Disturbed::Drop;
        }
    }
    policy
}

/// Whether `disturbed` of `all` repetitions of a series (counted and left out) make the
/// machine busy rather than a repetition unlucky: more than half of them.
pub fn busy(disturbed: usize, all: usize) -> bool {
    all > 0 && 2 * disturbed > all
}

/// What a busy series' warning tells the user.
pub const BUSY_ADVICE: &str = "quiet the machine (the figures name the other work) and run again; more repetitions of a busy machine measure the other work, not the file system";

/// The advice of a high-variation warning on a busy series, instead of more repetitions.
pub const BUSY_CV_ADVICE: &str =
    "most of its repetitions were disturbed (see that warning): quiet the machine and run again";

/// The hint of an inconclusive verdict with a busy side, instead of more repetitions.
pub const BUSY_MORE: &str =
    "the machine was busy during most repetitions (Warnings): quiet it and run again; more repetitions would not tell";

/// The figures of one repetition's stored interference line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Bytes of other I/O on backing devices.
    pub io_bytes: f64,
    /// Other processes' CPU-seconds.
    pub cpu_seconds: f64,
    /// CPU steal, % of all CPUs.
    pub steal_pct: f64,
    /// Other runnable tasks.
    pub runnable: f64,
}

/// A size as `fmt_bytes` prints it (`2.4 GiB`, `512 B`), in bytes.
fn parse_bytes(s: &str) -> Option<f64> {
    let (num, unit) = s.trim().split_once(' ')?;
    let power = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        .iter()
        .position(|u| *u == unit)?;
    Some(num.parse::<f64>().ok()? * 1024.0f64.powi(power as i32))
}

/// The figures of a stored line (the parts `; `-separated, as `Verdict` prints them).
pub fn figures(line: &str) -> Figures {
    let mut f = Figures::default();
    for part in line.split("; ") {
        if let Some((size, _)) = part.split_once(" of other I/O on ") {
            f.io_bytes += parse_bytes(size).unwrap_or(0.0);
        } else if let Some(rest) = part.strip_prefix("other processes used ") {
            f.cpu_seconds += rest
                .split_once(" CPU-s")
                .and_then(|(s, _)| s.parse::<f64>().ok())
                .unwrap_or(0.0);
        } else if let Some(rest) = part.strip_prefix("CPU steal ") {
            let pct = rest
                .split_once('%')
                .and_then(|(s, _)| s.parse::<f64>().ok());
            f.steal_pct = f.steal_pct.max(pct.unwrap_or(0.0));
        } else if let Some((n, _)) = part.split_once(" other runnable tasks") {
            f.runnable = f.runnable.max(n.parse::<f64>().unwrap_or(0.0));
        }
    }
    f
}

/// How badly a repetition was disturbed, for naming the worst: other I/O first (it moves
/// file-system results most), then other processes' CPU, steal, load.
fn severity(f: &Figures) -> (f64, f64, f64, f64) {
    (f.io_bytes, f.cpu_seconds, f.steal_pct, f.runnable)
}

/// The worst of stored interference lines ([`severity`]; the first of equals).
pub fn worst(lines: &[String]) -> Option<&str> {
    let figs: Vec<Figures> = lines.iter().map(|l| figures(l)).collect();
    Some(&lines[worst_of(&figs)?])
}

/// The index of the worst of `figs` by [`severity`], the first of equals.
fn worst_of(figs: &[Figures]) -> Option<usize> {
    (0..figs.len()).max_by(|&a, &b| {
        severity(&figs[a])
            .partial_cmp(&severity(&figs[b]))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.cmp(&a))
    })
}

/// The warning's subject for one configuration: its worst disturbed repetition with that
/// repetition's own line, how many of the `counted` repetitions were disturbed and, where
/// several were, their other I/O and CPU in all. `reps` are (repetition, stored line) of the
/// disturbed ones; `None` when there are none.
pub fn disturbed_line(cell: &str, reps: &[(i64, String)], counted: usize) -> Option<String> {
    let figs: Vec<Figures> = reps.iter().map(|(_, l)| figures(l)).collect();
    let worst = worst_of(&figs)?;
    let (rep, line) = &reps[worst];
    // The parts of one repetition's line joined by commas: a group of warnings joins its
    // places with semicolons.
    let mut text = format!(
        "repetition {rep} of {cell}: {} — {} of {counted} disturbed",
        line.replace("; ", ", "),
        reps.len()
    );
    if reps.len() > 1 {
        let io: f64 = figs.iter().map(|f| f.io_bytes).sum();
        let cpu: f64 = figs.iter().map(|f| f.cpu_seconds).sum();
        if io > 0.0 {
            text.push_str(&format!(", {} of other I/O in all", fmt_bytes(io as u64)));
        } else if cpu > 0.0 {
            text.push_str(&format!(", other processes used {cpu:.2} CPU-s in all"));
        }
    }
    Some(text)
}

/// The disturbed repetitions of one configuration that were left out: `reps` are
/// (repetition, stored line, `rerun` or `dropped`). "journal=16MB: 2 disturbed repetitions
/// re-run (the worst, repetition 4: 2.4 GiB of other I/O on vda; 3.1 GiB of other I/O in
/// all)"; `None` when there are none.
pub fn left_out_line(cell: &str, reps: &[(i64, String, &str)]) -> Option<String> {
    let figs: Vec<Figures> = reps.iter().map(|(_, l, _)| figures(l)).collect();
    let worst = worst_of(&figs)?;
    let count = |why: Fate| reps.iter().filter(|r| Some(r.2) == why.excluded()).count();
    let mut how = Vec::new();
    for (why, words) in [(Fate::Rerun, "re-run"), (Fate::Drop, "dropped")] {
        match count(why) {
            0 => {}
            1 => how.push(format!("1 disturbed repetition {words}")),
            n => how.push(format!("{n} disturbed repetitions {words}")),
        }
    }
    let (rep, line, _) = &reps[worst];
    let mut text = format!(
        "{cell}: {} (the worst, repetition {rep}: {}",
        how.join(", "),
        line.replace("; ", ", ")
    );
    let io: f64 = figs.iter().map(|f| f.io_bytes).sum();
    if reps.len() > 1 && io > 0.0 {
        text.push_str(&format!(" — {} of other I/O in all", fmt_bytes(io as u64)));
    }
    text.push(')');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_repetition_is_named_with_its_own_figure_and_the_sum_follows() {
        // The case: a 2.4 GiB competing writer during repetition 4, smaller other
        // I/O in four more; the first repetition's figure is not the one to show.
        let reps = vec![
            (1, "495.1 MiB of other I/O on vda".to_string()),
            (
                2,
                "300.0 MiB of other I/O on vda; CPU steal 3.0% of all CPUs".into(),
            ),
            (3, "900.0 MiB of other I/O on vda".into()),
            (4, "2.4 GiB of other I/O on vda".into()),
            (6, "1.0 GiB of other I/O on vda".into()),
        ];
        assert_eq!(
            disturbed_line("journal=16MB", &reps, 6).unwrap(),
            "repetition 4 of journal=16MB: 2.4 GiB of other I/O on vda — 5 of 6 disturbed, 5.1 GiB of other I/O in all"
        );
    }

    #[test]
    fn without_other_io_the_cpu_decides() {
        let reps = vec![
            (2, "CPU steal 4.1% of all CPUs".to_string()),
            (
                3,
                "other processes used 0.52 CPU-s (13.0% of all CPUs); 3 other runnable tasks on 2 CPUs"
                    .into(),
            ),
            (5, "other processes used 0.20 CPU-s (6.0% of all CPUs)".into()),
        ];
        assert_eq!(
            disturbed_line("c", &reps, 5).unwrap(),
            "repetition 3 of c: other processes used 0.52 CPU-s (13.0% of all CPUs), 3 other runnable tasks on 2 CPUs — 3 of 5 disturbed, other processes used 0.72 CPU-s in all"
        );
        assert_eq!(
            disturbed_line("c", &reps[..1], 5).unwrap(),
            "repetition 2 of c: CPU steal 4.1% of all CPUs — 1 of 5 disturbed"
        );
        assert!(disturbed_line("c", &[], 5).is_none());
    }

    #[test]
    fn left_out_repetitions_are_counted_by_how() {
        let reps = vec![
            (3, "1.0 GiB of other I/O on vda".to_string(), "rerun"),
            (3, "2.0 GiB of other I/O on vda".to_string(), "rerun"),
            (5, "CPU steal 3.0% of all CPUs".to_string(), "dropped"),
        ];
        assert_eq!(
            left_out_line("journal=16MB", &reps).unwrap(),
            "journal=16MB: 2 disturbed repetitions re-run, 1 disturbed repetition dropped (the worst, repetition 3: 2.0 GiB of other I/O on vda — 3.0 GiB of other I/O in all)"
        );
        assert!(left_out_line("c", &[]).is_none());
    }

    #[test]
    fn the_policy_is_read_from_what_it_left_and_busy_is_most() {
        assert_eq!(policy_of([]), Disturbed::Keep);
        assert_eq!(policy_of(["dropped"]), Disturbed::Drop);
        assert_eq!(policy_of(["dropped", "rerun"]), Disturbed::Repeat);
        assert!(busy(4, 4) && busy(3, 5));
        assert!(!busy(2, 4) && !busy(0, 0) && !busy(1, 3));
    }

    #[test]
    fn figures_read_back_what_the_verdict_printed() {
        let f = figures(
            "1.5 GiB of other I/O on vda; 512 B of other I/O on sdb; CPU steal 2.5% of all CPUs",
        );
        assert_eq!(f.io_bytes, 1.5 * 1024.0 * 1024.0 * 1024.0 + 512.0);
        assert_eq!(f.steal_pct, 2.5);
        assert_eq!(figures("quiet"), Figures::default());
    }
}
