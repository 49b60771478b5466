//! `[guest] calibrate = "ext4"` (or a list): the guest's cost, measured for the study itself.
//! The study's workloads, repetitions and cache policy run on a plain file system of each
//! listed type (default mkfs and mount options, the study's data device size, an internal
//! journal) twice: once on the host, once in the guest. Each side is a study of its own,
//! derived here from the study file and named after it; the main study's report reads both
//! and shows per metric how much slower the guest is and, with two file systems, how much
//! of the host's difference between them the guest still shows.

use super::file::{FilesystemSection, StrOrList, StudyFile};
use super::Study;
use crate::provision::{DeviceSpec, FsType};

crate::vocab::words! {
    /// Where a calibration study runs.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Side {
        /// On the host, before the guest boots.
        Host => "host",
        /// In the guest, before the study itself.
        Guest => "guest",
    }
    /// `host` or `guest`.
    as_str;
}

/// The name of a study's calibration on one side: `NAME.calibration.host`.
pub fn name(study: &str, side: Side) -> String {
    format!("{study}.calibration.{}", side.as_str())
}

impl Study {
    /// The file systems of `[guest] calibrate`, in file order; without the key, in a guest
    /// study that mixes file systems only the guest has with ones the host has as well, those
    /// host ones (at least two: ext4, then ext2, added as needed) — the guest's rankings of
    /// its file systems are only as good as what it keeps of a host's difference, which takes
    /// two file systems to measure; `calibrate = []`: none.
    pub fn calibration_fs(&self) -> std::result::Result<Vec<FsType>, String> {
        let Some(g) = self.file.guest.as_ref() else {
            return Ok(Vec::new());
        };
        let Some(c) = g.calibrate.as_ref() else {
            return Ok(self.default_calibration());
        };
        let names = match c {
            StrOrList::One(s) => vec![s.clone()],
            StrOrList::Many(v) => v.clone(),
        };
        let mut out = Vec::new();
        for n in names {
            let fs = FsType::parse(&n).map_err(|e| format!("[guest] calibrate: {e}"))?;
            if matches!(fs, FsType::Nilfs2 | FsType::Jfs | FsType::Reiserfs) {
                return Err(format!(
                    "[guest] calibrate = \"{n}\": calibrate on a file system the host kernel has as well (ext2, ext3, ext4, xfs or btrfs)"
                ));
            }
            if out.contains(&fs) {
                return Err(format!("[guest] calibrate names {n} twice"));
            }
            out.push(fs);
        }
        Ok(out)
    }

    /// The file systems of its cells, in order, as words: `ext4 and xfs`.
    pub fn fs_words(&self) -> String {
        self.cells
            .iter()
            .map(|c| c.fs.fs.as_str())
            .collect::<Vec<_>>()
            .join(" and ")
    }

    /// The default calibration (see [`Study::calibration_fs`]).
    fn default_calibration(&self) -> Vec<FsType> {
        let guest_only = |f: &FsType| matches!(f, FsType::Nilfs2 | FsType::Jfs | FsType::Reiserfs);
        let all = crate::stats::distinct(self.cells.iter().map(|c| c.fs.fs));
        if !all.iter().any(guest_only) || all.iter().all(guest_only) {
            return Vec::new();
        }
        let mut out: Vec<FsType> = all.into_iter().filter(|f| !guest_only(f)).collect();
        for extra in [FsType::Ext4, FsType::Ext2] {
            if out.len() < 2 && !out.contains(&extra) {
                out.push(extra);
            }
        }
        out
    }

