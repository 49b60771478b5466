//! The provisioning knobs of a study: the base `[device]`/`[filesystem]` configuration and
//! the factor-level keys that change it (`fs`, `data`, `journal`, `journal_size`,
//! `log_size`, `block_size`, `inode_size`, `mkfs`, `mount`, `features`, `scheduler`; the
//! list knobs `mkfs`, `mount` and `features` append to the base lists), read into the
//! [`FsConfig`] a cell makes.
//!
//! Every knob is declared once, in the `knobs!` list below: its key, its field and, by the
//! field's type ([`Knob`]), how a value is read and whether it appends. The base sections
//! are read through the same setters as a factor level.

use super::file::StudyFile;
use crate::provision::{DeviceSpec, FsConfig, FsType, Journal};

/// How one knob's field takes a value from TOML.
trait Knob {
    /// Whether a level's value appends to the base (the list knobs) instead of replacing it.
    const APPENDS: bool = false;
    /// Take the value `v` of `key`.
    fn apply(&mut self, key: &str, v: &toml::Value) -> Result<(), String>;
}

/// A size as a string with suffix (`64M`) or an integer number of bytes, within
/// [`crate::units::MAX_SIZE`] either way.
impl Knob for Option<u64> {
    fn apply(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
        let n = match v {
            toml::Value::Integer(n) if *n >= 0 => *n as u64,
            toml::Value::String(s) => {
                crate::units::parse_size(s).map_err(|e| format!("{key}: {e}"))?
            }
            _ => {
                return Err(format!(
                    "{key} must be a size such as \"64M\" or a number of bytes"
                ))
            }
        };
        if n > crate::units::MAX_SIZE {
            return Err(format!(
                "{key}: size {n} is out of range; use {}",
                crate::units::SIZE_RANGE
            ));
        }
        *self = Some(n);
        Ok(())
    }
}

/// A list: a string (split on spaces for `mkfs`, on commas otherwise) or a list of strings.
impl Knob for Vec<String> {
    const APPENDS: bool = true;
    fn apply(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
        match v {
            toml::Value::String(s) if key == "mkfs" => {
                self.extend(s.split_whitespace().map(str::to_string))
            }
            toml::Value::String(s) => self.extend(
                s.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string),
            ),
            toml::Value::Array(a) => {
                for x in a {
                    let s = x
                        .as_str()
                        .ok_or_else(|| format!("{key} must be a list of strings"))?;
                    self.push(s.to_string());
                }
            }
            _ => return Err(format!("{key} must be a string or a list of strings")),
        }
        Ok(())
    }
}

fn toml_str<'a>(key: &str, v: &'a toml::Value) -> Result<&'a str, String> {
    v.as_str().ok_or_else(|| format!("{key} must be a string"))
}

impl Knob for Option<String> {
    fn apply(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
        *self = Some(toml_str(key, v)?.to_string());
        Ok(())
    }
}

/// Knobs whose string is parsed by the type's own `parse`.
macro_rules! parsed_knob {
    ($($t:ty),*) => {$(
        impl Knob for Option<$t> {
            fn apply(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
                *self = Some(<$t>::parse(toml_str(key, v)?)?);
                Ok(())
            }
        }
    )*};
}
parsed_knob!(FsType, DeviceSpec, Journal);

/// Declares the knobs once: [`PROVISION_KEYS`], the [`Knobs`] fields, and the setter.
macro_rules! knobs {
    ($($(#[$doc:meta])* $key:ident: $ty:ty,)*) => {
        /// Keys of a factor level that change provisioning.
        pub const PROVISION_KEYS: &[&str] = &[$(stringify!($key)),*];

        /// The provisioning knobs of one cell: the base configuration with its factor levels
        /// applied.
        #[derive(Debug, Clone, Default)]
        pub(super) struct Knobs {
            $($(#[$doc])* pub(super) $key: $ty,)*
        }

        impl Knobs {
            /// Apply one level key of [`PROVISION_KEYS`] (list knobs append).
            pub(super) fn set(&mut self, key: &str, v: &toml::Value) -> Result<(), String> {
                match key {
                    $(stringify!($key) => self.$key.apply(key, v),)*
                    _ => unreachable!("only PROVISION_KEYS are passed"),
                }
            }

            /// Whether `key` is a list knob, whose levels append (several factors may set it).
            pub(super) fn appends(key: &str) -> bool {
                match key {
                    $(stringify!($key) => <$ty as Knob>::APPENDS,)*
                    _ => false,
                }
            }
        }
    };
}

knobs! {
    /// The file system chosen, if any yet (the cell's label when it has no factors).
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

impl Knobs {
    /// The base `[device]`/`[filesystem]` configuration, read by the level setters (the
    /// `[filesystem]` key `type` is the knob `fs`).
    pub(super) fn base(f: &StudyFile) -> Result<Knobs, String> {
        let table = |what: &str, section: Result<toml::Table, toml::ser::Error>| {
            section.map_err(|e| format!("{what}: {e}"))
        };
        let fsec = table("[filesystem]", toml::Table::try_from(&f.filesystem))?;
        let dsec = table("[device]", toml::Table::try_from(&f.device))?;
        let mut k = Knobs::default();
        let mut set = |key: &str, v: Option<&toml::Value>, place: Option<&str>| match v {
            Some(v) => k.set(key, v).map_err(|e| match place {
                Some(p) => format!("{p}: {e}"),
                None => e,
            }),
            None => Ok(()),
        };
        set("fs", fsec.get("type"), Some("[filesystem] type"))?;
        set("data", dsec.get("data"), Some("[device] data"))?;
        set("journal", dsec.get("journal"), Some("[device] journal"))?;
        for (key, v) in &fsec {
            if key != "type" {
                set(key, Some(v), None)?;
            }
        }
        Ok(k)
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
