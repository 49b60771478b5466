//! The IOzone-compatible throughput engine.
//!
//! Follows IOzone 3.414 (`iozone.c`, read from source): the same eight tests (`-i 0`…`-i 7`,
//! thirteen timed passes), the same system calls in the same order with the same offsets,
//! the same untimed set-up (fsync after open, priming read), the same fixed-seed MT19937-64
//! shuffle for the random tests, the same stride wrap rule, stdio-style streams with a
//! one-record buffer for fwrite/fread, and IOzone's truncated integer KiB/s. Timing uses the
//! monotonic clock in nanoseconds instead of `gettimeofday`.
//!
//! One engine instance runs one (file size, record size) point; sweeps (`-a`, lists of sizes)
//! are planned by [`sweep`] and run point by point by the caller. Throughput mode (`-t N`) is
//! in [`throughput`].

mod def;
pub use def::{CAPS, NAME};
pub mod biff;
pub mod calls;
pub mod coord;
pub mod direct;
pub mod io;
pub mod kind;
pub mod passes;
pub mod recording;
pub mod report;
pub mod spec;
pub mod stream;
pub mod sweep;
pub mod throughput;

#[cfg(test)]
#[path = "iozone_tests.rs"]
pub(crate) mod tests;

pub use direct::{probe_direct, DirectSupport};
pub use passes::{PassResult, Test};
pub use spec::{parse_file_kib, parse_kib_size, IozoneSpec};

use crate::metric::{Metric, Unit};
use crate::vocab::EntryKind;
use crate::workload::testfile::{self, TestFile};
use crate::workload::{Creates, Observer, Requirements, Target, Workload};
use anyhow::{Context, Result};
use io::{AlignedBuf, Io, OpenFlags, RealIo};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// IOzone's smallest record (`MINBUFFERSIZE`).
pub const MIN_RECORD: u64 = 128;
/// IOzone's largest record (`MAXBUFFERSIZE`).
pub const MAX_RECORD: u64 = 16 << 20;
/// IOzone's default stride in records (`STRIDE`).
pub const DEFAULT_STRIDE: u64 = 17;
/// IOzone's default file size in KiB (`KILOBYTES`).
pub const DEFAULT_FILE_KIB: u64 = 512;
/// IOzone's default record size in bytes.
pub const DEFAULT_RECORD: u64 = 4096;
/// IOzone's largest `-t` (`MAXSTREAMS`).
pub const MAX_THREADS: usize = 256;
/// The byte every record is filled with (and checked against with `-V`) unless `-V N` says
/// otherwise: 0xA5, IOzone's historic verification pattern (`-+Z`).
pub const DEFAULT_PATTERN: u8 = 0xA5;
/// Seconds between throughput-mode phases after `sync()`, as IOzone sleeps.
pub const DEFAULT_PHASE_PAUSE: f64 = 2.0;
/// Default test file name, as IOzone's.
pub const DEFAULT_FILE: &str = "iozone.tmp";

