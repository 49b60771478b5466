//! Synthetic studies written through the Store API, with fixed values and timestamps, so
//! report outputs are deterministic: an fdtree journal × fs study (with an outlier, a drift,
//! a slow first repetition, a failed repetition and every stop reason), an IOzone-like
//! journal × record-size sweep, a dbench-like load with latency histograms, two engine runs
//! and a study without any completed repetition; [`add_noisy`] adds a high-variance
//! 2 × 2 × 3 study (fdtree, IOzone, dbench under the cold policy) whose Student-t intervals
//! would reach below zero.
#![allow(dead_code)]

use fslab::metric::{Histogram, Metric, Unit};
use fslab::stats::adaptive::StopReason;
use fslab::store::{
    CellStatus, NewCell, NewStudy, NewTrial, RunWindow, SeriesStatus, Store, StudyStatus,
    TrialStatus,
};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde_json::json;
use std::path::Path;

/// Ids of the fixtures in the database.
pub struct Ids {
    pub journal: i64,
    pub iozone: i64,
    pub dbench: i64,
    pub run_a: i64,
    pub run_b: i64,
    pub broken: i64,
}

/// Multiplicative noise patterns for five repetitions (mean 1).
const NOISE: [f64; 5] = [1.000, 1.015, 0.985, 1.010, 0.990];

fn noise(rep: usize, cell: usize) -> f64 {
    NOISE[(rep + cell) % NOISE.len()]
}

