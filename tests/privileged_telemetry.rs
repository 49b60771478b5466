//! Telemetry on real devices (root): loop devices, file systems and mounts these tests make
//! themselves in temporary directories, removed by guards also when a test panics.
//!
//! - an ext4 with an external journal: the data device shows the bytes written, the journal
//!   device shows writes, jbd2 counts transactions, the backing device is the one under the
//!   temporary directory (as findmnt reports it);
//! - an XFS with an external log: the log device is found from the mount, its per-mount log
//!   statistics move and the log's bytes show on the log device;
//! - interference: a cell whose images live on a file system of the test's own (on a loop
//!   device, so no other process writes to it), quiet while only the cell writes, and marked
//!   while a thread writes to that file system outside the cell's image.

mod common;
mod testdev;

use common::require_root;
use fslab::metric::Metric;
use fslab::telemetry::{
    delta, interference, BlockDev, Devices, Disturbance, FsCounters, Role, Snapshot, Thresholds,
    Window,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use testdev::{sh, TestLoop, TestMount};

const MIB: usize = 1 << 20;

/// A loop device over a new sparse image, switched to direct I/O as fslab's are.
fn dio_loop(dir: &Path, name: &str, mb: u64) -> TestLoop {
    let l = TestLoop::new(dir, name, mb, false);
    sh("losetup", &["--direct-io=on", l.path()]);
    l
}

/// Write `mb` MiB of non-zero data to `path` and fsync it.
fn write_file(path: &Path, mb: usize) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk: Vec<u8> = (0..MIB).map(|i| (i * 7 + 1) as u8).collect();
    for _ in 0..mb {
        f.write_all(&chunk).unwrap();
    }
    f.sync_all().unwrap();
}

/// Create `n` small files in `dir` and fsync each (journal transactions).
fn small_files(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let mut f = std::fs::File::create(dir.join(format!("f{i}"))).unwrap();
        f.write_all(b"x").unwrap();
        f.sync_all().unwrap();
    }
}

