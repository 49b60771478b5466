//! fdtree's four timed phases, in the order `fdtree.bash` runs them, and what each one does.
//! Code dispatches on [`Phase`]; the names stored as metric phases are [`Phase::as_str`].

use crate::metric::Unit;
use std::fmt;

/// One of fdtree's timed phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Make the directory tree (`mkdir`), level by level.
    DirCreate,
    /// Create and write the files in every directory.
    FileCreate,
    /// Remove the files.
    FileRemove,
    /// Remove the directories, deepest first, and the root.
    DirRemove,
}

/// The four phases, in the order they run.
pub const PHASES: [Phase; 4] = [
    Phase::DirCreate,
    Phase::FileCreate,
    Phase::FileRemove,
    Phase::DirRemove,
];

impl Phase {
    /// Per phase, in the order of [`PHASES`]: the stored name, fdtree.bash's name for it in
    /// its report and the words of its rate line there (padded as fdtree.bash pads them).
    const TEXT: [(&'static str, &'static str, &'static str); 4] = [
        (
            "dir_create",
            "DIRECTORY CREATE",
            "Directory creates per second",
        ),
        ("file_create", "FILE CREATE", "File creates per second     "),
        ("file_remove", "FILE REMOVE", "File removals per second    "),
        (
            "dir_remove",
            "DIRECTORY REMOVE",
            "Directory removals per second",
        ),
    ];

    /// The stored name, used as the metric phase (`dir_create`, …).
    pub const fn as_str(self) -> &'static str {
        Self::TEXT[self as usize].0
    }

    /// fdtree.bash's name for the phase in its report (`DIRECTORY CREATE`, …).
    pub const fn label(self) -> &'static str {
        Self::TEXT[self as usize].1
    }

    /// fdtree.bash's words for the phase's rate in its report (`Directory creates per second`).
    pub const fn rate_words(self) -> &'static str {
        Self::TEXT[self as usize].2
    }

    /// The phase with the stored name `name`, if it is one.
    pub fn of(name: &str) -> Option<Phase> {
        PHASES.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether the phase works on directories (else on files).
    pub const fn on_dirs(self) -> bool {
        matches!(self, Phase::DirCreate | Phase::DirRemove)
    }

    /// Whether the phase writes file data (and so has a throughput besides its rate).
    pub const fn writes_data(self) -> bool {
        matches!(self, Phase::FileCreate)
    }

    /// The unit of the phase's rate.
    pub const fn rate_unit(self) -> Unit {
        if self.on_dirs() {
            Unit::DirsPerSec
        } else {
            Unit::FilesPerSec
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_stay_as_stored() {
        let names: Vec<&str> = PHASES.iter().map(|p| p.as_str()).collect();
        assert_eq!(
            names,
            ["dir_create", "file_create", "file_remove", "dir_remove"]
        );
        for p in PHASES {
            assert_eq!(Phase::of(p.as_str()), Some(p));
            assert_eq!(p.to_string(), p.as_str());
        }
        assert_eq!(Phase::of("dir"), None);
        let dirs: Vec<bool> = PHASES.iter().map(|p| p.on_dirs()).collect();
        assert_eq!(dirs, [true, false, false, true]);
    }
}
