use super::*;
use crate::workload::fsops::{Kind, Recorder};
use crate::workload::mdtest::record::Keeper;
use crate::workload::mdtest::team::Solo;
use crate::workload::mdtest::test_support::{on_ranks, params};
use crate::workload::Quiet;
use std::ffi::CStr;
use std::io;
use std::sync::{Arc, Mutex};

/// Run the iterations of `args` in `D` as one rank alone on `rec`, up to the first that
/// fails; `stop` is the stop flag. Returns the iterations (or the failure), the recorder and
/// the test directories the keeper still holds.
fn alone(
    line: &str,
    rec: Recorder,
    stop: &dyn Fn() -> bool,
    seed: Option<u32>,
) -> (Result<Vec<Iteration>>, Recorder, Vec<String>) {
    let (p, lay) = params(line);
    let mut keeper = Keeper::default();
    let mut e = Engine::new(&p, lay, &Solo, rec, &mut keeper, &Quiet, stop, seed);
    let its = (0..p.iterations)
        .map(|j| e.iteration(&"D".to_string(), j))
        .collect();
    let rec = e.into_ops();
    (its, rec, keeper.owned())
}

/// Run every iteration of `args` as one rank on a checked recorder in which `D` exists.
fn solo(line: &str, seed: Option<u32>) -> (Vec<Iteration>, Recorder) {
    let (its, rec, _) = alone(line, Recorder::checked(&["D"]), &|| false, seed);
    (its.unwrap(), rec)
}

const TINY: &str = "\
mkdir D/test-dir.0-0
open D/test-dir.0-0
mkdir D/test-dir.0-0/mdtest_tree.0
open D/test-dir.0-0/mdtest_tree.0
mkdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
mkdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
open D/test-dir.0-0/mdtest_tree.0
mkdir D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
mkdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/dir.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
mkdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/dir.mdtest.0.2
open D/test-dir.0-0/mdtest_tree.0
stat D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
stat D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/dir.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
stat D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/dir.mdtest.0.2
rename D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0 D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0-XX
rename D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/dir.mdtest.0.1 D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0
rename D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0-XX D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/dir.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0
rmdir D/test-dir.0-0/mdtest_tree.0/dir.mdtest.0.0
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
rmdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/dir.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
rmdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/dir.mdtest.0.2
open D/test-dir.0-0/mdtest_tree.0
create D/test-dir.0-0/mdtest_tree.0/file.mdtest.0.0 5 fsync excl
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
create D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.1 5 fsync excl
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
create D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.2 5 fsync excl
open D/test-dir.0-0/mdtest_tree.0
stat D/test-dir.0-0/mdtest_tree.0/file.mdtest.0.0
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
stat D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
stat D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.2
open D/test-dir.0-0/mdtest_tree.0
read D/test-dir.0-0/mdtest_tree.0/file.mdtest.0.0 5
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
read D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.1 5
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
read D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.2 5
open D/test-dir.0-0/mdtest_tree.0
unlink D/test-dir.0-0/mdtest_tree.0/file.mdtest.0.0
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
unlink D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.1
open D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
unlink D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/file.mdtest.0.2
open D/test-dir.0-0/mdtest_tree.0
rmdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.1
rmdir D/test-dir.0-0/mdtest_tree.0/mdtest_tree.2
rmdir D/test-dir.0-0/mdtest_tree.0
rmdir D/test-dir.0-0";

#[test]
fn a_tiny_tree_runs_mdtests_exact_sequence() {
    let (its, rec) = solo("-I 1 -z 1 -b 2 -w 5 -e 5 -y", None);
    assert_eq!(rec.text(), TINY);
    assert_eq!(rec.paths(), ["D"], "everything made was removed");
    let phases: Vec<(Phase, u64)> = its[0].phases.iter().map(|p| (p.phase, p.items)).collect();
    assert_eq!(
        phases,
        [
            (Phase::TreeCreate, 3),
            (Phase::DirCreate, 3),
            (Phase::DirStat, 3),
            (Phase::DirRename, 3),
            (Phase::DirRemove, 3),
            (Phase::FileCreate, 3),
            (Phase::FileStat, 3),
            (Phase::FileRead, 3),
            (Phase::FileRemove, 3),
            (Phase::TreeRemove, 3),
        ]
    );
    assert!(its[0]
        .phases
        .iter()
        .all(|p| p.seconds > 0.0 && p.stonewall.is_none()));
}

