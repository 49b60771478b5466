//! Command-line definitions (clap derive). Every option's help states its default.

use crate::workload::fdtree;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub mod errors;
#[cfg(test)]
mod help_tests;
mod iozone;
mod mpi;
pub use iozone::IozoneArgs;
pub use mpi::{MpiArgs, MpiReportArgs};

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
    /// Results database. Default: $FSLAB_DB, else ~/.local/share/fslab/results.db.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

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
        after_long_help = FDTREE_EXAMPLES,
        mut_arg("repeat", |a| a.help(REPEAT_FDTREE))
    )]
    Fdtree(FdtreeArgs),
    /// IOzone-compatible throughput tests (write, rewrite, read, re-read, random read/write,
    /// backwards read, record rewrite, strided read, fwrite/re-fwrite, fread/re-fread).
    #[command(
        disable_version_flag = true,
        after_long_help = IOZONE_EXAMPLES,
        mut_arg("repeat", |a| a.help(REPEAT_IOZONE))
    )]
    Iozone(IozoneArgs),
    /// Client load compatible with dbench 4: N clients replay an NBENCH loadfile (dbench's
    /// client.txt or fslab's generated office load) and report MB/s and latency percentiles.
    #[command(
        after_long_help = DBENCH_EXAMPLES,
        mut_arg("repeat", |a| a.help(REPEAT_DBENCH)),
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
        after_long_help = FIO_EXAMPLES,
        mut_arg("repeat", |a| a.help(REPEAT_FIO))
    )]
    Fio(FioArgs),
    /// Metadata benchmark compatible with mdtest (the IO500's metadata half): directory and
    /// file creation, stat, read, rename and removal in a tree, with mdtest's flags and its
    /// SUMMARY table; fslab's own options (--repeat, --format, --dry-run, …) go anywhere.
    #[command(after_long_help = MDTEST_HELP)]
    Mdtest(MdtestArgs),
    /// List stored runs and studies, newest first, with their target and file system.
    #[command(after_long_help = LIST_EXAMPLES)]
    List(ListArgs),
    /// Show one stored run or study with its summary.
    Show(ShowArgs),
    /// Remove stored runs and studies with all their samples (never one that is running).
    Rm(RmArgs),
    /// Export a stored run or study: every raw sample (--raw) or one row per repetition, as
    /// CSV or JSON.
    #[command(after_long_help = EXPORT_EXAMPLES)]
    Export(ExportArgs),
    /// Copy the runs and studies of another results database into this one (new ids, the
    /// source recorded); importing the same file again adds nothing.
    Import(ImportArgs),
    /// Report a study or run: the articles' tables, comparisons against a baseline with
    /// significance, warnings, environment; as text, Markdown, CSV, JSON or HTML with charts.
    #[command(after_long_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Compare two runs, studies or cells (B against A) with percent change, 95% interval,
    /// Welch's t-test and Mann–Whitney.
    #[command(after_long_help = COMPARE_EXAMPLES)]
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
    #[command(after_long_help = DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
    /// Run inside a guest by `fslab doctor`: the guest kernel's file systems and a check that
    /// threads keep their vector registers, as JSON.
    #[command(hide = true)]
    GuestSelftest,
}

/// `fslab mdtest`: mdtest's options and fslab's, in any order; `app::mdtest` separates them.
#[derive(Debug, Args)]
pub struct MdtestArgs {
    /// mdtest's options (below) and fslab's own (--repeat, --format, --json, --dry-run,
    /// --no-store, --min-phase, --settle, --timeline, --disturbed, --backend, -q).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "OPTIONS"
    )]
    pub args: Vec<String>,
}

/// fslab's own options of `fslab mdtest`, read from among mdtest's.
#[derive(Debug, Parser)]
#[command(name = "fslab mdtest", no_binary_name = true, disable_help_flag = true)]
pub struct MdtestOwnArgs {
    /// Repetitions, output and store (`--repeat N` is mdtest's `-i N`; give one of them).
    #[command(flatten)]
    pub run: RunArgs,
    /// Output: table (mdtest's SUMMARY) or json. Default: table.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Print the layout, the counts and the space needed; create nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Where operations go: fs (the directory of -d) or null (no system calls, fslab's own
    /// cost). Default: fs.
    #[arg(long, value_enum, default_value_t = BackendArg::Fs)]
    pub backend: BackendArg,
    /// No progress and no "stored as run N" line on stderr. Default: both shown.
    #[arg(short, long)]
    pub quiet: bool,
}

