//! The btree against a `BTreeSet` model: bulk build, insertions with splits
//! (in a pool much smaller than the index), range scans, bulk deletion, and
//! WAL replay of all of it after a crash.

use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use tusk_storage::btree::{
    Btree, BuildOutcome, Datum, Direction, IndexBuild, KeyEncoder, KeyType, ScanBounds,
};
use tusk_storage::{Database, Tid};

fn open(dir: &std::path::Path, buffers: &str) -> Arc<Database> {
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), buffers.into()),
            ("huge_pages".into(), "off".into()),
        ],
    )
    .unwrap()
}

fn tid(n: u64) -> Tid {
    Tid {
        block: (n / 100) as u32,
        item: (n % 100) as u16 + 1,
    }
}

fn key(v: i64) -> tusk_storage::btree::EncodedKey {
    KeyEncoder::single(KeyType::Int8)
        .encode(&[Datum::Int8(v)])
        .unwrap()
}

fn bound(b: Bound<i64>) -> Bound<Datum<'static>> {
    b.map(Datum::Int8)
}

/// The TIDs of the entries in `lo..hi`, forward, checked against the same
/// scan backward.
fn scan(db: &Database, rel: u32, lo: Bound<i64>, hi: Bound<i64>) -> Vec<Tid> {
    let bt = Btree::new(&db.pool, rel);
    let enc = KeyEncoder::single(KeyType::Int8);
    let bounds = ScanBounds::build(&enc, &[], Some((bound(lo), bound(hi)))).unwrap();
    let read = |dir| {
        let mut c = bt.scan(bounds.clone(), dir).unwrap();
        let mut out = Vec::new();
        while c.next_batch(&db.pool, &mut out, 100).unwrap() {}
        out
    };
    let fwd = read(Direction::Forward);
    let mut back = read(Direction::Backward);
    back.reverse();
    assert_eq!(fwd, back, "backward scan of {lo:?}..{hi:?}");
    fwd
}

fn model_range(m: &BTreeSet<(i64, u64)>, lo: Bound<i64>, hi: Bound<i64>) -> Vec<Tid> {
    m.iter()
        .filter(|(v, _)| (lo, hi).contains(v))
        .map(|&(_, t)| Tid::from_u64(t))
        .collect()
}

