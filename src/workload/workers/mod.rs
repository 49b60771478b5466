//! Worker threads that own their kernel state, as the tools fslab replaces give their
//! workers by running them as processes (dbench's clients, MPI ranks, IOzone's
//! throughput children, fdtree.bash's forks). doc/architecture.md, "Workers own their kernel
//! state", has the measurements behind this.
//!
//! Threads of one process share one file-descriptor table. Every `open` and `close` takes
//! that table's lock, and while the table has more than one user every system call on a
//! descriptor takes and drops a reference on the open file (the kernel's `fdget` skips that
//! only for a table with a single user). On 16 cores, 16 threads doing open/write/close
//! reached 473k files/s sharing a table, 733k when each first unshared it, 743k as
//! processes: a tool whose workers share the table measures its own lock. So every worker
//! started here calls `unshare(CLONE_FILES)` before anything else; from then on its table is
//! a copy of its own, and what it opens nobody else can see or contend for.
//!
//! Threads rather than processes: the copy gives the same table per worker as a fork (the
//! 1.3% between the two is within the run-to-run noise of that measurement) while memory
//! stays shared, so results, histograms and progress slots need no pipes or shared mappings.
//! A worker must therefore never hand a descriptor it opened to another thread (the number
//! means nothing in the other's table); every engine's worker opens what it uses itself.
//!
//! Progress counters a worker writes in its hot path live in [`Tally`]: one cache line per
//! worker, summed by whoever reads them, so no line written by one worker is written by
//! another.

mod gate;

pub use gate::{PhaseGate, Seen};

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{Scope, ScopedJoinHandle};

/// Give the calling thread its own copy of the file-descriptor table.
pub fn own_file_table() -> io::Result<()> {
    rustix::thread::unshare(rustix::thread::UnshareFlags::FILES).map_err(io::Error::from)
}

/// Whether threads (or processes) `a` and `b` share one file-descriptor table, as the kernel
/// answers it (`kcmp(a, b, KCMP_FILES)`): the proof, in the tests, that workers own theirs.
/// Needs a kernel with `CONFIG_KCMP` and the right to inspect both (same user, or root).
pub fn same_file_table(a: i32, b: i32) -> io::Result<bool> {
    const KCMP_FILES: libc::c_long = 2;
    // SAFETY: kcmp reads no memory of ours; the ids are plain integers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            libc::c_long::from(a),
            libc::c_long::from(b),
            KCMP_FILES,
            0 as libc::c_long,
            0 as libc::c_long,
        )
    };
    match r {
        0 => Ok(true),
        1..=3 => Ok(false),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Start a worker named `name` in `scope`: it gives itself its own file-descriptor table
/// ([`own_file_table`]), then runs `f`. Where the system refuses `unshare` (a seccomp
/// filter, as containers have by default), the worker runs with the shared table; every run
/// records whether workers can have their own (`worker_file_tables` in the environment,
/// `sysinfo::worker_file_tables`) and the reports warn when they could not.
pub fn spawn<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    name: String,
    f: F,
) -> io::Result<ScopedJoinHandle<'scope, T>>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    let name = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a worker name holds NUL"))?;
    std::thread::Builder::new().spawn_scoped(scope, move || {
        // Refused only by a seccomp filter or out of memory, the same for every worker;
        // the environment records it and the reports say so.
        let _ = own_file_table();
        // Named only now: a thread seen under a worker's name owns its table already
        // (named by the builder, it was visible under the name before it unshared).
        // SAFETY: PR_SET_NAME reads a NUL-terminated string (the kernel keeps 15 bytes).
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
        f()
    })
}

/// The start line of [`spawn_all`]: `Some(true)` when every worker started, `Some(false)`
/// when one could not be and none may run.
#[derive(Default)]
struct StartLine {
    state: Mutex<Option<bool>>,
    cv: Condvar,
}

impl StartLine {
    fn wait(&self) -> bool {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let g = self.cv.wait_while(g, |s| s.is_none());
        *g.unwrap_or_else(|p| p.into_inner()) == Some(true)
    }

    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.cv.notify_all();
    }
}

/// Start `n` workers (worker `i` named `name(i)`, [`spawn`]), each running `f(i)` once all
/// of them have started. If one cannot be started, none runs `f`: the started ones end and
/// the error names the worker, so no worker waits at a gate sized for workers that never
/// came.
pub fn spawn_all<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    n: usize,
    name: impl Fn(usize) -> String,
    f: F,
) -> anyhow::Result<Vec<ScopedJoinHandle<'scope, Option<T>>>>
where
    F: Fn(usize) -> T + Clone + Send + 'scope,
    T: Send + 'scope,
{
    let line = Arc::new(StartLine::default());
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let (mine, f) = (Arc::clone(&line), f.clone());
        match spawn(scope, name(i), move || mine.wait().then(|| f(i))) {
            Ok(h) => handles.push(h),
            Err(e) => {
                line.open(false);
                for h in handles {
                    let _ = h.join();
                }
                return Err(anyhow::anyhow!("cannot start worker thread {i}: {e}"));
            }
        }
    }
    line.open(true);
    Ok(handles)
}

