//! Command-line definitions (clap derive). Every option's help states its default.
//!

//! One file per command (or family of commands): the engine commands' options in
//! `fdtree.rs`, `iozone.rs`, `dbench.rs`, `fio.rs`, `mdtest.rs`, the options they all take
//! in `common.rs`; `store.rs` (list, show, rm, export, import), `report.rs` (report,
//! compare), `study.rs` (study, cleanup), `doctor.rs`.

use clap::{Parser, Subcommand};

mod common;
mod dbench;
mod doctor;
pub mod errors;
mod fdtree;
mod fio;
#[cfg(test)]
mod help_tests;
mod iozone;
mod mdtest;
mod mpi;
mod report;
mod store;
mod study;
pub use common::{
    common_options, global_options, spellings, BackendArg, GlobalArgs, OutputFormat, RunArgs,
    TextFormat, Wording,
};
pub use dbench::DbenchArgs;
pub use doctor::DoctorArgs;
pub use fdtree::FdtreeArgs;
pub use fio::{FioArgs, FioCacheArg};
pub use iozone::IozoneArgs;
pub use mdtest::{MdtestArgs, MdtestOwnArgs};
pub use mpi::{MpiArgs, MpiReportArgs};
pub use report::{CompareArgs, ErrorBarsArg, ReportArgs, ReportOutputArgs};
pub use store::{list_kinds, ExportArgs, ExportFormat, ImportArgs, ListArgs, RmArgs, ShowArgs};
pub use study::{CleanupArgs, StudyCommand, StudyPlanArgs, StudyRunArgs};

/// fslab: provision file-system configurations, run fdtree/IOzone/dbench-compatible
/// engines at system-call speed, store every sample, and report with statistics.
#[derive(Debug, Parser)]
#[command(
    name = "fslab",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Options of fslab itself (`--db`), taken before or after the subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parse the process's arguments like `try_parse`, also noting which of fdtree's shape
    /// flags were given on the command line (`-R` takes the recorded shape otherwise).
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        Cli::try_parse_args_from(std::env::args_os())
    }

    /// [`Cli::try_parse_args`] from the given arguments.
    pub fn try_parse_args_from<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{parser::ValueSource, CommandFactory, FromArgMatches};
        let m = Cli::command().try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&m)?;
        if let (Command::Fdtree(a), Some(("fdtree", sub))) = (&mut cli.command, m.subcommand()) {
            a.shape_given = [
                ("dirs", "-d"),
                ("files", "-f"),
                ("size_blocks", "-s"),
                ("levels", "-l"),
            ]
            .into_iter()
            .filter(|(id, _)| sub.value_source(id) == Some(ValueSource::CommandLine))
            .map(|(_, flag)| flag)
            .collect();
        }
        Ok(cli)
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Metadata tree benchmark compatible with fdtree.bash (directory create, file create,
    /// file remove, directory remove).
    #[command(
        after_long_help = fdtree::EXAMPLES,
        mut_args(|a| fdtree::WORDING.apply(a))
    )]
    Fdtree(FdtreeArgs),
    /// IOzone-compatible throughput tests (write, rewrite, read, re-read, random read/write,
    /// backwards read, record rewrite, strided read, fwrite/re-fwrite, fread/re-fread).
    #[command(
        disable_version_flag = true,
        after_long_help = iozone::EXAMPLES,
        mut_args(|a| iozone::WORDING.apply(a))
    )]
    Iozone(IozoneArgs),
    /// Client load compatible with dbench 4: N clients replay an NBENCH loadfile (dbench's
    /// client.txt or fslab's generated office load) and report MB/s and latency percentiles.
    #[command(
        after_long_help = dbench::EXAMPLES,
        mut_args(|a| dbench::WORDING.apply(a)),
        // Required (`<NCLIENTS>` in the usage and the argument list alike); --generate, which
        // runs no clients, does without it.
        mut_arg("clients", |a| a.required(true)),
        override_usage = "fslab dbench [OPTIONS] <NCLIENTS>\n       fslab dbench --generate <FILE> [--seed <N>] [--tasks <N>]"
    )]
    Dbench(DbenchArgs),
    /// Run the real fio on a job file --repeat N times with a cache action between, store
    /// every run, and print mean ± sd and 95% CI per job and direction. fio options fslab
    /// does not know are passed to fio unchanged.
    #[command(
        after_long_help = fio::EXAMPLES,
        mut_args(|a| fio::WORDING.apply(a))
    )]
    Fio(FioArgs),
    /// Metadata benchmark compatible with mdtest (the IO500's metadata half): directory and
    /// file creation, stat, read, rename and removal in a tree, with mdtest's flags and its
    /// SUMMARY table; fslab's own options (--repeat, --format, --dry-run, …) go anywhere.
    #[command(
        after_long_help = mdtest::EXAMPLES,
        mut_arg("args", |a| a.help(MdtestOwnArgs::help()))
    )]
    Mdtest(MdtestArgs),
    /// List stored runs and studies, newest first, with their target and file system.
    #[command(after_long_help = store::LIST_EXAMPLES)]
    List(ListArgs),
    /// Show one stored run or study with its summary.
    Show(ShowArgs),
    /// Remove stored runs and studies with all their samples (never one that is running).
    Rm(RmArgs),
    /// Export a stored run or study: every raw sample (--raw) or one row per repetition, as
    /// CSV or JSON.
    #[command(after_long_help = store::EXPORT_EXAMPLES)]
    Export(ExportArgs),
    /// Copy the runs and studies of another results database into this one (new ids, the
    /// source recorded); importing the same file again adds nothing.
    Import(ImportArgs),
    /// Report a study or run: the articles' tables, comparisons against a baseline with
    /// significance, warnings, environment; as text, Markdown, CSV, JSON or HTML with charts.
    #[command(after_long_help = report::REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Compare two runs, studies or cells (B against A) with percent change, 95% interval,
    /// Welch's t-test and Mann–Whitney.
    #[command(after_long_help = report::COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Plan or run a study: every file-system configuration of a study file provisioned for
    /// real (mkfs, journal, mount options) and every workload repeated on it.
    #[command(subcommand)]
    Study(StudyCommand),
    /// Remove what killed runs left — only what they recorded: mounts, loop devices and
    /// images of studies in the work directory, and the trees and files of killed engine
    /// runs (from the results database, --db); mark those runs interrupted.
    Cleanup(CleanupArgs),
    /// Check this machine before the first study: root, the file systems the host can make
    /// and those only the guest can, whether the User-mode Linux guest boots (and how fast),
    /// telemetry sources, cache drops, loop devices, fio, dbench, MPI. Each line ✓ (ready), ✗
    /// (with the one thing to do) or · (a fact).
    #[command(after_long_help = doctor::EXAMPLES)]
    Doctor(DoctorArgs),
    /// Run inside a guest by `fslab doctor`: the guest kernel's file systems and a check that
    /// threads keep their vector registers, as JSON.
    #[command(hide = true)]
    GuestSelftest,
}

