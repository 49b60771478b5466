//! The space a study writes in its work directory against what is free there: what `study
//! plan` warns of and `study run` refuses before it provisions anything.

use super::Study;
use crate::units::fmt_bytes;

/// The space a study writes in its work directory against what is free there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// About this many bytes written at the peak if every cell is mounted at once: per cell
    /// its largest workload's data and its journal (loop images are sparse).
    pub written: u64,
    /// Bytes free under the work directory (or its nearest existing parent).
    pub free: u64,
}

impl Space {
    /// The study's space in the work directory `root`.
    pub fn of(study: &Study, root: &std::path::Path) -> Space {
        let free = crate::sysinfo::free_space(
            std::iter::successors(Some(root), |p| p.parent())
                .find(|p| p.exists())
                .unwrap_or(std::path::Path::new("/")),
        )
        .map(|f| f.bytes)
        .unwrap_or(0);
        let written = study
            .cells
            .iter()
            .map(|c| {
                let data: u64 = c
                    .workloads
                    .iter()
                    .map(|w| w.build().map(|e| e.requirements().bytes).unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                data.saturating_add(c.fs.journal_size.unwrap_or(0))
            })
            .fold(0u64, u64::saturating_add);
        Space { written, free }
    }

    /// One line when the study may write more than is free (what `study plan` warns of and
    /// `study run` refuses), naming the fix.
    pub fn shortfall(&self, root: &std::path::Path) -> Option<String> {
        (self.written > self.free).then(|| {
            format!(
                "the study may write about {} at the peak, more than the {} free under the work directory {}; choose another --workdir",
                fmt_bytes(self.written),
                fmt_bytes(self.free),
                root.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_shortfall_is_one_line_naming_the_sizes_and_the_fix() {
        let root = Path::new("/var/tmp/w");
        let short = Space {
            written: 200 << 20,
            free: 64 << 20,
        };
        let line = short.shortfall(root).unwrap();
        assert!(
            line.contains("200.0 MiB") && line.contains("64.0 MiB"),
            "{line}"
        );
        assert!(
            line.ends_with("/var/tmp/w; choose another --workdir"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let fits = Space {
            written: 64 << 20,
            free: 64 << 20,
        };
        assert_eq!(fits.shortfall(root), None);
    }
}