const MDTEST_HELP: &str = "\
mdtest's options (as mdtest 4; numbers may end in k, m, g: powers of 1024):
  -n N   items (directories and files) per rank        -I N   items per tree directory
  -z N   depth of the tree                              -b N   branching (subdirectories)
  -d DIR where the test directories go (./out)          -u     a tree per rank
  -F     files only       -D  directories only          -L     items only at the leaves
  -w N   bytes written per file      -e N  bytes read   -y     fsync after each write
  -i N   iterations (fslab: repetitions)                -N N   rank stride for stat/read/remove
  -C -T -E -r -U  only create / stat / read / remove / rename (none: all)
  -W N   stonewall seconds for file creation            -R     stat and read in random order
  --random-seed N   that order's seed                   -P     rates and times (-Z times only)
  -Y     sync after each phase, timed                   -k     make files with mknod
  -t     time entering each rank's tree (with -u)       --posix.odirect  O_DIRECT file I/O
  -x FILE  stonewall status file                        -v     each phase as it ends (-V N)
  -d a@b   several directories, rank r in the (r mod 2)th (with -u, under mpiexec)

Examples:
  fslab mdtest -n 10000 -d /mnt/test/md            mdtest's ten operations, its SUMMARY table
  fslab mdtest -n 1000 -z 2 -b 3 -F -d /mnt/t --repeat 5      five repetitions, stored
  fslab mdtest -n 10000 -d /mnt/t --format json    one JSON document
  mpiexec -n 4 fslab mdtest -n 2500 -u -d /lustre/md         four ranks (fslab built with mpi)
Deletion by provenance: a test directory is removed only when fslab's record proves it made it.";

/// `fslab doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Output: table (one line per check) or json.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Do not boot the User-mode Linux guest (its checks are then left out). Default: the
    /// guest is booted.
    #[arg(long)]
    pub no_guest: bool,
    /// Memory of the guest the check boots.
    #[arg(long, value_name = "SIZE", default_value = "256M")]
    pub guest_mem: String,
}

const DOCTOR_EXAMPLES: &str = "\
Examples:
  fslab doctor                 every check, the guest booted once (about two seconds)
  fslab doctor --no-guest      the host's checks only
  fslab doctor --format json   the same as a JSON array of {check, ok, detail, fix}";

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

    /// The engine a command runs, if it runs one (writing dbench's generated loadfile is not
    /// a benchmark).
    pub fn engine(&self) -> Option<crate::workload::WorkloadKind> {
        use crate::workload::WorkloadKind;
        match self {
            Command::Fdtree(_) => Some(WorkloadKind::Fdtree),
            Command::Iozone(_) => Some(WorkloadKind::Iozone),
            Command::Dbench(a) if a.generate.is_none() => Some(WorkloadKind::Dbench),
            Command::Fio(_) => Some(WorkloadKind::Fio),
            Command::Mdtest(_) => Some(WorkloadKind::Mdtest),
            _ => None,
        }
    }
}

/// `fslab study …`.
#[derive(Debug, Subcommand)]
pub enum StudyCommand {
    /// Print the cells, the exact commands each will run, the space needed and an ETA;
    /// changes nothing and needs no root.
    #[command(after_long_help = STUDY_EXAMPLES)]
    Plan(StudyPlanArgs),
    /// Run a study (as root): provision each cell, run the workloads with the cache policy
    /// and order of the file, store every repetition, print a summary per cell.
    #[command(after_long_help = STUDY_EXAMPLES)]
    Run(StudyRunArgs),
}

const STUDY_EXAMPLES: &str = "\
Examples:
  fslab study plan examples/studies/quickstart.toml     what it will do, how long, how much space
  fslab study run examples/studies/quickstart.toml      run it (root)
  fslab study run examples/studies/quickstart.toml --resume   continue after Ctrl-C or a crash
  fslab cleanup                                         remove what a killed run left

The work directory holds loop images, mount points and the state file of each run:
default $FSLAB_WORKDIR, else /var/tmp/fslab (choose with --workdir).
Study file reference: doc/studies.md. Safety rules: doc/safety.md.";

