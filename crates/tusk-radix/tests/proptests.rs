//! The tree against `BTreeMap`, the TidStore against `BTreeSet`.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use tusk_radix::{RadixTree, Tid, TidStore};

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Remove(u64),
    Get(u64),
    GetLe(u64),
}

/// Keys drawn from a few shapes so that nodes of every class appear and
/// shrink: dense small keys, keys sharing long prefixes, and wide keys.
fn key() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..600,
        (0u64..300).prop_map(|k| 0x1234_5600_0000 + k * 3),
        any::<u64>(),
        (0u64..64).prop_map(|k| k << 56),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        2 => key().prop_map(Op::Remove),
        1 => key().prop_map(Op::Get),
        1 => key().prop_map(Op::GetLe),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn tree_matches_btreemap(ops in proptest::collection::vec(op(), 1..1500)) {
        let mut t = RadixTree::new();
        let mut m = BTreeMap::new();
        for op in &ops {
            match *op {
                Op::Insert(k, v) => prop_assert_eq!(t.insert(k, v), m.insert(k, v)),
                Op::Remove(k) => prop_assert_eq!(t.remove(k), m.remove(&k)),
                Op::Get(k) => prop_assert_eq!(t.get(k), m.get(&k).copied()),
                Op::GetLe(k) => prop_assert_eq!(
                    t.get_le(k),
                    m.range(..=k).next_back().map(|(&k, &v)| (k, v))
                ),
            }
            prop_assert_eq!(t.len(), m.len());
        }
        t.check_invariants();
        let got: Vec<(u64, u64)> = t.iter().collect();
        let want: Vec<(u64, u64)> = m.iter().map(|(&k, &v)| (k, v)).collect();
        prop_assert_eq!(got, want);
        // The batched predecessor search agrees, BATCH keys at a time.
        let probes: Vec<u64> = m
            .keys()
            .flat_map(|&k| [k.wrapping_sub(1), k, k.saturating_add(1)])
            .chain([0, u64::MAX, 1 << 20])
            .collect();
        for chunk in probes.chunks(tusk_radix::BATCH) {
            let mut got = vec![None; chunk.len()];
            t.get_le_batch(chunk, &mut got);
            for (&k, g) in chunk.iter().zip(&got) {
                prop_assert_eq!(*g, m.range(..=k).next_back().map(|(&k, &v)| (k, v)));
            }
        }
        // Predecessor search around every key.
        for &k in m.keys() {
            for probe in [k.wrapping_sub(1), k, k.saturating_add(1)] {
                prop_assert_eq!(t.get_le(probe), m.range(..=probe).next_back().map(|(&k, &v)| (k, v)));
            }
        }
        // Delete everything: every node shrinks and is freed.
        for &k in m.keys() {
            prop_assert!(t.remove(k).is_some());
        }
        t.check_invariants();
        prop_assert!(t.is_empty());
        prop_assert_eq!(t.stats().nodes, [0; 5]);
    }
}

/// One block's dead offsets.
fn block_offsets() -> impl Strategy<Value = Vec<u16>> {
    prop_oneof![
        // a few, anywhere on the page
        proptest::collection::btree_set(1u16..300, 1..4),
        // many, low offsets (inline bitmap: 1..=63)
        proptest::collection::btree_set(1u16..64, 20..60),
        // low offsets including 0 (not inline)
        proptest::collection::btree_set(0u16..64, 20..60),
        // many, a whole 8 kB page (bitmap chunk)
        proptest::collection::btree_set(1u16..292, 40..291),
        // wide offsets
        proptest::collection::btree_set(0u16..=tusk_radix::MAX_OFFSET, 1..200),
    ]
    .prop_map(|s| s.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn tidstore_matches_btreeset(
        blocks in proptest::collection::vec((1u32..5000, block_offsets()), 1..150),
        probes in proptest::collection::vec((any::<u32>(), 0u16..400), 0..300),
        big_gap in any::<bool>(),
    ) {
        let mut s = TidStore::new();
        let mut set = BTreeSet::new();
        let mut block = 0u32;
        let mut want = Vec::new();
        for (gap, offs) in &blocks {
            block = block.saturating_add(if big_gap { gap * 500_000 } else { *gap % 7 + 1 });
            if want.last().is_some_and(|(b, _): &(u32, Vec<u16>)| *b >= block) {
                break;
            }
            s.add_block(block, offs);
            for &o in offs {
                set.insert(Tid::new(block, o));
            }
            want.push((block, offs.clone()));
        }
        s.check_invariants();
        prop_assert_eq!(s.len(), set.len());
        for t in &set {
            prop_assert!(s.contains(*t), "missing {:?}", t);
            for o in [t.offset.wrapping_sub(1), t.offset + 1] {
                prop_assert_eq!(s.contains(Tid::new(t.block, o)), set.contains(&Tid::new(t.block, o)));
            }
            for b in [t.block.wrapping_sub(1), t.block.wrapping_add(1)] {
                prop_assert_eq!(s.contains(Tid::new(b, t.offset)), set.contains(&Tid::new(b, t.offset)));
            }
        }
        let mut all = Vec::new();
        for &(b, o) in &probes {
            let t = Tid::new(b % block.saturating_add(2), o);
            prop_assert_eq!(s.contains(t), set.contains(&t));
            all.push(t);
        }
        // The batched lookup gives the same answers, hits and misses mixed.
        all.extend(set.iter().step_by(3).copied());
        all.extend(set.iter().map(|t| Tid::new(t.block, t.offset + 1)).take(100));
        let mut got = vec![false; all.len()];
        s.contains_batch(&all, &mut got);
        for (t, g) in all.iter().zip(&got) {
            prop_assert_eq!(*g, set.contains(t), "batch {:?}", t);
        }
        let got: Vec<(u32, Vec<u16>)> = s.iter().collect();
        prop_assert_eq!(got, want);
    }
}