/// The item numbers of the log lines starting with `op` whose path holds `kind`.
fn numbers(rec: &Recorder, op: &str, kind: &str) -> Vec<u64> {
    rec.log
        .iter()
        .filter(|l| l.starts_with(op))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|p| p.rsplit('/').next())
        .filter(|n| n.starts_with(kind))
        .filter_map(|n| n.rsplit('.').next()?.parse().ok())
        .collect()
}

#[test]
fn creation_is_pre_order_and_stat_goes_by_number() {
    // -z 2 -b 2: directories 0, 1, 3, 4, 2, 5, 6 in pre-order (mdtest's strace shows the same).
    let (_, rec) = solo("-I 1 -z 2 -b 2 -e 0", None);
    let pre = [0, 1, 3, 4, 2, 5, 6];
    assert_eq!(numbers(&rec, "mkdir", "dir."), pre);
    assert_eq!(numbers(&rec, "stat", "dir."), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(numbers(&rec, "rmdir", "dir."), pre);
    assert_eq!(numbers(&rec, "create", "file."), pre);
    assert_eq!(numbers(&rec, "stat", "file."), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(numbers(&rec, "read", "file."), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(numbers(&rec, "unlink", "file."), pre);
    let trees: Vec<&str> = rec
        .log
        .iter()
        .filter(|l| l.starts_with("mkdir") && l.ends_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.rsplit('/').next())
        .filter(|n| n.starts_with("mdtest_tree"))
        .collect();
    let tree = |n: u64| format!("mdtest_tree.{n}");
    assert_eq!(trees, pre.map(tree));
    let removed: Vec<&str> = rec
        .log
        .iter()
        .filter(|l| {
            l.starts_with("rmdir") && l.contains("/mdtest_tree.") && !l.contains("dir.mdtest")
        })
        .filter_map(|l| l.rsplit('/').next())
        .collect();
    assert_eq!(removed, [3, 4, 1, 5, 6, 2, 0].map(tree));
    assert_eq!(rec.paths(), ["D"]);
}

#[test]
fn leaf_only_items_live_in_the_leaves() {
    let (its, rec) = solo("-n 8 -z 2 -b 2 -L -F -C -T", None);
    // Leaves 3..6 hold 2 items each: 6..13.
    assert_eq!(
        numbers(&rec, "create", "file."),
        [6, 7, 8, 9, 10, 11, 12, 13]
    );
    assert_eq!(numbers(&rec, "stat", "file."), [6, 7, 8, 9, 10, 11, 12, 13]);
    assert!(rec
        .log
        .iter()
        .any(|l| l.ends_with("mdtest_tree.0/mdtest_tree.2/mdtest_tree.6/file.mdtest.0.13 0 excl")));
    // -C -T: nothing removed, the tree stays.
    assert!(rec.paths().iter().any(|p| p.ends_with("file.mdtest.0.13")));
    let ph: Vec<Phase> = its[0].phases.iter().map(|p| p.phase).collect();
    assert_eq!(ph, [Phase::TreeCreate, Phase::FileCreate, Phase::FileStat]);
}

#[test]
fn iterations_use_their_own_test_directories() {
    let (its, rec) = solo("-n 2 -i 3 -D", None);
    assert_eq!(its.len(), 3);
    for j in 0..3 {
        assert!(rec.log.contains(&format!("mkdir D/test-dir.{j}-0")));
        assert!(rec.log.contains(&format!("rmdir D/test-dir.{j}-0")));
        assert_eq!(its[j as usize].index, j);
    }
    // Directories only: no file phase ran.
    assert!(its[0].get(Phase::FileCreate).is_none());
    assert_eq!(its[0].get(Phase::DirRename).map(|p| p.items), Some(2));
}

#[test]
fn random_order_is_a_seeded_permutation() {
    let a = shuffled(1000, 42);
    assert_eq!(a, shuffled(1000, 42), "same seed, same order");
    assert_ne!(a, shuffled(1000, 43));
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..1000).collect::<Vec<u64>>(), "a permutation");
    assert_ne!(a, sorted);
    // The stat and read phases follow the seed's order (rank 0: seed + 0); creation does not.
    let (_, rec) = solo("-n 50 -F -R -e 0", Some(42));
    let want = shuffled(50, 42);
    assert_eq!(numbers(&rec, "stat", "file."), want);
    assert_eq!(numbers(&rec, "read", "file."), want);
    assert_eq!(
        numbers(&rec, "create", "file."),
        (0..50).collect::<Vec<u64>>()
    );
    // Over several directories the shuffled stats go by path from the test directory.
    let (_, rec) = solo("-I 3 -z 1 -b 2 -F -R -e 0", Some(5));
    let stats: Vec<&String> = rec.log.iter().filter(|l| l.starts_with("stat")).collect();
    assert_eq!(stats.len(), 9);
    assert_eq!(numbers(&rec, "stat", "file."), shuffled(9, 5));
    let opens_in_stat = rec
        .log
        .iter()
        .skip_while(|l| !l.starts_with("stat"))
        .take(9)
        .filter(|l| l.starts_with("open"))
        .count();
    assert_eq!(opens_in_stat, 0);
}

/// One recorder shared by the ranks (threads) of a test; each line is tagged with its rank.
struct Shared(Arc<Mutex<Recorder>>, u32);

impl Shared {
    fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        let mut g = self.0.lock().unwrap();
        let n = g.log.len();
        let r = f(&mut g);
        if let Some(l) = g.log.get_mut(n) {
            *l = format!("r{} {l}", self.1);
        }
        r
    }
}

