//! Parsing and printing of sizes and durations as users type them (`4k`, `1G`, `90s`, `2h`).
//!
//! Sizes are binary (k = 1024) as in IOzone, mkfs and losetup; a bare number is bytes unless
//! the caller gives a different default multiplier (IOzone's `-s 512` means 512 KiB).
//!
//! Both are range-checked here, so every value a parser returns can be added to an `Instant`,
//! summed a few times or multiplied by a small count without overflowing: durations go up
//! to [`MAX_DURATION`] (a year), sizes up to [`MAX_SIZE`] (1 EiB, an eighth of the kernel's
//! signed 64-bit file offsets).

use std::time::Duration;

/// The longest duration accepted anywhere (a run time, warmup, budget, pause): 365 days.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 86_400);
/// The largest size accepted anywhere (a device, file, journal, record): 1 EiB.
pub const MAX_SIZE: u64 = 1 << 60;

/// The range of durations, for messages.
pub const DURATION_RANGE: &str = "0 to 365d (one year)";
/// The range of sizes, for messages.
pub const SIZE_RANGE: &str = "0 to 1048576T (1 EiB)";

/// Parse a size such as `512`, `4k`, `16M`, `1g`, `2T` (binary multiples; optional `B`/`iB`).
/// `bare` is the multiplier for a number without a suffix (1 for bytes, 1024 for KiB).
pub fn parse_size_with(s: &str, bare: u64) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty size".into());
    }
    let lower = t.to_ascii_lowercase();
    let bad = || format!("'{s}' is not a size; use a number with an optional k, m, g or t suffix");
    // "16MiB", "16MB" and "16M" mean the same; "512B" is explicitly bytes.
    // A space may separate the number and its unit, as fslab prints sizes ("16 MiB").
    let (stripped, explicit_bytes) = if let Some(r) = lower.strip_suffix("ib") {
        (r.trim_end(), false)
    } else if let Some(r) = lower.strip_suffix('b') {
        let r = r.trim_end();
        (r, r.ends_with(|c: char| c.is_ascii_digit()))
    } else {
        (lower.as_str(), false)
    };
    let (num, mult) = match stripped.chars().last().map(|c| (c, "kmgt".find(c))) {
        // k, m, g, t: 2^10, 2^20, 2^30, 2^40.
        Some((_, Some(i))) => (&stripped[..stripped.len() - 1], 1u64 << (10 * (i + 1))),
        Some((c, None)) if c.is_ascii_digit() => (stripped, if explicit_bytes { 1 } else { bare }),
        _ => return Err(bad()),
    };
    let n: u64 = num.trim().parse().map_err(|e: std::num::ParseIntError| {
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            out_of_range_size(s)
        } else {
            bad()
        }
    })?;
    n.checked_mul(mult)
        .filter(|&b| b <= MAX_SIZE)
        .ok_or_else(|| out_of_range_size(s))
}

fn out_of_range_size(s: &str) -> String {
    format!("size '{s}' is out of range; use {SIZE_RANGE}")
}

/// Parse a size where a bare number means bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    parse_size_with(s, 1)
}

/// Parse a duration such as `90`, `90s`, `5m`, `2h`, `1h30m`, `500ms`. A bare number is seconds.
/// At most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let err = || format!("'{s}' is not a duration; use e.g. 90s, 5m, 2h or 1h30m");
    if t.is_empty() {
        return Err(err());
    }
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_nan() || secs < 0.0 {
            return Err(err());
        }
        return in_range(secs, s);
    }
    let mut total = 0.0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let idx = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        if idx == 0 {
            return Err(err());
        }
        let n: f64 = rest[..idx].parse().map_err(|_| err())?;
        let after = &rest[idx..];
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let unit = &after[..unit_len];
        let mult = match unit {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return Err(err()),
        };
        total += n * mult;
        rest = &after[unit_len..];
    }
    in_range(total, s)
}

/// `secs` as a duration when it is within [`MAX_DURATION`] (NaN and infinity are not).
fn in_range(secs: f64, s: &str) -> Result<Duration, String> {
    if (0.0..=MAX_DURATION.as_secs_f64()).contains(&secs) {
        Ok(Duration::from_secs_f64(secs))
    } else {
        Err(format!(
            "duration '{s}' is out of range; use {DURATION_RANGE}"
        ))
    }
}

