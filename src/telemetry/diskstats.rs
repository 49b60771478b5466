//! `/proc/diskstats`: per block device (and partition) request counts, sectors, merges and
//! times, following Documentation/admin-guide/iostats.rst and `diskstats_show` in
//! block/genhd.c.
//!
//! A line is `major minor name` and then 11 fields (kernels before 4.18), 15 (4.18 adds
//! discards: ios, merges, sectors, ms) or 17 (5.5 adds flushes: ios, ms) — 14, 18 or 20
//! whitespace-separated tokens. Sectors are always 512 bytes, whatever the device's logical
//! block size. Counts are `unsigned long`; every millisecond field, `io_ticks` included, is
//! printed as `unsigned int` and wraps at 2^32 ms.

use super::counter::{step, Step, ULONG_BITS};

/// Bytes per diskstats sector (fixed by the kernel's interface, not the device).
pub const SECTOR_BYTES: u64 = 512;

/// One line of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiskStats {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// The kernel's name for it (`vda1`, `loop3`, `dm-0`, `nvme0n1p2`).
    pub name: String,
    /// Reads completed.
    pub read_ios: u64,
    /// Adjacent reads merged into one request.
    pub read_merges: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds spent on reads (sum over requests).
    pub read_ms: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Adjacent writes merged.
    pub write_merges: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent on writes (sum over requests).
    pub write_ms: u64,
    /// Requests in flight at the moment of reading (not cumulative).
    pub in_flight: u64,
    /// Milliseconds the device had at least one request in flight (`io_ticks`, busy time).
    pub io_ms: u64,
    /// Weighted milliseconds: time in flight summed over requests (`time_in_queue`).
    pub queue_ms: u64,
    /// Discards: completed, merged, sectors, ms (4.18 and later).
    pub discard: Option<[u64; 4]>,
    /// Flushes: completed, ms (5.5 and later).
    pub flush: Option<[u64; 2]>,
}

/// Parse one line; `None` for lines that are not a diskstats line with at least 11 fields.
pub fn parse_line(line: &str) -> Option<DiskStats> {
    let mut t = line.split_whitespace();
    let major = t.next()?.parse().ok()?;
    let minor = t.next()?.parse().ok()?;
    let name = t.next()?.to_string();
    let v: Vec<u64> = t.map(|x| x.parse::<u64>()).collect::<Result<_, _>>().ok()?;
    if v.len() < 11 {
        return None;
    }
    Some(DiskStats {
        major,
        minor,
        name,
        read_ios: v[0],
        read_merges: v[1],
        read_sectors: v[2],
        read_ms: v[3],
        write_ios: v[4],
        write_merges: v[5],
        write_sectors: v[6],
        write_ms: v[7],
        in_flight: v[8],
        io_ms: v[9],
        queue_ms: v[10],
        discard: (v.len() >= 15).then(|| [v[11], v[12], v[13], v[14]]),
        flush: (v.len() >= 17).then(|| [v[15], v[16]]),
    })
}

/// The lines of the devices `wanted` (by major:minor), in the order of `wanted`; a device
/// that is not in the text (removed, not yet created) is `None`. Other lines are skipped
/// without being parsed.
pub fn parse_wanted(text: &str, wanted: &[(u32, u32)]) -> Vec<Option<DiskStats>> {
    let mut out = vec![None; wanted.len()];
    for line in text.lines() {
        let mut t = line.split_whitespace();
        let (Some(ma), Some(mi)) = (t.next(), t.next()) else {
            continue;
        };
        let (Ok(ma), Ok(mi)) = (ma.parse::<u32>(), mi.parse::<u32>()) else {
            continue;
        };
        for (i, w) in wanted.iter().enumerate() {
            if *w == (ma, mi) && out[i].is_none() {
                out[i] = parse_line(line);
            }
        }
    }
    out
}

