//! The 13 timed passes of IOzone's eight tests: names (metric phases), `-i` numbers, order.

/// One timed pass: the 13 columns of IOzone's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// `-i 0`, first pass (the file is created and truncated).
    Write,
    /// `-i 0`, second pass (overwrites in place).
    Rewrite,
    /// `-i 1`, first pass.
    Read,
    /// `-i 1`, second pass.
    Reread,
    /// `-i 2`, first pass: every record once, in a fixed shuffled order.
    RandomRead,
    /// `-i 2`, second pass: writes in the same order.
    RandomWrite,
    /// `-i 3`: from the last record to the first.
    BackwardRead,
    /// `-i 4`: the same record (offset 0) written n times.
    RecordRewrite,
    /// `-i 5`: every `stride`-th record, wrapping.
    StrideRead,
    /// `-i 6`, first pass: buffered stream writes.
    Fwrite,
    /// `-i 6`, second pass.
    Frewrite,
    /// `-i 7`, first pass: buffered stream reads.
    Fread,
    /// `-i 7`, second pass.
    Freread,
}

impl Test {
    /// All passes in table order.
    pub const ALL: [Test; 13] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandomRead,
        Test::RandomWrite,
        Test::BackwardRead,
        Test::RecordRewrite,
        Test::StrideRead,
        Test::Fwrite,
        Test::Frewrite,
        Test::Fread,
        Test::Freread,
    ];

    /// The metric phase name (`write`, `random_read`, …).
    pub fn phase(self) -> &'static str {
        match self {
            Test::Write => "write",
            Test::Rewrite => "rewrite",
            Test::Read => "read",
            Test::Reread => "reread",
            Test::RandomRead => "random_read",
            Test::RandomWrite => "random_write",
            Test::BackwardRead => "backward_read",
            Test::RecordRewrite => "record_rewrite",
            Test::StrideRead => "stride_read",
            Test::Fwrite => "fwrite",
            Test::Frewrite => "frewrite",
            Test::Fread => "fread",
            Test::Freread => "freread",
        }
    }

    /// The test from its phase name.
    pub fn from_phase(s: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.phase() == s)
    }

    /// IOzone's `-i` number of the test this pass belongs to.
    pub fn number(self) -> u8 {
        match self {
            Test::Write | Test::Rewrite => 0,
            Test::Read | Test::Reread => 1,
            Test::RandomRead | Test::RandomWrite => 2,
            Test::BackwardRead => 3,
            Test::RecordRewrite => 4,
            Test::StrideRead => 5,
            Test::Fwrite | Test::Frewrite => 6,
            Test::Fread | Test::Freread => 7,
        }
    }

    /// The passes of `-i n`.
    pub fn of_number(n: u8) -> &'static [Test] {
        match n {
            0 => &[Test::Write, Test::Rewrite],
            1 => &[Test::Read, Test::Reread],
            2 => &[Test::RandomRead, Test::RandomWrite],
            3 => &[Test::BackwardRead],
            4 => &[Test::RecordRewrite],
            5 => &[Test::StrideRead],
            6 => &[Test::Fwrite, Test::Frewrite],
            7 => &[Test::Fread, Test::Freread],
            _ => &[],
        }
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
