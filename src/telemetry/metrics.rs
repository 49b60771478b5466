//! Two snapshots → the metrics of the phase between them, with the names of issue 12
//! (`dev.<role>.*`, `cpu.*`, `load.*`, `mem.*`, `proc.*`, `fs.journal.*`, `fs.log.*`).
//! Every name, unit and derivation is listed in `doc/telemetry.md`.

use super::fs::FsSample;
use super::procfs::CpuSplit;
use super::{btrfs, diskstats, jbd2, xfs, Snapshot};
use crate::metric::{Metric, Unit};

struct Out<'a> {
    phase: &'a str,
    v: Vec<Metric>,
}

impl Out<'_> {
    fn put(&mut self, name: impl Into<String>, unit: Unit, value: f64) {
        self.v.push(Metric::new(self.phase, name, unit, value));
    }
}

/// The metrics of the phase from `start` to `end`, each with `phase` as its phase.
///
/// Devices are matched by role and device number; one absent at the start counts
/// everything it did (it appeared during the phase), one absent at the end gives no
/// metrics. CPU percentages are of all CPUs' time in the interval and are left out when the
/// interval is shorter than one USER_HZ tick. `mem.dirty_writeback_peak` is the larger of
/// Dirty+Writeback at the two boundaries (the peak in between is seen only by a sampler).
pub fn delta(phase: &str, start: &Snapshot, end: &Snapshot) -> Vec<Metric> {
    let mut o = Out {
        phase,
        v: Vec::with_capacity(64),
    };
    let elapsed_ms = end.at.saturating_duration_since(start.at).as_secs_f64() * 1000.0;
    devices(&mut o, start, end, elapsed_ms);
    machine(&mut o, start, end);
    match (start.fs, end.fs) {
        (Some(FsSample::Jbd2(s)), Some(FsSample::Jbd2(e))) => journal(&mut o, &jbd2::delta(&s, &e)),
        (_, Some(FsSample::Jbd2(e))) => journal(&mut o, &jbd2::delta(&Default::default(), &e)),
        (Some(FsSample::Xfs(s)), Some(FsSample::Xfs(e))) => {
            // Cleared or remounted in between: everything counted since happened inside.
            xfs_log(&mut o, &xfs::delta(&s, &e).unwrap_or(e))
        }
        (_, Some(FsSample::Xfs(e))) => xfs_log(&mut o, &e),
        (s, Some(FsSample::Btrfs(e))) => {
            let d = match s {
                Some(FsSample::Btrfs(s)) => btrfs::delta(&s, &e),
                _ => None,
            };
            let (n, ms) = d.unwrap_or((e.commits, e.total_ms));
            o.put("fs.journal.transactions", Unit::Count, n as f64);
            o.put("fs.journal.commit_ms", Unit::Millis, ms as f64);
            if n > 0 {
                let avg = ms as f64 / n as f64;
                o.put("fs.journal.commit_ms_avg", Unit::Millis, avg);
            }
            o.put("fs.journal.commit_ms_max", Unit::Millis, e.max_ms as f64);
        }
        (_, None) => {}
    }
    o.v
}

fn devices(o: &mut Out<'_>, start: &Snapshot, end: &Snapshot, elapsed_ms: f64) {
    for (dev, line) in &end.disks {
        let Some(e) = line else { continue };
        let d = diskstats::delta(start.disk_of(dev), e);
        let p = format!("dev.{}.", dev.role.label());
        let mut put = |name: &str, unit, v: f64| o.put(format!("{p}{name}"), unit, v);
        put("read_bytes", Unit::Bytes, d.read_bytes as f64);
        put("write_bytes", Unit::Bytes, d.write_bytes as f64);
        put("read_ios", Unit::Count, d.read_ios as f64);
        put("write_ios", Unit::Count, d.write_ios as f64);
        put("read_merges", Unit::Count, d.read_merges as f64);
        put("write_merges", Unit::Count, d.write_merges as f64);
        put("read_ms", Unit::Millis, d.read_ms as f64);
        put("write_ms", Unit::Millis, d.write_ms as f64);
        put("queue_ms", Unit::Millis, d.queue_ms as f64);
        if elapsed_ms > 0.0 {
            let util = (d.io_ms as f64 / elapsed_ms * 100.0).clamp(0.0, 100.0);
            put("util", Unit::Percent, util);
        }
        if let Some(b) = d.discard_bytes {
            put("discard_bytes", Unit::Bytes, b as f64);
        }
        if let Some(n) = d.flush_ios {
            put("flush_ios", Unit::Count, n as f64);
        }
    }
}

