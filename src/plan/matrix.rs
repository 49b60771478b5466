//! The factor matrix: cells as the cartesian product of factor levels, each level applied to
//! the base `[device]`/`[filesystem]` configuration and to the workloads.
//!
//! A level key that names a provisioning knob (`fs`, `data`, `journal`, `journal_size`,
//! `log_size`, `block_size`, `inode_size`, `mkfs`, `mount`, `features`, `scheduler`) changes
//! the file system; list knobs (`mkfs`, `mount`, `features`) append to the base lists. Any
//! other key is a workload parameter, merged into every workload whose kind accepts it and
//! deserialized again, so a typo is still caught. A key nobody knows is an error.
//! [`cells`] is pure: same file, same cells.

use super::file::{SizeValue, StrOrList, StudyFile};
use crate::provision::{DeviceSpec, FsConfig, FsType, Journal};
use crate::workload::{WorkloadKind, WorkloadSpec};
use std::collections::BTreeMap;

/// Keys of a factor level that change provisioning.
pub const PROVISION_KEYS: [&str; 11] = [
    "fs",
    "data",
    "journal",
    "journal_size",
    "log_size",
    "block_size",
    "inode_size",
    "mkfs",
    "mount",
    "features",
    "scheduler",
];

impl Cell {
    /// The existing block devices this cell formats.
    pub fn real_devices(&self) -> Vec<std::path::PathBuf> {
        let mut v = Vec::new();
        if let DeviceSpec::Path(p) = &self.fs.data {
            v.push(p.clone());
        }
        if let Journal::External(DeviceSpec::Path(p)) = &self.fs.journal {
            v.push(p.clone());
        }
        v
    }

    /// Whether this cell and `other` format a common real device (so they cannot be
    /// mounted at the same time).
    pub fn shares_device_with(&self, other: &Cell) -> bool {
        let mine = self.real_devices();
        other.real_devices().iter().any(|d| mine.contains(d))
    }
}

/// One cell: a configuration and the workloads that run on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Position in the plan (0-based; the first factor varies slowest).
    pub idx: usize,
    /// `factor=level …`, or the file-system type when there are no factors.
    pub label: String,
    /// Factor name and level label, in factor order.
    pub factors: Vec<(String, String)>,
    /// The file system to make.
    pub fs: FsConfig,
    /// The workloads with this cell's parameter overrides applied, in study order.
    pub workloads: Vec<WorkloadSpec>,
}

#[derive(Debug, Clone, Default)]
struct Knobs {
    fs: Option<FsType>,
    data: Option<DeviceSpec>,
    journal: Option<Journal>,
    journal_size: Option<u64>,
    log_size: Option<u64>,
    block_size: Option<u64>,
    inode_size: Option<u64>,
    mkfs: Vec<String>,
    mount: Vec<String>,
    features: Vec<String>,
    scheduler: Option<String>,
}

fn size_of(v: &SizeValue, key: &str) -> Result<u64, String> {
    match v {
        SizeValue::Bytes(n) => bytes_in_range(*n, key),
        SizeValue::Text(s) => crate::units::parse_size(s).map_err(|e| format!("{key}: {e}")),
    }
}

/// A size given as a number of bytes, within [`crate::units::MAX_SIZE`] like a text size.
fn bytes_in_range(n: u64, key: &str) -> Result<u64, String> {
    if n > crate::units::MAX_SIZE {
        return Err(format!(
            "{key}: size {n} is out of range; use {}",
            crate::units::SIZE_RANGE
        ));
    }
    Ok(n)
}

fn split_list(key: &str, s: &str) -> Vec<String> {
    if key == "mkfs" {
        s.split_whitespace().map(str::to_string).collect()
    } else {
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    }
}

fn list_of(key: &str, v: &StrOrList) -> Vec<String> {
    match v {
        StrOrList::One(s) => split_list(key, s),
        StrOrList::Many(v) => v.clone(),
    }
}

fn toml_size(key: &str, v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::Integer(n) if *n >= 0 => bytes_in_range(*n as u64, key),
        toml::Value::String(s) => crate::units::parse_size(s).map_err(|e| format!("{key}: {e}")),
        _ => Err(format!(
            "{key} must be a size such as \"64M\" or a number of bytes"
        )),
    }
}

fn toml_str<'a>(key: &str, v: &'a toml::Value) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| format!("{key} must be a string"))
}

fn toml_list(key: &str, v: &toml::Value) -> Result<Vec<String>, String> {
    match v {
        toml::Value::String(s) => Ok(split_list(key, s)),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key} must be a list of strings"))
            })
            .collect(),
        _ => Err(format!("{key} must be a string or a list of strings")),
    }
}

