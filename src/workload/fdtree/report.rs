//! fdtree's own report text, as `fdtree.bash` 1.0.2 prints it after each run: the tree's
//! shape and totals, then per phase the date lines, `TIME IN, OUT, TOTAL` and the rates —
//! with sub-second times and fractional rates where fdtree had whole seconds.
//! Pure functions of the engine's types.

use super::{Counts, FdtreeParams, Phase, RepOutcome};
use std::path::Path;

/// fdtree.bash's report for one repetition, with sub-second times and fractional rates; `t`
/// the run's totals (all threads, or under MPI all ranks).
pub fn fdtree_report(p: &FdtreeParams, t: Counts, start: &Path, out: &RepOutcome) -> String {
    use std::fmt::Write;
    let root = out.roots.first().cloned().unwrap_or_default();
    let mut s = format!(
        "fdtree-1.0.2 (fslab {}): starting at {}/{root}/
\tcreating/deleting {} directory levels with {} directories at each level
\tfor a total of {} directories
\twith {} files of size {}KiB per directory
\tfor a total of {} files and {}KiB
",
        env!("CARGO_PKG_VERSION"),
        start.display(),
        p.levels,
        p.dirs,
        t.dirs,
        p.files,
        p.size_blocks * 4,
        t.files,
        t.bytes / 1024
    );
    let date = |secs: f64| {
        (out.started + chrono::Duration::nanoseconds((secs * 1e9) as i64))
            .format("%a %b %e %H:%M:%S %Y")
            .to_string()
    };
    for ph in &out.phases {
        let rate = ph.items as f64 / ph.elapsed.max(1e-9);
        let _ = writeln!(s, "{}\n{}", date(ph.t_in), date(ph.t_out));
        let times = format!("{:.3}, {:.3}, {:.3}", ph.t_in, ph.t_out, ph.elapsed);
        // fdtree pads its headings to one column; "DIRECTORY …" is the widest.
        let phase = ph.kind().unwrap_or(Phase::DirRemove);
        let heading = format!("{} TIME IN, OUT, TOTAL", phase.label());
        let _ = writeln!(s, "{heading:<37}= {times}");
        let _ = writeln!(s, "\t{} =  {rate:.2}", phase.rate_words());
        if phase.writes_data() {
            let kib = (ph.items * p.file_bytes()) as f64 / 1024.0 / ph.elapsed.max(1e-9);
            let _ = writeln!(s, "\tKiB per second               =  {kib:.2}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fdtree::PhaseTiming;
    use chrono::TimeZone;

    #[test]
    fn report_follows_fdtree_bash_line_for_line() {
        let p = crate::workload::fdtree::shaped(2, 3, 1, 2);
        let phase = |phase, items, t_in: f64, elapsed: f64| PhaseTiming {
            phase,
            items,
            elapsed,
            sync: None,
            per_thread: vec![elapsed],
            start_skew: 0.0,
            t_in,
            t_out: t_in + elapsed,
        };
        let started = chrono::Local
            .with_ymd_and_hms(2024, 3, 5, 7, 8, 9)
            .single()
            .unwrap();
        let out = RepOutcome {
            phases: vec![
                phase("dir_create", 7, 0.0, 0.5),
                phase("file_create", 21, 0.5, 0.25),
                phase("file_remove", 21, 0.75, 0.125),
                phase("dir_remove", 7, 0.875, 0.0625),
            ],
            roots: vec!["LEVEL0.h.1".into()],
            started,
        };
        let text = fdtree_report(&p, p.total_counts().unwrap(), Path::new("/m"), &out);
        let expected = format!(
            "fdtree-1.0.2 (fslab {}): starting at /m/LEVEL0.h.1/
\tcreating/deleting 2 directory levels with 2 directories at each level
\tfor a total of 7 directories
\twith 3 files of size 4KiB per directory
\tfor a total of 21 files and 84KiB
Tue Mar  5 07:08:09 2024
Tue Mar  5 07:08:09 2024
DIRECTORY CREATE TIME IN, OUT, TOTAL = 0.000, 0.500, 0.500
\tDirectory creates per second =  14.00
Tue Mar  5 07:08:09 2024
Tue Mar  5 07:08:09 2024
FILE CREATE TIME IN, OUT, TOTAL      = 0.500, 0.750, 0.250
\tFile creates per second      =  84.00
\tKiB per second               =  336.00
Tue Mar  5 07:08:09 2024
Tue Mar  5 07:08:09 2024
FILE REMOVE TIME IN, OUT, TOTAL      = 0.750, 0.875, 0.125
\tFile removals per second     =  168.00
Tue Mar  5 07:08:09 2024
Tue Mar  5 07:08:09 2024
DIRECTORY REMOVE TIME IN, OUT, TOTAL = 0.875, 0.938, 0.062
\tDirectory removals per second =  112.00
",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, expected);
    }
}
