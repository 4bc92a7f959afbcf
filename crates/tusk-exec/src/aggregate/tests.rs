//! Operator-level tests of aggregation: every function against PostgreSQL
//! 15's output on the same data, NULLs, empty input, DISTINCT and ORDER BY
//! inputs, FILTER, spilling under a small `work_mem`, and Partial/Finalize
//! through a Gather.

use super::*;
use crate::numeric::Numeric;
use crate::plan::{AggFunc as F, SortKey};
use crate::testing::{batches, col, node, rows_of, text_rows, Batches, TestDb};
use crate::value::Value as V;
use tusk_storage::DataType as T;
use tusk_types::Interval;

/// The test table `d` of PostgreSQL's side:
///
/// ```sql
/// create table d as select i, i % 7 as g,
///  case when i % 11 = 0 then null else (i * 37) % 1000 - 500 end as x,
///  ((i * 104729) % 1000)::bigint * 9223372036854775 as y,
///  case when i % 13 = 0 then null else i::float8 / 7 end as f,
///  (((i * 13) % 200) - 100)::numeric * 0.125 as n,
///  'v' || (i * 17 % 23) as t,
///  case when i % 5 = 0 then null else i % 3 = 0 end as b,
///  make_interval(months => i % 3, days => i % 40, hours => i % 13) as iv
/// from generate_series(1, 1000) i;
/// ```
const D_TYPES: [T; 9] = [
    T::Int4,
    T::Int4,
    T::Int4,
    T::Int8,
    T::Float8,
    T::Numeric,
    T::Text,
    T::Bool,
    T::Interval,
];
const I: usize = 0;
const G: usize = 1;
const X: usize = 2;
const Y: usize = 3;
const FL: usize = 4;
const N: usize = 5;
const TX: usize = 6;
const B: usize = 7;
const IV: usize = 8;

fn d_rows(count: i64) -> Vec<Vec<V>> {
    (1..=count)
        .map(|i| {
            vec![
                V::Int4(i as i32),
                V::Int4((i % 7) as i32),
                if i % 11 == 0 {
                    V::Null
                } else {
                    V::Int4(((i * 37) % 1000 - 500) as i32)
                },
                V::Int8((i * 104729) % 1000 * 9223372036854775),
                if i % 13 == 0 {
                    V::Null
                } else {
                    V::Float8(i as f64 / 7.0)
                },
                V::Numeric(
                    Numeric::parse(&format!("{:.3}", ((i * 13) % 200 - 100) as f64 * 0.125))
                        .unwrap(),
                ),
                V::Text(format!("v{}", i * 17 % 23)),
                if i % 5 == 0 {
                    V::Null
                } else {
                    V::Bool(i % 3 == 0)
                },
                V::Interval(Interval::new(
                    (i % 3) as i32,
                    (i % 40) as i32,
                    (i % 13) * 3_600_000_000,
                )),
            ]
        })
        .collect()
}

fn call(func: F, args: &[usize]) -> AggCall {
    AggCall::new(func, args.iter().map(|&c| col(c, D_TYPES[c])).collect())
}

/// Runs an Aggregate over `rows` of `types` and returns its rows as text.
fn run_agg(
    db: &TestDb,
    work_mem: usize,
    types: &[T],
    input: Batches,
    group: Vec<Expr>,
    aggs: Vec<AggCall>,
    mode: AggMode,
) -> (Vec<Vec<V>>, AggReport) {
    let ctx = db.ctx(work_mem, 2);
    let mut out: Vec<T> = group.iter().map(|g| g.data_type()).collect();
    for a in &aggs {
        if mode == AggMode::Partial {
            out.extend(a.partial_types());
        } else {
            out.push(a.result);
        }
    }
    let child = node(NodeKind::Values { rows: vec![] }, vec![], types.to_vec());
    let plan = node(
        NodeKind::Aggregate { group, aggs, mode },
        vec![child],
        out.clone(),
    );
    let mut op = Aggregate::new(&plan, &ctx, Box::new(input)).unwrap();
    let rows = rows_of(&mut op, &out).unwrap();
    (rows, op.report())
}