impl Command {
    /// The subcommand's name as typed (`list`, `fdtree`, …), for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Fdtree(_) => "fdtree",
            Command::Iozone(_) => "iozone",
            Command::Dbench(_) => "dbench",
            Command::Fio(_) => "fio",
            Command::Mdtest(_) => "mdtest",
            Command::List(_) => "list",
            Command::Show(_) => "show",
            Command::Report(_) => "report",
            Command::Compare(_) => "compare",
            Command::Study(_) => "study",
            Command::Cleanup(_) => "cleanup",
            Command::Rm(_) => "rm",
            Command::Export(_) => "export",
            Command::Import(_) => "import",
            Command::Doctor(_) => "doctor",
            Command::GuestSelftest => "guest-selftest",
        }
    }

    /// The options every engine command takes, if it is one (`fslab mdtest` reads them from
    /// among mdtest's flags).
    pub fn run_args_mut(&mut self) -> Option<&mut RunArgs> {
        match self {
            Command::Fdtree(a) => Some(&mut a.run),
            Command::Iozone(a) => Some(&mut a.run),
            Command::Dbench(a) => Some(&mut a.run),
            Command::Fio(a) => Some(&mut a.run),
            _ => None,
        }
    }

    /// The engine a command runs, if it runs one (writing dbench's generated loadfile is not
    /// a benchmark): the registered engine of the command's name.
    pub fn engine(&self) -> Option<crate::workload::WorkloadKind> {
        match self {
            Command::Dbench(a) if a.generate.is_some() => None,
            c => crate::workload::WorkloadKind::of(c.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn fdtree_defaults_are_fdtree_defaults() {
        let c = Cli::try_parse_from(["fslab", "fdtree"]).unwrap();
        let Command::Fdtree(a) = c.command else {
            panic!()
        };
        let s = &a.shape;
        assert_eq!((s.dirs, s.files, s.size_blocks, s.levels), (10, 10, 10, 4));
        assert_eq!(a.start_dir, std::path::PathBuf::from("."));
    }

    #[test]
    fn dbench_and_iozone_read_their_study_specs() {
        let c = Cli::try_parse_from(["fslab", "dbench", "4", "-t", "90s", "-S"]).unwrap();
        let Command::Dbench(a) = c.command else {
            panic!()
        };
        assert_eq!((a.load.clients, a.load.duration.as_str()), (Some(4), "90s"));
        assert!(a.sync_dir && !a.load.sync);
        assert!(
            Cli::try_parse_from(["fslab", "dbench"]).is_err(),
            "NCLIENTS required"
        );
        let g = Cli::try_parse_from(["fslab", "dbench", "--generate", "x.txt"]).unwrap();
        assert!(g.command.engine().is_none(), "--generate needs no NCLIENTS");
        let c =
            Cli::try_parse_from(["fslab", "iozone", "-s", "1m", "-s", "2m", "-t", "2"]).unwrap();
        let Command::Iozone(a) = c.command else {
            panic!()
        };
        assert_eq!(a.params.file_size, ["1m", "2m"]);
        assert_eq!(a.params.threads, Some(2));
    }
}
