//! Mapping fslab's own machine code before anything is timed.
//!
//! The first call of a function whose page of machine code was never run costs a page fault
//! (a few microseconds: the kernel maps the page from the page cache). A phase that lasts
//! microseconds — a metadata engine's tree creation of one directory — would time that
//! fault, not the file system: measured on tmpfs, 10.6 µs with it against 5 µs for the tool
//! it replaces, and 5 µs without it (bench/RESULTS.md). [`map_own_code`] maps every page of the executable's code once per process,
//! before the first timed phase, so no phase pays for running code for the first time.

use std::sync::Once;

/// Map every page of this executable's machine code (once per process; errors are ignored:
/// a page not mapped now is mapped when first run, as without this call).
pub fn map_own_code() {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        let (Ok(exe), Ok(maps)) = (
            std::fs::read_link("/proc/self/exe"),
            std::fs::read_to_string("/proc/self/maps"),
        ) else {
            return;
        };
        for (start, end) in code_ranges(&maps, &exe.to_string_lossy()) {
            populate(start, end);
        }
    });
}

/// The executable code ranges (`r-xp`) of `exe` in a `/proc/self/maps` text.
pub fn code_ranges(maps: &str, exe: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?);
            let path = f.nth(3)?;
            if !perms.starts_with("r-x") || path != exe {
                return None;
            }
            let (a, b) = range.split_once('-')?;
            let a = usize::from_str_radix(a, 16).ok()?;
            let b = usize::from_str_radix(b, 16).ok()?;
            (a < b).then_some((a, b))
        })
        .collect()
}

/// Map the pages of `[start, end)`: `MADV_POPULATE_READ` (Linux 5.14), else a read of one
/// byte per page.
fn populate(start: usize, end: usize) {
    // SAFETY: the range is a readable mapping of this process's executable, as
    // /proc/self/maps lists it; madvise only maps its pages, and the reads below read bytes
    // of that mapping without keeping references.
    unsafe {
        let addr = start as *mut libc::c_void;
        if libc::madvise(addr, end - start, libc::MADV_POPULATE_READ) == 0 {
            return;
        }
        for page in (start..end).step_by(4096) {
            std::ptr::read_volatile(page as *const u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_executables_code_is_chosen() {
        let maps = "\
55d0a0000000-55d0a0100000 r--p 00000000 fd:01 123 /usr/bin/fslab
55d0a0100000-55d0a0900000 r-xp 00100000 fd:01 123 /usr/bin/fslab
55d0a0900000-55d0a0a00000 r--p 00900000 fd:01 123 /usr/bin/fslab
7f0000000000-7f0000100000 r-xp 00000000 fd:01 456 /usr/lib/libc.so.6
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]
";
        assert_eq!(
            code_ranges(maps, "/usr/bin/fslab"),
            vec![(0x55d0a0100000, 0x55d0a0900000)]
        );
        assert!(code_ranges(maps, "/usr/bin/other").is_empty());
    }

    #[test]
    fn this_process_has_code_to_map_and_mapping_it_twice_is_harmless() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(!code_ranges(&maps, &exe.to_string_lossy()).is_empty());
        map_own_code();
        map_own_code();
    }
}