fn sorted_text(rows: &[Vec<V>]) -> Vec<String> {
    let mut t = text_rows(rows);
    t.sort_by_key(|r| {
        r.split('|')
            .next()
            .unwrap_or("")
            .parse::<i64>()
            .unwrap_or(0)
    });
    t
}

fn grouped(db: &TestDb, aggs: Vec<AggCall>) -> Vec<String> {
    let rows = d_rows(1000);
    let (out, _) = run_agg(
        db,
        4 << 20,
        &D_TYPES,
        batches(&D_TYPES, &rows, 300),
        vec![col(G, T::Int4)],
        aggs,
        AggMode::Simple,
    );
    sorted_text(&out)
}

#[test]
fn integer_sums_averages_and_extremes_match_postgres() {
    let db = TestDb::new();
    let got = grouped(
        &db,
        vec![
            AggCall::new(F::CountStar, vec![]),
            call(F::Count, &[X]),
            call(F::Sum, &[X]),
            call(F::Sum, &[Y]),
            call(F::Avg, &[X]),
            call(F::Avg, &[Y]),
            call(F::Min, &[X]),
            call(F::Max, &[X]),
        ],
    );
    // select g, count(*), count(x), sum(x), sum(y), avg(x), avg(y), min(x), max(x) from d group by g order by g;
    let want = [
        "0|142|130|-595|643413209918952249225|-4.5769230769230769|4531078943091213023|-499|493",
        "1|143|130|114|664138126885764928650|0.87692307692307692308|4644322565634719781|-491|494",
        "2|143|130|-177|666416299778868058075|-1.3615384615384615|4660253844607468938|-497|495",
        "3|143|130|-468|659471100635116412500|-3.6000000000000000|4611686018427387500|-496|496",
        "4|143|130|278|652525901491364766925|2.1384615384615385|4563118192247306062|-495|497",
        "5|143|130|987|654804074384467896350|7.5923076923076923|4579049471220055219|-494|498",
        "6|143|130|-304|666305619314425800775|-2.3384615384615385|4659479855345634970|-500|499",
    ];
    assert_eq!(got, want);
}

#[test]
fn float_and_numeric_statistics_match_postgres_digits() {
    let db = TestDb::new();
    let got = grouped(
        &db,
        vec![
            call(F::Sum, &[FL]),
            call(F::Avg, &[FL]),
            call(F::Stddev, &[FL]),
            call(F::VarPop, &[FL]),
            call(F::Variance, &[X]),
            call(F::StddevPop, &[Y]),
            call(F::Variance, &[N]),
            call(F::Stddev, &[N]),
            call(F::Avg, &[N]),
            call(F::Sum, &[N]),
        ],
    );
    // select g, sum(f), avg(f), stddev(f), var_pop(f), variance(x), stddev_pop(y),
    //   variance(n), stddev(n), avg(n), sum(n) from d group by g order by g;
    let want = [
        "0|9438|71.5|41.41145248535198|1701.9166666666667|84402.804114490161|2638217932576442381|51.5508261225152332|7.1798903976673093|-0.24383802816901408451|-34.625",
        "1|9335.857142857136|70.72619047619042|41.423532358779845|1702.9097222222226|84221.597137745975|2683704964794551832|52.6851484782822811|7.2584535872513700|-0.10314685314685314685|-14.750",
        "2|9376.714285714294|71.03571428571435|41.44109679794674|1704.3541666666645|83926.232617769827|2669662657802302633|52.6694511474441052|7.2573721929803287|0.12325174825174825175|17.625",
        "3|9417.571428571428|71.34523809523809|41.44987622642255|1705.076388888888|83791.606201550388|2631496669578883244|52.4463028169014085|7.2419819674521013|0.00000000000000000000|0.000",
        "4|9458.428571428572|71.65476190476191|41.44987622642258|1705.07638888889|83975.267501490757|2669662657802302633|52.5952735644637053|7.2522598936099708|-0.29807692307692307692|-42.625",
        "5|9499.285714285706|71.96428571428565|41.44109679794679|1704.3541666666688|84002.320870602266|2683704964794551832|52.6906887126957549|7.2588352173537977|-0.07167832167832167832|-10.250",
        "6|9540.142857142864|72.27380952380958|41.423532358779845|1702.9097222222226|84445.807036374478|2657896498893600796|52.3234942874027381|7.2334980671458493|0.15472027972027972028|22.125",
    ];
    assert_eq!(got, want);
}

