use super::*;

fn at(rep: u32, reps: u32, point: usize, points: usize) -> Position {
    Position {
        rep,
        reps,
        point,
        points,
    }
}

fn left(steps: u64, mean: Option<f64>, work: f64) -> Left {
    Left { steps, mean, work }
}

#[test]
fn counters_name_repetition_and_point_with_their_totals() {
    assert_eq!(counter(at(2, 3, 1, 1)), "rep 2/3");
    assert_eq!(counter(at(1, 1, 4, 9)), "rep 1/1 · point 4/9");
    assert_eq!(counter(at(3, 5, 12, 12)), "rep 3/5 · point 12/12");
}

#[test]
fn clocks_are_minutes_and_seconds_with_hours_when_needed() {
    assert_eq!(clock(11.0), "00:11");
    assert_eq!(clock(10.6), "00:11");
    assert_eq!(clock(725.0), "12:05");
    assert_eq!(clock(3723.0), "1:02:03");
    assert_eq!(clock(-3.0), "00:00");
    assert_eq!(clock(f64::NAN), "00:00");
    assert_eq!(eta_suffix(Some(11.0)), " · ETA 00:11");
    assert_eq!(eta_suffix(None), "");
}

#[test]
fn eta_is_measured_mean_times_steps_left() {
    let one = |steps, mean| left(steps, mean, 1.0);
    // Nothing measured, no plan: no ETA at all (not "0s").
    assert_eq!(eta(&[one(3, None)], None), None);
    // Nothing measured, a plan's estimate: that.
    assert_eq!(eta(&[one(3, None)], Some(10.0)), Some(30.0));
    // Measured: the mean, the prior ignored.
    assert_eq!(eta(&[one(2, Some(4.0))], Some(10.0)), Some(8.0));
    // Nothing left.
    assert_eq!(eta(&[one(0, Some(4.0))], None), Some(0.0));
    // Each unit at its own mean.
    assert_eq!(
        eta(&[one(1, Some(2.0)), one(3, Some(5.0))], None),
        Some(17.0)
    );
    // An unmeasured unit by its work: 2 s for 1 unit of work measured → 8 units = 16 s.
    let units = [left(1, Some(2.0), 1.0), left(2, None, 8.0)];
    assert_eq!(eta(&units, None), Some(2.0 + 32.0));
}

#[test]
fn interleaved_runs_leave_the_rest_of_this_repetition_and_the_next_ones() {
    assert_eq!(interleaved_left(3, 1, None), [3]);
    assert_eq!(interleaved_left(3, 1, Some(at(1, 3, 1, 1))), [2]);
    assert_eq!(interleaved_left(3, 1, Some(at(3, 3, 1, 1))), [0]);
    // Rep 1 of 2 done up to point 2 of 4: points 3 and 4 still twice, 1 and 2 once.
    assert_eq!(interleaved_left(2, 4, Some(at(1, 2, 2, 4))), [1, 1, 2, 2]);
    assert_eq!(interleaved_left(2, 4, Some(at(2, 2, 4, 4))), [0, 0, 0, 0]);
}

#[test]
fn rates_have_units_and_three_significant_digits() {
    assert_eq!(
        rate(209_479.859_7, RateUnit::Items("files")),
        "209k files/s"
    );
    assert_eq!(rate(48_123.0, RateUnit::Items("files")), "48.1k files/s");
    assert_eq!(rate(912.4, RateUnit::Items("dirs")), "912 dirs/s");
    assert_eq!(rate(999.7, RateUnit::Items("dirs")), "1.00k dirs/s");
    assert_eq!(rate(7.25, RateUnit::Items("ops")), "7.25 ops/s");
    assert_eq!(rate(0.0, RateUnit::Items("ops")), "0.00 ops/s");
    assert_eq!(rate(f64::NAN, RateUnit::Items("ops")), "0.00 ops/s");
    assert_eq!(rate(3_500_000.0, RateUnit::Items("ops")), "3.50M ops/s");
    // 209,479.86 records of 4 KiB per second = 818 MiB/s.
    assert_eq!(rate(209_479.859_7, RateUnit::Bytes(4096)), "818 MiB/s");
    assert_eq!(rate(10.0, RateUnit::Bytes(1 << 20)), "10.0 MiB/s");
    assert_eq!(rate(3.0, RateUnit::Bytes(1 << 30)), "3.00 GiB/s");
    assert_eq!(rate(100.0, RateUnit::Bytes(1)), "100 B/s");
    // dbench's 18.5 MB/s (10^6 bytes) stays 18.5 MB/s, not 17.6 MiB/s.
    assert_eq!(rate(18.5e6, RateUnit::DecimalBytes), "18.5 MB/s");
    assert_eq!(rate(1.234e9, RateUnit::DecimalBytes), "1.23 GB/s");
    assert_eq!(rate(999.6e3, RateUnit::DecimalBytes), "1.00 MB/s");
    // fio's IOPS as fio prints them (`w=31.5k IOPS`).
    assert_eq!(iops(31_500.0), "31.5k IOPS");
    assert_eq!(iops(166_690.0), "167k IOPS");
    assert_eq!(iops(f64::NAN), "0.00 IOPS");
}

