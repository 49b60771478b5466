//! How long `fslab iozone` will take, from the bytes each point moves (its file size × its
//! tests × its workers) at a rate: the rate the newest stored `fslab iozone` run on the same
//! directory with the same cache-bypassing flags (`-I`, `-o`, `-e`) measured (bytes moved per
//! second of wall time), else an assumed 150 MB/s. The plan (`--dry-run`) prints it and the
//! live ETA starts from it until its own points are measured
//! ([`crate::runner::progress_text::eta`]). A per-point constant would not do: IOzone's `-a`
//! moves 64 KiB in its first point and 6.5 GiB in its last.

use super::Setup;
use crate::app::study_plan::MODEL_BYTES;
use crate::store::{CellRow, Store, TrialStatus};
use crate::workload::iozone::sweep::Point;
use crate::workload::iozone::Test;
use serde_json::Value;
use std::path::Path;

/// The bytes-per-second rate of an estimate and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rate {
    /// Bytes moved per second of wall time.
    pub(crate) bytes_per_sec: f64,
    /// The stored run that measured it; `None` when assumed.
    pub(crate) run: Option<i64>,
}

impl Rate {
    /// The rate and its source in short, for the JSON plan: `1.43 GB/s measured by run 12`,
    /// `150 MB/s assumed`.
    pub(crate) fn basis(&self) -> String {
        let rate = self.rate();
        match self.run {
            Some(id) => format!("{rate} measured by run {id}"),
            None => format!("{rate} assumed"),
        }
    }

    /// The words after "at": `1.4 GB/s, measured by run 12 on this directory` or `an assumed
    /// 150 MB/s; cached I/O is faster, a slow device slower`.
    pub(crate) fn words(&self) -> String {
        let rate = self.rate();
        match self.run {
            Some(id) => format!("{rate}, measured by run {id} in this directory"),
            None => format!("an assumed {rate}; cached I/O is faster, a slow device slower"),
        }
    }

    /// The rate in MB/s or GB/s, as the tables scale it.
    fn rate(&self) -> String {
        let mbps = self.bytes_per_sec / 1e6;
        crate::metric::Unit::MBPerSec.scale(mbps).fmt(mbps)
    }
}

/// Timed passes of one repetition of a point: every selected test number's tests.
pub(super) fn passes(tests: &[u8]) -> Vec<Test> {
    tests.iter().flat_map(|&n| Test::of_number(n)).collect()
}

/// Bytes one repetition of a point of `file_kib` moves: the file, once per pass and worker.
fn moved(file_kib: u64, passes: usize, workers: u64) -> u64 {
    file_kib
        .saturating_mul(1024)
        .saturating_mul(workers.max(1))
        .saturating_mul(passes as u64)
}

/// Bytes one repetition of point `p` moves.
pub(crate) fn point_bytes(s: &Setup, p: &Point) -> u64 {
    let passes = passes(&s.base.tests).len();
    moved(p.file_kib, passes, s.base.threads as u64)
}

/// The rate to estimate with: measured by the newest matching stored run, else assumed.
/// Reads the store read-only and only if it exists (a plan creates nothing).
pub(crate) fn rate(s: &Setup, db: Option<&Path>) -> Rate {
    let assumed = Rate {
        bytes_per_sec: MODEL_BYTES,
        run: None,
    };
    let path = db.map_or_else(crate::store::default_path, Path::to_path_buf);
    if !path.exists() {
        return assumed;
    }
    let Ok(store) = Store::open_read_only(&path) else {
        return assumed;
    };
    let runs = store.list_studies().unwrap_or_default();
    runs.iter()
        .filter(|r| r.kind == "run" && r.name == "iozone")
        .take(RUNS_LOOKED_AT)
        .find_map(|r| measured(&store, r.id, s))
        .unwrap_or(assumed)
}

/// How many of the newest `fslab iozone` runs are looked at for a measured rate.
const RUNS_LOOKED_AT: usize = 20;

