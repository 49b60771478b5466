//! Running workloads: single engine commands (`adhoc`) and, later, whole studies.

pub mod adhoc;
pub mod progress;