#[test]
fn plain_lines_carry_the_totals_and_the_eta() {
    assert_eq!(
        step_line("fdtree", at(1, 3, 1, 1), "", 0.974, Some(11.0)),
        "fdtree rep 1/3: 0.97 s · ETA 00:11"
    );
    assert_eq!(
        step_line("iozone", at(1, 2, 4, 9), "1024k, 64k", 0.5, Some(75.0)),
        "iozone rep 1/2 · point 4/9 (1024k, 64k): 0.50 s · ETA 01:15"
    );
    // The last step: nothing left, no ETA.
    assert_eq!(
        step_line("fdtree", at(3, 3, 1, 1), "", 1.0, Some(0.0)),
        "fdtree rep 3/3: 1.00 s"
    );
    assert_eq!(
        study_line(3, 12, "journal=16MB · fdtree · rep 1/5", 0.97, Some(11.0)),
        "[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s · ETA 00:11"
    );
    assert_eq!(
        study_line(1, 12, "journal=16MB · fdtree · rep 1/5", 0.97, None),
        "[1/12] journal=16MB · fdtree · rep 1/5: 0.97 s"
    );
}

#[test]
fn bar_names_say_the_engine_once() {
    assert_eq!(bar_name("fio", "fio"), "fio");
    assert_eq!(bar_name("fdtree", "file_create"), "fdtree file_create");
    assert_eq!(bar_name("", "write"), "write");
}

#[test]
fn a_sweeps_eta_charges_each_point_its_fixed_cost_and_its_bytes() {
    // IOzone's -a: files of 64 KiB to 512 MiB, 8 points each, every point 10 ms of opening,
    // syncing and removing plus its bytes at 1 GB/s. Measured: the files up to 1 MiB.
    let files: Vec<f64> = (0..14).map(|i| 65536.0 * 2f64.powi(i)).collect();
    let cost = |w: f64| 0.010 + w / 1e9;
    let units: Vec<Left> = files
        .iter()
        .enumerate()
        .flat_map(|(i, &w)| {
            (0..8).map(move |_| left(u64::from(i >= 5), (i < 5).then(|| cost(w)), w))
        })
        .collect();
    let truth: f64 = files[5..].iter().map(|&w| 8.0 * cost(w)).sum();
    let got = eta(&units, None).unwrap();
    assert!((got - truth).abs() < 0.01 * truth, "{got} {truth}");
    // The seconds per byte of the small points, scaled to the large ones, is far off (it
    // said 1:18:17 for an 85-second run).
    let (secs, bytes) = files[..5]
        .iter()
        .fold((0.0, 0.0), |(s, b), &w| (s + 8.0 * cost(w), b + 8.0 * w));
    let scaled = secs / bytes * files[5..].iter().map(|&w| 8.0 * w).sum::<f64>();
    assert!(scaled > 10.0 * truth, "{scaled} {truth}");
    // One file size measured: per byte at most at the plan's rate, the rest a fixed cost.
    let first = [
        left(0, Some(cost(65536.0)), 65536.0),
        left(1, None, 1048576.0),
    ];
    let got = eta(&first, Some(1.0 / 1e9)).unwrap();
    assert!((got - cost(1048576.0)).abs() < 1e-9, "{got}");
    // Without a plan: per byte, as measured.
    let got = eta(&first, None).unwrap();
    assert!((got - 16.0 * cost(65536.0)).abs() < 1e-9, "{got}");
}
