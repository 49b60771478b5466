//! Words every layer shares, as enums: the cache policy of a repetition, whether a stored
//! entry is a study or an engine run, and what kind of entry a run creates in its target.
//! A leaf: imports nothing of fslab. Each has the one spelling the store, study files and
//! reports use (`as_str`), and reads it back (`parse`); `words!` declares such an enum
//! once, and a word read from a column that takes any word is a [`Stored`].

use serde::{Deserialize, Serialize};

/// An enum of stored words: every value and its one spelling.
pub trait Word: Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];

    /// Its word.
    fn word(self) -> &'static str;
}

/// Declares an enum of words: each value with its one spelling, `ALL`, `as_str`, `parse`,
/// `Display`, comparison with the word, and [`Word`]. The doc comment after the enum is
/// `as_str`'s.
macro_rules! words {
    (
        $(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal),+ $(,)? }
        $(#[$am:meta])* as_str;
    ) => {
        $(#[$m])*
        pub enum $name {
            $($(#[$vm])* $v),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$v),+];

            $(#[$am])*
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s),+
                }
            }

            /// The value stored as `s`, if it is one.
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($s => Some($name::$v),)+
                    _ => None,
                }
            }
        }

        impl $crate::vocab::Word for $name {
            const ALL: &'static [$name] = $name::ALL;
            fn word(self) -> &'static str {
                self.as_str()
            }
        }

        /// Compares with the stored word (handy in tests and queries' results).
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use words;

words! {
    /// What happens to caches before each counted repetition.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum CachePolicy {
        /// `sync`, unmount, drop the page, dentry and inode caches, mount again.
        Cold => "cold",
        /// One discarded repetition first (stored with status `discarded`), then no cache action.
        Warm => "warm",
        /// Nothing.
        None => "none",
        /// A new file system (mkfs and mount) before every counted repetition: no ageing is
        /// carried from one repetition to the next, and the cache is cold as with `cold`.
        Fresh => "fresh",
    }
    /// The study-file word, also stored with every trial.
    as_str;
}

words! {
    /// A stored study (`fslab study run`) or engine run (`fslab fdtree`, …).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "lowercase")]
    pub enum StudyKind {
        /// A study: cells × workloads, resumable.
        #[default]
        Study => "study",
        /// An engine command's run: one target, never resumed.
        Run => "run",
    }
    /// The word stored in `study.kind`.
    as_str;
}

words! {
    /// What kind of entry an engine run creates in its target (and `fslab cleanup` may remove
    /// after a killed run): the removal depends on it, the engine says which it makes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum EntryKind {
        /// A tree the engine records beside itself and removes by its own sweep (fdtree's
        /// `LEVEL0.*`), swept only by the engine's own names.
        Tree => "tree",
        /// One regular file (IOzone's test file).
        File => "file",
        /// A directory the run made, removed whole without crossing a mount (dbench's client
        /// directories, fio's `fslab-fio`).
        Dir => "dir",
    }
    /// The word stored after the engine's name (`fdtree_tree`, `iozone_file`, `fio_dir`).
    as_str;
}

/// A word read back from a column that takes any word (`trial.cache_policy` has no `CHECK`):
/// one of `T`'s, or another kept as it was stored, so that a database holding a word this
/// fslab does not know still loads, shows it and treats it as unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored<T> {
    /// A word of `T`.
    Known(T),
    /// Any other word, as stored.
    Other(String),
}

impl<T: Word> Stored<T> {
    /// `word` as `T` if it is one of its words.
    pub fn read(word: &str) -> Stored<T> {
        match T::ALL.iter().find(|v| v.word() == word) {
            Some(v) => Stored::Known(*v),
            None => Stored::Other(word.to_string()),
        }
    }

    /// The word as stored.
    pub fn as_str(&self) -> &str {
        match self {
            Stored::Known(v) => v.word(),
            Stored::Other(w) => w,
        }
    }

    /// The value, if the word is one of `T`'s.
    pub fn known(&self) -> Option<T> {
        match self {
            Stored::Known(v) => Some(*v),
            Stored::Other(_) => None,
        }
    }
}

/// Reads any word ([`Stored::read`]).
impl<T: Word> From<&str> for Stored<T> {
    fn from(word: &str) -> Stored<T> {
        Stored::read(word)
    }
}

/// Serialized as the word.
impl<T: Word> Serialize for Stored<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Compares with the stored word.
impl<T: Word> PartialEq<&str> for Stored<T> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back() {
        for k in StudyKind::ALL {
            assert_eq!(StudyKind::parse(k.as_str()), Some(*k));
        }
        for k in EntryKind::ALL {
            assert_eq!(EntryKind::parse(k.as_str()), Some(*k));
        }
        assert_eq!(StudyKind::parse("cell"), None);
        assert_eq!(EntryKind::parse("testdir"), None);
        for p in CachePolicy::ALL {
            let json = serde_json::to_string(p).unwrap();
            assert_eq!(json, format!("\"{p}\""));
            assert_eq!(Stored::read(p.as_str()), Stored::Known(*p));
        }
        let p: CachePolicy = serde_json::from_str("\"fresh\"").unwrap();
        assert_eq!(p.as_str(), "fresh");
        assert_eq!(serde_json::to_string(&StudyKind::Run).unwrap(), "\"run\"");
        // A word this fslab does not know is kept, shown and serialized as stored.
        let other = Stored::<CachePolicy>::read("drop");
        assert_eq!((other.known(), other.as_str()), (None, "drop"));
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"drop\"");
    }
}
