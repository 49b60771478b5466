//! What a run formatted is remembered by the device's identity, not by the path that named
//! it (issue 32): a `data` path that is a symbolic link, re-pointed between two cells, makes
//! the second cell check its new device's signature again — and refuse it. The devices are
//! loop devices over images this test made.

mod common;
mod testdev;

use fslab::provision::exec::RealExec;
use fslab::provision::state::WorkDir;
use fslab::provision::{DeviceSpec, FsConfig, FsType, Provisioner};
use std::sync::Arc;
use testdev::{sh, TestLoop};

#[test]
fn privileged_a_path_re_pointed_between_cells_is_checked_again() {
    if !common::require_root("privileged_a_path_re_pointed_between_cells_is_checked_again") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let blank = TestLoop::new(t.path(), "blank.img", 300, false);
    let victim = TestLoop::new(t.path(), "victim.img", 300, false);
    let vdev = victim.dev.to_str().unwrap().to_string();
    sh("mkfs.ext4", &["-q", "-F", "-L", "victim", &vdev]);
    let uuid = sh("blkid", &["-p", "-s", "UUID", "-o", "value", &vdev]);
    // The study's `data` is a link the user (or anyone) can re-point.
    let link = t.path().join("data-dev");
    std::os::unix::fs::symlink(&blank.dev, &link).unwrap();

    let work = WorkDir::new(t.path().join("work"));
    let run = work.start_run(None).unwrap();
    let prov = Provisioner::new(Arc::new(RealExec), run.clone(), vec![], 0).unwrap();
    let cfg = FsConfig::new(FsType::Ext4, DeviceSpec::Path(link.clone()));
    // Cell 0 formats the blank device through the link (nothing on it: allowed).
    let first = prov
        .provision(0, &cfg)
        .expect("the blank device is formatted");
    first.teardown().unwrap();
    // Re-pointed before cell 1: the link now names the victim, which carries ext4.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&victim.dev, &link).unwrap();
    let second = prov.provision(1, &cfg);
    let err = second
        .err()
        .expect("the victim device is refused")
        .to_string();
    assert!(err.contains("ext4"), "{err}");
    assert_eq!(
        sh("blkid", &["-p", "-s", "UUID", "-o", "value", &vdev]),
        uuid,
        "the victim was formatted"
    );
    // The same device again (the link pointed back) is the run's own: formatted again.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&blank.dev, &link).unwrap();
    let again = prov.provision(2, &cfg).expect("the run's own device");
    again.teardown().unwrap();
    drop(prov);
    drop((blank, victim));
}
