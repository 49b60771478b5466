//! What a warning tells the user to do, in the words of the workload kind (fdtree's tree,
//! IOzone's files, dbench's run time, from [`crate::workload::Caps`]), of the cache policy
//! in force (never advising the policy already used), and of where the results came from (a
//! study file's keys or an engine command's flags).

use crate::vocab::{CachePolicy, StudyKind};
use crate::workload::WorkloadKind;

/// The cache policy the counted repetitions ran under, as stored with every trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The one policy of every counted repetition (engine commands record `none`).
    Of(CachePolicy),
    /// An engine command that dropped caches itself before each test (`fslab iozone
    /// --drop-caches` or `--fadvise`).
    TestDrops,
    /// Repetitions under different policies, an unknown word, or none recorded.
    Mixed,
}

impl Policy {
    /// The policy from the stored policy of the counted repetitions (`None` when they differ
    /// or the word is unknown), and the engine's parameters (`drop_caches`, `fadvise`).
    pub fn of(stored: Option<CachePolicy>, params: &serde_json::Value) -> Policy {
        let drops = ["drop_caches", "fadvise"]
            .iter()
            .any(|k| params.get(*k).and_then(serde_json::Value::as_bool) == Some(true));
        match stored {
            Some(CachePolicy::None) if drops => Policy::TestDrops,
            Some(p) => Policy::Of(p),
            None => Policy::Mixed,
        }
    }
}

/// Where the results came from, for naming the knob: a study file's keys or a command's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `fslab study run FILE`.
    Study,
    /// An engine command (`fslab fdtree`, `iozone`, `dbench`).
    Run,
    /// Both (a comparison of a study with a run).
    Both,
}

impl Origin {
    /// From the stored kinds of the sources.
    pub fn of(kinds: impl IntoIterator<Item = StudyKind>) -> Origin {
        let (mut study, mut run) = (false, false);
        for k in kinds {
            study |= k == StudyKind::Study;
            run |= k == StudyKind::Run;
        }
        match (study, run) {
            (false, true) => Origin::Run,
            (true, true) => Origin::Both,
            _ => Origin::Study,
        }
    }

    /// The study key or the flag, as this origin names it.
    fn knob(self, key: &str, flag: &str) -> String {
        match self {
            Origin::Study => format!("{key} in the study"),
            Origin::Run => flag.to_string(),
            Origin::Both => format!("{key} in a study, {flag} on the command line"),
        }
    }
}

/// A phase too short to time: make it longer, the way its engine can.
pub fn too_short(kind: Option<WorkloadKind>, origin: Origin) -> String {
    match kind {
        Some(k) => {
            let l = k.caps().larger;
            format!(
                "make the phases longer with {} ({})",
                l.words,
                origin.knob(l.keys, l.flags)
            )
        }
        None => "make the workload larger".into(),
    }
}

/// The coefficient of variation is high.
pub fn high_cv(policy: Policy, origin: Origin) -> String {
    let more = format!(
        "run more repetitions ({}) or quiet the machine",
        origin.knob("repetitions.min", "--repeat")
    );
    match (policy, origin) {
        (Policy::Of(CachePolicy::Cold | CachePolicy::Fresh), _) => more,
        (_, Origin::Run) => {
            format!("{more}; a study with cache = \"cold\" also drops the caches before each repetition")
        }
        _ => format!("{more}, or drop the caches before each repetition (cache = \"cold\")"),
    }
}

/// What one-time set-up can make a configuration's first repetition slow, from how its file
/// system was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetUp {
    /// An ext2/3/4 made without `-E lazy_itable_init=0` (or an existing one fslab did not
    /// make): the kernel zeroes its inode tables in the background after mount.
    LazyInit,
    /// fslab's mkfs disabled lazy initialisation, but the file system is on a sparse loop
    /// image: its first writes allocate the image's blocks in the backing file system.
    SparseImage,
    /// Nothing known (XFS, btrfs, a real device).
    Unknown,
}

