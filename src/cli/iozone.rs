//! `fslab iozone` options: IOzone's flags where IOzone has them (same letters, same
//! defaults, sizes in KiB when no suffix is given), fslab's additions as long options. The
//! flags a study has as keys are declared once, in [`crate::workload::iozone::IozoneSpec`];
//! here are the command's own: the sweep, the files, verification, cache actions, output.

use super::{RunArgs, Wording};
use clap::Args;
use std::path::PathBuf;

pub(super) const EXAMPLES: &str = "\
Examples:
  fslab iozone -i 0 -i 1 -s 1g -r 1m -f /mnt/test/iozone.tmp   write/rewrite, read/re-read
  fslab iozone -s 16g -r 1m -r 4m -r 16m -f /mnt/t/f --repeat 10   the classic journal study
  fslab iozone -a -n 1m -g 64m -f /mnt/t/f -R                  auto sweep with IOzone's report
  fslab iozone -I -s 2g -r 1m -f /mnt/t/f                       O_DIRECT
  fslab iozone -t 4 -s 256m -r 64k -F /mnt/t/a /mnt/t/b /mnt/t/c /mnt/t/d   throughput mode";

/// How `fslab iozone` words the common options.
pub(super) const WORDING: Wording = Wording {
    repeat: "Run every test N times, interleaved over the sweep's file and record sizes, and \
report mean, sd and 95% CI per point. Default: 1.",
    format: "Output format: IOzone's text tables, or one JSON document (--json is the same as \
--format json)",
    dry_run: "Print the sweep's points, the bytes each moves, the space needed and an estimate \
of the time (the bytes at the rate the newest stored run in the same directory measured, else \
at an assumed 150 MB/s); write nothing. Default: run",
    quiet: "No progress bar and no \"stored as run N\" line. Default: both shown",
    text_only: true,
    short_q: false,
};

/// `fslab iozone`.
#[derive(Debug, Args)]
pub struct IozoneArgs {
    /// Sizes, tests, timing flags, stride, workers and buffer: the study's iozone keys, as
    /// flags.
    #[command(flatten)]
    pub params: crate::workload::iozone::IozoneSpec,
    /// Auto mode (IOzone -a): files 64 KiB to 512 MiB, records 4 KiB to 16 MiB, doubling;
    /// files over 16 MiB start at 64 KiB records unless -z. Default: the sizes of -s and -r.
    #[arg(short = 'a')]
    pub auto: bool,
    /// With -a: keep small records for large files (IOzone -z). Default: off.
    #[arg(short = 'z')]
    pub no_crossover: bool,
    /// Auto mode: smallest file size (IOzone -n). Default: 64k.
    #[arg(short = 'n', value_name = "SIZE")]
    pub min_file: Option<String>,
    /// Auto mode: largest file size (IOzone -g). Default: 512m.
    #[arg(short = 'g', value_name = "SIZE")]
    pub max_file: Option<String>,
    /// Auto mode: smallest record size (IOzone -y). Default: 4k.
    #[arg(short = 'y', value_name = "SIZE")]
    pub min_record: Option<String>,
    /// Auto mode: largest record size (IOzone -q). Default: 16m.
    #[arg(short = 'q', value_name = "SIZE")]
    pub max_record: Option<String>,
    /// Test file (IOzone -f). Default: ./iozone.tmp.
    #[arg(short = 'f', value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Throughput mode: one file per worker (IOzone -F), as many as -t. Default:
    /// ./iozone.DUMMY.<n>.
    #[arg(id = "thread_files", short = 'F', value_name = "PATH", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Keep the test file(s) afterwards (IOzone -w). Default: remove.
    #[arg(short = 'w')]
    pub keep: bool,
    /// Let the run write over a test file that already exists with data (then removed at the
    /// end unless -w, as IOzone does). Default: such a file is refused; an existing empty
    /// file is used and emptied again; directories, devices and other special files are
    /// always refused.
    #[arg(long)]
    pub overwrite: bool,
    /// Verify every byte read against the pattern written (IOzone -V); a mismatch fails the
    /// run naming the offset. Optional pattern byte 1-255. Default pattern: 165 (0xA5).
    #[arg(short = 'V', value_name = "PATTERN", num_args = 0..=1, default_missing_value = "165")]
    pub verify: Option<u8>,
    /// Throughput mode: no stonewalling (IOzone -x). Default: stonewalling on.
    #[arg(short = 'x')]
    pub no_stonewall: bool,
    /// Also print IOzone's "Excel" report blocks (IOzone -R). Default: off.
    #[arg(short = 'R')]
    pub excel: bool,
    /// Write the -R report as an Excel (BIFF2 .xls) worksheet, as IOzone -b does. Default: no
    /// worksheet.
    #[arg(short = 'b', value_name = "FILE.xls")]
    pub biff: Option<PathBuf>,
    /// Repetitions, output, dry run and store.
    #[command(flatten)]
    pub run: RunArgs,
    /// Drop the page cache before every test after the first (root). Default: off.
    #[arg(long)]
    pub drop_caches: bool,
    /// posix_fadvise(DONTNEED) on the file before every test after the first, so reads
    /// come from the device. Default: off.
    #[arg(long)]
    pub fadvise: bool,
    /// Throughput mode: seconds to pause after sync() between phases, up to 365 days
    /// (IOzone: 2).
    #[arg(long, default_value_t = crate::workload::iozone::DEFAULT_PHASE_PAUSE, value_name = "SECONDS")]
    pub phase_pause: f64,
    /// Skip the free-space check before writing (thin or compressing file systems). Default:
    /// checked.
    #[arg(long)]
    pub no_space_check: bool,
    /// MPI mode options (builds with the `mpi` feature; hidden and refused in others).
    #[command(flatten)]
    pub mpi: crate::cli::MpiReportArgs,
}
