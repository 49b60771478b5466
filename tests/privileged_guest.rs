//! The classic studies' other file systems in a User-mode Linux guest (issue 16): nilfs2,
//! JFS with an external log and ReiserFS with an external and an internal journal are made,
//! verified by read-back and measured with fdtree inside `fslab study run --guest uml`, the
//! samples land in the host's store, and nothing the host made for the guest is left. On a
//! host kernel without nilfs2, the host path refuses it naming `--guest uml`.
//!
//! Needs root and Debian's `user-mode-linux`, `jfsutils`, `reiserfsprogs` and `nilfs-tools`
//! (`scripts/install-deps --test`); fails loudly without them unless FSLAB_SKIP_GUEST=1 is
//! set on purpose.

mod common;

use common::{require_guest, require_root};
use std::path::Path;
use std::process::Command;

const STUDY: &str = r#"
name = "guest-classic"
[repetitions]
min = 2
cache = "cold"
[device]
data = "loop:512M"
[[factor]]
name = "fs"
values = [
  { label = "nilfs2", fs = "nilfs2", block_size = "4k" },
  { label = "jfs-ext", fs = "jfs", journal = "loop:32M" },
  { label = "reiserfs-ext", fs = "reiserfs", journal = "loop:64M", journal_size = "32M" },
  { label = "reiserfs-int", fs = "reiserfs", journal_size = "16M", mount = ["notail"] },
]
[[workload]]
kind = "fdtree"
dirs = 3
files = 4
size_blocks = 1
levels = 2
"#;

fn fslab(dir: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    c.env("FSLAB_DB", dir.join("results.db"));
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn privileged_nilfs2_jfs_and_reiserfs_are_made_verified_and_measured_in_a_guest() {
    if !require_guest(
        "privileged_nilfs2_jfs_and_reiserfs_are_made_verified_and_measured_in_a_guest",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("classic.toml");
    std::fs::write(&file, STUDY).unwrap();
    let work = dir.path().join("work");
    let out = fslab(dir.path())
        .args(["study", "run", "--guest", "uml:384M"])
        .arg(&file)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "exit {:?}\n{so}\n{se}", out.status);
    // The host's stderr is a pipe here: the guest's fslab prints plain progress lines and
    // draws nothing with escape codes, though its own consoles are terminals.
    assert!(se.contains("rep 1/2"), "plain progress lines: {se}");
    assert!(
        !se.contains('\x1b') && !so.contains('\x1b'),
        "escape codes: {se:?}"
    );

    let db = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    let cells: Vec<(String, String, String, String)> = db
        .prepare("SELECT label, status, commands, superblock FROM cell ORDER BY idx")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(cells.len(), 4, "{cells:?}");
    for (label, status, _, _) in &cells {
        assert_eq!(status, "complete", "cell {label}\n{so}\n{se}");
    }
    // Made as asked, on the guest's block devices, and read back.
    let (_, _, cmds, sb) = &cells[1];
    assert!(
        cmds.contains("mkfs.jfs -q -J journal_dev /dev/ubdc"),
        "{cmds}"
    );
    assert!(
        cmds.contains("mkfs.jfs -q -J device=/dev/ubdc /dev/ubdb"),
        "{cmds}"
    );
    assert!(sb.contains("External log UUID"), "{sb}");
    let (_, _, cmds, sb) = &cells[2];
    assert!(
        cmds.contains("mkreiserfs -q -ff -j /dev/ubde -s 8193 /dev/ubdd"),
        "{cmds}"
    );
    assert!(cmds.contains("-o jdev=/dev/ubde /dev/ubdd"), "{cmds}");
    assert!(sb.contains("Size 8193 blocks"), "{sb}");
    let (_, _, cmds, sb) = &cells[3];
    assert!(
        cmds.contains("mkreiserfs -q -ff -s 4097 /dev/ubdf"),
        "{cmds}"
    );
    assert!(sb.contains("Size 4097 blocks"), "{sb}");
    let (_, _, cmds, sb) = &cells[0];
    assert!(
        cmds.contains("mkfs.nilfs2 -f -q -b 4096 /dev/ubda"),
        "{cmds}"
    );
    assert!(sb.contains("Block size"), "{sb}");

    // Two counted fdtree repetitions per cell, with their rates, in the host's store.
    let per_cell: Vec<(String, i64, i64)> = db
        .prepare(
            "SELECT c.label, COUNT(DISTINCT t.id), COUNT(s.value) FROM cell c \
             JOIN trial t ON t.cell_id = c.id AND t.status = 'ok' \
             JOIN sample s ON s.trial_id = t.id AND s.phase = 'file_create' AND s.metric = 'rate' \
             GROUP BY c.id ORDER BY c.idx",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_cell.len(), 4, "{per_cell:?}");
    for (label, trials, rates) in &per_cell {
        assert_eq!((*trials, *rates), (2, 2), "cell {label}");
    }
    let env: Vec<(String, String)> = db
        .prepare("SELECT key, value FROM environment WHERE key LIKE 'guest%' OR key = 'host_kernel' ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    assert_eq!(get("guest").as_deref(), Some("uml"), "{env:?}");
    assert_eq!(get("guest_mem").as_deref(), Some("384M"), "{env:?}");
    assert!(
        get("guest_kernel").is_some() && get("host_kernel").is_some(),
        "{env:?}"
    );

    // The report says where the figures come from.
    let rep = fslab(dir.path()).args(["report", "1"]).output().unwrap();
    let rep = text(&rep.stdout);
    assert!(
        rep.contains("Measured in a User-mode Linux guest: 1 (guest kernel "),
        "{rep}"
    );

    // Nothing the host made for the guest is left: images, its directory, its processes.
    let left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("guest-") && n != "guest-work")
        .collect();
    assert!(left.is_empty(), "left in the work directory: {left:?}");
    let ps = Command::new("pgrep")
        .args(["-f", &work.to_string_lossy()])
        .output()
        .unwrap();
    assert!(
        ps.stdout.is_empty(),
        "guest processes left: {}",
        text(&ps.stdout)
    );
}

#[test]
fn privileged_the_host_refuses_what_its_kernel_lacks_and_names_the_guest() {
    if !require_root("privileged_the_host_refuses_what_its_kernel_lacks_and_names_the_guest") {
        return;
    }
    let listed = std::fs::read_to_string("/proc/filesystems").unwrap();
    let has = |fs: &str| {
        listed
            .lines()
            .any(|l| l.split_whitespace().last() == Some(fs))
    };
    if has("nilfs2") && has("jfs") && has("reiserfs") {
        eprintln!("this kernel has nilfs2, jfs and reiserfs: nothing to refuse");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("classic.toml");
    std::fs::write(&file, STUDY).unwrap();
    for cmd in [&["study", "plan"][..], &["study", "run", "-q"][..]] {
        let out = fslab(dir.path())
            .args(cmd)
            .arg(&file)
            .arg("--workdir")
            .arg(dir.path().join("work"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("fslab study run --guest uml"),
            "{cmd:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{cmd:?}: one line: {err}");
    }
    assert!(!dir.path().join("work").exists(), "nothing was made");
    // A guest of an unknown kind or too little memory is refused before anything starts.
    let out = fslab(dir.path())
        .args(["study", "run", "-q", "--guest", "kvm"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("use uml or uml:MEM"),
        "{}",
        text(&out.stderr)
    );
}