#[test]
fn text_bool_interval_and_distinct_match_postgres() {
    let db = TestDb::new();
    let mut count_distinct = call(F::Count, &[TX]);
    count_distinct.distinct = true;
    let mut sum_distinct = call(F::Sum, &[X]);
    sum_distinct.distinct = true;
    let got = grouped(
        &db,
        vec![
            call(F::Min, &[TX]),
            call(F::Max, &[TX]),
            call(F::BoolAnd, &[B]),
            call(F::BoolOr, &[B]),
            count_distinct,
            sum_distinct,
            call(F::Avg, &[IV]),
            call(F::Sum, &[IV]),
            call(F::Max, &[IV]),
            call(F::Min, &[IV]),
        ],
    );
    // select g, min(t), max(t), bool_and(b), bool_or(b), count(distinct t), sum(distinct x),
    //   avg(iv), sum(iv), max(iv), min(iv) from d group by g order by g;
    let want = [
        "0|v0|v9|f|t|23|-595|1 mon 19 days 21:45:38.028169|11 years 10 mons 2791 days 858:00:00|2 mons 39 days 10:00:00|08:00:00",
        "1|v0|v9|f|t|23|114|1 mon 19 days 20:36:05.016839|12 years 2774 days 858:00:00|2 mons 39 days 05:00:00|03:00:00",
        "2|v0|v9|f|t|23|-177|1 mon 19 days 19:25:35.664336|11 years 11 mons 2797 days 858:00:00|2 mons 39 days 08:00:00|06:00:00",
        "3|v0|v9|f|t|23|-468|49 days 11:32:18.479664|11 years 10 mons 2780 days 858:00:00|2 mons 39 days 11:00:00|09:00:00",
        "4|v0|v9|f|t|23|278|1 mon 19 days 25:28:06.695161|12 years 2803 days 858:00:00|2 mons 39 days 01:00:00|12:00:00",
        "5|v0|v9|f|t|23|987|1 mon 19 days 17:34:49.51049|11 years 11 mons 2786 days 858:00:00|2 mons 39 days 04:00:00|02:00:00",
        "6|v0|v9|f|t|23|-304|49 days 09:41:32.325818|11 years 10 mons 2769 days 858:00:00|2 mons 39 days 07:00:00|05:00:00",
    ];
    assert_eq!(got, want);
}

#[test]
fn filter_and_ordered_string_agg_match_postgres() {
    let db = TestDb::new();
    let gt0 = Expr::Cmp {
        op: crate::expr::CmpOp::Gt,
        left: Box::new(col(X, T::Int4)),
        right: Box::new(crate::testing::lit(V::Int4(0), T::Int4)),
    };
    let lt60 = Expr::Cmp {
        op: crate::expr::CmpOp::Lt,
        left: Box::new(col(I, T::Int4)),
        right: Box::new(crate::testing::lit(V::Int4(60), T::Int4)),
    };
    let mut c = AggCall::new(F::CountStar, vec![]);
    c.filter = Some(gt0);
    let mut s = call(F::Sum, &[X]);
    s.filter = Some(col(B, T::Bool));
    let mut sa = AggCall::new(
        F::StringAgg,
        vec![
            col(TX, T::Text),
            crate::testing::lit(V::Text(",".into()), T::Text),
        ],
    );
    sa.filter = Some(lt60);
    sa.order_by = vec![
        SortKey {
            expr: col(X, T::Int4),
            desc: true,
            nulls_first: true,
        },
        SortKey {
            expr: col(TX, T::Text),
            desc: false,
            nulls_first: false,
        },
    ];
    let got = grouped(&db, vec![c, s, sa]);
    // select g, count(*) filter (where x > 0), sum(x) filter (where b),
    //   string_agg(t, ',' order by x desc nulls first, t) filter (where i < 60)
    //   from d group by g order by g;
    let want = [
        "0|65|2161|v5,v12,v1,v8,v20,v4,v9,v16",
        "1|65|923|v6,v22,v18,v2,v14,v21,v3,v10,v17",
        "2|65|849|v12,v16,v0,v19,v8,v15,v20,v4,v11",
        "3|64|1259|v10,v17,v6,v13,v2,v9,v14,v21,v5",
        "4|65|1302|v3,v4,v11,v0,v7,v19,v15,v22",
        "5|66|1173|v9,v21,v5,v17,v1,v13,v20,v16",
        "6|64|989|v15,v22,v11,v18,v7,v14,v3,v10",
    ];
    assert_eq!(got, want);
}

