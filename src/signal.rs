//! Ctrl-C and SIGTERM handling: a process-wide "stop" flag that long loops poll.
//!
//! The first signal sets the flag so engines stop at the next safe point, remove what they
//! created and keep completed repetitions. A second signal terminates at once (exit 130).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Install the handlers for SIGINT and SIGTERM. Safe to call more than once.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    for sig in [SIGINT, SIGTERM] {
        // A second signal while the flag is already set exits immediately.
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag().clone())?;
        signal_hook::flag::register(sig, flag().clone())?;
    }
    let _ = INSTALLED.set(());
    Ok(())
}

/// True once the user asked to stop.
#[inline]
pub fn interrupted() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Raise the stop flag from inside the program (tests, stonewalling of a whole run).
pub fn request_stop() {
    flag().store(true, Ordering::Relaxed);
}

/// The error returned by engines that stopped because of [`interrupted`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted by signal; partial work was removed and completed repetitions were kept")]
pub struct Interrupted;
