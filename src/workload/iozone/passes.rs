//! IOzone's 13 tests on one file, call for call as `iozone.c` (3.414) makes them:
//! `write_perf_test`, `read_perf_test`, `random_perf_test`, `reverse_perf_test`,
//! `rewriterec_perf_test`, `read_stride_perf_test`, `fwrite_perf_test`, `fread_perf_test`.
//!
//! Every test opens the file, does its untimed set-up (the `fsync` after open, the priming
//! read of record 0 before the read passes), then reads the clock, runs its loop of
//! record-sized calls, includes `fsync` (`-e`) and `close` (`-c`) in the interval only when
//! asked, reads the clock again, and finishes untimed. Rates are IOzone's: bytes over seconds,
//! truncated to an integer and shifted right by 10 (KiB/s).

pub use super::calls::{iozone_rate, read_exact, write_all, TestIoError, Ticker, VerifyError};
use super::io::{Fd, Io, Mark, OpenFlags, Whence};
pub use super::kind::{Test, TEST_NAMES};
use super::stream::{Mode, Stream};
use super::IozoneParams;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// What one (file size, record size) point needs to run: the test file and the point's
/// parameters (`-I`, `-o`, `-e`, `-c`, `-j`, the pattern and `-V` among them).
#[derive(Debug, Clone)]
pub struct FileSpec<'a> {
    /// The test file.
    pub path: &'a Path,
    /// The point's parameters.
    pub p: &'a IozoneParams,
    /// Record size in bytes.
    pub reclen: usize,
    /// Records per pass: `file KiB × 1024 / reclen` (IOzone's integer division).
    pub numrecs: u64,
}

impl<'a> FileSpec<'a> {
    /// The point `p` on the file at `path`.
    pub fn new(path: &'a Path, p: &'a IozoneParams) -> FileSpec<'a> {
        FileSpec {
            path,
            p,
            reclen: p.record as usize,
            numrecs: p.numrecs(),
        }
    }
}

/// The result of one timed pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassResult {
    /// Which pass.
    pub test: Test,
    /// Bytes moved in the timed interval.
    pub bytes: u64,
    /// The timed interval.
    pub elapsed: Duration,
}

impl PassResult {
    /// IOzone's rate: `(u64)(bytes / seconds) >> 10`, integer KiB/s.
    pub fn kib_per_sec(&self) -> u64 {
        iozone_rate(self.bytes, self.elapsed)
    }
}

/// Check a record against the pattern; `record` is its number in the file.
#[inline]
fn verify(s: &FileSpec<'_>, test: Test, buf: &[u8], record: u64) -> anyhow::Result<()> {
    if let Some(i) = buf.iter().position(|&b| b != s.p.pattern) {
        return Err(VerifyError {
            test: test.phase(),
            path: s.path.display().to_string(),
            offset: record * s.reclen as u64 + i as u64,
            record,
            found: buf[i],
            expected: s.p.pattern,
        }
        .into());
    }
    Ok(())
}

/// Runs the passes of one IOzone test on one file.
pub struct Runner<'a, I: Io> {
    /// The I/O layer.
    pub io: &'a mut I,
    /// The file and options.
    pub spec: &'a FileSpec<'a>,
    /// The record buffer (aligned, `reclen` bytes).
    pub buf: &'a mut [u8],
    /// Progress and Ctrl-C.
    pub ticker: Ticker<'a>,
    /// Timed passes started so far (progress is cumulative over a test's passes).
    pub passes: u64,
}

impl<'a, I: Io> Runner<'a, I> {
    fn fail(
        &mut self,
        test: Test,
        op: &'static str,
        fd: Fd,
        done: u64,
        e: io::Error,
    ) -> anyhow::Error {
        let offset = self.io.seek(fd, 0, Whence::Cur).unwrap_or(done);
        self.err(test, op, offset, done, e)
    }

    fn err(
        &self,
        test: Test,
        op: &'static str,
        offset: u64,
        done: u64,
        e: io::Error,
    ) -> anyhow::Error {
        let hint = match e.raw_os_error() {
            Some(libc::ENOSPC) => "; the file system is full and fslab removed the test file: free space, use a smaller -s, or choose another file with -f",
            Some(libc::EDQUOT) => "; the disk quota is exhausted: use a smaller -s or another file system",
            Some(libc::EINVAL) if self.spec.p.direct => "; O_DIRECT needs aligned offsets and sizes: use a record size that is a multiple of 4 KiB",
            _ => "",
        };
        TestIoError {
            test: test.phase(),
            op,
            path: self.spec.path.display().to_string(),
            offset,
            done,
            err: e,
            hint,
        }
        .into()
    }

    fn open(&mut self, test: Test, flags: OpenFlags) -> anyhow::Result<Fd> {
        self.io
            .open(self.spec.path, flags)
            .map_err(|e| self.err(test, "open", 0, 0, e))
    }

