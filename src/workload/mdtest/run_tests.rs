use super::*;
use crate::workload::mdtest::parse;
use crate::workload::mdtest::result::Phase;
use crate::workload::mdtest::team::Solo;
use crate::workload::mdtest::test_support::{go, names, on_ranks, params, run, Outcome};
use crate::workload::Quiet;
use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn a_full_run_makes_and_removes_everything_it_made() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let o = go("-n 40 -z 1 -b 2 -w 10 -e 10 -i 2", &out).unwrap();
    assert!(o.made_dir);
    assert_eq!(o.iterations.len(), 2);
    let it = &o.iterations[1];
    assert_eq!(it.phases.len(), 10);
    assert_eq!(it.get(Phase::FileRead).unwrap().items, 39);
    assert_eq!(it.get(Phase::TreeCreate).unwrap().items, 3);
    assert!(names(t.path()).is_empty(), "-d made by the run is gone too");
}

#[test]
fn create_then_stat_then_remove_across_runs() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    fs::write(d.join("user.txt"), b"mine").unwrap();
    let o = go("-n 30 -z 1 -b 1 -C -w 8", d).unwrap();
    assert!(!o.made_dir);
    assert_eq!(
        names(d),
        [".fslab-mdtest.test-dir.0-0", "test-dir.0-0", "user.txt"]
    );
    let rec = crate::workload::mdtest::record::read(d, "test-dir.0-0")
        .unwrap()
        .unwrap();
    assert_eq!(rec.files, Some(30));
    // -T and -E with the same shape work on it and leave it.
    let o = go("-n 30 -z 1 -b 1 -T -E -e 8", d).unwrap();
    assert_eq!(o.iterations[0].get(Phase::FileStat).unwrap().items, 30);
    assert_eq!(o.iterations[0].get(Phase::DirStat).unwrap().items, 30);
    assert!(d.join("test-dir.0-0").is_dir());
    // Another shape is refused and nothing is touched.
    let e = go("-n 30 -r", d).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(
        e.to_string()
            .contains("run with the flags it was made with"),
        "{e}"
    );
    assert!(d.join("test-dir.0-0/mdtest_tree.0/mdtest_tree.1").is_dir());
    // -r with the shape removes the directory and its record, and nothing else.
    let o = go("-n 30 -z 1 -b 1 -r", d).unwrap();
    let ph: Vec<Phase> = o.iterations[0].phases.iter().map(|p| p.phase).collect();
    assert_eq!(ph, [Phase::DirRemove, Phase::FileRemove, Phase::TreeRemove]);
    assert_eq!(names(d), ["user.txt"]);
    assert_eq!(fs::read(d.join("user.txt")).unwrap(), b"mine");
    // Again: there is nothing left to remove.
    let e = go("-n 30 -z 1 -b 1 -r", d).unwrap_err().to_string();
    assert!(e.contains("test-dir.0-0"), "{e}");
}

/// A user's directory of the test directory's name, with mdtest-looking contents.
fn plant_foreign(d: &Path) {
    let tree = d.join("test-dir.0-0/mdtest_tree.0");
    fs::create_dir_all(&tree).unwrap();
    fs::write(tree.join("file.mdtest.0.0"), b"mine").unwrap();
}

#[test]
fn a_directory_fslab_did_not_make_is_never_removed() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    plant_foreign(d);
    let e = go("-n 1 -r", d).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("no fslab record"), "{e}");
    let e = go("-n 1 -T", d).unwrap_err().to_string();
    assert!(e.contains("no fslab record"), "{e}");
    // A full run does not take it over either, and leaves no record behind.
    let e = go("-n 1", d).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("already exists"), "{e}");
    assert_eq!(names(d), ["test-dir.0-0"]);
    assert_eq!(
        fs::read(d.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.0")).unwrap(),
        b"mine"
    );
    // A symbolic link named like a test directory, pointing at the user's tree.
    fs::rename(d.join("test-dir.0-0"), d.join("mine")).unwrap();
    std::os::unix::fs::symlink(d.join("mine"), d.join("test-dir.0-0")).unwrap();
    let e = go("-n 1 -r", d).unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
    assert_eq!(
        fs::read(d.join("mine/mdtest_tree.0/file.mdtest.0.0")).unwrap(),
        b"mine"
    );
}