#[test]
fn plain_aggregates_over_all_and_no_rows() {
    let db = TestDb::new();
    let aggs = || {
        vec![
            AggCall::new(F::CountStar, vec![]),
            call(F::Sum, &[X]),
            call(F::Variance, &[Y]),
            call(F::Stddev, &[Y]),
            call(F::VarSamp, &[X]),
            call(F::StddevSamp, &[X]),
        ]
    };
    let rows = d_rows(1000);
    let (out, _) = run_agg(
        &db,
        4 << 20,
        &D_TYPES,
        batches(&D_TYPES, &rows, 1000),
        vec![],
        aggs(),
        AggMode::Simple,
    );
    // select count(*), sum(x), variance(y), stddev(y), var_samp(x), stddev_samp(x) from d;
    assert_eq!(
        text_rows(&out),
        ["1000|-165|7096305193497069630152942895077135417|2663889110585699592|83569.070497709112|289.083154987815"]
    );
    // ... where false: one row, count 0 and NULLs.
    let mut none = aggs();
    none.push(AggCall::new(
        F::StringAgg,
        vec![
            col(TX, T::Text),
            crate::testing::lit(V::Text(",".into()), T::Text),
        ],
    ));
    none.push(call(F::BoolAnd, &[B]));
    let (out, _) = run_agg(
        &db,
        4 << 20,
        &D_TYPES,
        Batches(Default::default()),
        vec![],
        none,
        AggMode::Simple,
    );
    assert_eq!(text_rows(&out), ["0|NULL|NULL|NULL|NULL|NULL|NULL|NULL"]);
    // Grouped over no rows: no groups.
    let (out, _) = run_agg(
        &db,
        4 << 20,
        &D_TYPES,
        Batches(Default::default()),
        vec![col(G, T::Int4)],
        aggs(),
        AggMode::Simple,
    );
    assert!(out.is_empty());
}

