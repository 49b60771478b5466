//! IOzone's parameters, declared once: the study file's keys (serde, `kind = "iozone"`) and
//! the command line's flags (clap, flattened into `fslab iozone`, whose own options are only
//! the command's: the sweep, the files, verification, cache actions, output). Both build the
//! engine's [`IozoneParams`] through [`IozoneSpec::base`], with IOzone's size rule (a bare
//! number is KiB).

use super::{resolve_tests, IozoneParams, DEFAULT_STRIDE};
use crate::workload::param::Words;
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

/// Parse an IOzone file size into KiB: [`parse_kib_size`], refused unless whole KiB.
pub fn parse_file_kib(s: &str, what: &str) -> Result<u64> {
    let b = parse_kib_size(s, what)?;
    if b % 1024 != 0 {
        crate::bail_usage!("{what} {s}: IOzone file sizes are whole KiB; use a multiple of 1k");
    }
    Ok(b / 1024)
}

/// An IOzone workload: the study file's `[[workload]] kind = "iozone"` keys and `fslab
/// iozone`'s flags of the same meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct IozoneSpec {
    /// Label in reports; default derived from the parameters (study files only).
    #[arg(skip)]
    pub label: Option<String>,
    /// File size (IOzone -s; study key `file_size`, one size): k, m, g suffixes, a bare number
    /// is KiB. Repeat for a list (turns on auto mode over the listed sizes). Default: 512k.
    #[serde(with = "one_or_more")]
    #[arg(short = 's', value_name = "SIZE")]
    pub file_size: Vec<String>,
    /// Record size (IOzone -r; study key `record_size`, one size): k, m, g suffixes, a bare
    /// number is KiB; 128 bytes to 16 MiB. Repeat for a list. Default: 4k.
    #[serde(with = "one_or_more")]
    #[arg(short = 'r', value_name = "SIZE")]
    pub record_size: Vec<String>,
    /// Test to run, repeatable (IOzone -i; study key `tests`, a list): 0 write/rewrite, 1
    /// read/re-read, 2 random read/write, 3 backwards read, 4 record rewrite, 5 strided read,
    /// 6 fwrite/re-fwrite, 7 fread/re-fread. Default: all of 0-7 (a study's: [0, 1]). 0 is
    /// added when a selected test reads the file.
    #[arg(short = 'i', value_name = "N", allow_hyphen_values = true, value_parser = test_number)]
    pub tests: Vec<i64>,
    /// O_DIRECT on all tests but fwrite/fread (IOzone -I; study key `direct`). Default: off.
    #[arg(short = 'I')]
    pub direct: bool,
    /// Include fsync (and fflush) in the timing (IOzone -e; study key `fsync`). Default: off.
    #[arg(short = 'e')]
    pub fsync: bool,
    /// Include close in the timing (IOzone -c; study key `close`). Default: off.
    #[arg(short = 'c')]
    pub close: bool,
    /// O_SYNC writes (IOzone -o; study key `osync`). Default: off.
    #[arg(short = 'o')]
    pub osync: bool,
    /// Stride of the strided read in records (IOzone -j; study key `stride`), 0 to 2^30.
    #[arg(short = 'j', value_name = "RECORDS", default_value_t = DEFAULT_STRIDE)]
    pub stride: u64,
    /// Throughput mode with N workers, each on its own file (IOzone -t, at most 256; study key
    /// `threads`). Default: one process, no throughput mode (a study's `threads` is 1 by
    /// default, and throughput mode only above 1).
    #[arg(short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Put the record buffer in a transparent huge page (MADV_HUGEPAGE; study key
    /// `huge_buffer`). Default: off; the buffer follows the system's THP policy, as IOzone's
    /// does. With -I its pages decide how the kernel splits each record into device requests
    /// (see doc/iozone.md).
    #[arg(long)]
    pub huge_buffer: bool,
}

/// A study's defaults, for the keys its workload leaves out: 512k files, 4k records, tests
/// 0 and 1, IOzone's stride, one worker.
impl Default for IozoneSpec {
    fn default() -> Self {
        IozoneSpec {
            label: None,
            file_size: vec!["512k".into()],
            record_size: vec!["4k".into()],
            tests: vec![0, 1],
            direct: false,
            fsync: false,
            close: false,
            osync: false,
            stride: DEFAULT_STRIDE,
            threads: Some(1),
            huge_buffer: false,
        }
    }
}

/// `-i N`: a test number (checked against IOzone's tests by [`resolve_tests`]).
fn test_number(s: &str) -> Result<i64, String> {
    s.trim()
        .parse::<i64>()
        .map_err(|_| "not a test number; use -i with 0-7".to_string())
}

/// A study file's size is one string (`file_size = "1g"`), stored as one; the command line
/// repeats the flag for a list.
mod one_or_more {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[String], s: S) -> Result<S::Ok, S::Error> {
        match v {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(vec![String::deserialize(d)?])
    }
}

impl IozoneSpec {
    /// The label, or the IOzone command it stands for.
    pub fn label(&self) -> String {
        let derived = || {
            self.to_params()
                .map_or_else(|_| "iozone".into(), |p| p.label())
        };
        self.label.clone().unwrap_or_else(derived)
    }

    /// The file sizes (KiB) and record sizes (bytes) as given, in order; errors name them in
    /// `words`.
    pub fn sizes(&self, words: Words) -> Result<(Vec<u64>, Vec<u64>)> {
        let all = |sizes: &[String], parse: fn(&str, &str) -> Result<u64>, key| {
            let what = words.name(key);
            sizes.iter().map(|s| parse(s, what)).collect::<Result<_>>()
        };
        let files = all(&self.file_size, parse_file_kib, "file_size")?;
        let records = all(&self.record_size, parse_kib_size, "record_size")?;
        Ok((files, records))
    }