/// The rate run `id` measured, if it ran in the same directory with the same flags and
/// completed a repetition.
fn measured(store: &Store, id: i64, s: &Setup) -> Option<Rate> {
    let dir = s.target.dir().to_string_lossy().into_owned();
    let cells = store.cells(id).ok()?;
    let here = |c: &CellRow| c.config.get("target").and_then(Value::as_str) == Some(&*dir);
    if !cells.iter().any(here) {
        return None;
    }
    let w = store.workloads(id).ok()?.into_iter().next()?;
    let flag = |k: &str| w.params.get(k).and_then(Value::as_bool);
    let same = [
        ("direct", s.base.direct),
        ("osync", s.base.osync),
        ("fsync", s.base.fsync),
    ]
    .iter()
    .all(|(k, v)| flag(k) == Some(*v));
    if !same || w.kind != "iozone" {
        return None;
    }
    let tests: Vec<u8> = serde_json::from_value(w.params.get("tests")?.clone()).ok()?;
    let workers = w.params.get("threads").and_then(Value::as_u64).unwrap_or(1);
    let passes = passes(&tests).len();
    let (mut bytes, mut secs) = (0.0, 0.0);
    for t in store.trials(id).ok()? {
        if t.status != TrialStatus::Ok || t.window.wall_seconds <= 0.0 {
            continue;
        }
        let Some(kib) = cells
            .iter()
            .find(|c| c.id == t.cell_id)
            .and_then(|c| c.config.get("file_kib"))
            .and_then(Value::as_u64)
        else {
            continue;
        };
        bytes += moved(kib, passes, workers) as f64;
        secs += t.window.wall_seconds;
    }
    (bytes > 0.0 && secs > 0.0).then_some(Rate {
        bytes_per_sec: bytes / secs,
        run: Some(id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::metric::{Metric, Unit};
    use crate::store::{NewCell, NewStudy, NewTrial, Store};
    use clap::Parser;

    fn setup_of(dir: &Path, args: &[&str]) -> Setup {
        let file = dir.join("f").display().to_string();
        let mut all = vec!["fslab", "iozone", "-f", file.as_str()];
        all.extend(args);
        let Command::Iozone(a) = Cli::try_parse_from(all).unwrap().command else {
            panic!("not iozone");
        };
        super::super::setup(&a).unwrap()
    }

    fn total(s: &Setup) -> u64 {
        s.plan.points.iter().map(|p| point_bytes(s, p)).sum()
    }

    #[test]
    fn a_point_moves_its_file_once_per_pass_and_worker() {
        // -i 0 -i 1: write, rewrite, read, reread.
        assert_eq!(passes(&[0, 1]).len(), 4);
        assert_eq!(moved(64, 4, 1), 4 * 64 * 1024);
        assert_eq!(moved(512 * 1024, 4, 2), 4 << 30);
    }

    #[test]
    fn a_sweep_of_small_files_is_estimated_far_shorter_than_one_of_large_files() {
        let d = tempfile::tempdir().unwrap();
        let small = setup_of(d.path(), &["-a", "-g", "1m", "-i", "0", "-i", "1"]);
        let large = setup_of(
            d.path(),
            &["-a", "-n", "64m", "-g", "512m", "-i", "0", "-i", "1"],
        );
        // About as many points (35 and 36); the large sweep moves 540 times the bytes: a
        // per-point constant would have estimated them alike.
        let (ps, pl) = (small.plan.points.len(), large.plan.points.len());
        assert_eq!((ps, pl), (35, 36));
        // 64 KiB files at 4 to 64 KiB records (5) … 1 MiB (9): 4 passes each.
        assert_eq!(
            total(&small),
            (4 * (64 * 5 + 128 * 6 + 256 * 7 + 512 * 8 + 1024 * 9)) << 10
        );
        // 64 MiB files at 64 KiB to 16 MiB records (9) … 512 MiB (9 each): 4 passes each.
        assert_eq!(total(&large), (4 * 9 * (64 + 128 + 256 + 512)) << 20);
    }

    /// A store at `path` with one `fslab iozone` run in `dir` (flags as given) whose 1 MiB
    /// point, four passes, took `secs` twice.
    fn stored_run(path: &Path, dir: &Path, direct: bool, secs: f64) -> i64 {
        let mut st = Store::open(path).unwrap();
        let run = NewStudy::named(crate::vocab::StudyKind::Run, "iozone", "fslab iozone");
        let id = st.begin_study(&run).unwrap();
        let config = serde_json::json!({"target": dir, "file_kib": 1024, "record_bytes": 4096});
        let cell = NewCell {
            label: "p".into(),
            ..NewCell::of(0, &[], config)
        };
        let cell = st.add_cell(id, &cell).unwrap();
        let params = serde_json::json!({"tests": [0, 1], "threads": 1, "direct": direct,
            "osync": false, "fsync": false});
        let w = st.add_workload(id, 0, "iozone", "iozone", &params).unwrap();
        for rep in 1..=2 {
            let m = [Metric::new("write", "elapsed", Unit::Seconds, secs / 4.0)];
            let mut t = NewTrial {
                order_index: rep - 1,
                ..NewTrial::counted(cell, w, rep, &m)
            };
            t.window.wall_seconds = secs;
            st.record_trial(&t).unwrap();
        }
        id
    }

    #[test]
    fn the_rate_is_the_one_measured_in_the_same_directory_with_the_same_flags() {
        let d = tempfile::tempdir().unwrap();
        let (here, there) = (d.path().join("here"), d.path().join("there"));
        std::fs::create_dir(&here).unwrap();
        std::fs::create_dir(&there).unwrap();
        let db = d.path().join("r.db");
        let s = setup_of(&here, &["-a", "-g", "1m"]);
        // No store: assumed.
        assert_eq!(rate(&s, Some(&db)).run, None);
        let mine = stored_run(&db, s.target.dir(), false, 2.0);
        // Newer, but elsewhere, and here with -I: not this run's rate.
        stored_run(&db, &there.canonicalize().unwrap(), false, 0.5);
        stored_run(&db, s.target.dir(), true, 8.0);
        let r = rate(&s, Some(&db));
        assert_eq!(r.run, Some(mine));
        // 4 MiB moved per 2 s.
        assert_eq!(r.bytes_per_sec, f64::from(4u32 << 20) / 2.0);
        assert!(r.words().contains(&format!("measured by run {mine}")));
        let direct = setup_of(&here, &["-a", "-g", "1m", "-I"]);
        assert_eq!(rate(&direct, Some(&db)).run, Some(mine + 2));
    }
}