/// `Ops` methods that pass the call to the shared recorder ([`Shared::with`]).
macro_rules! to_recorder {
    ($($op:ident($($a:ident: $t:ty),*) -> $r:ty;)*) => {
        $(fn $op(&mut self, $($a: $t),*) -> io::Result<$r> {
            self.with(|r| r.$op($($a),*))
        })*
    };
}

impl Ops for Shared {
    type Dir = String;
    to_recorder! {
        mkdir(p: &String, n: &CStr) -> ();
        rmdir(p: &String, n: &CStr) -> ();
        open_dir(p: &String, n: &CStr) -> String;
        create(p: &String, n: &CStr, h: CreateHow) -> ();
        read_file(p: &String, n: &CStr, b: u64) -> u64;
        stat(p: &String, n: &CStr) -> Kind;
        rename(a: &String, b: &CStr, c: &String, d: &CStr) -> ();
        unlink(p: &String, n: &CStr) -> ();
    }
}

/// Run `args` with `n` ranks as threads on one shared checked recorder; `wall` gives each
/// rank's stonewall (tests do not wait for seconds to pass).
fn ranks(line: &str, n: u32, wall: &[Option<Duration>]) -> (Vec<Iteration>, Recorder) {
    let (p, lay) = params(line);
    let rec = Arc::new(Mutex::new(Recorder::checked(&["D"]).without_opens()));
    let outs = on_ranks(n, |t| {
        let mut keeper = Keeper::default();
        let never = || false;
        let ops = Shared(Arc::clone(&rec), t.rank());
        let mut e = Engine::new(&p, lay, t, ops, &mut keeper, &Quiet, &never, None);
        if let Some(w) = wall.get(t.rank() as usize).copied().flatten() {
            e.wall = Some(w);
        }
        e.iteration(&"D".to_string(), 0).unwrap()
    });
    for o in &outs[1..] {
        assert_eq!(
            o.phases.len(),
            outs[0].phases.len(),
            "every rank has the same result"
        );
    }
    let rec = Arc::try_unwrap(rec).unwrap().into_inner().unwrap();
    (outs, rec)
}

fn lines<'a>(rec: &'a Recorder, prefix: &str) -> Vec<&'a str> {
    rec.log
        .iter()
        .filter(|l| l.starts_with(prefix))
        .map(String::as_str)
        .collect()
}