impl SetUp {
    /// From a configuration's recorded provisioning commands (`mkfs.ext4 -E
    /// lazy_itable_init=0,…`, `truncate -s …`) and, without any (an engine command on an
    /// existing file system), its file-system type. An external journal's own line (`mke2fs
    /// -O journal_dev …`) makes a journal, which has no inode tables: it is not judged.
    pub fn of(commands: &[String], fs_type: Option<&str>) -> SetUp {
        let journal_dev = |c: &str| {
            let words: Vec<&str> = c.split_whitespace().collect();
            words
                .windows(2)
                .any(|w| w[0] == "-O" && w[1].split(',').any(|f| f == "journal_dev"))
        };
        let ext_mkfs: Vec<&String> = commands
            .iter()
            .filter(|c| c.starts_with("mkfs.ext") || c.starts_with("mke2fs"))
            .filter(|c| !journal_dev(c))
            .collect();
        let sparse = commands.iter().any(|c| c.starts_with("truncate -s"));
        if ext_mkfs.iter().any(|c| !c.contains("lazy_itable_init=0")) {
            return SetUp::LazyInit;
        }
        let made = commands.iter().any(|c| c.starts_with("mkfs"));
        if !made && fs_type.is_some_and(|t| ["ext2", "ext3", "ext4"].contains(&t)) {
            return SetUp::LazyInit;
        }
        if sparse {
            SetUp::SparseImage
        } else {
            SetUp::Unknown
        }
    }

    fn words(self) -> &'static str {
        match self {
            SetUp::LazyInit => "one-time set-up such as ext4's lazy inode-table initialisation after mkfs (mkfs.ext4 -E lazy_itable_init=0)",
            SetUp::SparseImage => "one-time set-up such as the first writes to a new sparse loop image, which allocate its blocks in the backing file system (lazy inode-table initialisation is already off)",
            SetUp::Unknown => "one-time set-up after mkfs or mount",
        }
    }
}

/// The first repetition is much worse than the others; `warmed`: the series already ran
/// discarded warm-ups (`[repetitions] warmup`) before it.
pub fn first_slower(policy: Policy, origin: Origin, setup: SetUp, warmed: bool) -> String {
    let setup = setup.words();
    match (policy, origin, warmed) {
        (Policy::Of(CachePolicy::Cold), _, true) => format!(
            "the cold policy already drops the caches before each repetition and the series discarded warm-ups first: look for {setup}"
        ),
        (Policy::Of(CachePolicy::Cold), Origin::Run, false) => format!(
            "the cold policy already drops the caches before each repetition: look for {setup}"
        ),
        (Policy::Of(CachePolicy::Cold), _, false) => format!(
            "the cold policy already drops the caches before each repetition: look for {setup}, or discard it (warmup = 1 in [repetitions])"
        ),
        // A warm-up would not help: the first counted repetition has a new file system too.
        (Policy::Of(CachePolicy::Fresh), _, _) => format!(
            "the fresh policy already makes a new file system before each repetition, so each starts with empty caches: look for {setup}"
        ),
        (Policy::Of(CachePolicy::Warm), _, _) => {
            format!("the warm policy already discards a first run: look for {setup}")
        }
        (Policy::TestDrops, _, _) => format!(
            "the page cache is already dropped before each test (--drop-caches/--fadvise): look for {setup}, or leave the first repetition out"
        ),
        (_, Origin::Run, _) => format!(
            "caches warming up or {setup}; leave the first repetition out, or run a study with cache = \"cold\" or \"warm\""
        ),
        _ => format!(
            "caches warming up or {setup}; use cache = \"cold\" (caches dropped before each repetition) or \"warm\" (a discarded first run)"
        ),
    }
}