fn value(m: &[Metric], name: &str) -> f64 {
    m.iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no {name} in {m:#?}"))
        .value
}

fn name_of(dev: &Path) -> String {
    dev.file_name().unwrap().to_string_lossy().into_owned()
}

/// major:minor of the file system holding `dir`, as findmnt reports it.
fn findmnt_majmin(dir: &Path) -> String {
    sh(
        "findmnt",
        &["-n", "-o", "MAJ:MIN", "-T", dir.to_str().unwrap()],
    )
    .trim()
    .to_string()
}

#[test]
fn privileged_telemetry_sees_data_journal_and_backing() {
    if !require_root("privileged_telemetry_sees_data_journal_and_backing") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = dio_loop(t.path(), "data.img", 256);
    let jnl = dio_loop(t.path(), "jnl.img", 64);
    sh(
        "mkfs.ext4",
        &["-q", "-F", "-O", "journal_dev", "-b", "4096", jnl.path()],
    );
    let jdev = format!("device={}", jnl.path());
    sh(
        "mkfs.ext4",
        &["-q", "-F", "-b", "4096", "-J", &jdev, data.path()],
    );
    let mnt = t.path().join("mnt");
    let _m = TestMount::new(data.path(), &mnt);

    let devs = Devices::for_cell(&data.dev, Some(&jnl.dev)).unwrap();
    assert_eq!(devs.get(Role::Data).unwrap().dev.name, name_of(&data.dev));
    assert_eq!(devs.get(Role::Journal).unwrap().dev.name, name_of(&jnl.dev));
    assert_eq!(devs.get(Role::Data).unwrap().direct_io, Some(true));
    let backing = &devs.get(Role::Backing).expect("the images' device").dev;
    assert_eq!(
        format!("{}:{}", backing.major, backing.minor),
        findmnt_majmin(t.path())
    );
    assert!(
        devs.get(Role::JournalBacking).is_none(),
        "both images on one device"
    );
    // The ad-hoc form finds the same devices from the mount point alone, the external
    // journal included (through the jbd2 thread of the data device).
    assert_eq!(Devices::for_target(&mnt).unwrap(), devs);
    assert_eq!(
        BlockDev::of_path(&mnt.join(".")).unwrap().unwrap().name,
        name_of(&data.dev)
    );

    // The kernel names an external journal's jbd2 entry after the journal device.
    let fs = FsCounters::detect(&name_of(&data.dev), Some(&name_of(&jnl.dev)));
    let want = PathBuf::from(format!("/proc/fs/jbd2/{}/info", name_of(&jnl.dev)));
    assert_eq!(fs, FsCounters::Jbd2 { info: want.clone() });
    assert!(!Path::new(&format!("/proc/fs/jbd2/{}-8", name_of(&data.dev))).exists());
    assert_eq!(
        FsCounters::detect(&name_of(&data.dev), None),
        fs,
        "found without being told"
    );

    let s0 = Snapshot::take(&devs, &fs).unwrap();
    assert!(s0.notes.is_empty(), "{:?}", s0.notes);
    write_file(&mnt.join("big"), 64);
    small_files(&mnt.join("d"), 50);
    let s1 = Snapshot::take(&devs, &fs).unwrap();
    let m = delta("write", &s0, &s1);
    assert!(m.iter().all(|x| x.phase == "write"));
    eprintln!(
        "{:#?}",
        m.iter()
            .map(|x| (x.name.as_str(), x.value))
            .collect::<Vec<_>>()
    );
    assert!(value(&m, "dev.data.write_bytes") >= (64 * MIB) as f64);
    assert!(value(&m, "dev.journal.write_bytes") > 0.0);
    assert!(value(&m, "dev.journal.write_ios") > 0.0);
    assert!(value(&m, "fs.journal.transactions") >= 1.0);
    assert!(value(&m, "fs.journal.blocks") > 0.0);
    assert!(value(&m, "fs.journal.blocks_per_transaction_limit") > 0.0);
    // Direct-I/O loops pass every byte on to the device under their images.
    assert!(value(&m, "dev.backing.write_bytes") >= (64 * MIB) as f64);
    assert!(value(&m, "proc.user") + value(&m, "proc.sys") > 0.0);
}

#[test]
fn privileged_telemetry_reads_the_xfs_log_statistics() {
    if !require_root("privileged_telemetry_reads_the_xfs_log_statistics") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = dio_loop(t.path(), "xfs.img", 320);
    let log = dio_loop(t.path(), "log.img", 64);
    let logdev = format!("logdev={}", log.path());
    sh("mkfs.xfs", &["-q", "-f", "-l", &logdev, data.path()]);
    let mnt = t.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    sh(
        "mount",
        &["-o", &logdev, data.path(), mnt.to_str().unwrap()],
    );
    let _m = TestMount(mnt.clone());
    // The external log is found from the mount (its logdev= option).
    let devs = Devices::for_target(&mnt).unwrap();
    assert_eq!(devs, Devices::for_cell(&data.dev, Some(&log.dev)).unwrap());
    assert_eq!(devs.get(Role::Journal).unwrap().dev.name, name_of(&log.dev));
    // The statistics are named after the data device, also with an external log.
    let fs = FsCounters::detect(&name_of(&data.dev), Some(&name_of(&log.dev)));
    assert_eq!(
        fs,
        FsCounters::Xfs {
            stats: PathBuf::from(format!("/sys/fs/xfs/{}/stats/stats", name_of(&data.dev)))
        }
    );
    let s0 = Snapshot::take(&devs, &fs).unwrap();
    small_files(&mnt.join("d"), 100);
    let s1 = Snapshot::take(&devs, &fs).unwrap();
    let m = delta("create", &s0, &s1);
    assert!(value(&m, "fs.log.writes") >= 1.0, "fsync forces the log");
    assert!(value(&m, "fs.log.blocks") >= 1.0);
    assert!(value(&m, "fs.log.force") >= 1.0);
    assert!(value(&m, "fs.log.transactions") >= 100.0);
    assert!(value(&m, "dev.data.write_bytes") > 0.0);
    // The log's bytes went to the log device.
    assert!(value(&m, "dev.journal.write_bytes") >= value(&m, "fs.log.bytes"));
}

#[test]
fn privileged_telemetry_marks_other_io_on_the_backing_device() {
    if !require_root("privileged_telemetry_marks_other_io_on_the_backing_device") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // The "backing file system": ours alone, so nobody else's I/O lands on it.
    let outer = dio_loop(t.path(), "outer.img", 1024);
    // No lazy inode-table initialisation: it would write to the backing device later.
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            outer.path(),
        ],
    );
    let bdir = t.path().join("backing");
    let _bm = TestMount::new(outer.path(), &bdir);
    let cell = dio_loop(&bdir, "cell.img", 256);
    sh("mkfs.ext4", &["-q", "-F", cell.path()]);
    let cdir = t.path().join("cell");
    let _cm = TestMount::new(cell.path(), &cdir);

    let devs = Devices::for_cell(&cell.dev, None).unwrap();
    assert_eq!(
        devs.get(Role::Backing).unwrap().dev.name,
        name_of(&outer.dev)
    );
    let fs = FsCounters::detect(&name_of(&cell.dev), None);
    let other_io = |v: &fslab::telemetry::Verdict| {
        v.disturbances
            .iter()
            .filter(|d| matches!(d, Disturbance::OtherIo { .. }))
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    };

    // Quiet: only the cell writes.
    let s0 = Snapshot::take(&devs, &fs).unwrap();
    write_file(&cdir.join("a"), 32);
    let s1 = Snapshot::take(&devs, &fs).unwrap();
    let w = Window::between(&s0, &s1);
    let b = &w.backing[0];
    eprintln!(
        "quiet window: cell wrote {} B, backing {} B ({:+.2}%), read {} B vs {} B, {:.2} s",
        b.cell_write_bytes,
        b.write_bytes,
        (b.write_bytes as f64 / b.cell_write_bytes as f64 - 1.0) * 100.0,
        b.read_bytes,
        b.cell_read_bytes,
        w.seconds
    );
    assert!(b.cell_write_bytes >= (32 * MIB) as u64);
    let v = interference(&w, &Thresholds::default());
    assert!(other_io(&v).is_empty(), "quiet window marked: {v}");

    // Noisy: a writer on the backing file system, outside the cell's image.
    let s2 = Snapshot::take(&devs, &fs).unwrap();
    std::thread::scope(|sc| {
        sc.spawn(|| write_file(&bdir.join("noise"), 200));
        write_file(&cdir.join("b"), 32);
    });
    let s3 = Snapshot::take(&devs, &fs).unwrap();
    let v = interference(&Window::between(&s2, &s3), &Thresholds::default());
    let found = other_io(&v);
    assert_eq!(found.len(), 1, "{v}");
    assert!(
        found[0].ends_with(&format!("of other I/O on {}", name_of(&outer.dev))),
        "{v}"
    );
    assert!(v.other_io_bytes() >= (150 * MIB) as u64, "{v}");
}