/// Check a number of seconds given as a plain number (`--min-phase`, `--phase-pause`):
/// finite, from 0 to [`MAX_DURATION`]. The message names `flag`.
pub fn check_seconds(v: f64, flag: &str) -> Result<(), String> {
    if (0.0..=MAX_DURATION.as_secs_f64()).contains(&v) {
        Ok(())
    } else {
        // Huge values in exponent form: 1e300, not three hundred digits.
        let shown = if v.abs() >= 1e15 {
            format!("{v:e}")
        } else {
            v.to_string()
        };
        Err(format!(
            "{flag} {shown}: out of range; give seconds from 0 to {} (365 days)",
            MAX_DURATION.as_secs()
        ))
    }
}

/// Seconds as a duration for printing an estimate: negative and NaN as 0, beyond
/// `Duration::MAX` as `Duration::MAX` (never a panic).
pub fn duration_from_secs_saturating(secs: f64) -> Duration {
    // `f64::max` takes 0 over NaN; only a value too large for a `Duration` is an error then.
    Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(Duration::MAX)
}

/// Print bytes with a binary suffix, e.g. `1.5 GiB`.
pub fn fmt_bytes(b: u64) -> String {
    let s = Scale::pick(BYTES, b as f64);
    if s.divisor == 1.0 {
        format!("{b} B")
    } else {
        format!("{:.1} {}", b as f64 / s.divisor, s.label)
    }
}

/// Print a duration compactly: `850 ms`, `12.3 s`, `4m05s`, `2h03m`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s as u64) % 60)
    } else {
        format!("{}h{:02}m", (s / 3600.0) as u64, ((s as u64) / 60) % 60)
    }
}

/// Format a number with a sensible number of significant digits for tables.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        // Four significant digits without an exponent: 0.001801, not 1.801e-3.
        let decimals = (3 - a.log10().floor() as i32).clamp(2, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// A unit ladder: each step is (`divisor`, `label`), in increasing order; a value at least
/// `divisor` (in the ladder's base unit) prints as `value / divisor` in `label`.
pub type Ladder = &'static [(f64, &'static str)];

/// Seconds: ns, µs, ms, s (longer times stay in seconds, as every tool prints them).
pub const SECONDS: Ladder = &[(1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1.0, "s")];
/// Milliseconds (latencies): ns, µs, ms, s.
pub const MILLIS: Ladder = &[(1e-6, "ns"), (1e-3, "µs"), (1.0, "ms"), (1e3, "s")];
/// Bytes, binary multiples.
pub const BYTES: Ladder = &[
    (1.0, "B"),
    (1024.0, "KiB"),
    (1048576.0, "MiB"),
    (1073741824.0, "GiB"),
    (1099511627776.0, "TiB"),
    (1125899906842624.0, "PiB"),
];
/// KiB/s (IOzone, fdtree), binary multiples.
pub const KIB_PER_SEC: Ladder = &[
    (1.0, "KiB/s"),
    (1024.0, "MiB/s"),
    (1048576.0, "GiB/s"),
    (1073741824.0, "TiB/s"),
];
/// MB/s (dbench), decimal multiples.
pub const MB_PER_SEC: Ladder = &[(1e-3, "kB/s"), (1.0, "MB/s"), (1e3, "GB/s"), (1e6, "TB/s")];

/// How a value is printed for people: the step of a [`Ladder`] chosen for a magnitude, and
/// whether values are whole numbers (counts) that print without decimals.
///
/// Machine formats (CSV, JSON, the store) keep raw numbers in base units; the human formats
/// (terminal, Markdown, HTML, charts) print through a `Scale`. One scale is chosen for the
/// values that are compared with each other (a column of a table, the axis of a chart), so
/// they share a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Base units per printed unit.
    pub divisor: f64,
    /// The printed unit (`ms`, `GiB/s`); empty for a plain count.
    pub label: &'static str,
    /// Whole values print without decimals (`160`, not `160.0`).
    pub whole: bool,
}