/// A data set under twice the RAM (throughput workloads): what it means under the policy in
/// force, and what to do; `need` is the size that would not fit (`48.0 GiB`).
pub fn dataset(policy: Policy, origin: Origin, need: &str) -> (String, String) {
    let direct = origin.knob("direct = true", "-I");
    let statement = match policy {
        Policy::Of(CachePolicy::Cold) => "the cold policy drops the page cache before each repetition, but within a repetition a data set under 2× RAM is served from cache: writes are absorbed and re-reads come from memory",
        Policy::Of(CachePolicy::Fresh) => "the fresh policy makes a new file system before each repetition, but within a repetition a data set under 2× RAM is served from cache: writes are absorbed and re-reads come from memory",
        Policy::TestDrops => "the page cache is dropped before each test (--drop-caches/--fadvise), but within a test a data set under 2× RAM is served from it: writes are absorbed in memory",
        Policy::Of(CachePolicy::Warm) => "the warm policy keeps the data in the page cache on purpose, and a data set under 2× RAM fits: the results measure cached I/O",
        Policy::Of(CachePolicy::None) => "nothing drops the page cache between repetitions, and a data set under 2× RAM is served from it: the results include page-cache effects",
        Policy::Mixed => "the repetitions did not all run under one cache policy, and a data set under 2× RAM is served from the page cache where nothing drops it: the results include page-cache effects",
    };
    let advice = match (policy, origin) {
        (Policy::Of(CachePolicy::Warm), _) => {
            format!("to measure the device instead, use a data set over {need} or O_DIRECT ({direct})")
        }
        (Policy::Of(CachePolicy::Cold | CachePolicy::Fresh) | Policy::TestDrops, _) => {
            format!("use a data set over {need} or O_DIRECT ({direct}) to measure the device")
        }
        (_, Origin::Run) => format!(
            "use files of at least {need} in total (-s), O_DIRECT (-I), or --drop-caches/--fadvise before the reads"
        ),
        _ => format!(
            "use a data set over {need}, O_DIRECT ({direct}), or drop the caches before each repetition (cache = \"cold\")"
        ),
    };
    (statement.into(), advice)
}