fn machine(o: &mut Out<'_>, start: &Snapshot, end: &Snapshot) {
    let c = CpuSplit::between(&start.stat.cpu, &end.stat.cpu);
    let total = c.total() as f64;
    let own_user_s = end.usage.user_us.saturating_sub(start.usage.user_us) as f64 / 1e6;
    if total > 0.0 {
        let pct = |x: u64| x as f64 / total * 100.0;
        o.put("cpu.user", Unit::Percent, pct(c.user));
        o.put("cpu.sys", Unit::Percent, pct(c.sys));
        o.put("cpu.iowait", Unit::Percent, pct(c.iowait));
        o.put("cpu.steal", Unit::Percent, pct(c.steal));
        o.put("cpu.idle", Unit::Percent, pct(c.idle));
        let hz = end.ticks_per_second.max(1) as f64;
        let other = (c.user as f64 / hz - own_user_s).max(0.0) / (total / hz);
        o.put("cpu.other_user", Unit::Percent, other * 100.0);
    }
    let ctxt = end.stat.ctxt.saturating_sub(start.stat.ctxt) as f64;
    o.put("ctxt", Unit::Count, ctxt);
    o.put("load.start", Unit::Count, start.load.one);
    o.put("load.end", Unit::Count, end.load.one);
    let dw = |s: &Snapshot| s.memory.dirty + s.memory.writeback;
    let peak = dw(start).max(dw(end)) as f64;
    o.put("mem.dirty_writeback_peak", Unit::Bytes, peak);
    o.put("proc.user", Unit::Seconds, own_user_s);
    let own_sys_s = end.usage.sys_us.saturating_sub(start.usage.sys_us) as f64 / 1e6;
    o.put("proc.sys", Unit::Seconds, own_sys_s);
    o.put("proc.max_rss", Unit::Bytes, end.usage.max_rss as f64);
}

fn journal(o: &mut Out<'_>, d: &jbd2::Jbd2Delta) {
    let n = d.transactions as f64;
    let mut put = |name: &str, unit, v: f64| o.put(format!("fs.journal.{name}"), unit, v);
    put("transactions", Unit::Count, n);
    put("requested", Unit::Count, d.requested as f64);
    put("blocks", Unit::Count, d.blocks);
    put("logged_blocks", Unit::Count, d.logged_blocks);
    put("handles", Unit::Count, d.handles);
    if n > 0.0 {
        put("blocks_per_transaction", Unit::Count, d.blocks / n);
        put("handles_per_transaction", Unit::Count, d.handles / n);
    }
    put("blocks_per_transaction_limit", Unit::Count, d.limit as f64);
    put("wait_ms", Unit::Millis, d.wait_ms);
    put("request_delay_ms", Unit::Millis, d.request_delay_ms);
    put("running_ms", Unit::Millis, d.running_ms);
    put("locked_ms", Unit::Millis, d.locked_ms);
    put("flushing_ms", Unit::Millis, d.flushing_ms);
    put("logging_ms", Unit::Millis, d.logging_ms);
    if let Some(c) = d.commit_ms_avg {
        put("commit_ms_avg", Unit::Millis, c);
    }
}

fn xfs_log(o: &mut Out<'_>, d: &xfs::XfsLog) {
    let mut put = |name: &str, unit, v: u64| o.put(format!("fs.log.{name}"), unit, v as f64);
    put("writes", Unit::Count, d.writes);
    put("blocks", Unit::Count, d.blocks);
    put("bytes", Unit::Bytes, d.blocks * xfs::BASIC_BLOCK);
    put("noiclogs", Unit::Count, d.noiclogs);
    put("force", Unit::Count, d.force);
    put("force_sleep", Unit::Count, d.force_sleep);
    put("try_logspace", Unit::Count, d.try_logspace);
    put("sleep_logspace", Unit::Count, d.sleep_logspace);
    put("push_ail", Unit::Count, d.push_ail);
    put("transactions", Unit::Count, d.transactions());
}
