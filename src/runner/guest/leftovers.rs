//! What a killed host leaves for its guest, and its removal by `fslab cleanup`.

use super::images::is_image_name;
use super::script::INIT_MARK;
use std::path::Path;

/// The files besides images that a guest's run writes in `guest-PID/`: the host's (init
/// script, calibration study, shim and its report) and the guest init's (stop mark, running
/// command, exit code).
pub(super) const HOST_FILES: [&str; 7] = [
    super::script::INIT_FILE,
    super::CALIBRATION_FILE,
    super::shim::SHIM_FILE,
    super::shim::REPORT_FILE,
    super::script::STOP_FILE,
    super::script::CHILD_FILE,
    super::script::EXIT_FILE,
];

/// Remove what a killed host left for its guest in `workdir`: the images in `guest-PID/` and
/// `/dev/shm/fslab-guest-PID/` of a process that is gone, where the directory holds the init
/// script fslab wrote. Only fslab's own file names are removed; a directory with anything
/// else in it is left and named. Returns (what was done, what was left).
pub fn clean_killed_guests(workdir: &Path) -> (Vec<String>, Vec<String>) {
    clean_killed_guests_in(workdir, Path::new("/dev/shm"))
}

fn clean_killed_guests_in(workdir: &Path, shm: &Path) -> (Vec<String>, Vec<String>) {
    let (mut done, mut left) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(workdir) else {
        return (done, left);
    };
    let mut live_guest = false;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("guest-") else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            live_guest = true;
            continue;
        }
        let dir = e.path();
        let ours = std::fs::read_to_string(dir.join(super::script::INIT_FILE))
            .is_ok_and(|t| t.starts_with(INIT_MARK));
        if !ours || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for d in [dir.clone(), shm.join(format!("fslab-guest-{pid}"))] {
            let Ok(files) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut foreign = Vec::new();
            for f in files.flatten() {
                let n = f.file_name().to_string_lossy().into_owned();
                let mine = is_image_name(&n) || (d == dir && HOST_FILES.contains(&n.as_str()));
                if mine && f.file_type().is_ok_and(|t| t.is_file()) {
                    if let Err(err) = std::fs::remove_file(f.path()) {
                        left.push(format!("{}: {err}", f.path().display()));
                    }
                } else {
                    foreign.push(n);
                }
            }
            if foreign.is_empty() {
                match std::fs::remove_dir(&d) {
                    Ok(()) => done.push(format!(
                        "removed the images of a killed guest (process {pid}): {}",
                        d.display()
                    )),
                    Err(err) => left.push(format!("{}: {err}", d.display())),
                }
            } else {
                left.push(holds_foreign(&d, &foreign));
            }
        }
    }
    if !live_guest {
        clean_guest_work(&workdir.join(super::GUEST_WORK), &mut done, &mut left);
    }
    (done, left)
}

/// Remove the run directories the guests' fslab left in `guest-work/runs/` once no guest of
/// this work directory is alive: whatever a guest mounted or attached lived in its kernel,
/// which died with it, so only its files and directories remain. A run directory is removed
/// only when it holds nothing but what a run makes (`lock`, `state.json`, `images/` with
/// fslab's image names, `mnt/` with empty mount points), entry by entry beneath it; one that
/// holds anything else is left and named.
fn clean_guest_work(guest_work: &Path, done: &mut Vec<String>, left: &mut Vec<String>) {
    use crate::safe::beneath::Root;
    let runs = guest_work.join("runs");
    let Ok(entries) = std::fs::read_dir(&runs) else {
        return;
    };
    let root = match std::fs::canonicalize(&runs).and_then(|p| Root::open(&p)) {
        Ok(r) => r,
        Err(e) => {
            left.push(format!("{}: {e}", runs.display()));
            return;
        }
    };
    for e in entries.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = e.path();
        let foreign = foreign_in_run(&path);
        if !foreign.is_empty() {
            left.push(holds_foreign(&path, &foreign));
            continue;
        }
        match remove_run(&root, &e.file_name()) {
            Ok(()) => done.push(format!(
                "removed what a killed guest's run left: {}",
                path.display()
            )),
            Err(why) => left.push(format!("{}: {why}", path.display())),
        }
    }
}

/// The line for a directory left in place because it holds `foreign` files.
fn holds_foreign(dir: &Path, foreign: &[String]) -> String {
    let (dir, names) = (dir.display(), foreign.join(", "));
    format!("{dir} holds files fslab did not make ({names}); left in place")
}

/// The files a run directory makes, and its directories: image files, empty mount points.
const RUN_FILES: [&str; 3] = ["lock", "state.json", "state.json.tmp"];

/// What in the run directory `run` is not of a run's layout (by name and kind).
fn foreign_in_run(run: &Path) -> Vec<String> {
    let mut foreign = Vec::new();
    let Ok(entries) = std::fs::read_dir(run) else {
        return vec!["(unreadable)".into()];
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(t) = e.file_type() else {
            foreign.push(name);
            continue;
        };
        let ok = match name.as_str() {
            n if RUN_FILES.contains(&n) => t.is_file(),
            "images" | "mnt" if t.is_dir() => {
                let inner = std::fs::read_dir(e.path())
                    .map(|d| d.flatten().collect::<Vec<_>>())
                    .unwrap_or_default();
                let fits = inner.iter().all(|f| {
                    let t = f.file_type().ok();
                    if name == "images" {
                        t.is_some_and(|t| t.is_file())
                            && is_image_name(&f.file_name().to_string_lossy())
                    } else {
                        t.is_some_and(|t| t.is_dir())
                            && std::fs::read_dir(f.path()).is_ok_and(|mut d| d.next().is_none())
                    }
                });
                if !fits {
                    foreign.push(format!("{name}/…"));
                    continue;
                }
                true
            }
            _ => false,
        };
        if !ok {
            foreign.push(name);
        }
    }
    foreign
}

