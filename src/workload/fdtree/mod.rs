//! The fdtree-compatible metadata engine.
//!
//! Follows `fdtree.bash` 1.0.2 (LLNL): the same flags and defaults (`-l 4 -d 10 -f 10 -s 10`),
//! the same tree (`LEVEL0.<host>.<pid>/`, `L<k>D<n>` directories, `L<k>F<n>` files in every
//! directory), the same counts and the same four phases, but with system calls instead of a
//! process per file and a monotonic nanosecond clock instead of whole seconds.
//!
//! With `threads > 1` every worker builds its own tree (`LEVEL0.<host>.<pid>.<i>`, as people
//! ran several fdtree copies side by side); workers start each phase together behind a
//! barrier and the aggregate rate is all items over the time from the first start to the
//! last finish.

mod def;
pub use def::{CAPS, NAME};
mod engine;
mod phase;
pub mod record;
pub mod report;
pub mod sweep;
pub mod tree;

pub use engine::{open_start_dir, Fdtree, PhaseTiming, RepOutcome};
pub use phase::{Phase, PHASES};

use crate::workload::param::ParamError;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// fdtree's defaults.
pub const DEFAULT_LEVELS: u32 = 4;
/// fdtree's default directories per level.
pub const DEFAULT_DIRS: u64 = 10;
/// fdtree's default files per directory.
pub const DEFAULT_FILES: u64 = 10;
/// fdtree's default file size in 4 KiB blocks.
pub const DEFAULT_SIZE_BLOCKS: u64 = 10;
/// fdtree's block size.
pub const BLOCK: u64 = 4096;

/// Which half of the cycle to run (fdtree's `-C` / `-R`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// All four phases (fdtree's default, or both `-C` and `-R`).
    Full,
    /// Directory create and file create only; the tree is left in place.
    CreateOnly,
    /// File remove and directory remove of a tree left by a create-only run.
    RemoveOnly,
}

/// Where the walk's operations go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The real file system.
    Fs,
    /// No system calls: measures fslab's own cost per operation.
    Null,
}

/// Everything one fdtree run needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FdtreeParams {
    /// Subdirectories per directory (`-d`).
    pub dirs: u64,
    /// Files per directory (`-f`).
    pub files: u64,
    /// File size in 4 KiB blocks (`-s`).
    pub size_blocks: u64,
    /// Levels below the root (`-l`).
    pub levels: u32,
    /// Worker threads, each with its own tree.
    pub threads: usize,
    /// End every phase with syncfs inside its timing.
    pub sync: bool,
    /// Which phases to run.
    pub mode: Mode,
    /// Real file system or null backend.
    pub backend: Backend,
    /// Keep a partial tree after an error or interrupt.
    pub keep: bool,
    /// Tree roots to remove in remove-only mode (names inside the start directory).
    pub roots: Vec<String>,
}

/// fdtree's defaults: [`FdtreeSpec`]'s.
impl Default for FdtreeParams {
    fn default() -> Self {
        FdtreeSpec::default().params()
    }
}

/// Item counts of one tree (one worker), computed exactly as fdtree does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Directories including the root: 1 + d + … + d^l.
    pub dirs: u64,
    /// Files: f × dirs.
    pub files: u64,
    /// Bytes of file data: files × s × 4096.
    pub bytes: u64,
}

/// fdtree's shape flags, as labels and tree records name a tree: `-d D -f F -s S -l L`.
pub fn shape_flags(dirs: u64, files: u64, size_blocks: u64, levels: u32) -> String {
    format!("-d {dirs} -f {files} -s {size_blocks} -l {levels}")
}

impl FdtreeParams {
    /// The shape as fdtree flags ([`shape_flags`]).
    pub fn flags(&self) -> String {
        shape_flags(self.dirs, self.files, self.size_blocks, self.levels)
    }

    /// The run's label: `fdtree -d D -f F -s S -l L`, with ` --threads N` for several workers.
    pub fn label(&self) -> String {
        let threads = if self.threads > 1 {
            format!(" --threads {}", self.threads)
        } else {
            String::new()
        };
        format!("fdtree {}{threads}", self.flags())
    }

