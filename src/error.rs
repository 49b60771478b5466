//! Error kinds that decide the exit code.
//!
//! `main` maps errors to exit codes: 0 success, 1 a run failed while running (some study
//! cells, or an engine command's repetition: [`RunFailed`]), 2 bad input or any other error,
//! 130 interrupted. Messages are one line and name the fix.

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

/// An engine command's repetition failed while it ran (fio failed, a write gave EIO or
/// EFBIG, a dbench expectation did not hold): exit code 1, as a study whose cells failed.
/// Bad input found before or during the run stays a [`UsageError`] (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RunFailed(pub String);

/// The error that ended an engine command's run, marked [`RunFailed`] unless it is bad
/// input ([`UsageError`]), an interruption or an MPI verdict, which keep their own codes.
pub fn runtime(e: anyhow::Error) -> anyhow::Error {
    let keeps_code = e.chain().any(|c| {
        c.is::<UsageError>() || c.is::<crate::signal::Interrupted>() || c.is::<Collective>()
    });
    if keeps_code {
        e
    } else {
        anyhow::Error::new(RunFailed(format!("{e:#}")))
    }
}

/// An error that several processes (MPI ranks) agreed on: every rank exits with `code`;
/// rank 0 prints `message` for all of them, the others carry an empty message and print
/// nothing (see `src/mpi`).
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
    } else if err.downcast_ref::<CellsFailed>().is_some() || err.is::<RunFailed>() {
        1
    } else if err.chain().any(|e| e.is::<crate::signal::Interrupted>()) {
        130
    } else {
        2
    }
}
