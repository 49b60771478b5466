//! The statuses a study, cell, series and trial can have, as enums. Each maps to exactly the
//! word the schema's `CHECK` constraints allow (`doc/schema.md`), and nowhere else in fslab
//! is such a word written.

use crate::stats::adaptive::StopReason;
use crate::vocab::{words, Stored, StudyKind, Word};
use serde::Serialize;

/// Declares a status enum with its stored words (`crate::vocab::words!`), read and written
/// as SQL text.
macro_rules! status_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal),+ $(,)? }) => {
        words! {
            $(#[$m])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
            #[serde(rename_all = "snake_case")]
            pub enum $name {
                $($(#[$vm])* $v => $s),+
            }
            /// The word stored in the database.
            as_str;
        }
        sql_word!($name, stringify!($name));
    };
}

/// `ToSql` and `FromSql` for a type of stored words (`as_str`, `parse`): a word this fslab
/// does not know is an error naming `what` that says to upgrade.
macro_rules! sql_word {
    ($name:ty, $what:expr) => {
        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                v: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                <$name>::parse(s).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(
                        format!("unknown {} '{s}'; upgrade fslab", $what).into(),
                    )
                })
            }
        }
    };
}

status_enum! {
    /// Where a study or engine run stands (`study.status`).
    StudyStatus {
        /// Being run (or killed while running; see `fslab cleanup`).
        Running => "running",
        /// Every cell complete.
        Complete => "complete",
        /// Some cells failed, others have results.
        Partial => "partial",
        /// Nothing has results.
        Failed => "failed",
        /// Stopped by a signal; a study can be resumed.
        Interrupted => "interrupted",
    }
}

status_enum! {
    /// Where a cell (one configuration) stands (`cell.status`).
    CellStatus {
        /// Not provisioned yet, or waiting for more repetitions.
        Pending => "pending",
        /// Provisioned, repetitions under way.
        Running => "running",
        /// Every series done and torn down.
        Complete => "complete",
        /// Provisioning or a repetition failed.
        Failed => "failed",
    }
}

status_enum! {
    /// Where a series (cell × workload) stands (`series.status`).
    SeriesStatus {
        /// No repetition yet.
        Pending => "pending",
        /// Some repetitions stored.
        Running => "running",
        /// Stopped by its rule (see the stop reason).
        Complete => "complete",
        /// A repetition failed.
        Failed => "failed",
    }
}

status_enum! {
    /// What became of one repetition (`trial.status`).
    TrialStatus {
        /// Counted.
        Ok => "ok",
        /// It failed; its error is stored.
        Failed => "failed",
        /// A warm-up run, not counted.
        Discarded => "discarded",
    }
}

/// A series without a row of its own (its cell failed before it started) takes its cell's
/// status: the words are the same.
impl From<CellStatus> for SeriesStatus {
    fn from(c: CellStatus) -> SeriesStatus {
        match c {
            CellStatus::Pending => SeriesStatus::Pending,
            CellStatus::Running => SeriesStatus::Running,
            CellStatus::Complete => SeriesStatus::Complete,
            CellStatus::Failed => SeriesStatus::Failed,
        }
    }
}

sql_word!(StopReason, "stop reason");
// `study.kind` is checked by the schema (`CHECK (kind IN ('run', 'study'))`): no other word
// can be stored.
sql_word!(StudyKind, "study kind");

impl<T: Word> rusqlite::types::ToSql for Stored<T> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

/// Any word of `T`, or another kept as stored ([`Stored`]): the column has no `CHECK`.
impl<T: Word> rusqlite::types::FromSql for Stored<T> {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        Ok(Stored::read(v.as_str()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_the_schemas_and_parses_back() {
        let schema = include_str!("schema.sql");
        for (words, check) in [
            (
                StudyStatus::ALL
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>(),
                "status IN ('running', 'complete', 'partial', 'failed', 'interrupted')",
            ),
            (
                CellStatus::ALL.iter().map(|s| s.as_str()).collect(),
                "status IN ('pending', 'running', 'complete', 'failed')",
            ),
            (
                TrialStatus::ALL.iter().map(|s| s.as_str()).collect(),
                "status IN ('ok', 'failed', 'discarded')",
            ),
        ] {
            assert!(schema.contains(check), "{check}");
            for w in words {
                assert!(check.contains(&format!("'{w}'")), "{w} not in {check}");
            }
        }
        for s in StudyStatus::ALL {
            assert_eq!(StudyStatus::parse(s.as_str()), Some(*s));
        }
        for s in SeriesStatus::ALL {
            assert_eq!(SeriesStatus::parse(s.as_str()), Some(*s));
        }
        assert_eq!(TrialStatus::parse("bogus"), None);
    }
}
