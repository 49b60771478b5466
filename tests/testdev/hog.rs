//! A competing writer for interference tests: a thread that writes with O_DIRECT in 256 KiB
//! pieces to a file of the test's, while switched on. O_DIRECT leaves nothing in the page
//! cache to be written back after it is switched off, and a switch lands within one piece.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The writer; it stops and its thread ends when dropped.
pub struct Hog {
    on: Arc<AtomicBool>,
    end: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hog {
    /// A writer to `path` (created), switched off.
    pub fn new(path: &Path) -> Hog {
        let on = Arc::new(AtomicBool::new(false));
        let end = Arc::new(AtomicBool::new(false));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .unwrap();
        let (on2, end2) = (Arc::clone(&on), Arc::clone(&end));
        let thread = std::thread::spawn(move || {
            use std::io::{Seek, SeekFrom, Write};
            let buf = AlignedBuf::new(256 << 10);
            let mut written: u64 = 0;
            while !end2.load(Ordering::SeqCst) {
                if !on2.load(Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                }
                if written >= 1 << 30 {
                    f.seek(SeekFrom::Start(0)).unwrap();
                    written = 0;
                }
                f.write_all(buf.bytes()).unwrap();
                written += buf.bytes().len() as u64;
            }
        });
        Hog {
            on,
            end,
            thread: Some(thread),
        }
    }

    /// Switch it on or off.
    pub fn set(&self, on: bool) {
        self.on.store(on, Ordering::SeqCst);
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.end.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A page-aligned buffer for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: non-zero size, valid alignment; freed in Drop with the same layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        AlignedBuf { ptr, len }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes were allocated and zeroed in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, 4096).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) };
    }
}

// SAFETY: the buffer is only read after creation, by the one thread that owns it.
unsafe impl Send for AlignedBuf {}