/// `fslab study plan`.
#[derive(Debug, Args)]
pub struct StudyPlanArgs {
    /// The study file (TOML).
    pub file: PathBuf,
    /// Work directory for loop images, mount points and run state.
    /// Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Plan for a User-mode Linux guest (`uml` or `uml:MEM`), as `study run --guest` runs it.
    /// Default: the study file's [guest], else the host.
    #[arg(long, value_name = "uml[:MEM]")]
    pub guest: Option<String>,
}

/// `fslab study run`.
#[derive(Debug, Args)]
pub struct StudyRunArgs {
    /// The study file (TOML).
    pub file: PathBuf,
    /// Continue the newest unfinished study with this name (the file must be unchanged):
    /// completed repetitions are kept, the missing ones are run. Default: start a new study.
    #[arg(long)]
    pub resume: bool,
    /// Work directory for loop images, mount points and run state.
    /// Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// No progress display (the summary is still printed). Default: progress shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Run the study in a User-mode Linux guest whose kernel has nilfs2, JFS and ReiserFS:
    /// `uml` or `uml:MEM` (guest memory, default 512M). Default: the study file's [guest], else
    /// on the host. See doc/guest.md.
    #[arg(long, value_name = "uml[:MEM]")]
    pub guest: Option<String>,
    /// Before the study starts, wait up to TIME (default 10m) for a quiet machine: no other
    /// I/O on the work directory's device, no CPU steal, no load beyond the CPUs, little other
    /// CPU. Without it a busy machine gets one line and the study goes on.
    #[arg(long, value_name = "TIME", num_args = 0..=1, default_missing_value = "10m", value_parser = parse_settle)]
    pub wait_quiet: Option<std::time::Duration>,
}

/// `fslab cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Work directory to clean. Default: $FSLAB_WORKDIR, else /var/tmp/fslab.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
}

const LIST_EXAMPLES: &str = "\
Examples:
  fslab list --kind fdtree --since 7d          fdtree runs of the last seven days
  fslab list --name 'ext4-*' --limit 5         the five newest studies whose name starts ext4-
  fslab list --since 2026-11-01 --format json  everything since 1 November (UTC), as JSON";

const EXPORT_EXAMPLES: &str = "\
Examples:
  fslab export 12 --raw -o samples.csv         every sample of study 12 with its factor levels
  fslab export 12 --raw --format json          the same as one JSON document
  fslab export 12                              one row per repetition, a column per metric
SQL users: the views `samples` and `study_<ID>_samples` (doc/schema.md) hold the same rows.";

const REPORT_EXAMPLES: &str = "\
Examples:
  fslab report quickstart                          tables of the newest study named quickstart
  fslab report 12 --format html --out report.html  one self-contained HTML file with charts
  fslab report 12 --baseline journal=64MB          compare every journal size with 64MB
  fslab report 12 --metric file_create.rate        only that metric (tables, charts, tests)
  fslab report 12 --format csv > results.csv       one row per configuration, phase and metric
Sources: ID, NAME (newest with that name), ID:INDEX (one cell), ID/factor=level[,factor=level].";

const COMPARE_EXAMPLES: &str = "\
Examples:
  fslab compare 11 12                    run 12 against run 11 (same engine)
  fslab compare 12:0 12:3                cell 3 of study 12 against its cell 0
  fslab compare 12/journal=16MB 12/journal=1GB --format markdown
  fslab compare old-study new-study      every common configuration and workload";

const FDTREE_EXAMPLES: &str = "\
Examples:
  fslab fdtree -d 20 -f 40 -s 1 -l 3 -o /mnt/test     8,421 dirs and 336,840 files of 4 KiB
  fslab fdtree -o /mnt/test --repeat 10 --sync         ten cycles, writeback counted
  fslab fdtree --dry-run -d 10 -l 6 -o /mnt/test       print the counts and the space needed
  fslab fdtree --backend null -d 10 -l 5 -f 100        fslab's own cost per operation
  fslab fdtree -C -o /mnt/test; fslab fdtree -R -o /mnt/test   create now, remove later";

const IOZONE_EXAMPLES: &str = "\
Examples:
  fslab iozone -i 0 -i 1 -s 1g -r 1m -f /mnt/test/iozone.tmp   write/rewrite, read/re-read
  fslab iozone -s 16g -r 1m -r 4m -r 16m -f /mnt/t/f --repeat 10   the classic journal study
  fslab iozone -a -n 1m -g 64m -f /mnt/t/f -R                  auto sweep with IOzone's report
  fslab iozone -I -s 2g -r 1m -f /mnt/t/f                       O_DIRECT
  fslab iozone -t 4 -s 256m -r 64k -F /mnt/t/a /mnt/t/b /mnt/t/c /mnt/t/d   throughput mode";

