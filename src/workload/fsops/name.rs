//! A reusable C-string builder for entry names and short relative paths: the engines build
//! millions of names (`file.item.0.123456`, `L3F10`) and must not allocate for each.

use std::ffi::CStr;

/// A NUL-terminated name built in place. The buffer keeps its capacity between names, so
/// after the first few names building one allocates nothing.
#[derive(Debug, Clone)]
pub struct NameBuf {
    /// Always ends with exactly one NUL, which no pushed text contains.
    buf: Vec<u8>,
}

impl Default for NameBuf {
    fn default() -> Self {
        NameBuf::new()
    }
}

/// `v` in decimal, written without allocation at the end of `tmp`.
#[inline]
pub fn decimal(mut v: u64, tmp: &mut [u8; 20]) -> &[u8] {
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &tmp[i..]
}

impl NameBuf {
    /// An empty name.
    pub fn new() -> NameBuf {
        let mut buf = Vec::with_capacity(64);
        buf.push(0);
        NameBuf { buf }
    }

    /// Length in bytes (without the NUL).
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() - 1
    }

    /// True when nothing was pushed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forget everything after the first `len` bytes (a mark taken with [`NameBuf::len`]).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.buf.truncate(len);
            self.buf.push(0);
        }
    }

    /// Empty the name.
    #[inline]
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Append text. A NUL in `s` is dropped (names never contain one).
    #[inline]
    pub fn push_str(&mut self, s: &str) {
        self.buf.pop();
        self.buf.extend(s.bytes().filter(|&b| b != 0));
        self.buf.push(0);
    }

    /// Append another name (`/` and the like are the caller's to add).
    #[inline]
    pub fn push_name(&mut self, other: &NameBuf) {
        self.buf.pop();
        self.buf.extend_from_slice(&other.buf[..other.len()]);
        self.buf.push(0);
    }

    /// Append `v` in decimal.
    #[inline]
    pub fn push_u64(&mut self, v: u64) {
        let mut tmp = [0u8; 20];
        self.buf.pop();
        self.buf.extend_from_slice(decimal(v, &mut tmp));
        self.buf.push(0);
    }

    /// The name as a C string.
    #[inline]
    pub fn as_cstr(&self) -> &CStr {
        // The buffer holds exactly one NUL, at its end.
        CStr::from_bytes_with_nul(&self.buf).unwrap_or(c"")
    }

    /// The name as text (for messages).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len()]).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_names_and_truncates_to_a_mark() {
        let mut n = NameBuf::new();
        assert!(n.is_empty());
        n.push_str("file.item.");
        n.push_u64(0);
        n.push_str(".");
        let mark = n.len();
        n.push_u64(18_446_744_073_709_551_615);
        assert_eq!(n.as_str(), "file.item.0.18446744073709551615");
        assert_eq!(n.as_cstr().to_bytes(), b"file.item.0.18446744073709551615");
        n.truncate(mark);
        n.push_u64(42);
        assert_eq!(n.as_cstr().to_bytes(), b"file.item.0.42");
        let mut m = NameBuf::new();
        m.push_str("d/");
        m.push_name(&n);
        assert_eq!(m.as_cstr().to_bytes(), b"d/file.item.0.42");
        n.push_str("a\0b");
        assert_eq!(n.as_str(), "file.item.0.42ab");
        n.clear();
        assert_eq!(n.as_cstr().to_bytes(), b"");
    }
}
