//! The factor matrix: cells as the cartesian product of factor levels, each level applied to
//! the base `[device]`/`[filesystem]` configuration and to the workloads.
//!
//! A level key that names a provisioning knob ([`PROVISION_KEYS`], read in `knobs.rs`)
//! changes the file system. Any other key is a workload parameter, merged into every
//! workload whose kind takes it (`workload_table.rs`) and deserialized again, so a typo is
//! still caught. A key nobody knows is an error. [`cells`] is pure: same file, same cells.

use super::file::StudyFile;
use super::knobs::Knobs;
pub use super::knobs::PROVISION_KEYS;
use super::workload_table::{accepts, workload_spec};
use crate::provision::FsConfig;
use crate::workload::WorkloadSpec;
use std::collections::BTreeMap;

impl Cell {
    /// The existing block devices this cell formats.
    pub fn real_devices(&self) -> Vec<std::path::PathBuf> {
        crate::provision::plan::named_devices(&self.fs)
            .into_iter()
            .map(std::path::Path::to_path_buf)
            .collect()
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
                if !Knobs::appends(k) {
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
