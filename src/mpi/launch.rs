//! How fslab knows it was started by an MPI launcher (`mpiexec`, `mpirun`, `srun`).
//!
//! MPI launchers put the rank and the job size into each process's environment before
//! `MPI_Init` runs. fslab reads them (no MPI call is needed for that, so even a build without
//! the `mpi` feature can tell that it is one of several ranks and refuse to run N copies that
//! would each write their own results):
//!
//! | variables                                   | set by                                        |
//! |---------------------------------------------|-----------------------------------------------|
//! | `PMI_RANK`, `PMI_SIZE`                      | MPICH hydra, Intel MPI, Slurm `--mpi=pmi2`    |
//! | `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE` | Open MPI `mpirun`                          |
//! | `PMIX_RANK`                                 | PMIx launchers (Open MPI 5, Slurm `--mpi=pmix`) |
//! | `MV2_COMM_WORLD_RANK`, `MV2_COMM_WORLD_SIZE` | MVAPICH2                                     |
//!
//! `FSLAB_MPI=1` forces MPI mode (for a launcher that sets none of these, or a 1-process
//! "singleton" run without a launcher); `FSLAB_MPI=0` turns detection off, so every process
//! runs on its own as if started without a launcher.

/// What the environment says about the launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// This process's rank, if the launcher says.
    pub rank: Option<u32>,
    /// Number of ranks in the job, if the launcher says.
    pub size: Option<u32>,
    /// Which variable revealed the launcher (for messages), e.g. `PMI_SIZE`.
    pub source: &'static str,
}

impl Launch {
    /// True when this is certainly one of several ranks.
    pub fn is_multi(&self) -> bool {
        self.size.is_some_and(|s| s > 1) || self.rank.is_some_and(|r| r > 0)
    }

    /// "one of 4 ranks (PMI_SIZE)" for messages.
    pub fn describe(&self) -> String {
        match self.size {
            Some(n) => format!("one of {n} ranks ({})", self.source),
            None => format!("one of several ranks ({})", self.source),
        }
    }
}

/// Rank and size variable pairs, in the order they are tried.
const PAIRS: [(&str, Option<&str>); 4] = [
    ("PMI_RANK", Some("PMI_SIZE")),
    ("OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
    ("MV2_COMM_WORLD_RANK", Some("MV2_COMM_WORLD_SIZE")),
    ("PMIX_RANK", None),
];

/// Detect a launch from an environment lookup function (testable without touching the
/// process environment). `Ok(None)`: not started by a launcher (or `FSLAB_MPI=0`).
pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Launch>> {
    let num = |var: &'static str| -> anyhow::Result<Option<u32>> {
        let Some(v) = get(var) else { return Ok(None) };
        match v.trim().parse::<u32>() {
            Ok(n) => Ok(Some(n)),
            Err(_) => crate::bail_usage!(
                "{var}={v:?} is not a rank number; unset it, or set FSLAB_MPI=0 to ignore MPI launcher variables"
            ),
        }
    };
    let forced = get("FSLAB_MPI");
    match forced.as_deref().map(str::trim) {
        Some("0") => return Ok(None),
        Some("1") | None | Some("") => {}
        Some(other) => crate::bail_usage!(
            "FSLAB_MPI={other:?}: use FSLAB_MPI=1 to force MPI mode or FSLAB_MPI=0 to turn it off"
        ),
    }
    for (rank_var, size_var) in PAIRS {
        let rank = num(rank_var)?;
        let size = size_var.map(num).transpose()?.flatten();
        if rank.is_some() || size.is_some() {
            let source = size_var.filter(|_| size.is_some()).unwrap_or(rank_var);
            return Ok(Some(Launch { rank, size, source }));
        }
    }
    let on = forced.as_deref().map(str::trim) == Some("1");
    Ok(on.then_some(Launch {
        rank: None,
        size: None,
        source: "FSLAB_MPI",
    }))
}

/// Detect a launch from the process environment.
pub fn from_env() -> anyhow::Result<Option<Launch>> {
    from_vars(|k| std::env::var(k).ok())
}