impl Scale {
    /// The largest step of `ladder` not above `magnitude` (its absolute value); the first
    /// step for zero, values below every step, NaN and infinities.
    pub fn pick(ladder: Ladder, magnitude: f64) -> Scale {
        let m = magnitude.abs();
        let (divisor, label) = ladder
            .iter()
            .rev()
            .find(|(d, _)| m.is_finite() && m >= *d)
            .or_else(|| {
                // Between zero and the first step, or beyond: the unit that fits best.
                if m.is_finite() && m > 0.0 {
                    ladder.first()
                } else {
                    ladder.iter().find(|(d, _)| *d == 1.0).or(ladder.first())
                }
            })
            .copied()
            .unwrap_or((1.0, ""));
        Scale {
            divisor,
            label,
            whole: false,
        }
    }

    /// A fixed unit with no scaling (`files/s`), or a plain count when `label` is empty.
    pub const fn fixed(label: &'static str) -> Scale {
        Scale {
            divisor: 1.0,
            label,
            whole: false,
        }
    }

    /// The same scale, printing whole values without decimals.
    pub const fn whole(mut self) -> Scale {
        self.whole = true;
        self
    }

    /// `v` in this scale, without the unit: `1.23`, `160`.
    pub fn num(&self, v: f64) -> String {
        let x = v / self.divisor;
        if self.whole && x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{x:.0}")
        } else {
            fmt_num(x)
        }
    }

    /// `v` in this scale with its unit: `1.23 ms`, `160`.
    pub fn fmt(&self, v: f64) -> String {
        if self.label.is_empty() {
            self.num(v)
        } else {
            format!("{} {}", self.num(v), self.label)
        }
    }

    /// The unit in parentheses for a header or an axis (` (ms)`), empty for a plain count.
    pub fn suffix(&self) -> String {
        if self.label.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.label)
        }
    }
}

