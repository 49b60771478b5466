//! The operations of dbench's `fileio` back end and the expected-status column of an NBENCH
//! loadfile.
//!
//! Each operation has two spellings: the loadfile's (`QUERY_PATH_INFORMATION`, as in dbench's
//! `fileio.c` and `client.txt`; matched case-insensitively as dbench 5 does) and the one
//! dbench 4.0 prints in its summary table (`Qpathinfo`, from the `op_names` table of its
//! `dbench.c`). Everything fslab prints or stores names an operation the dbench 4.0 way;
//! the loadfile spelling is for reading loadfiles and for messages quoting a loadfile line. A status is `NT_STATUS_<NAME>`, a hexadecimal
//! NTSTATUS (`0x00000000`, `0xc0000034`), `SUCCESS`, `ERROR` or `*` (any outcome).
//!
//! dbench itself only distinguishes "success" from "failure" and ignores the status of most
//! operations; fslab checks every operation. A POSIX file system cannot reproduce every NT
//! status, so a failure status is compared by class: the "not found" statuses require
//! `ENOENT`/`ENOTDIR`, `OBJECT_NAME_COLLISION` requires `EEXIST`, and so on; failure statuses
//! without a POSIX counterpart accept any error.

use std::fmt;

/// Declares [`OpKind`] once: each kind with its loadfile name, the name dbench 4.0 prints
/// and its arguments, from which `ALL`, `name`, `display_name` and `usage` are made.
macro_rules! op_kinds {
    ($($(#[$doc:meta])* $v:ident => $name:literal, $shown:literal, $usage:literal;)+) => {
        /// One operation of dbench's file back end.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $($(#[$doc])* $v,)+
        }

        impl OpKind {
            /// Number of operation kinds.
            pub const COUNT: usize = [$(stringify!($v)),+].len();

            /// All kinds, in dbench's report order.
            pub const ALL: [OpKind; OpKind::COUNT] = [$(OpKind::$v),+];

            /// The name as written in loadfiles (`QUERY_PATH_INFORMATION`); messages about a
            /// loadfile line use it. Reports, stored phases and JSON use
            /// [`OpKind::display_name`].
            pub fn name(self) -> &'static str {
                match self {
                    $(OpKind::$v => $name,)+
                }
            }

            /// The name dbench 4.0 prints in its summary table (`Qpathinfo` for
            /// QUERY_PATH_INFORMATION, `Find` for FIND_FIRST, …; the loadfile name where
            /// dbench prints that): the one spelling of fslab's engine table, stored phases,
            /// reports and JSON.
            pub fn display_name(self) -> &'static str {
                match self {
                    $(OpKind::$v => $shown,)+
                }
            }

            /// The arguments between the operation name and the status, for messages
            /// (`[…]`: optional).
            pub fn usage(self) -> &'static str {
                match self {
                    $(OpKind::$v => $usage,)+
                }
            }
        }
    };
}

op_kinds! {
    /// Open or create a file or directory and bind it to a handle.
    NtCreateX => "NTCreateX", "NTCreateX", "PATH CREATE_OPTIONS DISPOSITION HANDLE";
    /// Close a handle.
    Close => "Close", "Close", "HANDLE";
    /// Rename a path.
    Rename => "Rename", "Rename", "OLD_PATH NEW_PATH";
    /// Remove a file.
    Unlink => "Unlink", "Unlink", "PATH [ATTRIBUTES]";
    /// Remove a directory tree (at the start of each pass in dbench's loadfiles).
    Deltree => "Deltree", "Deltree", "PATH";
    /// Remove an empty directory.
    Rmdir => "Rmdir", "Rmdir", "PATH";
    /// Create a directory.
    Mkdir => "Mkdir", "Mkdir", "PATH";
    /// Look a path up (stat, then a case-insensitive directory scan).
    QueryPathInformation => "QUERY_PATH_INFORMATION", "Qpathinfo", "PATH LEVEL";
    /// fstat a handle.
    QueryFileInformation => "QUERY_FILE_INFORMATION", "Qfileinfo", "HANDLE LEVEL";
    /// statvfs of the target.
    QueryFsInformation => "QUERY_FS_INFORMATION", "Qfsinfo", "LEVEL";
    /// Set the times of a handle.
    SetFileInformation => "SET_FILE_INFORMATION", "Sfileinfo", "HANDLE LEVEL";
    /// List a directory, optionally with a wildcard pattern.
    FindFirst => "FIND_FIRST", "Find", "PATTERN LEVEL MAXCOUNT COUNT";
    /// pwrite on a handle.
    WriteX => "WriteX", "WriteX", "HANDLE OFFSET SIZE RETURNED_SIZE";
    /// pread on a handle.
    ReadX => "ReadX", "ReadX", "HANDLE OFFSET SIZE RETURNED_SIZE";
    /// Take a byte-range lock.
    LockX => "LockX", "LockX", "HANDLE OFFSET LENGTH";
    /// Release a byte-range lock.
    UnlockX => "UnlockX", "UnlockX", "HANDLE OFFSET LENGTH";
    /// fsync a handle.
    Flush => "Flush", "Flush", "HANDLE";
}

