//! `fslab report` and `fslab compare` end to end on synthetic studies written through the
//! Store API (tests/common/report_fixtures.rs): every format, snapshots, determinism, bad
//! input.

mod common;
#[path = "common/report_fixtures.rs"]
mod fixtures;

use common::fslab;

/// Writes the fixture database to $FSLAB_FIXTURE_DB for looking at reports by hand:
/// `FSLAB_FIXTURE_DB=/tmp/f.db cargo test --test report_cli -- --ignored fixture_db`.
#[test]
#[ignore]
fn fixture_db() {
    let path = std::env::var("FSLAB_FIXTURE_DB").expect("set FSLAB_FIXTURE_DB=PATH");
    let _ = std::fs::remove_file(&path);
    let ids = fixtures::build(std::path::Path::new(&path));
    eprintln!("journal {} iozone {} dbench {} runs {} {} broken {}", ids.journal, ids.iozone, ids.dbench, ids.run_a, ids.run_b, ids.broken);
}