    /// The engine parameters this spec sets but the sizes and the workers: `tests` (as
    /// [`resolve_tests`] made them), the timing flags, the stride and the buffer; the rest at
    /// IOzone's defaults for the caller to fill in.
    pub fn base(&self, tests: Vec<u8>, words: Words) -> Result<IozoneParams> {
        crate::workload::check_stride(self.stride, words.name("stride"))?;
        Ok(IozoneParams {
            tests,
            direct: self.direct,
            fsync: self.fsync,
            close: self.close,
            osync: self.osync,
            stride: self.stride,
            huge_buffer: self.huge_buffer,
            ..IozoneParams::default()
        })
    }

    /// Validated engine parameters of a study's workload: one point, throughput mode when
    /// `threads` is above 1.
    pub fn to_params(&self) -> Result<IozoneParams> {
        let (files, records) = self.sizes(Words::Keys)?;
        let (&[file_kib], &[record]) = (files.as_slice(), records.as_slice()) else {
            crate::bail_usage!(
                "file_size and record_size take one size each in a study; vary them with a factor"
            );
        };
        let (tests, _) = resolve_tests(&self.tests)?;
        let threads = self.threads.unwrap_or(1);
        let p = IozoneParams {
            file_kib,
            record,
            threads,
            throughput: threads > 1,
            ..self.base(tests, Words::Keys)?
        };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn study_spec_defaults_and_unknown_keys() {
        let s: IozoneSpec = toml::from_str("file_size = \"1g\"\nrecord_size = \"1m\"").unwrap();
        let p = s.to_params().unwrap();
        assert_eq!((p.file_kib, p.record), (1 << 20, 1 << 20));
        assert_eq!(p.tests, [0, 1]);
        assert_eq!((p.stride, p.threads, p.throughput), (17, 1, false));
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
        let odd: IozoneSpec = toml::from_str("file_size = \"1500b\"").unwrap();
        let said = odd.to_params().unwrap_err().to_string();
        assert!(said.starts_with("file_size 1500b: "), "{said}");
        let w = crate::workload::WorkloadSpec::Iozone(s.clone());
        assert_eq!(w.kind(), "iozone");
        assert!(w.build().is_ok());
        let round: crate::workload::WorkloadSpec =
            toml::from_str("kind = \"iozone\"\nfile_size = \"64k\"\ntests = [0, 2]").unwrap();
        assert_eq!(round.label(), "iozone -s 64k -r 4k -i 0 -i 2");
        // Stored as before: sizes as strings, threads as a number.
        let stored = serde_json::to_value(&s).unwrap();
        assert_eq!(stored["file_size"], "1g");
        assert_eq!(stored["record_size"], "1m");
        assert_eq!(stored["threads"], 1);
        let back: IozoneSpec = serde_json::from_value(stored).unwrap();
        assert_eq!(back, s);
        assert!(toml::from_str::<IozoneSpec>("file_size = [\"1g\", \"2g\"]").is_err());
    }

    #[test]
    fn study_threads_above_one_is_throughput_mode() {
        let s: IozoneSpec = toml::from_str("threads = 4").unwrap();
        let p = s.to_params().unwrap();
        assert_eq!((p.threads, p.throughput), (4, true));
        let big: IozoneSpec = toml::from_str("stride = 2000000000").unwrap();
        let said = big.to_params().unwrap_err().to_string();
        assert!(
            said.starts_with("stride 2000000000 is out of range"),
            "{said}"
        );
    }

    /// The spec as `fslab iozone` reads it: the same struct, its flags.
    #[derive(Debug, Parser)]
    struct Cmd {
        #[command(flatten)]
        spec: IozoneSpec,
    }

    #[test]
    fn the_command_line_reads_the_same_declaration() {
        let c = Cmd::try_parse_from(
            "iozone -s 1g -r 1m -i 0 -i 2 -I -e -c -o -j 5 --huge-buffer".split(' '),
        )
        .unwrap();
        let from_toml: IozoneSpec = toml::from_str(
            "file_size = \"1g\"\nrecord_size = \"1m\"\ntests = [0, 2]\ndirect = true\n\
             fsync = true\nclose = true\nosync = true\nstride = 5\nhuge_buffer = true",
        )
        .unwrap();
        assert_eq!(
            c.spec,
            IozoneSpec {
                threads: None,
                ..from_toml
            },
            "the command line's -t is not given; a study's threads defaults to 1"
        );
        let d = Cmd::try_parse_from(["iozone"]).unwrap().spec;
        assert!(d.file_size.is_empty() && d.record_size.is_empty() && d.tests.is_empty());
        assert_eq!(d.stride, DEFAULT_STRIDE);
        let list = Cmd::try_parse_from(["iozone", "-s", "64k", "-s", "1500b"]).unwrap();
        let said = list
            .spec
            .sizes(Words::of_args::<IozoneSpec>("fslab iozone"))
            .unwrap_err()
            .to_string();
        assert!(said.starts_with("-s 1500b: "), "flag words: {said}");
        let e = Cmd::try_parse_from(["iozone", "-i", "x"]).unwrap_err();
        assert!(e.to_string().contains("not a test number"), "{e}");
        let neg = Cmd::try_parse_from(["iozone", "-i", "-1"]).unwrap().spec;
        assert_eq!(
            neg.tests,
            [-1],
            "refused later, with IOzone's list of tests"
        );
    }
}
