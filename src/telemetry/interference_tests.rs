//! Interference verdicts and settle, on synthetic snapshots.

use super::super::*;
use crate::telemetry::tests::dev;
use anyhow::bail;
use std::cell::Cell;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// The I/O and CPU state of the machine at one moment (cumulative, like the kernel's).
#[derive(Clone, Copy, Default)]
struct State {
    secs: f64,
    data_w: u64,
    data_r: u64,
    backing_w: u64,
    backing_r: u64,
    user_ticks: u64,
    idle_ticks: u64,
    steal_ticks: u64,
    own_user_us: u64,
    running: u64,
}

fn line(major: u32, minor: u32, name: &str, r: u64, w: u64) -> DiskStats {
    super::super::diskstats::parse_line(&format!(
        "{major} {minor} {name} 1 0 {} 0 1 0 {} 0 0 0 0 0 0 0 0 0 0",
        r / 512,
        w / 512
    ))
    .unwrap()
}

fn snap(t0: Instant, s: State, dio: bool) -> Snapshot {
    let data = dev(Role::Data, 7, 0, "loop0", Some(dio), Some(Role::Backing));
    let backing = dev(Role::Backing, 254, 0, "vda", None, None);
    Snapshot {
        at: t0 + Duration::from_secs_f64(s.secs),
        disks: vec![
            (data, Some(line(7, 0, "loop0", s.data_r, s.data_w))),
            (backing, Some(line(254, 0, "vda", s.backing_r, s.backing_w))),
        ],
        stat: ProcStat {
            cpu: CpuTimes {
                user: s.user_ticks,
                idle: s.idle_ticks,
                steal: s.steal_ticks,
                ..Default::default()
            },
            cpus: 2,
            ctxt: 0,
            procs_running: s.running,
        },
        ticks_per_second: 100,
        load: LoadAvg::default(),
        memory: DirtyMemory::default(),
        usage: Usage {
            user_us: s.own_user_us,
            ..Default::default()
        },
        fs: None,
        notes: Vec::new(),
    }
}

/// A 10 s window on 2 CPUs (2000 ticks), fslab alone running, in which the cell wrote 1 GiB.
fn base() -> (State, State) {
    let a = State {
        running: 1,
        ..Default::default()
    };
    let b = State {
        secs: 10.0,
        data_w: 1024 * MIB,
        backing_w: 1024 * MIB,
        user_ticks: 500,
        idle_ticks: 1500,
        own_user_us: 5_000_000,
        running: 1,
        ..Default::default()
    };
    (a, b)
}

fn judge(a: State, b: State, dio: bool) -> Verdict {
    let t0 = Instant::now();
    interference(
        &Window::between(&snap(t0, a, dio), &snap(t0, b, dio)),
        &Thresholds::default(),
    )
}

#[test]
fn other_io_on_the_backing_device_is_named_with_its_size() {
    let (a, mut b) = base();
    b.backing_w += 2150 * MIB;
    let v = judge(a, b, true);
    assert_eq!(v.to_string(), "2.1 GiB of other I/O on vda");
    assert_eq!(v.other_io_bytes(), 2150 * MIB);
}

#[test]
fn the_other_io_margin_is_floor_plus_rate_plus_fraction() {
    // Allowed: 1 MiB + 10 s × 1 MiB/s + 25% of 1 GiB = 267 MiB.
    let (a, mut b) = base();
    b.backing_w += 266 * MIB;
    assert!(judge(a, b, true).is_quiet());
    b.backing_w += 2 * MIB;
    assert!(!judge(a, b, true).is_quiet());
}

#[test]
fn reads_count_only_when_every_loop_on_the_device_does_direct_io() {
    let (a, mut b) = base();
    b.backing_r = 500 * MIB;
    assert!(
        judge(a, b, false).is_quiet(),
        "buffered loop: readahead, page cache"
    );
    assert_eq!(judge(a, b, true).other_io_bytes(), 500 * MIB);
    b.data_r = 500 * MIB;
    assert!(judge(a, b, true).is_quiet(), "the cell's own reads");
}