/// Many groups under `work_mem = 64kB`: the pass spills new groups to
/// partition files, the results equal the in-memory run's, and the memory
/// the node reports stays within the hash limit (128 kB) plus one group.
#[test]
fn hash_aggregation_spills_within_work_mem() {
    let db = TestDb::new();
    let types = [T::Int8, T::Int4, T::Text];
    let rows: Vec<Vec<V>> = (0..60_000i64)
        .map(|i| {
            vec![
                V::Int8(i * 7919 % 15_013),
                V::Int4((i % 1000) as i32),
                V::Text(format!("t{}", i % 37)),
            ]
        })
        .collect();
    let c = |f: F, a: usize| AggCall::new(f, vec![col(a, types[a])]);
    let mut cd = c(F::Count, 1);
    cd.distinct = true;
    let aggs = vec![
        AggCall::new(F::CountStar, vec![]),
        c(F::Sum, 1),
        c(F::Avg, 1),
        c(F::Max, 2),
        cd,
    ];
    let run = |wm: usize, group: Vec<Expr>| {
        run_agg(
            &db,
            wm,
            &types,
            batches(&types, &rows, 1000),
            group,
            aggs.clone(),
            AggMode::Simple,
        )
    };
    let (big, rep) = run(64 << 20, vec![col(0, T::Int8)]);
    assert_eq!(rep.batches, 1);
    assert!(rep.line().starts_with("Batches: 1  Memory Usage: "));
    let (small, rep) = run(64 << 10, vec![col(0, T::Int8)]);
    assert_eq!(big.len(), 15_013);
    assert_eq!(sorted_text(&small), sorted_text(&big));
    assert!(rep.batches > 4, "{rep:?}");
    assert!(rep.disk > 0);
    assert!(rep.line().contains("  Disk Usage: "), "{}", rep.line());
    let limit = 128 << 10;
    assert!(
        rep.mem.peak <= limit + 1024,
        "peak {} of {limit}",
        rep.mem.peak
    );
    // Two keys, one of them text: the byte-key path spills alike.
    let two = || vec![col(0, T::Int8), col(2, T::Text)];
    let (big, _) = run(64 << 20, two());
    let (small, rep) = run(64 << 10, two());
    assert!(rep.batches > 1);
    let key = |r: &Vec<V>| format!("{:?}{:?}", r[0], r[1]);
    let (mut a, mut b) = (big.clone(), small.clone());
    a.sort_by_key(key);
    b.sort_by_key(key);
    assert_eq!(a, b);
}

/// A Partial aggregate whose table fills flushes its groups instead of
/// spilling: it writes no partition file, stays within its limit, and the
/// Finalize over its rows (some groups in several of them) gives what one
/// Simple aggregate gives; with clustered keys and with scattered ones,
/// NULL keys and NULL arguments included.
#[test]
fn partial_aggregation_flushes_instead_of_spilling() {
    let db = TestDb::new();
    let types = [T::Int8, T::Int4, T::Numeric];
    for clustered in [true, false] {
        let rows: Vec<Vec<V>> = (0..40_000i64)
            .map(|i| {
                let k = if clustered { i / 3 } else { i * 7919 % 9_001 };
                vec![
                    if k % 500 == 7 { V::Null } else { V::Int8(k) },
                    if i % 9 == 0 {
                        V::Null
                    } else {
                        V::Int4((i % 1000) as i32)
                    },
                    V::Numeric(Numeric::parse(&format!("{}.{:02}", i % 77, i % 100)).unwrap()),
                ]
            })
            .collect();
        let c = |f: F, a: usize| AggCall::new(f, vec![col(a, types[a])]);
        let aggs = vec![
            AggCall::new(F::CountStar, vec![]),
            c(F::Sum, 1),
            c(F::Avg, 2),
            c(F::Max, 1),
        ];
        let group = vec![col(0, T::Int8)];
        let (partial, rep) = run_agg(
            &db,
            64 << 10,
            &types,
            batches(&types, &rows, 1000),
            group.clone(),
            aggs.clone(),
            AggMode::Partial,
        );
        assert!(rep.flushes > 0, "{rep:?}");
        assert_eq!(rep.batches, 1, "{rep:?}");
        assert_eq!(rep.disk, 0);
        assert!(rep.mem.peak <= 128 << 10, "{rep:?}");
        let mut partial_types = vec![T::Int8];
        partial_types.extend(aggs.iter().flat_map(|a| a.partial_types()));
        let (finished, _) = run_agg(
            &db,
            64 << 20,
            &partial_types,
            batches(&partial_types, &partial, 1000),
            group.clone(),
            aggs.clone(),
            AggMode::Finalize,
        );
        let (want, _) = run_agg(
            &db,
            64 << 20,
            &types,
            batches(&types, &rows, 1000),
            group.clone(),
            aggs.clone(),
            AggMode::Simple,
        );
        assert!(partial.len() > want.len(), "some groups are flushed twice");
        assert_eq!(sorted_text(&finished), sorted_text(&want));
    }
}

