//! mdtest's command line, parsed into [`Invocation`] with mdtest's syntax: `-n 10`, `-n10`,
//! `-n=10`, flags grouped (`-uFL`), numbers with mdtest's binary suffixes (`10k` = 10240),
//! `--random-seed=5` or `--random-seed 5`. Every refusal is one line naming the flag.

use super::params::{Field, MdtestParams, DEFAULT_DIR, FLAGS};
use super::report::Print;
use crate::workload::param::ParamError;
use std::path::PathBuf;

/// A parsed mdtest command line: the run's parameters plus where it runs and what it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// What the run does.
    pub params: MdtestParams,
    /// `-d`: the directory the test directories go in (default `./out`); with several
    /// (`-d a@b`), the first.
    pub dir: PathBuf,
    /// `-d a@b@c`: every directory, in order (one for a plain `-d`); rank `r` works in
    /// `dirs[r % dirs.len()]`, as mdtest's ranks do.
    pub dirs: Vec<PathBuf>,
    /// `-P` / `-Z`: which tables.
    pub print: Print,
    /// `-v` (once per level) or `-V N`: at 1 or more each iteration's phases are printed as
    /// it ends (mdtest's level-1 lines).
    pub verbose: u32,
    /// `-x FILE`: mdtest's stonewall status file: written with the files each rank made
    /// after a stonewalled creation; read by a run without creation, whose count it must
    /// agree with.
    pub status_file: Option<PathBuf>,
}

impl Invocation {
    /// The directory rank `rank` works in (`-d a@b`: directory `rank % 2`).
    pub fn dir_of(&self, rank: u32) -> &PathBuf {
        let n = self.dirs.len().max(1);
        self.dirs.get(rank as usize % n).unwrap_or(&self.dir)
    }
}

/// mdtest's flags that set no parameter (where and what it prints), each with whether it
/// takes a value; the parameters' flags are [`FLAGS`].
const OTHER: &[(char, bool)] = &[
    ('d', true),
    ('x', true),
    ('V', true),
    ('v', false),
    ('P', false),
    ('Z', false),
    ('a', true),
];

/// Flags fslab's mdtest takes, for the refusal of any other.
fn supported() -> String {
    let other = OTHER.iter().map(|(c, _)| format!("-{c}"));
    let all: Vec<String> = FLAGS
        .iter()
        .map(|(_, f, _)| f.to_string())
        .chain(other)
        .collect();
    format!("{} POSIX", all.join(" "))
}

/// mdtest options fslab does not take, with the reason.
fn unsupported(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "-S" => "shared-file mode is not supported by fslab's engine: there every rank opens the same file names with O_CREAT, while fslab creates each file exclusively (O_EXCL) so that it never writes into an entry it did not make; for ranks working on each other's files use -N",
        "-c" => "collective creates (rank 0 makes every rank's items) are not supported by fslab's engine, whose ranks each make their own items; run with fewer ranks to measure one creating process",
        "-B" => "fslab's phases always start at a barrier: without one, ranks overlap phases and a phase's time is not its own",
        "-X" | "--verify-write" | "-G" | "--dataPacketType" => {
            "fslab writes zeros and does not verify data; mdtest's data patterns and their checks are not implemented"
        }
        "-f" | "-l" | "-s" => "run fslab once per rank count instead of sweeping task counts",
        "-p" | "--run-cmd-before-phase" | "--run-cmd-after-phase" => {
            "fslab's studies do cache policy and sync around repetitions; -Y syncs after each phase"
        }
        "--print-all-procs" | "--showRankStatistics" | "--saveRankPerformanceDetails"
        | "--savePerOpDataCSV" | "--warningAsErrors" => {
            "fslab stores every phase of every repetition instead"
        }
        _ => return None,
    })
}

fn err(msg: String) -> ParamError {
    ParamError::new(msg)
}

/// A count with mdtest's suffixes (`k`, `m`, `g`, `t`, `p`: powers of 1024).
fn count(flag: &str, v: &str) -> Result<u64, ParamError> {
    let t = v.trim();
    // The suffix's place in "kmgtp" gives its power of 1024.
    let suffix = t
        .chars()
        .last()
        .and_then(|c| "kmgtp".find(c.to_ascii_lowercase()));
    let (digits, shift) = match suffix {
        Some(i) => (&t[..t.len() - 1], 10 * (i + 1)),
        None => (t, 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| {
        err(format!(
            "{flag} {v}: not a count; give a whole number of 0 or more, optionally with k, m, g, t or p (powers of 1024)"
        ))
    })?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| err(format!("{flag} {v}: too large; give a count below 2^64")))
}

fn small(flag: &str, v: &str) -> Result<u32, ParamError> {
    let n = count(flag, v)?;
    u32::try_from(n).map_err(|_| err(format!("{flag} {v}: too large; give at most {}", u32::MAX)))
}

/// The parameter `flag` sets, if it sets one.
fn field(flag: &str) -> Option<Field> {
    FLAGS
        .iter()
        .find(|(_, f, _)| *f == flag)
        .map(|(_, _, x)| *x)
}