fn env(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut e: Vec<(String, String)> = [
        ("cpu", "Intel(R) Xeon(R) E-2236 CPU @ 3.40GHz (12 CPUs)"),
        ("fslab_version", "0.1.0"),
        ("host", "lab1"),
        ("kernel", "6.1.0-18-amd64"),
        ("ram_bytes", "25769803776"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    e.sort();
    e
}

struct Builder<'a> {
    store: &'a mut Store,
    study: i64,
    cells: Vec<i64>,
    workload: i64,
    workloads: usize,
    /// Interference stored with the next trial (then cleared).
    disturbed: Option<String>,
}

impl<'a> Builder<'a> {
    fn new(
        store: &'a mut Store,
        kind: &'static str,
        name: &str,
        description: &str,
        command: &str,
    ) -> Self {
        let study = store
            .begin_study(&NewStudy {
                kind: fslab::vocab::StudyKind::parse(kind).expect("a stored study kind"),
                name: name.into(),
                description: description.into(),
                command_line: command.into(),
                spec: String::new(),
                spec_hash: String::new(),
                seed: Some(42),
            })
            .unwrap();
        Builder {
            store,
            study,
            cells: Vec::new(),
            workload: 0,
            workloads: 0,
            disturbed: None,
        }
    }

    fn cell(&mut self, factors: &[(&str, &str)], commands: &[String], superblock: &str) {
        let idx = self.cells.len();
        let label = if factors.is_empty() {
            "/mnt/test (ext4)".to_string()
        } else {
            factors
                .iter()
                .map(|(f, l)| format!("{f}={l}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let id = self
            .store
            .add_cell(
                self.study,
                &NewCell {
                    idx,
                    label,
                    factors: factors
                        .iter()
                        .map(|(f, l)| (f.to_string(), l.to_string()))
                        .collect(),
                    config: json!({"fs": factors.iter().find(|f| f.0 == "fs").map(|f| f.1).unwrap_or("ext4")}),
                },
            )
            .unwrap();
        self.store
            .set_cell_provisioning(id, commands, superblock)
            .unwrap();
        self.cells.push(id);
    }

    fn workload(&mut self, kind: &str, label: &str, params: serde_json::Value) {
        self.workload = self
            .store
            .add_workload(self.study, self.workloads, kind, label, &params)
            .unwrap();
        self.workloads += 1;
    }

    #[allow(clippy::too_many_arguments)]
    fn trial(
        &mut self,
        cell: usize,
        rep: u32,
        order: u32,
        status: &'static str,
        error: Option<&str>,
        metrics: &[Metric],
        hists: &[Histogram],
    ) {
        let t = format!("2024-05-01T10:{:02}:{:02}.000Z", order / 60, order % 60);
        self.store
            .record_trial(&NewTrial {
                cell: self.cells[cell],
                workload: self.workload,
                repetition: rep,
                order_index: order,
                status: TrialStatus::parse(status).expect("a trial status"),
                error: error.map(str::to_string),
                cache_policy: "cold",
                window: RunWindow {
                    started_at: t.clone(),
                    finished_at: t,
                    wall_seconds: 1.5,
                    interference: self.disturbed.take(),
                    settle_seconds: None,
                },
                metrics,
                histograms: hists,
                timeline: &[],
                excluded: None,
            })
            .unwrap();
    }

    /// Series rows of the current workload: one stop reason per cell, in turn.
    fn series_all(&mut self, stops: &[&str]) {
        for (i, c) in self.cells.clone().into_iter().enumerate() {
            let stop = stops[i % stops.len()];
            self.store
                .set_series(
                    c,
                    self.workload,
                    SeriesStatus::Complete,
                    StopReason::parse(stop),
                    None,
                )
                .unwrap();
        }
    }

    fn finish(&mut self, env: &[(String, String)], stops: &[&str], status: &str) -> i64 {
        self.store.set_environment(self.study, env).unwrap();
        for (i, c) in self.cells.clone().into_iter().enumerate() {
            let stop = stops[i % stops.len()];
            let (series, cell) = if stop == "failed" {
                (SeriesStatus::Failed, CellStatus::Failed)
            } else {
                (SeriesStatus::Complete, CellStatus::Complete)
            };
            self.store
                .set_series(c, self.workload, series, StopReason::parse(stop), None)
                .unwrap();
            self.store.set_cell_status(c, cell, None).unwrap();
        }
        let status = StudyStatus::parse(status).expect("a study status");
        self.store.set_study_status(self.study, status).unwrap();
        self.study
    }
}

fn ext4_commands(i: usize, journal: &str) -> Vec<String> {
    vec![
        format!("truncate -s 8G /var/lib/fslab/work/data-{i}.img"),
        format!("losetup --find --show /var/lib/fslab/work/data-{i}.img"),
        format!("mkfs.ext4 -F -q -J size={journal} -b 4096 /dev/loop{i}"),
        format!("mount -t ext4 -o noatime /dev/loop{i} /var/lib/fslab/mnt/cell-{i}"),
    ]
}

fn fdtree_metrics(rates: [f64; 4]) -> Vec<Metric> {
    // -d 10 -f 100 -s 1 -l 3: 1,111 directories and 111,100 files.
    let (dirs, files) = (1111.0, 111_100.0);
    let phases = ["dir_create", "file_create", "file_remove", "dir_remove"];
    let mut m = Vec::new();
    for (p, r) in phases.iter().zip(rates) {
        let items = if p.starts_with("dir") { dirs } else { files };
        let unit = if p.starts_with("dir") {
            Unit::DirsPerSec
        } else {
            Unit::FilesPerSec
        };
        m.push(Metric::new(*p, "elapsed", Unit::Seconds, items / r));
        m.push(Metric::new(*p, "rate", unit, r));
        if *p == "file_create" {
            m.push(Metric::new(*p, "throughput", Unit::KiBPerSec, r * 4.0));
        }
    }
    m
}

/// Telemetry of an fdtree repetition as the runner records it (a selection of
/// `doc/telemetry.md`): a small journal writes more journal blocks in more commits.
fn fdtree_telemetry(journal_mb: f64, fs: &str, scale: f64) -> Vec<Metric> {
    let mut m = Vec::new();
    for (p, data_mib, busy) in [("file_create", 470.0, 61.0), ("dir_remove", 12.0, 18.0)] {
        let small = journal_mb < 32.0;
        let journal_mib = if small {
            data_mib * 0.9
        } else {
            data_mib * 0.3
        };
        let mib = 1024.0 * 1024.0;
        m.push(Metric::new(
            p,
            "dev.data.write_bytes",
            Unit::Bytes,
            data_mib * mib * scale,
        ));
        m.push(Metric::new(
            p,
            "dev.journal.write_bytes",
            Unit::Bytes,
            journal_mib * mib * scale,
        ));
        m.push(Metric::new(
            p,
            "dev.backing.write_bytes",
            Unit::Bytes,
            (data_mib + journal_mib) * mib * 1.02 * scale,
        ));
        m.push(Metric::new(p, "dev.data.util", Unit::Percent, busy * scale));
        m.push(Metric::new(p, "cpu.user", Unit::Percent, 9.0 * scale));
        m.push(Metric::new(p, "cpu.sys", Unit::Percent, 41.0 * scale));
        m.push(Metric::new(
            p,
            "cpu.iowait",
            Unit::Percent,
            if small { 22.0 } else { 7.0 },
        ));
        if fs == "ext4" {
            let commits = if small { 180.0 } else { 41.0 };
            m.push(Metric::new(
                p,
                "fs.journal.transactions",
                Unit::Count,
                commits * scale,
            ));
        } else {
            m.push(Metric::new(p, "fs.log.writes", Unit::Count, 900.0 * scale));
        }
    }
    m
}

/// journal (16MB, 64MB) × fs (ext4, xfs), fdtree, five interleaved repetitions.
fn journal_study(store: &mut Store) -> i64 {
    let mut b = Builder::new(
        store,
        "study",
        "ext4-journal",
        "Does a bigger journal speed up metadata-heavy work?",
        "fslab study run examples/studies/journal.toml",
    );
    let cells = [
        ("16MB", "ext4"),
        ("16MB", "xfs"),
        ("64MB", "ext4"),
        ("64MB", "xfs"),
    ];
    for (i, (j, fs)) in cells.iter().enumerate() {
        let cmds = if *fs == "ext4" {
            ext4_commands(i, &j.replace("MB", "M"))
        } else {
            vec![
                format!("losetup --find --show /var/lib/fslab/work/data-{i}.img"),
                format!("mkfs.xfs -f -l size={} /dev/loop{i}", j.replace("MB", "m")),
                format!("mount -t xfs /dev/loop{i} /var/lib/fslab/mnt/cell-{i}"),
            ]
        };
        let sb = if *fs == "ext4" {
            format!("Filesystem volume name:   <none>\nJournal size:             {j}\nBlock size:               4096\nFilesystem features:      has_journal ext_attr dir_index extent")
        } else {
            format!("meta-data=/dev/loop{i} isize=512 agcount=4\nlog      =internal log bsize=4096 blocks={}", if *j == "16MB" { 4096 } else { 16384 })
        };
        b.cell(&[("journal", j), ("fs", fs)], &cmds, &sb);
    }
    b.workload(
        "fdtree",
        "small files, deep tree",
        json!({"dirs": 10, "files": 100, "size_blocks": 1, "levels": 3, "threads": 1, "sync": false}),
    );
    for rep in 0..5usize {
        for (c, (j, fs)) in cells.iter().enumerate() {
            let mut rates = [4000.0, 2500.0, 6000.0, 3000.0];
            for r in rates.iter_mut() {
                *r *= noise(rep, c);
            }
            if *j == "64MB" {
                rates[3] *= 4.67;
                rates[1] *= 1.004;
            }
            if *fs == "xfs" {
                rates[1] *= 0.8;
            }
            match c {
                // Noisy directory removal (high coefficient of variation).
                0 => rates[3] = 3000.0 * (1.0 + 20.0 * (noise(rep, c) - 1.0)),
                // An outlier in file removal at repetition 3.
                1 if rep == 2 => rates[2] *= 0.6,
                // File creation drifting down over the order.
                2 => rates[1] *= 1.0 - 0.04 * rep as f64,
                // A slow first directory creation.
                3 if rep == 0 => rates[0] *= 0.7,
                _ => {}
            }
            let order = (rep * 4 + c) as u32;
            let mut metrics = fdtree_metrics(rates);
            let mb = if *j == "16MB" { 16.0 } else { 64.0 };
            metrics.extend(fdtree_telemetry(mb, fs, noise(rep, c)));
            // Another job wrote to the backing disk during two repetitions of one cell.
            if c == 0 && (rep == 1 || rep == 2) {
                b.disturbed = Some("2.1 GiB of other I/O on vda".into());
            }
            b.trial(c, rep as u32 + 1, order, "ok", None, &metrics, &[]);
        }
    }
    b.trial(
        3,
        0,
        20,
        "failed",
        Some("file_create: creating L2D3/L2F7: No space left on device (os error 28)"),
        &[],
        &[],
    );
    b.finish(
        &env(&[("target_scheduler", "mq-deadline")]),
        &["ci_met", "ci_met", "max_reps", "budget"],
        "complete",
    )
}

/// journal (16MB … 1GB) × record_size (1M, 4M), IOzone-like write/read, three repetitions.
fn iozone_study(store: &mut Store) -> i64 {
    let mut b = Builder::new(
        store,
        "study",
        "journal-iozone",
        "IOzone write and read over journal and record sizes",
        "fslab study run examples/studies/journal-iozone.toml",
    );
    let journals = ["16MB", "64MB", "256MB", "1GB"];
    let records = ["1M", "4M"];
    let mut cells = Vec::new();
    for (ji, j) in journals.iter().enumerate() {
        for r in records {
            let i = cells.len();
            b.cell(
                &[("journal", j), ("record_size", r)],
                &ext4_commands(i, &j.replace("MB", "M").replace("GB", "G")),
                "",
            );
            cells.push((ji, r));
        }
    }
    b.workload(
        "iozone",
        "sequential 1 GiB",
        json!({"file_size": "1g", "tests": [0, 1], "threads": 1}),
    );
    for rep in 0..3usize {
        for (c, (ji, r)) in cells.iter().enumerate() {
            let n = noise(rep, c);
            let rec = if *r == "4M" { 1.1 } else { 1.0 };
            let write = 400_000.0 * (1.0 + 0.06 * *ji as f64) * rec * n;
            let read = 9_000_000.0 * rec * noise(rep + 1, c);
            let m = vec![
                Metric::new("write", "throughput", Unit::KiBPerSec, write),
                Metric::new("read", "throughput", Unit::KiBPerSec, read),
            ];
            b.trial(
                c,
                rep as u32 + 1,
                (rep * cells.len() + c) as u32,
                "ok",
                None,
                &m,
                &[],
            );
        }
    }
    b.finish(
        &env(&[("device_read_bytes_per_sec", "500000000")]),
        &["fixed"],
        "complete",
    )
}

fn hist(op: &str, base_us: u64, scale: f64, rep: usize) -> Histogram {
    let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for i in 0..200u64 {
        // A long-tailed, deterministic spread: most near the base, a few far out.
        let v =
            base_us as f64 * (1.0 + (i % 20) as f64 / 10.0 + if i % 50 == 0 { 20.0 } else { 0.0 });
        h.record((v * scale * 1000.0 * (1.0 + rep as f64 * 0.01)) as u64)
            .unwrap();
    }
    let mut data = Vec::new();
    V2DeflateSerializer::new().serialize(&h, &mut data).unwrap();
    Histogram {
        phase: op.into(),
        name: "latency_ns".into(),
        encoding: "hdr-v2-deflate".into(),
        data,
    }
}

/// log (internal, external), dbench-like, four repetitions with latency histograms.
fn dbench_study(store: &mut Store) -> i64 {
    let mut b = Builder::new(
        store,
        "study",
        "xfs-log",
        "dbench on xfs with an internal and an external log",
        "fslab study run examples/studies/xfs-log.toml",
    );
    b.cell(
        &[("log", "internal")],
        &["mkfs.xfs -f /dev/loop0".into()],
        "",
    );
    b.cell(
        &[("log", "external")],
        &["mkfs.xfs -f -l logdev=/dev/loop2,size=64m /dev/loop1".into()],
        "",
    );
    b.workload("dbench", "4 clients", json!({"clients": 4, "time": 60}));
    let ops = [("NTCreateX", 120u64), ("ReadX", 40), ("WriteX", 90)];
    for rep in 0..4usize {
        for c in 0..2usize {
            let speed = if c == 1 { 1.9 } else { 1.0 };
            let lat = if c == 1 { 0.6 } else { 1.0 };
            let n = noise(rep, c);
            let mut m = vec![Metric::new(
                "total",
                "throughput",
                Unit::MBPerSec,
                180.0 * speed * n,
            )];
            let mut hs = Vec::new();
            for (op, base) in ops {
                let ms = base as f64 / 1000.0 * lat * n;
                m.push(Metric::new(
                    op,
                    "count",
                    Unit::Count,
                    (50_000.0 * speed * n).round(),
                ));
                m.push(Metric::new(op, "mean_latency", Unit::Millis, ms * 1.6));
                m.push(Metric::new(op, "p50_latency", Unit::Millis, ms * 1.5));
                m.push(Metric::new(op, "p99_latency", Unit::Millis, ms * 21.0));
                m.push(Metric::new(op, "max_latency", Unit::Millis, ms * 23.0));
                hs.push(hist(op, base, lat, rep));
            }
            b.trial(c, rep as u32 + 1, (rep * 2 + c) as u32, "ok", None, &m, &hs);
        }
    }
    b.finish(&env(&[]), &["fixed"], "complete")
}

/// An fdtree engine run of three repetitions; `faster` speeds up file creation by 30% and
/// runs ten minutes later (two runs, not interleaved).
fn run(store: &mut Store, faster: bool) -> i64 {
    let mut b = Builder::new(
        store,
        "run",
        "fdtree",
        "",
        "fslab fdtree -d 10 -f 100 -s 1 -l 3 -o /mnt/test --repeat 3",
    );
    b.cell(&[], &[], "");
    b.workload(
        "fdtree",
        "-d 10 -f 100 -s 1 -l 3",
        json!({"dirs": 10, "files": 100, "size_blocks": 1, "levels": 3, "threads": 1}),
    );
    for rep in 0..3usize {
        let k = noise(rep, 0);
        let fc = if faster { 1.3 } else { 1.0 };
        let m = fdtree_metrics([4000.0 * k, 2500.0 * fc * k, 6000.0 * k, 3000.0 * k]);
        let order = rep as u32 + if faster { 600 } else { 0 };
        b.trial(0, rep as u32 + 1, order, "ok", None, &m, &[]);
    }
    b.finish(&env(&[("target_fs", "ext4")]), &["fixed"], "complete")
}

/// A study whose only cell failed before any repetition completed.
fn broken_study(store: &mut Store) -> i64 {
    let mut b = Builder::new(store, "study", "broken", "", "fslab study run broken.toml");
    b.cell(&[("fs", "xfs")], &[], "");
    b.workload("fdtree", "small", json!({"dirs": 2}));
    b.trial(
        0,
        0,
        0,
        "failed",
        Some("mkfs.xfs: cannot open /dev/loop9: Device or resource busy"),
        &[],
        &[],
    );
    b.finish(&env(&[]), &["failed"], "failed")
}

/// Spreads far larger than the means' distance from zero: Student-t intervals of three
/// (or two) repetitions reach below zero with these.
const SPREAD: [f64; 3] = [1.0, 3.0, 0.5];

/// journal (16MB, 64MB) × fs (ext4, xfs) × three workloads (fdtree, IOzone, dbench), cold
/// policy, values spread over a factor of 6: the study of issue 12's complaints.
fn noisy_study(store: &mut Store) -> i64 {
    let mut b = Builder::new(
        store,
        "study",
        "noisy",
        "A 2 × 2 × 3 study with very noisy results",
        "fslab study run noisy.toml",
    );
    let cells = [
        ("16MB", "ext4"),
        ("16MB", "xfs"),
        ("64MB", "ext4"),
        ("64MB", "xfs"),
    ];
    for (i, (j, fs)) in cells.iter().enumerate() {
        b.cell(&[("journal", j), ("fs", fs)], &ext4_commands(i, "16M"), "");
    }
    let k = |rep: usize, c: usize| SPREAD[(rep + c) % 3] * (1.0 + 0.2 * c as f64);
    let mut order = 0u32;
    b.workload(
        "fdtree",
        "tree",
        json!({"dirs": 10, "files": 100, "size_blocks": 1, "levels": 3, "threads": 1}),
    );
    for rep in 0..3usize {
        for c in 0..cells.len() {
            let r = 2000.0 * k(rep, c);
            let m = fdtree_metrics([r, r * 0.6, r * 1.5, r * 0.8]);
            b.trial(c, rep as u32 + 1, order, "ok", None, &m, &[]);
            order += 1;
        }
    }
    b.series_all(&["fixed", "max_reps"]);
    b.workload(
        "iozone",
        "files",
        json!({"file_size": "1g", "tests": [0, 1], "threads": 1}),
    );
    for rep in 0..3usize {
        for c in 0..cells.len() {
            let write = 300_000.0 * k(rep, c);
            let m = vec![
                // Timed over a tenth of the file: under a second.
                Metric::new("write", "elapsed", Unit::Seconds, 104857.6 / write),
                Metric::new("write", "throughput", Unit::KiBPerSec, write),
                Metric::new("read", "throughput", Unit::KiBPerSec, 30.0 * write),
            ];
            b.trial(c, rep as u32 + 1, order, "ok", None, &m, &[]);
            order += 1;
        }
    }
    b.series_all(&["fixed", "budget"]);
    b.workload(
        "dbench",
        "clients",
        json!({"clients": 2, "duration": "60s"}),
    );
    for rep in 0..2usize {
        for c in 0..cells.len() {
            let f = SPREAD[(rep + c) % 2 + 1];
            let m = vec![
                Metric::new("total", "throughput", Unit::MBPerSec, 150.0 * f),
                Metric::new("ReadX", "count", Unit::Count, (4000.0 * f).round()),
                Metric::new("ReadX", "mean_latency", Unit::Millis, 0.2 / f),
            ];
            b.trial(c, rep as u32 + 1, order, "ok", None, &m, &[]);
            order += 1;
        }
    }
    b.trial(
        1,
        0,
        order,
        "failed",
        Some("ReadX: client 2: No space left on device (os error 28)"),
        &[],
        &[],
    );
    b.finish(
        &env(&[("device_read_bytes_per_sec", "500000000")]),
        &["fixed"],
        "complete",
    )
}

/// Add the high-variance study to the fixture database at `path` (after [`build`]); its id.
pub fn add_noisy(path: &Path) -> i64 {
    let mut store = Store::open(path).unwrap();
    let id = noisy_study(&mut store);
    drop(store);
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute(
        "UPDATE study SET created_at = '2024-05-01T09:59:00.000Z', finished_at = '2024-05-01T11:00:00.000Z', tool_version = '0.1.0' WHERE id = ?1",
        [id],
    )
    .unwrap();
    id
}

/// Write every fixture into a new database at `path` and pin the timestamps the store set
/// from the clock, so reports are byte-for-byte reproducible.
pub fn build(path: &Path) -> Ids {
    let mut store = Store::open(path).unwrap();
    let ids = Ids {
        journal: journal_study(&mut store),
        iozone: iozone_study(&mut store),
        dbench: dbench_study(&mut store),
        run_a: run(&mut store, false),
        run_b: run(&mut store, true),
        broken: broken_study(&mut store),
    };
    drop(store);
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute(
        "UPDATE study SET created_at = '2024-05-01T09:59:00.000Z', finished_at = '2024-05-01T11:00:00.000Z', tool_version = '0.1.0'",
        [],
    )
    .unwrap();
    ids
}
