//! Parameter errors that name the parameter, so each caller says it in its own words: a
//! command-line flag for an engine command (`-d 0: …`), a key of the study file for a study
//! (`dirs = 0: …`).
//!
//! An engine writes its refusal as a template in which `{field=value}` names a parameter by
//! its study-file key (`{dirs=0}`, `{threads=}` without a value). The command line renders it
//! with its table of flags ([`Words::Flags`]), a study with the keys ([`Words::Keys`], also
//! what `Display` shows).

use std::fmt;

/// How a caller names parameters.
#[derive(Debug, Clone, Copy)]
pub enum Words {
    /// Study-file keys: `dirs = 0`.
    Keys,
    /// Command-line flags, by key: `-d 0`. A key without a flag is said as a key.
    Flags(&'static [(&'static str, &'static str)]),
}

impl Words {
    /// How these words name the parameter with study key `key`: its flag (`-t`), or the key
    /// itself (for a study, or a key without a flag).
    pub fn name(self, key: &'static str) -> &'static str {
        self.flag(key).unwrap_or(key)
    }

    /// The flag of the parameter with study key `key`, if these words are flags and it has one.
    fn flag(self, key: &str) -> Option<&'static str> {
        match self {
            Words::Flags(table) => table.iter().find(|(k, _)| *k == key).map(|(_, f)| *f),
            Words::Keys => None,
        }
    }

    /// The flags of a command's clap definition `A`, by argument id (the study key): its
    /// short flag (`-d`), else its long one (`--threads`); a positional argument is said as
    /// `command` (`fslab dbench`). Read once per type.
    pub fn of_args<A: clap::Args + 'static>(command: &'static str) -> Words {
        type Table = &'static [(&'static str, &'static str)];
        static MADE: std::sync::Mutex<Vec<(std::any::TypeId, Table)>> =
            std::sync::Mutex::new(Vec::new());
        let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
        let ty = std::any::TypeId::of::<A>();
        if let Some((_, table)) = made.iter().find(|(t, _)| *t == ty) {
            return Words::Flags(table);
        }
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let cmd = A::augment_args(clap::Command::new(command));
        let table: Vec<(&'static str, &'static str)> = cmd
            .get_arguments()
            .filter_map(|a| {
                let flag = match (a.is_positional(), a.get_short(), a.get_long()) {
                    (true, _, _) => command.to_string(),
                    (false, Some(c), _) => format!("-{c}"),
                    (false, None, Some(l)) => format!("--{l}"),
                    (false, None, None) => return None,
                };
                Some((leak(a.get_id().to_string()), leak(flag)))
            })
            .collect();
        let table: Table = Box::leak(table.into_boxed_slice());
        made.push((ty, table));
        Words::Flags(table)
    }
}

/// A parameter an engine refuses (a usage error: exit code 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    template: String,
}

impl ParamError {
    /// An error from a template with `{key=value}` placeholders.
    pub fn new(template: impl Into<String>) -> ParamError {
        ParamError {
            template: template.into(),
        }
    }

    /// The message in `words`.
    pub fn render(&self, words: Words) -> String {
        let mut out = String::new();
        let mut rest = self.template.as_str();
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                break;
            };
            out.push_str(&rest[..open]);
            let inner = &rest[open + 1..close];
            match inner.split_once('=') {
                Some((key, value))
                    if !key.is_empty()
                        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    out.push_str(&name(key, value, words));
                }
                _ => out.push_str(&rest[open..=close]),
            }
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }
}

fn name(key: &str, value: &str, words: Words) -> String {
    match (words.flag(key), value.is_empty()) {
        (Some(f), true) => f.to_string(),
        (Some(f), false) => format!("{f} {value}"),
        (None, true) => key.to_string(),
        (None, false) => format!("{key} = {value}"),
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Words::Keys))
    }
}

impl std::error::Error for ParamError {}

/// Return early with a [`ParamError`] from a `format!` template.
#[macro_export]
macro_rules! bail_param {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::workload::param::ParamError::new(format!($($arg)*))))
    };
}

/// An error as the caller says it: a [`ParamError`] anywhere in the chain is rendered in
/// `words` as a usage error; any other error is returned as it is.
pub fn in_words(e: anyhow::Error, words: Words) -> anyhow::Error {
    match e.chain().find_map(|c| c.downcast_ref::<ParamError>()) {
        Some(p) => crate::error::usage(p.render(words)),
        None => e,
    }
}

/// The field names a type's `Deserialize` asks for (its study keys), read from serde itself:
/// a deserializer that records the field list of `deserialize_struct` and stops. So a study
/// can ask whether a workload kind has a parameter without parsing error texts; `&[]` for a
/// type that is not a struct.
pub fn fields_of<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    let mut probe = FieldProbe(None);
    let _ = T::deserialize(&mut probe);
    probe.0.unwrap_or(&[])
}

struct FieldProbe(Option<&'static [&'static str]>);

/// What stops the probe once it has read the field names (or found no struct): serde's own
/// error type, never shown.
type Probed = serde::de::value::Error;

impl<'de> serde::Deserializer<'de> for &mut FieldProbe {
    type Error = Probed;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(serde::de::Error::custom("field names read"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        self.0 = Some(fields);
        Err(serde::de::Error::custom("field names read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: &[(&str, &str)] = &[("dirs", "-d"), ("levels", "-l"), ("threads", "--threads")];

    #[test]
    fn flags_for_the_command_line_keys_for_a_study() {
        let e = ParamError::new(
            "{dirs=0}: directories per level must be at least 1; for a single directory use {levels=0}",
        );
        assert_eq!(
            e.render(Words::Flags(FLAGS)),
            "-d 0: directories per level must be at least 1; for a single directory use -l 0"
        );
        assert_eq!(
            e.to_string(),
            "dirs = 0: directories per level must be at least 1; for a single directory use levels = 0"
        );
        let t = ParamError::new("use {threads=} 1 or {size_blocks=3}; {not a field} {x}");
        assert_eq!(
            t.render(Words::Flags(FLAGS)),
            "use --threads 1 or size_blocks = 3; {not a field} {x}"
        );
    }

    #[test]
    fn a_key_is_named_by_its_flag_or_itself() {
        assert_eq!(Words::Flags(FLAGS).name("dirs"), "-d");
        assert_eq!(Words::Flags(FLAGS).name("files"), "files");
        assert_eq!(Words::Keys.name("dirs"), "dirs");
    }

    #[test]
    fn a_clap_definition_gives_the_flags() {
        #[derive(clap::Args)]
        struct A {
            #[arg(short = 'd', long)]
            dirs: u32,
            #[arg(long)]
            threads: u32,
            clients: u32,
        }
        let w = Words::of_args::<A>("fslab x");
        assert_eq!(
            ["dirs", "threads", "clients", "other"].map(|k| w.name(k)),
            ["-d", "--threads", "fslab x", "other"]
        );
        assert!(
            matches!((w, Words::of_args::<A>("")), (Words::Flags(a), Words::Flags(b)) if std::ptr::eq(a, b))
        );
    }

    #[test]
    fn in_words_renders_only_parameter_errors() {
        let e = in_words(
            anyhow::Error::new(ParamError::new("{dirs=0}: no")),
            Words::Flags(FLAGS),
        );
        assert_eq!(e.to_string(), "-d 0: no");
        assert!(e.is::<crate::error::UsageError>());
        let other = in_words(anyhow::anyhow!("disk on fire"), Words::Keys);
        assert_eq!(other.to_string(), "disk on fire");
    }
}
