//! Every refusal of the format guard, on loop devices these tests make themselves (root).

mod common;
mod testdev;

use common::{fslab, require_root};
use fslab::provision::exec::RealExec;
use fslab::provision::guard::{check_formattable, Thoroughness};
use std::path::Path;
use testdev::{ensure_partitions, sfdisk, sh, write_mbr, TestLoop, TestMount, TestSwap};

fn refused(dev: &Path, allow: bool) -> String {
    match check_formattable(dev, allow, &RealExec, Thoroughness::FULL) {
        Ok(()) => panic!("{} was not refused", dev.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn privileged_refuses_a_mounted_device_even_when_allow_listed() {
    if !require_root("privileged_refuses_a_mounted_device_even_when_allow_listed") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let l = TestLoop::new(t.path(), "m.img", 64, false);
    sh("mkfs.ext4", &["-q", "-F", l.path()]);
    let _m = TestMount::new(l.path(), &t.path().join("mnt"));
    let e = refused(&l.dev, true);
    assert!(e.contains("is mounted on"), "{e}");
    assert!(
        e.starts_with(&format!("refusing to format {}", l.path())),
        "{e}"
    );
}

#[test]
fn privileged_refuses_a_device_with_a_mounted_partition() {
    if !require_root("privileged_refuses_a_device_with_a_mounted_partition") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let img = t.path().join("p.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    write_mbr(&img, 65536);
    let l = TestLoop::over(&img, true);
    let p1 = ensure_partitions(l.path());
    sh("mkfs.ext4", &["-q", "-F", p1.to_str().unwrap()]);
    let _m = TestMount::new(p1.to_str().unwrap(), &t.path().join("mnt"));
    let e = refused(&l.dev, true);
    assert!(
        e.contains("has partition") && e.contains("mounted on"),
        "{e}"
    );
}

#[test]
fn privileged_refuses_the_device_of_root() {
    if !require_root("privileged_refuses_the_device_of_root") {
        return;
    }
    let root = fslab::sysinfo::mount_of(Path::new("/")).unwrap();
    let e = refused(Path::new(&root.source), true);
    assert!(e.contains("root file system"), "{e}");
}

#[test]
fn privileged_refuses_swap() {
    if !require_root("privileged_refuses_swap") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let l = TestLoop::new(t.path(), "s.img", 64, false);
    sh("mkswap", &[l.path()]);
    sh("swapon", &[l.path()]);
    let _s = TestSwap(l.path().to_string());
    let e = refused(&l.dev, true);
    assert!(e.contains("swap"), "{e}");
}

#[test]
fn privileged_refuses_a_loop_device_under_something_mounted() {
    if !require_root("privileged_refuses_a_loop_device_under_something_mounted") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let lower = TestLoop::new(t.path(), "lower.img", 64, false);
    let upper = TestLoop::over(&lower.dev, false);
    sh("mkfs.ext4", &["-q", "-F", upper.path()]);
    let _m = TestMount::new(upper.path(), &t.path().join("mnt"));
    let e = refused(&lower.dev, true);
    assert!(
        e.contains("mounted on") || e.contains("backs loop device"),
        "{e}"
    );
    // Unmounted, the lower device still backs a loop device: refused too.
    drop(_m);
    let e = refused(&lower.dev, true);
    assert!(e.contains("backs loop device"), "{e}");
}

#[test]
fn privileged_refuses_signatures_unless_the_exact_path_is_allowed() {
    if !require_root("privileged_refuses_signatures_unless_the_exact_path_is_allowed") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let l = TestLoop::new(t.path(), "sig.img", 64, false);
    // A fresh device passes.
    check_formattable(&l.dev, false, &RealExec, Thoroughness::FULL).unwrap();
    sh("mkfs.ext4", &["-q", "-F", l.path()]);
    let e = refused(&l.dev, false);
    assert!(e.contains("signature") && e.contains("TYPE=ext4"), "{e}");
    assert!(e.contains("allow_format"), "{e}");
    check_formattable(&l.dev, true, &RealExec, Thoroughness::FULL).unwrap();
    // A partition table alone is a signature too.
    let p = TestLoop::new(t.path(), "pt.img", 64, false);
    drop(p);
    let img = t.path().join("pt.img");
    write_mbr(&img, 1024);
    let p = TestLoop::over(&img, false);
    let e = refused(&p.dev, false);
    assert!(e.contains("dos") || e.contains("partition"), "{e}");
}

#[test]
fn privileged_a_blank_partition_passes_and_one_with_a_file_system_is_refused() {
    if !require_root("privileged_a_blank_partition_passes_and_one_with_a_file_system_is_refused") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // Detached when dropped, also when an assertion fails; its partitions go with it.
    let l = TestLoop::new(t.path(), "parts.img", 64, true);
    for label in ["dos", "gpt"] {
        let parts = sfdisk(l.path(), &format!("label: {label}\n,16M\n,16M\n"), 2);
        // blkid -p reports the partition's entry in the parent's table (PART_ENTRY_*):
        // that is no signature on the partition itself.
        check_formattable(&parts[0], false, &RealExec, Thoroughness::FULL)
            .unwrap_or_else(|e| panic!("blank {label} partition refused: {e}"));
        sh("mkfs.ext4", &["-q", "-F", parts[1].to_str().unwrap()]);
        let e = refused(&parts[1], false);
        assert!(
            e.contains("file-system signature") && e.contains("TYPE=ext4"),
            "{label}: {e}"
        );
        assert!(!e.contains("PART_ENTRY"), "{label}: {e}");
        // The disk holding them is still refused for its partitions.
        assert!(refused(&l.dev, false).contains("partition(s)"));
        sh("wipefs", &["-a", "-q", parts[1].to_str().unwrap()]);
    }
}

#[test]
fn privileged_refuses_what_is_not_a_block_device() {
    if !require_root("privileged_refuses_what_is_not_a_block_device") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("file.img");
    std::fs::write(&f, vec![0u8; 4096]).unwrap();
    assert!(refused(&f, true).contains("not a block device"));
    assert!(refused(Path::new("/dev/zero"), true).contains("not a block device"));
}

fn study_on(dev: &str, allow: bool) -> String {
    format!(
        r#"
name = "guarded"
[repetitions]
min = 1
cache = "none"
[device]
data = "{dev}"
{}
[filesystem]
type = "ext4"
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#,
        if allow {
            format!("allow_format = [\"{dev}\"]")
        } else {
            String::new()
        }
    )
}

#[test]
fn privileged_study_on_a_real_device_refuses_then_formats_when_allowed() {
    if !require_root("privileged_study_on_a_real_device_refuses_then_formats_when_allowed") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let l = TestLoop::new(t.path(), "real.img", 128, false);
    sh("mkfs.btrfs", &["-q", "-f", l.path()]);
    let file = t.path().join("s.toml");
    std::fs::write(&file, study_on(l.path(), false)).unwrap();
    let work = t.path().join("work");
    for sub in ["plan", "run"] {
        let out = fslab(t.path())
            .args(["study", sub])
            .arg(&file)
            .arg("--workdir")
            .arg(&work)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert!(
            err.contains("refusing to format") && err.contains("TYPE=btrfs"),
            "{err}"
        );
    }
    // Untouched: still xfs.
    assert!(sh("blkid", &["-p", "-o", "export", l.path()]).contains("TYPE=btrfs"));
    // Listed under allow_format: formatted, measured, torn down.
    std::fs::write(&file, study_on(l.path(), true)).unwrap();
    let out = fslab(t.path())
        .args(["study", "run", "-q"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sh("blkid", &["-p", "-o", "export", l.path()]).contains("TYPE=ext4"));
    assert!(testdev::mounts_under(&work).is_empty());
}
