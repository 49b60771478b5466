//! Study files: parsing, validation and the matrix of cells.
//!
//! A study file (TOML, unknown keys rejected) names repetitions, order and cache policy, the
//! devices, the base file system, factors and workloads; `doc/studies.md` documents every
//! key and its default. [`Study::load`] returns a validated study whose [`Study::cells`] are
//! the cartesian product of the factor levels. Nothing here touches the machine except
//! [`Study::check_machine`], which only reads.

pub mod calibration;
pub mod file;
pub mod guest;
mod knobs;
pub mod matrix;
mod repetitions;
pub mod space;
pub mod workload_table;

pub use file::{CachePolicy, Order, StudyFile};
pub use guest::GuestSpec;
pub use matrix::{cells, Cell, PROVISION_KEYS};
use repetitions::repetitions;
pub use repetitions::{
    design_n, Repetitions, ASSUMED_CV, DEFAULT_DETECT, DEFAULT_MAX_ADAPTIVE, DEFAULT_MIN,
    MAX_REPETITIONS, MAX_WARMUP,
};

use crate::provision::{support, DeviceSpec, Journal};
use crate::workload::WorkloadSpec;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A workload as declared (before per-cell overrides).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadDef {
    /// Position in the study.
    pub idx: usize,
    /// The parsed spec.
    pub spec: WorkloadSpec,
}

/// A validated study.
#[derive(Debug, Clone)]
pub struct Study {
    /// The file as parsed.
    pub file: StudyFile,
    /// The file's text, stored with the study.
    pub text: String,
    /// Hash of the parsed content (comments and layout do not count); `--resume` checks it.
    pub hash: String,
    /// Repetition policy.
    pub repetitions: Repetitions,
    /// Workloads in study order.
    pub workloads: Vec<WorkloadDef>,
    /// Cells in plan order.
    pub cells: Vec<Cell>,
}

/// 64-bit FNV-1a, printed as 16 hex digits: a stable change detector, not a security hash.
pub fn fnv1a64(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The key a TOML error points into, with its table: the `key = value` line that holds
/// `offset` (an error in a value) and the nearest `[table]` header above it, e.g.
/// `[repetitions] min`. `None` when the line has no `=` (an error in a header).
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with(['[', '#']) {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|h| format!("{h} "))
        .unwrap_or_default();
    Some(format!("{table}{key}"))
}

impl Study {
    /// Read and validate a study file. Errors are usage errors naming the file and line.
    pub fn load(path: &Path) -> Result<Study> {
        let text = crate::safe::input::read_text_limited(
            path,
            crate::safe::input::STUDY_LIMIT,
            "a study file",
        )
        .map_err(|e| {
            crate::error::usage(format!("cannot read study file {}: {e}", path.display()))
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        Study::parse_in(&text, Some(base))
            .map_err(|e| crate::error::usage(format!("{}: {e}", path.display())))
    }

    /// Parse and validate study text.
    pub fn parse(text: &str) -> std::result::Result<Study, String> {
        Study::parse_in(text, None)
    }

    /// Parse and validate study text whose relative fio job paths (`job = "…"`) are
    /// relative to `base`, the study file's directory (the working directory without one).
    pub fn parse_in(text: &str, base: Option<&Path>) -> std::result::Result<Study, String> {
        let mut file: StudyFile = toml::from_str(text).map_err(|e| {
            // An unknown field names itself; a value of the wrong type gets its key.
            let named = e.message().starts_with("unknown field");
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    match key_at(text, s.start).filter(|_| !named) {
                        Some(key) => format!("line {line}: {key}: "),
                        None => format!("line {line}: "),
                    }
                })
                .unwrap_or_default();
            format!("{at}{}", workload_table::one_line(e.message()))
        })?;
        if let Some(base) = base {
            workload_table::resolve_job_paths(&mut file, base);
        }
        Study::from_file(file, text.to_string())
    }