/// SELECT DISTINCT is a hash aggregation without calls; NULL is one group.
#[test]
fn distinct_is_grouping_without_calls() {
    let db = TestDb::new();
    let types = [T::Int4, T::Text];
    let rows: Vec<Vec<V>> = (0..5000)
        .map(|i| {
            vec![
                if i % 10 == 0 {
                    V::Null
                } else {
                    V::Int4(i % 50)
                },
                if i % 7 == 0 {
                    V::Null
                } else {
                    V::Text(format!("{}", i % 3))
                },
            ]
        })
        .collect();
    for wm in [4 << 20, 64 << 10] {
        let (out, _) = run_agg(
            &db,
            wm,
            &types,
            batches(&types, &rows, 700),
            vec![col(0, T::Int4), col(1, T::Text)],
            vec![],
            AggMode::Simple,
        );
        let mut want: Vec<Vec<V>> = rows.clone();
        want.sort_by_key(|r| format!("{r:?}"));
        want.dedup();
        let mut got = out.clone();
        got.sort_by_key(|r| format!("{r:?}"));
        assert_eq!(got, want);
    }
}

/// Partial aggregates in three participants (the leader and two workers,
/// each reading the whole series), combined by a Finalize aggregate above a
/// Gather, equal one Simple aggregate over three copies of the rows.
#[test]
fn partial_and_finalize_through_a_gather() {
    let db = TestDb::new();
    // Literal rows (k, x, f, n): every participant produces all of them.
    let cols = [T::Int8, T::Int8, T::Float8, T::Numeric];
    let lit = crate::testing::lit;
    let values: Vec<Vec<Expr>> = (1..=3000i64)
        .map(|g| {
            let x = g % 1000 - 500;
            vec![
                lit(V::Int8(g % 13), T::Int8),
                if g % 17 == 0 {
                    lit(V::Null, T::Int8)
                } else {
                    lit(V::Int8(x), T::Int8)
                },
                lit(V::Float8(x as f64 / 7.0), T::Float8),
                lit(
                    V::Numeric(Numeric::parse(&format!("{:.3}", x as f64 * 0.125)).unwrap()),
                    T::Numeric,
                ),
            ]
        })
        .collect();
    let project = node(NodeKind::Values { rows: values }, vec![], cols.to_vec());
    let a = |func: F, c: usize| AggCall::new(func, vec![col(c, cols[c])]);
    let aggs = vec![
        AggCall::new(F::CountStar, vec![]),
        a(F::Sum, 1),
        a(F::Avg, 1),
        a(F::Min, 1),
        a(F::Max, 2),
        a(F::Sum, 2),
        a(F::Avg, 2),
        a(F::Stddev, 2),
        a(F::VarPop, 2),
        a(F::Variance, 1),
        a(F::StddevPop, 1),
        a(F::Avg, 3),
        a(F::Sum, 3),
        a(F::Stddev, 3),
        a(F::BitOr, 1),
    ];
    let group = vec![col(0, T::Int8)];
    let mut partial_out = vec![T::Int8];
    partial_out.extend(aggs.iter().flat_map(|c| c.partial_types()));
    let mut final_out = vec![T::Int8];
    final_out.extend(aggs.iter().map(|c| c.result));
    let partial = node(
        NodeKind::Aggregate {
            group: group.clone(),
            aggs: aggs.clone(),
            mode: AggMode::Partial,
        },
        vec![project.clone()],
        partial_out.clone(),
    );
    let gather = node(NodeKind::Gather { workers: 2 }, vec![partial], partial_out);
    let mut fin = node(
        NodeKind::Aggregate {
            group: vec![col(0, T::Int8)],
            aggs: aggs.clone(),
            mode: AggMode::Finalize,
        },
        vec![gather],
        final_out.clone(),
    );
    let nodes = fin.assign_ids();
    for wm in [4 << 20, 64 << 10] {
        let ctx = db.ctx(wm, nodes);
        let mut op = crate::build::build(&fin, &ctx).unwrap();
        let got = rows_of(op.as_mut(), &final_out).unwrap();
        // The same rows three times, aggregated in one Simple pass.
        let mut proj = crate::build::build(&project, &ctx).unwrap();
        let mut all = std::collections::VecDeque::new();
        while let Some(b) = proj.next().unwrap() {
            for _ in 0..3 {
                all.push_back(b.clone());
            }
        }
        let (want, _) = run_agg(
            &db,
            wm,
            &cols,
            Batches(all),
            group.clone(),
            aggs.clone(),
            AggMode::Simple,
        );
        assert_eq!(got.len(), 13);
        // Exact types agree exactly; floats summed in another order agree
        // to rounding (as PostgreSQL's parallel and serial plans do).
        let (got, want) = (sorted_text(&got), sorted_text(&want));
        for (g, w) in got.iter().zip(&want) {
            for ((a, b), ty) in g.split('|').zip(w.split('|')).zip(&final_out) {
                if *ty == T::Float8 {
                    let (x, y): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
                    assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{a} vs {b}");
                } else {
                    assert_eq!(a, b, "work_mem {wm}: {g} vs {w}");
                }
            }
        }
    }
}