impl OpKind {
    /// Look a name up, ignoring case (dbench 5 uses strcasecmp).
    pub fn from_name(s: &str) -> Option<OpKind> {
        // Exact spellings first: loadfiles are large and almost always use them.
        let exact = OpKind::ALL.into_iter().find(|k| k.name() == s);
        exact.or_else(|| {
            OpKind::ALL
                .into_iter()
                .find(|k| k.name().eq_ignore_ascii_case(s))
        })
    }

    /// Look a name up in either spelling, ignoring case: the loadfile's
    /// (`QUERY_PATH_INFORMATION`, stored by fslab before issue 24) or dbench 4.0's (`Qpathinfo`).
    /// Reports use it to show one spelling whatever a store holds.
    pub fn from_any_name(s: &str) -> Option<OpKind> {
        OpKind::from_name(s).or_else(|| {
            OpKind::ALL
                .into_iter()
                .find(|k| k.display_name().eq_ignore_ascii_case(s))
        })
    }

    /// Position in [`OpKind::ALL`], for per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// How many arguments the operation takes, least and most ([`OpKind::usage`]'s words,
    /// of which the bracketed ones are optional).
    pub fn arity(self) -> (usize, usize) {
        let words = self.usage().split(' ');
        let optional = words.clone().filter(|w| w.starts_with('[')).count();
        let all = words.count();
        (all - optional, all)
    }
}

/// The loadfile name: `Display` serves messages that quote a loadfile line.
impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which errors a failure status accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailClass {
    /// `OBJECT_NAME_NOT_FOUND`, `OBJECT_PATH_NOT_FOUND`, `NO_SUCH_FILE`, `NOT_FOUND`:
    /// ENOENT or ENOTDIR.
    NotFound,
    /// `OBJECT_NAME_COLLISION`: EEXIST.
    Exists,
    /// `DIRECTORY_NOT_EMPTY`: ENOTEMPTY (or EEXIST, which POSIX also allows).
    NotEmpty,
    /// `ACCESS_DENIED`: EACCES, EPERM or EROFS.
    AccessDenied,
    /// `NOT_A_DIRECTORY`: ENOTDIR.
    NotADirectory,
    /// `FILE_IS_A_DIRECTORY`: EISDIR.
    IsADirectory,
    /// Any other failure status (`ERROR`, `SHARING_VIOLATION`, …): any error.
    Any,
}

impl FailClass {
    /// Whether an errno is an acceptable outcome for this class.
    pub fn accepts(self, errno: i32) -> bool {
        use libc::*;
        match self {
            FailClass::NotFound => errno == ENOENT || errno == ENOTDIR,
            FailClass::Exists => errno == EEXIST,
            FailClass::NotEmpty => errno == ENOTEMPTY || errno == EEXIST,
            FailClass::AccessDenied => errno == EACCES || errno == EPERM || errno == EROFS,
            FailClass::NotADirectory => errno == ENOTDIR,
            FailClass::IsADirectory => errno == EISDIR,
            FailClass::Any => true,
        }
    }
}

/// The outcome a loadfile line expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `NT_STATUS_OK`, `0x00000000` or `SUCCESS`.
    Success,
    /// A failure status.
    Failure(FailClass),
    /// `*`: any outcome.
    Any,
}

/// Known NTSTATUS values: (name without the `NT_STATUS_` prefix, code, class).
const KNOWN: &[(&str, u32, FailClass)] = &[
    ("OBJECT_NAME_NOT_FOUND", 0xC000_0034, FailClass::NotFound),
    ("OBJECT_PATH_NOT_FOUND", 0xC000_003A, FailClass::NotFound),
    ("NO_SUCH_FILE", 0xC000_000F, FailClass::NotFound),
    ("NOT_FOUND", 0xC000_0225, FailClass::NotFound),
    ("OBJECT_NAME_COLLISION", 0xC000_0035, FailClass::Exists),
    ("DIRECTORY_NOT_EMPTY", 0xC000_0101, FailClass::NotEmpty),
    ("ACCESS_DENIED", 0xC000_0022, FailClass::AccessDenied),
    ("NOT_A_DIRECTORY", 0xC000_0103, FailClass::NotADirectory),
    ("FILE_IS_A_DIRECTORY", 0xC000_00BA, FailClass::IsADirectory),
];