const DBENCH_EXAMPLES: &str = "\
Examples:
  fslab dbench -D /mnt/test 10                          10 clients, fslab's office load, 120 s warmup + 600 s
  fslab dbench -D /mnt/test -t 60 16                    16 clients, 12 s warmup + 60 s measured
  fslab dbench -c /usr/share/dbench/client.txt -D /mnt/test -t 60 4   dbench's own loadfile
  fslab dbench -D /mnt/test -t 30 --fsync --repeat 5 8  fsync after every write, five runs, mean and CI
  fslab dbench --generate office.txt --seed 7           write a loadfile from fslab's office model";

const FIO_EXAMPLES: &str = "\
Examples:
  fslab fio -D /mnt/test jobs/randread.fio               one run, caches dropped first (root)
  fslab fio -D /mnt/test --repeat 5 jobs/randread.fio    five runs: mean ± sd and 95% CI per job
  fslab fio -D /mnt/test --repeat 5 --cache none jobs/randread.fio --bs=8k --iodepth=4
                                                         no cache action; --bs, --iodepth go to fio
  fslab fio -D /mnt/test --dry-run jobs/randread.fio     the job as fio would get it; runs nothing

fslab's options come before the job file; everything after it goes to fio unchanged (fio
options on the command line are defaults that the job file's own options override, as in
fio). fio runs in DIR/fslab-fio (removed afterwards) with --output-format=json+.
Reference: doc/fio.md.";

/// What `fslab fio` does before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FioCacheArg {
    /// `sync`, then `echo 3 > /proc/sys/vm/drop_caches` (root).
    Drop,
    /// Nothing (fio still invalidates the job's files' cached pages unless the job sets
    /// invalidate=0).
    None,
}

/// `fslab fio`.
#[derive(Debug, Args)]
pub struct FioArgs {
    /// Directory fio's files are made in (in a directory fslab-fio inside it, removed after
    /// every run). Default: the current directory.
    #[arg(
        short = 'D',
        long = "directory",
        value_name = "DIR",
        default_value = "."
    )]
    pub directory: PathBuf,
    /// Before each repetition: drop the page cache (root) or nothing. Default: drop.
    #[arg(long, value_enum, default_value = "drop")]
    pub cache: FioCacheArg,
    /// Let fio also write in DIR2 (repeat for more): the job may name files there and fio's
    /// cage leaves it writable; raw devices stay refused. Default: fio writes only in its
    /// own directory inside -D.
    #[arg(
        long,
        value_name = "DIR2",
        require_equals = true,
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub allow_outside: Vec<PathBuf>,
    /// Let the job fill -D's file system: fill_device/fill_fs, or sizes beyond its free space
    /// less a reserve (a twentieth of it, at most 1 GiB). Default: refused, because -D is
    /// any directory (the host's disk, as likely as not), not a file system made for the test.
    #[arg(long)]
    pub allow_fill: bool,
    /// No repetition counter and no "stored as run N" line on stderr. Default: both shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print what would run — the job file as fslab hands it to fio, fio's command line, the
    /// directory, the repetitions and the space needed — and exit without running fio (fio
    /// still checks the job with --parse-only). Default: run.
    #[arg(long)]
    pub dry_run: bool,
    /// Output format: the summary table, or one JSON document (--json is the same as
    /// --format json). Default: table.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Options every engine command takes.
    #[command(flatten)]
    pub run: RunArgs,
    /// The fio job file.
    #[arg(value_name = "JOBFILE")]
    pub job: PathBuf,
    /// fio options, passed to fio unchanged (after the job file).
    #[arg(
        value_name = "FIO OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub fio_args: Vec<String>,
}

/// `--repeat` of `fslab fdtree`.
const REPEAT_FDTREE: &str = "Run the whole cycle (directory create, file create, file remove, \
directory remove) N times and report mean, sd and 95% CI per phase. Default: 1.";
/// `--repeat` of `fslab iozone`.
const REPEAT_IOZONE: &str = "Run every test N times, interleaved over the sweep's file and \
record sizes, and report mean, sd and 95% CI per point. Default: 1.";
/// `--repeat` of `fslab dbench`.
const REPEAT_DBENCH: &str = "Run the load N times (each with its warmup and -t) and report \
mean, sd and 95% CI of the throughput and the per-operation latencies. Default: 1.";
/// `--repeat` of `fslab fio`.
const REPEAT_FIO: &str = "Run the job file N times, with the --cache action before each run, \
and report mean, sd and 95% CI per job and direction. Default: 1.";

