//! Two-column keys `(a int4, b text)` of any ASC/DESC and NULLS FIRST/LAST
//! mix against a model sorted by a comparator written from PostgreSQL's
//! rules (not from the encoding): bulk build (sorting in spilled runs),
//! insertions of variable-length
//! keys up to 2,650 bytes (splits of leaves and internal pages
//! with uneven entries), bulk deletion, then full scans and scans with
//! equality on `a` (or `a IS NULL`) and a range on `b`, forward and
//! backward.

use proptest::prelude::*;
use std::cmp::Ordering;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use tusk_storage::btree::{
    Btree, ColumnOrder, Datum, Direction, IndexBuild, KeyEncoder, KeyType, ScanBounds,
};
use tusk_storage::{Database, Tid};

type Row = (Option<i32>, Option<String>, Tid);

fn open(dir: &std::path::Path) -> Arc<Database> {
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), "1MB".into()),
            ("huge_pages".into(), "off".into()),
            ("autovacuum".into(), "off".into()),
        ],
    )
    .unwrap()
}

/// PostgreSQL's order of one column's values under `o`.
fn cmp_col<T: Ord>(x: &Option<T>, y: &Option<T>, o: ColumnOrder) -> Ordering {
    match (x, y) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) if o.nulls_first => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => cmp_col(y, x, o).reverse(),
        (Some(x), Some(y)) if o.desc => y.cmp(x),
        (Some(x), Some(y)) => x.cmp(y),
    }
}

fn cmp_rows(x: &Row, y: &Row, oa: ColumnOrder, ob: ColumnOrder) -> Ordering {
    cmp_col(&x.0, &y.0, oa)
        .then_with(|| {
            cmp_col(
                &x.1.as_ref().map(|s| s.as_bytes()),
                &y.1.as_ref().map(|s| s.as_bytes()),
                ob,
            )
        })
        .then(x.2.cmp(&y.2))
}

fn datums(r: &Row) -> [Datum<'_>; 2] {
    [
        r.0.map_or(Datum::Null, Datum::Int4),
        r.1.as_ref()
            .map_or(Datum::Null, |s| Datum::Text(s.as_bytes())),
    ]
}

fn order(desc: bool, nulls_first: bool) -> ColumnOrder {
    ColumnOrder { desc, nulls_first }
}

fn text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        1 => Just(None),
        8 => "[ab ]{0,6}".prop_map(Some),
        1 => (0usize..3, 150usize..2690).prop_map(|(c, n)| Some(["a", "b", "ab"][c].repeat(n)[..n].to_string())),
    ]
}

fn int() -> impl Strategy<Value = Option<i32>> {
    prop_oneof![1 => Just(None), 8 => (-6i32..6).prop_map(Some)]
}

fn bound(kind: u8, v: &str) -> Bound<&str> {
    match kind % 3 {
        0 => Bound::Unbounded,
        1 => Bound::Included(v),
        _ => Bound::Excluded(v),
    }
}