/// Everything one (file size, record size) point needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IozoneParams {
    /// File size in KiB (IOzone's unit for `-s`).
    pub file_kib: u64,
    /// Record size in bytes.
    pub record: u64,
    /// IOzone test numbers to run, sorted, 0 added where a test needs the file.
    pub tests: Vec<u8>,
    /// `-I`: O_DIRECT.
    pub direct: bool,
    /// `-e`: fsync inside the timing.
    pub fsync: bool,
    /// `-c`: close inside the timing.
    pub close: bool,
    /// `-o`: O_SYNC writes.
    pub osync: bool,
    /// `-j`: stride in records.
    pub stride: u64,
    /// `-t`: workers, each on its own file.
    pub threads: usize,
    /// Throughput mode (`-t N`, `-t 1` included): workers on their own files, IOzone's
    /// children/parent figures; off = IOzone's classic single-file mode.
    pub throughput: bool,
    /// Stonewalling in throughput mode (IOzone's default; `-x` turns it off).
    pub stonewall: bool,
    /// `-V`: verify every byte read.
    pub verify: bool,
    /// The fill and verification byte.
    pub pattern: u8,
    /// `-w`: keep the file(s).
    pub keep: bool,
    /// The test file, relative to the target directory or absolute (`-f`).
    pub file: PathBuf,
    /// One file per worker in throughput mode (`-F`); empty = `<dir>/iozone.DUMMY.<i>`.
    pub thread_files: Vec<PathBuf>,
    /// Drop the page cache before every test after the first (root).
    pub drop_caches: bool,
    /// `posix_fadvise(DONTNEED)` on the file before every test after the first.
    pub fadvise: bool,
    /// Seconds between throughput-mode phases after `sync()` (IOzone sleeps 2 s).
    pub phase_pause: f64,
    /// Check free space before writing.
    pub space_check: bool,
    /// `--huge-buffer`: ask for a transparent huge page for the record buffer
    /// (`MADV_HUGEPAGE`). By default the buffer follows the system's THP policy, as IOzone's
    /// does. With `-I` the buffer's pages shape the device requests: a 1 MiB record in 4 KiB
    /// pages is 256 segments, more than many queues take in one request (a loop device takes
    /// 128), so the kernel splits it, while one huge page is a few large segments and one
    /// request. For cached I/O only the kernel's copy changes (fewer TLB misses), by less than
    /// the run-to-run noise on the development machine; fslab measures what IOzone measures
    /// unless asked otherwise.
    pub huge_buffer: bool,
    /// `--overwrite`: a test file that exists with data may be written over (and is then
    /// removed at the end unless `-w`, as IOzone does); without it such a file is refused.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overwrite: bool,
}

impl Default for IozoneParams {
    fn default() -> Self {
        IozoneParams {
            file_kib: DEFAULT_FILE_KIB,
            record: DEFAULT_RECORD,
            tests: (0..=7).collect(),
            direct: false,
            fsync: false,
            close: false,
            osync: false,
            stride: DEFAULT_STRIDE,
            threads: 1,
            throughput: false,
            stonewall: true,
            verify: false,
            pattern: DEFAULT_PATTERN,
            keep: false,
            file: PathBuf::from(DEFAULT_FILE),
            thread_files: Vec::new(),
            drop_caches: false,
            fadvise: false,
            phase_pause: DEFAULT_PHASE_PAUSE,
            space_check: true,
            huge_buffer: false,
            overwrite: false,
        }
    }
}

/// Resolve `-i` values: check each, add 0 where a later test needs the file test 0 writes.
/// Returns the sorted tests and a note when 0 was added.
pub fn resolve_tests(requested: &[i64]) -> Result<(Vec<u8>, Option<String>)> {
    if requested.is_empty() {
        return Ok(((0..=7).collect(), None));
    }
    let mut t: Vec<u8> = Vec::new();
    for &n in requested {
        match n {
            0..=7 => t.push(n as u8),
            8 => crate::bail_usage!(
                "-i 8 (IOzone's random mix) exists only in IOzone's throughput mode and is not implemented by fslab; use tests 0-7"
            ),
            9..=12 => crate::bail_usage!(
                "-i {n} (IOzone's pwrite/pread/pwritev/preadv tests, enabled by -E) is not implemented by fslab; use tests 0-7"
            ),
            _ => crate::bail_usage!(
                "-i {n}: unknown test; IOzone's tests are 0 write/rewrite, 1 read/re-read, 2 random read/write, 3 backwards read, 4 record rewrite, 5 strided read, 6 fwrite/re-fwrite, 7 fread/re-fread"
            ),
        }
    }
    t.sort_unstable();
    t.dedup();
    // Readers need the whole file: test 0 writes it, test 6 (fwrite) runs too late for 1-5.
    let needs0 =
        t.iter().any(|&n| matches!(n, 1 | 2 | 3 | 5)) || (t.contains(&7) && !t.contains(&6));
    let add0 = needs0 && !t.contains(&0);
    if add0 {
        t.insert(0, 0);
    }
    let note = "-i 0 added: the selected tests read the file that the write test creates";
    Ok((t, add0.then(|| note.to_string())))
}

