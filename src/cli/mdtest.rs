//! `fslab mdtest` options: mdtest's flags (read by `workload::mdtest::parse`) and fslab's own
//! ([`MdtestOwnArgs`]) in any order, one list of words for clap.

use super::{BackendArg, RunArgs, Wording};
use clap::{Args, Parser};

/// `fslab mdtest`: mdtest's options and fslab's, in any order; `app::mdtest` separates them.
#[derive(Debug, Args)]
pub struct MdtestArgs {
    /// mdtest's options (below) and fslab's own: [`MdtestOwnArgs::help`].
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "OPTIONS"
    )]
    pub args: Vec<String>,
}

/// fslab's own options of `fslab mdtest`, read from among mdtest's.
#[derive(Debug, Parser)]
#[command(
    name = "fslab mdtest",
    no_binary_name = true,
    disable_help_flag = true,
    mut_args(|a| WORDING.apply(a))
)]
pub struct MdtestOwnArgs {
    /// Repetitions, output and store (`--repeat N` is mdtest's `-i N`; give one of them).
    #[command(flatten)]
    pub run: RunArgs,
    /// Where operations go: fs (the directory of -d) or null (no system calls, fslab's own
    /// cost). Default: fs.
    #[arg(long, value_enum, default_value_t = BackendArg::Fs)]
    pub backend: BackendArg,
}

impl MdtestOwnArgs {
    /// The parser of fslab's options among mdtest's: these and the global ones (`--db`).
    pub fn parser() -> clap::Command {
        <Self as clap::CommandFactory>::command().args(super::common::global_options())
    }

    /// Separate fslab's own options from mdtest's: an option fslab's parser knows
    /// ([`MdtestOwnArgs::parser`]: the common options, `--db`, `--backend`), long (with its value,
    /// given with `=` or as the next argument) or short (`-q`); everything else is mdtest's.
    pub fn split(args: &[String]) -> (Vec<String>, Vec<String>) {
        let cmd = Self::parser();
        let takes_value = |a: &str| {
            super::common::named(cmd.get_arguments(), a).map(|o| o.get_action().takes_values())
        };
        let (mut own, mut md) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            let (name, inline) = match a.split_once('=') {
                Some((n, _)) if n.starts_with("--") => (n, true),
                _ => (a.as_str(), false),
            };
            match takes_value(name) {
                Some(value) => {
                    own.push(a.clone());
                    if value && !inline && i < args.len() {
                        own.push(args[i].clone());
                        i += 1;
                    }
                }
                None => md.push(a.clone()),
            }
        }
        (own, md)
    }

    /// The help of `fslab mdtest`'s arguments: mdtest's options and fslab's, named from
    /// [`MdtestOwnArgs::parser`].
    pub(super) fn help() -> String {
        let own = super::spellings(&Self::parser(), |_| true);
        format!(
            "mdtest's options (below) and fslab's own ({})",
            own.join(", ")
        )
    }
}

/// How `fslab mdtest` words the common options (its help shows mdtest's table instead).
const WORDING: Wording = Wording {
    repeat: "Run N times (mdtest's -i N; give one of them)",
    format: "Output: table (mdtest's SUMMARY) or json. Default: table",
    dry_run: "Print the layout, the counts and the space needed; create nothing",
    quiet: "No progress and no \"stored as run N\" line on stderr. Default: both shown",
    text_only: true,
    short_q: true,
};

pub(super) const EXAMPLES: &str = "\
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
