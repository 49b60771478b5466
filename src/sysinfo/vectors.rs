//! Does each thread keep its own vector registers across context switches? Several threads of
//! one process fill every wide register they have (AVX-512: zmm0–zmm31 and the mask registers
//! k1–k7; AVX: ymm0–ymm15; otherwise xmm0–xmm15) with a pattern of their own, yield the CPU
//! thousands of times with the registers live, then read every register back.
//!
//! On a real kernel this always holds. In a User-mode Linux guest it holds only when UML
//! moves each guest thread's whole XSAVE area between threads (doc/guest.md): a lost or
//! shared component shows up here as another thread's pattern, or a zero, in a register.
//! `fslab doctor` runs it inside the guest; the guest test requires it.

use std::sync::{Arc, Barrier};

/// The widest registers this CPU offers a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Width {
    /// zmm0–zmm31 (512 bits) and k1–k7.
    Avx512,
    /// ymm0–ymm15 (256 bits).
    Avx,
    /// xmm0–xmm15 (128 bits).
    Sse,
}

impl Width {
    /// The widest this CPU has.
    pub fn detect() -> Width {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Width::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx") {
                return Width::Avx;
            }
        }
        Width::Sse
    }

    /// `AVX-512 (zmm0–31, k1–7)` and the like.
    pub fn describe(self) -> &'static str {
        match self {
            Width::Avx512 => "AVX-512 (zmm0–31, k1–7)",
            Width::Avx => "AVX (ymm0–15)",
            Width::Sse => "SSE (xmm0–15)",
        }
    }

    /// The registers of this width: how many, their 64-bit lanes each, their name.
    fn registers(self) -> (usize, usize, &'static str) {
        match self {
            Width::Avx512 => (32, 8, "zmm"),
            Width::Avx => (16, 4, "ymm"),
            Width::Sse => (16, 2, "xmm"),
        }
    }

    /// Bytes read back per thread: every register of this width, then the mask registers.
    fn words(self) -> usize {
        let (regs, lanes, _) = self.registers();
        regs * lanes + if self == Width::Avx512 { 7 } else { 0 }
    }
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VectorCheck {
    /// The registers filled.
    pub width: Width,
    /// Threads that ran at once.
    pub threads: usize,
    /// Yields per thread with the registers live.
    pub switches: u32,
    /// Registers that did not hold their thread's pattern, as `thread T: REG = VALUE
    /// (expected VALUE)`; empty when every register held.
    pub lost: Vec<String>,
}

impl VectorCheck {
    /// Whether every thread read back exactly its own pattern.
    pub fn kept(&self) -> bool {
        self.lost.is_empty()
    }
}

/// The 64-bit word thread `t` puts in register `r` (never zero, distinct per thread and
/// register).
fn pattern(seed: u64, t: usize, r: usize) -> u64 {
    let x = seed ^ ((t as u64) << 40) ^ ((r as u64) << 8) ^ 0x5a5a_0000_0000_00a5;
    x.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// Run `threads` threads that each hold their own pattern in every register through
/// `switches` yields, and compare what they read back.
pub fn check(threads: usize, switches: u32) -> VectorCheck {
    let width = Width::detect();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x1234_5678);
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let pats: Vec<u64> = (0..32).map(|r| pattern(seed, t, r)).collect();
                let mut out = vec![0u64; width.words()];
                barrier.wait();
                hold(width, &pats, switches, &mut out);
                (pats, out)
            })
        })
        .collect();
    let mut lost = Vec::new();
    for (t, h) in handles.into_iter().enumerate() {
        let Ok((pats, out)) = h.join() else {
            lost.push(format!("thread {t}: panicked"));
            continue;
        };
        lost.extend(compare(width, t, &pats, &out));
    }
    VectorCheck {
        width,
        threads,
        switches,
        lost,
    }
}

