//! Unit tests of IOzone's timed passes: the exact calls, offsets and order of each test
//! through the recording I/O layer, the random permutation and stride rule against IOzone
//! 3.414's own sequences (captured with strace from `iozone -i 0 -i 2 -s 64k -r 4k`,
//! `-s 400k -r 4k`, and `-i 0 -i 5 -s 160k -r 4k`), verification, no-space handling, the
//! untimed steps between tests and IOzone's truncated rates.

use super::*;
use crate::workload::iozone::io::{self, Mark, OpenFlags};
use crate::workload::iozone::recording::{Op, RecordingIo};
use crate::workload::iozone::{Iozone, IozoneParams, DEFAULT_PATTERN};
use crate::workload::Quiet;
use std::path::Path;
use std::time::Duration;

const F: &str = "/t/iozone.tmp";

/// The parameters of a point of `numrecs` records of `reclen` bytes on [`F`], IOzone's
/// defaults otherwise.
fn spec(numrecs: u64, reclen: usize) -> IozoneParams {
    IozoneParams {
        file_kib: numrecs * reclen as u64 / 1024,
        record: reclen as u64,
        ..IozoneParams::default()
    }
}

/// Run `-i n` on `io` with `p`, returning the passes.
fn run(io: &mut RecordingIo, p: &IozoneParams, n: u8) -> anyhow::Result<Vec<PassResult>> {
    let s = FileSpec::new(Path::new(F), p);
    let mut buf = io::AlignedBuf::new(s.reclen, p.pattern, false);
    let mut r = Runner {
        io,
        spec: &s,
        buf: &mut buf,
        ticker: Ticker::new(&Quiet, s.reclen),
        passes: 0,
    };
    r.run(n)
}

/// A recording layer holding a fully written file of `numrecs` records.
fn with_file(numrecs: u64, reclen: usize) -> RecordingIo {
    let mut io = RecordingIo::new();
    io.put_file(
        Path::new(F),
        vec![DEFAULT_PATTERN; numrecs as usize * reclen],
    );
    io
}

/// Run `-i n` with the default spec on a fully written file of `numrecs` records: the
/// recording layer and the passes.
fn run_on_file(numrecs: u64, reclen: usize, n: u8) -> (RecordingIo, Vec<PassResult>) {
    let mut io = with_file(numrecs, reclen);
    let res = run(&mut io, &spec(numrecs, reclen), n).unwrap();
    (io, res)
}

/// The calls between each TimerStart and TimerStop.
fn timed(ops: &[Op]) -> Vec<Vec<Op>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<Op>> = None;
    for op in ops {
        match op {
            Op::Mark(Mark::TimerStart) => cur = Some(Vec::new()),
            Op::Mark(Mark::TimerStop) => out.extend(cur.take()),
            o => {
                if let Some(c) = cur.as_mut() {
                    c.push(o.clone())
                }
            }
        }
    }
    out
}

/// The values `v` of the recorded calls that match `pattern`.
macro_rules! pick {
    ($ops:expr, $pattern:pat => $v:expr) => {
        $ops.iter()
            .filter_map(|o| match o {
                $pattern => Some($v),
                _ => None,
            })
            .collect()
    };
}

fn read_offsets(ops: &[Op]) -> Vec<u64> {
    pick!(ops, Op::Read { offset, .. } => *offset)
}

fn write_offsets(ops: &[Op]) -> Vec<u64> {
    pick!(ops, Op::Write { offset, .. } => *offset)
}

fn seeks(ops: &[Op]) -> Vec<u64> {
    pick!(ops, Op::Seek { to, .. } => *to)
}

fn opens(ops: &[Op]) -> Vec<OpenFlags> {
    pick!(ops, Op::Open { flags, .. } => *flags)
}

/// Where the first recorded call that `is` says is.
fn first(ops: &[Op], is: fn(&Op) -> bool) -> usize {
    ops.iter().position(is).unwrap()
}

/// How many recorded calls `is` says are.
fn count(ops: &[Op], is: fn(&Op) -> bool) -> usize {
    ops.iter().filter(|o| is(o)).count()
}

/// Where the first timed pass starts.
fn timer_start(ops: &[Op]) -> usize {
    first(ops, |o| matches!(o, Op::Mark(Mark::TimerStart)))
}

