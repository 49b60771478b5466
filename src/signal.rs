//! Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped ssh session) handling: a
//! process-wide "stop" flag that long loops poll.
//!
//! The first signal sets the flag so engines stop at the next safe point, remove what they
//! created and keep completed repetitions. A second signal terminates at once (exit 130).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Install the handlers for SIGINT, SIGTERM and SIGHUP. Safe to call more than once.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    // Under `nohup` (SIGHUP ignored) a hangup is not a stop request.
    let hup = !ignored(SIGHUP);
    for sig in [SIGINT, SIGTERM].into_iter().chain(hup.then_some(SIGHUP)) {
        if sig == SIGHUP {
            // The terminal is gone: its descriptors now fail every write (EIO), and a
            // failed write to stderr must not cut the tear-down short. They are pointed at
            // /dev/null; output to files and pipes is left as it is.
            // SAFETY: the handler makes only async-signal-safe system calls.
            unsafe {
                signal_hook::low_level::register(SIGHUP, silence_terminal)?;
            }
        }
        // A second signal while the flag is already set exits immediately.
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag().clone())?;
        signal_hook::flag::register(sig, flag().clone())?;
    }
    let _ = INSTALLED.set(());
    Ok(())
}

/// Whether `sig` is ignored (inherited `SIG_IGN`, as `nohup` sets for SIGHUP).
fn ignored(sig: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Point standard input, output and error at /dev/null where they are a terminal.
fn silence_terminal() {
    // SAFETY: open, isatty (an ioctl), dup2 and close are async-signal-safe.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in 0..3 {
            if libc::isatty(fd) == 1 {
                libc::dup2(null, fd);
            }
        }
        libc::close(null);
    }
}

/// True once the user asked to stop.
#[inline]
pub fn interrupted() -> bool {
    flag().load(Ordering::Relaxed)
}

/// The error returned by engines that stopped because of [`interrupted`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted by signal; partial work was removed and completed repetitions were kept")]
pub struct Interrupted;
