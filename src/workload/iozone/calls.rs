//! The calls under every test: IOzone's rate, the error types that name the test, offset and
//! bytes done, full-record `write`/`read` (a short transfer is continued, as a real program
//! must; IOzone treats it as an error), and the progress/Ctrl-C ticker kept out of the
//! per-record fast path.

use super::io::{Fd, Io};
use crate::workload::Observer;
use std::io;
use std::time::Duration;

/// IOzone's rate for `bytes` in `elapsed`: truncated to an integer, then KiB.
pub fn iozone_rate(bytes: u64, elapsed: Duration) -> u64 {
    let secs = elapsed.as_secs_f64().max(1e-9);
    ((bytes as f64 / secs) as u64) >> 10
}

/// A system call failed in a test.
#[derive(Debug, thiserror::Error)]
#[error("{test} test: {op} of {path} at offset {offset} failed after {done} bytes of this pass: {err}{hint}")]
pub struct TestIoError {
    /// The pass.
    pub test: &'static str,
    /// The call (`write`, `read`, `open`, …).
    pub op: &'static str,
    /// The file.
    pub path: String,
    /// The file offset the call was made at.
    pub offset: u64,
    /// Bytes moved in this pass before the failure.
    pub done: u64,
    /// The error.
    pub err: io::Error,
    pub(crate) hint: &'static str,
}

/// `-V` found a byte that is not the pattern.
#[derive(Debug, thiserror::Error)]
#[error("-V: {test} test read wrong data from {path} at byte offset {offset} (record {record}): found 0x{found:02x}, expected 0x{expected:02x}; the file system or device returned corrupt data")]
pub struct VerifyError {
    /// The pass.
    pub test: &'static str,
    /// The file.
    pub path: String,
    /// Byte offset of the first wrong byte.
    pub offset: u64,
    /// The record it is in.
    pub record: u64,
    /// What was read.
    pub found: u8,
    /// The pattern.
    pub expected: u8,
}

/// Largest power of two ≤ `n` (n ≥ 1), minus one: a mask for "every so many records".
pub fn pow2_mask(n: u64) -> u64 {
    (1u64 << (63 - n.max(1).leading_zeros())) - 1
}

/// Progress and Ctrl-C checks every few records, outside the per-record fast path.
pub struct Ticker<'a> {
    obs: &'a dyn Observer,
    mask: u64,
    base: u64,
}

impl<'a> Ticker<'a> {
    /// Check every 2^k records, where 2^k records are about 64 MiB (at most 1024 records).
    pub fn new(obs: &'a dyn Observer, reclen: usize) -> Self {
        let per = ((64u64 << 20) / reclen.max(1) as u64).clamp(1, 1024);
        let mask = pow2_mask(per);
        Ticker { obs, mask, base: 0 }
    }

    /// Records done before this pass (so progress is cumulative over a point).
    pub fn set_base(&mut self, base: u64) {
        self.base = base;
    }

    #[inline(always)]
    pub(crate) fn tick(&self, i: u64) -> anyhow::Result<()> {
        if i & self.mask == 0 {
            self.slow(i)?;
        }
        Ok(())
    }

    #[cold]
    fn slow(&self, i: u64) -> anyhow::Result<()> {
        if crate::signal::interrupted() {
            return Err(anyhow::anyhow!(crate::signal::Interrupted));
        }
        self.obs.progress(self.base + i);
        Ok(())
    }
}

/// Write all of `data` (a short write is continued; a write of 0 bytes is an error).
#[inline]
pub fn write_all<I: Io>(io: &mut I, fd: Fd, data: &[u8]) -> io::Result<()> {
    let n = io.write(fd, data)?;
    if n == data.len() {
        return Ok(());
    }
    write_rest(io, fd, &data[n..])
}

#[cold]
fn write_rest<I: Io>(io: &mut I, fd: Fd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match io.write(fd, data) {
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Read exactly `buf.len()` bytes (IOzone treats a short read as an error).
#[inline]
pub fn read_exact<I: Io>(io: &mut I, fd: Fd, buf: &mut [u8]) -> io::Result<()> {
    let n = io.read(fd, buf)?;
    if n == buf.len() {
        return Ok(());
    }
    read_rest(io, fd, buf, n)
}

#[cold]
fn read_rest<I: Io>(io: &mut I, fd: Fd, buf: &mut [u8], mut got: usize) -> io::Result<()> {
    while got < buf.len() {
        match io.read(fd, &mut buf[got..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the file ended {got} bytes into a record; was it changed or truncated by another program?"),
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
