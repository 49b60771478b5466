//! Error kinds that decide the exit code.
//!
//! `main` maps errors to exit codes: 0 success, 1 some study cells failed, 2 bad input or
//! any other error, 130 interrupted. Messages are one line and name the fix.

/// Bad input from the user: a flag value, a file, a target that cannot be used.
/// Always exit code 2; the message names the problem and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Build a [`UsageError`] wrapped in `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// Return early with a [`UsageError`].
#[macro_export]
macro_rules! bail_usage {
    ($($arg:tt)*) => {
        return Err($crate::error::usage(format!($($arg)*)))
    };
}

/// Some study cells failed while others succeeded (exit code 1).
#[derive(Debug, thiserror::Error)]
#[error("{failed} of {total} cells failed; see the errors above and `fslab show {study}`")]
pub struct CellsFailed {
    /// Number of failed cells.
    pub failed: usize,
    /// Number of cells in the study.
    pub total: usize,
    /// The study id in the store.
    pub study: i64,
}

/// An error that several processes (MPI ranks) agreed on: every rank exits with `code`;
/// rank 0 prints `message` for all of them, the others carry an empty message and print
/// nothing (see `src/dist`).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Collective {
    /// Exit code of every rank.
    pub code: u8,
    /// What rank 0 prints; empty on the other ranks.
    pub message: String,
}

/// Exit code for an error chain.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if let Some(c) = err.downcast_ref::<Collective>() {
        c.code
    } else if err.downcast_ref::<CellsFailed>().is_some() {
        1
    } else if err.chain().any(|e| e.is::<crate::signal::Interrupted>()) {
        130
    } else {
        2
    }
}