    /// Counts of one tree, or a usage error when they overflow 64 bits.
    pub fn counts(&self) -> Result<Counts> {
        let too_big = || {
            anyhow::Error::new(ParamError::new(format!(
                "{{dirs={}}} {{levels={}}} {{files={}}} {{size_blocks={}}} describes more than 2^64 items or bytes; use smaller {{dirs=}}, {{levels=}}, {{files=}} or {{size_blocks=}}",
                self.dirs, self.levels, self.files, self.size_blocks
            )))
        };
        let dirs = (0..=self.levels)
            .try_fold(0u64, |d, _| d.checked_mul(self.dirs)?.checked_add(1))
            .ok_or_else(too_big)?;
        let files = dirs.checked_mul(self.files).ok_or_else(too_big)?;
        let bytes = files
            .checked_mul(self.size_blocks)
            .and_then(|x| x.checked_mul(BLOCK))
            .ok_or_else(too_big)?;
        Ok(Counts { dirs, files, bytes })
    }

    /// Counts over all worker threads.
    pub fn total_counts(&self) -> Result<Counts> {
        let c = self.counts()?;
        let t = self.threads as u64;
        let over = || {
            crate::error::usage(
                "the tree times --threads exceeds 2^64 items; use fewer threads or a smaller tree",
            )
        };
        Ok(Counts {
            dirs: c.dirs.checked_mul(t).ok_or_else(over)?,
            files: c.files.checked_mul(t).ok_or_else(over)?,
            bytes: c.bytes.checked_mul(t).ok_or_else(over)?,
        })
    }

    /// Bytes per file.
    pub fn file_bytes(&self) -> u64 {
        self.size_blocks * BLOCK
    }

    /// The tree the walk makes.
    pub fn shape(&self) -> tree::Shape {
        tree::Shape {
            dirs: self.dirs,
            files: self.files,
            levels: self.levels,
            file_bytes: self.file_bytes(),
        }
    }

    /// The names a tree of these parameters can hold; `ranks` for MPI's shared tree.
    pub fn sweep_shape(&self, ranks: Option<u64>) -> sweep::SweepShape {
        sweep::SweepShape {
            dirs: self.dirs,
            files: self.files,
            levels: self.levels,
            ranks,
        }
    }

    /// Check values that make no sense, with a message naming the fix.
    pub fn validate(&self) -> Result<()> {
        if self.dirs == 0 {
            crate::bail_param!(
                "{{dirs=0}}: directories per level must be at least 1; for a single directory use {{levels=0}}"
            );
        }
        if self.files == 0 {
            crate::bail_param!(
                "{{files=0}}: files per directory must be at least 1; the file phases need files to time"
            );
        }
        if self.threads == 0 {
            crate::bail_param!(
                "{{threads=0}}: at least one worker is needed; use {{threads=1}} or more"
            );
        }
        if self.threads > 4096 {
            crate::bail_param!(
                "{{threads={}}}: at most 4096 workers are supported",
                self.threads
            );
        }
        if self.levels > 1000 {
            crate::bail_param!(
                "{{levels={}}}: at most 1000 levels are supported (path length limits); use a smaller {{levels=}}",
                self.levels
            );
        }
        self.total_counts()?;
        Ok(())
    }
}

/// fdtree's parameters, declared once: the study file's keys (serde) and the command line's
/// flags (clap, flattened into `fslab fdtree`'s arguments, whose own options are only the
/// command's: where, which phases, output). Both go through [`FdtreeSpec::to_params`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct FdtreeSpec {
    /// Label in reports; default derived from the shape (study files only).
    #[arg(skip)]
    pub label: Option<String>,
    /// Subdirectories per directory (fdtree -d; study key `dirs`).
    #[arg(short = 'd', long = "dirs", default_value_t = DEFAULT_DIRS, value_name = "N")]
    pub dirs: u64,
    /// Files in every directory, root and leaves included (fdtree -f; study key `files`).
    #[arg(short = 'f', long = "files", default_value_t = DEFAULT_FILES, value_name = "N")]
    pub files: u64,
    /// File size in 4 KiB blocks; 0 makes empty files (fdtree -s; study key `size_blocks`).
    #[arg(
        short = 's',
        long = "size",
        default_value_t = DEFAULT_SIZE_BLOCKS,
        value_name = "BLOCKS"
    )]
    pub size_blocks: u64,
    /// Levels below the root directory (fdtree -l; study key `levels`).
    #[arg(short = 'l', long = "levels", default_value_t = DEFAULT_LEVELS, value_name = "N")]
    pub levels: u32,
    /// Worker threads, each with its own tree, starting every phase together (study key
    /// `threads`).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// End every phase with syncfs inside its timing, so writeback is counted (study key
    /// `sync`). Default: off, like fdtree (dirty data may still be in memory when a phase
    /// ends).
    #[arg(long)]
    pub sync: bool,
}

