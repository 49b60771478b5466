//! mdtest's parameters with mdtest's defaults, and their validation.
//!
//! Field names are the study-file keys the issue names (`items` for `-n`, `items_per_dir` for
//! `-I`, …); [`FLAGS`] maps each key to mdtest's flag, so a refusal reads `-z 3: …` on the
//! command line and `depth = 3: …` in a study (see [`crate::workload::param`]).

use super::layout::Layout;
use crate::workload::param::{ParamError, Words};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// mdtest's default branching factor (`-b`).
pub const DEFAULT_BRANCHING: u32 = 1;
/// mdtest's default number of iterations (`-i`).
pub const DEFAULT_ITERATIONS: u32 = 1;
/// mdtest's default test directory (`-d`).
pub const DEFAULT_DIR: &str = "./out";
/// The block size `O_DIRECT` transfers must be a multiple of (`--posix.odirect`): the
/// smallest logical block size; 4K-sector devices need multiples of 4096.
pub const DIRECT_ALIGN: u64 = 512;

/// How an mdtest flag sets its parameter.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    /// A count with mdtest's suffixes (`-n 10k`).
    Count(fn(&mut MdtestParams) -> &mut u64),
    /// A count below 2^32 (`-z 3`).
    Small(fn(&mut MdtestParams) -> &mut u32),
    /// A switch (`-u`).
    Switch(fn(&mut MdtestParams) -> &mut bool),
    /// `--random-seed N` (0: from the clock).
    Seed,
}