#[test]
fn unique_directories_with_a_stride_shift_the_ranks_work() {
    let (outs, rec) = ranks("-n 2 -u -N 1 -F", 2, &[]);
    // Rank 0 makes its items in rank 1's tree, stats rank 1's items (in rank 0's tree, where
    // rank 1 made them) and removes rank 1's (rank 0 + 3·1 = rank 1 of 2).
    let tree = |n: u32| format!("D/test-dir.0-0/mdtest_tree.{n}.0");
    for (op, at, suffix) in [("create", 1, " 0 excl"), ("stat", 0, ""), ("unlink", 0, "")] {
        let owner = 1 - at;
        let want: Vec<String> = (0..2)
            .map(|i| format!("r0 {op} {}/file.mdtest.{owner}.{i}{suffix}", tree(at)))
            .collect();
        assert_eq!(lines(&rec, &format!("r0 {op}")), want);
    }
    // Each rank makes and removes its own tree; only rank 0 makes the test directory.
    assert_eq!(lines(&rec, "r1 mkdir"), [format!("r1 mkdir {}", tree(1))]);
    assert_eq!(lines(&rec, "r0 mkdir").len(), 2);
    assert_eq!(rec.paths(), ["D"]);
    // Items of all ranks; the tree phases count one tree, as mdtest.
    let create = outs[0].get(Phase::FileCreate).unwrap();
    assert_eq!(create.items, 4);
    assert_eq!(outs[0].get(Phase::TreeCreate).unwrap().items, 1);
    assert_eq!(outs[1].get(Phase::FileCreate).unwrap().items, 4);
}

#[test]
fn a_shared_tree_is_made_by_rank_zero_and_holds_every_ranks_items() {
    let (outs, rec) = ranks("-n 4 -z 1 -b 1 -D", 3, &[]);
    assert!(lines(&rec, "r1 mkdir")
        .iter()
        .all(|l| l.contains("dir.mdtest.1.")));
    assert!(lines(&rec, "r0 mkdir")
        .iter()
        .any(|l| l.ends_with("mdtest_tree.0/mdtest_tree.1")));
    assert_eq!(lines(&rec, "r2 mkdir").len(), 4);
    assert_eq!(lines(&rec, "r2 rename").len(), 4);
    assert_eq!(outs[2].get(Phase::DirStat).unwrap().items, 12);
    assert_eq!(rec.paths(), ["D"]);
}

#[test]
fn the_stonewall_stops_creation_and_the_ranks_catch_up() {
    // Rank 0 hits its stonewall after its first file; rank 1 makes all 8. Rank 0 then
    // catches up to 8 (wear-out), and the later phases work on all 8 per rank.
    let zero = Some(Duration::ZERO);
    let long = Some(Duration::from_secs(3600));
    let (outs, rec) = ranks("-n 8 -F -W 1 -u", 2, &[zero, long]);
    let c = outs[0].get(Phase::FileCreate).unwrap();
    assert_eq!(c.items, 16);
    assert_eq!(c.stonewall.map(|s| s.items), Some(1 + 8));
    assert_eq!(lines(&rec, "r0 create").len(), 8);
    assert_eq!(outs[0].get(Phase::FileStat).unwrap().items, 16);
    // Both hit it after one file: no wear-out; stat, read and removal see one file each.
    let (outs, rec) = ranks("-n 8 -F -W 1 -u -e 0", 2, &[zero, zero]);
    let c = outs[1].get(Phase::FileCreate).unwrap();
    assert_eq!((c.items, c.stonewall.map(|s| s.items)), (2, Some(2)));
    for ph in [Phase::FileStat, Phase::FileRead, Phase::FileRemove] {
        assert_eq!(outs[0].get(ph).unwrap().items, 2, "{ph:?}");
    }
    assert_eq!(lines(&rec, "r1 unlink").len(), 1);
    assert_eq!(
        rec.paths(),
        ["D"],
        "the tree removal found every directory empty"
    );
}

#[test]
fn an_io_error_names_the_entry_and_stops_the_run() {
    let rec = Recorder::checked(&["D"]).fail_on("create", "file.mdtest.0.1", libc::ENOSPC);
    let (its, _, owned) = alone("-n 3 -F", rec, &|| false, None);
    let err = its.unwrap_err().to_string();
    assert!(
        err.starts_with("create test-dir.0-0/mdtest_tree.0/file.mdtest.0.1:"),
        "{err}"
    );
    assert_eq!(owned, ["test-dir.0-0"], "left for the sweep");
}

#[test]
fn the_stop_flag_interrupts_a_phase() {
    let (its, rec, _) = alone("-n 3000 -D", Recorder::default(), &|| true, None);
    let err = its.unwrap_err();
    assert!(
        err.chain().any(|c| c.is::<crate::signal::Interrupted>()),
        "{err}"
    );
    assert_eq!(
        rec.log.iter().filter(|l| l.contains("dir.mdtest")).count() as u64,
        super::super::walk::CHECK_EVERY
    );
}
