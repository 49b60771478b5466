//! MPI mode: the engines run as MPI ranks under `mpiexec`, as IOR and the IO500 do, for
//! file systems that one client cannot load (NFS, Lustre, GPFS, CephFS). See `doc/mpi.md`.
//!
//! The rank-agnostic parts are plain functions compiled into every build and unit-tested
//! without MPI: how a launch is detected ([`launch`]), how the ranks' figures are combined
//! ([`aggregate`]), how clocks are aligned ([`clock`]) and the shared-tree layout
//! ([`shared_tree`]). The parts that call MPI exist only with the cargo feature `mpi`.
//!
//! Under MPI every rank runs the same command; rank 0 alone prints and writes the results
//! database, the others never open it. Failures are agreed collectively (see `comm`), so an
//! error on one rank ends the run on all of them and rank 0 reports it naming the rank.
//!
//! This is plumbing below the app layer: communication, launch detection, clocks,
//! aggregation, the shared tree, the one rank mode every engine implements (`rank`) and
//! the engines' rank modes. It imports neither `app` nor `cli`;
//! each engine's MPI command (options, checks, report) lives beside its single-process
//! command in `app/<engine>/mpi.rs`, and `app/mpi.rs` decides whether a command runs as a
//! rank.

pub mod aggregate;
pub mod clock;
pub mod launch;
pub mod shared_tree;

#[cfg(feature = "mpi")]
pub mod comm;
#[cfg(feature = "mpi")]
pub mod dbench;
#[cfg(feature = "mpi")]
pub mod fdtree;
#[cfg(feature = "mpi")]
pub mod iozone;
#[cfg(feature = "mpi")]
pub mod job;
#[cfg(feature = "mpi")]
pub mod rank;
