//! Operator-level tests of the hash join's kinds against the reference
//! nested loop (`join_reference`), in memory, spilling and in parallel.

use crate::expr::{CmpOp, Expr};
use crate::join_reference::{
    canonical, hash_kinds, int_case_of, outer_out_of, rows, run, scan, table, JoinCase, Row,
};
use crate::numeric::Numeric;
use crate::operator::ExecContext;
use crate::plan::{JoinKind, NodeKind};
use crate::testing::{node, TestDb};
use crate::value::Value;
use proptest::prelude::*;
use tusk_storage::DataType;

/// A work_mem under which every join of more than a few rows spills
/// (limit 16 kB: the slot array alone takes half of it).
const TINY: usize = 8 << 10;

fn check(case: &JoinCase, ctx: &ExecContext, per_batch: usize) {
    let got = case.run_hash(ctx, per_batch).unwrap();
    assert_eq!(
        canonical(&got),
        canonical(&case.expected()),
        "{:?} keys {:?}/{:?} filter {}",
        case.kind,
        case.outer_keys,
        case.inner_keys,
        case.filter.is_some()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// Every kind, with NULL keys on either side, duplicates, empty inputs,
    /// one or two keys and a filter that may be NULL, equals the reference,
    /// in memory and spilling.
    #[test]
    fn every_kind_matches_the_reference(case in int_case_of(&hash_kinds()), per_batch in 1usize..50) {
        let db = TestDb::new();
        check(&case, &db.ctx(4 << 20, 8), per_batch);
        check(&case, &db.ctx(TINY, 8), per_batch);
    }
}

pub(super) fn case(kind: JoinKind, outer: Vec<Row>, inner: Vec<Row>, filter: bool) -> JoinCase {
    let t = vec![DataType::Int4, DataType::Int4];
    JoinCase {
        kind,
        outer_types: t.clone(),
        inner_types: t,
        outer,
        inner,
        outer_keys: vec![0],
        inner_keys: vec![0],
        filter: filter.then(|| Expr::Cmp {
            op: CmpOp::Le,
            left: Box::new(Expr::Column {
                index: 1,
                ty: DataType::Int4,
            }),
            right: Box::new(Expr::Column {
                index: 3,
                ty: DataType::Int4,
            }),
        }),
        outer_out: outer_out_of(kind),
        inner_out: if kind.emits_inner_columns() {
            vec![1]
        } else {
            vec![]
        },
    }
}

/// Bigger inputs that partition recursively and, with a single key over
/// most rows, join a partition in chunks: every kind still equals the
/// reference, and the report says it partitioned.
#[test]
fn spilling_recursive_and_chunked_partitions() {
    let db = TestDb::new();
    for kind in hash_kinds() {
        for (outer, inner) in [
            (rows(700, 300, 0), rows(900, 250, 5)),
            // One key for most build rows: a partition that cannot split.
            (rows(300, 3, 1), rows(1500, 2, 0)),
        ] {
            for filter in [false, true] {
                let c = case(kind, outer.clone(), inner.clone(), filter);
                let ctx = db.ctx(TINY, 8);
                check(&c, &ctx, 128);
                assert!(ctx.spill.written.get() > 0, "{kind:?} spilled");
            }
        }
    }
}

/// Empty inputs on either side, for every kind, in memory and spilling.
#[test]
fn empty_inputs() {
    let db = TestDb::new();
    for kind in hash_kinds() {
        for (o, i) in [(0, 50), (50, 0), (0, 0)] {
            let c = case(kind, rows(o, 10, 0), rows(i, 10, 0), false);
            check(&c, &db.ctx(4 << 20, 8), 16);
            check(&c, &db.ctx(TINY, 8), 16);
        }
    }
}

/// A null-aware mark with an outer NULL key: NULL while the inner side has
/// rows, false when it has none, true never.
#[test]
fn null_aware_mark_rules() {
    let db = TestDb::new();
    let null_key = vec![
        vec![Value::Null, Value::Int4(1)],
        vec![Value::Int4(5), Value::Int4(1)],
    ];
    let kind = JoinKind::Mark { null_aware: true };
    for (inner, marks) in [
        // x IN (1): NULL IN (1) is NULL, 5 IN (1) is false.
        (
            vec![vec![Value::Int4(1), Value::Int4(0)]],
            [Value::Null, Value::Bool(false)],
        ),
        // x IN (NULL): NULL for both.
        (
            vec![vec![Value::Null, Value::Int4(0)]],
            [Value::Null, Value::Null],
        ),
        // x IN (empty): false for both.
        (vec![], [Value::Bool(false), Value::Bool(false)]),
        // x IN (5): NULL, true.
        (
            vec![vec![Value::Int4(5), Value::Int4(0)]],
            [Value::Null, Value::Bool(true)],
        ),
    ] {
        let c = case(kind, null_key.clone(), inner, false);
        for work_mem in [4 << 20, TINY] {
            let got = c.run_hash(&db.ctx(work_mem, 8), 10).unwrap();
            let mut got: Vec<(Value, Value)> = got
                .into_iter()
                .map(|r| (r[0].clone(), r[2].clone()))
                .collect();
            got.sort_by_key(|(k, _)| format!("{k:?}"));
            // Sorted by key: Int4(5) before Null.
            assert_eq!(got[0].1, marks[1]);
            assert_eq!(got[1].1, marks[0]);
        }
    }
}

/// `(a, b) IN (select x, y ...)`: NULL when no row matches and some row
/// is equal or NULL on every key.
#[test]
fn null_aware_mark_with_two_keys() {
    let db = TestDb::new();
    let v = |a: Option<i32>, b: Option<i32>| {
        vec![
            a.map_or(Value::Null, Value::Int4),
            b.map_or(Value::Null, Value::Int4),
        ]
    };
    let outer = vec![
        v(Some(1), Some(2)),
        v(Some(1), None),
        v(Some(3), Some(4)),
        v(None, None),
    ];
    let inner = vec![v(Some(1), None), v(Some(9), Some(4))];
    let mut c = case(JoinKind::Mark { null_aware: true }, outer, inner, false);
    c.outer_keys = vec![0, 1];
    c.inner_keys = vec![0, 1];
    let expected = c.expected();
    let marks: Vec<Value> = expected.iter().map(|r| r[2].clone()).collect();
    // (1,2) vs (1,NULL): NULL. (1,NULL): NULL. (3,4) vs (9,4): false,
    // vs (1,NULL): false. (NULL,NULL): NULL.
    assert_eq!(
        marks,
        [Value::Null, Value::Null, Value::Bool(false), Value::Null]
    );
    for work_mem in [4 << 20, TINY] {
        check(&c, &db.ctx(work_mem, 8), 2);
    }
}

/// Text and numeric keys (1.0 joins 1.00), with NULLs, every kind.
#[test]
fn text_and_numeric_keys() {
    let db = TestDb::new();
    let num = |s: String| Value::Numeric(Numeric::parse(&s).unwrap());
    let outer: Vec<Row> = (0..60)
        .map(|i| {
            vec![
                if i % 9 == 0 {
                    Value::Null
                } else {
                    Value::Text(format!("k{}", i % 7))
                },
                if i % 10 == 0 {
                    Value::Null
                } else {
                    num(format!("{}.0", i % 5))
                },
            ]
        })
        .collect();
    let inner: Vec<Row> = (0..45)
        .map(|i| {
            vec![
                if i % 8 == 0 {
                    Value::Null
                } else {
                    Value::Text(format!("k{}", i % 9))
                },
                if i % 6 == 0 {
                    Value::Null
                } else {
                    num(format!("{}.00", i % 4))
                },
            ]
        })
        .collect();
    for kind in hash_kinds() {
        for keys in [vec![0], vec![1], vec![0, 1]] {
            let c = JoinCase {
                kind,
                outer_types: vec![DataType::Text, DataType::Numeric],
                inner_types: vec![DataType::Text, DataType::Numeric],
                outer: outer.clone(),
                inner: inner.clone(),
                outer_keys: keys.clone(),
                inner_keys: keys,
                filter: None,
                outer_out: if kind.emits_outer_columns() {
                    vec![1, 0]
                } else {
                    vec![]
                },
                inner_out: if kind.emits_inner_columns() {
                    vec![0, 1]
                } else {
                    vec![]
                },
            };
            check(&c, &db.ctx(4 << 20, 8), 13);
            check(&c, &db.ctx(TINY, 8), 13);
        }
    }
}

/// A hash join without keys is refused with an error, never a panic.
#[test]
fn zero_keys_is_an_error() {
    let db = TestDb::new();
    for kind in hash_kinds() {
        let mut c = case(kind, rows(3, 3, 0), rows(3, 3, 0), false);
        c.outer_keys.clear();
        c.inner_keys.clear();
        let err = c.run_hash(&db.ctx(4 << 20, 8), 10).unwrap_err();
        assert!(err.message.contains("nested loop"), "{}", err.message);
    }
}

/// Every kind as a Parallel Hash Join under a Gather with two workers —
/// in memory (right and full joins: shared match bits, the last
/// participant emits the unmatched rows) and spilling — returns what the
/// serial join returns.
#[test]
fn parallel_hash_join_every_kind() {
    let db = TestDb::new();
    let outer_rows = rows(30_000, 3_000, 0);
    let mut inner_rows = rows(20_000, 4_000, 17);
    // Whole batches of NULL keys on both sides.
    inner_rows.extend((0..5000).map(|i| vec![Value::Null, Value::Int4(i % 5)]));
    let mut outer_rows = outer_rows;
    outer_rows.extend((0..5000).map(|i| vec![Value::Null, Value::Int4(i % 3)]));
    let (o, ot) = table(&db, "o", &outer_rows);
    let (i, it) = table(&db, "i", &inner_rows);
    for kind in hash_kinds() {
        for filter in [false, true] {
            for two_keys in [false, true] {
                let mut c = case(kind, vec![], vec![], filter);
                if two_keys {
                    c.outer_keys = vec![0, 1];
                    c.inner_keys = vec![0, 1];
                }
                let serial = c.hash_plan(scan(o, "o", &ot, false), scan(i, "i", &it, false), false);
                let ctx = db.ctx(4 << 20, 16);
                let expected = canonical(&run(&serial, &ctx));
                for work_mem in [4 << 20, 64 << 10] {
                    let join = c.hash_plan(scan(o, "o", &ot, true), scan(i, "i", &it, true), true);
                    let out = join.output.to_vec();
                    let mut gather = node(NodeKind::Gather { workers: 2 }, vec![join], out);
                    gather.assign_ids();
                    let ctx = db.ctx(work_mem, 16);
                    let got = canonical(&run(&gather, &ctx));
                    assert_eq!(
                        got.len(),
                        expected.len(),
                        "{kind:?} filter {filter} two keys {two_keys} work_mem {work_mem}"
                    );
                    assert!(
                        got == expected,
                        "{kind:?} filter {filter} two keys {two_keys} work_mem {work_mem}"
                    );
                }
            }
        }
    }
}

/// The serial join on the same tables agrees with the reference (so the
/// parallel test above compares with a checked result).
#[test]
fn serial_scans_match_the_reference() {
    let db = TestDb::new();
    let outer_rows = rows(400, 50, 0);
    let inner_rows = rows(300, 60, 17);
    let (o, ot) = table(&db, "o", &outer_rows);
    let (i, it) = table(&db, "i", &inner_rows);
    for kind in hash_kinds() {
        let mut c = case(kind, outer_rows.clone(), inner_rows.clone(), true);
        let p = c.hash_plan(scan(o, "o", &ot, false), scan(i, "i", &it, false), false);
        assert_eq!(
            canonical(&run(&p, &db.ctx(4 << 20, 8))),
            canonical(&c.expected())
        );
        c.outer_keys = vec![0, 1];
        c.inner_keys = vec![0, 1];
        let p = c.hash_plan(scan(o, "o", &ot, false), scan(i, "i", &it, false), false);
        assert_eq!(
            canonical(&run(&p, &db.ctx(TINY, 8))),
            canonical(&c.expected())
        );
    }
}

/// PostgreSQL's order of a hash join's inputs: an empty probe side ends the
/// join before the build side runs — for every kind that keeps unmatched
/// probe rows, for inner joins whose probe side starts cheaper than the
/// Hash node costs, and in a Parallel Hash Join only once every
/// participant's share was empty. Right, full, right semi and right anti
/// joins always build (and an empty build side ends the last two before
/// their probe side runs).
#[test]
fn empty_probe_side_skips_the_build() {
    let db = TestDb::new();
    let (o, ot) = table(&db, "o", &[]);
    let (i, it) = table(&db, "i", &rows(500, 50, 0));
    // (kind, Hash node's total cost, whether the build is skipped)
    let shapes = [
        (JoinKind::Left, 0.0, true),
        (JoinKind::Anti, 0.0, true),
        (JoinKind::Inner, 10.0, true),
        (JoinKind::Semi, 10.0, true),
        (JoinKind::Inner, 0.0, false),
        (JoinKind::Right, 10.0, false),
        (JoinKind::Full, 10.0, false),
        (JoinKind::RightSemi, 10.0, false),
        (JoinKind::RightAnti, 10.0, false),
    ];
    for (kind, hash_cost, skipped) in shapes {
        for parallel in [false, true] {
            let c = case(kind, vec![], vec![], false);
            let mut join = c.hash_plan(
                scan(o, "o", &ot, parallel),
                scan(i, "i", &it, parallel),
                parallel,
            );
            join.children[1].est.total_cost = hash_cost;
            let plan = if parallel {
                let out = join.output.to_vec();
                let mut gather = node(NodeKind::Gather { workers: 2 }, vec![join], out);
                gather.assign_ids();
                gather
            } else {
                join
            };
            let ctx = db.ctx(4 << 20, 8);
            let got = run(&plan, &ctx);
            let all_inner = if kind.keeps_unmatched_inner() { 500 } else { 0 };
            assert_eq!(got.len(), all_inner, "{kind:?}");
            let join = if parallel { &plan.children[0] } else { &plan };
            let hash = join.children[1].id;
            let loops = ctx.stats.as_ref().unwrap().borrow()[hash].loops;
            assert_eq!(loops == 0, skipped, "{kind:?} parallel {parallel}");
        }
    }
}