/// Options every engine command (`fdtree`, `iozone`, `dbench`, `fio`) takes, declared once.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Run N times and report mean, sd and 95% CI. Default: 1. (Each engine command states
    /// what one repetition is: `REPEAT_*` below.)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Print one versioned JSON document (with units) instead of tables; the same as
    /// --format json. Default: tables.
    #[arg(long)]
    pub json: bool,
    /// Do not record the run in the results database. Default: recorded.
    #[arg(long)]
    pub no_store: bool,
    /// Warn when a phase or test takes less than this many seconds on average and its time
    /// varies by more than 10% between repetitions (with one repetition: whenever it is
    /// shorter). Default: 1.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub min_phase: f64,
    /// Before each repetition, wait up to this long (e.g. 30s) until the machine is quiet: no
    /// other I/O on the target's device, no CPU steal, no load beyond the CPUs, little other
    /// CPU. The wait is stored with the repetition. Default: 0 (no wait).
    #[arg(long, value_name = "TIME", default_value = "0", value_parser = parse_settle)]
    pub settle: std::time::Duration,
    /// Also sample the target's devices, the CPU and the engine's progress once a second
    /// during each repetition and store the time series (the HTML report charts it).
    /// Default: off.
    #[arg(long)]
    pub timeline: bool,
    /// What to do with a repetition other activity on the machine disturbed (other I/O on
    /// the target's device, CPU steal, load, other processes' CPU). Default: keep. Not in MPI
    /// mode.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = crate::stats::adaptive::Disturbed::Keep)]
    pub disturbed: crate::stats::adaptive::Disturbed,
}

fn parse_settle(s: &str) -> Result<std::time::Duration, String> {
    crate::units::parse_duration(s).map_err(|e| e.to_string())
}

/// Output format of engine commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A summary table (mean, sd, 95% CI, min, max, cv per metric).
    Table,
    /// fdtree.bash's report lines for every repetition, with sub-second values.
    Fdtree,
    /// One versioned JSON document with units.
    Json,
}

/// Backend of the fdtree engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The file system under -o.
    Fs,
    /// No system calls: measures fslab's own overhead per operation.
    Null,
}

/// `fslab fdtree`.
#[derive(Debug, Args)]
pub struct FdtreeArgs {
    /// The tree's shape and how it is timed: the study's fdtree keys, as flags.
    #[command(flatten)]
    pub shape: fdtree::FdtreeSpec,
    /// Start directory; the tree is made inside it as LEVEL0.<host>.<pid> (fdtree -o).
    #[arg(
        short = 'o',
        long = "start-dir",
        default_value = ".",
        value_name = "DIR"
    )]
    pub start_dir: PathBuf,
    /// Create only: run the two create phases and leave the tree in place (fdtree -C).
    /// Default: the whole cycle.
    #[arg(short = 'C', long = "create-only")]
    pub create_only: bool,
    /// Remove only: run the two remove phases on a tree left by -C (fdtree -R). The tree is
    /// found under -o by name (LEVEL0.<host>.*) unless --root names it; its shape is the one
    /// recorded at -C unless -d, -f, -s, -l are given (then they must match it). Default:
    /// the whole cycle.
    #[arg(short = 'R', long = "remove-only")]
    pub remove_only: bool,
    /// Which of -d, -f, -s, -l were given on the command line (filled in by
    /// [`Cli::try_parse_args`]); `-R` without them removes with the shape recorded at `-C`.
    #[arg(skip)]
    pub shape_given: Vec<&'static str>,
    /// With -R: the tree root(s) to remove, names inside -o (one per thread). Default: found
    /// under -o by name.
    #[arg(long = "root", value_name = "NAME")]
    pub roots: Vec<String>,
    /// Print the counts and the space needed, create nothing. Default: run.
    #[arg(long)]
    pub dry_run: bool,
    /// Output format (--json is the same as --format json).
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Where operations go.
    #[arg(long, value_enum, default_value_t = BackendArg::Fs)]
    pub backend: BackendArg,
    /// Keep a partial tree after an error or Ctrl-C (default: remove it).
    #[arg(long)]
    pub keep: bool,
    /// Repetitions, output and store.
    #[command(flatten)]
    pub run: RunArgs,
    /// No progress display on stderr (a bar with the repetition, point and ETA on a terminal,
    /// one line per finished repetition otherwise) and no "stored as run N" line. Default:
    /// both shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// MPI mode options (builds with the `mpi` feature; hidden and refused in others).
    #[command(flatten)]
    pub mpi: crate::cli::MpiArgs,
}

