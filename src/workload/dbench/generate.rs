//! fslab's own default loadfile: a seeded generator modelling one small-office client
//! working on a file server (documents, spreadsheets, project files, a mail store).
//!
//! The output is an ordinary NBENCH loadfile (dbench 4 can replay it too): no timestamps,
//! so, like dbench's `client.txt`, it is a throughput load. One pass is one work session:
//!
//! 1. set-up: `Deltree` of the client tree, the directory layout, an initial population of
//!    documents and an 8 MiB mail store, all written sequentially in 64 KiB requests;
//! 2. a sequence of tasks drawn with fixed weights (see [`TASKS`]): browsing folders,
//!    opening and reading documents, the Office "safe save" (write a temp file, flush,
//!    rename the original away, rename the temp file in place, delete the original),
//!    creating, renaming and deleting documents, locked page updates in the mail store,
//!    partial reads of large files, and probes for names that do not exist
//!    (`desktop.ini`, owner lock files).
//!
//! File sizes are drawn from a mix of four classes, log-uniform by octave (see
//! [`SIZE_CLASSES`]):
//! most files are small while most bytes sit in the few large ones, the shape that
//! file-system metadata studies report (Agrawal et al., FAST 2007; Tanenbaum et al., 2006).
//! The classes are a modelling choice, not a measured distribution. The generator keeps
//! a model of the tree, so every expected status and every ReadX size in the output is
//! what a correct file system returns; a replay that disagrees fails loudly.
//!
//! The same seed always gives the same bytes (Mersenne Twister, `rand_mt`).

use rand_mt::Mt64;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Seed of the default loadfile used when no `-c` is given.
pub const DEFAULT_SEED: u64 = 2024;

/// Tasks per pass of the default loadfile.
pub const DEFAULT_TASKS: u32 = 1500;

/// Version of the model; it is written into the loadfile's header comment.
pub const MODEL_VERSION: u32 = 1;

/// File-size classes: (share of files in %, smallest, largest bytes); within a class an
/// octave is picked uniformly, then a size uniformly inside it. Bounds are powers of two.
pub const SIZE_CLASSES: [(u32, u64, u64); 4] = [
    (45, 1 << 10, 16 << 10),
    (35, 16 << 10, 256 << 10),
    (17, 256 << 10, 2 << 20),
    (3, 2 << 20, 8 << 20),
];

/// How the generator writes one task.
pub type Task = fn(&mut Gen);

/// Tasks, their weights in % of the tasks of a pass, and the generator's writer of each.
pub const TASKS: [(&str, u32, Task); 9] = [
    ("browse a folder", 20, Gen::browse),
    ("open and read a document", 28, Gen::open_read),
    ("edit and safe-save a document", 14, Gen::safe_save),
    ("create a new document", 6, Gen::new_doc),
    ("delete a document", 5, Gen::delete),
    ("rename a document", 3, Gen::rename),
    ("locked update of the mail store", 10, Gen::mail_update),
    ("partial read of a large file", 7, Gen::partial_read),
    ("probe for missing names, check free space", 7, Gen::probe),
];

const DIRS: [&str; 6] = [
    "Documents",
    "Spreadsheets",
    "Projects",
    "Projects\\Alpha",
    "Projects\\Beta",
    "Mail",
];
/// Directories that hold documents (all but the parent `Projects` and `Mail`).
const DOC_DIRS: [&str; 4] = [
    "Documents",
    "Spreadsheets",
    "Projects\\Alpha",
    "Projects\\Beta",
];
const INITIAL_FILES: usize = 48;
const MAILBOX: &str = "Mail\\mailbox.pst";
const MAILBOX_SIZE: u64 = 8 << 20;
const CHUNK: u64 = 65536;
const ROOT: &str = "\\clients\\client1";
const OK: &str = "NT_STATUS_OK";
const NOT_FOUND: &str = "NT_STATUS_OBJECT_NAME_NOT_FOUND";

/// The offset and length of each [`CHUNK`] of `size` bytes, in order (the last one short).
fn chunks(size: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..size)
        .step_by(CHUNK as usize)
        .map(move |off| (off, CHUNK.min(size - off)))
}

