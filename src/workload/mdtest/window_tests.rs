//! Nothing of fslab's inside a timed phase (issue 31): between the clock's start (the
//! phase's barrier) and its stop (the closing verdict) a phase does only its operations;
//! the directory its walk starts in is opened before and closed after.

use super::Engine;
use crate::workload::fsops::{CreateHow, Kind, Ops};
use crate::workload::mdtest::record::Keeper;
use crate::workload::mdtest::team::Team;
use crate::workload::mdtest::test_support::params;
use crate::workload::Quiet;
use anyhow::Result;
use std::ffi::CStr;
use std::io;
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<String>>>;

/// One rank whose barrier starts the clock and whose verdict stops it, marked in the log.
struct Marking(Log);

impl Team for Marking {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn barrier(&self) {
        self.0.lock().unwrap().push("[clock starts]".into());
    }
    fn agree(&self, local: Result<()>) -> Result<()> {
        self.0.lock().unwrap().push("[clock stops]".into());
        local
    }
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>) {
        (sums.to_vec(), maxes.to_vec())
    }
}

/// A directory whose closing is logged.
struct Dir {
    path: String,
    log: Log,
}

impl Drop for Dir {
    fn drop(&mut self) {
        let line = format!("close {}", self.path);
        self.log.lock().unwrap().push(line);
    }
}

/// Operations that always succeed and log themselves, opens and closes included.
struct Logged(Log);

impl Logged {
    fn note(&self, what: &str, dir: &Dir, name: &CStr) {
        let line = format!("{what} {}/{}", dir.path, name.to_string_lossy());
        self.0.lock().unwrap().push(line);
    }
}

/// Ops of `Logged` that log `<word> <parent>/<name>` and return `$ret` (the further
/// arguments `$a` unused, but for those `$ret` names).
macro_rules! logged {
    ($($op:ident($word:literal $(, $a:tt: $t:ty)*) -> $r:ty = $ret:expr;)*) => {
        $(fn $op(&mut self, parent: &Dir, name: &CStr $(, $a: $t)*) -> io::Result<$r> {
            self.note($word, parent, name);
            Ok($ret)
        })*
    };
}

impl Ops for Logged {
    type Dir = Dir;
    logged! {
        mkdir("mkdir") -> () = ();
        rmdir("rmdir") -> () = ();
        create("create", _: CreateHow) -> () = ();
        read_file("read", bytes: u64) -> u64 = bytes;
        stat("stat") -> Kind = Kind::File;
        rename("rename", _: &Dir, _: &CStr) -> () = ();
        unlink("unlink") -> () = ();
    }
    fn open_dir(&mut self, parent: &Dir, name: &CStr) -> io::Result<Dir> {
        self.note("open", parent, name);
        Ok(Dir {
            path: format!("{}/{}", parent.path, name.to_string_lossy()),
            log: Arc::clone(&self.0),
        })
    }
    fn sync(&mut self) {
        self.0.lock().unwrap().push("sync".into());
    }
}

/// The log of one iteration of `args`, and each timed window's lines.
fn windows(line: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let (p, lay) = params(line);
    let log: Log = Arc::default();
    let team = Marking(Arc::clone(&log));
    let mut keeper = Keeper::default();
    let never = || false;
    let base = Dir {
        path: "D".into(),
        log: Arc::clone(&log),
    };
    {
        let ops = Logged(Arc::clone(&log));
        let mut e = Engine::new(&p, lay, &team, ops, &mut keeper, &Quiet, &never, None);
        e.iteration(&base, 0).unwrap();
    }
    drop(base);
    let all = log.lock().unwrap().clone();
    // Each window: the lines after a barrier (the clock starts) up to the next verdict.
    let out = all
        .split(|l| l == "[clock starts]")
        .skip(1)
        .map(|w| {
            w.iter()
                .take_while(|l| *l != "[clock stops]")
                .cloned()
                .collect()
        })
        .collect();
    (all, out)
}