/// IOzone 3.414's random order for 16 records (strace of `iozone -i 0 -i 2 -s 64k -r 4k`).
const IOZONE_PERM_16: [u64; 16] = [3, 15, 8, 1, 12, 9, 7, 2, 5, 0, 6, 10, 14, 13, 4, 11];
/// … and for 100 records (`-s 400k -r 4k`).
const IOZONE_PERM_100: [u64; 100] = [
    31, 64, 18, 24, 58, 40, 43, 0, 1, 19, 87, 10, 9, 92, 81, 73, 63, 71, 45, 3, 69, 89, 49, 96, 59,
    51, 15, 12, 88, 34, 7, 16, 30, 79, 80, 17, 75, 4, 72, 33, 35, 39, 86, 46, 54, 68, 47, 67, 11,
    94, 62, 60, 36, 55, 83, 44, 65, 22, 53, 27, 74, 23, 76, 99, 97, 93, 95, 48, 57, 37, 32, 5, 52,
    98, 38, 91, 85, 50, 21, 41, 26, 25, 14, 82, 13, 42, 6, 90, 8, 66, 77, 29, 61, 56, 78, 84, 20,
    2, 70, 28,
];
/// IOzone 3.414's lseek targets (in records) of the strided read of 40 records, stride 17
/// (`iozone -i 0 -i 5 -s 160k -r 4k`); the first read is at record 0.
const IOZONE_STRIDE_40: [u64; 40] = [
    17, 34, 1, 18, 35, 2, 19, 36, 3, 20, 37, 4, 21, 5, 22, 6, 23, 7, 24, 8, 25, 9, 26, 10, 27, 11,
    28, 12, 29, 13, 30, 14, 31, 15, 32, 16, 33, 17, 34, 18,
];

#[test]
fn random_order_is_iozones_mt19937_64_shuffle() {
    assert_eq!(permutation(16), IOZONE_PERM_16);
    assert_eq!(permutation(100), IOZONE_PERM_100);
}

#[test]
fn random_order_visits_every_record_exactly_once() {
    for n in [0u64, 1, 2, 3, 17, 255, 256, 1000, 4099] {
        let mut p = permutation(n);
        assert_eq!(p.len() as u64, n);
        p.sort_unstable();
        assert_eq!(p, (0..n).collect::<Vec<_>>(), "n = {n}");
    }
}

#[test]
fn write_truncates_only_on_the_first_pass_and_times_only_the_writes() {
    let mut io = RecordingIo::new();
    // A longer file from an earlier run: the write pass must truncate it.
    io.put_file(Path::new(F), vec![0u8; 10 * 4096]);
    let s = spec(4, 4096);
    let res = run(&mut io, &s, 0).unwrap();
    assert_eq!(
        res.iter().map(|r| r.test).collect::<Vec<_>>(),
        [Test::Write, Test::Rewrite]
    );
    assert_eq!(io.file(Path::new(F)).unwrap().len(), 4 * 4096);
    let creats = count(&io.ops, |o| matches!(o, Op::Creat(_)));
    assert_eq!(creats, 1, "creat (truncation) only before the first pass");
    assert!(matches!(io.ops[0], Op::Creat(_)));
    assert!(opens(&io.ops).iter().all(|f| !f.truncate));
    // Untimed fsync right after open, then the timed writes, then fsync + close untimed.
    let t = timed(&io.ops);
    assert_eq!(t.len(), 2);
    for pass in &t {
        assert_eq!(write_offsets(pass), [0, 4096, 8192, 12288]);
        assert!(pass
            .iter()
            .all(|o| matches!(o, Op::Write { len: 4096, .. })));
    }
    let i_open = first(&io.ops, |o| matches!(o, Op::Open { .. }));
    assert!(matches!(io.ops[i_open + 1], Op::Fsync(_)));
    assert!(matches!(io.ops[i_open + 2], Op::Mark(Mark::TimerStart)));
    let i_stop = first(&io.ops, |o| matches!(o, Op::Mark(Mark::TimerStop)));
    assert!(matches!(io.ops[i_stop + 1], Op::Fsync(_)));
    assert!(matches!(io.ops[i_stop + 2], Op::Close(_)));
    assert_eq!(io.open_count(), 0);
}

#[test]
fn e_and_c_move_fsync_and_close_inside_the_timing() {
    let mut io = RecordingIo::new();
    let mut s = spec(2, 4096);
    s.fsync = true;
    s.close = true;
    run(&mut io, &s, 0).unwrap();
    for pass in timed(&io.ops) {
        let n = pass.len();
        assert!(matches!(pass[n - 2], Op::Fsync(_)), "{pass:?}");
        assert!(matches!(pass[n - 1], Op::Close(_)), "{pass:?}");
    }
    // With -c, nothing is fsynced or closed after the timer (IOzone skips the fsync too).
    let i_stop = first(&io.ops, |o| matches!(o, Op::Mark(Mark::TimerStop)));
    assert!(matches!(io.ops[i_stop + 1], Op::Open { .. }));
}

#[test]
fn o_and_i_set_o_sync_and_o_direct_on_the_writers() {
    let mut io = RecordingIo::new();
    let mut s = spec(2, 4096);
    s.osync = true;
    s.direct = true;
    io.direct_align = 4096;
    run(&mut io, &s, 0).unwrap();
    run(&mut io, &s, 1).unwrap();
    let flags = opens(&io.ops);
    assert!(flags[..2].iter().all(|f| f.sync && f.direct && f.write));
    assert!(flags[2..].iter().all(|f| f.direct && !f.write && !f.sync));
}