/// Parse the status column. `None` means the token is not a status at all.
pub fn parse_status(tok: &str) -> Option<Expect> {
    match tok {
        "*" => return Some(Expect::Any),
        "SUCCESS" | "NT_STATUS_OK" => return Some(Expect::Success),
        "ERROR" => return Some(Expect::Failure(FailClass::Any)),
        _ => {}
    }
    let known = if let Some(name) = tok.strip_prefix("NT_STATUS_") {
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        KNOWN.iter().find(|(n, _, _)| *n == name)
    } else {
        let hex = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X"))?;
        let code = u32::from_str_radix(hex, 16).ok()?;
        if code == 0 {
            return Some(Expect::Success);
        }
        KNOWN.iter().find(|(_, c, _)| *c == code)
    };
    Some(Expect::Failure(known.map_or(FailClass::Any, |k| k.2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_ignore_case() {
        for k in OpKind::ALL {
            assert_eq!(OpKind::from_name(k.name()), Some(k));
            assert_eq!(OpKind::ALL[k.index()], k);
        }
        assert_eq!(OpKind::from_name("ntcreatex"), Some(OpKind::NtCreateX));
        assert_eq!(OpKind::from_name("find_first"), Some(OpKind::FindFirst));
        assert_eq!(OpKind::from_name("SMBopenX"), None);
        // dbench 4.0's printed names are not loadfile names (its parser does not take them).
        assert_eq!(OpKind::from_name("Qpathinfo"), None);
        // Arguments in brackets are optional.
        assert_eq!(OpKind::Unlink.arity(), (1, 2));
        assert_eq!(OpKind::NtCreateX.arity(), (4, 4));
    }

    #[test]
    fn printed_names_are_dbench_4_0s_table() {
        // dbench 4.0's op_names table (dbench.c), in its order.
        let dbench = "NTCreateX Close Rename Unlink Deltree Rmdir Mkdir Qpathinfo Qfileinfo Qfsinfo
            Sfileinfo Find WriteX ReadX LockX UnlockX Flush";
        let ours: Vec<&str> = OpKind::ALL.iter().map(|k| k.display_name()).collect();
        assert_eq!(ours, dbench.split_whitespace().collect::<Vec<_>>());
        for k in OpKind::ALL {
            assert_eq!(OpKind::from_any_name(k.display_name()), Some(k));
            assert_eq!(OpKind::from_any_name(k.name()), Some(k));
        }
        assert_eq!(
            OpKind::from_any_name("qfsinfo"),
            Some(OpKind::QueryFsInformation)
        );
        assert_eq!(OpKind::from_any_name("total"), None);
    }

    #[test]
    fn statuses() {
        use FailClass::*;
        for (text, want) in [
            ("NT_STATUS_OK", Some(Expect::Success)),
            ("0x00000000", Some(Expect::Success)),
            ("SUCCESS", Some(Expect::Success)),
            ("*", Some(Expect::Any)),
            ("ERROR", Some(Expect::Failure(Any))),
            (
                "NT_STATUS_OBJECT_NAME_NOT_FOUND",
                Some(Expect::Failure(NotFound)),
            ),
            ("0xc0000034", Some(Expect::Failure(NotFound))),
            ("0xC0000035", Some(Expect::Failure(Exists))),
            ("NT_STATUS_SHARING_VIOLATION", Some(Expect::Failure(Any))),
            ("0xZZ", None),
            ("OK", None),
            ("NT_STATUS_", None),
            ("16385", None),
        ] {
            assert_eq!(parse_status(text), want, "{text}");
        }
    }

    #[test]
    fn classes_accept_the_right_errnos() {
        assert!(FailClass::NotFound.accepts(libc::ENOENT));
        assert!(FailClass::NotFound.accepts(libc::ENOTDIR));
        assert!(!FailClass::NotFound.accepts(libc::EEXIST));
        assert!(FailClass::Exists.accepts(libc::EEXIST));
        assert!(FailClass::Any.accepts(libc::EIO));
    }
}