    fn fsync(&mut self, test: Test, fd: Fd, done: u64) -> anyhow::Result<()> {
        self.io
            .fsync(fd)
            .map_err(|e| self.err(test, "fsync", done, done, e))
    }

    fn close(&mut self, test: Test, fd: Fd, done: u64) -> anyhow::Result<()> {
        self.io
            .close(fd)
            .map_err(|e| self.err(test, "close", done, done, e))
    }

    /// Start the clock.
    #[inline(always)]
    fn start(&mut self) -> Instant {
        self.ticker.set_base(self.passes * self.spec.numrecs);
        self.passes += 1;
        self.io.mark(Mark::TimerStart);
        Instant::now()
    }

    /// Stop the clock (after the `-e` fsync and `-c` close that belong inside it).
    fn stop(&mut self, test: Test, fd: Fd, t0: Instant) -> anyhow::Result<PassResult> {
        let bytes = self.spec.numrecs * self.spec.reclen as u64;
        if self.spec.p.fsync {
            self.fsync(test, fd, bytes)?;
        }
        if self.spec.p.close {
            self.close(test, fd, bytes)?;
        }
        let elapsed = t0.elapsed();
        self.io.mark(Mark::TimerStop);
        if !self.spec.p.close {
            self.fsync(test, fd, bytes)?;
            self.close(test, fd, bytes)?;
        }
        Ok(PassResult {
            test,
            bytes,
            elapsed,
        })
    }

    /// `-i 0`: write (creat truncates, first pass only) and rewrite.
    pub fn write_rewrite(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let mut out = Vec::new();
        for test in [Test::Write, Test::Rewrite] {
            if test == Test::Write {
                let fd = self
                    .io
                    .creat(self.spec.path)
                    .map_err(|e| self.err(test, "creat", 0, 0, e))?;
                self.close(test, fd, 0)?;
            }
            let fd = self.open(test, self.spec.p.write_flags())?;
            self.fsync(test, fd, 0)?;
            self.buf.fill(self.spec.p.pattern);
            let t0 = self.start();
            for i in 0..self.spec.numrecs {
                self.ticker.tick(i)?;
                if let Err(e) = write_all(self.io, fd, self.buf) {
                    let done = self
                        .io
                        .seek(fd, 0, Whence::Cur)
                        .unwrap_or(i * self.spec.reclen as u64);
                    return Err(self.err(test, "write", done, done, e));
                }
            }
            out.push(self.stop(test, fd, t0)?);
        }
        Ok(out)
    }

    /// `-i 1`: read and re-read, each after an untimed priming read of record 0.
    pub fn read_reread(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let mut out = Vec::new();
        for test in [Test::Read, Test::Reread] {
            let fd = self.open(test, OpenFlags::read_only(self.spec.p.direct))?;
            self.fsync(test, fd, 0)?;
            // IOzone: "Need to prime the instruction cache & TLB" — one untimed read.
            read_exact(self.io, fd, self.buf)
                .map_err(|e| self.err(test, "priming read", 0, 0, e))?;
            self.io
                .seek(fd, 0, Whence::Set)
                .map_err(|e| self.err(test, "lseek", 0, 0, e))?;
            let t0 = self.start();
            let reclen = self.spec.reclen as u64;
            for i in 0..self.spec.numrecs {
                self.ticker.tick(i)?;
                read_exact(self.io, fd, self.buf)
                    .map_err(|e| self.fail(test, "read", fd, i * reclen, e))?;
                if self.spec.p.verify {
                    verify(self.spec, test, self.buf, i)?;
                }
            }
            out.push(self.stop(test, fd, t0)?);
        }
        Ok(out)
    }

    /// `-i 2`: random read, then random write, both visiting every record once in the order
    /// of [`permutation`].
    pub fn random(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let order = permutation(self.spec.numrecs);
        let reclen = self.spec.reclen as u64;
        let mut out = Vec::new();
        for test in [Test::RandomRead, Test::RandomWrite] {
            let flags = OpenFlags {
                create: true,
                ..self.spec.p.write_flags()
            };
            let fd = self.open(test, flags)?;
            if test == Test::RandomWrite {
                self.buf.fill(self.spec.p.pattern);
            }
            let t0 = self.start();
            for (i, &rec) in order.iter().enumerate() {
                self.ticker.tick(i as u64)?;
                let off = rec * reclen;
                self.io
                    .seek(fd, off as i64, Whence::Set)
                    .map_err(|e| self.err(test, "lseek", off, i as u64 * reclen, e))?;
                let (op, r) = if test == Test::RandomRead {
                    ("read", read_exact(self.io, fd, self.buf))
                } else {
                    ("write", write_all(self.io, fd, self.buf))
                };
                r.map_err(|e| self.err(test, op, off, i as u64 * reclen, e))?;
                if test == Test::RandomRead && self.spec.p.verify {
                    verify(self.spec, test, self.buf, rec)?;
                }
            }
            out.push(self.stop(test, fd, t0)?);
        }
        Ok(out)
    }

