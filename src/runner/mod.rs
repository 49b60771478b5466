//! Running workloads: single engine commands (`adhoc`) and whole studies (`study`), with the
//! cache policy, execution order, environment capture and progress display they use.

pub mod cache;
pub mod env;
pub mod guest;
pub mod leftovers;
pub mod order;
pub mod phase_bar;
pub mod progress;
pub mod progress_text;
pub mod progress_wire;
pub mod repetition;
pub mod series;
pub mod study;
/// Engine commands, one-cell studies of a directory run by the study's loop.
pub use study::command as adhoc;
pub mod telemetry;

/// The value behind `m`, even if a thread panicked holding it.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
