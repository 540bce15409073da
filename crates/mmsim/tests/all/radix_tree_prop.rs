//! Public-API tests of `RadixTree` and a property test against a `BTreeMap` model.

use std::collections::{BTreeMap, BTreeSet};

use mmsim::mm::radix_tree::{
    Entry, NodeId, Pfn, RadixTree, TreeEvent, MAX_SHADOW, RADIX_TREE_MAX_HEIGHT,
};
use proptest::prelude::*;

fn all(t: &RadixTree) -> Vec<(u64, Entry)> {
    let mut out = Vec::new();
    t.gang_lookup(0, usize::MAX, &mut out);
    out
}

#[test]
fn radix_empty_tree() {
    let t = RadixTree::default();
    assert_eq!(
        (t.height(), t.nr_nodes(), t.nr_pages(), t.nr_shadows()),
        (0, 0, 0, 0)
    );
    assert_eq!(t.lookup(0), Entry::Empty);
    assert_eq!(t.lookup(u64::MAX), Entry::Empty);
    assert_eq!(t.leaf(0), None);
    assert!(all(&t).is_empty());
    t.check().unwrap();
}

#[test]
fn radix_insert_grows_height() {
    let mut t = RadixTree::new();
    let steps: [(u64, u32, usize); 5] = [
        (0, 0, 0), // alone at index 0: in the root pointer, no node
        (63, 1, 1),
        (64, 2, 3),
        (4095, 2, 4),
        (1 << 30, 6, 13),
    ];
    for (i, &(idx, h, nodes)) in steps.iter().enumerate() {
        assert_eq!(t.store(idx, Entry::Page(i as Pfn)), Entry::Empty);
        assert_eq!(
            (t.height(), t.nr_nodes()),
            (h, nodes),
            "after inserting {idx}"
        );
        t.check().unwrap();
    }
    for (i, &(idx, ..)) in steps.iter().enumerate() {
        assert_eq!(t.lookup(idx), Entry::Page(i as Pfn));
    }
    assert_eq!(t.lookup(1), Entry::Empty);
    assert_eq!(t.lookup((1 << 30) + 1), Entry::Empty);
    assert_eq!(t.lookup(1 << 36), Entry::Empty); // beyond max index of height 6
    assert_eq!(t.nr_pages(), 5);
    // Same leaf for 0 and 63, different for 64.
    assert_eq!(t.leaf(0).unwrap().0, t.leaf(63).unwrap().0);
    assert_ne!(t.leaf(0).unwrap().0, t.leaf(64).unwrap().0);
    assert_eq!(t.leaf(0).map(|l| (l.1, l.2)), Some((2, 0)));
    assert_eq!(t.leaf(1 << 29), None);
}

#[test]
fn radix_full_index_range() {
    let mut t = RadixTree::new();
    t.store(u64::MAX, Entry::Shadow(MAX_SHADOW));
    assert_eq!(t.height(), RADIX_TREE_MAX_HEIGHT);
    assert_eq!(t.nr_nodes(), RADIX_TREE_MAX_HEIGHT as usize);
    t.store(0, Entry::Page(Pfn::MAX));
    assert_eq!(
        all(&t),
        vec![
            (0, Entry::Page(Pfn::MAX)),
            (u64::MAX, Entry::Shadow(MAX_SHADOW))
        ]
    );
    t.check().unwrap();
    assert_eq!(t.store(u64::MAX, Entry::Empty), Entry::Shadow(MAX_SHADOW));
    // Shrunk all the way: the lone entry at index 0 goes back to the root pointer.
    assert_eq!((t.height(), t.nr_nodes()), (0, 0));
    assert_eq!(t.lookup(0), Entry::Page(Pfn::MAX));
    t.check().unwrap();
}

#[test]
fn radix_replace_updates_counts() {
    let mut t = RadixTree::new();
    t.store(10, Entry::Page(7));
    t.store(11, Entry::Page(8));
    assert_eq!((t.nr_pages(), t.nr_shadows()), (2, 0));
    assert_eq!(t.store(10, Entry::Shadow(99)), Entry::Page(7));
    assert_eq!((t.nr_pages(), t.nr_shadows()), (1, 1));
    assert_eq!(t.leaf(10).map(|l| (l.1, l.2)), Some((2, 1)));
    assert_eq!(t.store(10, Entry::Page(3)), Entry::Shadow(99));
    assert_eq!((t.nr_pages(), t.nr_shadows()), (2, 0));
    assert_eq!(t.store(11, Entry::Page(4)), Entry::Page(8));
    assert_eq!(t.nr_pages(), 2);
    assert_eq!(t.lookup(11), Entry::Page(4));
    t.check().unwrap();
}