/// In a build without the `mpi` feature: refuse to run as one of several ranks (every rank
/// would run the whole benchmark and store its own copy of the results).
pub fn refuse_without_feature(launch: Option<&Launch>) -> anyhow::Result<()> {
    match launch {
        Some(l) if l.is_multi() || l.source == "FSLAB_MPI" => crate::bail_usage!(
            "this fslab runs as {} but was built without MPI support; rebuild with `cargo build --release --features mpi` (see doc/mpi.md), or set FSLAB_MPI=0 to run independent copies",
            l.describe()
        ),
        _ => Ok(()),
    }
}

/// For a command that has no MPI mode (`list`, `show`, …): refuse to run it as one of several
/// ranks; `command` names it for the message.
pub fn refuse_for_command(launch: Option<&Launch>, command: &str) -> anyhow::Result<()> {
    match launch {
        Some(l) if l.is_multi() => {
            let engines: Vec<&str> = crate::workload::WorkloadKind::ALL
                .into_iter()
                .filter(|k| k.caps().mpi)
                .map(|k| k.as_str())
                .collect();
            crate::bail_usage!(
                "`fslab {command}` has no MPI mode but runs as {}; run it without mpiexec (MPI mode: {}; see doc/mpi.md)",
                l.describe(),
                engines.join(", ")
            )
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(vars: &[(&str, &str)]) -> anyhow::Result<Option<Launch>> {
        from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    /// The launch `vars` reveal (the test fails if they reveal none).
    fn launch(vars: &[(&str, &str)]) -> Launch {
        detect(vars).unwrap().unwrap()
    }

    #[test]
    fn no_launcher_means_no_mpi() {
        assert_eq!(detect(&[("HOME", "/root")]).unwrap(), None);
    }

    #[test]
    fn hydra_open_mpi_and_pmix_are_recognised() {
        let l = launch(&[("PMI_RANK", "3"), ("PMI_SIZE", "4")]);
        assert_eq!((l.rank, l.size, l.source), (Some(3), Some(4), "PMI_SIZE"));
        assert!(l.is_multi());
        let o = launch(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "1")]);
        assert!(!o.is_multi());
        let p = launch(&[("PMIX_RANK", "0")]);
        assert_eq!((p.rank, p.size), (Some(0), None));
        assert!(!p.is_multi());
        assert!(launch(&[("PMIX_RANK", "2")]).is_multi());
    }

    #[test]
    fn fslab_mpi_forces_or_disables() {
        assert_eq!(
            detect(&[("FSLAB_MPI", "0"), ("PMI_SIZE", "4")]).unwrap(),
            None
        );
        let f = launch(&[("FSLAB_MPI", "1")]);
        assert_eq!(f.source, "FSLAB_MPI");
        assert!(detect(&[("FSLAB_MPI", "yes")]).is_err());
    }

    #[test]
    fn garbage_rank_is_a_usage_error() {
        let e = detect(&[("PMI_RANK", "x")]).unwrap_err();
        assert!(e.to_string().contains("PMI_RANK"));
        assert_eq!(crate::error::exit_code(&e), 2);
    }

    #[test]
    fn builds_without_mpi_refuse_several_ranks() {
        let multi = launch(&[("PMI_RANK", "1"), ("PMI_SIZE", "2")]);
        let single = launch(&[("PMI_RANK", "0"), ("PMI_SIZE", "1")]);
        let e = refuse_without_feature(Some(&multi)).unwrap_err();
        assert!(e.to_string().contains("--features mpi"), "{e}");
        assert!(refuse_without_feature(Some(&single)).is_ok());
        assert!(refuse_without_feature(None).is_ok());
        let e = refuse_for_command(Some(&multi), "list")
            .unwrap_err()
            .to_string();
        // The engines with an MPI mode, from the registry (the newest was missing from a list
        // written by hand).
        let (_, named) = e.split_once("MPI mode: ").unwrap();
        let named = named.split(';').next().unwrap();
        for k in crate::workload::WorkloadKind::ALL {
            assert_eq!(named.contains(k.as_str()), k.caps().mpi, "{k}: {e}");
        }
        assert!(refuse_for_command(Some(&single), "list").is_ok());
    }
}
