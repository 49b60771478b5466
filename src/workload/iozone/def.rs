//! IOzone's registration: its stored name, what it can do, and how its study-file spec
//! builds the engine.

use super::{Iozone, IozoneSpec};
use crate::workload::{Caps, Counts, EngineSpec, Larger, ResultClass, Workload};
use anyhow::Result;

/// The stored name, the study file's `kind`.
pub const NAME: &str = "iozone";

/// What IOzone can do.
pub const CAPS: Caps = Caps {
    mpi: true,
    histograms: false,
    timed: false,
    headline: &[("*", "throughput")],
    headline_marked: &[],
    primary: &["throughput"],
    larger: Larger {
        words: "larger files",
        keys: "file_size",
        flags: "-s",
    },
    dataset_vs_ram: true,
    class: |phase| {
        if phase.contains("read") {
            ResultClass::Read
        } else {
            ResultClass::Write
        }
    },
    counts: |_| Counts::Records,
    entry_words: ("IOzone", "test file"),
    tree: None,
};

impl EngineSpec for IozoneSpec {
    fn label(&self) -> String {
        IozoneSpec::label(self)
    }
    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(Iozone::new(self.to_params()?)))
    }
}