/// The generator: its random source, the loadfile written so far, its model of the tree.
pub struct Gen {
    rng: Mt64,
    out: String,
    /// Model of the tree: document path (relative to the client root) → size.
    files: BTreeMap<String, u64>,
    next_handle: u32,
    next_name: u32,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: Mt64::new(seed),
            out: String::new(),
            files: BTreeMap::new(),
            next_handle: 999,
            next_name: 0,
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.next_u64() % n
        }
    }

    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick_weighted<const N: usize>(&mut self, w: [u32; N]) -> usize {
        let total: u32 = w.iter().sum();
        let mut r = self.below(u64::from(total)) as u32;
        for (i, x) in w.iter().enumerate() {
            if r < *x {
                return i;
            }
            r -= x;
        }
        N - 1
    }

    fn size(&mut self) -> (u64, usize) {
        let c = self.pick_weighted(SIZE_CLASSES.map(|c| c.0));
        let (_, lo, hi) = SIZE_CLASSES[c];
        // Log-uniform by octave, uniform within the octave: integer arithmetic only, so a
        // seed gives the same sizes on every platform (no libm in the path).
        let octaves = u64::from((hi / lo).trailing_zeros());
        let base = lo << self.below(octaves);
        (base + self.below(base), c)
    }

    fn handle(&mut self) -> u32 {
        // Handles cycle through 1000..=9999; at most two are open at a time.
        self.next_handle = 1000 + (self.next_handle - 999) % 9000;
        self.next_handle
    }

    /// A new document: a new name in a drawn directory, and its drawn size.
    fn new_doc_file(&mut self) -> (String, u64) {
        const EXT: [[&str; 2]; 4] = [
            ["txt", "lnk"],
            ["doc", "xls"],
            ["ppt", "pdf"],
            ["zip", "jpg"],
        ];
        let dir = self.doc_dir();
        let (size, class) = self.size();
        self.next_name += 1;
        let ext = EXT[class][self.below(2) as usize];
        (format!("{dir}\\file{:05}.{ext}", self.next_name), size)
    }

    /// A directory that holds documents, drawn uniformly.
    fn doc_dir(&mut self) -> &'static str {
        DOC_DIRS[self.below(DOC_DIRS.len() as u64) as usize]
    }

    fn line(&mut self, s: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(s);
        self.out.push('\n');
    }

    /// Look `rel` (relative to the root) up, expecting `status`.
    fn query_path(&mut self, rel: &str, status: &str) {
        self.line(format_args!(
            "QUERY_PATH_INFORMATION \"{ROOT}\\{rel}\" 1004 {status}"
        ));
    }

    /// Open file `rel` (relative to the root) with NT `disposition` (1 open, 2 create, 5
    /// overwrite-if) on a new handle, which it returns.
    fn open(&mut self, rel: &str, disposition: u32) -> u32 {
        let h = self.handle();
        self.line(format_args!(
            "NTCreateX \"{ROOT}\\{rel}\" 0x40 0x{disposition} {h} {OK}"
        ));
        h
    }

    fn create(&mut self, rel: &str, size: u64) {
        let h = self.open(rel, 2);
        self.write_all(h, size);
        self.line(format_args!("Close {h} {OK}"));
        self.files.insert(rel.to_string(), size);
    }

    fn write_all(&mut self, h: u32, size: u64) {
        for (off, n) in chunks(size) {
            self.line(format_args!("WriteX {h} {off} {n} {n} {OK}"));
        }
    }

    fn read_all(&mut self, h: u32, size: u64) {
        for (off, n) in chunks(size) {
            self.line(format_args!("ReadX {h} {off} {CHUNK} {n} {OK}"));
        }
    }

    fn pick_file(&mut self) -> Option<(String, u64)> {
        let i = self.below(self.files.len() as u64) as usize;
        self.files.iter().nth(i).map(|(k, v)| (k.clone(), *v))
    }

    fn setup(&mut self) {
        self.line(format_args!("Deltree \"{ROOT}\" {OK}"));
        self.line(format_args!("Mkdir \"\\clients\" {OK}"));
        for d in std::iter::once("").chain(DIRS) {
            let h = self.handle();
            let sep = if d.is_empty() { "" } else { "\\" };
            self.line(format_args!(
                "NTCreateX \"{ROOT}{sep}{d}\" 0x1 0x2 {h} {OK}"
            ));
            self.line(format_args!("Close {h} {OK}"));
        }
        for _ in 0..INITIAL_FILES {
            let (name, size) = self.new_doc_file();
            self.create(&name, size);
        }
        let h = self.open(MAILBOX, 5);
        self.write_all(h, MAILBOX_SIZE);
        self.line(format_args!("Close {h} {OK}"));
    }

    fn browse(&mut self) {
        let dir = self.doc_dir();
        self.query_path(dir, OK);
        self.line(format_args!(
            "FIND_FIRST \"{ROOT}\\{dir}\\*\" 260 1366 0 {OK}"
        ));
        let listed: Vec<String> = self
            .files
            .keys()
            .filter(|k| k.rsplit_once('\\').map(|x| x.0) == Some(dir))
            .take(4)
            .cloned()
            .collect();
        for f in listed {
            self.query_path(&f, OK);
        }
        self.query_path(&format!("{dir}\\desktop.ini"), NOT_FOUND);
    }

    fn open_read(&mut self) {
        let Some((f, size)) = self.pick_file() else {
            return;
        };
        self.query_path(&f, OK);
        let h = self.open(&f, 1);
        self.line(format_args!("QUERY_FILE_INFORMATION {h} 1007 {OK}"));
        self.read_all(h, size);
        self.line(format_args!("Close {h} {OK}"));
    }

    fn safe_save(&mut self) {
        let Some((f, size)) = self.pick_file() else {
            return;
        };
        let (dir, _) = f.rsplit_once('\\').unwrap_or(("", &f));
        let owner = format!("{dir}\\~$owner{:05}.tmp", self.next_name);
        self.query_path(&owner, NOT_FOUND);
        let h = self.open(&f, 1);
        self.read_all(h, size);
        self.line(format_args!("Close {h} {OK}"));
        let grow = 0.9 + 0.25 * self.unit();
        let new_size = ((size as f64 * grow) as u64).max(1);
        self.next_name += 1;
        let tmp = format!("{dir}\\~wrd{:05}.tmp", self.next_name);
        let old = format!("{dir}\\~wrl{:05}.tmp", self.next_name);
        self.write_new(&tmp, new_size);
        self.line(format_args!(
            "Rename \"{ROOT}\\{f}\" \"{ROOT}\\{old}\" {OK}"
        ));
        self.line(format_args!(
            "Rename \"{ROOT}\\{tmp}\" \"{ROOT}\\{f}\" {OK}"
        ));
        self.line(format_args!("Unlink \"{ROOT}\\{old}\" 0x6 {OK}"));
        let h = self.open(&f, 1);
        self.line(format_args!("SET_FILE_INFORMATION {h} 1004 {OK}"));
        self.line(format_args!("Close {h} {OK}"));
        self.files.insert(f, new_size);
    }

    /// Create `name` (relative to the root), write `size` bytes, flush and close it.
    fn write_new(&mut self, name: &str, size: u64) {
        let h = self.open(name, 2);
        self.write_all(h, size);
        self.line(format_args!("Flush {h} {OK}"));
        self.line(format_args!("Close {h} {OK}"));
    }

    fn new_doc(&mut self) {
        let (name, size) = self.new_doc_file();
        self.line(format_args!(
            "FIND_FIRST \"{ROOT}\\{name}\" 260 1366 0 NT_STATUS_NO_SUCH_FILE"
        ));
        self.write_new(&name, size);
        self.query_path(&name, OK);
        self.files.insert(name, size);
    }

    fn delete(&mut self) {
        // Keep the population near its initial size.
        if self.files.len() <= INITIAL_FILES / 2 {
            return self.new_doc();
        }
        let Some((f, _)) = self.pick_file() else {
            return;
        };
        self.query_path(&f, OK);
        self.line(format_args!("Unlink \"{ROOT}\\{f}\" 0x6 {OK}"));
        self.query_path(&f, NOT_FOUND);
        self.files.remove(&f);
    }

    fn rename(&mut self) {
        let Some((f, size)) = self.pick_file() else {
            return;
        };
        let (dir, _) = f.rsplit_once('\\').unwrap_or(("", &f));
        let ext = f.rsplit_once('.').map_or("dat", |x| x.1);
        self.next_name += 1;
        let to = format!("{dir}\\renamed{:05}.{ext}", self.next_name);
        self.line(format_args!("Rename \"{ROOT}\\{f}\" \"{ROOT}\\{to}\" {OK}"));
        self.query_path(&to, OK);
        self.files.remove(&f);
        self.files.insert(to, size);
    }

    fn mail_update(&mut self) {
        let h = self.open(MAILBOX, 1);
        self.line(format_args!("QUERY_FILE_INFORMATION {h} 1007 {OK}"));
        for _ in 0..1 + self.below(3) {
            let pages = 1 + self.below(8);
            let len = pages * 4096;
            let off = self.below((MAILBOX_SIZE - len) / 4096) * 4096;
            self.line(format_args!("LockX {h} {off} {len} {OK}"));
            self.line(format_args!("ReadX {h} {off} {len} {len} {OK}"));
            self.line(format_args!("WriteX {h} {off} {len} {len} {OK}"));
            self.line(format_args!("UnlockX {h} {off} {len} {OK}"));
        }
        self.line(format_args!("Flush {h} {OK}"));
        self.line(format_args!("Close {h} {OK}"));
    }

    fn partial_read(&mut self) {
        let big: Vec<(String, u64)> = self
            .files
            .iter()
            .filter(|(_, s)| **s >= 256 << 10)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        if big.is_empty() {
            return self.open_read();
        }
        let (f, size) = big[self.below(big.len() as u64) as usize].clone();
        let h = self.open(&f, 1);
        for _ in 0..2 + self.below(5) {
            let len = 4096 * (1 + self.below(16));
            let off = self.below(size / 4096) * 4096;
            let got = len.min(size - off);
            self.line(format_args!("ReadX {h} {off} {len} {got} {OK}"));
        }
        self.line(format_args!("Close {h} {OK}"));
    }

    fn probe(&mut self) {
        let dir = self.doc_dir();
        self.query_path(&format!("{dir}\\thumbs.db"), NOT_FOUND);
        let h = self.handle();
        self.line(format_args!(
            "NTCreateX \"{ROOT}\\{dir}\\~$lock.tmp\" 0x40 0x1 {h} {NOT_FOUND}"
        ));
        self.line(format_args!("QUERY_FS_INFORMATION 259 {OK}"));
    }
}

