//! Studies and engine commands run their repetitions through one loop: both reach
//! `Runner::attempt` (counted by `ATTEMPTS`), once per repetition.

use super::attempt::ATTEMPTS;
use super::command::{run_cells, AdhocCell, AdhocOptions};
use super::{run, StudyRun};
use crate::metric::{Metric, Unit};
use crate::provision::exec::RealExec;
use crate::provision::state::WorkDir;
use crate::stats::adaptive::Disturbed;
use crate::store::Store;
use crate::workload::{Observer, Requirements, Target, Workload};
use std::sync::Arc;

fn attempts() -> u32 {
    ATTEMPTS.with(|n| n.get())
}

/// An engine that measures nothing but says it ran.
struct Stub;

impl Workload for Stub {
    fn name(&self) -> &'static str {
        "fdtree"
    }
    fn requirements(&self) -> Requirements {
        Requirements::default()
    }
    fn prepare(&mut self, _: &Target) -> anyhow::Result<()> {
        Ok(())
    }
    fn run(&mut self, _: &Target, _: &dyn Observer) -> anyhow::Result<Vec<Metric>> {
        let rate = Metric::new("dir_create", "rate", Unit::DirsPerSec, 1.0);
        Ok(vec![rate])
    }
    fn cleanup(&mut self, _: &Target) -> anyhow::Result<()> {
        Ok(())
    }
}

#[test]
fn an_engine_command_runs_each_repetition_through_the_study_loop() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::new(dir.path());
    let mut cells: Vec<AdhocCell<Stub>> = (0..2)
        .map(|i| AdhocCell {
            label: format!("point {i}"),
            factors: Vec::new(),
            config: serde_json::Value::Null,
            workload: Stub,
        })
        .collect();
    let opts = AdhocOptions {
        repeat: 3,
        disturbed: Disturbed::Keep,
        store: None,
        name: "fdtree".into(),
        command_line: "fslab fdtree".into(),
        params: serde_json::json!({}),
        label: "fdtree".into(),
        settle: std::time::Duration::ZERO,
        timeline: false,
        steps: None,
    };
    let before = attempts();
    let mut order = Vec::new();
    let r = run_cells(
        opts,
        &mut cells,
        &target,
        &crate::workload::Quiet,
        &mut |rep, cell, _, _| order.push((rep, cell)),
    )
    .unwrap();
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(attempts() - before, 6);
    // Interleaved: repetition 1 of every point, then repetition 2, …
    assert_eq!(order, [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]);
    assert_eq!(r.reps.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3]);
}

#[test]
fn a_study_runs_each_repetition_through_the_same_loop() {
    // Two ext2 cells on loop images under this test's own work directory: needs root.
    if !crate::sysinfo::is_root() {
        if std::env::var("FSLAB_SKIP_PRIVILEGED").as_deref() == Ok("1") {
            eprintln!("SKIPPED: needs root (FSLAB_SKIP_PRIVILEGED=1)");
            return;
        }
        panic!("needs root (mkfs, mount, loop devices); run as root or set FSLAB_SKIP_PRIVILEGED=1 to skip on purpose");
    }
    let study = crate::plan::Study::parse(
        r#"
name = "one-loop"
[repetitions]
min = 2
cache = "none"
timeline = false
[device]
data = "loop:32M"
[[factor]]
name = "fs"
values = [{ label = "ext2", fs = "ext2" }, { label = "ext3", fs = "ext3" }]
[[workload]]
kind = "fdtree"
dirs = 1
files = 1
size_blocks = 1
levels = 1
"#,
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut store = Store::open(&work.path().join("results.db")).unwrap();
    let before = attempts();
    let out = run(StudyRun {
        study: &study,
        store: &mut store,
        workdir: WorkDir::new(work.path().join("work")),
        exec: Arc::new(RealExec),
        resume: false,
        command_line: "fslab study run one-loop.toml".into(),
        progress: false,
        design: Default::default(),
        wait_quiet: None,
    })
    .unwrap();
    assert_eq!(out.status, crate::store::StudyStatus::Complete, "{out:?}");
    assert_eq!(attempts() - before, 4);
}