/// Plants a user's file in the tree (when it has one) when file creation starts, and asks to
/// stop.
struct Intruder<'a> {
    tree: Option<&'a Path>,
    stop: AtomicBool,
}

impl Observer for Intruder<'_> {
    fn phase_started(&self, phase: &str, _total: u64) {
        if phase == "file_create" {
            if let Some(tree) = self.tree {
                fs::write(tree.join("notes.txt"), b"mine").unwrap();
            }
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

#[test]
fn an_interrupted_run_sweeps_only_its_own_entries() {
    // A run of `-n 3000 -F` in `dir`, interrupted as file creation starts.
    let interrupted = |dir: &Path, tree: Option<&Path>| {
        let stop = AtomicBool::new(false);
        let obs = Intruder { tree, stop };
        let stop = || obs.stop.load(Ordering::Relaxed);
        let p = params("-n 3000 -F").0;
        run(&p, dir, &Solo, Options::default(), &obs, &stop).unwrap_err()
    };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    let tree = out.join("test-dir.0-0/mdtest_tree.0");
    let e = interrupted(&out, Some(&tree));
    assert!(
        e.chain().any(|c| c.is::<crate::signal::Interrupted>()),
        "{e:#}"
    );
    let msg = format!("{e:#}");
    assert!(
        msg.contains("notes.txt") && msg.contains("fslab did not make"),
        "{msg}"
    );
    // The user's file and the directories above it stay; fslab's files went.
    assert_eq!(fs::read(tree.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(names(&tree), ["notes.txt"]);
    assert!(
        out.join(".fslab-mdtest.test-dir.0-0").is_file(),
        "the record stays with it"
    );
    // Interrupted without an intruder: nothing at all is left.
    let t2 = tempfile::tempdir().unwrap();
    let e = interrupted(&t2.path().join("out"), None);
    assert_eq!(crate::error::exit_code(&e), 130);
    assert!(names(t2.path()).is_empty());
}

#[test]
fn keep_leaves_a_failed_iteration_in_place() {
    let t = tempfile::tempdir().unwrap();
    let opts = Options {
        keep: true,
        ..Options::default()
    };
    let p = params("-n 2000 -D").0;
    assert!(run(&p, t.path(), &Solo, opts, &Quiet, &|| true).is_err());
    assert!(t.path().join("test-dir.0-0/mdtest_tree.0").is_dir());
}

#[test]
fn the_null_backend_touches_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("never-made");
    let opts = Options {
        backend: Backend::Null,
        ..Options::default()
    };
    let p = params("-n 5000 -z 2 -b 3").0;
    let o = run(&p, &out, &Solo, opts, &Quiet, &|| false).unwrap();
    assert_eq!(o.iterations[0].get(Phase::FileStat).unwrap().items, 4992);
    assert!(!out.exists());
}

#[test]
fn requirements_count_every_entry() {
    let (p, lay) = params("-n 100 -z 1 -b 2 -w 5000 -u");
    let r = requirements(&p, &lay, 2);
    // 2 trees of 3 directories, the test directory, 99 directories and 99 files per rank.
    assert_eq!(r.inodes, 6 + 1 + 2 * 198);
    assert_eq!(r.bytes, (6 + 1 + 2 * 99) * 4096 + 2 * 99 * 8192);
}

#[test]
fn data_is_what_the_files_hold_not_the_directories() {
    let data = |line: &str, ranks| {
        let (p, lay) = params(line);
        data_bytes(&p, &lay, ranks)
    };
    // -w 0 writes no data, however many directories it makes.
    assert_eq!(data("-n 20000", 1), 0);
    assert_eq!(data("-n 100 -z 1 -b 2 -w 5000", 2), 2 * 99 * 5000);
    assert_eq!(data("-n 100 -D -w 5000", 1), 0, "-D makes no files");
}

#[test]
fn k_makes_files_with_mknod() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    go("-n 3 -F -k -C", d).unwrap();
    let dir = d.join("test-dir.0-0/mdtest_tree.0");
    for i in 0..3 {
        let m = fs::metadata(dir.join(format!("file.mdtest.0.{i}"))).unwrap();
        // mknod's mode (S_IFREG | S_IRUSR, as mdtest); open(O_CREAT) gives 0664 less the umask.
        use std::os::unix::fs::PermissionsExt;
        assert!(m.is_file());
        assert_eq!(m.permissions().mode() & 0o777, 0o400);
        assert_eq!(m.len(), 0);
    }
    // They stat, read (open and close) and go like any other.
    let o = go("-n 3 -F -k -T -E -r", d).unwrap();
    assert_eq!(o.iterations[0].get(Phase::FileRead).unwrap().items, 3);
    assert!(names(d).is_empty(), "{:?}", names(d));
}

#[test]
fn posix_odirect_bypasses_the_page_cache() {
    let Some(t) = crate::workload::fsops::direct_io_tempdir() else {
        return;
    };
    let d = t.path();
    let cached = |line: &str| {
        go(line, d).unwrap();
        let f = d.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.0");
        let n = crate::workload::fsops::resident_pages(&f).unwrap();
        go("-n 1 -F -r", d).unwrap();
        n
    };
    // A buffered write leaves the file's pages in the page cache; O_DIRECT does not.
    assert_eq!(cached("-n 1 -F -C -w 65536"), 16);
    assert_eq!(cached("-n 1 -F -C -w 65536 --posix.odirect"), 0);
    // Reads go direct too (fsops_tests: a read O_DIRECT cannot move is refused).
    go("-n 1 -F -w 4096 -e 4096 --posix.odirect", d).unwrap();
    assert!(names(d).is_empty());
}

/// Run `args` with `n` ranks as threads, each in its directory of `-d a@b…` as mdtest
/// gives them out; rank 0's outcome.
fn threads(args: &[&str], n: u32) -> Result<Outcome> {
    let inv = parse(args).unwrap();
    let opts = Options {
        dirs: inv.dirs.len() as u32,
        ..Options::default()
    };
    let never = || false;
    let mut outs = on_ranks(n, |t| {
        run(&inv.params, inv.dir_of(t.rank()), t, opts, &Quiet, &never)
    });
    outs.swap_remove(0)
}

#[test]
fn several_directories_are_given_to_the_ranks_in_turn() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let d = format!("{}@{}", a.display(), b.display());
    // Create only: rank r's tree is in directory r mod 2, in a test directory its first
    // rank made there.
    let o = threads(&["-n", "6", "-u", "-F", "-C", "-d", &d], 3).unwrap();
    assert_eq!(o.iterations[0].get(Phase::FileCreate).unwrap().items, 18);
    let ta = a.join("test-dir.0-0");
    let tb = b.join("test-dir.0-0");
    assert_eq!(names(&ta), ["mdtest_tree.0.0", "mdtest_tree.2.0"]);
    assert_eq!(names(&tb), ["mdtest_tree.1.0"]);
    assert_eq!(names(&tb.join("mdtest_tree.1.0")).len(), 6);
    // Each directory keeps its own record; a later run finds both, stats and removes.
    assert!(names(&a).contains(&".fslab-mdtest.test-dir.0-0".to_string()));
    assert!(names(&b).contains(&".fslab-mdtest.test-dir.0-0".to_string()));
    let o = threads(&["-n", "6", "-u", "-F", "-T", "-r", "-d", &d], 3).unwrap();
    assert_eq!(o.iterations[0].get(Phase::FileStat).unwrap().items, 18);
    // Emptied; -d stays (this run did not make it), as with one directory.
    assert!(names(&a).is_empty() && names(&b).is_empty());
    fs::remove_dir(&a).unwrap();
    fs::remove_dir(&b).unwrap();
    // A full run in one go makes both and leaves nothing.
    threads(&["-n", "4", "-u", "-d", &d], 2).unwrap();
    assert!(!a.exists() && !b.exists());
    // More directories than ranks: mdtest's rule.
    let e = threads(&["-n", "4", "-u", "-d", &d], 1).unwrap_err();
    assert!(
        format!("{e:#}").contains("2 directories for 1 ranks"),
        "{e:#}"
    );
}