impl IozoneParams {
    /// File size in bytes as written: whole records only (IOzone: `numrecs = KiB*1024/reclen`).
    pub fn file_bytes(&self) -> u64 {
        self.numrecs() * self.record
    }

    /// How the writers open the file: `O_RDWR`, with `O_SYNC` (`-o`) and `O_DIRECT` (`-I`)
    /// when asked.
    pub fn write_flags(&self) -> OpenFlags {
        OpenFlags {
            write: true,
            sync: self.osync,
            direct: self.direct,
            ..Default::default()
        }
    }

    /// Records per pass.
    pub fn numrecs(&self) -> u64 {
        (self.file_kib * 1024) / self.record.max(1)
    }

    /// Files this point writes (one, or one per worker).
    pub fn files(&self, dir: &Path) -> Vec<PathBuf> {
        if !self.throughput {
            return vec![dir.join(&self.file)];
        }
        if !self.thread_files.is_empty() {
            return self.thread_files.iter().map(|f| dir.join(f)).collect();
        }
        (0..self.threads)
            .map(|i| dir.join(format!("iozone.DUMMY.{i}")))
            .collect()
    }

    /// Check values IOzone refuses or that make no sense, with the fix in the message.
    pub fn validate(&self) -> Result<()> {
        let rk = |b: u64| crate::units::fmt_bytes(b);
        if self.record < MIN_RECORD || self.record > MAX_RECORD {
            crate::bail_param!(
                "record size {} is outside IOzone's range of 128 bytes to 16 MiB; choose {{record_size=}} between 128b and 16m",
                rk(self.record)
            );
        }
        if self.file_kib == 0 {
            crate::bail_param!("file size 0: {{file_size=}} must be at least one record");
        }
        if self.record > self.file_kib * 1024 {
            crate::bail_param!(
                "record size {} is larger than the file size {}; use a smaller {{record_size=}} or a larger {{file_size=}}",
                rk(self.record),
                rk(self.file_kib * 1024)
            );
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            crate::bail_param!(
                "{{threads={}}}: throughput mode takes 1 to {MAX_THREADS} workers (IOzone's MAXSTREAMS)",
                self.threads
            );
        }
        if !self.thread_files.is_empty() && self.thread_files.len() != self.threads {
            crate::bail_param!(
                "{{thread_files=}} names {} files but {{threads=}} asks for {} workers; give one file per worker",
                self.thread_files.len(),
                self.threads
            );
        }
        if self.tests.is_empty() || self.tests.iter().any(|&t| t > 7) {
            crate::bail_param!("no valid tests selected; use {{tests=}} with numbers 0-7");
        }
        if !self.phase_pause.is_finite() || self.phase_pause < 0.0 {
            crate::bail_param!("{{phase_pause=}} must be a number of seconds ≥ 0");
        }
        Ok(())
    }

    /// A short label: `iozone -s 1048576k -r 1024k -i 0 -i 1`.
    pub fn label(&self) -> String {
        format!(
            "iozone -s {}k -r {}{}",
            self.file_kib,
            fmt_record(self.record),
            self.flags_label()
        )
    }

    /// The flags of the label other than the sizes (` -i 0 -i 1 -I`, …).
    pub fn flags_label(&self) -> String {
        let mut s = String::new();
        if self.tests != (0..=7).collect::<Vec<u8>>() {
            for t in &self.tests {
                s.push_str(&format!(" -i {t}"));
            }
        }
        for (on, f) in [
            (self.direct, " -I"),
            (self.fsync, " -e"),
            (self.close, " -c"),
            (self.osync, " -o"),
        ] {
            if on {
                s.push_str(f);
            }
        }
        if self.throughput {
            s.push_str(&format!(" -t {}", self.threads));
            if !self.stonewall {
                s.push_str(" -x");
            }
        }
        if self.huge_buffer {
            s.push_str(" --huge-buffer");
        }
        s
    }
}

