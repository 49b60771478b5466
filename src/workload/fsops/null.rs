//! [`NullOps`]: the same walks with no system calls, to measure an engine's own cost.

use super::{CreateHow, Kind, Ops};
use std::ffi::CStr;
use std::hint::black_box;
use std::io;

/// No system calls at all. Every operation succeeds; `stat` reports a regular file and
/// `read_file` the bytes asked for.
pub struct NullOps;

impl Ops for NullOps {
    type Dir = ();

    #[inline]
    fn mkdir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        black_box(name);
        Ok(())
    }
    #[inline]
    fn rmdir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        black_box(name);
        Ok(())
    }
    #[inline]
    fn open_dir(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        black_box(name);
        Ok(())
    }
    #[inline]
    fn create(&mut self, _: &(), name: &CStr, how: CreateHow) -> io::Result<()> {
        black_box((name, how));
        Ok(())
    }
    #[inline]
    fn read_file(&mut self, _: &(), name: &CStr, bytes: u64) -> io::Result<u64> {
        black_box(name);
        Ok(black_box(bytes))
    }
    #[inline]
    fn stat(&mut self, _: &(), name: &CStr) -> io::Result<Kind> {
        black_box(name);
        Ok(Kind::File)
    }
    #[inline]
    fn rename(&mut self, _: &(), from: &CStr, _: &(), to: &CStr) -> io::Result<()> {
        black_box((from, to));
        Ok(())
    }
    #[inline]
    fn unlink(&mut self, _: &(), name: &CStr) -> io::Result<()> {
        black_box(name);
        Ok(())
    }
}
