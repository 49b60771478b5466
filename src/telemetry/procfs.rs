//! The machine and the process: `/proc/stat` (the `cpu` line, `cpuN` lines, `ctxt`,
//! `procs_running`), `/proc/loadavg`, `/proc/meminfo` (`Dirty`, `Writeback`) and
//! getrusage(2) for RUSAGE_SELF and RUSAGE_CHILDREN, following proc(5) and getrusage(2).
//!
//! `/proc/stat` CPU times are in USER_HZ ticks (sysconf(_SC_CLK_TCK), 100 on every Linux
//! architecture in practice); `guest` and `guest_nice` are already included in `user` and
//! `nice` and are not added again.

use anyhow::{bail, Context, Result};
use std::sync::OnceLock;

/// Cumulative CPU time of all CPUs, in USER_HZ ticks (the `cpu` line of `/proc/stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// User mode.
    pub user: u64,
    /// User mode at low priority (niced).
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with I/O outstanding (unreliable per proc(5): it may even decrease).
    pub iowait: u64,
    /// Servicing hardware interrupts.
    pub irq: u64,
    /// Servicing softirqs.
    pub softirq: u64,
    /// Stolen by the hypervisor for other guests.
    pub steal: u64,
}

/// CPU ticks of an interval, grouped as fslab reports them: user (+nice), sys
/// (system + irq + softirq), iowait, steal, idle. Fields that went backwards (iowait may,
/// per proc(5)) count as 0, so the five always add up to the interval's total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CpuSplit {
    pub user: u64,
    pub sys: u64,
    pub iowait: u64,
    pub steal: u64,
    pub idle: u64,
}

impl CpuSplit {
    pub(crate) fn between(a: &CpuTimes, b: &CpuTimes) -> CpuSplit {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        CpuSplit {
            user: d(a.user, b.user) + d(a.nice, b.nice),
            sys: d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq),
            iowait: d(a.iowait, b.iowait),
            steal: d(a.steal, b.steal),
            idle: d(a.idle, b.idle),
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.user + self.sys + self.iowait + self.steal + self.idle
    }
}

/// The parts of `/proc/stat` telemetry uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcStat {
    /// The `cpu` line (all CPUs).
    pub cpu: CpuTimes,
    /// Online CPUs (the number of `cpuN` lines).
    pub cpus: u32,
    /// Context switches since boot (`ctxt`).
    pub ctxt: u64,
    /// Runnable tasks at the moment of reading, the reader included (`procs_running`).
    pub procs_running: u64,
}

/// Parse the text of `/proc/stat`. Lines other than `cpu`, `cpuN`, `ctxt` and
/// `procs_running` (the long `intr` and `softirq` lines) are skipped unparsed.
pub fn parse_stat(text: &str) -> Result<ProcStat> {
    let mut st = ProcStat::default();
    let mut seen_cpu = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("cpu") {
            if rest.starts_with(' ') {
                let v: Vec<u64> = rest
                    .split_whitespace()
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("/proc/stat: bad cpu line `{line}`"))?;
                if v.len() < 4 {
                    bail!("/proc/stat: cpu line has {} fields, need 4", v.len());
                }
                let f = |i: usize| v.get(i).copied().unwrap_or(0);
                st.cpu = CpuTimes {
                    user: f(0),
                    nice: f(1),
                    system: f(2),
                    idle: f(3),
                    iowait: f(4),
                    irq: f(5),
                    softirq: f(6),
                    steal: f(7),
                };
                seen_cpu = true;
            } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
                st.cpus += 1;
            }
        } else if let Some(v) = line.strip_prefix("ctxt ") {
            st.ctxt = v.trim().parse().context("/proc/stat: bad ctxt")?;
        } else if let Some(v) = line.strip_prefix("procs_running ") {
            st.procs_running = v.trim().parse().context("/proc/stat: bad procs_running")?;
        }
    }
    if !seen_cpu {
        bail!("/proc/stat has no `cpu` line");
    }
    Ok(st)
}

/// `/proc/loadavg`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoadAvg {
    /// 1-minute load average.
    pub one: f64,
    /// 5-minute load average.
    pub five: f64,
    /// 15-minute load average.
    pub fifteen: f64,
}

/// Parse the text of `/proc/loadavg` (`0.77 1.67 1.43 1/93 5988`).
pub fn parse_loadavg(text: &str) -> Result<LoadAvg> {
    let mut t = text.split_whitespace();
    let mut next = |what: &str| -> Result<f64> {
        t.next()
            .and_then(|x| x.parse::<f64>().ok())
            .with_context(|| format!("/proc/loadavg: no {what} load average in `{text}`"))
    };
    Ok(LoadAvg {
        one: next("1-minute")?,
        five: next("5-minute")?,
        fifteen: next("15-minute")?,
    })
}

/// Dirty and under-writeback page-cache memory (`/proc/meminfo`), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirtyMemory {
    /// `Dirty`: modified pages not yet submitted for writeback.
    pub dirty: u64,
    /// `Writeback`: pages being written back now.
    pub writeback: u64,
}

