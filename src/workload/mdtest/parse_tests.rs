use super::*;
use crate::workload::mdtest::test_support::argv;

fn ok(line: &str) -> Invocation {
    parse(&argv(line)).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn refused(args: &[&str]) -> String {
    parse(args).unwrap_err().render(super::super::words())
}

/// The refusal of `validate` in mdtest's flags.
fn invalid(line: &str) -> String {
    let e = ok(line).params.validate().unwrap_err();
    crate::workload::param::in_words(e, super::super::words()).to_string()
}

#[test]
fn defaults_are_mdtests() {
    let inv = ok("");
    assert_eq!(inv.dir, PathBuf::from("./out"));
    assert_eq!(inv.print, Print::Rate);
    let p = inv.params;
    assert_eq!(p, MdtestParams::default());
    assert_eq!(
        (p.items, p.items_per_dir, p.depth, p.branching),
        (0, 0, 0, 1)
    );
    assert_eq!((p.iterations, p.stride, p.stonewall), (1, 0, 0));
    let s = p.steps();
    assert!(
        s.create && s.stat && s.read && s.rename && s.remove,
        "all steps"
    );
    assert!(p.does_dirs() && p.does_files());
    assert!(!p.random_order());
}

#[test]
fn every_flag_sets_its_field() {
    let inv = ok("-n 10k -z 2 -b3 -d=/tmp/x -u -L -w 4096 -e 100 -y -i 5 -N 1 -W 7 -P -R --random-seed=9 -a POSIX");
    let p = &inv.params;
    assert_eq!(p.items, 10 * 1024);
    assert_eq!((p.depth, p.branching), (2, 3));
    assert_eq!(inv.dir, PathBuf::from("/tmp/x"));
    assert!(p.unique_dir && p.leaf_only && p.sync && p.random);
    assert_eq!((p.write_bytes, p.read_bytes), (4096, 100));
    assert_eq!((p.iterations, p.stride, p.stonewall), (5, 1, 7));
    assert_eq!(p.random_seed, Some(9));
    assert_eq!(inv.print, Print::Both);
    let q = ok("-I 8 -F -Z --random-seed 0").params;
    assert_eq!(q.items_per_dir, 8);
    assert!(q.files_only && !q.does_dirs() && q.does_files());
    assert_eq!(q.random_seed, None, "seed 0 means the clock, as in mdtest");
    assert_eq!(ok("-Z -n1").print, Print::Time);
    let d = ok("-D -n 1").params;
    assert!(d.does_dirs() && !d.does_files());
    // Both -F and -D: both kinds, as mdtest.
    let fd = ok("-FD -n 1").params;
    assert!(fd.does_dirs() && fd.does_files());
    // A seed alone selects the random order, as in mdtest.
    assert!(ok("--random-seed=3").params.random_order());
}

#[test]
fn step_flags_select_steps() {
    let p = ok("-C -T").params;
    assert!(p.create_only && p.stat_only);
    let s = p.steps();
    assert!(s.create && s.stat && !s.read && !s.rename && !s.remove);
    let s = ok("-r").params.steps();
    assert!(s.remove && !s.create && !s.stat);
    let s = ok("-E -U").params.steps();
    assert!(s.read && s.rename && !s.create);
}

#[test]
fn grouped_flags_and_attached_values() {
    let p = ok("-uFLn 64 -yCT").params;
    assert!(p.unique_dir && p.files_only && p.leaf_only && p.sync && p.create_only && p.stat_only);
    assert_eq!(p.items, 64);
    assert_eq!(ok("-n=2M").params.items, 2 << 20);
    assert_eq!(ok("-w 1g").params.write_bytes, 1 << 30);
}

#[test]
fn bad_input_is_refused_in_one_line_naming_the_flag() {
    for (line, want) in [
        ("-n abc", "-n abc: not a count"),
        ("-n -5", "-n -5: not a count"),
        ("-n", "-n needs a value"),
        ("-z 99999999999", "-z 99999999999: too large"),
        ("-n 99999999999999p", "too large"),
        ("-x", "-x needs a value"),
        ("-B", "-B: mdtest option not supported"),
        ("-V x", "-V x: not a count"),
        ("--posix.odirect=1", "--posix.odirect takes no value"),
        ("-q", "-q: not an mdtest option"),
        ("--help", "--help: not an mdtest option"),
        ("out", "unexpected argument 'out'"),
        (
            "-a MPIIO",
            "-a MPIIO: fslab's mdtest runs on the POSIX interface only",
        ),
        ("-d a@@b -u", "-d a@@b: an empty directory"),
        ("-d a@b", "-d a@b: several directories need -u"),
        ("-d a@b -u -N 1", "cannot be used with -N"),
    ] {
        let e = refused(&argv(line));
        assert!(e.contains(want), "{line}: {e}");
        assert!(!e.contains('\n'), "{line}: one line: {e}");
    }
    // An empty value (no white-space-split line spells it).
    let e = refused(&["-d", ""]);
    assert!(
        e.contains("-d needs a directory") && !e.contains('\n'),
        "{e}"
    );
}

#[test]
fn validation_names_mdtests_flags() {
    for (args, want) in [
        ("", "give -n (items per rank) or -I (items per directory)"),
        ("-n 10 -I 5", "-n 10 and -I 5 together"),
        ("-n 10 -i 0", "-i 0: run at least 1 iteration"),
        ("-n 10 -z 2 -b 0", "-b 0 with -z 2"),
        ("-n 10 -W 5 -b 2 -z 1", "-W 5 works with -b of 1 only"),
        ("-n 10 -e 10", "-e 10 is above -w 0"),
        ("-n 3 -z 2 -b 2", "-n 3 is fewer than the 7 directories"),
    ] {
        let e = invalid(args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // Reading more than was written is fine when this run does not write (-E on a tree an
    // earlier -C -w run made).
    assert!(ok("-n 10 -E -e 10").params.validate().is_ok());
}

/// The notes of `validate` in mdtest's flags.
fn notes(line: &str) -> Vec<String> {
    let words = super::super::words();
    ok(line)
        .params
        .notes()
        .iter()
        .map(|n| n.render(words))
        .collect()
}

#[test]
fn notes_warn_without_refusing() {
    let tree = "-n 100 -z 1 -b 2";
    let no_data = "-n 100 -y -D -W 3";
    for (args, want) in [
        (tree, "-e 0: the read step only opens and closes"),
        (tree, "-n 100 rounded down to 99 items"),
        (no_data, "-y has no effect without -w"),
        (no_data, "-W 3 applies to file creation only"),
        ("-n 4 -t", "-t has no effect without -u"),
    ] {
        let n = notes(args);
        assert!(n.iter().any(|s| s.contains(want)), "{args:?}: {n:?}");
    }
    assert!(notes("-n 100 -w 10 -e 10").is_empty());
}

#[test]
fn mdtests_other_flags_are_honoured() {
    let inv = ok("-n 8 -Yktvv -x /tmp/sw --posix.odirect");
    let p = &inv.params;
    assert!(p.sync_phases && p.mknod && p.time_unique_dir && p.odirect);
    assert_eq!(inv.verbose, 2);
    assert_eq!(inv.status_file, Some(PathBuf::from("/tmp/sw")));
    assert_eq!(ok("-V 3").verbose, 3);
    assert_eq!(ok("").verbose, 0);
    // Each shows on the command line the report and the store keep.
    assert_eq!(p.flags(), "mdtest -n 8 -Y -k -t --posix.odirect");
    let back: MdtestParams = serde_json::from_value(serde_json::to_value(p).unwrap()).unwrap();
    assert_eq!(&back, p);
    // Off, they are left out of the stored parameters (earlier runs' keys stay the same).
    let plain = serde_json::to_value(MdtestParams::default()).unwrap();
    assert!(plain.get("mknod").is_none() && plain.get("odirect").is_none());
}

#[test]
fn several_test_directories_go_to_ranks_in_turn() {
    let inv = ok("-n 8 -u -d /a@/b@/c");
    assert_eq!(inv.dir, PathBuf::from("/a"));
    assert_eq!(inv.dirs.len(), 3);
    let of = |r| inv.dir_of(r).to_str().unwrap().to_string();
    assert_eq!(
        [of(0), of(1), of(2), of(3), of(5)],
        ["/a", "/b", "/c", "/a", "/c"]
    );
    assert_eq!(ok("-d /x").dir_of(7), &PathBuf::from("/x"));
}

#[test]
fn modes_fslab_cannot_run_say_why() {
    for (flag, why) in [
        ("-S", "shared-file mode is not supported by fslab's engine"),
        ("-c", "collective creates"),
        ("-B", "always start at a barrier"),
        ("-X", "does not verify data"),
    ] {
        let e = refused(&["-n", "1", flag]);
        assert!(
            e.starts_with(&format!("{flag}: mdtest option not supported by fslab (")),
            "{e}"
        );
        assert!(e.contains(why) && !e.contains('\n'), "{e}");
    }
}

#[test]
fn mknod_and_odirect_refuse_what_cannot_work() {
    let e = invalid("-n 4 -k -w 100");
    assert!(e.starts_with("-k with -w 100"), "{e}");
    let e = invalid("-n 4 --posix.odirect -w 1000 -e 512");
    assert!(
        e.contains("-w 1000") && e.contains("multiple of 512"),
        "{e}"
    );
    assert!(ok("-n 4 --posix.odirect -w 4096 -e 512")
        .params
        .validate()
        .is_ok());
}
