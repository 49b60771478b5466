//! Safety by construction: primitives that make the kernel, not a reading of names, enforce
//! fslab's rules. A leaf: it imports nothing of fslab.
//!
//! * [`cage`]: a program run on a user's behalf or for a cell (fio, mkfs and its relatives)
//!   sees a read-only tree except the directories it may write, no device but
//!   `null`/`zero`/`random`/`urandom` and the cell's own, no process, socket, shared memory
//!   or process group outside its own, none of the capabilities that could undo that, and
//!   dies with fslab;
//! * [`beneath`]: removals and unmounts that resolve their paths beneath a directory fslab
//!   owns without following symbolic links or `..`, and only of the entry recorded;
//! * [`input`]: input files read with a size limit;
//! * [`procs`]: processes by pid and start time, and the caged programs a process started;
//! * [`create_new`]: a file made exclusively, never written through a link.

pub mod beneath;
pub mod cage;
pub mod input;
pub mod procs;

/// Create `p` exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, with `mode`, close-on-exec): a
/// file, or a symbolic link, already there is never written through.
pub fn create_new(p: &std::path::Path, mode: u32) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
}