/// Each disturbance on top of [`base`], as the verdict words it, and the same under its
/// limit: quiet.
#[test]
fn disturbances_are_named_and_what_stays_under_their_limits_is_quiet() {
    type Edit = fn(&mut State, &mut State);
    let cases: [(&str, Edit, &str); 7] = [
        // The backing file system's own metadata: 3 MiB on top of 1 GiB.
        ("a cell alone", |_, b| b.backing_w += 3 * MIB, "quiet"),
        // Of 2060 ticks: 2.9%, then 1.5%.
        (
            "steal",
            |_, b| b.steal_ticks = 60,
            "CPU steal 2.9% of all CPUs",
        ),
        ("steal under 2%", |_, b| b.steal_ticks = 30, "quiet"),
        (
            "load at both ends",
            |a, b| (a.running, b.running) = (6, 4),
            "3 other runnable tasks on 2 CPUs",
        ),
        // A moment at one end is not sustained load.
        ("load at one end", |a, _| a.running = 6, "quiet"),
        // 500 user ticks = 5 CPU-s, fslab used 3.9 s: 1.1 CPU-s of others = 5.5% of 20.
        (
            "others' CPU",
            |_, b| b.own_user_us = 3_900_000,
            "other processes used 1.10 CPU-s (5.5% of all CPUs)",
        ),
        (
            "others' CPU at 4.5%",
            |_, b| b.own_user_us = 4_100_000,
            "quiet",
        ),
    ];
    for (what, edit, want) in cases {
        let (mut a, mut b) = base();
        edit(&mut a, &mut b);
        let v = judge(a, b, true);
        assert_eq!(v.to_string(), want, "{what}");
        assert_eq!(v.is_quiet(), want == "quiet", "{what}: {v}");
    }
}

/// A clock that only moves when settle sleeps.
struct FakeClock(Cell<Duration>);

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        self.0.get()
    }
    fn sleep(&self, d: Duration) {
        self.0.set(self.0.get() + d);
    }
}

/// A machine whose backing device takes 100 MiB of other writes per poll until `busy_for`.
fn run_settle(busy_for: Duration, max_wait: Duration) -> Settled {
    let clock = FakeClock(Cell::new(Duration::ZERO));
    let t0 = Instant::now();
    let mut s = State {
        running: 1,
        ..Default::default()
    };
    let mut probe = || -> anyhow::Result<Snapshot> {
        let now = clock.now();
        if now > Duration::ZERO {
            s.secs = now.as_secs_f64();
            s.idle_ticks += 50;
            if now <= busy_for {
                s.backing_w += 100 * MIB;
            }
        }
        Ok(snap(t0, s, true))
    };
    settle(
        max_wait,
        SETTLE_POLL,
        &Thresholds::default(),
        &clock,
        &mut probe,
    )
    .unwrap()
}

#[test]
fn settle_waits_until_the_machine_is_quiet() {
    let r = run_settle(Duration::from_millis(750), Duration::from_secs(10));
    assert!(r.quiet, "{:?}", r.last);
    assert_eq!(
        r.waited,
        Duration::from_millis(1000),
        "three busy polls and one quiet"
    );
}

#[test]
fn settle_on_a_quiet_machine_takes_one_poll() {
    let r = run_settle(Duration::ZERO, Duration::from_secs(10));
    assert!(r.quiet);
    assert_eq!(r.waited, SETTLE_POLL);
}

#[test]
fn settle_gives_up_at_its_limit_and_says_why() {
    let r = run_settle(Duration::from_secs(3600), Duration::from_millis(600));
    assert!(!r.quiet);
    assert_eq!(
        r.waited,
        Duration::from_millis(750),
        "the first poll at or past the limit"
    );
    assert_eq!(r.last.to_string(), "100.0 MiB of other I/O on vda");
}

#[test]
fn settle_passes_on_read_errors() {
    let clock = FakeClock(Cell::new(Duration::ZERO));
    let mut probe = || -> anyhow::Result<Snapshot> { bail!("no /proc") };
    let e = settle(
        Duration::from_secs(1),
        SETTLE_POLL,
        &Thresholds::default(),
        &clock,
        &mut probe,
    );
    assert_eq!(e.unwrap_err().to_string(), "no /proc");
}
