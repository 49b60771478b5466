//! The mdtest-compatible metadata engine (hpc/ior's `mdtest`, the metadata half of the
//! IO500).
//!
//! Follows `src/mdtest.c` of mdtest 4: the same flags and defaults ([`parse`]), the same
//! tree and names (`test-dir.<i>-0/mdtest_tree.0/…/{dir,file}.mdtest.<rank>.<n>`,
//! [`layout`]), the same phases in the same order with the same item counts, the same `-N`
//! shift between ranks, stonewall with wear-out and `-R` order ([`engine`], [`walk`]), the
//! same rates (items of all ranks over the phase's first start to last end) and the same
//! `SUMMARY` tables ([`report`]) — with raw `*at` system calls ([`crate::workload::fsops`]),
//! a nanosecond clock, and deletion by provenance ([`record`], [`sweep`]).
//!
//! The ranks are a parameter ([`team::Team`]): a plain run is one rank ([`team::Solo`]); the
//! MPI layer implements `Team` over its communicator; tests run ranks as threads.
//!
//! Where fslab differs from mdtest, on purpose:
//! * `-n` together with `-I` is refused (mdtest then runs `n/I` test directories and counts
//!   their items inconsistently, hpc/ior#106); so are flags fslab does not implement.
//! * `-W` stops file creation only (mdtest's own documentation; its code also cuts directory
//!   creation short without the wear-out, after which its directory stat fails). Each
//!   iteration starts again from the full count (mdtest keeps the reduced count for later
//!   iterations).
//! * With `-u` and `-N`, the shifted rank's tree is walked under its own names at every depth
//!   (mdtest builds the paths below the top with the walking rank's names, which exist only
//!   when `-z` is 0).
//! * A failed operation stops the run with an error naming the entry (mdtest warns and goes
//!   on, so its rates then count operations that did not happen).
//! * A test directory that exists already is refused, never reused; one made by an earlier
//!   `-C` run is used by `-T`/`-E`/`-r` runs only after its record proves it (see [`record`]);
//!   a stonewall status file (`-x`, [`status`]) must agree with that record.

mod def;
pub use def::{CAPS, NAME};
pub mod engine;
pub mod layout;
pub mod params;
pub mod parse;
pub mod record;
pub mod report;
pub mod result;
pub mod run;
pub mod status;
pub mod sweep;
pub mod team;
#[cfg(test)]
mod test_support;
pub mod walk;
mod walk_number;
pub mod workload;

pub use engine::Engine;
pub use layout::Layout;
pub use params::{words, Field, MdtestParams, FLAGS};
pub use parse::{parse, Invocation};
pub use report::Print;
pub use result::{Iteration, Phase, PhaseResult};
pub use run::{Backend, Options, Session};
pub use team::{Solo, Team, Threads};
pub use workload::Mdtest;