    /// Validate a parsed file.
    pub fn from_file(file: StudyFile, text: String) -> std::result::Result<Study, String> {
        if file.name.trim().is_empty() {
            return Err("name must not be empty".into());
        }
        if file.workloads.is_empty() {
            return Err("a study needs at least one [[workload]] with kind = \"fdtree\" (or another engine)".into());
        }
        let repetitions = repetitions(&file.repetitions)?;
        let mut names = BTreeSet::new();
        for f in &file.factors {
            if f.name.trim().is_empty() {
                return Err("every [[factor]] needs a name".into());
            }
            if !names.insert(f.name.as_str()) {
                return Err(format!("factor '{}' is declared twice", f.name));
            }
            if f.values.is_empty() {
                return Err(format!("factor '{}' has no values", f.name));
            }
            let mut labels = BTreeSet::new();
            for v in &f.values {
                let label = match v.get("label") {
                    Some(toml::Value::String(s)) if !s.is_empty() => s.as_str(),
                    _ => {
                        return Err(format!(
                            "every value of factor '{}' needs label = \"…\"",
                            f.name
                        ))
                    }
                };
                if !labels.insert(label) {
                    return Err(format!(
                        "factor '{}' has two values labelled '{label}'",
                        f.name
                    ));
                }
                if v.contains_key("type") {
                    return Err(format!(
                        "factor '{}' level '{label}': use fs = \"…\" to choose the file system in a factor",
                        f.name
                    ));
                }
            }
        }
        for p in &file.device.allow_format {
            if !p.is_absolute() {
                return Err(format!(
                    "allow_format entry '{}' must be an absolute device path",
                    p.display()
                ));
            }
        }
        let mut workloads = Vec::new();
        for (idx, t) in file.workloads.iter().enumerate() {
            let spec = workload_table::workload_spec(t)
                .map_err(|e| format!("workload {}: {e}", idx + 1))?;
            spec.build()
                .map_err(|e| format!("workload {} ({}): {e:#}", idx + 1, spec.label()))?;
            workloads.push(WorkloadDef { idx, spec });
        }
        let cells = matrix::cells(&file)?;
        for c in &cells {
            for w in &c.workloads {
                let engine = w
                    .build()
                    .map_err(|e| format!("cell {}: workload {}: {e:#}", c.label, w.label()))?;
                let need = engine.requirements().bytes;
                let size = c.fs.data.created_size();
                if let Some(size) = size.filter(|size| need > size / 10 * 9) {
                    return Err(format!(
                        "cell {}: workload '{}' needs {} but the data device is {}; use a larger {}",
                        c.label,
                        w.label(),
                        crate::units::fmt_bytes(need),
                        crate::units::fmt_bytes(size),
                        if matches!(c.fs.data, DeviceSpec::Ram(_)) { "ram:SIZE" } else { "loop:SIZE" }
                    ));
                }
            }
        }
        let canonical = serde_json::to_string(&file).map_err(|e| e.to_string())?;
        let study = Study {
            hash: fnv1a64(canonical.as_bytes()),
            file,
            text,
            repetitions,
            workloads,
            cells,
        };
        // `[guest] calibrate` derives two studies from this one: check them now.
        study.calibration(calibration::Side::Host)?;
        Ok(study)
    }

    /// The study's name.
    pub fn name(&self) -> &str {
        &self.file.name
    }

    /// Device paths under `allow_format`.
    pub fn allow_format(&self) -> Vec<PathBuf> {
        self.file.device.allow_format.clone()
    }

    /// Bytes of RAM the `ram:` devices of all cells take together (all cells may be
    /// mounted at once when repetitions are interleaved).
    pub fn ram_bytes(&self) -> u64 {
        self.device_bytes(|d| match d {
            DeviceSpec::Ram(n) => Some(*n),
            _ => None,
        })
    }

    /// The sum over every cell's data and external journal device of what `size` says.
    fn device_bytes(&self, size: impl Fn(&DeviceSpec) -> Option<u64>) -> u64 {
        self.cells
            .iter()
            .flat_map(|c| c.fs.devices())
            .filter_map(size)
            .fold(0, u64::saturating_add)
    }

    /// Bytes of sparse loop images of all cells (an upper bound of the disk space used).
    pub fn loop_bytes(&self) -> u64 {
        self.device_bytes(|d| match d {
            DeviceSpec::Loop(n) => Some(*n),
            _ => None,
        })
    }

    /// The existing block devices the study formats (`data`/`journal` paths), each once.
    pub fn real_devices(&self) -> Vec<PathBuf> {
        crate::stats::distinct(self.cells.iter().flat_map(Cell::real_devices))
    }

    /// The guest the study file asks for (`[guest]`), if any.
    pub fn guest(&self) -> std::result::Result<Option<GuestSpec>, String> {
        match &self.file.guest {
            None => Ok(None),
            Some(g) if g.kind == "uml" => GuestSpec::new(g.mem.as_deref()).map(Some),
            Some(g) => Err(format!(
                "[guest] kind = \"{}\" is not known; use kind = \"uml\" (a User-mode Linux guest)",
                g.kind
            )),
        }
    }

    /// Check that this machine can make every cell: kernel file systems and tools, and no
    /// external journal on its cell's data device (the same device reached by another path,
    /// or a partition of it). Only reads.
    pub fn check_machine(&self) -> std::result::Result<(), String> {
        self.check_machine_for(false)
    }

    /// [`Study::check_machine`] for a study that runs in a User-mode Linux guest (`guest`):
    /// the guest's kernel has every file system fslab makes, so only the tools (the host's,
    /// which the guest runs) and the guest kernel are checked.
    pub fn check_machine_for(&self, guest: bool) -> std::result::Result<(), String> {
        support::check_common()?;
        let types: BTreeSet<_> = self.cells.iter().map(|c| c.fs.fs).collect();
        for t in types {
            if guest {
                support::check_tools(t)?;
            } else {
                support::check_fs(t)?;
            }
        }
        for c in &self.cells {
            if let (DeviceSpec::Path(d), Journal::External(DeviceSpec::Path(j))) =
                (&c.fs.data, &c.fs.journal)
            {
                crate::provision::guard::check_distinct(d, j)
                    .map_err(|e| format!("cell {}: {e}", c.label))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