/// PostgreSQL 15's float edge cases: Youngs–Cramer overflow is an error,
/// NaN propagates, `float4pl` overflows in single precision, sums of
/// integers widen, bit_and/bit_or keep the type.
#[test]
fn float_and_integer_edge_cases_match_postgres() {
    let db = TestDb::new();
    let one = |ty: T, vals: Vec<V>, func: F| {
        let rows: Vec<Vec<V>> = vals.into_iter().map(|v| vec![v]).collect();
        let ctx_types = [ty];
        let ctx = db.ctx(1 << 20, 2);
        let call = AggCall::new(func, vec![col(0, ty)]);
        let out = vec![call.result];
        let child = node(
            NodeKind::Values { rows: vec![] },
            vec![],
            ctx_types.to_vec(),
        );
        let plan = node(
            NodeKind::Aggregate {
                group: vec![],
                aggs: vec![call],
                mode: AggMode::Simple,
            },
            vec![child],
            out.clone(),
        );
        let mut op = Aggregate::new(&plan, &ctx, Box::new(batches(&ctx_types, &rows, 10))).unwrap();
        rows_of(&mut op, &out).map(|r| text_rows(&r).remove(0))
    };
    // select avg(x) from (values (1e300::float8),(-1e300::float8)) t(x);
    let e = one(T::Float8, vec![V::Float8(1e300), V::Float8(-1e300)], F::Avg).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22003", "value out of range: overflow")
    );
    // select sum(x) from (values (3e38::float4),(3e38::float4)) t(x);
    let e = one(T::Float4, vec![V::Float4(3e38), V::Float4(3e38)], F::Sum).unwrap_err();
    assert_eq!(e.message, "value out of range: overflow");
    // select avg(x), stddev(x) from (values ('NaN'::float8),(1)) t(x);  →  NaN|NaN
    let nan = vec![V::Float8(f64::NAN), V::Float8(1.0)];
    assert_eq!(one(T::Float8, nan.clone(), F::Avg).unwrap(), "NaN");
    assert_eq!(one(T::Float8, nan, F::Stddev).unwrap(), "NaN");
    // select variance(x) from (values ('Infinity'::float8)) t(x);  →  NULL
    assert_eq!(
        one(T::Float8, vec![V::Float8(f64::INFINITY)], F::Variance).unwrap(),
        "NULL"
    );
    // select sum(x), avg(x) from (values (2147483647), (2147483647)) t(x);
    let big = vec![V::Int4(i32::MAX), V::Int4(i32::MAX)];
    assert_eq!(one(T::Int4, big.clone(), F::Sum).unwrap(), "4294967294");
    assert_eq!(one(T::Int4, big, F::Avg).unwrap(), "2147483647.00000000");
    // select bit_and(x), bit_or(x) from (values (12::int2),(10::int2)) t(x);  →  8|14
    let bits = vec![V::Int2(12), V::Int2(10)];
    assert_eq!(one(T::Int2, bits.clone(), F::BitAnd).unwrap(), "8");
    assert_eq!(one(T::Int2, bits, F::BitOr).unwrap(), "14");
}