#[test]
fn read_primes_record_zero_untimed_then_reads_every_record_in_order() {
    let (io, res) = run_on_file(5, 4096, 1);
    assert_eq!(res[0].test, Test::Read);
    assert_eq!(res[1].test, Test::Reread);
    // open, fsync, priming read at 0, lseek 0, TimerStart.
    let start = timer_start(&io.ops);
    assert!(matches!(io.ops[start - 4], Op::Open { .. }));
    assert!(matches!(io.ops[start - 3], Op::Fsync(_)));
    assert!(matches!(
        io.ops[start - 2],
        Op::Read {
            offset: 0,
            len: 4096,
            ..
        }
    ));
    assert!(matches!(io.ops[start - 1], Op::Seek { to: 0, .. }));
    for pass in timed(&io.ops) {
        assert_eq!(read_offsets(&pass), [0, 4096, 8192, 12288, 16384]);
        assert_eq!(pass.len(), 5, "nothing but the reads is timed: {pass:?}");
    }
}

#[test]
fn random_read_and_write_use_iozones_order_with_lseek_before_each_call() {
    let (io, res) = run_on_file(16, 4096, 2);
    assert_eq!(
        res.iter().map(|r| r.test).collect::<Vec<_>>(),
        [Test::RandomRead, Test::RandomWrite]
    );
    let expect: Vec<u64> = IOZONE_PERM_16.iter().map(|r| r * 4096).collect();
    let t = timed(&io.ops);
    assert_eq!(read_offsets(&t[0]), expect);
    assert_eq!(write_offsets(&t[1]), expect);
    for pass in &t {
        for pair in pass.chunks(2) {
            match (&pair[0], &pair[1]) {
                (Op::Seek { to, .. }, Op::Read { offset, .. } | Op::Write { offset, .. }) => {
                    assert_eq!(to, offset)
                }
                other => panic!("expected lseek then I/O, got {other:?}"),
            }
        }
    }
}

#[test]
fn backward_read_goes_from_the_last_record_to_the_first_twice() {
    let (io, res) = run_on_file(4, 16384, 3);
    assert_eq!(res.len(), 1, "IOzone reports the first of its two passes");
    let t = timed(&io.ops);
    assert_eq!(t.len(), 2);
    for pass in &t {
        // lseek(-reclen, SEEK_END) is inside the timing, as in IOzone.
        assert!(matches!(pass[0], Op::Seek { to: 49152, .. }));
        assert_eq!(read_offsets(pass), [49152, 32768, 16384, 0]);
        assert_eq!(seeks(pass), [49152, 32768, 16384, 0]);
    }
}

#[test]
fn record_rewrite_writes_offset_zero_n_times() {
    let (io, _) = run_on_file(6, 4096, 4);
    let t = timed(&io.ops);
    assert_eq!(write_offsets(&t[0]), [0; 6]);
    assert!(t[0]
        .iter()
        .skip(1)
        .step_by(2)
        .all(|o| matches!(o, Op::Seek { to: 0, .. })));
    assert_eq!(
        opens(&io.ops).first().copied(),
        Some(OpenFlags {
            write: true,
            create: true,
            ..Default::default()
        })
    );
}

#[test]
fn stride_read_follows_iozones_wrap_rule() {
    let (io, _) = run_on_file(40, 4096, 5);
    let t = timed(&io.ops);
    let mut expect = vec![0u64];
    expect.extend(IOZONE_STRIDE_40[..39].iter().map(|r| r * 4096));
    assert_eq!(read_offsets(&t[0]), expect);
    let records: Vec<u64> = seeks(&t[0]).iter().map(|to| to / 4096).collect();
    assert_eq!(records, IOZONE_STRIDE_40);
}

#[test]
fn stride_wraps_to_zero_when_the_file_is_no_longer_than_the_stride() {
    let mut w = 0;
    let mut pos = 0;
    for _ in 0..5 {
        pos = stride_next(pos, 16384, 17, 4, &mut w);
        assert_eq!(pos, 0);
    }
    assert_eq!(w, 5);
}

#[test]
fn fwrite_uses_r_plus_on_an_existing_file_and_one_write_per_record() {
    let mut io = with_file(3, 8192);
    let s = spec(3, 8192);
    run(&mut io, &s, 6).unwrap();
    let opens = opens(&io.ops);
    assert!(
        opens.iter().all(|f| f.write && !f.truncate && !f.create),
        "{opens:?}"
    );
    for pass in timed(&io.ops) {
        assert_eq!(write_offsets(&pass), [0, 8192, 16384]);
        assert!(pass
            .iter()
            .all(|o| matches!(o, Op::Write { len: 8192, .. })));
    }
    // Without a file, the first pass creates it ("w+").
    let mut io = RecordingIo::new();
    run(&mut io, &s, 6).unwrap();
    assert!(matches!(&io.ops[0], Op::Open { flags, .. } if flags.create && flags.truncate));
    assert_eq!(io.file(Path::new(F)).unwrap().len(), 3 * 8192);
}