/// The median of the absolute finite values (0 when there are none): the magnitude a
/// [`Scale`] is chosen for, so one outlier does not push a column into another unit.
pub fn typical_magnitude(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values
        .into_iter()
        .filter(|x| x.is_finite())
        .map(f64::abs)
        .collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A size exactly as people write it, in the largest binary unit that divides it: `16 MiB`,
/// `64 KiB`, `1536 MiB`, `512 B`. [`parse_size`] reads it back to the same number of bytes.
pub fn fmt_size(b: u64) -> String {
    let (d, label) = BYTES
        .iter()
        .rev()
        .find(|(d, _)| b > 0 && b % (*d as u64) == 0)
        .copied()
        .unwrap_or((1.0, "B"));
    format!("{} {label}", b / d as u64)
}

/// A stored time (`2026-11-26T21:12:59.139Z`) to the second, without the `T` and the `Z`;
/// only its time of day when `same_day` is the same date.
pub fn short_time(at: &str, same_day: Option<&str>) -> String {
    let t: String = at.replace('T', " ").chars().take(19).collect();
    match (same_day, t.split_once(' ')) {
        (Some(day), Some((date, time))) if day.starts_with(date) => time.to_string(),
        _ => t,
    }
}

/// The current time as RFC 3339 UTC with millisecond precision (how every stored time is
/// written).
pub fn timestamp_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("16M").unwrap(), 16 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("2GB").unwrap(), 2 << 30);
        assert_eq!(parse_size_with("512", 1024).unwrap(), 512 * 1024);
        assert_eq!(parse_size_with("512b", 1024).unwrap(), 512);
        assert!(parse_size("").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("4q").is_err());
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("99999999999999t")
            .unwrap_err()
            .contains("out of range; use 0 to 1048576T"));
        assert_eq!(parse_size("1048576T").unwrap(), MAX_SIZE);
        assert!(parse_size("1048577T").is_err());
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_size_with(&u64::MAX.to_string(), 1024).is_err());
    }

    #[test]
    fn durations_beyond_a_year_are_refused() {
        assert_eq!(parse_duration("365d").unwrap(), MAX_DURATION);
        for s in [
            "18446744073709551615",
            "18446744073709551615s",
            "9223372036854775807",
            "366d",
            "1e300",
            "inf",
            "8760h1s",
        ] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains("out of range; use 0 to 365d"), "{s}: {e}");
        }
        assert!(parse_duration("NaN")
            .unwrap_err()
            .contains("not a duration"));
        assert!(check_seconds(2.0, "--phase-pause").is_ok());
        assert!(check_seconds(f64::INFINITY, "--phase-pause")
            .unwrap_err()
            .contains("--phase-pause inf: out of range"));
        assert!(check_seconds(f64::NAN, "--min-phase").is_err());
        assert!(check_seconds(1e300, "--phase-pause")
            .unwrap_err()
            .starts_with("--phase-pause 1e300: out of range"));
        assert!(check_seconds(-1.0, "--min-phase").is_err());
        assert_eq!(duration_from_secs_saturating(1e300), Duration::MAX);
        assert_eq!(duration_from_secs_saturating(f64::NAN), Duration::ZERO);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-3").is_err());
        assert!(parse_duration("5x").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_bytes(100), "100 B");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert_eq!(fmt_bytes(1 << 30), "1.0 GiB");
        assert_eq!(fmt_duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(fmt_duration(Duration::from_secs(245)), "4m05s");
        assert_eq!(fmt_num(12345.6), "12346");
        assert_eq!(fmt_num(1.23456), "1.23");
        assert_eq!(fmt_num(0.0018012), "0.001801");
        assert_eq!(fmt_num(0.25), "0.2500");
    }

    #[test]
    fn scales_pick_the_unit_that_fits() {
        assert_eq!(Scale::pick(SECONDS, 0.0009553).fmt(0.0009553), "955.3 µs");
        assert_eq!(Scale::pick(SECONDS, 0.0123).fmt(0.0123), "12.30 ms");
        assert_eq!(Scale::pick(SECONDS, 2.5).fmt(2.5), "2.50 s");
        assert_eq!(Scale::pick(SECONDS, 4000.0).fmt(4000.0), "4000 s");
        assert_eq!(Scale::pick(SECONDS, 3e-8).fmt(3e-8), "30.00 ns");
        assert_eq!(Scale::pick(MILLIS, 0.052).fmt(0.052), "52.00 µs");
        assert_eq!(
            Scale::pick(KIB_PER_SEC, 15_000_000.0).fmt(15_000_000.0),
            "14.31 GiB/s"
        );
        assert_eq!(Scale::pick(KIB_PER_SEC, 512.0).fmt(512.0), "512.0 KiB/s");
        assert_eq!(Scale::pick(MB_PER_SEC, 1830.0).fmt(1830.0), "1.83 GB/s");
        // One scale for a column: a small value keeps the column's unit.
        let col = Scale::pick(SECONDS, typical_magnitude([0.5, 0.7, 12.0]));
        assert_eq!(col.fmt(12.0), "12000 ms");
        // Zero and non-finite magnitudes take the base unit.
        assert_eq!(Scale::pick(SECONDS, 0.0).label, "s");
        assert_eq!(Scale::pick(KIB_PER_SEC, f64::NAN).label, "KiB/s");
        assert_eq!(Scale::pick(MB_PER_SEC, 0.0).label, "MB/s");
        // Counts: whole numbers without decimals, fractions still shown.
        assert_eq!(Scale::fixed("").whole().fmt(160.0), "160");
        assert_eq!(Scale::fixed("").whole().fmt(160.5), "160.5");
        assert_eq!(Scale::fixed("files/s").fmt(1234.4), "1234 files/s");
        assert_eq!(Scale::fixed("").suffix(), "");
        assert_eq!(Scale::pick(SECONDS, 0.01).suffix(), " (ms)");
        assert_eq!(typical_magnitude([f64::NAN]), 0.0);
    }

    #[test]
    fn sizes_print_as_people_write_them_and_parse_back() {
        for (b, s) in [
            (16u64 << 20, "16 MiB"),
            (64 << 10, "64 KiB"),
            (512, "512 B"),
            (3 << 29, "1536 MiB"),
            (0, "0 B"),
            (1000, "1000 B"),
            (1 << 40, "1 TiB"),
        ] {
            assert_eq!(fmt_size(b), s);
        }
        for b in [16u64 << 20, 64 << 10, 512, 1 << 40, 4096, 3 << 29, 1000] {
            assert_eq!(parse_size(&fmt_size(b)).unwrap(), b, "{}", fmt_size(b));
        }
    }
}