#[test]
fn radix_gang_lookup_boundaries_sparse_and_max() {
    let mut t = RadixTree::new();
    for idx in 60..70 {
        t.store(idx, Entry::Page(idx as Pfn));
    }
    let mut out = vec![(0, Entry::Empty)];
    assert_eq!(t.gang_lookup(62, 5, &mut out), 5);
    let idx: Vec<u64> = out[1..].iter().map(|e| e.0).collect();
    assert_eq!(idx, vec![62, 63, 64, 65, 66]);
    assert_eq!(out.len(), 6); // appended, not replaced
    assert_eq!(out[3], (64, Entry::Page(64)));
    out.clear();
    assert_eq!(t.gang_lookup(0, 0, &mut out), 0);
    assert_eq!(t.gang_lookup(70, 10, &mut out), 0);
    assert_eq!(t.gang_lookup(1 << 20, 10, &mut out), 0); // beyond max index
    assert_eq!(t.gang_lookup(69, 10, &mut out), 1);

    let mut s = RadixTree::new();
    let keys = [5u64, 4096, 1 << 20, (1 << 40) + 3, u64::MAX - 1, u64::MAX];
    for (i, &k) in keys.iter().enumerate() {
        s.store(
            k,
            if i % 2 == 0 {
                Entry::Page(i as Pfn)
            } else {
                Entry::Shadow(k >> 2)
            },
        );
    }
    let got: Vec<u64> = all(&s).iter().map(|e| e.0).collect();
    assert_eq!(got, keys);
    for (i, &k) in keys.iter().enumerate() {
        let mut out = Vec::new();
        assert_eq!(s.gang_lookup(k, 2, &mut out), 2.min(keys.len() - i));
        assert_eq!(
            out.iter().map(|e| e.0).collect::<Vec<_>>(),
            keys[i..(i + 2).min(keys.len())]
        );
        out.clear();
        if let Some(next) = k.checked_add(1) {
            s.gang_lookup(next, 1, &mut out);
            assert_eq!(out.first().map(|e| e.0), keys.get(i + 1).copied());
        }
    }
    let mut out = Vec::new();
    assert_eq!(s.gang_lookup(6, usize::MAX, &mut out), 5);
    assert_eq!(out[0], (4096, Entry::Shadow(1024)));
}

#[test]
fn radix_delete_leaving_other_leaves_keeps_height() {
    let mut t = RadixTree::new();
    t.store(70, Entry::Page(1));
    t.store(200, Entry::Page(2));
    t.store(70, Entry::Empty);
    // Root still has slot 3 occupied: height stays 2, only leaf of 70 freed.
    assert_eq!((t.height(), t.nr_nodes()), (2, 2));
    t.check().unwrap();
}

#[test]
fn radix_lone_index_zero_lives_in_the_root_pointer() {
    let mut t = RadixTree::new();
    // A one-page file: no node, and its shadow is in no node (no shadow-list entry).
    t.store(0, Entry::Page(9));
    assert_eq!((t.height(), t.nr_nodes(), t.nr_pages()), (0, 0, 1));
    assert_eq!(t.store(0, Entry::Shadow(5)), Entry::Page(9));
    assert_eq!((t.nr_pages(), t.nr_shadows(), t.leaf(0)), (0, 1, None));
    let mut all = Vec::new();
    assert_eq!(t.gang_lookup(0, 10, &mut all), 1);
    assert_eq!(all, vec![(0, Entry::Shadow(5))]);
    assert_eq!(t.gang_lookup(1, 10, &mut all), 0);
    t.check().unwrap();
    // A second index: radix_tree_extend moves the root entry to slot 0 of a leaf.
    t.store(1, Entry::Page(3));
    assert_eq!((t.height(), t.nr_nodes()), (1, 1));
    assert_eq!(t.leaf(0).map(|l| (l.1, l.2)), Some((2, 1)));
    assert_eq!(t.lookup(0), Entry::Shadow(5));
    t.check().unwrap();
    // Far away: more levels on top, the entry still at index 0.
    t.store(1 << 20, Entry::Page(4));
    assert_eq!((t.height(), t.lookup(0)), (4, Entry::Shadow(5)));
    t.check().unwrap();
    // Deleting the others shrinks back to the root pointer.
    t.store(1 << 20, Entry::Empty);
    assert_eq!((t.height(), t.nr_nodes()), (1, 1));
    t.store(1, Entry::Empty);
    assert_eq!(
        (t.height(), t.nr_nodes(), t.lookup(0)),
        (0, 0, Entry::Shadow(5))
    );
    t.check().unwrap();
    // Deleting the root entry empties the tree; an entry elsewhere needs a node.
    assert_eq!(t.store(0, Entry::Empty), Entry::Shadow(5));
    assert_eq!((t.height(), t.nr_shadows()), (0, 0));
    t.store(7, Entry::Page(1));
    assert_eq!(
        (t.height(), t.nr_nodes(), t.lookup(0)),
        (1, 1, Entry::Empty)
    );
    t.check().unwrap();
}