/// A record size as IOzone prints it: KiB, or bytes with `b` below 1 KiB.
pub fn fmt_record(bytes: u64) -> String {
    if bytes % 1024 == 0 {
        format!("{}k", bytes / 1024)
    } else {
        format!("{bytes}b")
    }
}

/// With `-I`: can the file system of `dir` do O_DIRECT with this record size and fslab's
/// buffer alignment? (A probe file; a usage error naming the fix if not.)
pub fn check_direct(params: &IozoneParams, dir: &Path) -> Result<()> {
    let fs = crate::sysinfo::fs_type_of(dir);
    let d = probe_direct(dir, fs.as_deref())?;
    let a = u64::from(d.offset_align.max(d.mem_align));
    if params.record % a != 0 {
        crate::bail_usage!(
            "-I (O_DIRECT) needs records that are a multiple of {a} bytes on {} ({}), but the record size is {} bytes; use -r {} or another multiple of {a}",
            dir.display(),
            fs.as_deref().unwrap_or("unknown fs"),
            params.record,
            fmt_record(params.record.div_ceil(a) * a)
        );
    }
    if a > io::BUF_ALIGN as u64 && u64::from(d.mem_align) > io::BUF_ALIGN as u64 {
        crate::bail_usage!(
            "-I (O_DIRECT) on {} needs buffers aligned to {} bytes, more than fslab's {}; drop -I",
            dir.display(),
            d.mem_align,
            io::BUF_ALIGN
        );
    }
    Ok(())
}

/// Unless `--no-space-check`: does `dir` have room for `req`? A file of `files` left by an
/// earlier -w run is rewritten in place: its blocks count as free.
pub fn check_space(
    p: &IozoneParams,
    dir: &Path,
    mut req: Requirements,
    files: &[PathBuf],
) -> Result<()> {
    if !p.space_check {
        return Ok(());
    }
    let existing: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    req.bytes = req.bytes.saturating_sub(existing);
    crate::workload::check_fits(dir, req, "this IOzone run").map_err(|e| {
        crate::error::usage(format!("{e:#} (or skip this check with --no-space-check)"))
    })
}

/// The IOzone engine for one point.
pub struct Iozone {
    params: IozoneParams,
    /// The test files of the current repetition and what was there before (see
    /// [`crate::workload::testfile`]); cleanup removes or restores exactly these.
    claims: Vec<TestFile>,
    succeeded: bool,
}

impl Iozone {
    /// An engine for validated parameters.
    pub fn new(params: IozoneParams) -> Iozone {
        Iozone {
            params,
            claims: Vec::new(),
            succeeded: false,
        }
    }

    /// Run the selected tests on one file through `io`; returns every timed pass.
    pub fn run_single<I: Io>(
        &self,
        io: &mut I,
        path: &Path,
        obs: &dyn Observer,
    ) -> Result<Vec<PassResult>> {
        let p = &self.params;
        let spec = passes::FileSpec::new(path, p);
        let mut buf = AlignedBuf::new(p.record as usize, p.pattern, p.huge_buffer);
        let mut out = Vec::new();
        for (k, &n) in p.tests.iter().enumerate() {
            if k > 0 {
                self.between_tests(io, path)?;
            }
            // Record rewrite and stride read are one pass; the other tests two.
            let passes = if matches!(n, 4 | 5) { 1 } else { 2 };
            obs.phase_started(passes::TEST_NAMES[n as usize], passes * spec.numrecs);
            let mut r = passes::Runner {
                io: &mut *io,
                spec: &spec,
                buf: &mut buf,
                ticker: passes::Ticker::new(obs, spec.reclen),
                passes: 0,
            };
            let res = r.run(n);
            obs.phase_finished(passes::TEST_NAMES[n as usize]);
            out.extend(res.inspect_err(|_| io.close_all())?);
        }
        Ok(out)
    }

