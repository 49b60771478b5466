//! mdtest's text output: the lines before the table (launch, command line, path and file
//! system, task and item counts) and the `SUMMARY rate` / `SUMMARY time` tables, laid out
//! as mdtest 4 prints them (column widths, three decimals, the rows it shows for `-F`/`-D`).

use super::layout::Layout;
use super::params::MdtestParams;
use super::result::{spread, Iteration, Phase};
use std::fmt::Write as _;
use std::path::Path;

/// Which tables to print (mdtest: rates by default, times with `-Z`, both with `-P`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Print {
    /// `SUMMARY rate` only.
    Rate,
    /// `SUMMARY time` only (`-Z`).
    Time,
    /// Both (`-P`).
    Both,
}

/// What `-v` (`level` 1 or more) prints after iteration `it` in `dir`: mdtest's level-1
/// lines, the iteration and each of its phases' time and rate (and the stonewall's); from
/// level 2 first the test directory it worked in (mdtest's level-2 line). mdtest's deeper
/// levels trace single operations, which fslab does not log: they print what level 2 does.
pub fn verbose(it: &Iteration, level: u32, dir: &Path) -> String {
    let mut s = String::new();
    if level == 0 {
        return s;
    }
    let _ = writeln!(s, "V-1: main: * iteration {} *", it.index + 1);
    if level >= 2 {
        let td = dir.join(super::layout::test_dir(it.index));
        let _ = writeln!(s, "V-2: main: test directory {}", td.display());
    }
    for r in &it.phases {
        let label = r.phase.label();
        // The phase's line, then the stonewall's with its items.
        let wall = r.stonewall.map(|w| {
            let items = format!(" (stonewall, {} items)", w.items);
            (w.seconds, w.rate(), items)
        });
        for (secs, rate, tail) in [(r.seconds, r.rate(), String::new())]
            .into_iter()
            .chain(wall)
        {
            let _ = writeln!(
                s,
                "V-1:   {label:<18}: {secs:14.3} sec, {rate:14.3} ops/sec{tail}"
            );
        }
    }
    s
}

/// The `SUMMARY rate (in ops/sec)` table (or, with `time`, mdtest's `SUMMARY time` table,
/// whose figures are each phase's seconds although mdtest's heading says ms/op). Starts with
/// an empty line, as mdtest's does.
pub fn summary(iters: &[Iteration], dirs: bool, files: bool, time: bool) -> String {
    let mut s = String::new();
    let what = if time {
        "time (in ms/op)"
    } else {
        "rate (in ops/sec)"
    };
    let _ = writeln!(s, "\nSUMMARY {what}: (of {} iterations)", iters.len());
    s.push_str(concat!(
        "   Operation                     Max            Min           Mean        Std Dev\n",
        "   ---------                     ---            ---           ----        -------\n",
    ));
    for &phase in Phase::ALL {
        let tree = phase.as_str().starts_with("tree_");
        let on_files = phase.as_str().starts_with("file_");
        if !tree && ((on_files && !files) || (!on_files && !dirs)) {
            continue;
        }
        let v = spread(iters, phase, time);
        // Tree rows' labels are wider, as mdtest's.
        let (width, gap) = if tree { (22, " ") } else { (18, "     ") };
        let _ = write!(s, "   {:<width$}{gap}", phase.label());
        let _ = writeln!(
            s,
            "{:14.3} {:14.3} {:14.3} {:14.3}",
            v.max, v.min, v.mean, v.sd
        );
    }
    s
}

/// The tables `print` asks for.
pub fn tables(iters: &[Iteration], p: &MdtestParams, print: Print) -> String {
    let (d, f) = (p.does_dirs(), p.does_files());
    match print {
        Print::Rate => summary(iters, d, f, false),
        Print::Time => summary(iters, d, f, true),
        Print::Both => summary(iters, d, f, false) + &summary(iters, d, f, true),
    }
}

/// mdtest's `N tasks, M files/directories` line.
pub fn tasks_line(p: &MdtestParams, lay: &Layout, ranks: u32) -> String {
    let all = lay.items.saturating_mul(u64::from(ranks));
    let what = match (p.does_dirs(), p.does_files()) {
        (true, true) => "files/directories",
        (false, _) => "files",
        (true, false) => "directories",
    };
    format!("{ranks} tasks, {all} {what}")
}

/// mdtest's `Path` and `FS` lines for `dir` (size, use of blocks and inodes), or `None`
/// when statvfs fails.
pub fn fs_lines(dir: &Path) -> Option<String> {
    let st = rustix::fs::statvfs(dir).ok()?;
    let total = st.f_blocks as f64 * st.f_frsize as f64;
    let free = st.f_bfree as f64 * st.f_frsize as f64;
    let pct_used = |free: f64, total: f64| match total > 0.0 {
        true => (1.0 - free / total) * 100.0,
        false => 0.0,
    };
    let used = pct_used(free, total);
    let (size, unit) = if total / f64::from(1u32 << 30) > 1024.0 {
        (total / (1u64 << 40) as f64, "TiB")
    } else {
        (total / f64::from(1u32 << 30), "GiB")
    };
    let inodes = st.f_files as f64;
    let iused = pct_used(st.f_ffree as f64, inodes);
    Some(format!(
        "{:<20}: {}\n{:<20}: {size:.1} {unit}   Used FS: {used:.1}%   Inodes: {:.1} Mi   Used Inodes: {iused:.1}%",
        "Path",
        dir.display(),
        "FS",
        inodes / f64::from(1u32 << 20)
    ))
}

/// What the lines before the table say.
#[derive(Debug, Clone)]
pub struct Preamble {
    /// Local time the run started (`11/26/2026 19:35:41`).
    pub started: String,
    /// Ranks.
    pub ranks: u32,
    /// Hosts the ranks run on.
    pub nodes: u32,
    /// The command line, each argument quoted as mdtest quotes them.
    pub command: String,
    /// Warnings to print (mdtest's `WARNING:` lines).
    pub warnings: Vec<String>,
    /// The `Path`/`FS` lines ([`fs_lines`]).
    pub fs: Option<String>,
    /// The random order's seed, when there is one.
    pub seed: Option<u32>,
    /// [`tasks_line`].
    pub tasks: String,
}

/// mdtest's start time format.
pub fn timestamp(t: chrono::DateTime<chrono::Local>) -> String {
    t.format("%m/%d/%Y %H:%M:%S").to_string()
}

/// `prog 'arg1' 'arg2'`, as mdtest prints its command line.
pub fn command_line(prog: &str, args: &[String]) -> String {
    let quoted: String = args.iter().map(|a| format!(" '{a}'")).collect();
    format!("{prog}{quoted}")
}

/// The lines before the table.
pub fn preamble(p: &Preamble) -> String {
    let mut s = format!("-- started at {} --\n\n", p.started);
    let _ = writeln!(
        s,
        "fslab-{} mdtest was launched with {} total task(s) on {} node(s)",
        env!("CARGO_PKG_VERSION"),
        p.ranks,
        p.nodes
    );
    let _ = writeln!(s, "Command line used: {}", p.command);
    for w in &p.warnings {
        let _ = writeln!(s, "WARNING: {w}");
    }
    if let Some(fs) = &p.fs {
        let _ = writeln!(s, "{fs}");
    }
    if let Some(seed) = p.seed {
        let _ = writeln!(s, "random seed: {seed}");
    }
    let _ = writeln!(s, "{}", p.tasks);
    s
}

/// mdtest's closing line.
pub fn finished(t: chrono::DateTime<chrono::Local>) -> String {
    format!("-- finished at {} --\n", timestamp(t))
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