#[derive(Clone, Debug)]
enum Op {
    Store(u64, Entry),
    Lookup(u64),
    Gang(u64, usize),
    /// Clear the shadows of the leaf holding this index.
    ClearLeafOf(u64),
    /// Clear the shadows of an arbitrary (maybe stale or interior) node id.
    ClearRaw(u32),
}

fn index() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..300,
        2 => 0u64..5000,
        1 => prop::sample::select(vec![
            1 << 30,
            (1 << 30) + 70,
            1 << 40,
            (1 << 40) + 1,
            u64::MAX >> 6,
            u64::MAX - 64,
            u64::MAX,
        ]),
    ]
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        2 => Just(Entry::Empty),
        3 => any::<u32>().prop_map(Entry::Page),
        3 => prop_oneof![0..1000u64, Just(MAX_SHADOW)].prop_map(Entry::Shadow),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (index(), entry()).prop_map(|(i, e)| Op::Store(i, e)),
        2 => index().prop_map(Op::Lookup),
        2 => (index(), 0usize..100).prop_map(|(i, m)| Op::Gang(i, m)),
        1 => index().prop_map(Op::ClearLeafOf),
        1 => (0u32..40).prop_map(Op::ClearRaw),
    ]
}

/// The shape is a function of the key set: height from the largest key, and one
/// node per distinct key prefix at every level; a lone key 0 lives in the root pointer.
fn expected_shape(model: &BTreeMap<u64, Entry>) -> (u32, usize) {
    let Some(&max) = model.keys().next_back() else {
        return (0, 0);
    };
    if max == 0 {
        return (0, 0);
    }
    let height = (64 - max.leading_zeros()).div_ceil(6).max(1);
    let nodes = (0..height)
        .map(|level| {
            let shift = 6 * (level + 1);
            let prefixes: BTreeSet<u64> = model
                .keys()
                .map(|&k| k.checked_shr(shift).unwrap_or(0))
                .collect();
            prefixes.len()
        })
        .sum();
    (height, nodes)
}

/// Apply the shadow shrinker to the model leaf starting at `base`.
fn clear_model_leaf(model: &mut BTreeMap<u64, Entry>, base: u64) -> u32 {
    let shadows: Vec<u64> = model
        .range(base..=base + 63)
        .filter(|(_, e)| matches!(e, Entry::Shadow(_)))
        .map(|(&k, _)| k)
        .collect();
    for k in &shadows {
        model.remove(k);
    }
    shadows.len() as u32
}

fn leaf_of_model(model: &BTreeMap<u64, Entry>, base: u64) -> (u32, u32) {
    let range = model.range(base..=base + 63);
    let shadows = range
        .clone()
        .filter(|(_, e)| matches!(e, Entry::Shadow(_)))
        .count();
    (range.count() as u32, shadows as u32)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn radix_tree_matches_btreemap(ops in prop::collection::vec(op(), 1..200)) {
        let mut t = RadixTree::new();
        let mut model: BTreeMap<u64, Entry> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Store(i, e) => {
                    let old = if e == Entry::Empty { model.remove(&i) } else { model.insert(i, e) };
                    prop_assert_eq!(t.store(i, e), old.unwrap_or(Entry::Empty));
                }
                Op::Lookup(i) => {
                    prop_assert_eq!(t.lookup(i), model.get(&i).copied().unwrap_or(Entry::Empty));
                    match t.leaf(i) {
                        Some((id, count, shadows)) => {
                            let (n, s, base) = t.leaf_counts(id).unwrap();
                            prop_assert_eq!((n, s, base), (count, shadows, i & !63));
                            prop_assert_eq!((n, s), leaf_of_model(&model, base));
                        }
                        // No leaf: nothing in its range, or the lone entry at index 0
                        // in the root pointer.
                        None => prop_assert!(
                            leaf_of_model(&model, i & !63).0 == 0 || t.height() == 0
                        ),
                    }
                }
                Op::Gang(start, max) => {
                    let mut out = vec![(7, Entry::Page(7))];
                    let n = t.gang_lookup(start, max, &mut out);
                    let want: Vec<(u64, Entry)> =
                        model.range(start..).take(max).map(|(&k, &e)| (k, e)).collect();
                    prop_assert_eq!(n, want.len());
                    prop_assert_eq!(&out[1..], &want[..]);
                }
                Op::ClearLeafOf(i) => {
                    if let Some((id, _, _)) = t.leaf(i) {
                        let want = clear_model_leaf(&mut model, i & !63);
                        prop_assert_eq!(t.clear_leaf_shadows(id), want);
                    }
                }
                Op::ClearRaw(raw) => {
                    let want = match t.leaf_counts(NodeId(raw)) {
                        Some((_, _, base)) => clear_model_leaf(&mut model, base),
                        None => 0,
                    };
                    prop_assert_eq!(t.clear_leaf_shadows(NodeId(raw)), want);
                }
            }
            if let Err(e) = t.check() {
                return Err(TestCaseError::fail(e));
            }
            let pages = model.values().filter(|e| matches!(e, Entry::Page(_))).count() as u64;
            prop_assert_eq!((t.nr_pages(), t.nr_shadows()), (pages, model.len() as u64 - pages));
            prop_assert_eq!((t.height(), t.nr_nodes()), expected_shape(&model));
            let mut all = Vec::new();
            t.gang_lookup(0, usize::MAX, &mut all);
            prop_assert!(all.iter().copied().eq(model.iter().map(|(&k, &e)| (k, e))));
        }
    }
}

