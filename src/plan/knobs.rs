//! The provisioning knobs of a study: the base `[device]`/`[filesystem]` configuration and
//! the factor-level keys that change it (`fs`, `data`, `journal`, `journal_size`,
//! `log_size`, `block_size`, `inode_size`, `mkfs`, `mount`, `features`, `scheduler`; the
//! list knobs `mkfs`, `mount` and `features` append to the base lists), read into the
//! [`FsConfig`] a cell makes.

use super::file::{SizeValue, StrOrList, StudyFile};
use crate::provision::{DeviceSpec, FsConfig, FsType, Journal};

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

/// The provisioning knobs of one cell: the base configuration with its factor levels applied.
#[derive(Debug, Clone, Default)]
pub(super) struct Knobs {
    /// The file system chosen, if any yet (the cell's label when it has no factors).
    pub(super) fs: Option<FsType>,
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
    /// The base `[device]`/`[filesystem]` configuration.
    pub(super) fn base(f: &StudyFile) -> Result<Knobs, String> {
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

    /// Apply one level key of [`PROVISION_KEYS`] (list knobs append).
    pub(super) fn set(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
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

    /// The file system to make, checked.
    pub(super) fn into_config(self, direct_io: bool) -> Result<FsConfig, String> {
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