/// The first error of a run's workers and coordinator, kept for the end of the run (the
/// later ones are most often its consequences).
#[derive(Debug, Default)]
pub struct FirstError(Mutex<Option<anyhow::Error>>);

impl FirstError {
    /// Keep `e` unless an error came before it.
    pub fn note(&self, e: anyhow::Error) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert(e);
    }

    /// The error kept, if any.
    pub fn into_result(self) -> anyhow::Result<()> {
        self.0
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .map_or(Ok(()), Err)
    }
}

/// One counter per worker, each on a cache line of its own (128 bytes: two lines on CPUs
/// whose prefetcher fetches lines in pairs).
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// Per-worker progress counters: worker `i` adds to its own line, readers sum them.
pub struct Tally {
    slots: Vec<Padded>,
}

impl Tally {
    /// Counters for `workers` workers, all zero.
    pub fn new(workers: usize) -> Tally {
        Tally {
            slots: (0..workers.max(1)).map(|_| Padded::default()).collect(),
        }
    }

    /// Worker `i`'s counter.
    pub fn slot(&self, i: usize) -> &AtomicU64 {
        &self.slots[i % self.slots.len()].0
    }

    /// The sum of every worker's counter.
    pub fn total(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }

    /// Set every counter to zero (between phases, while no worker counts).
    pub fn reset(&self) {
        for s in &self.slots {
            s.0.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    fn same_table(a: i32, b: i32) -> bool {
        same_file_table(a, b).expect("kcmp(KCMP_FILES)")
    }

    fn tid() -> i32 {
        rustix::thread::gettid().as_raw_nonzero().get()
    }

    #[test]
    fn workers_differ_from_each_other_and_main_while_a_plain_thread_shares() {
        let main = tid();
        let ready = Barrier::new(4);
        let checked = Barrier::new(4);
        let out = std::sync::Mutex::new(Vec::new());
        let plain_id = std::sync::Mutex::new(0);
        std::thread::scope(|s| {
            for i in 0..2 {
                let (ready, checked, out) = (&ready, &checked, &out);
                spawn(s, format!("test-k{i}"), move || {
                    out.lock().unwrap().push(tid());
                    ready.wait();
                    checked.wait();
                })
                .unwrap();
            }
            let (r, c, pid) = (&ready, &checked, &plain_id);
            s.spawn(move || {
                *pid.lock().unwrap() = tid();
                r.wait();
                c.wait();
            });
            ready.wait();
            // Every thread is alive until `checked`: their ids name them.
            let ids = out.lock().unwrap().clone();
            let plain = *plain_id.lock().unwrap();
            let workers = (
                same_table(ids[0], ids[1]),
                same_table(ids[0], main),
                same_table(ids[1], main),
            );
            // The same check sees a shared table: a plain thread's.
            let plain_shares = same_table(plain, main);
            checked.wait();
            assert_eq!(
                workers,
                (false, false, false),
                "workers {ids:?}, main {main}"
            );
            assert!(
                plain_shares,
                "a plain thread shares the main thread's table"
            );
        });
    }

    #[test]
    fn what_a_worker_opens_is_not_in_the_main_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opened-by-a-worker");
        std::fs::write(&path, b"x").unwrap();
        let fd = std::thread::scope(|s| {
            let path = &path;
            spawn(s, "test-open".into(), move || {
                use std::os::fd::IntoRawFd;
                // Leaked on purpose: it lives in the worker's table, which ends with it.
                std::fs::File::open(path).unwrap().into_raw_fd()
            })
            .unwrap()
            .join()
            .unwrap()
        });
        // Another thread of the test binary may have reused the number meanwhile, for
        // something else; never for the worker's file.
        let here = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
        assert_ne!(here, path);
    }

    #[test]
    fn tally_sums_per_worker_lines() {
        let t = Tally::new(3);
        t.slot(0).fetch_add(5, Ordering::Relaxed);
        t.slot(2).fetch_add(7, Ordering::Relaxed);
        assert_eq!(t.total(), 12);
        let a = t.slot(0) as *const AtomicU64 as usize;
        let b = t.slot(1) as *const AtomicU64 as usize;
        assert!(b - a >= 128, "each counter on its own cache lines");
        t.reset();
        assert_eq!(t.total(), 0);
    }
}
