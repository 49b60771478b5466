use super::*;
use crate::app::finish::Ending;
use crate::metric::Unit;

#[derive(Serialize)]
struct Part {
    zeta: u32,
    alpha: Vec<u32>,
}

/// Free space with these inodes (the bytes: 100 of 1000).
fn free(inodes: u64, inodes_total: u64) -> crate::sysinfo::FreeSpace {
    crate::sysinfo::FreeSpace {
        bytes: 100,
        total_bytes: 1000,
        inodes,
        inodes_total,
    }
}

fn subject(dir: &Path) -> Subject<'_> {
    Subject {
        engine: "fdtree",
        command_line: "fslab fdtree".into(),
        directory: dir,
        fs_type: Some("tmpfs".into()),
        params: serde_json::json!({"dirs": 2}),
        repeat: 3,
        ranks: 1,
        mpi: None,
    }
}

#[test]
fn a_run_is_the_envelope_with_the_engines_part_and_sorted_keys() {
    let env = vec![("kernel".to_string(), "6.1".to_string())];
    let warnings = vec!["w".to_string()];
    let err = anyhow::anyhow!("boom");
    let end = Ending {
        schema: "fslab.test.v2",
        run_id: Some(7),
        environment: &env,
        warnings,
        error: Some(&err),
    };
    let reps = vec![vec![Metric::new("p", "rate", Unit::FilesPerSec, 2.0)]];
    let sums = runsummary::summarize_reps(&reps);
    let dir = Path::new("/x");
    let part = Part {
        zeta: 1,
        alpha: vec![2],
    };
    let doc = end.document(subject(dir), measured(&reps, &sums), part);
    let v = serde_json::to_value(doc).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let sorted = "alpha command_line directory dry_run engine environment error fs_type \
                  fslab_version params ranks repeat repetitions run_id schema summary warnings zeta";
    assert_eq!(keys, sorted.split(' ').collect::<Vec<_>>());
    assert_eq!(v["environment"]["kernel"], "6.1");
    assert_eq!(v["error"], "boom");
    assert_eq!(v["run_id"], 7);
    assert_eq!(v["dry_run"], false);
    assert_eq!(v["directory"], "/x");
    assert_eq!(
        v["repetitions"],
        serde_json::json!([[{"phase": "p", "metric": "rate", "unit": "files/s", "value": 2.0}]])
    );
    assert_eq!(v["summary"][0]["phase"], "p");
}

#[test]
fn a_dry_run_has_the_same_envelope_and_the_plan_instead_of_the_run() {
    let dir = Path::new("/x");
    let needs = Needs {
        bytes: 50,
        inodes: Some(6),
    };
    let plan = Planned::new(needs, Some(free(5, 10)), Some(2.5));
    let doc = RunDoc {
        schema: "fslab.test.v2",
        fslab_version: "0",
        subject: subject(dir),
        outcome: Outcome::Planned(plan),
        part: Part {
            zeta: 0,
            alpha: vec![],
        },
    };
    let v = serde_json::to_value(doc).unwrap();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["fits"], false, "6 inodes needed, 5 free");
    assert_eq!(v["requirements"]["inodes"], 6);
    assert_eq!(v["free"]["inodes_total"], 10);
    assert_eq!(v["estimate_seconds"], 2.5);
    assert_eq!(v["engine"], "fdtree");
    assert!(v.get("run_id").is_none() && v.get("repetitions").is_none());
}

#[test]
fn without_a_fixed_inode_count_only_bytes_decide() {
    let free = free(0, 0);
    let needs = |bytes| Needs {
        bytes,
        inodes: Some(1_000_000),
    };
    assert_eq!(Planned::new(needs(100), Some(free), None).fits, Some(true));
    assert_eq!(Planned::new(needs(101), Some(free), None).fits, Some(false));
    assert_eq!(Planned::new(needs(1), None, None).fits, None);
}
