//! Words every layer shares, as enums: the cache policy of a repetition, whether a stored
//! entry is a study or an engine run, and what kind of entry a run creates in its target.
//! A leaf: imports nothing of fslab. Each has the one spelling the store, study files and
//! reports use (`as_str`), and reads it back (`parse`).

use serde::{Deserialize, Serialize};

/// What happens to caches before each counted repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// `sync`, unmount, drop the page, dentry and inode caches, mount again.
    Cold,
    /// One discarded repetition first (stored with status `discarded`), then no cache action.
    Warm,
    /// Nothing.
    None,
    /// A new file system (mkfs and mount) before every counted repetition: no ageing is
    /// carried from one repetition to the next, and the cache is cold as with `cold`.
    Fresh,
}

impl CachePolicy {
    /// The study-file word, also stored with every trial.
    pub fn as_str(self) -> &'static str {
        match self {
            CachePolicy::Cold => "cold",
            CachePolicy::Warm => "warm",
            CachePolicy::None => "none",
            CachePolicy::Fresh => "fresh",
        }
    }
}

/// A stored study (`fslab study run`) or engine run (`fslab fdtree`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyKind {
    /// A study: cells × workloads, resumable.
    Study,
    /// An engine command's run: one target, never resumed.
    Run,
}

impl StudyKind {
    /// The word stored in `study.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            StudyKind::Study => "study",
            StudyKind::Run => "run",
        }
    }

    /// The kind stored as `word`.
    pub fn parse(word: &str) -> Option<StudyKind> {
        [StudyKind::Study, StudyKind::Run]
            .into_iter()
            .find(|k| k.as_str() == word)
    }
}

/// What kind of entry an engine run creates in its target (and `fslab cleanup` may remove
/// after a killed run): the removal depends on it, the engine says which it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A tree the engine records beside itself and removes by its own sweep (fdtree's
    /// `LEVEL0.*`), swept only by the engine's own names.
    Tree,
    /// One regular file (IOzone's test file).
    File,
    /// A directory the run made, removed whole without crossing a mount (dbench's client
    /// directories, fio's `fslab-fio`).
    Dir,
}

impl EntryKind {
    /// The word stored after the engine's name (`fdtree_tree`, `iozone_file`, `fio_dir`).
    pub const fn as_str(self) -> &'static str {
        match self {
            EntryKind::Tree => "tree",
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
        }
    }

    /// The kind stored as `word`.
    pub fn parse(word: &str) -> Option<EntryKind> {
        [EntryKind::Tree, EntryKind::File, EntryKind::Dir]
            .into_iter()
            .find(|k| k.as_str() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back() {
        for k in [StudyKind::Study, StudyKind::Run] {
            assert_eq!(StudyKind::parse(k.as_str()), Some(k));
        }
        for k in [EntryKind::Tree, EntryKind::File, EntryKind::Dir] {
            assert_eq!(EntryKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(StudyKind::parse("cell"), None);
        assert_eq!(EntryKind::parse("testdir"), None);
        let p: CachePolicy = serde_json::from_str("\"fresh\"").unwrap();
        assert_eq!(p.as_str(), "fresh");
    }
}
