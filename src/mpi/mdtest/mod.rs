//! mdtest's ranks under MPI: the engine's [`Team`] over the job's communicator, so that
//! `mpiexec -n N fslab mdtest …` runs the same engine as one process does, with barriers
//! between phases and rates over all ranks (the items of all ranks over the phase's first
//! start to last end, as mdtest computes them).

use crate::mpi::comm::Comm;
use crate::workload::mdtest::Team;
use std::rc::Rc;
use std::time::Duration;

/// How long a rank naps between polls while it waits in a reduction (a few per phase).
const NAP: Duration = Duration::from_micros(50);

/// The job's ranks as an mdtest team.
#[derive(Clone)]
pub struct CommTeam(pub Rc<Comm>);

impl Team for CommTeam {
    fn rank(&self) -> u32 {
        self.0.rank()
    }
    fn size(&self) -> u32 {
        self.0.size()
    }
    fn barrier(&self) {
        self.0.barrier()
    }
    fn agree(&self, local: anyhow::Result<()>) -> anyhow::Result<()> {
        self.0.agree(local)
    }
    fn sum_max(&self, sums: &[u64], maxes: &[u64]) -> (Vec<u64>, Vec<u64>) {
        self.0.sum_max_napping(sums, maxes, NAP)
    }
}
