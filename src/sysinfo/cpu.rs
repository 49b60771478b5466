//! The CPU from `/proc/cpuinfo`: model name, number of processors, and the `hypervisor` flag
//! (x86 CPUs show it inside a virtual machine).
//!
//! Parsed with `procfs-core` (the parsing half of the maintained `procfs` crate): the format
//! is one `key : value` block per processor with keys that differ per architecture, and the
//! crate already splits it into per-CPU maps with the common fields merged. We read the file
//! ourselves so the same code parses captured text in the tests.

use procfs_core::{CpuInfo, FromRead};

/// What `/proc/cpuinfo` says about the CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuFacts {
    /// Model name as the kernel prints it (`AMD EPYC 7B13`), or on architectures without one
    /// the identifying fields it gives instead (arm64: implementer and part numbers).
    pub model: Option<String>,
    /// Processors listed (the online CPUs of the machine, not those this process may use).
    pub count: usize,
    /// Whether the first CPU has the `hypervisor` flag (x86: running under a hypervisor).
    pub hypervisor_flag: bool,
}

/// Parse the text of `/proc/cpuinfo`; `None` when it holds no processor.
pub fn parse_cpuinfo(text: &str) -> Option<CpuFacts> {
    let info = CpuInfo::from_read(text.as_bytes()).ok()?;
    // Fields every CPU shares move to `info.fields` (all of them with one CPU), so a CPU is
    // counted by its `processor` field wherever it landed.
    let count = (0..info.cpus.len())
        .filter(|&i| info.get_field(i, "processor").is_some())
        .count();
    if count == 0 {
        return None;
    }
    let field = |k: &str| {
        info.get_field(0, k)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    // x86 `model name`; 32-bit ARM `Processor`; MIPS `cpu model`; POWER `cpu`; arm64 prints
    // only numbers, which are kept as they are rather than guessed at.
    let model = ["model name", "Processor", "cpu model", "cpu"]
        .iter()
        .find_map(|k| field(k))
        .or_else(|| {
            let (imp, part) = (field("CPU implementer")?, field("CPU part")?);
            Some(format!("CPU implementer {imp}, part {part}"))
        });
    let hypervisor_flag = info.flags(0).is_some_and(|f| f.contains(&"hypervisor"));
    Some(CpuFacts {
        model,
        count,
        hypervisor_flag,
    })
}

/// The CPU facts of this machine, if `/proc/cpuinfo` can be read.
pub fn cpu_facts() -> Option<CpuFacts> {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| parse_cpuinfo(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_x86_guest_has_a_model_name_and_the_hypervisor_flag() {
        let f = parse_cpuinfo(include_str!("fixtures/cpuinfo-kvm-amd-epyc.txt")).unwrap();
        assert_eq!(
            f,
            CpuFacts {
                model: Some("AMD EPYC".into()),
                count: 2,
                hypervisor_flag: true
            }
        );
    }

    #[test]
    fn arm64_gives_its_part_numbers_and_no_flag() {
        let f = parse_cpuinfo(include_str!("fixtures/cpuinfo-arm64-neoverse-n1.txt")).unwrap();
        assert_eq!(f.model.as_deref(), Some("CPU implementer 0x41, part 0xd0c"));
        assert_eq!((f.count, f.hypervisor_flag), (2, false));
    }

    #[test]
    fn a_bare_metal_flag_list_and_garbage() {
        let text = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) E-2236 CPU @ 3.40GHz\nflags\t\t: fpu vme hypervisorx\n";
        let f = parse_cpuinfo(text).unwrap();
        assert_eq!(
            f.model.as_deref(),
            Some("Intel(R) Xeon(R) E-2236 CPU @ 3.40GHz")
        );
        assert!(!f.hypervisor_flag, "only the whole word counts");
        assert_eq!(parse_cpuinfo(""), None);
        assert_eq!(parse_cpuinfo("no cpus here\n"), None);
    }

    #[test]
    fn this_machine_has_cpus() {
        let f = cpu_facts().unwrap();
        assert!(f.count >= 1);
        assert!(f.model.is_some_and(|m| !m.is_empty()));
    }
}
