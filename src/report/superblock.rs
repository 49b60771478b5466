//! A one-line summary of a configuration's stored superblock dump (`dumpe2fs -h`, `xfs_info`,
//! `btrfs inspect-internal dump-super`, `jfs_tune -l`, `debugreiserfs`), for the reports
//! that do not print the dump whole (`--env summary`, the default of the text formats).

/// `key: value` lines (dumpe2fs, jfs_tune, debugreiserfs) and the label each is shown with.
const COLON_KEYS: [(&str, &str); 8] = [
    ("Block size", "block size"),
    ("Aggregate block size", "block size"),
    ("Blocksize", "block size"),
    ("Inode count", "inodes"),
    ("Journal size", "journal"),
    ("Total journal size", "journal"),
    ("Journal device", "journal device"),
    ("Filesystem features", "features"),
];

/// The facts of a dump that tell configurations apart, joined with ` · `: `block size 4096 ·
/// inodes 65536 · journal 16M · features has_journal ext_attr …`; for XFS the data block size
/// and the log's placement and blocks; the number of lines when nothing is recognised.
pub fn summary(dump: &str) -> String {
    let mut facts: Vec<String> = Vec::new();
    for (key, label) in COLON_KEYS {
        let value = dump.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        });
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            let fact = format!("{label} {v}");
            if !facts.iter().any(|f| f.starts_with(label)) {
                facts.push(fact);
            }
        }
    }
    // xfs_info: `data     =    bsize=4096   blocks=…` and `log      =internal log  bsize=4096
    // blocks=2560, version=2`.
    for l in dump.lines() {
        let t = l.trim_start();
        let kv = |key: &str| {
            t.split(|c: char| c.is_whitespace() || c == ',')
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        if let Some(rest) = t.strip_prefix("data") {
            if rest.trim_start().starts_with('=') {
                if let Some(b) = kv("bsize") {
                    facts.push(format!("block size {b}"));
                }
            }
        } else if let Some(rest) = t.strip_prefix("log") {
            let rest = rest.trim_start();
            if let Some(place) = rest.strip_prefix('=') {
                let place = place.split_whitespace().next().unwrap_or("");
                let blocks = kv("blocks")
                    .map(|b| format!(" {b} blocks"))
                    .unwrap_or_default();
                facts.push(format!("log {place}{blocks}"));
            }
        } else if let Some(v) = t.strip_prefix("sectorsize") {
            facts.push(format!("sector size {}", v.trim()));
        } else if let Some(v) = t.strip_prefix("nodesize") {
            facts.push(format!("node size {}", v.trim()));
        }
    }
    if facts.is_empty() {
        format!("{} lines", dump.lines().count())
    } else {
        facts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn ext4_dumps_give_block_size_inodes_journal_and_features() {
        let dump = "dumpe2fs 1.47.0 (5-Feb-2023)\nFilesystem volume name:   <none>\n\
Filesystem features:      has_journal ext_attr extent 64bit\nInode count:              65536\n\
Block size:               4096\nJournal features:         (none)\nTotal journal size:       16M\n";
        assert_eq!(
            summary(dump),
            "block size 4096 · inodes 65536 · journal 16M · features has_journal ext_attr extent 64bit"
        );
    }

    #[test]
    fn xfs_info_gives_block_size_and_log_placement() {
        let info = "meta-data=/dev/loop0 isize=512 agcount=4, agsize=16384 blks\n\
data     =                       bsize=4096   blocks=65536, imaxpct=25\n\
naming   =version 2              bsize=4096   ascii-ci=0, ftype=1\n\
log      =external               bsize=4096   blocks=4096, version=2\n";
        assert_eq!(summary(info), "block size 4096 · log external 4096 blocks");
    }

    #[test]
    fn unknown_dumps_say_how_long_they_are() {
        assert_eq!(summary("a\nb\nc\n"), "3 lines");
    }
}
