//! `fslab study plan` refuses a cell whose external journal is its data device: the same
//! path, a factor level that makes them equal, and (root, on a loop device this test makes)
//! two paths that reach the same device or a partition of it.

mod common;
mod testdev;

use common::{fslab, require_root};
use std::path::Path;
use testdev::{sfdisk, TestLoop};

fn study(data: &str, journal: &str, factor: &str) -> String {
    format!(
        r#"
name = "devices"
[repetitions]
min = 1
cache = "none"
[device]
data = "{data}"
journal = "{journal}"
[filesystem]
type = "ext4"
{factor}
[[workload]]
kind = "fdtree"
dirs = 2
files = 2
size_blocks = 1
levels = 1
"#
    )
}

/// `fslab study plan` on `text`: exit code and stderr.
fn plan(dir: &Path, text: &str) -> (Option<i32>, String) {
    let f = dir.join("s.toml");
    std::fs::write(&f, text).unwrap();
    let out = fslab(dir)
        .args(["study", "plan"])
        .arg(&f)
        .arg("--workdir")
        .arg(dir.join("work"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(dir: &Path, text: &str, needle: &str) -> String {
    let (code, err) = plan(dir, text);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    err
}

#[test]
fn the_same_path_as_data_and_journal_is_refused_at_plan_time() {
    let t = tempfile::tempdir().unwrap();
    // Paths in the test's own directory: the refusal comes before anything looks at them.
    let dev = t.path().join("disk");
    let dev = dev.to_str().unwrap();
    let e = refused(t.path(), &study(dev, dev, ""), "same device");
    assert!(e.contains("journal = \"internal\""), "{e}");
    // Written differently, still the same path.
    let other = format!("{}/./disk", t.path().display());
    refused(t.path(), &study(dev, &other, ""), "same device");
}

#[test]
fn a_factor_level_that_makes_data_and_journal_equal_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let journal_factor = format!(
        "[[factor]]\nname = \"jdev\"\nvalues = [{{ label = \"other\", journal = \"{b}\" }}, {{ label = \"same\", journal = \"{a}\" }}]\n"
    );
    let e = refused(
        t.path(),
        &study(a, "loop:64M", &journal_factor),
        "same device",
    );
    assert!(e.contains("cell jdev=same"), "{e}");
    let data_factor = format!(
        "[[factor]]\nname = \"ddev\"\nvalues = [{{ label = \"onto-journal\", data = \"{b}\" }}]\n"
    );
    let e = refused(t.path(), &study(a, b, &data_factor), "same device");
    assert!(e.contains("cell ddev=onto-journal"), "{e}");
}

#[test]
fn privileged_two_paths_to_one_device_are_refused_at_plan_time() {
    if !require_root("privileged_two_paths_to_one_device_are_refused_at_plan_time") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // Detached when dropped, also when an assertion fails.
    let data = TestLoop::new(t.path(), "data.img", 64, true);
    let other = TestLoop::new(t.path(), "journal.img", 64, false);
    // Two distinct blank devices plan fine: the refusal below is about sameness.
    let (code, err) = plan(t.path(), &study(data.path(), other.path(), ""));
    assert_eq!(code, Some(0), "{err}");

    let link = t.path().join("journal-link");
    std::os::unix::fs::symlink(&data.dev, &link).unwrap();
    let e = refused(
        t.path(),
        &study(data.path(), link.to_str().unwrap(), ""),
        "same device",
    );
    assert!(
        e.contains(link.to_str().unwrap()) && e.contains(data.path()),
        "{e}"
    );

    // A partition of the data device is on the data device.
    let parts = sfdisk(data.path(), "label: dos\n,16M\n", 1);
    refused(
        t.path(),
        &study(data.path(), parts[0].to_str().unwrap(), ""),
        "lies on",
    );
}