/// `fslab dbench`: dbench's parameters (the study's keys, as arguments) and the command's own
/// options.
#[derive(Debug, Args)]
pub struct DbenchArgs {
    /// Clients, run time, loadfile and sync options: the study's dbench keys, as arguments.
    #[command(flatten)]
    pub load: crate::workload::dbench::DbenchSpec,
    /// Directory the client trees are made in (dbench -D).
    #[arg(
        short = 'D',
        long = "directory",
        default_value = ".",
        value_name = "DIR"
    )]
    pub directory: PathBuf,
    /// fdatasync the parent directory after unlink, rmdir and rename (dbench -S). Default: off.
    #[arg(short = 'S', long)]
    pub sync_dir: bool,
    /// Skip the case-insensitive name lookups that imitate Samba (dbench --no-resolve).
    /// Default: lookups on, like dbench.
    #[arg(long)]
    pub no_resolve: bool,
    /// Replay as fast as possible, ignoring the loadfile's timestamps. Default: timestamps are
    /// honoured like dbench (client.txt has none).
    #[arg(long)]
    pub ignore_timestamps: bool,
    /// Play the loadfile once per client instead of looping until -t is over (dbench 5
    /// --run-once); -t still caps the run. Default: loop until -t is over.
    #[arg(long)]
    pub run_once: bool,
    /// Leave the client trees in place after the run (dbench --skip-cleanup). Default: removed.
    #[arg(long)]
    pub skip_cleanup: bool,
    /// Repetitions, output (with --json the progress lines go to stderr) and store.
    #[command(flatten)]
    pub run: RunArgs,
    /// Output format: dbench's text, or one JSON document (--json is the same as --format
    /// json).
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Print the clients, the loadfile, the run time and the space needed; create nothing.
    /// Default: run.
    #[arg(long)]
    pub dry_run: bool,
    /// Write fslab's default loadfile model to FILE and exit (no clients are run).
    #[arg(long, value_name = "FILE", conflicts_with = "clients")]
    pub generate: Option<PathBuf>,
    /// Seed for --generate. Default: the seed of the built-in default load.
    #[arg(long, value_name = "N", requires = "generate")]
    pub seed: Option<u64>,
    /// Tasks per pass for --generate, 1 to 10000. Default: as the built-in default load (1500).
    #[arg(long, value_name = "N", requires = "generate")]
    pub tasks: Option<u32>,
    /// No per-second progress lines, no repetition counter (`dbench rep 2/3 · ETA …`) and no
    /// "stored as run N" line on stderr. Default: all shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// MPI mode options (builds with the `mpi` feature; hidden and refused in others).
    #[command(flatten)]
    pub mpi: crate::cli::MpiReportArgs,
}

/// Output format of `list`, `show` and the engines' default text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    /// Text tables.
    Table,
    /// One JSON document.
    Json,
}

/// `fslab list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only studies and runs with this name; `*` and `?` are wildcards (quote them).
    /// Default: all names.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Only this kind: `study` (study files), `run` (engine commands), or an engine —
    /// `fdtree`, `iozone`, `dbench`, `fio` (its runs and the studies with such a workload).
    /// Default: all kinds.
    #[arg(long, value_name = "KIND", value_parser = ["study", "run", "fdtree", "iozone", "dbench", "fio"])]
    pub kind: Option<String>,
    /// Only those created since a date (2026-11-24, in UTC), a time (RFC 3339, e.g.
    /// 2026-11-24T08:00:00Z) or a while ago (12h, 7d). Default: any time.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most N, newest first. Default: all.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// The same as --format json. Default: a table.
    #[arg(long)]
    pub json: bool,
}

/// `fslab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run or study id (see `fslab list`).
    pub id: i64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// The same as --format json. Default: a table.
    #[arg(long)]
    pub json: bool,
    /// Every table, comparison and environment entry (as `fslab report --all`). Default: the
    /// compact report.
    #[arg(long)]
    pub all: bool,
    /// Fit the text in this many columns. Default: the terminal's width, 100 when the output
    /// is not a terminal.
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
}

