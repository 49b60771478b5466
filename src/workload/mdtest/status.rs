//! mdtest's stonewall status file (`-x FILE`): after a stonewalled file creation (`-W`) rank 0
//! writes the number of files each rank made, as a bare decimal number (mdtest's
//! `StoreStoneWallingIterations`); a later run without creation reads it to know how many
//! files there are. fslab knows that number from its own record of the test directory
//! ([`super::record`]), so a status file it reads must agree with the record; a file it would
//! overwrite must be missing or a status file already (never a user's file with other text).

use super::layout::test_dir;
use super::params::MdtestParams;
use super::result::{Iteration, Phase};
use anyhow::{Context, Result};
use std::path::Path;

/// The number in status file `path`; `None` when there is no such file (mdtest then goes on
/// without it).
pub fn read(path: &Path) -> Result<Option<u64>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read -x {}", path.display())),
    };
    match text.trim().parse::<u64>() {
        Ok(n) => Ok(Some(n)),
        Err(_) => crate::bail_usage!(
            "-x {}: not an mdtest status file (it should hold one number, the files each rank made); give the file an earlier -W run wrote, or a new name",
            path.display()
        ),
    }
}

/// Before the run: what `-x` does with these parameters, checked. A creating run with `-W`
/// will write `path`, which must then be missing or a status file; a run without creation
/// reads it, and its number must be the one fslab recorded for each test directory in
/// `dir`. Returns a note for the user when `-x` has no effect or no file to read.
pub fn check(path: &Path, p: &MdtestParams, dir: &Path) -> Result<Option<String>> {
    if p.steps().create {
        if p.stonewall == 0 {
            return Ok(Some(format!(
                "-x {} has no effect without -W: mdtest writes it only after a stonewalled file creation",
                path.display()
            )));
        }
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if !m.is_file() {
                crate::bail_usage!(
                    "-x {}: not a regular file; give a new file name for the status file",
                    path.display()
                );
            }
            read(path)?;
        }
        return Ok(None);
    }
    let Some(n) = read(path)? else {
        return Ok(Some(format!(
            "-x {}: no such file; the file counts come from fslab's records of the test directories",
            path.display()
        )));
    };
    for j in 0..p.iterations {
        let td = test_dir(j);
        if let Some(files) = super::record::read(dir, &td)?.and_then(|r| r.files) {
            if files != n {
                crate::bail_usage!(
                    "-x {} says {n} files per rank, but fslab's record of {td} says {files}: the status file is another run's; give the -x file of the run that made {td}, or leave -x out",
                    path.display()
                );
            }
        }
    }
    Ok(None)
}

/// After iteration `it` of a creating run with `-W` on `ranks` ranks: write the files each
/// rank made to `path` (a stonewalled creation's count; nothing for an iteration without
/// file creation).
pub fn write(path: &Path, it: &Iteration, ranks: u32) -> Result<()> {
    let Some(r) = it.get(Phase::FileCreate) else {
        return Ok(());
    };
    let per_rank = r.items / u64::from(ranks.max(1));
    std::fs::write(path, per_rank.to_string())
        .with_context(|| format!("cannot write the status file -x {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mdtest::test_support::{go, params};

    #[test]
    fn a_stonewalled_creation_writes_and_a_later_run_checks_it() {
        let t = tempfile::tempdir().unwrap();
        let (d, x) = (t.path().join("md"), t.path().join("sw"));
        let creating = "-n 20 -F -C -W 60";
        let create = params(creating).0;
        assert_eq!(check(&x, &create, &d).unwrap(), None);
        let o = go(creating, &d).unwrap();
        write(&x, &o.iterations[0], 1).unwrap();
        assert_eq!(std::fs::read_to_string(&x).unwrap(), "20");
        // A stat run reads it: it agrees with fslab's record.
        let stat = params("-n 20 -F -T").0;
        assert_eq!(check(&x, &stat, &d).unwrap(), None);
        // Another run's count is refused, naming both numbers.
        std::fs::write(&x, "7\n").unwrap();
        let e = check(&x, &stat, &d).unwrap_err().to_string();
        assert!(
            e.contains("says 7 files per rank") && e.contains("says 20"),
            "{e}"
        );
        // A file holding anything else is never read as one, nor overwritten.
        std::fs::write(&x, "my notes").unwrap();
        assert!(check(&x, &create, &d)
            .unwrap_err()
            .to_string()
            .contains("not an mdtest status file"));
        assert_eq!(std::fs::read_to_string(&x).unwrap(), "my notes");
        // Missing: mdtest goes on without it, and so does fslab, saying so.
        let gone = t.path().join("none");
        let note = |p: &MdtestParams| check(&gone, p, &d).unwrap().unwrap();
        assert!(note(&stat).contains("no such file"));
        // Without -W a creating run never writes it.
        assert!(note(&params("-n 20 -F -C").0).contains("no effect without -W"));
        go("-n 20 -F -r", &d).unwrap();
    }
}