#[test]
fn fread_opens_a_second_descriptor_to_fsync_and_reads_records_in_order() {
    let (io, res) = run_on_file(3, 4096, 7);
    assert_eq!(res[1].test, Test::Freread);
    let start = timer_start(&io.ops);
    assert!(matches!(io.ops[start - 1], Op::Close(_)));
    assert!(matches!(io.ops[start - 2], Op::Fsync(_)));
    for pass in timed(&io.ops) {
        assert_eq!(read_offsets(&pass), [0, 4096, 8192]);
    }
}

#[test]
fn verify_names_the_offset_of_the_first_wrong_byte() {
    let mut io = with_file(4, 4096);
    io.corrupt = Some((F.into(), 5000));
    let mut s = spec(4, 4096);
    s.verify = true;
    let e = run(&mut io, &s, 1).unwrap_err();
    let v = e.downcast_ref::<VerifyError>().expect("a verify error");
    assert_eq!((v.offset, v.record), (5000, 1));
    let msg = e.to_string();
    assert!(
        msg.contains("offset 5000") && msg.contains("record 1"),
        "{msg}"
    );
    // Every reader checks: random read names the same byte.
    let e = run(&mut io, &s, 2).unwrap_err();
    assert!(e.to_string().contains("offset 5000"), "{e}");
    // Without corruption everything verifies.
    io.corrupt = None;
    for n in [1, 2, 3, 5, 7] {
        run(&mut io, &s, n).unwrap();
    }
}

#[test]
fn no_space_reports_the_bytes_written_and_closes_the_file() {
    let mut io = RecordingIo::new();
    io.capacity = Some(10_000);
    let params = IozoneParams {
        tests: vec![0, 1],
        ..spec(16, 4096)
    };
    let engine = Iozone::new(params);
    let e = engine
        .run_single(&mut io, Path::new(F), &Quiet)
        .unwrap_err();
    let t = e.downcast_ref::<TestIoError>().expect("an I/O error");
    assert_eq!(t.err.raw_os_error(), Some(libc::ENOSPC), "no space");
    assert_eq!(t.done, 10_000);
    assert!(e.to_string().contains("after 10000 bytes"), "{e}");
    assert_eq!(io.open_count(), 0, "descriptors closed after the failure");
}

#[test]
fn o_direct_misalignment_is_reported_with_the_fix() {
    let mut io = RecordingIo::new();
    io.direct_align = 4096;
    let mut s = spec(2, 6144);
    s.direct = true;
    let e = run(&mut io, &s, 0).unwrap_err();
    assert!(e.to_string().contains("multiple of 4 KiB"), "{e}");
}

#[test]
fn fadvise_and_drop_caches_run_between_tests_untimed() {
    let mut io = RecordingIo::new();
    let params = IozoneParams {
        tests: vec![0, 1, 2],
        fadvise: true,
        drop_caches: true,
        ..spec(4, 4096)
    };
    let passes = Iozone::new(params)
        .run_single(&mut io, Path::new(F), &Quiet)
        .unwrap();
    assert_eq!(passes.len(), 6);
    let adv = count(&io.ops, |o| matches!(o, Op::Fadvise(_)));
    let drops = count(&io.ops, |o| matches!(o, Op::DropCaches));
    assert_eq!((adv, drops), (2, 2), "before tests 1 and 2, not before 0");
    for pass in timed(&io.ops) {
        assert!(pass
            .iter()
            .all(|o| !matches!(o, Op::Fadvise(_) | Op::DropCaches)));
    }
}

#[test]
fn rates_are_iozones_truncated_kib_per_second() {
    assert_eq!(iozone_rate(1000, Duration::from_secs(1)), 0);
    assert_eq!(iozone_rate(3 << 20, Duration::from_secs(2)), 1536);
    // 1 MiB in 3 s = 349525.33 B/s -> 349525 -> 341 KiB/s (341.33 truncated).
    assert_eq!(iozone_rate(1 << 20, Duration::from_secs(3)), 341);
    let m = Iozone::metrics(&[PassResult {
        test: Test::RandomWrite,
        bytes: 1 << 20,
        elapsed: Duration::from_secs(3),
    }]);
    assert_eq!(m[0].key(), "random_write.throughput");
    assert_eq!(m[0].value, 341.0);
    assert_eq!(m[0].unit, crate::metric::Unit::KiBPerSec);
    assert_eq!(m[1].key(), "random_write.elapsed");
}