    /// `-i 3`: backwards read. `lseek(-reclen, SEEK_END)` (timed), then per record a read and
    /// `lseek(-2·reclen, SEEK_CUR)`. IOzone runs two passes and reports the first; so does this.
    pub fn backward(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let test = Test::BackwardRead;
        let reclen = self.spec.reclen as i64;
        let n = self.spec.numrecs;
        let mut first = None;
        for _pass in 0..2 {
            let fd = self.open(test, OpenFlags::read_only(self.spec.p.direct))?;
            self.fsync(test, fd, 0)?;
            let t0 = self.start();
            self.io
                .seek(fd, -reclen, Whence::End)
                .map_err(|e| self.err(test, "lseek", 0, 0, e))?;
            for i in 0..n {
                self.ticker.tick(i)?;
                read_exact(self.io, fd, self.buf)
                    .map_err(|e| self.fail(test, "read", fd, i * reclen as u64, e))?;
                if self.spec.p.verify {
                    verify(self.spec, test, self.buf, n - 1 - i)?;
                }
                // IOzone also seeks after the last record; that seek (to -reclen) fails with
                // EINVAL and is ignored, so it is not made here.
                if i + 1 < n {
                    self.io
                        .seek(fd, -2 * reclen, Whence::Cur)
                        .map_err(|e| self.err(test, "lseek", 0, i * reclen as u64, e))?;
                }
            }
            let r = self.stop(test, fd, t0)?;
            first.get_or_insert(r);
        }
        Ok(first.into_iter().collect())
    }

    /// `-i 4`: record rewrite: write record 0 and seek back to 0, n times.
    pub fn record_rewrite(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let test = Test::RecordRewrite;
        let flags = OpenFlags {
            create: true,
            ..self.spec.p.write_flags()
        };
        let fd = self.open(test, flags)?;
        self.fsync(test, fd, 0)?;
        self.buf.fill(self.spec.p.pattern);
        let reclen = self.spec.reclen as u64;
        let t0 = self.start();
        for i in 0..self.spec.numrecs {
            self.ticker.tick(i)?;
            write_all(self.io, fd, self.buf)
                .map_err(|e| self.err(test, "write", 0, i * reclen, e))?;
            self.io
                .seek(fd, 0, Whence::Set)
                .map_err(|e| self.err(test, "lseek", 0, i * reclen, e))?;
        }
        Ok(vec![self.stop(test, fd, t0)?])
    }

    /// `-i 5`: strided read with IOzone's wrap rule (see [`stride_next`]).
    pub fn stride(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let test = Test::StrideRead;
        let fd = self.open(test, OpenFlags::read_only(self.spec.p.direct))?;
        self.fsync(test, fd, 0)?;
        let (reclen, n) = (self.spec.reclen as u64, self.spec.numrecs);
        let mut pos = 0u64;
        let mut wraps = 0u64;
        let t0 = self.start();
        for i in 0..n {
            self.ticker.tick(i)?;
            read_exact(self.io, fd, self.buf)
                .map_err(|e| self.err(test, "read", pos, i * reclen, e))?;
            if self.spec.p.verify {
                verify(self.spec, test, self.buf, pos / reclen)?;
            }
            pos = stride_next(pos, reclen, self.spec.p.stride, n, &mut wraps);
            self.io
                .seek(fd, pos as i64, Whence::Set)
                .map_err(|e| self.err(test, "lseek", pos, i * reclen, e))?;
        }
        Ok(vec![self.stop(test, fd, t0)?])
    }

    /// `-i 6`: fwrite and re-fwrite through a stream with a one-record buffer.
    pub fn fwrite(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let mut out = Vec::new();
        let reclen = self.spec.reclen;
        for test in [Test::Fwrite, Test::Frewrite] {
            // IOzone: "r+" when the file exists (no truncation), else "w+".
            let mode = if test == Test::Fwrite && !self.io.exists(self.spec.path) {
                Mode::Create
            } else {
                Mode::ReadWrite
            };
            let mut st = Stream::open(self.io, self.spec.path, mode, reclen)
                .map_err(|e| self.err(test, "fopen", 0, 0, e))?;
            let fd = st.fd();
            self.fsync(test, fd, 0)?;
            self.buf.fill(self.spec.p.pattern);
            let t0 = self.start();
            for i in 0..self.spec.numrecs {
                self.ticker.tick(i)?;
                st.write(self.io, self.buf)
                    .map_err(|e| self.fail(test, "fwrite", fd, i * reclen as u64, e))?;
            }
            out.push(self.stop_stream(test, st, t0, true)?);
        }
        Ok(out)
    }

