//! Every way the hold-out run found for a fio job to escape its cell (issue 25), re-run on
//! victims this test planted outside `-D`: a file, a directory with a file, and a tmpfs it
//! mounted. Twice:
//!
//! * through `fslab fio` as a user would: each escape is refused before fio runs (one line,
//!   exit 2), or — `exec_prerun`/`exec_postrun`, which no reading of the job can judge —
//!   runs in the cage and fails to touch anything;
//! * through the engine with the checks skipped (a job built directly): fio really runs each
//!   escape as root, and only the cage stands between it and the victims.
//!
//! Afterwards every victim is byte-for-byte what it was and the tmpfs is still mounted.

mod common;

use fslab::workload::fio::{Fio, FioParams, JobFile};
use fslab::workload::{Quiet, Target, Workload};
use std::path::{Path, PathBuf};

struct Scene {
    t: tempfile::TempDir,
    /// `-D`.
    d: PathBuf,
    file: PathBuf,
    dir: PathBuf,
    mount: common::TempMount,
}

const FILE_BYTES: &[u8] = b"the victim's own bytes\n";
const INSIDE_BYTES: &[u8] = b"a file in the victim's directory\n";

fn scene() -> Scene {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let file = victim.join("v");
    std::fs::write(&file, FILE_BYTES).unwrap();
    let dir = victim.join("dir");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inside"), INSIDE_BYTES).unwrap();
    let mount = common::TempMount::new("tmpfs", "size=1m");
    std::fs::write(mount.path().join("on-tmpfs"), FILE_BYTES).unwrap();
    Scene {
        d: std::fs::canonicalize(&d).unwrap(),
        file,
        dir,
        mount,
        t,
    }
}

fn mounted(p: &Path) -> bool {
    let canon = std::fs::canonicalize(p).unwrap();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(canon.to_str().unwrap()))
}

impl Scene {
    fn unchanged(&self, what: &str) {
        assert_eq!(std::fs::read(&self.file).unwrap(), FILE_BYTES, "{what}");
        let names: Vec<_> = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("inside")], "{what}");
        assert_eq!(
            std::fs::read(self.dir.join("inside")).unwrap(),
            INSIDE_BYTES,
            "{what}"
        );
        assert!(
            mounted(self.mount.path()),
            "{what}: the tmpfs was unmounted"
        );
        assert_eq!(
            std::fs::read(self.mount.path().join("on-tmpfs")).unwrap(),
            FILE_BYTES,
            "{what}"
        );
        let parent: Vec<_> = std::fs::read_dir(self.file.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            parent.len(),
            2,
            "{what}: nothing new beside the victims: {parent:?}"
        );
    }

    /// The shell commands of the `exec_prerun` escape.
    fn shell(&self) -> String {
        format!(
            "sh -c 'echo x > {f}; rm -rf {d}; umount -l {m}; rm -f {m}/on-tmpfs'",
            f = self.file.display(),
            d = self.dir.display(),
            m = self.mount.path().display()
        )
    }

    /// The escapes as (name, job text, pass-through options); `other.fio` is written beside.
    fn escapes(&self) -> Vec<(&'static str, String, Vec<String>)> {
        std::fs::write(
            self.t.path().join("other.fio"),
            "filename=../../victim/v\nunlink=1\n",
        )
        .unwrap();
        let w = "rw=write\nsize=64k\nioengine=psync\n";
        let sh = self.shell();
        vec![
            ("include", format!("[a]\n{w}include other.fio\n"), vec![]),
            (
                "${V}",
                format!("[a]\n{w}filename=${{FSLAB_ESCAPE_V}}\n"),
                vec![],
            ),
            ("job name", format!("[../../victim/v]\n{w}"), vec![]),
            (
                "filedelete",
                "[del]\nioengine=filedelete\nopendir=../../victim/dir\nnrfiles=1\n".into(),
                vec![],
            ),
            ("exec_prerun", format!("[a]\n{w}exec_prerun={sh}\n"), vec![]),
            (
                "exec_postrun",
                format!("[a]\n{w}exec_postrun={sh}\n"),
                vec![],
            ),
            (
                "--write_iolog",
                format!("[a]\n{w}"),
                vec![format!("--write_iolog={}", self.file.display())],
            ),
            (
                "-filename",
                format!("[a]\n{w}"),
                vec![format!("-filename={}", self.file.display())],
            ),
            (
                "--filename ../..",
                format!("[a]\n{w}"),
                vec!["--filename".into(), "../../victim/v".into()],
            ),
            (
                "--director=",
                format!("[a]\n{w}"),
                vec![format!("--director={}", self.dir.display())],
            ),
        ]
    }
}

#[test]
fn privileged_every_fio_escape_leaves_planted_victims_unchanged() {
    if !common::require_root("privileged_every_fio_escape_leaves_planted_victims_unchanged")
        || !common::require_fio("privileged_every_fio_escape_leaves_planted_victims_unchanged")
    {
        return;
    }
    let s = scene();
    std::env::set_var("FSLAB_ESCAPE_V", "../../victim/v");

    // 1. As a user runs them: refused early, or caged.
    for (name, text, args) in s.escapes() {
        let job = s.t.path().join("job.fio");
        std::fs::write(&job, &text).unwrap();
        let out = common::fslab(s.t.path())
            .env("FSLAB_ESCAPE_V", "../../victim/v")
            .args(["fio", "--cache", "none", "-q", "--no-store", "-D"])
            .arg(&s.d)
            .arg(&job)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if name.starts_with("exec_") {
            // Not judged by reading: it runs, caged. A failed exec_prerun fails fio's job (exit
            // 1, a runtime failure); fio ignores a failed exec_postrun.
            let want = if name == "exec_prerun" { 1 } else { 0 };
            assert_eq!(out.status.code(), Some(want), "{name}: {err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{name} is refused early: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        }
        s.unchanged(name);
        assert!(!s.d.join("fslab-fio").exists(), "{name}");
    }

    // 2. With the checks skipped: fio runs every escape as root, inside the cage.
    for (name, text, args) in s.escapes() {
        let job = JobFile::parse(&text, Some(s.t.path())).unwrap();
        let params = FioParams {
            job,
            source: name.into(),
            allow_outside: Vec::new(),
            drop_caches: false,
            extra_args: args,
            cell: None,
        };
        let mut fio = Fio::new(params);
        let target = Target::new(&s.d);
        fio.prepare(&target).unwrap();
        let ran = fio.run(&target, &Quiet);
        fio.cleanup(&target).unwrap();
        s.unchanged(&format!("{name} (unchecked): {ran:?}"));
    }
}