#[allow(clippy::too_many_arguments)]
fn check_scan(
    db: &Database,
    bt: &Btree<'_>,
    enc: &KeyEncoder,
    model: &[Row],
    eq: Option<Option<i32>>,
    range: Option<(Bound<&str>, Bound<&str>)>,
) {
    let eq_datum: Vec<Datum<'_>> = eq
        .iter()
        .map(|a| a.map_or(Datum::Null, Datum::Int4))
        .collect();
    let datum_range = range.map(|(lo, hi)| {
        (
            lo.map(|s| Datum::Text(s.as_bytes())),
            hi.map(|s| Datum::Text(s.as_bytes())),
        )
    });
    // A range with no equality applies to `a`: use the text bounds' lengths
    // as integers so that one generator serves both.
    let (eq_datum, datum_range, int_range) = if eq.is_none() {
        let r = range.map(|(lo, hi)| {
            (
                lo.map(|s| s.len() as i32 - 3),
                hi.map(|s| s.len() as i32 - 3),
            )
        });
        (
            vec![],
            r.map(|(lo, hi)| (lo.map(Datum::Int4), hi.map(Datum::Int4))),
            r,
        )
    } else {
        (eq_datum, datum_range, None)
    };
    let bounds = ScanBounds::build(enc, &eq_datum, datum_range).unwrap();
    let want: Vec<Tid> = model
        .iter()
        .filter(|r| match eq {
            Some(a) => {
                r.0 == a
                    && match range {
                        None => true,
                        Some(rg) => r.1.as_deref().is_some_and(|b| rg.contains(b)),
                    }
            }
            None => match int_range {
                None => true,
                Some(rg) => r.0.is_some_and(|a| rg.contains(&a)),
            },
        })
        .map(|r| r.2)
        .collect();
    for dir in [Direction::Forward, Direction::Backward] {
        let mut c = bt.scan(bounds.clone(), dir).unwrap();
        let mut got = Vec::new();
        while c.next_batch(&db.pool, &mut got, 7).unwrap() {}
        if dir == Direction::Backward {
            got.reverse();
        }
        assert_eq!(
            got, want,
            "eq {eq:?} range {range:?} {dir:?} bounds {bounds:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn two_column_keys_match_model(
        initial in proptest::collection::vec((int(), text()), 0..1500),
        more in proptest::collection::vec((int(), text()), 0..600),
        orders in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        del in 2u16..5,
        scans in proptest::collection::vec(
            (proptest::option::of(int()), any::<bool>(), any::<u8>(), "[ab ]{0,5}", any::<u8>(), "[ab ]{0,5}"),
            12,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let (oa, ob) = (order(orders.0, orders.1), order(orders.2, orders.3));
        let enc = KeyEncoder::new(vec![(KeyType::Int4, oa), (KeyType::Text, ob)]);
        let rel = 40_000;
        db.smgr.create(rel).unwrap();
        let txn = db.txn.begin_write().unwrap();
        let bt = Btree::new(&db.pool, rel);
        let tid = |n: usize| Tid { block: (n / 50) as u32, item: (n % 50) as u16 + 1 };
        let mut model: Vec<Row> = Vec::new();
        // A 16 kB budget: builds of more than a few dozen entries spill.
        let spill = tempfile::tempdir().unwrap();
        let mut build = IndexBuild::with_budget(16 << 10, spill.path().to_path_buf());
        for (i, (a, b)) in initial.into_iter().enumerate() {
            let r = (a, b, tid(i));
            build.push(&enc.encode(&datums(&r)).unwrap(), r.2).unwrap();
            model.push(r);
        }
        let spilled = build.spilled_runs();
        build.finish(&bt, false, txn.xid()).unwrap();
        // 24 bytes an entry and its key: 700 entries pass 16 kB.
        prop_assert!(spilled > 0 || model.len() < 700, "{} entries, no run spilled", model.len());
        for (i, (a, b)) in more.into_iter().enumerate() {
            let r = (a, b, tid(10_000 + i));
            bt.insert(&enc.encode(&datums(&r)).unwrap().bytes, r.2, txn.xid()).unwrap();
            model.push(r);
        }
        let dead = |t: &Tid| t.item.is_multiple_of(del);
        let stats = bt
            .bulk_delete(|t| t, |tids, out| {
                for (t, d) in tids.iter().zip(out.iter_mut()) {
                    *d = dead(t);
                }
            }, txn.xid())
            .unwrap();
        let before = model.len();
        model.retain(|r| !dead(&r.2));
        prop_assert_eq!(stats.removed as usize, before - model.len());
        model.sort_by(|x, y| cmp_rows(x, y, oa, ob));
        check_scan(&db, &bt, &enc, &model, None, None);
        for (eq, with_range, lk, lv, hk, hv) in &scans {
            let range = with_range.then(|| (bound(*lk, lv), bound(*hk, hv)));
            check_scan(&db, &bt, &enc, &model, *eq, range);
        }
        db.commit(txn).unwrap();
    }
}
