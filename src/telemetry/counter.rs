//! How a cumulative kernel counter moved between two reads: it advanced, it wrapped at its
//! width, or it was reset (the device or file system behind it was re-created, or its
//! statistics were cleared).
//!
//! Widths follow the kernel's printf formats: `/proc/diskstats` prints request and sector
//! counts as `unsigned long` (64 bits on the 64-bit kernels fslab runs on) and every
//! millisecond field as `unsigned int` (32 bits: they wrap after 49.7 days of accumulated
//! time); XFS prints its per-mount statistics as sums of `__u32` per-CPU counters (32 bits).

/// The number of bits of the kernel's `unsigned long` (request and sector counts). A 64-bit
/// fslab binary runs on a 64-bit kernel; a 32-bit build assumes a 32-bit kernel.
pub(crate) const ULONG_BITS: u32 = usize::BITS;

/// How a counter moved from one read to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// It grew by this much.
    Advanced(u64),
    /// It passed its maximum and started again from zero; it grew by this much in total.
    Wrapped(u64),
    /// It went backwards in a way a wrap cannot explain: whatever it counts was re-created
    /// or cleared, so the earlier read says nothing about the later one.
    Reset,
}

impl Step {
    /// The increase, or `None` after a reset.
    pub(crate) fn increase(self) -> Option<u64> {
        match self {
            Step::Advanced(d) | Step::Wrapped(d) => Some(d),
            Step::Reset => None,
        }
    }
}

/// Classify the move of a `width`-bit counter from `start` to `end`.
///
/// A decrease is a wrap only when both values fit the width and `start` was in the upper
/// half of the range (a counter that wraps between two reads a phase apart was close to its
/// maximum); any other decrease is a reset. For 64-bit counters a decrease is always a
/// reset: at 10^9 increments per second they would take 584 years to wrap.
pub(crate) fn step(start: u64, end: u64, width: u32) -> Step {
    if end >= start {
        return Step::Advanced(end - start);
    }
    if width >= 64 {
        return Step::Reset;
    }
    let modulus = 1u64 << width;
    if start < modulus && end < modulus && start >= modulus / 2 {
        Step::Wrapped(modulus - start + end)
    } else {
        Step::Reset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_advance_wrap_or_reset() {
        for (start, end, width, want, increase) in [
            // Advancing counters give the difference.
            (5, 9, 32, Step::Advanced(4), Some(4)),
            (7, 7, 64, Step::Advanced(0), Some(0)),
            // A 32-bit counter near its top wraps. 4294967290 → 6: 5 steps to 2^32 - 1, one
            // to 0, six more.
            (4_294_967_290, 6, 32, Step::Wrapped(12), Some(12)),
            // A decrease from low values is a reset.
            (1000, 10, 32, Step::Reset, None),
            // A 64-bit counter never wraps.
            (u64::MAX - 1, 3, 64, Step::Reset, None),
            // Values too big for the width are a reset: a "32-bit" field that printed more
            // than 2^32 cannot have wrapped at 2^32.
            (5_000_000_000, 1, 32, Step::Reset, None),
        ] {
            let s = step(start, end, width);
            assert_eq!(s, want, "{start} → {end} at {width} bits");
            assert_eq!(s.increase(), increase, "{start} → {end} at {width} bits");
        }
    }
}