/// Parse `Dirty` and `Writeback` from the text of `/proc/meminfo` (values in kB = KiB).
pub fn parse_meminfo(text: &str) -> Result<DirtyMemory> {
    let mut dirty = None;
    let mut writeback = None;
    for line in text.lines() {
        let slot = match line.split(':').next() {
            Some("Dirty") => &mut dirty,
            Some("Writeback") => &mut writeback,
            _ => continue,
        };
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("/proc/meminfo: bad line `{line}`"))?;
        *slot = Some(kib.saturating_mul(1024));
        if dirty.is_some() && writeback.is_some() {
            break;
        }
    }
    Ok(DirtyMemory {
        dirty: dirty.context("/proc/meminfo has no Dirty line")?,
        writeback: writeback.context("/proc/meminfo has no Writeback line")?,
    })
}

/// CPU time and peak memory of this process (getrusage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// User CPU of this process and its waited-for children, in microseconds.
    pub user_us: u64,
    /// System CPU of this process and its waited-for children, in microseconds.
    pub sys_us: u64,
    /// Peak resident set size of this process in bytes (a high-water mark since it started).
    pub max_rss: u64,
}

fn rusage(who: libc::c_int) -> Result<libc::rusage> {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the duration of the call.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("getrusage");
    }
    Ok(ru)
}

fn micros(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64
}

/// getrusage(RUSAGE_SELF) plus getrusage(RUSAGE_CHILDREN) for CPU; RUSAGE_SELF for RSS.
pub fn usage() -> Result<Usage> {
    let me = rusage(libc::RUSAGE_SELF)?;
    let kids = rusage(libc::RUSAGE_CHILDREN)?;
    Ok(Usage {
        user_us: micros(me.ru_utime) + micros(kids.ru_utime),
        sys_us: micros(me.ru_stime) + micros(kids.ru_stime),
        // ru_maxrss is in KiB on Linux.
        max_rss: (me.ru_maxrss.max(0) as u64).saturating_mul(1024),
    })
}

/// USER_HZ, the unit of `/proc/stat` CPU times (sysconf(_SC_CLK_TCK)); 100 if unknown.
pub fn ticks_per_second() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        u64::try_from(v).ok().filter(|&v| v > 0).unwrap_or(100)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_captured_proc_stat() {
        let st = parse_stat(include_str!("fixtures/stat-after")).unwrap();
        assert_eq!(st.cpu.user, 162_217);
        assert_eq!(st.cpu.system, 36_326);
        assert_eq!(st.cpu.idle, 190_212);
        assert_eq!(st.cpu.iowait, 4694);
        assert_eq!(st.cpu.steal, 328);
        assert_eq!(st.cpus, 2);
        assert!(st.ctxt > 0);
        assert!(st.procs_running >= 1, "the reader itself is running");
    }

    #[test]
    fn an_old_kernel_without_steal_parses() {
        let st = parse_stat("cpu  10 0 5 100 2\ncpu0 10 0 5 100 2\nctxt 7\n").unwrap();
        assert_eq!(st.cpu.steal, 0);
        let since_boot = CpuSplit::between(&CpuTimes::default(), &st.cpu);
        assert_eq!(since_boot.total(), 117);
        assert_eq!((st.cpus, st.ctxt, st.procs_running), (1, 7, 0));
        assert!(parse_stat("ctxt 7\n").is_err());
        assert!(parse_stat("cpu  1 x 3 4\n").is_err());
    }

    #[test]
    fn a_cpu_split_adds_up_and_ignores_iowait_going_backwards() {
        let a = CpuTimes {
            user: 100,
            nice: 5,
            system: 50,
            idle: 1000,
            iowait: 40,
            irq: 1,
            softirq: 2,
            steal: 3,
        };
        let b = CpuTimes {
            user: 160,
            nice: 5,
            system: 70,
            idle: 1100,
            iowait: 30,
            irq: 2,
            softirq: 4,
            steal: 13,
        };
        let s = CpuSplit::between(&a, &b);
        assert_eq!(
            (s.user, s.sys, s.iowait, s.steal, s.idle),
            (60, 23, 0, 10, 100)
        );
        assert_eq!(s.total(), 193);
    }

    #[test]
    fn parses_the_captured_loadavg_and_meminfo() {
        let l = parse_loadavg(include_str!("fixtures/loadavg-before")).unwrap();
        assert_eq!((l.one, l.five, l.fifteen), (0.02, 0.83, 1.14));
        assert!(parse_loadavg("0.5 0.1").is_err());
        let m = parse_meminfo(include_str!("fixtures/meminfo-after")).unwrap();
        assert_eq!(m.dirty, 256 * 1024);
        assert_eq!(m.writeback, 132 * 1024);
        assert!(parse_meminfo("MemTotal: 1 kB\nDirty: 4 kB\n").is_err());
    }

    #[test]
    fn own_usage_grows_with_work() {
        let a = usage().unwrap();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = usage().unwrap();
        assert!(
            b.user_us + b.sys_us >= a.user_us + a.sys_us + 10_000,
            "{a:?} {b:?}"
        );
        assert!(b.max_rss > 1 << 20);
        assert!(ticks_per_second() >= 100);
    }
}
