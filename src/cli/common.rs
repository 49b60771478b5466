//! The options every engine command takes (`--repeat`, `--format`, `--dry-run`, `-q`, …),
//! declared once in [`RunArgs`] and flattened into each; a command words the help of those
//! whose meaning is its own ([`Wording`]). The lists other parsers need (an engine's own flag
//! parser, fio's argument splitting) are read from this definition ([`common_options`]).

use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};

/// Options every engine command takes, declared once.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Run N times and report mean, sd and 95% CI. Default: 1. (Each engine command states
    /// what one repetition is: [`Wording::repeat`].)
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
    /// Output format (--json is the same as --format json).
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Print what would run and the space needed; create nothing. Default: run.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress and no "stored as run N" line on stderr. Default: both shown.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl RunArgs {
    /// `--format json` and its alias `--json` mean the same: either sets both.
    pub fn normalize(&mut self) {
        if self.format == OutputFormat::Json {
            self.json = true;
        } else if self.json {
            self.format = OutputFormat::Json;
        }
    }
}

/// How an engine command words the common options whose meaning is its own.
pub struct Wording {
    /// `--repeat`: what one repetition is.
    pub repeat: &'static str,
    /// `--format`.
    pub format: &'static str,
    /// `--dry-run`: what it prints.
    pub dry_run: &'static str,
    /// `--quiet`: what it silences.
    pub quiet: &'static str,
    /// Whether `--format` takes [`TextFormat`]'s values only (every engine but fdtree, whose
    /// own report lines are a value of [`OutputFormat`]).
    pub text_only: bool,
    /// Whether `-q` is `--quiet` (not in `fslab iozone`, where `-q` is IOzone's).
    pub short_q: bool,
}

impl Wording {
    /// The common option `a` as this command has it (`#[command(mut_args(…))]`).
    pub fn apply(&self, a: clap::Arg) -> clap::Arg {
        match a.get_id().as_str() {
            "repeat" => a.help(self.repeat),
            "format" if self.text_only => a.help(self.format).value_parser(
                clap::builder::EnumValueParser::<TextFormat>::new().map(|f| match f {
                    TextFormat::Table => OutputFormat::Table,
                    TextFormat::Json => OutputFormat::Json,
                }),
            ),
            "format" => a.help(self.format),
            "dry_run" => a.help(self.dry_run),
            "quiet" if self.short_q => a.help(self.quiet),
            "quiet" => a.help(self.quiet).short(None),
            _ => a,
        }
    }
}

/// The options every engine command takes: [`RunArgs`]'s and the global ones (`--db`), for
/// the parsers that must tell them from an engine's own (an engine's own flags, fio's options).
pub fn common_options() -> Vec<clap::Arg> {
    RunArgs::augment_args(clap::Command::new("common"))
        .get_arguments()
        .cloned()
        .chain(global_options())
        .collect()
}

/// Every spelling of `cmd`'s options that `keep` keeps, as typed: the long ones (`--repeat`),
/// then the short ones (`-q`).
pub fn spellings(cmd: &clap::Command, keep: impl Fn(&clap::Arg) -> bool) -> Vec<String> {
    let kept = || cmd.get_arguments().filter(|a| keep(a));
    let longs = kept().filter_map(|a| a.get_long().map(|l| format!("--{l}")));
    longs
        .chain(kept().filter_map(|a| a.get_short().map(|c| format!("-{c}"))))
        .collect()
}

/// The option among `args` that `word` names as typed, without a value: `--long`, or `-s`
/// (one short option alone).
pub(super) fn named<'a>(
    mut args: impl Iterator<Item = &'a clap::Arg>,
    word: &str,
) -> Option<&'a clap::Arg> {
    if let Some(long) = word.strip_prefix("--") {
        return args.find(|o| o.get_long() == Some(long));
    }
    let mut chars = word.strip_prefix('-')?.chars();
    let (short, alone) = (chars.next()?, chars.next().is_none());
    args.find(|o| alone && o.get_short() == Some(short))
}

/// Options of `fslab` itself, which every subcommand takes, before or after its name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Results database. Default: $FSLAB_DB, else ~/.local/share/fslab/results.db.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}

/// [`GlobalArgs`]'s options.
pub fn global_options() -> Vec<clap::Arg> {
    let cmd = GlobalArgs::augment_args(clap::Command::new("global"));
    cmd.get_arguments().cloned().collect()
}

/// A `--settle` or `--wait-quiet` time.
pub(super) fn parse_settle(s: &str) -> Result<std::time::Duration, String> {
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

/// Output format of `list`, `show` and the engines' default text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    /// Text tables.
    Table,
    /// One JSON document.
    Json,
}
