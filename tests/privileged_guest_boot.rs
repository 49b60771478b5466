//! The guest on any x86-64 host (issue 21): `fslab doctor` boots it, and inside it several
//! threads of one process keep their own vector registers (AVX-512, AVX or SSE, whatever the
//! CPU has) across thousands of context switches. Where the host's XSAVE area is larger than
//! UML keeps (CPUs with AMX), that needs fslab's shim: switched off, the guest is refused
//! before it boots, in one line naming the cause. A guest that dies shows the kernel's last
//! lines and a one-line cause.
//!
//! Needs root and `scripts/install-deps --test`; fails loudly without them unless
//! FSLAB_SKIP_GUEST=1 is set on purpose.

mod common;

use common::{fslab, require_guest};
use serde_json::Value;

fn doctor(env: &[(&str, &str)]) -> (Option<i32>, Vec<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = fslab(dir.path());
    c.args(["doctor", "--format", "json"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    let se = String::from_utf8_lossy(&out.stderr).into_owned();
    let checks: Vec<Value> =
        serde_json::from_str(&so).unwrap_or_else(|e| panic!("{e}: {so}\n{se}"));
    (out.status.code(), checks, se)
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {checks:?}"))
}

#[test]
fn privileged_doctor_boots_the_guest_and_its_threads_keep_their_vector_registers() {
    if !require_guest(
        "privileged_doctor_boots_the_guest_and_its_threads_keep_their_vector_registers",
    ) {
        return;
    }
    let (_, checks, se) = doctor(&[]);
    let boot = check(&checks, "guest.boot");
    assert_eq!(boot["ok"], true, "{boot}\n{se}");
    let vectors = check(&checks, "guest.vectors");
    assert_eq!(vectors["ok"], true, "{vectors}\n{se}");
    assert!(
        vectors["detail"]
            .as_str()
            .unwrap()
            .contains("4 threads kept their"),
        "{vectors}"
    );
    // The classic studies' file systems: each made on the host or in the guest.
    for fs in ["nilfs2", "jfs", "reiserfs", "ext4"] {
        let c = check(&checks, &format!("fs.{fs}"));
        assert_eq!(c["ok"], true, "{c}");
    }
}

#[test]
fn privileged_with_the_shim_switched_off_a_host_that_needs_it_is_refused_in_one_line() {
    if !require_guest(
        "privileged_with_the_shim_switched_off_a_host_that_needs_it_is_refused_in_one_line",
    ) {
        return;
    }
    let (code, checks, _) = doctor(&[("FSLAB_GUEST_XSTATE_SHIM", "off")]);
    let guest = checks.iter().find(|c| c["check"] == "guest");
    match guest {
        // A host whose XSAVE area is larger than UML's (AMX): refused, the cause named.
        Some(g) => {
            assert_eq!(g["ok"], false, "{g}");
            let d = g["detail"].as_str().unwrap();
            assert!(
                d.contains("XSAVE area is") && d.contains("FSLAB_GUEST_XSTATE_SHIM"),
                "{d}"
            );
            assert_eq!(code, Some(1), "a ✗ line makes doctor exit 1");
        }
        // A host whose area fits: no shim needed, the registers are kept without it.
        None => assert_eq!(check(&checks, "guest.vectors")["ok"], true, "{checks:?}"),
    }
}

#[test]
fn privileged_a_guest_that_dies_shows_the_kernels_last_lines_and_the_cause() {
    if !require_guest("privileged_a_guest_that_dies_shows_the_kernels_last_lines_and_the_cause") {
        return;
    }
    // A stand-in linux.uml that prints a panic like the one on AMX hosts and aborts.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("linux.uml");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'Run /bin/sh as init process'\necho 'userspace - ptrace set fp regs failed, errno = 14'\necho 'Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b'\nkill -ABRT $$\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let study = dir.path().join("s.toml");
    std::fs::write(
        &study,
        "name = \"dies\"\n[repetitions]\nmin = 1\n[device]\ndata = \"loop:256M\"\n[filesystem]\ntype = \"ext4\"\n[[workload]]\nkind = \"fdtree\"\ndirs = 1\nfiles = 1\nlevels = 1\n",
    )
    .unwrap();
    let work = dir.path().join("work");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = fslab(dir.path())
        .env("PATH", path)
        .args(["study", "run", "-q", "--guest", "uml:128M"])
        .arg(&study)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("the guest kernel's last lines:"), "{se}");
    assert!(se.contains("  Kernel panic - not syncing"), "{se}");
    let last = se.trim_end().lines().last().unwrap();
    assert!(
        last.contains("without fslab's exit code: User-mode Linux could not set a guest thread's vector registers"),
        "{last}"
    );
    // Everything made for the guest is gone.
    let left: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("guest-") && n != "guest-work")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn privileged_a_calibrated_guest_study_reports_how_much_slower_the_guest_is() {
    if !require_guest("privileged_a_calibrated_guest_study_reports_how_much_slower_the_guest_is") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("cal.toml");
    std::fs::write(
        &study,
        r#"
name = "calibrated"
[repetitions]
min = 2
cache = "cold"
[device]
data = "loop:512M"
[filesystem]
type = "nilfs2"
[guest]
kind = "uml"
mem = "384M"
calibrate = ["ext4", "xfs"]
[[workload]]
kind = "fdtree"
dirs = 3
files = 4
size_blocks = 1
levels = 2
"#,
    )
    .unwrap();
    let work = dir.path().join("work");
    let out = fslab(dir.path())
        .args(["study", "run", "-q"])
        .arg(&study)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{so}\n{se}");
    assert!(
        se.contains("guest calibration on the host: study 1 (complete)"),
        "{se}"
    );
    assert!(
        se.contains("guest calibration in the guest: study 2 (complete)"),
        "{se}"
    );
    // The study's own report: the calibration section and the factor in the guest warning.
    assert!(so.contains("== Guest calibration =="), "{so}");
    // (Lines wrap at 100 columns: compare with the breaks as spaces.)
    let flat = so.split_whitespace().collect::<Vec<_>>().join(" ");
    // Slowdowns per metric kind (fdtree's headlines are rates), and what the guest keeps of
    // the host's xfs/ext4 difference, with its interval, per metric.
    assert!(
        flat.contains("its calibration on ext4 and xfs measured the guest: rates and throughput "),
        "{so}"
    );
    assert!(!flat.contains("0.4× slower") && !flat.contains("reverses the host's difference"));
    assert!(flat.contains("95% interval"), "{so}");
    let json = fslab(dir.path())
        .args(["report", "calibrated", "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&json.stdout).unwrap();
    let c = &r["guest_calibration"];
    assert_eq!(
        (c["host_study"].as_i64(), c["guest_study"].as_i64()),
        (Some(1), Some(2))
    );
    let rows = c["rows"].as_array().unwrap();
    let phases: Vec<&str> = rows.iter().map(|r| r["phase"].as_str().unwrap()).collect();
    assert_eq!(
        phases,
        [
            "dir_create",
            "file_create",
            "file_remove",
            "dir_remove",
            "dir_create",
            "file_create",
            "file_remove",
            "dir_remove"
        ],
        "{c}"
    );
    let ratios = c["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 4, "{c}");
    for r in ratios {
        assert_eq!(
            (r["fs"].as_str(), r["against"].as_str()),
            (Some("xfs"), Some("ext4"))
        );
        // Two repetitions a side: an interval, low end first.
        let ci = r["kept_ci"].as_array().unwrap_or_else(|| panic!("{r}"));
        assert!(ci[0].as_f64().unwrap() <= ci[1].as_f64().unwrap(), "{r}");
    }
    for row in rows.iter().filter(|r| r["fs"] == "ext4") {
        assert_eq!(
            (row["host_n"].as_u64(), row["guest_n"].as_u64()),
            (Some(2), Some(2))
        );
        let (h, g, s) = (
            row["host"].as_f64().unwrap(),
            row["guest"].as_f64().unwrap(),
            row["slower"].as_f64().unwrap(),
        );
        assert!(h > 0.0 && g > 0.0 && (s - h / g).abs() < 1e-9 * s, "{row}");
    }
    // The calibration studies are ordinary studies in the list; nothing is left behind.
    // (`--json`: the one-line list shortens long names.)
    let list = fslab(dir.path()).args(["list", "--json"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.contains("calibrated.calibration.host")
            && list.contains("calibrated.calibration.guest"),
        "{list}"
    );
    let left: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("guest-") && n != "guest-work")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Issue 33: a guest the machine cannot hold is refused first — by `doctor`, and by `study
/// run` before the host's calibration runs or anything is stored or made.
#[test]
fn privileged_a_guest_larger_than_the_machine_can_spare_is_refused_first() {
    if !require_guest("privileged_a_guest_larger_than_the_machine_can_spare_is_refused_first") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = fslab(dir.path())
        .args(["doctor", "--format", "json", "--guest-mem", "100000G"])
        .output()
        .unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let checks: Vec<Value> = serde_json::from_str(&so).unwrap();
    let guest = check(&checks, "guest");
    assert_eq!(guest["ok"], false, "{guest}");
    let d = guest["detail"].as_str().unwrap();
    assert!(
        d.contains("the guest's 97.7 TiB of memory is more than the") && d.contains("can spare"),
        "{d}"
    );

    let study = dir.path().join("big.toml");
    std::fs::write(
        &study,
        "name = \"big\"\n[device]\ndata = \"loop:64M\"\n[filesystem]\ntype = \"nilfs2\"\n\
         [guest]\nkind = \"uml\"\nmem = \"100000G\"\ncalibrate = \"ext4\"\n\
         [[workload]]\nkind = \"fdtree\"\ndirs = 1\nfiles = 1\nlevels = 1\n",
    )
    .unwrap();
    let work = dir.path().join("work");
    let out = fslab(dir.path())
        .args(["study", "run", "-q"])
        .arg(&study)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert_eq!(se.trim().lines().count(), 1, "{se}");
    assert!(se.contains("can spare"), "{se}");
    // Nothing ran or was stored or made: no calibration, no store, no work directory.
    assert!(!se.contains("calibration"), "{se}");
    assert!(!dir.path().join("results.db").exists());
    assert!(!work.exists());
}

/// Issue 33: `study plan` shows a guest study's calibration and counts it in the ETA.
#[test]
fn privileged_study_plan_shows_the_guest_calibration_and_counts_it() {
    if !require_guest("privileged_study_plan_shows_the_guest_calibration_and_counts_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = |calibrate: &str| {
        format!(
            "name = \"planned\"\n[repetitions]\nmin = 5\n[device]\ndata = \"loop:512M\"\n\
             [filesystem]\ntype = \"nilfs2\"\n[guest]\nkind = \"uml\"\nmem = \"384M\"\n{calibrate}\
             [[workload]]\nkind = \"fdtree\"\ndirs = 3\nfiles = 20\nlevels = 2\n"
        )
    };
    let plan = |name: &str, calibrate: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text(calibrate)).unwrap();
        let out = fslab(dir.path())
            .args(["study", "plan"])
            .arg(&file)
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{so}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let eta = so
            .lines()
            .find_map(|l| l.strip_prefix("ETA: "))
            .unwrap()
            .to_string();
        (so, eta)
    };
    let (plain, plain_eta) = plan("plain.toml", "");
    assert!(!plain.contains("guest calibration"), "{plain}");
    let (so, eta) = plan("cal.toml", "calibrate = [\"ext4\", \"xfs\"]\n");
    let line = so
        .lines()
        .find(|l| l.starts_with("guest calibration, before the study:"))
        .unwrap_or_else(|| panic!("{so}"));
    assert!(
        line.contains(
            "ext4 and xfs (2 cell(s), 5 repetitions each) on the host, then the same in the guest"
        ) && line.contains("'planned.calibration.host'")
            && line.contains("'planned.calibration.guest'"),
        "{line}"
    );
    assert_ne!(eta, plain_eta, "the calibration counts in the ETA");
}
