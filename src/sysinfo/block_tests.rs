//! Block devices described from sysfs trees built in a temporary directory, with the files
//! and links the kernel makes: this lab's virtio disk (`/sys/block/vda/device` has `vendor`
//! 0x1af4 and `device` 0x0002, no `model`), a partition of it, a loop device on a file of it,
//! device-mapper over it, a SCSI disk, an NVMe drive, tmpfs; and the real device under `/`.

use super::*;
use std::os::unix::fs::symlink;
use tempfile::TempDir;

struct Tree(TempDir);

impl Tree {
    fn new() -> Tree {
        Tree(tempfile::tempdir().unwrap())
    }

    fn root(&self) -> &Path {
        self.0.path()
    }

    fn file(&self, rel: &str, text: &str) -> &Tree {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    fn link(&self, rel: &str, target: &str) -> &Tree {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::create_dir_all(self.root().join(target)).unwrap();
        symlink(self.root().join(target), p).unwrap();
        self
    }

    /// A block device node `dir` named as `class/block/NAME`, with size and queue.
    fn disk(&self, dir: &str, sectors: &str, rotational: &str) -> &Tree {
        let name = Path::new(dir).file_name().unwrap().to_str().unwrap();
        self.file(&format!("{dir}/size"), &format!("{sectors}\n"))
            .file(
                &format!("{dir}/queue/rotational"),
                &format!("{rotational}\n"),
            )
            .file(
                &format!("{dir}/queue/scheduler"),
                "none [mq-deadline] kyber bfq\n",
            )
            .link(&format!("class/block/{name}"), dir)
    }

    /// This lab's virtio disk `vda` with a partition `vda1`.
    fn virtio(&self) -> &Tree {
        let dev = "devices/pci0000:00/0000:00:02.0/virtio1";
        self.file(&format!("{dev}/vendor"), "0x1af4\n")
            .file(&format!("{dev}/device"), "0x0002\n")
            .link(&format!("{dev}/subsystem"), "bus/virtio")
            .link(&format!("{dev}/driver"), "bus/virtio/drivers/virtio_blk")
            .disk(&format!("{dev}/block/vda"), "536870912", "1")
            .link(&format!("{dev}/block/vda/device"), dev)
            .disk(&format!("{dev}/block/vda/vda1"), "1048576", "1")
            .file(&format!("{dev}/block/vda/vda1/partition"), "1\n")
    }

    /// A SCSI disk `sda` on a virtio SCSI host, as QEMU's `scsi-hd` shows it.
    fn scsi(&self) -> &Tree {
        let scsi = "devices/pci0000:00/0000:00:05.0/virtio2/host0/target0:0:0/0:0:0:0";
        self.file("devices/pci0000:00/0000:00:05.0/virtio2/vendor", "0x1af4\n")
            .file(&format!("{scsi}/model"), "QEMU HARDDISK   \n")
            .file(&format!("{scsi}/vendor"), "QEMU    \n")
            .link(&format!("{scsi}/subsystem"), "bus/scsi")
            .link(&format!("{scsi}/driver"), "bus/scsi/drivers/sd")
            .disk(&format!("{scsi}/block/sda"), "2048", "1")
            .link(&format!("{scsi}/block/sda/device"), scsi)
    }
}

fn mount(point: &str, source: &str) -> MountEntry {
    MountEntry {
        mount_point: PathBuf::from(point),
        fs_type: "ext4".into(),
        source: source.into(),
        options: "rw".into(),
    }
}

fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_virtio_disk_is_named_not_given_as_a_pci_id_and_describes_its_partition() {
    let t = Tree::new();
    t.virtio();
    let f = Sysfs::new(t.root(), &[]).describe("/dev/vda");
    assert_eq!(
        f,
        BlockFacts {
            kind: "disk".into(),
            disk: Some("vda".into()),
            model: "virtio block device".into(),
            vendor: Some("Red Hat, Inc. (virtio)".into()),
            vendor_id: Some("0x1af4".into()),
            device_id: Some("0x0002".into()),
            bus: Some("virtio".into()),
            driver: Some("virtio_blk".into()),
            bytes: Some(536870912 * 512),
            rotational: Some("1".into()),
            scheduler: Some("mq-deadline".into()),
            ..Default::default()
        }
    );
    let pairs = f.pairs();
    assert_eq!(pairs[0], ("model".into(), "virtio block device".into()));
    assert_eq!(get(&pairs, "vendor_id"), Some("0x1af4"));
    assert!(pairs
        .iter()
        .all(|(k, _)| k != "slaves" && k != "backing_file"));
    // A partition is described by its disk.
    let f = Sysfs::new(t.root(), &[]).describe("/dev/vda1");
    assert_eq!(f.kind, "partition");
    assert_eq!(f.disk.as_deref(), Some("vda"));
    assert_eq!(f.model, "virtio block device");
    assert_eq!(f.scheduler.as_deref(), Some("mq-deadline"));
}

#[test]
fn a_loop_device_is_described_by_the_device_under_its_backing_file() {
    let t = Tree::new();
    t.virtio()
        .disk("devices/virtual/block/loop3", "1048576", "0")
        .file(
            "devices/virtual/block/loop3/loop/backing_file",
            "/nonexistent-fslab-test/work/c0-data.img (deleted)\n",
        );
    let mounts = [
        mount("/", "/dev/vdb"),
        mount("/nonexistent-fslab-test", "/dev/vda1"),
    ];
    let f = Sysfs::new(t.root(), &mounts).describe("/dev/loop3");
    assert_eq!(f.kind, "loop");
    assert_eq!(f.disk.as_deref(), Some("loop3"));
    assert_eq!(f.model, "virtio block device");
    assert_eq!(f.bus.as_deref(), Some("virtio"));
    assert_eq!(
        f.backing_file.as_deref(),
        Some("/nonexistent-fslab-test/work/c0-data.img")
    );
    assert_eq!(f.backing_device.as_deref(), Some("/dev/vda1"));
    assert_eq!(f.scheduler.as_deref(), Some("mq-deadline"));
    // A backing file on a file system without a block device (tmpfs).
    let f = Sysfs::new(t.root(), &[mount("/", "tmpfs")]).describe("/dev/loop3");
    assert_eq!((f.kind.as_str(), f.model.as_str()), ("loop", "loop device"));
    assert_eq!(f.backing_device, None);
    // A detached loop device.
    t.disk("devices/virtual/block/loop7", "0", "1");
    let f = Sysfs::new(t.root(), &[]).describe("/dev/loop7");
    assert_eq!(f.model, "loop device (detached)");
}

#[test]
fn device_mapper_is_described_by_the_disks_under_it() {
    let t = Tree::new();
    t.virtio()
        .disk("devices/virtual/block/dm-0", "2048", "1")
        .file("devices/virtual/block/dm-0/dm/name", "vg-root\n")
        .link(
            "devices/virtual/block/dm-0/slaves/vda1",
            "devices/pci0000:00/0000:00:02.0/virtio1/block/vda/vda1",
        );
    let f = Sysfs::new(t.root(), &[]).describe("/dev/dm-0");
    assert_eq!(f.kind, "device-mapper");
    assert_eq!(f.model, "virtio block device");
    assert_eq!(f.slaves, ["vda1"]);
    assert_eq!(get(&f.pairs(), "slaves"), Some("vda1"));
}

#[test]
fn md_over_two_kinds_of_disk_names_both() {
    let t = Tree::new();
    t.virtio()
        .scsi()
        .disk("devices/virtual/block/md0", "2048", "1");
    for (slave, target) in [
        (
            "sda",
            "devices/pci0000:00/0000:00:05.0/virtio2/host0/target0:0:0/0:0:0:0/block/sda",
        ),
        ("vda", "devices/pci0000:00/0000:00:02.0/virtio1/block/vda"),
    ] {
        t.link(&format!("devices/virtual/block/md0/slaves/{slave}"), target);
    }
    t.file("devices/virtual/block/md0/md/level", "raid1\n");
    let f = Sysfs::new(t.root(), &[]).describe("/dev/md0");
    assert_eq!(f.kind, "md");
    assert_eq!(f.model, "QEMU HARDDISK + virtio block device");
    assert_eq!(f.slaves, ["sda", "vda"]);
}

#[test]
fn scsi_and_nvme_disks_have_the_kernels_model() {
    let t = Tree::new();
    t.scsi();
    let f = Sysfs::new(t.root(), &[]).describe("/dev/sda");
    assert_eq!(f.model, "QEMU HARDDISK");
    assert_eq!(f.vendor.as_deref(), Some("QEMU"));
    // The host adapter's ids are not the disk's.
    assert_eq!((f.vendor_id, f.device_id), (None, None));
    assert_eq!(f.driver.as_deref(), Some("sd"));

    let pci = "devices/pci0000:00/0000:00:1d.0/0000:01:00.0";
    let ctrl = format!("{pci}/nvme/nvme0");
    t.file(&format!("{pci}/vendor"), "0x144d\n")
        .file(&format!("{pci}/device"), "0xa80a\n")
        .file(
            &format!("{ctrl}/model"),
            "Samsung SSD 980 PRO 1TB                 \n",
        )
        .link(&format!("{ctrl}/subsystem"), "class/nvme")
        .link(&format!("{ctrl}/device"), pci)
        .disk(&format!("{ctrl}/nvme0n1"), "2048", "0")
        .link(&format!("{ctrl}/nvme0n1/device"), &ctrl);
    let f = Sysfs::new(t.root(), &[]).describe("/dev/nvme0n1");
    assert_eq!(f.model, "Samsung SSD 980 PRO 1TB");
    assert_eq!(f.vendor.as_deref(), Some("Samsung Electronics Co Ltd"));
    assert_eq!(f.vendor_id.as_deref(), Some("0x144d"));
    assert_eq!(f.device_id.as_deref(), Some("0xa80a"));
    assert_eq!(f.bus.as_deref(), Some("nvme"));
    assert_eq!(f.rotational.as_deref(), Some("0"));
}

#[test]
fn tmpfs_is_not_a_block_device() {
    let t = Tree::new();
    let f = Sysfs::new(t.root(), &[]).describe("tmpfs");
    assert_eq!(
        (f.kind.as_str(), f.model.as_str()),
        ("not a block device", "unknown")
    );
    assert_eq!(f.pairs().len(), 2);
}

#[test]
fn the_device_under_root_here_has_a_model_that_is_not_an_id() {
    let Some(m) = super::super::mount_of(Path::new("/")) else {
        return;
    };
    let f = Sysfs::describe_here(&m.source);
    assert!(!f.model.is_empty() && !is_hex_id(&f.model), "{f:?}");
    if m.source.starts_with("/dev/") {
        assert_ne!(f.kind, "not a block device", "{f:?}");
    }
}