    /// The cache policy between two tests: drop caches and/or fadvise(DONTNEED), untimed.
    fn between_tests<I: Io>(&self, io: &mut I, path: &Path) -> Result<()> {
        if self.params.fadvise && io.exists(path) {
            let fd = io
                .open(path, OpenFlags::read_only(false))
                .with_context(|| format!("fadvise: cannot open {}", path.display()))?;
            let r = io.fsync(fd).and_then(|_| io.fadvise_dontneed(fd));
            io.close(fd)?;
            r.with_context(|| format!("posix_fadvise(DONTNEED) on {}", path.display()))?;
        }
        if self.params.drop_caches {
            io.drop_caches()
                .context("cannot drop the page cache (/proc/sys/vm/drop_caches); run as root or drop --drop-caches")?;
        }
        Ok(())
    }

    /// Metrics of the passes of one repetition: per test, IOzone's KiB/s and the elapsed time.
    pub fn metrics(passes: &[PassResult]) -> Vec<Metric> {
        let mut m = Vec::new();
        for p in passes {
            for (name, unit, value) in [
                ("throughput", Unit::KiBPerSec, p.kib_per_sec() as f64),
                ("elapsed", Unit::Seconds, p.elapsed.as_secs_f64()),
            ] {
                m.push(Metric::new(p.test.phase(), name, unit, value));
            }
        }
        m
    }
}

impl Workload for Iozone {
    fn name(&self) -> &'static str {
        "iozone"
    }

    fn requirements(&self) -> Requirements {
        let n = self.params.threads.max(1) as u64;
        Requirements {
            bytes: self.params.file_bytes().saturating_mul(n),
            inodes: n,
        }
    }

    fn prepare(&mut self, target: &Target) -> Result<()> {
        self.succeeded = false;
        let files = self.params.files(target.dir());
        let flag = match (self.params.throughput, self.params.thread_files.is_empty()) {
            (false, _) => "-f",
            (true, false) => "-F",
            (true, true) => "-t",
        };
        self.claims = files
            .iter()
            .map(|f| testfile::claim(f, self.params.overwrite, flag))
            .collect::<Result<_>>()?;
        for f in &files {
            let dir = f.parent().unwrap_or(target.dir());
            crate::workload::check_writable_dir(dir, "-f")?;
            if self.params.direct {
                check_direct(&self.params, dir)?;
            }
        }
        let dir = files[0].parent().unwrap_or(target.dir());
        check_space(&self.params, dir, self.requirements(), &files)
    }

    fn run(&mut self, target: &Target, obs: &dyn Observer) -> Result<Vec<Metric>> {
        if self.claims.is_empty() {
            self.prepare(target)?;
        }
        let files: Vec<PathBuf> = self.claims.iter().map(|c| c.path.clone()).collect();
        if self.params.throughput {
            let out = throughput::run(&self.params, &files, obs)?;
            self.succeeded = true;
            return Ok(out.metrics());
        }
        let mut io = RealIo::default();
        let passes = self.run_single(&mut io, &files[0], obs)?;
        self.succeeded = true;
        Ok(Iozone::metrics(&passes))
    }

    fn creates(&self, _target: &Target) -> Vec<Creates> {
        let absent = |c: &&TestFile| c.prior == testfile::Prior::Absent;
        let paths = self.claims.iter().filter(absent).map(|c| c.path.clone());
        Creates::each(NAME, EntryKind::File, serde_json::Value::Null, paths)
    }

    fn cleanup(&mut self, _target: &Target) -> Result<()> {
        let keep = self.params.keep && self.succeeded;
        let mut first = None;
        for c in std::mem::take(&mut self.claims) {
            if let Err(e) = testfile::release(&c, keep) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