/// Declares [`MdtestParams`], its [`Default`] and [`FLAGS`] from one list: each parameter
/// with its doc and serde attributes, its study key and type, mdtest's default, mdtest's
/// flag and how the flag sets it (a [`Field`] variant), in the order of mdtest's command line.
macro_rules! params {
    ($($(#[$attr:meta])* $key:ident: $ty:ty = $default:expr, $flag:literal, $how:ident;)*) => {
        /// What one mdtest run does (everything but where it runs and how it prints).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct MdtestParams {
            /// Label in reports (a study file's `label`); default: the flags
            /// ([`MdtestParams::flags`]).
            #[serde(skip_serializing_if = "Option::is_none")]
            pub label: Option<String>,
            $($(#[$attr])* pub $key: $ty,)*
        }

        impl Default for MdtestParams {
            fn default() -> Self {
                MdtestParams {
                    label: None,
                    $($key: $default,)*
                }
            }
        }

        /// mdtest's flag of each parameter: (study key, flag, field), in the order of
        /// mdtest's command line ([`MdtestParams::flags`]). The parser reads these flags,
        /// refusals name them ([`words`]) and labels print them.
        pub const FLAGS: &[(&str, &str, Field)] =
            &[$((stringify!($key), $flag, params!(@field $how $key)),)*];
    };
    (@field Seed $key:ident) => { Field::Seed };
    (@field $how:ident $key:ident) => { Field::$how(|p| &mut p.$key) };
}

params! {
    /// `-n`: items (directories and/or files) per rank; 0 = not given.
    items: u64 = 0, "-n", Count;
    /// `-I`: items per tree directory; 0 = not given.
    items_per_dir: u64 = 0, "-I", Count;
    /// `-z`: depth of the tree below its top directory.
    depth: u32 = 0, "-z", Small;
    /// `-b`: subdirectories per tree directory.
    branching: u32 = DEFAULT_BRANCHING, "-b", Small;
    /// `-u`: one tree per rank (`mdtest_tree.<rank>.0`) instead of one shared tree.
    unique_dir: bool = false, "-u", Switch;
    /// `-F`: files only.
    files_only: bool = false, "-F", Switch;
    /// `-D`: directories only.
    dirs_only: bool = false, "-D", Switch;
    /// `-L`: items only in the leaves of the tree.
    leaf_only: bool = false, "-L", Switch;
    /// `-w`: bytes written to each file after it is created.
    write_bytes: u64 = 0, "-w", Count;
    /// `-e`: bytes read from each file.
    read_bytes: u64 = 0, "-e", Count;
    /// `-y`: fsync each file after writing it.
    sync: bool = false, "-y", Switch;
    /// `-i`: iterations.
    iterations: u32 = DEFAULT_ITERATIONS, "-i", Small;
    /// `-C`: create.
    create_only: bool = false, "-C", Switch;
    /// `-T`: stat.
    stat_only: bool = false, "-T", Switch;
    /// `-E`: read.
    read_only: bool = false, "-E", Switch;
    /// `-r`: remove.
    remove_only: bool = false, "-r", Switch;
    /// `-U`: rename directories.
    rename_dirs: bool = false, "-U", Switch;
    /// `-N`: rank r stats the items of rank r+N, reads those of r+2N, removes those of r+3N.
    stride: u32 = 0, "-N", Small;
    /// `-W`: stonewall seconds for file creation (0 = off).
    stonewall: u32 = 0, "-W", Small;
    /// `-R`: stat (and read) in a random order.
    random: bool = false, "-R", Switch;
    /// `--random-seed`: the order's seed (each rank adds its rank); `None` = from the clock.
    /// As in mdtest, a seed alone also selects the random order.
    random_seed: Option<u32> = None, "--random-seed", Seed;
    /// `-Y`: `sync` after each phase, inside the phase's time (as mdtest, which runs the
    /// `sync` command there).
    #[serde(skip_serializing_if = "is_false")]
    sync_phases: bool = false, "-Y", Switch;
    /// `-k`: make each file with `mknod` (an empty regular file, mode 0400) instead of
    /// `open(O_CREAT)`; no data can be written (`-w` is refused, as in mdtest).
    #[serde(skip_serializing_if = "is_false")]
    mknod: bool = false, "-k", Switch;
    /// `-t`: with `-u`, time opening each rank's own tree directory with the phase (without
    /// `-t` it is opened before the clock starts); no effect without `-u`, as in mdtest.
    #[serde(skip_serializing_if = "is_false")]
    time_unique_dir: bool = false, "-t", Switch;
    /// `--posix.odirect`: files are written and read with `O_DIRECT`.
    #[serde(skip_serializing_if = "is_false")]
    odirect: bool = false, "--posix.odirect", Switch;
}

/// [`FLAGS`] as [`Words`]: refusals on the command line name mdtest's flags.
pub fn words() -> Words {
    static PAIRS: std::sync::OnceLock<Vec<(&str, &str)>> = std::sync::OnceLock::new();
    Words::Flags(PAIRS.get_or_init(|| FLAGS.iter().map(|(k, f, _)| (*k, *f)).collect()))
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which steps run (mdtest: none of `-C -T -E -r -U` given means all five).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Steps {
    /// Tree, directory and file creation.
    pub create: bool,
    /// Directory and file stat.
    pub stat: bool,
    /// File read.
    pub read: bool,
    /// Directory rename.
    pub rename: bool,
    /// Directory, file and tree removal.
    pub remove: bool,
}

impl MdtestParams {
    /// The parameters as mdtest's command line: `mdtest -n 10000 -z 2 -b 3 -u`, the flags
    /// that differ from mdtest's defaults, in [`FLAGS`] order.
    pub fn flags(&self) -> String {
        let (mut me, mut d) = (self.clone(), MdtestParams::default());
        let mut out = String::from("mdtest");
        for (_, flag, field) in FLAGS {
            // The flag's value with its leading space (none for a switch).
            let shown = match *field {
                Field::Count(f) => (*f(&mut me) != *f(&mut d)).then(|| format!(" {}", f(&mut me))),
                Field::Small(f) => (*f(&mut me) != *f(&mut d)).then(|| format!(" {}", f(&mut me))),
                // A seed selects the random order itself.
                Field::Switch(_) if *flag == "-R" && me.random_seed.is_some() => None,
                Field::Switch(f) => f(&mut me).then(String::new),
                Field::Seed => me.random_seed.map(|s| format!(" {s}")),
            };
            if let Some(v) = shown {
                out.push_str(&format!(" {flag}{v}"));
            }
        }
        out
    }

    /// The steps this run takes.
    pub fn steps(&self) -> Steps {
        let any = self.create_only
            || self.stat_only
            || self.read_only
            || self.remove_only
            || self.rename_dirs;
        Steps {
            create: !any || self.create_only,
            stat: !any || self.stat_only,
            read: !any || self.read_only,
            rename: !any || self.rename_dirs,
            remove: !any || self.remove_only,
        }
    }

    /// Directory items are made (neither `-F` nor `-D`, or `-D`).
    pub fn does_dirs(&self) -> bool {
        self.dirs_only || !self.files_only
    }

    /// File items are made (neither `-F` nor `-D`, or `-F`).
    pub fn does_files(&self) -> bool {
        self.files_only || !self.dirs_only
    }

    /// Stat and read go in a random order (`-R`, or a seed given, as in mdtest).
    pub fn random_order(&self) -> bool {
        self.random || self.random_seed.is_some_and(|s| s > 0)
    }

    /// Check the parameters (mdtest's rules, and fslab's where mdtest's are unclear) and
    /// return the tree's layout. Errors are [`ParamError`]s naming the parameter by key.
    pub fn validate(&self) -> Result<Layout> {
        let (n, i) = (self.items, self.items_per_dir);
        if n == 0 && i == 0 {
            crate::bail_param!(
                "give {{items=}} (items per rank) or {{items_per_dir=}} (items per directory); with neither mdtest measures nothing"
            );
        }
        if n > 0 && i > 0 {
            crate::bail_param!(
                "{{items={n}}} and {{items_per_dir={i}}} together: give only one of them (mdtest then runs {{items=}}/{{items_per_dir=}} separate test directories and counts their items inconsistently, hpc/ior#106)"
            );
        }
        if self.iterations == 0 {
            crate::bail_param!("{{iterations=0}}: run at least 1 iteration");
        }
        if self.branching == 0 && self.depth > 0 {
            crate::bail_param!(
                "{{branching=0}} with {{depth={}}}: a tree deeper than its top directory needs {{branching=}} of 1 or more",
                self.depth
            );
        }
        if self.stonewall > 0 && self.branching > 1 {
            crate::bail_param!(
                "{{stonewall={}}} works with {{branching=}} of 1 only (mdtest's rule: items are counted in one chain of directories); drop {{stonewall=}} or use {{branching=1}}",
                self.stonewall
            );
        }
        if self.mknod && self.write_bytes > 0 {
            crate::bail_param!(
                "{{mknod=}} with {{write_bytes={}}}: a file made by mknod is not opened, so nothing can be written to it (mdtest's rule); drop one of them",
                self.write_bytes
            );
        }
        if self.odirect {
            for (key, v) in [
                ("write_bytes", self.write_bytes),
                ("read_bytes", self.read_bytes),
            ] {
                if v % DIRECT_ALIGN != 0 {
                    crate::bail_param!(
                        "{{{key}={v}}} with {{odirect=}}: O_DIRECT moves whole blocks; give a multiple of {DIRECT_ALIGN} (of 4096 on 4K-sector devices)"
                    );
                }
            }
        }
        let steps = self.steps();
        if steps.create && steps.read && self.read_bytes > self.write_bytes {
            crate::bail_param!(
                "{{read_bytes={}}} is above {{write_bytes={}}}: a file cannot be read past what was written to it; lower {{read_bytes=}} or raise {{write_bytes=}}",
                self.read_bytes, self.write_bytes
            );
        }
        Layout::new(self)
    }

    /// Remarks that do not stop the run (mdtest prints some of them as warnings).
    pub fn notes(&self) -> Vec<ParamError> {
        let mut out = Vec::new();
        let steps = self.steps();
        if steps.read && self.does_files() && self.read_bytes == 0 {
            out.push(ParamError::new(
                "{read_bytes=0}: the read step only opens and closes each file",
            ));
        }
        if self.sync && self.write_bytes == 0 {
            out.push(ParamError::new(
                "{sync=} has no effect without {write_bytes=}: mdtest syncs a file after writing to it",
            ));
        }
        if self.time_unique_dir && !self.unique_dir {
            out.push(ParamError::new(
                "{time_unique_dir=} has no effect without {unique_dir=}: it times entering each rank's own tree",
            ));
        }
        if self.stonewall > 0 && !self.does_files() {
            out.push(ParamError::new(format!(
                "{{stonewall={}}} applies to file creation only; with {{dirs_only=}} it has no effect",
                self.stonewall
            )));
        }
        if let Ok(l) = Layout::new(self) {
            if self.items > 0 && l.items != self.items {
                out.push(ParamError::new(format!(
                    "{{items={}}} rounded down to {} items per rank: {} per directory in {} directories",
                    self.items,
                    l.items,
                    l.items_per_dir,
                    l.item_dirs()
                )));
            }
        }
        out
    }
}
