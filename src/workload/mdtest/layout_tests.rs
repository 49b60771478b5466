use super::*;

fn lay(n: u64, i: u64, z: u32, b: u32, leaf: bool) -> Result<Layout> {
    Layout::new(&MdtestParams {
        items: n,
        items_per_dir: i,
        depth: z,
        branching: b,
        leaf_only: leaf,
        ..MdtestParams::default()
    })
}

#[test]
fn counts_follow_mdtest_for_small_trees() {
    // (n, I, z, b, L) → (tree dirs, leaves, items per dir, items per rank)
    let cases = [
        ((10_000, 0, 0, 1, false), (1, 1, 10_000, 10_000)),
        ((1000, 0, 1, 1, false), (2, 1, 500, 1000)),
        ((1000, 0, 3, 1, false), (4, 1, 250, 1000)),
        ((100, 0, 1, 2, false), (3, 2, 33, 99)),
        ((100, 0, 2, 2, false), (7, 4, 14, 98)),
        ((100, 0, 2, 3, false), (13, 9, 7, 91)),
        ((100, 0, 2, 2, true), (7, 4, 25, 100)),
        ((99, 0, 2, 2, true), (7, 4, 24, 96)),
        ((50, 0, 3, 1, true), (4, 1, 50, 50)),
        ((0, 2, 2, 2, false), (7, 4, 2, 14)),
        ((0, 2, 2, 2, true), (7, 4, 2, 8)),
        ((0, 5, 0, 1, false), (1, 1, 5, 5)),
        ((7, 0, 0, 0, false), (1, 1, 7, 7)),
    ];
    for ((n, i, z, b, leaf), want) in cases {
        let l = lay(n, i, z, b, leaf).unwrap();
        assert_eq!(
            (l.dirs, l.leaves, l.items_per_dir, l.items),
            want,
            "-n {n} -I {i} -z {z} -b {b} -L {leaf}"
        );
    }
}

#[test]
fn too_few_items_and_huge_trees_are_refused() {
    let e = lay(5, 0, 2, 2, false).unwrap_err().to_string();
    assert!(
        e.contains("items = 5") && e.contains("7 directories"),
        "{e}"
    );
    let e = lay(10, 0, 40, 10, false).unwrap_err().to_string();
    assert!(e.contains("2^64"), "{e}");
}

#[test]
fn the_tree_is_a_heap() {
    let l = lay(0, 1, 2, 3, false).unwrap();
    assert_eq!(l.children(0, 0), 1..=3);
    assert_eq!(l.children(2, 1), 7..=9);
    assert!(l.children(7, 2).is_empty(), "leaves have no children");
    assert_eq!(l.parent(9), Some(2));
    assert_eq!(l.parent(3), Some(0));
    assert_eq!(l.parent(0), None);
    let mut chain = Vec::new();
    l.chain(11, &mut chain);
    assert_eq!(chain, [0, 3, 11]);
    assert_eq!(l.first_leaf(), 4);
    // A chain (b = 1): directory k is at depth k.
    let c = lay(0, 1, 3, 1, false).unwrap();
    assert_eq!(c.children(2, 2), 3..=3);
    c.chain(3, &mut chain);
    assert_eq!(chain, [0, 1, 2, 3]);
}

#[test]
fn leaf_only_items_start_at_the_first_leaf() {
    let l = lay(0, 2, 2, 2, true).unwrap();
    assert_eq!(l.first_item(), 2 * 3);
    assert_eq!(l.dir_of(l.first_item()), 3);
    assert!(l.holds_items(2) && !l.holds_items(1) && !l.holds_items(0));
    let top = lay(4, 0, 0, 1, true).unwrap();
    assert!(top.holds_items(0), "-L with -z 0: the top holds the items");
    assert_eq!(top.first_item(), 0);
}

#[test]
fn names_are_mdtests() {
    let l = lay(0, 1, 2, 2, false).unwrap();
    let mut b = NameBuf::new();
    Tree(None).push_dir(&mut b, 5);
    assert_eq!(b.as_str(), "mdtest_tree.5");
    b.clear();
    Tree(Some(3)).push_path(&mut b, &l, 5, &mut Vec::new());
    assert_eq!(
        b.as_str(),
        "mdtest_tree.3.0/mdtest_tree.3.2/mdtest_tree.3.5"
    );
    b.clear();
    ItemKind::File.push_prefix(&mut b, 12);
    b.push_u64(7);
    assert_eq!(b.as_str(), "file.mdtest.12.7");
    b.clear();
    ItemKind::Dir.push_prefix(&mut b, 0);
    assert_eq!(b.as_str(), "dir.mdtest.0.");
    assert_eq!(test_dir(3), "test-dir.3-0");
}

#[test]
fn the_shift_gives_mdtests_owners_and_trees() {
    // 4 ranks, -N 1: rank 1 creates its own items in tree 2, stats rank 2's (in tree 3),
    // reads rank 3's (in tree 0), removes rank 0's (in tree 1).
    let r = Roles {
        rank: 1,
        size: 4,
        stride: 1,
    };
    let got: Vec<(u32, Tree)> = [Shift::Create, Shift::Stat, Shift::Read, Shift::Remove]
        .into_iter()
        .map(|s| (r.owner(s), r.tree_of(r.owner(s), true)))
        .collect();
    assert_eq!(
        got,
        [
            (1, Tree(Some(2))),
            (2, Tree(Some(3))),
            (3, Tree(Some(0))),
            (0, Tree(Some(1)))
        ]
    );
    assert_eq!(r.tree_of(2, false), Tree(None));
    let solo = Roles {
        rank: 0,
        size: 1,
        stride: 5,
    };
    assert_eq!(solo.owner(Shift::Remove), 0);
    assert_eq!(solo.tree_of(0, true), Tree(Some(0)));
}