/// One step of the shadow-list property test.
#[derive(Clone, Debug)]
enum ListOp {
    /// Store a page (0), a shadow (1) or nothing (2) at an index.
    Store(u64, u8),
    /// List the leaf of an index on list `l` if it is shadow-only (shadow_node_track).
    List(u64, u32),
    /// Take the leaf of an index off its list and clear its shadows (the shrinker).
    Reclaim(u64),
}

fn list_op() -> impl Strategy<Value = ListOp> {
    prop_oneof![
        4 => (0u64..400, 0u8..3).prop_map(|(i, k)| ListOp::Store(i, k)),
        2 => (0u64..400, 0u32..3).prop_map(|(i, l)| ListOp::List(i, l)),
        1 => (0u64..400).prop_map(ListOp::Reclaim),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The shadow-list protocol (workingset_update_node): a counter per list kept from
    /// `list_leaf` (+1), the tree's `Unlisted` events and `unlist_leaf` (−1) always equals
    /// the leaves listed on it, and a listed leaf holds shadows only (`check`). The node
    /// events balance too: per charge tag, allocations less frees are the live nodes
    /// carrying it.
    #[test]
    fn shadow_list_counts_follow_the_listed_leaves(ops in proptest::collection::vec(list_op(), 1..300)) {
        let mut t = RadixTree::new();
        let mut count = [0i64; 3];
        let mut charged = [0i64; 3];
        let mut seq = 0u32;
        for op in ops {
            match op {
                ListOp::Store(i, k) => {
                    t.charge_tag = (i % 3) as u32;
                    let e = match k {
                        0 => Entry::Page(i as Pfn),
                        1 => Entry::Shadow(i),
                        _ => Entry::Empty,
                    };
                    t.store(i, e);
                }
                ListOp::List(i, l) => {
                    if let Some((id, n, shadows)) = t.leaf(i) {
                        seq += 1;
                        let listed = t.list_leaf(id, l, seq);
                        prop_assert_eq!(listed, n == shadows && t.leaf_listing(id) == Some((l, seq)));
                        count[l as usize] += i64::from(listed);
                    }
                }
                ListOp::Reclaim(i) => {
                    if let Some((id, ..)) = t.leaf(i) {
                        if let Some((l, _)) = t.unlist_leaf(id) {
                            count[l as usize] -= 1;
                            t.clear_leaf_shadows(id);
                        }
                    }
                }
            }
            while let Some(e) = t.events.pop() {
                match TreeEvent::decode(e) {
                    TreeEvent::Unlisted(l) => count[l as usize] -= 1,
                    TreeEvent::NodeAlloc(tag) => charged[tag as usize] += 1,
                    TreeEvent::NodeFree(tag) => charged[tag as usize] -= 1,
                }
            }
            let mut live = [0i64; 3];
            for tag in t.node_charges() {
                live[tag as usize] += 1;
            }
            prop_assert_eq!(live, charged);
            prop_assert_eq!(live.iter().sum::<i64>(), t.nr_nodes() as i64);
            t.check().map_err(TestCaseError::fail)?;
            let mut listed = [0i64; 3];
            for (_, l, _) in t.listed_leaves() {
                listed[l as usize] += 1;
            }
            prop_assert_eq!(listed, count);
        }
    }
}
