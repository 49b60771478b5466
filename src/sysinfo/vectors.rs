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
    /// registers it changes (besides rax, rcx and r11, which the system call clobbers).
    macro_rules! hold_fn {
        ($(#[$attr:meta])* $name:ident; load $($load:literal),+; store $($store:literal),+;
         regs $($reg:tt),+;) => {
            $(#[$attr])*
            pub unsafe fn $name(pats: *const u64, switches: u32, out: *mut u64) {
                asm!(
                    $($load,)+
                    "2:",
                    "test {n:e}, {n:e}",
                    "jz 3f",
                    "mov eax, {yield_nr}",
                    "syscall",
                    "dec {n:e}",
                    "jmp 2b",
                    "3:",
                    $($store,)+
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

    hold_fn! {
        #[target_feature(enable = "avx512f")]
        hold_avx512;
        load
            "vpbroadcastq zmm0, [{p} + 0]",   "vpbroadcastq zmm1, [{p} + 8]",
            "vpbroadcastq zmm2, [{p} + 16]",  "vpbroadcastq zmm3, [{p} + 24]",
            "vpbroadcastq zmm4, [{p} + 32]",  "vpbroadcastq zmm5, [{p} + 40]",
            "vpbroadcastq zmm6, [{p} + 48]",  "vpbroadcastq zmm7, [{p} + 56]",
            "vpbroadcastq zmm8, [{p} + 64]",  "vpbroadcastq zmm9, [{p} + 72]",
            "vpbroadcastq zmm10, [{p} + 80]", "vpbroadcastq zmm11, [{p} + 88]",
            "vpbroadcastq zmm12, [{p} + 96]", "vpbroadcastq zmm13, [{p} + 104]",
            "vpbroadcastq zmm14, [{p} + 112]", "vpbroadcastq zmm15, [{p} + 120]",
            "vpbroadcastq zmm16, [{p} + 128]", "vpbroadcastq zmm17, [{p} + 136]",
            "vpbroadcastq zmm18, [{p} + 144]", "vpbroadcastq zmm19, [{p} + 152]",
            "vpbroadcastq zmm20, [{p} + 160]", "vpbroadcastq zmm21, [{p} + 168]",
            "vpbroadcastq zmm22, [{p} + 176]", "vpbroadcastq zmm23, [{p} + 184]",
            "vpbroadcastq zmm24, [{p} + 192]", "vpbroadcastq zmm25, [{p} + 200]",
            "vpbroadcastq zmm26, [{p} + 208]", "vpbroadcastq zmm27, [{p} + 216]",
            "vpbroadcastq zmm28, [{p} + 224]", "vpbroadcastq zmm29, [{p} + 232]",
            "vpbroadcastq zmm30, [{p} + 240]", "vpbroadcastq zmm31, [{p} + 248]",
            "kmovw k1, [{p} + 8]",  "kmovw k2, [{p} + 16]", "kmovw k3, [{p} + 24]",
            "kmovw k4, [{p} + 32]", "kmovw k5, [{p} + 40]", "kmovw k6, [{p} + 48]",
            "kmovw k7, [{p} + 56]";
        store
            "vmovdqu64 [{o} + 0], zmm0",     "vmovdqu64 [{o} + 64], zmm1",
            "vmovdqu64 [{o} + 128], zmm2",   "vmovdqu64 [{o} + 192], zmm3",
            "vmovdqu64 [{o} + 256], zmm4",   "vmovdqu64 [{o} + 320], zmm5",
            "vmovdqu64 [{o} + 384], zmm6",   "vmovdqu64 [{o} + 448], zmm7",
            "vmovdqu64 [{o} + 512], zmm8",   "vmovdqu64 [{o} + 576], zmm9",
            "vmovdqu64 [{o} + 640], zmm10",  "vmovdqu64 [{o} + 704], zmm11",
            "vmovdqu64 [{o} + 768], zmm12",  "vmovdqu64 [{o} + 832], zmm13",
            "vmovdqu64 [{o} + 896], zmm14",  "vmovdqu64 [{o} + 960], zmm15",
            "vmovdqu64 [{o} + 1024], zmm16", "vmovdqu64 [{o} + 1088], zmm17",
            "vmovdqu64 [{o} + 1152], zmm18", "vmovdqu64 [{o} + 1216], zmm19",
            "vmovdqu64 [{o} + 1280], zmm20", "vmovdqu64 [{o} + 1344], zmm21",
            "vmovdqu64 [{o} + 1408], zmm22", "vmovdqu64 [{o} + 1472], zmm23",
            "vmovdqu64 [{o} + 1536], zmm24", "vmovdqu64 [{o} + 1600], zmm25",
            "vmovdqu64 [{o} + 1664], zmm26", "vmovdqu64 [{o} + 1728], zmm27",
            "vmovdqu64 [{o} + 1792], zmm28", "vmovdqu64 [{o} + 1856], zmm29",
            "vmovdqu64 [{o} + 1920], zmm30", "vmovdqu64 [{o} + 1984], zmm31",
            "kmovw eax, k1", "mov [{o} + 2048], rax",
            "kmovw eax, k2", "mov [{o} + 2056], rax",
            "kmovw eax, k3", "mov [{o} + 2064], rax",
            "kmovw eax, k4", "mov [{o} + 2072], rax",
            "kmovw eax, k5", "mov [{o} + 2080], rax",
            "kmovw eax, k6", "mov [{o} + 2088], rax",
            "kmovw eax, k7", "mov [{o} + 2096], rax";
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
        load
            "vbroadcastsd ymm0, [{p} + 0]",    "vbroadcastsd ymm1, [{p} + 8]",
            "vbroadcastsd ymm2, [{p} + 16]",   "vbroadcastsd ymm3, [{p} + 24]",
            "vbroadcastsd ymm4, [{p} + 32]",   "vbroadcastsd ymm5, [{p} + 40]",
            "vbroadcastsd ymm6, [{p} + 48]",   "vbroadcastsd ymm7, [{p} + 56]",
            "vbroadcastsd ymm8, [{p} + 64]",   "vbroadcastsd ymm9, [{p} + 72]",
            "vbroadcastsd ymm10, [{p} + 80]",  "vbroadcastsd ymm11, [{p} + 88]",
            "vbroadcastsd ymm12, [{p} + 96]",  "vbroadcastsd ymm13, [{p} + 104]",
            "vbroadcastsd ymm14, [{p} + 112]", "vbroadcastsd ymm15, [{p} + 120]";
        store
            "vmovdqu [{o} + 0], ymm0",    "vmovdqu [{o} + 32], ymm1",
            "vmovdqu [{o} + 64], ymm2",   "vmovdqu [{o} + 96], ymm3",
            "vmovdqu [{o} + 128], ymm4",  "vmovdqu [{o} + 160], ymm5",
            "vmovdqu [{o} + 192], ymm6",  "vmovdqu [{o} + 224], ymm7",
            "vmovdqu [{o} + 256], ymm8",  "vmovdqu [{o} + 288], ymm9",
            "vmovdqu [{o} + 320], ymm10", "vmovdqu [{o} + 352], ymm11",
            "vmovdqu [{o} + 384], ymm12", "vmovdqu [{o} + 416], ymm13",
            "vmovdqu [{o} + 448], ymm14", "vmovdqu [{o} + 480], ymm15";
        regs
            "ymm0", "ymm1", "ymm2", "ymm3",
            "ymm4", "ymm5", "ymm6", "ymm7",
            "ymm8", "ymm9", "ymm10", "ymm11",
            "ymm12", "ymm13", "ymm14", "ymm15";
    }

    hold_fn! {
        /// SSE2 only: every x86-64 CPU has it.
        hold_sse;
        load
            "movq xmm0, [{p} + 0]", "punpcklqdq xmm0, xmm0",    "movq xmm1, [{p} + 8]", "punpcklqdq xmm1, xmm1",
            "movq xmm2, [{p} + 16]", "punpcklqdq xmm2, xmm2",   "movq xmm3, [{p} + 24]", "punpcklqdq xmm3, xmm3",
            "movq xmm4, [{p} + 32]", "punpcklqdq xmm4, xmm4",   "movq xmm5, [{p} + 40]", "punpcklqdq xmm5, xmm5",
            "movq xmm6, [{p} + 48]", "punpcklqdq xmm6, xmm6",   "movq xmm7, [{p} + 56]", "punpcklqdq xmm7, xmm7",
            "movq xmm8, [{p} + 64]", "punpcklqdq xmm8, xmm8",   "movq xmm9, [{p} + 72]", "punpcklqdq xmm9, xmm9",
            "movq xmm10, [{p} + 80]", "punpcklqdq xmm10, xmm10",  "movq xmm11, [{p} + 88]", "punpcklqdq xmm11, xmm11",
            "movq xmm12, [{p} + 96]", "punpcklqdq xmm12, xmm12",  "movq xmm13, [{p} + 104]", "punpcklqdq xmm13, xmm13",
            "movq xmm14, [{p} + 112]", "punpcklqdq xmm14, xmm14", "movq xmm15, [{p} + 120]", "punpcklqdq xmm15, xmm15";
        store
            "movdqu [{o} + 0], xmm0",    "movdqu [{o} + 16], xmm1",
            "movdqu [{o} + 32], xmm2",   "movdqu [{o} + 48], xmm3",
            "movdqu [{o} + 64], xmm4",   "movdqu [{o} + 80], xmm5",
            "movdqu [{o} + 96], xmm6",   "movdqu [{o} + 112], xmm7",
            "movdqu [{o} + 128], xmm8",  "movdqu [{o} + 144], xmm9",
            "movdqu [{o} + 160], xmm10", "movdqu [{o} + 176], xmm11",
            "movdqu [{o} + 192], xmm12", "movdqu [{o} + 208], xmm13",
            "movdqu [{o} + 224], xmm14", "movdqu [{o} + 240], xmm15";
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
