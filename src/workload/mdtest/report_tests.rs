use super::*;
use crate::workload::mdtest::test_support::{params, ph};

/// Two iterations of a files-only run; the second did not read.
fn files_only() -> Vec<Iteration> {
    // Each phase's items and its seconds in iterations 0 and 1 (`None`: not run).
    let table = [
        (Phase::TreeCreate, 1, [Some(0.001), Some(0.002)]),
        (Phase::FileCreate, 1000, [Some(0.5), Some(0.4)]),
        (Phase::FileStat, 1000, [Some(0.3), Some(0.35)]),
        (Phase::FileRead, 1000, [Some(0.2), None]),
        (Phase::FileRemove, 1000, [Some(0.7), Some(0.9)]),
        (Phase::TreeRemove, 1, [Some(0.003), Some(0.0015)]),
    ];
    (0..2)
        .map(|index| Iteration {
            index,
            phases: table
                .iter()
                .filter_map(|&(phase, items, s)| Some(ph(phase, items, s[index as usize]?)))
                .collect(),
        })
        .collect()
}

/// mdtest 4's layout (its printf formats applied to the same figures).
const GOLDEN: &str = "
SUMMARY rate (in ops/sec): (of 2 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   File creation                2500.000       2000.000       2250.000        353.553
   File stat                    3333.333       2857.143       3095.238        336.718
   File read                    5000.000          0.000       2500.000       3535.534
   File removal                 1428.571       1111.111       1269.841        224.478
   Tree creation                1000.000        500.000        750.000        353.553
   Tree removal                  666.667        333.333        500.000        235.702

SUMMARY time (in ms/op): (of 2 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   File creation                   0.500          0.400          0.450          0.071
   File stat                       0.350          0.300          0.325          0.035
   File read                       0.200          0.000          0.100          0.141
   File removal                    0.900          0.700          0.800          0.141
   Tree creation                   0.002          0.001          0.002          0.001
   Tree removal                    0.003          0.002          0.002          0.001
";

#[test]
fn the_tables_are_mdtests_to_the_character() {
    let (p, _) = params("-n 1 -F");
    assert_eq!(tables(&files_only(), &p, Print::Both), GOLDEN);
    let rate_only = tables(&files_only(), &p, Print::Rate);
    assert!(GOLDEN.starts_with(&rate_only) && !rate_only.contains("SUMMARY time"));
    assert!(tables(&files_only(), &p, Print::Time).starts_with("\nSUMMARY time (in ms/op)"));
}

#[test]
fn every_operation_has_a_row_and_unrun_ones_read_zero() {
    let it = Iteration {
        index: 0,
        phases: vec![
            ph(Phase::DirCreate, 10_000, 0.04),
            ph(Phase::TreeCreate, 1, 0.00001),
        ],
    };
    let t = summary(&[it], true, true, false);
    let rows: Vec<&str> = t.lines().skip(4).collect();
    assert_eq!(rows.len(), 10);
    assert_eq!(
        rows[0],
        "   Directory creation         250000.000     250000.000     250000.000          0.000"
    );
    assert_eq!(
        rows[2],
        "   Directory rename                0.000          0.000          0.000          0.000"
    );
    assert_eq!(
        rows[8],
        "   Tree creation              100000.000     100000.000     100000.000          0.000"
    );
    let labels: Vec<&str> = rows.iter().map(|r| r[3..22].trim_end()).collect();
    assert_eq!(
        labels,
        [
            "Directory creation",
            "Directory stat",
            "Directory rename",
            "Directory removal",
            "File creation",
            "File stat",
            "File read",
            "File removal",
            "Tree creation",
            "Tree removal"
        ]
    );
    // Directories only: no file rows.
    let d = summary(&[], true, false, false);
    assert!(d.contains("(of 0 iterations)") && !d.contains("File") && d.contains("Tree removal"));
}

#[test]
fn the_lines_before_the_table() {
    let (p, lay) = params("-n 100");
    assert_eq!(tasks_line(&p, &lay, 4), "4 tasks, 400 files/directories");
    assert_eq!(
        tasks_line(&params("-n 100 -F").0, &lay, 1),
        "1 tasks, 100 files"
    );
    assert_eq!(
        tasks_line(&params("-n 100 -D").0, &lay, 1),
        "1 tasks, 100 directories"
    );
    let cmd = command_line("fslab mdtest", &["-n".into(), "100".into()]);
    assert_eq!(cmd, "fslab mdtest '-n' '100'");
    let text = preamble(&Preamble {
        started: "11/26/2026 19:35:41".into(),
        ranks: 1,
        nodes: 1,
        command: cmd,
        warnings: vec!["Read bytes is 0".into()],
        fs: Some("Path                : /x\nFS                  : 1.0 GiB".into()),
        seed: Some(42),
        tasks: "1 tasks, 100 files/directories".into(),
    });
    let want = format!(
        "-- started at 11/26/2026 19:35:41 --\n\nfslab-{} mdtest was launched with 1 total task(s) on 1 node(s)\nCommand line used: fslab mdtest '-n' '100'\nWARNING: Read bytes is 0\nPath                : /x\nFS                  : 1.0 GiB\nrandom seed: 42\n1 tasks, 100 files/directories\n",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(text, want);
    let t = tempfile::tempdir().unwrap();
    let fs = fs_lines(t.path()).unwrap();
    assert!(
        fs.starts_with("Path                : ") && fs.contains("\nFS                  : "),
        "{fs}"
    );
    assert!(
        fs.contains("Used FS: ") && fs.contains("Inodes: ") && fs.contains(" Mi   Used Inodes: ")
    );
}

#[test]
fn verbose_prints_each_iterations_phases_as_mdtests_level_one() {
    let it = &files_only()[1];
    assert_eq!(verbose(it, 0, Path::new("/d")), "", "quiet without -v");
    let one = verbose(it, 1, Path::new("/d"));
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines[0], "V-1: main: * iteration 2 *");
    assert_eq!(lines.len(), 1 + it.phases.len(), "{one}");
    assert_eq!(
        lines[2], "V-1:   File creation     :          0.400 sec,       2500.000 ops/sec",
        "{one}"
    );
    let two = verbose(it, 2, Path::new("/d"));
    assert!(
        two.contains("V-2: main: test directory /d/test-dir.1-0\n"),
        "{two}"
    );
    assert_eq!(verbose(it, 5, Path::new("/d")), two, "no deeper trace");
    let mut walled = it.clone();
    walled.phases[1].stonewall = Some(crate::workload::mdtest::result::Stonewall {
        items: 300,
        seconds: 0.1,
    });
    let w = verbose(&walled, 1, Path::new("/d"));
    assert!(
        w.contains("0.100 sec,       3000.000 ops/sec (stonewall, 300 items)"),
        "{w}"
    );
    assert!(w.lines().all(|l| l.chars().count() <= 100));
}
