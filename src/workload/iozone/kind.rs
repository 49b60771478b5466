//! The 13 timed passes of IOzone's eight tests: names (metric phases), `-i` numbers, order.

/// Declares [`Test`], [`Test::ALL`] and `PASSES` from one list of the passes in table order:
/// each pass's doc and variant, then its metric phase name, the `-i` number of the test it
/// belongs to, and the title of its `-R` block in IOzone's report.
macro_rules! passes {
    ($($(#[doc = $doc:literal])* $test:ident: $phase:literal, $number:literal, $title:literal;)*) => {
        /// One timed pass: the 13 columns of IOzone's table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Test {
            $($(#[doc = $doc])* $test,)*
        }

        impl Test {
            /// All passes in table order.
            pub const ALL: [Test; 13] = [$(Test::$test),*];
        }

        /// Per pass, in table order: its metric phase name, the `-i` number of the test it
        /// belongs to, and the title of its `-R` block in IOzone's report.
        const PASSES: [(&str, u8, &str); 13] = [$(($phase, $number, $title)),*];
    };
}

passes! {
    /// `-i 0`, first pass (the file is created and truncated).
    Write: "write", 0, "Writer report";
    /// `-i 0`, second pass (overwrites in place).
    Rewrite: "rewrite", 0, "Re-writer report";
    /// `-i 1`, first pass.
    Read: "read", 1, "Reader report";
    /// `-i 1`, second pass.
    Reread: "reread", 1, "Re-Reader report";
    /// `-i 2`, first pass: every record once, in a fixed shuffled order.
    RandomRead: "random_read", 2, "Random read report";
    /// `-i 2`, second pass: writes in the same order.
    RandomWrite: "random_write", 2, "Random write report";
    /// `-i 3`: from the last record to the first.
    BackwardRead: "backward_read", 3, "Backward read report";
    /// `-i 4`: the same record (offset 0) written n times.
    RecordRewrite: "record_rewrite", 4, "Record rewrite report";
    /// `-i 5`: every `stride`-th record, wrapping.
    StrideRead: "stride_read", 5, "Stride read report";
    /// `-i 6`, first pass: buffered stream writes.
    Fwrite: "fwrite", 6, "Fwrite report";
    /// `-i 6`, second pass.
    Frewrite: "frewrite", 6, "Re-Fwrite report";
    /// `-i 7`, first pass: buffered stream reads.
    Fread: "fread", 7, "Fread report";
    /// `-i 7`, second pass.
    Freread: "freread", 7, "Re-Fread report";
}

impl Test {
    /// The metric phase name (`write`, `random_read`, …).
    pub fn phase(self) -> &'static str {
        PASSES[self as usize].0
    }

    /// IOzone's `-i` number of the test this pass belongs to.
    pub fn number(self) -> u8 {
        PASSES[self as usize].1
    }

    /// The title of the pass's block in IOzone's `-R` report.
    pub fn excel_title(self) -> &'static str {
        PASSES[self as usize].2
    }

    /// The passes of `-i n`, in table order.
    pub fn of_number(n: u8) -> impl Iterator<Item = Test> {
        Test::ALL.into_iter().filter(move |t| t.number() == n)
    }
}

/// Names of IOzone's `-i` tests, for messages.
pub const TEST_NAMES: [&str; 8] = [
    "write/rewrite",
    "read/re-read",
    "random read/write",
    "backwards read",
    "record rewrite",
    "strided read",
    "fwrite/re-fwrite",
    "fread/re-fread",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_passes() {
        for (i, t) in Test::ALL.into_iter().enumerate() {
            assert_eq!(t as usize, i, "{t:?}");
        }
        assert_eq!(
            Test::of_number(2).collect::<Vec<_>>(),
            [Test::RandomRead, Test::RandomWrite]
        );
        assert_eq!(Test::StrideRead.excel_title(), "Stride read report");
    }
}