#[test]
fn a_one_item_phase_times_only_its_operation() {
    let (all, win) = windows("-n 1 -z 0");
    let t = "D/test-dir.0-0/mdtest_tree.0";
    // The test directory's own set-up is collective but untimed; each timed window holds
    // exactly the phase's operation, as mdtest's does.
    let want: Vec<Vec<String>> = [
        "mkdir D/test-dir.0-0/mdtest_tree.0".to_string(),
        format!("mkdir {t}/dir.mdtest.0.0"),
        format!("stat {t}/dir.mdtest.0.0"),
        format!("rmdir {t}/dir.mdtest.0.0"),
        format!("create {t}/file.mdtest.0.0"),
        format!("stat {t}/file.mdtest.0.0"),
        format!("read {t}/file.mdtest.0.0"),
        format!("unlink {t}/file.mdtest.0.0"),
        "rmdir D/test-dir.0-0/mdtest_tree.0".to_string(),
    ]
    .into_iter()
    .map(|l| vec![l])
    .collect();
    let verdicts = all.iter().filter(|l| *l == "[clock stops]").count();
    assert_eq!(win, want, "{all:#?}");
    // Every directory opened is closed, after a clock stopped.
    let opens = all.iter().filter(|l| l.starts_with("open ")).count();
    let closes = all.iter().filter(|l| l.starts_with("close ")).count();
    assert_eq!(opens + 1, closes, "the base directory closes too: {all:#?}");
    assert!(verdicts >= want.len());
}

#[test]
fn deeper_trees_start_and_end_each_phase_on_an_operation() {
    let (all, win) = windows("-n 6 -z 1 -b 2 -D");
    for w in &win {
        // The start directory is held; inside, only the walk's descents open anything.
        if let Some(first) = w.first() {
            assert!(!first.starts_with("open "), "{w:#?}\n{all:#?}");
            assert!(!first.starts_with("close "), "{w:#?}");
        }
        // Nothing after the last operation: what the walk holds last is closed after the
        // clock stops.
        assert!(
            !w.last().is_some_and(|l| l.starts_with("close ")),
            "a phase ends on its last operation: {w:#?}"
        );
        // Opened inside: a directory below the start, or one this phase made (tree
        // creation descends into what it just made).
        for (i, l) in w.iter().enumerate() {
            if let Some(path) = l.strip_prefix("open ") {
                let made_here = w[..i].iter().any(|m| *m == format!("mkdir {path}"));
                assert!(
                    made_here || path.contains("mdtest_tree.0/mdtest_tree."),
                    "{l}: {w:#?}"
                );
            }
        }
    }
}

#[test]
fn sync_after_each_phase_is_inside_its_time() {
    // -Y: every timed window ends with the sync, as mdtest's phase_end runs it before its
    // clock stops; without -Y no window syncs.
    let (all, win) = windows("-n 2 -z 1 -Y");
    assert_eq!(win.len(), 10, "all ten phases: {all:#?}");
    for w in &win {
        assert_eq!(w.last().map(String::as_str), Some("sync"), "{w:#?}");
        assert_eq!(w.iter().filter(|l| *l == "sync").count(), 1, "{w:#?}");
    }
    assert_eq!(all.iter().filter(|l| *l == "sync").count(), win.len());
    let (all, _) = windows("-n 2 -z 1");
    assert!(!all.iter().any(|l| l == "sync"), "{all:#?}");
}

#[test]
fn t_times_entering_each_ranks_own_tree() {
    let top = "open D/test-dir.0-0/mdtest_tree.0.0";
    // -u alone: the rank's tree is entered before the clock starts.
    let (all, win) = windows("-n 2 -u -F");
    assert!(all.iter().any(|l| l == top), "{all:#?}");
    assert!(!win.iter().flatten().any(|l| l == top), "{win:#?}");
    // -u -t: every phase that walks the tree enters it inside its time, first thing.
    let (_, win) = windows("-n 2 -u -F -t");
    let entered: Vec<&Vec<String>> = win.iter().filter(|w| w.iter().any(|l| l == top)).collect();
    // File creation, stat, read, removal (tree creation makes the tree, tree removal
    // starts from the test directory).
    assert_eq!(entered.len(), 4, "{win:#?}");
    for w in entered {
        assert_eq!(w[0], top, "{w:#?}");
    }
    // Without -u, -t changes nothing (as in mdtest).
    assert_eq!(windows("-n 2 -F -t").1, windows("-n 2 -F").1);
}