impl Knobs {
    fn base(f: &StudyFile) -> Result<Knobs, String> {
        let fsec = &f.filesystem;
        let size = |v: &Option<SizeValue>, k: &str| v.as_ref().map(|v| size_of(v, k)).transpose();
        Ok(Knobs {
            fs: fsec
                .fs_type
                .as_deref()
                .map(FsType::parse)
                .transpose()
                .map_err(|e| format!("[filesystem] type: {e}"))?,
            data: Some(
                DeviceSpec::parse(&f.device.data).map_err(|e| format!("[device] data: {e}"))?,
            ),
            journal: f
                .device
                .journal
                .as_deref()
                .map(Journal::parse)
                .transpose()
                .map_err(|e| format!("[device] journal: {e}"))?,
            journal_size: size(&fsec.journal_size, "journal_size")?,
            log_size: size(&fsec.log_size, "log_size")?,
            block_size: size(&fsec.block_size, "block_size")?,
            inode_size: size(&fsec.inode_size, "inode_size")?,
            mkfs: fsec
                .mkfs
                .as_ref()
                .map(|v| list_of("mkfs", v))
                .unwrap_or_default(),
            mount: fsec
                .mount
                .as_ref()
                .map(|v| list_of("mount", v))
                .unwrap_or_default(),
            features: fsec
                .features
                .as_ref()
                .map(|v| list_of("features", v))
                .unwrap_or_default(),
            scheduler: fsec.scheduler.clone(),
        })
    }

    fn set(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
        match key {
            "fs" => self.fs = Some(FsType::parse(toml_str(key, v)?)?),
            "data" => self.data = Some(DeviceSpec::parse(toml_str(key, v)?)?),
            "journal" => self.journal = Some(Journal::parse(toml_str(key, v)?)?),
            "journal_size" => self.journal_size = Some(toml_size(key, v)?),
            "log_size" => self.log_size = Some(toml_size(key, v)?),
            "block_size" => self.block_size = Some(toml_size(key, v)?),
            "inode_size" => self.inode_size = Some(toml_size(key, v)?),
            "mkfs" => self.mkfs.extend(toml_list(key, v)?),
            "mount" => self.mount.extend(toml_list(key, v)?),
            "features" => self.features.extend(toml_list(key, v)?),
            "scheduler" => self.scheduler = Some(toml_str(key, v)?.to_string()),
            _ => unreachable!("only PROVISION_KEYS are passed"),
        }
        Ok(())
    }