/// Generate a loadfile of `tasks` tasks per pass from `seed`.
pub fn generate(seed: u64, tasks: u32) -> String {
    let mut g = Gen::new(seed);
    g.line(format_args!(
        "# fslab default loadfile: small-office file-server client, model v{MODEL_VERSION}, seed {seed}, {tasks} tasks"
    ));
    g.line(format_args!(
        "# generated by `fslab dbench --generate`; see doc/dbench.md"
    ));
    g.setup();
    for _ in 0..tasks {
        let task = g.pick_weighted(TASKS.map(|t| t.1));
        (TASKS[task].2)(&mut g);
    }
    g.out
}

/// The default loadfile, parsed.
pub fn default_loadfile() -> super::loadfile::Loadfile {
    let text = generate(DEFAULT_SEED, DEFAULT_TASKS);
    let source = format!("default loadfile (fslab model v{MODEL_VERSION}, seed {DEFAULT_SEED})");
    super::loadfile::Loadfile::parse(&text, &source)
        .unwrap_or_else(|e| panic!("the generated default loadfile does not parse: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dbench::loadfile::Loadfile;
    use crate::workload::dbench::ops::OpKind;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        assert_eq!(generate(7, 200), generate(7, 200));
        assert_ne!(generate(7, 200), generate(8, 200));
    }

    #[test]
    fn default_loadfile_parses_and_has_the_modelled_mix() {
        let lf = default_loadfile();
        let c = lf.op_counts();
        // Every kind but Rmdir, which the model never issues.
        for k in OpKind::ALL.into_iter().filter(|&k| k != OpKind::Rmdir) {
            assert!(c[k.index()] > 0, "{k} missing from the default loadfile");
        }
        assert_eq!(
            c[OpKind::NtCreateX.index()],
            c[OpKind::Close.index()] + count_failed_opens(&lf)
        );
        assert!(!lf.has_timestamps);
    }

    #[test]
    fn default_loadfile_is_pinned() {
        // doc/dbench.md quotes these figures; a change to the model must bump MODEL_VERSION
        // and update the documentation.
        let lf = default_loadfile();
        assert_eq!(lf.ops.len(), 13_345);
        assert_eq!(lf.bytes_per_pass(), 247_085_355);
        let failing = lf
            .ops
            .iter()
            .filter(|o| matches!(o.expect, crate::workload::dbench::ops::Expect::Failure(_)))
            .count();
        assert_eq!(failing, 918);
        let f = crate::workload::dbench::footprint::footprint(&lf);
        assert!((27 << 20..28 << 20).contains(&f.bytes), "{}", f.bytes);
    }

    fn count_failed_opens(lf: &Loadfile) -> u64 {
        lf.ops
            .iter()
            .filter(|o| {
                o.kind == OpKind::NtCreateX
                    && o.expect != crate::workload::dbench::ops::Expect::Success
            })
            .count() as u64
    }

    #[test]
    fn size_mix_is_mostly_small_files_most_bytes_in_large_ones() {
        let mut g = Gen::new(1);
        let sizes: Vec<u64> = (0..20_000).map(|_| g.size().0).collect();
        let mut sorted = sizes.clone();
        sorted.sort();
        let median = sorted[sorted.len() / 2];
        let total: u64 = sizes.iter().sum();
        let big: u64 = sizes.iter().filter(|&&s| s >= 256 << 10).sum();
        assert!((16 << 10..32 << 10).contains(&median), "median {median}");
        let mean = total / sizes.len() as u64;
        assert!((250_000..400_000).contains(&mean), "mean {mean}");
        assert!(
            big * 100 > total * 85,
            "large files hold {}% of bytes",
            big * 100 / total
        );
    }
}