/// The registers whose words differ from the thread's patterns.
fn compare(width: Width, t: usize, pats: &[u64], out: &[u64]) -> Vec<String> {
    let (regs, lanes, name) = width.registers();
    let mut lost = Vec::new();
    for r in 0..regs {
        let got = &out[r * lanes..(r + 1) * lanes];
        if let Some(bad) = got.iter().find(|w| **w != pats[r]) {
            lost.push(format!(
                "thread {t}: {name}{r} holds {bad:#018x} (expected {:#018x})",
                pats[r]
            ));
        }
    }
    if width == Width::Avx512 {
        for k in 1..=7 {
            let want = pats[k] & 0xffff;
            let got = out[regs * lanes + k - 1];
            if got != want {
                lost.push(format!(
                    "thread {t}: k{k} holds {got:#06x} (expected {want:#06x})"
                ));
            }
        }
    }
    lost
}

/// Fill the registers, yield `switches` times, read them back into `out`.
fn hold(width: Width, pats: &[u64], switches: u32, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: each variant runs only where `Width::detect` found its instructions; the
    // assembly reads `pats` (32 words) and writes `out` (sized by `Width::words`), and
    // declares every register it changes.
    unsafe {
        match width {
            Width::Avx512 => x86::hold_avx512(pats.as_ptr(), switches, out.as_mut_ptr()),
            Width::Avx => x86::hold_avx(pats.as_ptr(), switches, out.as_mut_ptr()),
            Width::Sse => x86::hold_sse(pats.as_ptr(), switches, out.as_mut_ptr()),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (width, switches);
        out.iter_mut()
            .zip(pats.iter().cycle())
            .for_each(|(o, p)| *o = *p);
    }
}

/// The register work, one `asm!` block per width so that no compiler-generated code runs
/// between filling and reading back: only the `sched_yield` system calls do.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;

    /// `sched_yield(2)`.
    const SYS_SCHED_YIELD: u64 = 24;

    /// One width's register work: `load` fills the registers from `{p}`, the `sched_yield`
    /// loop runs `{n}` times, `store` writes them to `{o}`; `regs` are the vector and mask
    /// registers it changes (besides rax, rcx and r11, which the system call clobbers). The
    /// instructions are `op!`'s `load` and `store` for each vector register of `numbers`, then
    /// its `k_load` and `k_store` for each mask register of `masks`.
    macro_rules! hold_fn {
        ($(#[$attr:meta])* $name:ident; numbers $($r:literal)+; load $load:ident;
         store $store:ident; $(masks $($k:literal)+;)? regs $($reg:tt),+;) => {
            $(#[$attr])*
            pub unsafe fn $name(pats: *const u64, switches: u32, out: *mut u64) {
                asm!(
                    $(op!($load $r),)+
                    $($(op!(k_load $k),)+)?
                    "2:",
                    "test {n:e}, {n:e}",
                    "jz 3f",
                    "mov eax, {yield_nr}",
                    "syscall",
                    "dec {n:e}",
                    "jmp 2b",
                    "3:",
                    $(op!($store $r),)+
                    $($(op!(k_store $k),)+)?
                    p = in(reg) pats,
                    o = in(reg) out,
                    n = inout(reg) switches => _,
                    yield_nr = const SYS_SCHED_YIELD,
                    out("rax") _, out("rcx") _, out("r11") _,
                    $(out($reg) _,)+
                    options(nostack),
                );
            }
        };
    }

    /// The instructions for register number `r` (a template string): each vector register
    /// gets word `r` of the patterns in every lane and is stored at its width times `r`; mask
    /// register k`r` gets the low 16 bits of word `r` and is stored, a word each from k1 on,
    /// after the 32 zmm registers (2048 bytes).
    macro_rules! op {
        (zmm_load $r:literal) => {
            concat!("vpbroadcastq zmm", $r, ", [{p} + 8*", $r, "]")
        };
        (zmm_store $r:literal) => {
            concat!("vmovdqu64 [{o} + 64*", $r, "], zmm", $r)
        };
        (k_load $r:literal) => {
            concat!("kmovw k", $r, ", [{p} + 8*", $r, "]")
        };
        (k_store $r:literal) => {
            concat!("kmovw eax, k", $r, "\n", op!(k_at $r))
        };
        (k_at $r:literal) => {
            concat!("mov [{o} + 2048 + 8*(", $r, "-1)], rax")
        };
        (ymm_load $r:literal) => {
            concat!("vbroadcastsd ymm", $r, ", [{p} + 8*", $r, "]")
        };
        (ymm_store $r:literal) => {
            concat!("vmovdqu [{o} + 32*", $r, "], ymm", $r)
        };
        // SSE2 has no broadcast: the word goes to the low lane, then to both.
        (xmm_load $r:literal) => {
            concat!("movq xmm", $r, ", [{p} + 8*", $r, "]\n", op!(xmm_both $r))
        };
        (xmm_both $r:literal) => {
            concat!("punpcklqdq xmm", $r, ", xmm", $r)
        };
        (xmm_store $r:literal) => {
            concat!("movdqu [{o} + 16*", $r, "], xmm", $r)
        };
    }

    hold_fn! {
        #[target_feature(enable = "avx512f")]
        hold_avx512;
        numbers 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
            16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31;
        load zmm_load;
        store zmm_store;
        masks 1 2 3 4 5 6 7;
        regs
            "zmm0", "zmm1", "zmm2", "zmm3",
            "zmm4", "zmm5", "zmm6", "zmm7",
            "zmm8", "zmm9", "zmm10", "zmm11",
            "zmm12", "zmm13", "zmm14", "zmm15",
            "zmm16", "zmm17", "zmm18", "zmm19",
            "zmm20", "zmm21", "zmm22", "zmm23",
            "zmm24", "zmm25", "zmm26", "zmm27",
            "zmm28", "zmm29", "zmm30", "zmm31",
            "k1", "k2", "k3", "k4",
            "k5", "k6", "k7";
    }

    hold_fn! {
        #[target_feature(enable = "avx")]
        hold_avx;
        numbers 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15;
        load ymm_load;
        store ymm_store;
        regs
            "ymm0", "ymm1", "ymm2", "ymm3",
            "ymm4", "ymm5", "ymm6", "ymm7",
            "ymm8", "ymm9", "ymm10", "ymm11",
            "ymm12", "ymm13", "ymm14", "ymm15";
    }

    hold_fn! {
        /// SSE2 only: every x86-64 CPU has it.
        hold_sse;
        numbers 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15;
        load xmm_load;
        store xmm_store;
        regs
            "xmm0", "xmm1", "xmm2", "xmm3",
            "xmm4", "xmm5", "xmm6", "xmm7",
            "xmm8", "xmm9", "xmm10", "xmm11",
            "xmm12", "xmm13", "xmm14", "xmm15";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_on_this_kernel_keep_their_registers() {
        let c = check(4, 200);
        assert!(c.kept(), "{:?}", c.lost);
        assert_eq!(c.threads, 4);
    }

    #[test]
    fn a_register_holding_another_threads_pattern_is_reported() {
        for width in [Width::Avx512, Width::Avx, Width::Sse] {
            let pats: Vec<u64> = (0..32).map(|r| pattern(7, 0, r)).collect();
            let other: Vec<u64> = (0..32).map(|r| pattern(7, 1, r)).collect();
            let (regs, lanes, _) = width.registers();
            let mut out: Vec<u64> = (0..regs).flat_map(|r| vec![pats[r]; lanes]).collect();
            out.extend((1..=7).map(|k| pats[k] & 0xffff));
            out.truncate(width.words());
            assert!(compare(width, 0, &pats, &out).is_empty(), "{width:?}");
            // The upper lane of the last register holds the other thread's word.
            out[regs * lanes - 1] = other[regs - 1];
            let lost = compare(width, 0, &pats, &out);
            assert_eq!(lost.len(), 1, "{lost:?}");
            assert!(lost[0].contains(&format!("mm{}", regs - 1)), "{lost:?}");
        }
    }
}