/// Reads faster than the device can deliver.
pub fn faster_than_device(policy: Policy, origin: Origin) -> String {
    let direct = origin.knob("direct = true", "-I");
    match (policy, origin) {
        (Policy::Of(CachePolicy::Cold | CachePolicy::Fresh) | Policy::TestDrops, _) => format!(
            "the caches are dropped only before each repetition or test, so a read right after a write finds the data in memory: use O_DIRECT ({direct}) or a data set over 2× RAM"
        ),
        (_, Origin::Run) => "use O_DIRECT (-I), or --drop-caches/--fadvise before the reads".into(),
        _ => format!(
            "drop the caches before each repetition (cache = \"cold\") or use O_DIRECT ({direct})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::has;
    use serde_json::json;

    const COLD: Policy = Policy::Of(CachePolicy::Cold);
    const WARM: Policy = Policy::Of(CachePolicy::Warm);
    const NONE: Policy = Policy::Of(CachePolicy::None);
    const FRESH: Policy = Policy::Of(CachePolicy::Fresh);

    #[test]
    fn policies_from_the_store_and_the_parameters() {
        let none = json!({});
        for p in CachePolicy::ALL {
            assert_eq!(Policy::of(Some(*p), &none), Policy::Of(*p));
        }
        assert_eq!(
            Policy::of(Some(CachePolicy::None), &json!({"drop_caches": true})),
            Policy::TestDrops
        );
        assert_eq!(Policy::of(None, &none), Policy::Mixed);
        let (run, study) = (StudyKind::Run, StudyKind::Study);
        assert_eq!(Origin::of([run, run]), Origin::Run);
        assert_eq!(Origin::of([study, run]), Origin::Both);
        assert_eq!(Origin::of([]), Origin::Study);
    }

    #[test]
    fn a_policy_in_force_is_never_advised() {
        for origin in [Origin::Study, Origin::Run, Origin::Both] {
            assert!(!high_cv(COLD, origin).contains("cold"));
            assert!(high_cv(NONE, origin).contains("cache = \"cold\""));
            for setup in [SetUp::LazyInit, SetUp::SparseImage, SetUp::Unknown] {
                for warmed in [false, true] {
                    let cold = first_slower(COLD, origin, setup, warmed);
                    assert!(!cold.contains("cache = \"cold\""));
                    // A warm-up is advised only where a study can take it and has none.
                    assert_eq!(
                        cold.contains("warmup = 1"),
                        !warmed && origin != Origin::Run,
                        "{origin:?} {warmed}: {cold}"
                    );
                    assert!(!first_slower(WARM, origin, setup, warmed).contains("\"warm\""));
                }
            }
            let (statement, advice) = dataset(COLD, origin, "48.0 GiB");
            assert!(statement.starts_with("the cold policy drops the page cache"));
            assert!(!advice.contains("cold"), "{advice}");
            assert!(!faster_than_device(COLD, origin).contains("\"cold\""));
            // A new file system before each repetition leaves nothing of the data cached:
            // `fresh` is as cold as `cold`, and is never told to use it.
            let (statement, advice) = dataset(FRESH, origin, "48.0 GiB");
            assert!(statement.starts_with("the fresh policy makes a new file system"));
            let mut fresh = vec![
                advice,
                high_cv(FRESH, origin),
                faster_than_device(FRESH, origin),
            ];
            for setup in [SetUp::LazyInit, SetUp::SparseImage, SetUp::Unknown] {
                fresh.push(first_slower(FRESH, origin, setup, false));
            }
            for a in fresh {
                assert!(!a.contains("cold") && !a.contains("warmup"), "{a}");
            }
            // Only `none` says that nothing drops the cache.
            for p in [COLD, WARM, FRESH, Policy::TestDrops, Policy::Mixed] {
                assert!(
                    !dataset(p, origin, "1 GiB").0.starts_with("nothing"),
                    "{p:?}"
                );
            }
        }
    }

    #[test]
    fn lazy_init_is_advised_only_where_mkfs_left_it_on() {
        let cmds = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // fslab's own mkfs line disables it; the image is sparse.
        let fslab = cmds(&[
            "truncate -s 2147483648 /w/images/c0-data.img",
            "losetup --find --show --direct-io=on /w/images/c0-data.img",
            "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -J size=16 /dev/loop0",
        ]);
        assert_eq!(SetUp::of(&fslab, None), SetUp::SparseImage);
        let lazy = cmds(&["mkfs.ext4 -F -q /dev/sdz1"]);
        assert_eq!(SetUp::of(&lazy, None), SetUp::LazyInit);
        let xfs = cmds(&["truncate -s 1 /w/i.img", "mkfs.xfs -f /dev/loop0"]);
        assert_eq!(SetUp::of(&xfs, None), SetUp::SparseImage);
        assert_eq!(
            SetUp::of(&cmds(&["mkfs.xfs -f /dev/sdz1"]), None),
            SetUp::Unknown
        );
        // An engine command on an existing file system: only its type is known.
        assert_eq!(SetUp::of(&[], Some("ext4")), SetUp::LazyInit);
        assert_eq!(SetUp::of(&[], Some("xfs")), SetUp::Unknown);
        for s in [SetUp::SparseImage, SetUp::Unknown] {
            let a = first_slower(COLD, Origin::Study, s, false);
            assert!(!a.contains("mkfs.ext4 -E lazy_itable_init=0"), "{a}");
        }
        has(
            &first_slower(COLD, Origin::Study, SetUp::LazyInit, false),
            "lazy_itable_init=0",
        );
    }

    #[test]
    fn tree_shape_only_for_fdtree_and_knobs_by_origin() {
        let fd = too_short(Some(WorkloadKind::Fdtree), Origin::Study);
        assert_eq!(
            fd,
            "make the phases longer with a larger tree: more files or levels (files, levels in the study)"
        );
        let io = too_short(Some(WorkloadKind::Iozone), Origin::Run);
        assert_eq!(io, "make the phases longer with larger files (-s)");
        assert!(!too_short(Some(WorkloadKind::Dbench), Origin::Run).contains("levels"));
        assert_eq!(too_short(None, Origin::Run), "make the workload larger");
    }
}
