//! The block devices the host makes for a guest study: one image file per cell's data and
//! journal device, in plan order, handed to the guest as `ubd0`, `ubd1`, …

use crate::plan::Study;
use crate::provision::{DeviceSpec, Journal};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The most block devices a UML guest has (`ubd0` … `ubd15`).
pub const MAX_UBD: usize = 16;

/// One device the host makes for the guest.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Image {
    pub idx: usize,
    pub role: &'static str,
    pub path: PathBuf,
    pub size: u64,
}

/// The images of every cell, in plan order, named `PREFIX{idx}-{role}.img` (`c` for a
/// study's cells, `k` for its calibration's); refuses real devices.
pub(super) fn images(
    study: &Study,
    prefix: char,
    dir: &Path,
    ram_dir: &Path,
) -> std::result::Result<Vec<Image>, String> {
    let mut out = Vec::new();
    for (idx, c) in study.cells.iter().enumerate() {
        let journal = match &c.fs.journal {
            Journal::External(d) => Some(d),
            Journal::Internal => None,
        };
        for (role, spec) in [("data", Some(&c.fs.data)), ("journal", journal)] {
            let Some(spec) = spec else { continue };
            let (size, base) = match spec {
                DeviceSpec::Loop(n) => (*n, dir),
                DeviceSpec::Ram(n) => (*n, ram_dir),
                DeviceSpec::Path(p) => {
                    return Err(format!(
                        "cell {}: {} is a real device; a guest study uses loop:SIZE or ram:SIZE devices, which fslab hands to the guest",
                        c.label,
                        p.display()
                    ))
                }
            };
            out.push(Image {
                idx,
                role,
                path: base.join(format!("{prefix}{idx}-{role}.img")),
                size,
            });
        }
    }
    Ok(out)
}

/// Refuse more than [`MAX_UBD`] devices in one guest.
pub(super) fn check_count(n: usize) -> std::result::Result<(), String> {
    if n > MAX_UBD {
        return Err(format!(
            "the study needs {n} devices (its calibration's included) but a User-mode Linux guest has at most {MAX_UBD}; split the study into smaller ones"
        ));
    }
    Ok(())
}

/// Make each image as a new sparse file of its size. A file already at an image's path is
/// never adopted: the image is created exclusively, and an existing file is an error.
pub(super) fn create(images: &[Image]) -> Result<()> {
    for i in images {
        let f = crate::safe::create_new(&i.path, 0o666)
            .with_context(|| format!("creating the guest's image {}", i.path.display()))?;
        f.set_len(i.size)
            .with_context(|| format!("sizing {}", i.path.display()))?;
    }
    Ok(())
}

/// `IDX.ROLE=/dev/ubdX` for each image, the guest's [`super::FSLAB_GUEST_DEVICES`];
/// `first` is the `ubd` number of the first image.
pub(super) fn device_pairs(images: &[Image], first: usize) -> String {
    images
        .iter()
        .enumerate()
        .map(|(n, i)| format!("{}.{}={}", i.idx, i.role, ubd_name(first + n)))
        .collect::<Vec<_>>()
        .join(";")
}

/// `/dev/ubda` … `/dev/ubdp`.
pub(super) fn ubd_name(i: usize) -> String {
    format!("/dev/ubd{}", (b'a' + i as u8) as char)
}

/// Whether a file name is one of the images the host makes (`c3-data.img`, `c0-journal.img`,
/// `k0-data.img` for a calibration).
pub(super) fn is_image_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('c').or_else(|| name.strip_prefix('k')) else {
        return false;
    };
    let Some((idx, role)) = rest.split_once('-') else {
        return false;
    };
    !idx.is_empty()
        && idx.bytes().all(|b| b.is_ascii_digit())
        && (role == "data.img" || role == "journal.img")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pairs() {
        assert_eq!(ubd_name(0), "/dev/ubda");
        assert_eq!(ubd_name(15), "/dev/ubdp");
        assert!(is_image_name("c12-journal.img") && is_image_name("k1-data.img"));
        assert!(!is_image_name("c-data.img") && !is_image_name("cx-data.img"));
        assert!(!is_image_name("x1-data.img"));
        let im = |idx, role| Image {
            idx,
            role,
            path: PathBuf::new(),
            size: 1,
        };
        assert_eq!(
            device_pairs(&[im(0, "data"), im(0, "journal"), im(3, "data")], 0),
            "0.data=/dev/ubda;0.journal=/dev/ubdb;3.data=/dev/ubdc"
        );
        assert_eq!(device_pairs(&[im(0, "data")], 3), "0.data=/dev/ubdd");
        assert!(check_count(16).is_ok() && check_count(17).is_err());
    }

    #[test]
    fn an_existing_file_is_never_adopted_as_an_image() {
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join("c0-data.img");
        std::fs::write(&planted, b"a user's bytes").unwrap();
        let im = Image {
            idx: 0,
            role: "data",
            path: planted.clone(),
            size: 1 << 20,
        };
        assert!(create(std::slice::from_ref(&im)).is_err());
        assert_eq!(std::fs::read(&planted).unwrap(), b"a user's bytes");
        let fresh = Image {
            path: dir.path().join("c1-data.img"),
            ..im
        };
        create(std::slice::from_ref(&fresh)).unwrap();
        assert_eq!(std::fs::metadata(&fresh.path).unwrap().len(), 1 << 20);
    }
}