    /// End a stream pass started at `t0`: `-e` flushes (and fsyncs a written stream) and
    /// `-c` closes inside the timing; what is left is done after the clock stops.
    fn stop_stream(
        &mut self,
        test: Test,
        mut st: Stream,
        t0: Instant,
        written: bool,
    ) -> anyhow::Result<PassResult> {
        let fd = st.fd();
        let bytes = self.spec.numrecs * self.spec.reclen as u64;
        if self.spec.p.fsync {
            st.flush(self.io)
                .map_err(|e| self.err(test, "fflush", bytes, bytes, e))?;
            if written {
                self.fsync(test, fd, bytes)?;
            }
        }
        let mut st = Some(st);
        if self.spec.p.close {
            if let Some(s) = st.take() {
                s.close(self.io)
                    .map_err(|e| self.err(test, "fclose", bytes, bytes, e))?;
            }
        }
        let elapsed = t0.elapsed();
        self.io.mark(Mark::TimerStop);
        if let Some(mut s) = st {
            if written {
                s.flush(self.io)
                    .map_err(|e| self.err(test, "fflush", bytes, bytes, e))?;
                self.fsync(test, fd, bytes)?;
            }
            s.close(self.io)
                .map_err(|e| self.err(test, "fclose", bytes, bytes, e))?;
        }
        Ok(PassResult {
            test,
            bytes,
            elapsed,
        })
    }

    /// `-i 7`: fread and re-fread through a stream with a one-record buffer.
    pub fn fread(&mut self) -> anyhow::Result<Vec<PassResult>> {
        let mut out = Vec::new();
        let reclen = self.spec.reclen;
        for test in [Test::Fread, Test::Freread] {
            let mut st = Stream::open(self.io, self.spec.path, Mode::Read, reclen)
                .map_err(|e| self.err(test, "fopen", 0, 0, e))?;
            // IOzone opens the file a second time just to fsync it.
            let fd2 = self.open(test, OpenFlags::read_only(false))?;
            self.fsync(test, fd2, 0)?;
            self.close(test, fd2, 0)?;
            let fd = st.fd();
            let t0 = self.start();
            for i in 0..self.spec.numrecs {
                self.ticker.tick(i)?;
                st.read(self.io, self.buf)
                    .map_err(|e| self.fail(test, "fread", fd, i * reclen as u64, e))?;
                if self.spec.p.verify {
                    verify(self.spec, test, self.buf, i)?;
                }
            }
            out.push(self.stop_stream(test, st, t0, false)?);
        }
        Ok(out)
    }

    /// Run the passes of `-i number`.
    pub fn run(&mut self, number: u8) -> anyhow::Result<Vec<PassResult>> {
        match number {
            0 => self.write_rewrite(),
            1 => self.read_reread(),
            2 => self.random(),
            3 => self.backward(),
            4 => self.record_rewrite(),
            5 => self.stride(),
            6 => self.fwrite(),
            7 => self.fread(),
            n => crate::bail_usage!("-i {n} is not one of IOzone's tests 0-7"),
        }
    }
}

/// IOzone's random order: record numbers 0..n shuffled by swapping element `i` with element
/// `genrand64_int64() % n` for every `i`, from MT19937-64 seeded with
/// `init_by_array64({0x12345, 0x23456, 0x34567, 0x45678})`. A permutation, so every record is
/// visited exactly once, and the same on every run.
pub fn permutation(n: u64) -> Vec<u64> {
    let mut mt = rand_mt::Mt64::new_with_key([0x12345u64, 0x23456, 0x34567, 0x45678]);
    let mut v: Vec<u64> = (0..n).collect();
    for i in 0..n as usize {
        let j = (mt.next_u64() % n) as usize;
        v.swap(i, j);
    }
    v
}

/// IOzone's stride rule. After reading the record at `pos`, the next read starts `stride`
/// records further on, unless that would come within one record of the end of the file
/// (`pos + reclen + stride·reclen >= (n-1)·reclen`): then the start moves back to the
/// beginning, one record further on than the previous wrap (record `wraps % n`, or record 0
/// when the file has no more than `stride` records).
pub fn stride_next(pos: u64, reclen: u64, stride: u64, n: u64, wraps: &mut u64) -> u64 {
    let after = pos + reclen;
    if after + stride * reclen >= (n * reclen).saturating_sub(reclen) {
        *wraps += 1;
        if n <= stride {
            0
        } else {
            (*wraps % n) * reclen
        }
    } else {
        after + stride * reclen - reclen
    }
}

#[cfg(test)]
#[path = "passes_tests.rs"]
mod tests;
