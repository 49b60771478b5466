//! The cost of phase-boundary telemetry (issue 12: it must cost < 1% of a 1 s phase).
//!
//! Measures, for the devices under DIR (data, external journal, backing) and their file
//! system's counters:
//! 1. the time of one `Snapshot::take`, one `delta`, and one boundary (take + delta), over
//!    many repetitions (median, p99, max);
//! 2. a fixed amount of CPU work calibrated to take about 1 s, timed alone and with
//!    telemetry around it (take, work, take, delta), in interleaved pairs whose order
//!    alternates; the median of the per-pair differences.
//!
//! Prints a Markdown section. Run by `bench/telemetry.sh`; not part of `cargo test`.
//!
//!     cargo run --release --example telemetry_cost -- DIR [PAIRS] [ITERS]

use anyhow::{bail, Context, Result};
use fslab::telemetry::{delta, Devices, FsCounters, Role, Snapshot};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// `n` rounds of a 64-bit LCG: pure CPU work of a fixed size.
fn work(n: u64) -> u64 {
    let mut x = 1u64;
    for _ in 0..n {
        x = black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407),
        );
    }
    x
}

/// Rounds of `work` that take about one second here.
fn calibrate() -> u64 {
    let mut n = 1u64 << 20;
    loop {
        let t = Instant::now();
        black_box(work(n));
        let e = t.elapsed();
        if e >= Duration::from_millis(200) {
            return (n as f64 / e.as_secs_f64()) as u64;
        }
        n *= 2;
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(
        args.first()
            .context("usage: telemetry_cost DIR [PAIRS] [ITERS]")?,
    );
    let pairs: usize = args.get(1).map_or(Ok(11), |s| s.parse()).context("PAIRS")?;
    let iters: usize = args
        .get(2)
        .map_or(Ok(2000), |s| s.parse())
        .context("ITERS")?;
    if pairs < 5 {
        bail!("PAIRS must be at least 5");
    }
    let devs = Devices::for_target(&dir)?;
    let data = devs.get(Role::Data).map(|d| d.dev.name.clone());
    let journal = devs.get(Role::Journal).map(|d| d.dev.name.clone());
    let fs = match &data {
        Some(d) => FsCounters::detect(d, journal.as_deref()),
        None => FsCounters::None,
    };

    // 1. One boundary.
    let mut prev = Snapshot::take(&devs, &fs)?;
    for _ in 0..50 {
        let s = Snapshot::take(&devs, &fs)?;
        black_box(delta("warmup", &prev, &s));
        prev = s;
    }
    let (mut take_us, mut delta_us, mut boundary_us) = (Vec::new(), Vec::new(), Vec::new());
    let mut metrics = 0;
    for _ in 0..iters {
        let t0 = Instant::now();
        let s = Snapshot::take(&devs, &fs)?;
        let t1 = Instant::now();
        let m = delta("phase", &prev, &s);
        let t2 = Instant::now();
        metrics = m.len();
        black_box(m);
        prev = s;
        take_us.push((t1 - t0).as_secs_f64() * 1e6);
        delta_us.push((t2 - t1).as_secs_f64() * 1e6);
        boundary_us.push((t2 - t0).as_secs_f64() * 1e6);
    }
    if !prev.notes.is_empty() {
        bail!("telemetry could not read everything: {:?}", prev.notes);
    }

    // 2. A 1 s phase with and without telemetry, interleaved.
    let rounds = calibrate();
    let phase = |with: bool| -> Result<f64> {
        let t = Instant::now();
        if with {
            let s0 = Snapshot::take(&devs, &fs)?;
            black_box(work(rounds));
            let s1 = Snapshot::take(&devs, &fs)?;
            black_box(delta("phase", &s0, &s1));
        } else {
            black_box(work(rounds));
        }
        Ok(t.elapsed().as_secs_f64())
    };
    let (mut without, mut with, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..pairs {
        let (a, b) = if i % 2 == 0 {
            let a = phase(false)?;
            (a, phase(true)?)
        } else {
            let b = phase(true)?;
            (phase(false)?, b)
        };
        without.push(a);
        with.push(b);
        diff.push((b - a) / a * 100.0);
    }

    let roles: Vec<String> = devs
        .iter()
        .map(|d| format!("{}={}", d.role.label(), d.dev.name))
        .collect();
    let fs_file = fs
        .path()
        .map_or("none".to_string(), |p| p.display().to_string());
    let (take_med, delta_med) = (median(&mut take_us.clone()), median(&mut delta_us.clone()));
    let per_phase_us = 2.0 * take_med + delta_med;
    println!(
        "Devices: {} · file-system counters: `{fs_file}` · {metrics} metrics per phase.\n",
        roles.join(", ")
    );
    println!("## One boundary, {iters} repetitions (µs)\n");
    println!("| step | median | p99 | max |\n|---|---:|---:|---:|");
    for (name, v) in [
        ("Snapshot::take", &mut take_us),
        ("delta", &mut delta_us),
        ("take + delta", &mut boundary_us),
    ] {
        let (m, p, x) = (
            median(&mut v.clone()),
            pct(&mut v.clone(), 0.99),
            pct(v, 1.0),
        );
        println!("| {name} | {m:.1} | {p:.1} | {x:.1} |");
    }
    println!(
        "\nA phase needs at most two snapshots and one delta: {per_phase_us:.0} µs = **{:.3}% of a 1 s phase** (limit 1%).\n",
        per_phase_us / 1e4
    );
    println!(
        "## A 1 s phase of fixed CPU work, alone and with telemetry, {pairs} interleaved pairs\n"
    );
    println!("| | median (s) |\n|---|---:|");
    println!(
        "| without telemetry | {:.4} |",
        median(&mut without.clone())
    );
    println!(
        "| with telemetry (take, work, take, delta) | {:.4} |",
        median(&mut with.clone())
    );
    println!(
        "| median of per-pair differences | {:+.3}% |\n",
        median(&mut diff.clone())
    );
    println!(
        "Per-pair differences (%, in run order): {}",
        diff.iter()
            .map(|d| format!("{d:+.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(())
}