    /// The calibration study of one side, or None without `[guest] calibrate`.
    pub fn calibration(&self, side: Side) -> std::result::Result<Option<Study>, String> {
        let fs = self.calibration_fs()?;
        let Some(first) = fs.first() else {
            return Ok(None);
        };
        let data = DeviceSpec::parse(&self.file.device.data)?;
        if matches!(data, DeviceSpec::Path(_)) {
            return Err("[guest] calibrate needs a loop:SIZE or ram:SIZE data device".into());
        }
        let mut f: StudyFile = self.file.clone();
        f.name = name(&self.file.name, side);
        f.description =
            format!(
            "Guest calibration of study '{}', {} side: its workloads on {} with default options",
            self.file.name,
            side.as_str(),
            fs.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" and ")
        );
        f.device.journal = None;
        f.device.allow_format = Vec::new();
        f.filesystem = FilesystemSection {
            fs_type: Some(first.as_str().to_string()),
            ..FilesystemSection::default()
        };
        f.factors = Vec::new();
        if fs.len() > 1 {
            let values = fs
                .iter()
                .map(|t| {
                    let mut v = toml::Table::new();
                    v.insert("label".into(), t.as_str().into());
                    v.insert("fs".into(), t.as_str().into());
                    v
                })
                .collect();
            f.factors.push(super::file::FactorSection {
                name: "fs".into(),
                values,
            });
        }
        f.guest = match side {
            Side::Host => None,
            Side::Guest => self.file.guest.clone().map(|mut g| {
                g.calibrate = Some(StrOrList::Many(Vec::new()));
                g
            }),
        };
        let text =
            toml::to_string(&f).map_err(|e| format!("writing the calibration study: {e}"))?;
        Study::from_file(f, text)
            .map(Some)
            .map_err(|e| format!("[guest] calibrate: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STUDY: &str = r#"
name = "classic"
[repetitions]
min = 3
cache = "cold"
[device]
data = "loop:1G"
journal = "loop:64M"
[filesystem]
type = "reiserfs"
mount = ["notail"]
[guest]
kind = "uml"
calibrate = ["ext4", "xfs"]
[[factor]]
name = "fs"
values = [{ label = "jfs", fs = "jfs" }, { label = "reiserfs", fs = "reiserfs" }]
[[workload]]
kind = "fdtree"
dirs = 3
files = 4
levels = 2
"#;

    #[test]
    fn each_side_runs_the_workloads_on_plain_file_systems() {
        let s = Study::parse(STUDY).unwrap();
        let host = s.calibration(Side::Host).unwrap().unwrap();
        assert_eq!(host.name(), "classic.calibration.host");
        let labels: Vec<&str> = host.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["fs=ext4", "fs=xfs"]);
        for c in &host.cells {
            assert!(c.fs.mount.is_empty() && c.fs.mkfs.is_empty(), "{c:?}");
            assert!(matches!(c.fs.journal, crate::provision::Journal::Internal));
        }
        assert_eq!(host.repetitions, s.repetitions);
        assert!(
            host.guest().unwrap().is_none(),
            "the host side runs on the host"
        );
        let guest = s.calibration(Side::Guest).unwrap().unwrap();
        assert_eq!(guest.name(), "classic.calibration.guest");
        assert!(
            guest.guest().unwrap().is_some(),
            "the guest side runs in the guest"
        );
        assert!(
            guest.calibration_fs().unwrap().is_empty(),
            "no calibration of its own"
        );
        assert_ne!(host.hash, guest.hash);
    }

    #[test]
    fn a_study_mixing_guest_and_host_file_systems_calibrates_on_two_by_default() {
        let mixed = STUDY
            .replace("calibrate = [\"ext4\", \"xfs\"]\n", "")
            .replace(
                r#"{ label = "reiserfs", fs = "reiserfs" }"#,
                r#"{ label = "reiserfs", fs = "reiserfs" }, { label = "xfs", fs = "xfs" }"#,
            );
        let s = Study::parse(&mixed).unwrap();
        assert_eq!(s.calibration_fs().unwrap(), [FsType::Xfs, FsType::Ext4]);
        let host = s.calibration(Side::Host).unwrap().unwrap();
        assert_eq!(host.cells.len(), 2);
        // The guest side measures; it does not calibrate again.
        let guest = s.calibration(Side::Guest).unwrap().unwrap();
        assert!(guest.calibration_fs().unwrap().is_empty());
        // calibrate = [] says none; a study of guest file systems only gets none by default.
        let off = mixed.replace("kind = \"uml\"\n", "kind = \"uml\"\ncalibrate = []\n");
        let guest_only = STUDY.replace("calibrate = [\"ext4\", \"xfs\"]\n", "");
        for none in [off, guest_only] {
            let fs = Study::parse(&none).unwrap().calibration_fs().unwrap();
            assert!(fs.is_empty(), "{none}");
        }
    }

    #[test]
    fn one_file_system_needs_no_factor_and_bad_ones_are_refused() {
        let one = STUDY.replace(r#"calibrate = ["ext4", "xfs"]"#, r#"calibrate = "ext4""#);
        let host = Study::parse(&one)
            .unwrap()
            .calibration(Side::Host)
            .unwrap()
            .unwrap();
        assert_eq!(host.cells.len(), 1);
        assert_eq!(host.cells[0].fs.fs, FsType::Ext4);
        let none = STUDY.replace("calibrate = [\"ext4\", \"xfs\"]\n", "");
        assert!(Study::parse(&none)
            .unwrap()
            .calibration(Side::Host)
            .unwrap()
            .is_none());
        for (bad, msg) in [
            (r#"calibrate = "jfs""#, "the host kernel has as well"),
            (r#"calibrate = ["ext4", "ext4"]"#, "twice"),
            (r#"calibrate = "zfs""#, "calibrate"),
        ] {
            let t = STUDY.replace(r#"calibrate = ["ext4", "xfs"]"#, bad);
            // Refused when the study file is read, before anything runs.
            let e = Study::parse(&t).unwrap_err();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