/// fdtree's defaults, for the keys a study file leaves out.
impl Default for FdtreeSpec {
    fn default() -> Self {
        FdtreeSpec {
            label: None,
            dirs: DEFAULT_DIRS,
            files: DEFAULT_FILES,
            size_blocks: DEFAULT_SIZE_BLOCKS,
            levels: DEFAULT_LEVELS,
            threads: 1,
            sync: false,
        }
    }
}

impl FdtreeSpec {
    /// The label, or `fdtree -d D -f F -s S -l L`.
    pub fn label(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| format!("fdtree {}", self.params().flags()))
    }

    /// The engine parameters of this shape, unchecked; the run's own settings at theirs
    /// (all four phases, on the file system, nothing kept, no roots given).
    fn params(&self) -> FdtreeParams {
        FdtreeParams {
            dirs: self.dirs,
            files: self.files,
            size_blocks: self.size_blocks,
            levels: self.levels,
            threads: self.threads,
            sync: self.sync,
            mode: Mode::Full,
            backend: Backend::Fs,
            keep: false,
            roots: Vec::new(),
        }
    }

    /// Validated engine parameters.
    pub fn to_params(&self) -> Result<FdtreeParams> {
        let p = self.params();
        p.validate()?;
        Ok(p)
    }
}

/// Parameters of a tree of this shape (`-d -f -s -l`), the rest at fdtree's defaults.
#[cfg(test)]
pub(crate) fn shaped(dirs: u64, files: u64, size_blocks: u64, levels: u32) -> FdtreeParams {
    FdtreeParams {
        dirs,
        files,
        size_blocks,
        levels,
        ..FdtreeParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_fdtree() {
        let p = shaped(20, 40, 1, 3);
        let c = p.counts().unwrap();
        assert_eq!(c.dirs, 8421);
        assert_eq!(c.files, 336_840);
        assert_eq!(c.bytes, 336_840 * 4096);
        let d = FdtreeParams::default().counts().unwrap();
        assert_eq!(
            (d.dirs, d.files, d.bytes / 1024),
            (11111, 111_110, 4_444_400)
        );
        let one = shaped(10, 10, 10, 0).counts().unwrap();
        assert_eq!((one.dirs, one.files), (1, 10));
    }

    #[test]
    fn absurd_and_zero_values_are_refused() {
        let huge = shaped(1000, 10, 10, 10);
        assert!(huge.validate().unwrap_err().to_string().contains("2^64"));
        let d = FdtreeParams::default;
        for (p, ok) in [
            (FdtreeParams { dirs: 0, ..d() }, false),
            (FdtreeParams { files: 0, ..d() }, false),
            (FdtreeParams { threads: 0, ..d() }, false),
            (shaped(10, 10, 0, 4), true),
        ] {
            assert_eq!(p.validate().is_ok(), ok, "{p:?}");
        }
    }

    #[test]
    fn threads_multiply_totals() {
        let p = FdtreeParams {
            threads: 3,
            ..Default::default()
        };
        assert_eq!(p.total_counts().unwrap().files, 3 * 111_110);
    }

    #[test]
    fn spec_defaults_and_unknown_keys() {
        let s: FdtreeSpec = toml::from_str("dirs = 3").unwrap();
        assert_eq!((s.dirs, s.files, s.size_blocks, s.levels), (3, 10, 10, 4));
        assert!(toml::from_str::<FdtreeSpec>("dirz = 3").is_err());
        assert_eq!(s.label(), "fdtree -d 3 -f 10 -s 10 -l 4");
    }
}
