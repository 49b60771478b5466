//! Exact command sequences of the provisioner, with a recording executor (no root).
use super::*;
use crate::provision::exec::{Output, RecordingExec};

fn responder() -> crate::provision::exec::Responder {
    let n = std::sync::atomic::AtomicU32::new(0);
    Box::new(move |c: &CmdLine| {
        if c.program == "losetup" && c.args.iter().any(|a| a == "--find") {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Output::ok(format!("/dev/loop{}\n", 10 + i));
        }
        Output::ok("")
    })
}

#[test]
fn ext4_with_a_ram_journal_and_a_scheduler_runs_exactly_these_commands() {
    let ex = Arc::new(RecordingExec::with(responder()));
    let p = Provisioner::dry(ex.clone(), PathBuf::from("/w/run"), vec![], 256 << 20);
    let mut cfg = FsConfig::new(FsType::Ext4, DeviceSpec::Loop(1 << 30));
    cfg.journal = Journal::External(DeviceSpec::Ram(256 << 20));
    cfg.journal_size = Some(64 << 20);
    cfg.mount = vec!["noatime".into()];
    cfg.features = vec!["^dir_index".into()];
    cfg.scheduler = Some("mq-deadline".into());
    let prov = p.provision(3, &cfg).unwrap();
    let want = [
        "truncate -s 1073741824 /w/run/images/c3-data.img",
        "losetup --find --show --direct-io=on /w/run/images/c3-data.img",
        "blkid -p -o export /dev/loop10",
        "wipefs -n --noheadings --output TYPE,OFFSET /dev/loop10",
        "mount -t tmpfs -o size=285212672,mode=0700 fslab-ram /w/run/ram",
        "truncate -s 268435456 /w/run/ram/c3-journal.img",
        "losetup --find --show --direct-io=on /w/run/ram/c3-journal.img",
        "blkid -p -o export /dev/loop11",
        "wipefs -n --noheadings --output TYPE,OFFSET /dev/loop11",
        "echo mq-deadline > /sys/block/loop10/queue/scheduler",
        "mke2fs -F -q -O journal_dev -b 4096 /dev/loop11 16384",
        "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -b 4096 -J device=/dev/loop11 /dev/loop10",
        "tune2fs -O '^dir_index' /dev/loop10",
        "mkdir /w/run/mnt/c3",
        "mount -t ext4 -o noatime,journal_path=/dev/loop11 /dev/loop10 /w/run/mnt/c3",
        "dumpe2fs -h /dev/loop10",
        "dumpe2fs -h /dev/loop11",
    ];
    assert_eq!(prov.commands, want);
    // What ran is what was stored, except the mkdir (a system call) and, in dry mode,
    // the read-only safety probes.
    let ran: Vec<String> = want
        .iter()
        .filter(|l| {
            !["mkdir", "blkid", "wipefs"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|s| s.to_string())
        .collect();
    assert_eq!(ex.lines(), ran);
    assert_eq!(prov.target().dir, PathBuf::from("/w/run/mnt/c3"));
    prov.teardown().unwrap();
    let after = ex.lines();
    assert_eq!(
        after[ran.len()..],
        [
            "umount /w/run/mnt/c3",
            "losetup -d /dev/loop11",
            "losetup -d /dev/loop10"
        ]
    );
    p.finish().unwrap();
    assert_eq!(ex.lines().last().unwrap(), "umount /w/run/ram");
}

#[test]
fn a_failed_mkfs_tears_down_what_was_made() {
    let loops = responder();
    let ex = Arc::new(RecordingExec::with(Box::new(move |c: &CmdLine| {
        if c.program == "mkfs.xfs" {
            return Output {
                status: 1,
                stdout: String::new(),
                stderr: "Filesystem must be larger than 300MB.\nUsage: …".into(),
            };
        }
        loops(c)
    })));
    let p = Provisioner::dry(ex.clone(), PathBuf::from("/w"), vec![], 0);
    let cfg = FsConfig::new(FsType::Xfs, DeviceSpec::Loop(1 << 30));
    let e = p.provision(0, &cfg).err().unwrap();
    assert!(e.to_string().contains("larger than 300MB"), "{e}");
    assert_eq!(ex.lines().last().unwrap(), "losetup -d /dev/loop10");
}

#[test]
fn the_plan_uses_placeholders() {
    let p = Provisioner::planner(vec![], 0);
    let cfg = FsConfig::new(FsType::Btrfs, DeviceSpec::Loop(1 << 30));
    let planned = p.plan(1, &cfg).unwrap();
    let made = &planned.commands;
    assert!(
        made.contains(&"mkfs.btrfs -f -q $DATA".to_string()),
        "{made:?}"
    );
    assert!(made.contains(&"btrfs inspect-internal dump-super $DATA".to_string()));
    assert_eq!(
        planned.mount.mount_cmd().to_string(),
        "mount -t btrfs $DATA $RUN/mnt/c1"
    );
    assert_eq!(
        planned.teardown,
        [
            "umount $RUN/mnt/c1",
            "losetup -d $DATA",
            "rm $RUN/images/c1-data.img"
        ]
    );
}

#[test]
fn a_file_planted_at_an_image_path_is_never_adopted() {
    let t = tempfile::tempdir().unwrap();
    let w = crate::provision::state::WorkDir::new(t.path());
    let run = w.start_run(None).unwrap();
    let ex = Arc::new(RecordingExec::with(responder()));
    let p = Provisioner::new(ex.clone(), run.clone(), vec![], 0).unwrap();
    // Someone plants a file where the next image goes.
    let planted = run.path().join("images/c0-data.img");
    std::fs::write(&planted, b"someone's data").unwrap();
    let cfg = FsConfig::new(FsType::Ext4, DeviceSpec::Loop(64 << 20));
    let e = p.provision(0, &cfg).err().unwrap().to_string();
    assert!(e.contains("adopts no file"), "{e}");
    assert_eq!(std::fs::read(&planted).unwrap(), b"someone's data");
    assert!(
        !ex.lines()
            .iter()
            .any(|l| l.starts_with("truncate") || l.starts_with("losetup")),
        "{:?}",
        ex.lines()
    );
    drop(p);
    // Its record is dropped: nothing of the run claims the planted file.
    assert!(!run
        .resources()
        .iter()
        .any(|r| matches!(r, crate::provision::state::Resource::Image { .. })));
    assert_eq!(std::fs::read(&planted).unwrap(), b"someone's data");
}