    fn into_config(self, direct_io: bool) -> Result<FsConfig, String> {
        let fs = self.fs.ok_or(
            "no file system chosen: set [filesystem] type = \"ext4\" or a factor level with fs = \"…\"",
        )?;
        let journal_size = match (self.journal_size, self.log_size) {
            (_, Some(_)) if fs != FsType::Xfs => {
                return Err(format!("log_size is for xfs; use journal_size for {fs}"))
            }
            (Some(j), Some(l)) if j != l => {
                return Err("journal_size and log_size disagree; for xfs set only one".into())
            }
            (j, l) => j.or(l),
        };
        let data = self.data.ok_or("[device] data is required")?;
        let cfg = FsConfig {
            fs,
            data,
            journal: self.journal.unwrap_or(Journal::Internal),
            journal_size,
            block_size: self.block_size,
            inode_size: self.inode_size,
            mkfs: self.mkfs,
            mount: self.mount,
            features: self.features,
            scheduler: self.scheduler,
            direct_io,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// Whether the workload table `base` has `key` among its kind's study keys (the value's type
/// is checked when the cell's workload is read).
fn accepts(base: &toml::Table, key: &str) -> bool {
    base.get("kind")
        .and_then(|k| k.as_str())
        .and_then(WorkloadKind::of)
        .is_some_and(|k| k.keys().contains(&key))
}

/// The first line of a (possibly multi-line) serde/toml message.
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(s)
        .to_string()
}

/// Make the relative `job = "…"` paths of fio workloads, and the `include` files of inline
/// jobs, relative to `base` (the study file's directory), as the study file means them.
pub fn resolve_job_paths(f: &mut StudyFile, base: &std::path::Path) {
    for t in f.workloads.iter_mut() {
        if t.get("kind").and_then(|k| k.as_str()) != Some("fio") {
            continue;
        }
        if base.as_os_str().is_empty() {
            continue;
        }
        let absolute = |v: &str| {
            let p = std::path::Path::new(v);
            p.is_relative().then(|| base.join(p).display().to_string())
        };
        match t.get_mut("job") {
            Some(toml::Value::String(job)) => {
                if let Some(joined) = absolute(job) {
                    *job = joined;
                }
            }
            // An inline job's `include = "x.fio"` is relative to the study file too.
            Some(toml::Value::Table(sections)) => {
                for (_, s) in sections.iter_mut() {
                    let inc = s.as_table_mut().and_then(|s| s.get_mut("include"));
                    if let Some(toml::Value::String(inc)) = inc {
                        if let Some(joined) = absolute(inc.as_str()) {
                            *inc = joined;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Deserialize one workload table. A value of the wrong type is named by its key
/// (`dirs: invalid type: string "1", expected u64`).
pub fn workload_spec(t: &toml::Table) -> Result<WorkloadSpec, String> {
    toml::Value::Table(t.clone())
        .try_into::<WorkloadSpec>()
        .map_err(|e| {
            let msg = one_line(&e.to_string());
            match key_of_wrong_type(t, &msg) {
                Some(k) => format!("{k}: {msg}"),
                None => msg,
            }
        })
}

/// The key of `t` whose value serde's "invalid type: …" message shows (`string "1"`,
/// `integer `5``, `boolean `true``, `floating point `1.5``), when exactly one key holds it.
pub fn key_of_wrong_type(t: &toml::Table, msg: &str) -> Option<String> {
    let shown = msg
        .strip_prefix("invalid type: ")?
        .split(", expected")
        .next()?;
    let render = |v: &toml::Value| match v {
        toml::Value::String(s) => Some(format!("string {s:?}")),
        toml::Value::Integer(i) => Some(format!("integer `{i}`")),
        toml::Value::Boolean(b) => Some(format!("boolean `{b}`")),
        toml::Value::Float(f) => Some(format!("floating point `{f}`")),
        _ => None,
    };
    let mut keys = t
        .iter()
        .filter(|(_, v)| render(v).as_deref() == Some(shown))
        .map(|(k, _)| k.clone());
    let first = keys.next()?;
    keys.next().is_none().then_some(first)
}

/// All cells of a study, in plan order. Pure.
pub fn cells(f: &StudyFile) -> Result<Vec<Cell>, String> {
    let base = Knobs::base(f)?;
    let direct_io = f.device.direct_io.unwrap_or(true);
    let sizes: Vec<usize> = f.factors.iter().map(|x| x.values.len()).collect();
    let total = sizes.iter().try_fold(1usize, |a, &n| a.checked_mul(n));
    let total = match total {
        Some(t) if t <= 10_000 => t,
        _ => {
            return Err(
                "the factors make more than 10,000 cells; use fewer factors or levels".into(),
            )
        }
    };
    let mut out = Vec::with_capacity(total);
    for idx in 0..total {
        // Mixed-radix digits, last factor fastest.
        let mut rest = idx;
        let mut pick = vec![0usize; sizes.len()];
        for (i, &n) in sizes.iter().enumerate().rev() {
            pick[i] = rest % n;
            rest /= n;
        }
        out.push(cell(f, &base, direct_io, idx, &pick)?);
    }
    Ok(out)
}

fn level_label(t: &toml::Table) -> String {
    t.get("label")
        .and_then(|v| v.as_str())
        .unwrap_or("?")
        .to_string()
}

fn cell(
    f: &StudyFile,
    base: &Knobs,
    direct_io: bool,
    idx: usize,
    pick: &[usize],
) -> Result<Cell, String> {
    let mut knobs = base.clone();
    let mut setter: BTreeMap<&str, &str> = BTreeMap::new();
    let mut params: Vec<(&str, &toml::Value, &str)> = Vec::new();
    let mut factors = Vec::new();
    for (fac, &li) in f.factors.iter().zip(pick) {
        let level = &fac.values[li];
        let label = level_label(level);
        for (k, v) in level {
            if k == "label" {
                continue;
            }
            if let Some(prev) = setter.insert(k.as_str(), fac.name.as_str()) {
                let list = ["mkfs", "mount", "features"].contains(&k.as_str());
                if !list {
                    return Err(format!(
                        "factors '{prev}' and '{}' both set {k}; a cell can take it from one factor only",
                        fac.name
                    ));
                }
            }
            if PROVISION_KEYS.contains(&k.as_str()) {
                knobs
                    .set(k, v)
                    .map_err(|e| format!("factor '{}' level '{label}': {e}", fac.name))?;
            } else {
                params.push((k.as_str(), v, fac.name.as_str()));
            }
        }
        factors.push((fac.name.clone(), label));
    }
    let cell_label = if factors.is_empty() {
        knobs
            .fs
            .map(|t| t.to_string())
            .unwrap_or_else(|| "cell".into())
    } else {
        factors
            .iter()
            .map(|(n, l)| format!("{n}={l}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let fs = knobs
        .into_config(direct_io)
        .map_err(|e| format!("cell {cell_label}: {e}"))?;
    let mut tables: Vec<toml::Table> = f.workloads.clone();
    for (k, v, fac) in params {
        let mut taken = false;
        for t in tables.iter_mut() {
            if accepts(t, k) {
                t.insert(k.to_string(), v.clone());
                // The value's type, checked here so the error names the factor that set it.
                workload_spec(t).map_err(|e| {
                    format!(
                        "cell {cell_label}: factor '{fac}': {k} = {v}: {}",
                        e.trim_start_matches(&format!("{k}: "))
                    )
                })?;
                taken = true;
            }
        }
        if !taken {
            let kinds: Vec<&str> = f
                .workloads
                .iter()
                .filter_map(|t| t.get("kind").and_then(|k| k.as_str()))
                .collect();
            return Err(format!(
                "factor '{fac}' sets '{k}', which is neither a provisioning knob ({}) nor a parameter of any workload ({}); check the spelling",
                PROVISION_KEYS.join(", "),
                kinds.join(", ")
            ));
        }
    }
    let workloads = tables
        .iter()
        .map(|t| workload_spec(t).map_err(|e| format!("cell {cell_label}: workload: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Cell {
        idx,
        label: cell_label,
        factors,
        fs,
        workloads,
    })
}