/// Remove a run directory [`foreign_in_run`] found nothing foreign in, entry by entry beneath
/// `runs` (never across a mount, never through a symbolic link).
fn remove_run(runs: &crate::safe::beneath::Root, name: &std::ffi::OsStr) -> Result<(), String> {
    use crate::safe::beneath::{remove_at, Kind};
    let run = runs.sub(&runs.path().join(name))?;
    for (sub, kind) in [("images", Kind::File), ("mnt", Kind::EmptyDir)] {
        if let Ok(d) = run.sub(&run.path().join(sub)) {
            let names: Vec<_> = std::fs::read_dir(d.path())
                .map(|r| r.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
            for n in names {
                remove_at(d.fd(), &n, kind, None)?;
            }
        }
        remove_at(run.fd(), std::ffi::OsStr::new(sub), Kind::EmptyDir, None)?;
    }
    for f in RUN_FILES {
        remove_at(run.fd(), std::ffi::OsStr::new(f), Kind::File, None)?;
    }
    remove_at(runs.fd(), name, Kind::EmptyDir, None).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::super::script::init_script;
    use super::*;

    #[test]
    fn cleanup_removes_only_a_dead_guests_own_files() {
        let work = tempfile::tempdir().unwrap();
        let shm = tempfile::tempdir().unwrap();
        // A process id above the kernel's limit (2^22) never exists.
        let dead = "99999999";
        let g = work.path().join(format!("guest-{dead}"));
        std::fs::create_dir(&g).unwrap();
        let init = init_script(Path::new("/f"), &[], &[], Path::new("/"), &g);
        std::fs::write(g.join("init"), init).unwrap();
        std::fs::write(g.join("c0-data.img"), b"x").unwrap();
        std::fs::write(g.join("c1-journal.img"), b"x").unwrap();
        std::fs::write(g.join(super::super::shim::SHIM_FILE), b"x").unwrap();
        // What the guest's init writes, and the calibration study.
        for f in ["child", "stop", "exit", "calibration.toml"] {
            std::fs::write(g.join(f), b"1").unwrap();
        }
        let ram = shm.path().join(format!("fslab-guest-{dead}"));
        std::fs::create_dir(&ram).unwrap();
        std::fs::write(ram.join("c2-data.img"), b"x").unwrap();
        std::fs::write(ram.join("notes.txt"), b"mine").unwrap();
        // Not fslab's: no init it wrote.
        let other = work.path().join("guest-99999998");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("c0-data.img"), b"x").unwrap();
        // A live process's (this test's own).
        let live = work.path().join(format!("guest-{}", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        std::fs::write(live.join("init"), format!("{INIT_MARK}\n")).unwrap();
        std::fs::write(live.join("c0-data.img"), b"x").unwrap();

        let (done, left) = clean_killed_guests_in(work.path(), shm.path());
        assert!(!g.exists(), "{done:?} {left:?}");
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!ram.join("c2-data.img").exists());
        assert!(ram.join("notes.txt").exists(), "a user's file stays");
        assert!(left.iter().any(|l| l.contains("notes.txt")), "{left:?}");
        assert!(
            other.join("c0-data.img").exists(),
            "no fslab init: untouched"
        );
        assert!(
            live.join("c0-data.img").exists(),
            "a live process: untouched"
        );
        // A guest is alive: the guests' work directory is theirs.
        let run = work.path().join("guest-work/runs/713-1");
        std::fs::create_dir_all(run.join("mnt/c1")).unwrap();
        let _ = clean_killed_guests_in(work.path(), shm.path());
        assert!(run.join("mnt/c1").exists());
        // None is: what a killed guest's run left there goes, and nothing else.
        std::fs::remove_dir_all(&live).unwrap();
        std::fs::write(run.join("state.json"), b"{}").unwrap();
        std::fs::write(run.join("lock"), b"").unwrap();
        std::fs::create_dir_all(run.join("images")).unwrap();
        std::fs::write(run.join("images/c0-data.img"), b"x").unwrap();
        // A user's files beside a run and inside another: kept, and so is that run.
        let runs = work.path().join("guest-work/runs");
        std::fs::write(runs.join("notes.txt"), b"mine").unwrap();
        let planted = runs.join("714-1");
        std::fs::create_dir_all(planted.join("mnt/c0")).unwrap();
        std::fs::write(planted.join("mnt/c0/mine.txt"), b"mine").unwrap();
        std::fs::write(planted.join("mine.txt"), b"mine").unwrap();
        let (done, left) = clean_killed_guests_in(work.path(), shm.path());
        assert!(!run.exists(), "{done:?} {left:?}");
        assert!(runs.exists());
        assert!(done.iter().any(|d| d.contains("713-1")), "{done:?}");
        assert_eq!(std::fs::read(runs.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(
            std::fs::read(planted.join("mnt/c0/mine.txt")).unwrap(),
            b"mine"
        );
        assert_eq!(std::fs::read(planted.join("mine.txt")).unwrap(), b"mine");
        assert!(
            left.iter()
                .any(|l| l.contains("714-1") && l.contains("mine.txt") && l.contains("mnt/…")),
            "{left:?}"
        );
    }
}
