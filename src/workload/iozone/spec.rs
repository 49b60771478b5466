//! The study-file form of an IOzone workload (`[[workload]] kind = "iozone"`), with IOzone's
//! size rule (a bare number is KiB).

use super::{resolve_tests, IozoneParams, DEFAULT_STRIDE};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Parse an IOzone size: k/m/g suffixes, a bare number is KiB (IOzone's rule).
pub fn parse_kib_size(s: &str, what: &str) -> Result<u64> {
    crate::units::parse_size_with(s, 1024).map_err(|e| {
        crate::error::usage(format!(
            "{what}: {e} (a bare number means KiB, as in IOzone)"
        ))
    })
}

/// An IOzone workload as written in a study file (`kind = "iozone"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IozoneSpec {
    /// Label in reports; default derived from the parameters.
    #[serde(default)]
    pub label: Option<String>,
    /// File size, e.g. "1g" (a bare number is KiB, as in IOzone). Default "512k".
    #[serde(default = "d_file_size")]
    pub file_size: String,
    /// Record size, e.g. "1m" (a bare number is KiB). Default "4k".
    #[serde(default = "d_record_size")]
    pub record_size: String,
    /// IOzone test numbers. Default [0, 1].
    #[serde(default = "d_tests")]
    pub tests: Vec<i64>,
    /// O_DIRECT (-I).
    #[serde(default)]
    pub direct: bool,
    /// fsync inside the timing (-e).
    #[serde(default)]
    pub fsync: bool,
    /// close inside the timing (-c).
    #[serde(default)]
    pub close: bool,
    /// O_SYNC writes (-o).
    #[serde(default)]
    pub osync: bool,
    /// Stride in records (-j). Default 17.
    #[serde(default = "d_stride")]
    pub stride: u64,
    /// Throughput-mode workers (-t). Default 1 (single file).
    #[serde(default = "d_threads")]
    pub threads: usize,
    /// Record buffer in a transparent huge page at every record size and with O_DIRECT
    /// (`--huge-buffer`). Default false.
    #[serde(default)]
    pub huge_buffer: bool,
}

fn d_file_size() -> String {
    "512k".into()
}
fn d_record_size() -> String {
    "4k".into()
}
fn d_tests() -> Vec<i64> {
    vec![0, 1]
}
fn d_stride() -> u64 {
    DEFAULT_STRIDE
}
fn d_threads() -> usize {
    1
}

impl IozoneSpec {
    /// The label, or the IOzone command it stands for.
    pub fn label(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => self
                .to_params()
                .map(|p| p.label())
                .unwrap_or_else(|_| "iozone".into()),
        }
    }

    /// Validated engine parameters.
    pub fn to_params(&self) -> Result<IozoneParams> {
        let file = parse_kib_size(&self.file_size, "file_size")?;
        if file % 1024 != 0 {
            crate::bail_usage!(
                "file_size {}: IOzone sizes are whole KiB; use a multiple of 1k",
                self.file_size
            );
        }
        let record = parse_kib_size(&self.record_size, "record_size")?;
        let (tests, _) = resolve_tests(&self.tests)?;
        let p = IozoneParams {
            file_kib: file / 1024,
            record,
            tests,
            direct: self.direct,
            fsync: self.fsync,
            close: self.close,
            osync: self.osync,
            stride: self.stride,
            threads: self.threads,
            throughput: self.threads > 1,
            huge_buffer: self.huge_buffer,
            ..IozoneParams::default()
        };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn study_spec_defaults_and_unknown_keys() {
        let s: IozoneSpec = toml::from_str("file_size = \"1g\"\nrecord_size = \"1m\"").unwrap();
        let p = s.to_params().unwrap();
        assert_eq!((p.file_kib, p.record), (1 << 20, 1 << 20));
        assert_eq!(p.tests, [0, 1]);
        assert_eq!((p.stride, p.threads), (17, 1));
        assert!(toml::from_str::<IozoneSpec>("record = \"1m\"").is_err());
        let bare: IozoneSpec =
            toml::from_str("file_size = \"2048\"\nrecord_size = \"64\"").unwrap();
        let p = bare.to_params().unwrap();
        assert_eq!(
            (p.file_kib, p.record),
            (2048, 65536),
            "bare numbers are KiB"
        );
        let bad: IozoneSpec = toml::from_str("file_size = \"4k\"\nrecord_size = \"1m\"").unwrap();
        assert!(bad.to_params().is_err());
        let w = crate::workload::WorkloadSpec::Iozone(s);
        assert_eq!(w.kind(), "iozone");
        assert!(w.build().is_ok());
        let round: crate::workload::WorkloadSpec =
            toml::from_str("kind = \"iozone\"\nfile_size = \"64k\"\ntests = [0, 2]").unwrap();
        assert_eq!(round.label(), "iozone -s 64k -r 4k -i 0 -i 2");
    }
}