/// `fslab rm`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// The study and run ids to remove with all their cells, repetitions and samples (see
    /// `fslab list`). All are removed in one transaction, or none when one is refused.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<i64>,
}

/// Format of `fslab export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON document.
    Json,
}

/// `fslab export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The study or run id (see `fslab list`).
    pub id: i64,
    /// Every raw sample, one row each: study, cell, one column per factor level,
    /// workload, repetition, order index, phase, metric, unit, value. Default: one row per
    /// repetition with a column per phase.metric.
    #[arg(long)]
    pub raw: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output. Default: standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `fslab import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Another fslab results database (e.g. copied from another machine). Its finished
    /// studies and runs are copied with new ids; where each came from is recorded.
    #[arg(value_name = "OTHER.db")]
    pub file: PathBuf,
}

/// What error bars and bands show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ErrorBarsArg {
    /// The 95% confidence interval (of the geometric mean, on the log scale, for times,
    /// rates, sizes and counts; Student t of the mean otherwise).
    Ci,
    /// Plus and minus one standard deviation (clipped at 0 for quantities that cannot be
    /// negative).
    Sd,
}

/// Options shared by `fslab report` and `fslab compare`.
#[derive(Debug, Args)]
pub struct ReportOutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::report::Format,
    /// Write the report to FILE instead of standard output. Default: standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only these metrics: `phase.metric`, a metric name (all phases) or a phase (all its
    /// metrics); repeat or separate with commas. They are compared and are the primary family
    /// Observations test. Default: all metrics in tables, each phase's headline metric in
    /// comparisons and charts, the workload's capability (fdtree's rates, IOzone's and
    /// dbench's throughput, fio's IOPS) as the primary family.
    #[arg(long, value_name = "METRIC")]
    pub metric: Vec<String>,
    /// What error bars show in charts.
    #[arg(long, value_enum, default_value = "ci")]
    pub error_bars: ErrorBarsArg,
    /// Warn when a phase takes less than this many seconds on average and its time varies by
    /// more than --max-cv between repetitions (with one repetition: whenever it is shorter).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub min_phase: f64,
    /// Warn when the coefficient of variation exceeds this percentage with 95% confidence (its
    /// one-sided lower bound from the chi-square distribution of the sample variance: at n = 5
    /// a measured value above 1.54 times this).
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
    pub max_cv: f64,
    /// How warnings are listed: one line per kind with a count and the places named (the
    /// terminal shows at most about ten), or every warning on its own line. JSON has both.
    #[arg(long, value_enum, default_value = "grouped")]
    pub warnings: crate::report::WarningsMode,
    /// How much of each configuration's superblock the terminal and Markdown reports print:
    /// one line (block size, inodes, journal or log, features) or the whole dump. HTML folds
    /// the whole dump under its line; JSON and CSV carry it as data.
    #[arg(long, value_enum, default_value = "summary")]
    pub env: crate::report::EnvDetail,
    /// Every table, comparison, observation, environment entry and command. Default: the
    /// answer first and one compact table per workload (its headline metrics); the rest is
    /// counted in one line. JSON and CSV always carry everything.
    #[arg(long)]
    pub all: bool,
    /// Fit the terminal report in this many columns. Default: the terminal's width, 100 when
    /// the output is not a terminal.
    #[arg(long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
}

/// `fslab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The study or run: ID, NAME (newest with that name), ID:INDEX or ID/factor=level for
    /// one cell.
    pub source: String,
    /// Compare against this instead of each factor's first level: a level (`64MB`),
    /// `factor=level`, or a cell label (then every cell is compared with that cell). Default:
    /// each factor's first level, except a sweep's (8 or more numeric levels, such as IOzone's
    /// -a record sizes, and the other axis of its matrix), which is compared only against a
    /// level named here.
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    /// Output options.
    #[command(flatten)]
    pub output: ReportOutputArgs,
}

/// `fslab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: ID, NAME, ID:INDEX or ID/factor=level.
    pub a: String,
    /// The candidate, compared against A.
    pub b: String,
    /// Output options.
    #[command(flatten)]
    pub output: ReportOutputArgs,
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
        assert_eq!(
            (
                a.shape.dirs,
                a.shape.files,
                a.shape.size_blocks,
                a.shape.levels
            ),
            (10, 10, 10, 4)
        );
        assert_eq!(a.start_dir, PathBuf::from("."));
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
