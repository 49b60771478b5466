//! A user-space buffered stream over [`Io`], standing in for the C library's `FILE *` in
//! IOzone's fwrite/fread tests (`fopen`, `setvbuf(stream, buf, _IOFBF, reclen)`, `fwrite`,
//! `fread`, `fflush`, `fclose`).
//!
//! The buffer holds one record, as IOzone's `setvbuf` gives it. A request at least as large
//! as the buffer, arriving while the buffer is empty, goes straight to `write`/`read` (as
//! glibc's `fread` and Rust's `BufWriter`/`BufReader` do); smaller requests are gathered in
//! the buffer and moved with one call per full buffer. One record per `fwrite` therefore costs
//! one `write(2)` of a record, and nothing is copied twice. (glibc's `fwrite` alternates: it
//! writes every second record directly and copies the other into its buffer first; the
//! system calls, their sizes and offsets are the same.)

use super::io::{Fd, Io, OpenFlags};
use std::io;
use std::path::Path;

/// `fopen` modes IOzone uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `"r"`: read only.
    Read,
    /// `"r+"`: read and write, the file must exist, no truncation.
    ReadWrite,
    /// `"w+"`: read and write, create or truncate.
    Create,
}

/// A fully buffered stream on one descriptor.
pub struct Stream {
    fd: Fd,
    buf: Vec<u8>,
    /// Bytes pending in `buf` (writing) or the end of the valid data (reading).
    len: usize,
    /// Next byte to hand out when reading.
    pos: usize,
    /// Opened for writing (`r+`, `w+`): `fflush` writes the buffer out.
    writing: bool,
}

impl Stream {
    /// `fopen(path, mode)` followed by `setvbuf(_IOFBF, cap)`.
    pub fn open<I: Io>(io: &mut I, path: &Path, mode: Mode, cap: usize) -> io::Result<Stream> {
        let flags = match mode {
            Mode::Read => OpenFlags::read_only(false),
            Mode::ReadWrite => OpenFlags {
                write: true,
                ..Default::default()
            },
            Mode::Create => OpenFlags::CREATE,
        };
        let fd = io.open(path, flags)?;
        Ok(Stream {
            fd,
            // Allocated and touched here, before any timed interval.
            buf: vec![0u8; cap.max(1)],
            len: 0,
            pos: 0,
            writing: mode != Mode::Read,
        })
    }

    /// `fileno(stream)`.
    pub fn fd(&self) -> Fd {
        self.fd
    }

    /// `fwrite(data, len, 1, stream)`: all of `data` or an error.
    #[inline]
    pub fn write<I: Io>(&mut self, io: &mut I, mut data: &[u8]) -> io::Result<()> {
        let cap = self.buf.len();
        if self.len == 0 && data.len() >= cap {
            return super::passes::write_all(io, self.fd, data);
        }
        while !data.is_empty() {
            let n = (cap - self.len).min(data.len());
            self.buf[self.len..self.len + n].copy_from_slice(&data[..n]);
            self.len += n;
            data = &data[n..];
            if self.len == cap {
                self.flush(io)?;
                if data.len() >= cap {
                    return super::passes::write_all(io, self.fd, data);
                }
            }
        }
        Ok(())
    }

    /// `fread(out, len, 1, stream)`: fills all of `out`, or returns the bytes it got before
    /// the end of the file as an `UnexpectedEof` error.
    #[inline]
    pub fn read<I: Io>(&mut self, io: &mut I, out: &mut [u8]) -> io::Result<()> {
        let cap = self.buf.len();
        let mut done = 0;
        while done < out.len() {
            if self.pos < self.len {
                let n = (self.len - self.pos).min(out.len() - done);
                out[done..done + n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
                done += n;
                continue;
            }
            let want = out.len() - done;
            if want >= cap {
                // Large request, empty buffer: straight into the caller's memory.
                let n = io.read(self.fd, &mut out[done..])?;
                if n == 0 {
                    return Err(eof(done));
                }
                done += n;
            } else {
                let n = io.read(self.fd, &mut self.buf)?;
                if n == 0 {
                    return Err(eof(done));
                }
                self.pos = 0;
                self.len = n;
            }
        }
        Ok(())
    }

    /// `fflush(stream)`: write out what is buffered (a write stream) or drop read-ahead.
    pub fn flush<I: Io>(&mut self, io: &mut I) -> io::Result<()> {
        if self.writing && self.len > 0 {
            let r = super::passes::write_all(io, self.fd, &self.buf[..self.len]);
            self.len = 0;
            return r;
        }
        self.pos = 0;
        self.len = 0;
        Ok(())
    }

    /// `fclose(stream)`: flush, then close the descriptor.
    pub fn close<I: Io>(mut self, io: &mut I) -> io::Result<()> {
        let flushed = self.flush(io);
        let closed = io.close(self.fd);
        flushed.and(closed)
    }
}

fn eof(got: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("end of file after {got} bytes of the record"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::iozone::recording::{Op, RecordingIo};
    use std::path::Path;

    #[test]
    fn buffered_stream_gathers_small_writes_into_record_sized_calls() {
        let mut io = RecordingIo::new();
        let mut st = Stream::open(&mut io, Path::new("/t/stream"), Mode::Create, 4096).unwrap();
        for _ in 0..5 {
            st.write(&mut io, &[1u8; 1000]).unwrap();
        }
        st.close(&mut io).unwrap();
        let w: Vec<(u64, usize)> = io
            .ops
            .iter()
            .filter_map(|o| match o {
                Op::Write { offset, len, .. } => Some((*offset, *len)),
                _ => None,
            })
            .collect();
        assert_eq!(w, [(0, 4096), (4096, 904)]);
        let mut st = Stream::open(&mut io, Path::new("/t/stream"), Mode::Read, 4096).unwrap();
        let mut b = [0u8; 1000];
        for _ in 0..5 {
            st.read(&mut io, &mut b).unwrap();
        }
        assert!(st.read(&mut io, &mut b).is_err(), "end of file");
    }
}
