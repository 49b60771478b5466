//! What `blkid -p` reports as a signature on a device itself, as opposed to the partition
//! entry it also reports for a partition (util-linux blkid(8), `-o export` tags).

/// What `blkid -p -o export` found on the device itself.
///
/// On a partition, blkid also reports the partition's entry in the parent's table
/// (`PART_ENTRY_SCHEME`, `PART_ENTRY_TYPE`, …) and `DEVNAME`: those describe where the
/// partition is, not what is on it, and are no signature. Every other tag is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// What kind: "a file-system signature", "a partition-table signature", ….
    pub kind: &'static str,
    /// The tags that name it (`TYPE=ext4 USAGE=filesystem`).
    pub tags: String,
}

impl Signature {
    /// The signature in `blkid -p -o export` output, if any.
    pub fn from_blkid(export: &str) -> Option<Signature> {
        let own: Vec<&str> = export
            .lines()
            .map(str::trim)
            .filter(|l| {
                !l.is_empty() && !l.starts_with("DEVNAME=") && !l.starts_with("PART_ENTRY_")
            })
            .collect();
        if own.is_empty() {
            return None;
        }
        let value = |key: &str| own.iter().find_map(|l| l.strip_prefix(key));
        let kind = match value("USAGE=") {
            Some("filesystem") => "a file-system signature",
            Some("raid") => "a RAID signature",
            Some("crypto") => "an encryption signature",
            Some("other") if value("TYPE=") == Some("swap") => "a swap signature",
            _ if value("PTTYPE=").is_some() => "a partition-table signature",
            _ => "a signature",
        };
        let named: Vec<&str> = own
            .iter()
            .copied()
            .filter(|l| {
                ["TYPE=", "PTTYPE=", "USAGE="]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .collect();
        let tags = if named.is_empty() { own } else { named };
        Some(Signature {
            kind,
            tags: tags.join(" "),
        })
    }
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.kind, self.tags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_entry_is_no_signature() {
        let blank = "DEVNAME=/dev/loop0p1\nPART_ENTRY_SCHEME=dos\nPART_ENTRY_UUID=4face52b-01\nPART_ENTRY_TYPE=0x83\nPART_ENTRY_NUMBER=1\nPART_ENTRY_OFFSET=2048\nPART_ENTRY_SIZE=32768\nPART_ENTRY_DISK=7:0\n";
        assert_eq!(Signature::from_blkid(blank), None);
        assert_eq!(Signature::from_blkid(""), None);
        let ext4 = format!("DEVNAME=/dev/loop0p2\nUUID=ee40\nVERSION=1.0\nBLOCK_SIZE=1024\nTYPE=ext4\nUSAGE=filesystem\n{}", &blank[21..]);
        let s = Signature::from_blkid(&ext4).unwrap();
        assert_eq!(
            s.to_string(),
            "a file-system signature (TYPE=ext4 USAGE=filesystem)"
        );
        let table = Signature::from_blkid("DEVNAME=/dev/loop1\nPTUUID=1234\nPTTYPE=gpt\n").unwrap();
        assert_eq!(
            table.to_string(),
            "a partition-table signature (PTTYPE=gpt)"
        );
        let odd = Signature::from_blkid("DEVNAME=/dev/loop1\nSBMAGIC=xyz\n").unwrap();
        assert_eq!(odd.to_string(), "a signature (SBMAGIC=xyz)");
    }
}