/// Set a parameter from its flag's value.
fn set(p: &mut MdtestParams, field: Field, flag: &str, v: &str) -> Result<(), ParamError> {
    match field {
        Field::Count(f) => *f(p) = count(flag, v)?,
        Field::Small(f) => *f(p) = small(flag, v)?,
        Field::Switch(f) => *f(p) = true,
        Field::Seed => {
            let seed = small(flag, v)?;
            p.random_seed = (seed > 0).then_some(seed);
        }
    }
    Ok(())
}

/// Parse mdtest's arguments (without the program name).
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Invocation, ParamError> {
    let mut inv = Invocation {
        params: MdtestParams::default(),
        dir: PathBuf::from(DEFAULT_DIR),
        dirs: vec![PathBuf::from(DEFAULT_DIR)],
        print: Print::Rate,
        verbose: 0,
        status_file: None,
    };
    let mut args = args.iter().map(AsRef::as_ref);
    while let Some(tok) = args.next() {
        if let Some(long) = tok.strip_prefix("--") {
            let (name, inline) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            let flag = format!("--{name}");
            let Some(f) = field(&flag) else {
                return Err(refuse(&flag));
            };
            let v = match (f, inline) {
                (Field::Switch(_), Some(v)) => {
                    return Err(err(format!("{flag}={v}: {flag} takes no value")))
                }
                (Field::Switch(_), None) => String::new(),
                (_, Some(v)) => v.to_string(),
                (_, None) => next(&mut args, &flag)?,
            };
            set(&mut inv.params, f, &flag, &v)?;
            continue;
        }
        let Some(body) = tok.strip_prefix('-').filter(|b| !b.is_empty()) else {
            return Err(err(format!(
                "unexpected argument '{tok}': mdtest takes only options (the directory is -d DIR)"
            )));
        };
        for (k, c) in body.char_indices() {
            let flag = format!("-{c}");
            let other = OTHER.iter().find(|(o, _)| *o == c).map(|(_, value)| *value);
            match (field(&flag), other) {
                (Some(Field::Switch(f)), _) => *f(&mut inv.params) = true,
                (Some(_), _) | (None, Some(true)) => {
                    let rest = &body[k + c.len_utf8()..];
                    let v = match rest.strip_prefix('=').unwrap_or(rest) {
                        "" => next(&mut args, &flag)?,
                        r => r.to_string(),
                    };
                    match field(&flag) {
                        Some(f) => set(&mut inv.params, f, &flag, &v)?,
                        None => value(&mut inv, c, &flag, &v)?,
                    }
                    break;
                }
                (None, _) => match c {
                    'P' => inv.print = Print::Both,
                    // -P (both tables) wins over -Z, whichever comes first.
                    'Z' if inv.print == Print::Rate => inv.print = Print::Time,
                    'Z' => {}
                    'v' => inv.verbose += 1,
                    _ => return Err(refuse(&flag)),
                },
            }
        }
    }
    if inv.dirs.len() > 1 {
        // mdtest's rules for several test directories.
        if !inv.params.unique_dir {
            return Err(err(format!(
                "-d {}: several directories need -u (mdtest's rule: a shared tree cannot be in several directories)",
                join(&inv.dirs)
            )));
        }
        if inv.params.stride > 0 {
            return Err(err(format!(
                "-d {} with -N {}: several directories cannot be used with -N (mdtest's rule: a rank would work on another directory's tree); drop -N or give one directory",
                join(&inv.dirs),
                inv.params.stride
            )));
        }
    }
    inv.dir = inv.dirs[0].clone();
    Ok(inv)
}

fn join(dirs: &[PathBuf]) -> String {
    let v: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    v.join("@")
}

/// The next argument: `flag`'s value.
fn next<'a>(args: &mut impl Iterator<Item = &'a str>, flag: &str) -> Result<String, ParamError> {
    args.next()
        .map(str::to_string)
        .ok_or_else(|| err(format!("{flag} needs a value")))
}

fn refuse(flag: &str) -> ParamError {
    let what = match unsupported(flag) {
        Some(why) => format!("mdtest option not supported by fslab ({why})"),
        None => "not an mdtest option".to_string(),
    };
    err(format!("{flag}: {what}; supported: {}", supported()))
}

/// The value of one of the [`OTHER`] flags.
fn value(o: &mut Invocation, c: char, flag: &str, v: &str) -> Result<(), ParamError> {
    match c {
        'a' if v.eq_ignore_ascii_case("POSIX") => {}
        'a' => {
            return Err(err(format!(
                "-a {v}: fslab's mdtest runs on the POSIX interface only; leave -a out or give -a POSIX"
            )))
        }
        'd' => {
            if v.is_empty() {
                return Err(err("-d needs a directory".into()));
            }
            if v.split('@').any(str::is_empty) {
                return Err(err(format!(
                    "-d {v}: an empty directory between '@'s; give directories as a@b@c"
                )));
            }
            o.dirs = v.split('@').map(PathBuf::from).collect();
        }
        'x' => {
            if v.is_empty() {
                return Err(err("-x needs a file".into()));
            }
            o.status_file = Some(PathBuf::from(v));
        }
        'V' => o.verbose = small(flag, v)?,
        _ => return Err(refuse(flag)),
    }
    Ok(())
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
