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
//! * [`procs`]: processes by pid and start time, and the caged programs a process started.

pub mod beneath;
pub mod cage;
pub mod input;
pub mod procs;