/// Builds from `initial`, inserts `more`, checks scans, deletes every TID
/// whose number is a multiple of `del`, checks again.
fn exercise(db: &Database, rel: u32, initial: &[(i64, u64)], more: &[(i64, u64)], del: u64) {
    let txn = db.txn.begin_write().unwrap();
    db.smgr.create(rel).unwrap();
    let bt = Btree::new(&db.pool, rel);
    let mut build = IndexBuild::new();
    for &(v, t) in initial {
        build.push(&key(v), Tid::from_u64(t)).unwrap();
    }
    assert_eq!(
        build.finish(&bt, false, txn.xid()).unwrap(),
        BuildOutcome::Built
    );
    let mut model: BTreeSet<(i64, u64)> = initial.iter().copied().collect();
    for &(v, t) in more {
        if model.insert((v, t)) {
            bt.insert(&key(v).bytes, Tid::from_u64(t), txn.xid())
                .unwrap();
        }
    }
    let ranges = [
        (Bound::Unbounded, Bound::Unbounded),
        (Bound::Included(-5), Bound::Included(5)),
        (Bound::Excluded(0), Bound::Unbounded),
        (Bound::Unbounded, Bound::Excluded(10)),
        (Bound::Included(3), Bound::Included(3)),
        (Bound::Included(i64::MAX), Bound::Unbounded),
    ];
    for (lo, hi) in ranges {
        let got = scan(db, rel, lo, hi);
        assert_eq!(got, model_range(&model, lo, hi), "range {lo:?}..{hi:?}");
    }
    let s = bt
        .bulk_delete(
            |t| t,
            |tids, dead| {
                for (t, d) in tids.iter().zip(dead.iter_mut()) {
                    *d = t.to_u64().is_multiple_of(del);
                }
            },
            txn.xid(),
        )
        .unwrap();
    let before = model.len();
    model.retain(|&(_, t)| !t.is_multiple_of(del));
    assert_eq!(s.removed as usize, before - model.len());
    assert_eq!(s.remaining as usize, model.len());
    let got = scan(db, rel, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(got, model_range(&model, Bound::Unbounded, Bound::Unbounded));
    db.commit(txn).unwrap();
}

#[test]
fn build_insert_scan_delete_in_small_pool() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), "256kB");
    // Many duplicates, then ascending and descending insertions that split
    // the rightmost and leftmost pages many times.
    let initial: Vec<(i64, u64)> = (0..20_000u64)
        .map(|n| ((n % 37) as i64 - 18, tid(n).to_u64()))
        .collect();
    let mut more: Vec<(i64, u64)> = (0..15_000u64)
        .map(|n| (n as i64, tid(100_000 + n).to_u64()))
        .collect();
    more.extend((0..15_000u64).map(|n| (-(n as i64), tid(200_000 + n).to_u64())));
    exercise(&db, 20_000, &initial, &more, 3);
    // An empty build, then insertions only.
    let more: Vec<(i64, u64)> = (0..5000u64)
        .map(|n| (((n * 7919) % 1000) as i64, tid(n).to_u64()))
        .collect();
    exercise(&db, 20_001, &[], &more, 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn matches_model(
        initial in proptest::collection::vec((-50i64..50, 0u64..5000), 0..2000),
        more in proptest::collection::vec((-50i64..50, 0u64..5000), 0..3000),
        del in 2u64..5,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), "1MB");
        let mut seen = BTreeSet::new();
        let initial: Vec<(i64, u64)> = initial
            .into_iter()
            .map(|(v, t)| (v, tid(t).to_u64()))
            .filter(|k| seen.insert(*k))
            .collect();
        let more: Vec<(i64, u64)> = more.into_iter().map(|(v, t)| (v, tid(t).to_u64())).collect();
        exercise(&db, 30_000, &initial, &more, del);
    }
}

/// Scans remember each tree's root (`rootcache`) and start there: after
/// the root has split, several levels over, every scan still finds every
/// entry, starting from the old root.
#[test]
fn scans_after_root_splits_start_from_a_remembered_root() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), "1MB");
    let rel = 40_000;
    let txn = db.txn.begin_write().unwrap();
    db.smgr.create(rel).unwrap();
    let bt = Btree::new(&db.pool, rel);
    let build = IndexBuild::new();
    assert_eq!(
        build.finish(&bt, false, txn.xid()).unwrap(),
        BuildOutcome::Built
    );
    let mut model: BTreeSet<(i64, u64)> = BTreeSet::new();
    let point = |v: i64| scan(&db, rel, Bound::Included(v), Bound::Included(v));
    for round in 0..6u64 {
        // The first round leaves a root that is a leaf; the scans after it
        // remember that page, and the next round's insertions split it.
        let count = if round == 0 { 100 } else { 4000 };
        for n in 0..count {
            let v = ((n * 7919 + round * 13) % 50_000) as i64;
            let t = tid(round * 10_000 + n).to_u64();
            model.insert((v, t));
            bt.insert(&key(v).bytes, Tid::from_u64(t), txn.xid())
                .unwrap();
        }
        for v in [0, 1, 7919, 25_000, 49_999, 50_000] {
            assert_eq!(
                point(v),
                model_range(&model, Bound::Included(v), Bound::Included(v)),
                "key {v} after round {round}"
            );
        }
        let all = scan(&db, rel, Bound::Unbounded, Bound::Unbounded);
        assert_eq!(all.len(), model.len(), "round {round}");
    }
    db.commit(txn).unwrap();
}