/// What one device did between two reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiskDelta {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Milliseconds spent on reads.
    pub read_ms: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Milliseconds spent on writes.
    pub write_ms: u64,
    /// Busy milliseconds (at least one request in flight).
    pub io_ms: u64,
    /// Weighted milliseconds in flight.
    pub queue_ms: u64,
    /// Bytes discarded, when the kernel reports discards.
    pub discard_bytes: Option<u64>,
    /// Flush requests completed, when the kernel reports flushes.
    pub flush_ios: Option<u64>,
    /// The counters restarted between the reads (the device was removed and made again,
    /// e.g. a loop or dm device of the same number): the values are those counted since the
    /// restart, a lower bound of the interval's I/O.
    pub restarted: bool,
}

/// The change from `start` to `end` of one device.
///
/// A device absent at the start and present at the end appeared during the interval:
/// everything it counted happened inside it, so the end values are the delta (`restarted`).
/// The same holds when counts went backwards (the device was re-created). Millisecond fields
/// that went backwards while the counts did not wrapped at 2^32.
pub fn delta(start: Option<&DiskStats>, end: &DiskStats) -> DiskDelta {
    let zero = DiskStats {
        major: end.major,
        minor: end.minor,
        name: end.name.clone(),
        discard: end.discard.map(|_| [0; 4]),
        flush: end.flush.map(|_| [0; 2]),
        ..Default::default()
    };
    let (s, mut restarted) = match start {
        Some(s) if (s.major, s.minor) == (end.major, end.minor) => (s, false),
        _ => (&zero, true),
    };
    let counts = [
        (s.read_ios, end.read_ios),
        (s.read_merges, end.read_merges),
        (s.read_sectors, end.read_sectors),
        (s.write_ios, end.write_ios),
        (s.write_merges, end.write_merges),
        (s.write_sectors, end.write_sectors),
    ];
    let times = [
        (s.read_ms, end.read_ms),
        (s.write_ms, end.write_ms),
        (s.io_ms, end.io_ms),
        (s.queue_ms, end.queue_ms),
    ];
    let resets = counts
        .iter()
        .any(|&(a, b)| step(a, b, ULONG_BITS) == Step::Reset)
        || times.iter().any(|&(a, b)| step(a, b, 32) == Step::Reset);
    let s = if resets && !restarted {
        restarted = true;
        &zero
    } else {
        s
    };
    let c = |a: u64, b: u64| step(a, b, ULONG_BITS).increase().unwrap_or(b);
    let ms = |a: u64, b: u64| step(a, b, 32).increase().unwrap_or(b);
    DiskDelta {
        read_ios: c(s.read_ios, end.read_ios),
        read_merges: c(s.read_merges, end.read_merges),
        read_bytes: c(s.read_sectors, end.read_sectors).saturating_mul(SECTOR_BYTES),
        read_ms: ms(s.read_ms, end.read_ms),
        write_ios: c(s.write_ios, end.write_ios),
        write_merges: c(s.write_merges, end.write_merges),
        write_bytes: c(s.write_sectors, end.write_sectors).saturating_mul(SECTOR_BYTES),
        write_ms: ms(s.write_ms, end.write_ms),
        io_ms: ms(s.io_ms, end.io_ms),
        queue_ms: ms(s.queue_ms, end.queue_ms),
        discard_bytes: (s.discard.zip(end.discard))
            .map(|(a, b)| c(a[2], b[2]).saturating_mul(SECTOR_BYTES)),
        flush_ios: (s.flush.zip(end.flush)).map(|(a, b)| c(a[0], b[0])),
        restarted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = include_str!("fixtures/diskstats-before");
    const AFTER: &str = include_str!("fixtures/diskstats-after");

    fn line(text: &str, name: &str) -> DiskStats {
        text.lines()
            .filter_map(parse_line)
            .find(|d| d.name == name)
            .unwrap()
    }

    #[test]
    fn parses_every_line_of_a_real_capture() {
        let all: Vec<DiskStats> = AFTER.lines().filter_map(parse_line).collect();
        assert_eq!(all.len(), AFTER.lines().count());
        let vda = line(AFTER, "vda");
        assert_eq!((vda.major, vda.minor), (254, 0));
        assert!(
            vda.discard.is_some() && vda.flush.is_some(),
            "6.x prints 17 fields"
        );
    }

    #[test]
    fn the_captured_data_device_wrote_the_16_mib_file() {
        // capture.sh wrote 16 MiB with fsync plus 200 small files between the two reads;
        // devices.txt says loop0 was the ext4 data device.
        let d = delta(Some(&line(BEFORE, "loop0")), &line(AFTER, "loop0"));
        assert!(!d.restarted);
        assert!(d.write_bytes >= 16 << 20, "{d:?}");
        assert!(d.write_bytes < 24 << 20, "{d:?}");
        assert_eq!(d.write_bytes, (2_157_406 - 2_122_862) * 512);
        assert_eq!(d.write_ios, 7003 - 6977);
        assert_eq!(d.io_ms, 3836 - 3824);
        assert_eq!(d.flush_ios, Some(1815 - 1813));
    }

    #[test]
    fn only_the_wanted_lines_are_returned_in_order() {
        let got = parse_wanted(AFTER, &[(7, 1), (254, 0), (9, 99)]);
        assert_eq!(got[0].as_ref().unwrap().name, "loop1");
        assert_eq!(got[1].as_ref().unwrap().name, "vda");
        assert!(got[2].is_none(), "a device that is not there");
    }

    /// The same real line as older kernels print it: 11 fields (before 4.18), 15 (4.18 to
    /// 5.4), 17 (5.5 and later).
    #[test]
    fn older_kernels_print_fewer_fields() {
        let full = AFTER.lines().find(|l| l.contains(" loop0 ")).unwrap();
        let toks: Vec<&str> = full.split_whitespace().collect();
        assert_eq!(toks.len(), 20);
        for (n, discard, flush) in [(14, false, false), (18, true, false), (20, true, true)] {
            let l = toks[..n].join(" ");
            let d = parse_line(&l).unwrap_or_else(|| panic!("{n} tokens"));
            assert_eq!(d.write_sectors, 2_157_406);
            assert_eq!(d.queue_ms, 7329);
            assert_eq!(d.discard.is_some(), discard, "{n} tokens");
            assert_eq!(d.flush.is_some(), flush, "{n} tokens");
        }
        assert!(parse_line(&toks[..13].join(" ")).is_none());
        assert!(parse_line("   7 0 loop0 1 2 x 4 5 6 7 8 9 10 11").is_none());
        // A 15-token line (one field of a future group) keeps the 11 it can read.
        assert!(parse_line(&toks[..15].join(" ")).unwrap().discard.is_none());
    }

    #[test]
    fn a_device_that_appeared_counts_everything_it_did() {
        let end = line(AFTER, "loop4");
        let d = delta(None, &end);
        assert!(d.restarted);
        assert_eq!(d.write_bytes, end.write_sectors * 512);
    }

    #[test]
    fn a_recreated_device_counts_from_its_restart() {
        let start = line(AFTER, "loop0");
        let mut end = start.clone();
        end.write_ios = 3;
        end.write_sectors = 24;
        end.io_ms = 2;
        let d = delta(Some(&start), &end);
        assert!(d.restarted);
        assert_eq!(d.write_bytes, 24 * 512);
        assert_eq!(d.io_ms, 2);
        assert_eq!(d.read_ios, end.read_ios, "all fields restart together");
    }

    #[test]
    fn millisecond_fields_wrap_at_32_bits() {
        let mut start = line(BEFORE, "vda");
        let mut end = line(AFTER, "vda");
        start.io_ms = u32::MAX as u64 - 99;
        end.io_ms = 400;
        start.queue_ms = u32::MAX as u64;
        end.queue_ms = 9;
        let d = delta(Some(&start), &end);
        assert!(!d.restarted);
        assert_eq!(d.io_ms, 500);
        assert_eq!(d.queue_ms, 10);
        assert_eq!(
            d.write_bytes,
            (end.write_sectors - start.write_sectors) * 512
        );
    }
}
