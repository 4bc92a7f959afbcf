//! WindowAgg against PostgreSQL 15's results (the queries are quoted
//! above each case), errors, and partitions larger than `work_mem`.

use super::*;
use crate::plan::{AggFunc, FrameBound as B, FrameExclude as X, FrameUnits as M, WindowFrame};
use crate::testing::{batches, col, lit, node, rows_of, text_rows, TestDb};
use crate::value::Value as V;
use tusk_storage::DataType as T;

fn call(func: WindowFunc, args: Vec<Expr>, frame: WindowFrame, result: T) -> WindowCallSpec {
    WindowCallSpec {
        func,
        args,
        filter: None,
        frame,
        result,
    }
}

fn frame(units: M, start: B, end: B, exclude: X) -> WindowFrame {
    WindowFrame {
        units,
        start,
        end,
        exclude,
    }
}

fn int(v: i64) -> Expr {
    lit(V::Int8(v), T::Int8)
}

fn asc(e: Expr, desc: bool) -> SortKey {
    SortKey {
        expr: e,
        desc,
        nulls_first: false,
    }
}

/// Runs a WindowAgg over `rows` (already sorted as the node expects).
fn run(
    work_mem: usize,
    types: &[T],
    rows: &[Vec<V>],
    partition: Vec<Expr>,
    order: Vec<SortKey>,
    funcs: Vec<WindowCallSpec>,
) -> Result<(Vec<String>, MemUse)> {
    let db = TestDb::new();
    let ctx = db.ctx(work_mem, 1);
    let mut out = types.to_vec();
    out.extend(funcs.iter().map(|f| f.result));
    let child = node(NodeKind::Values { rows: vec![] }, vec![], types.to_vec());
    let plan = node(
        NodeKind::WindowAgg {
            partition,
            order,
            calls: funcs,
        },
        vec![child],
        out.clone(),
    );
    let mut w = WindowAgg::new(&plan, &ctx, Box::new(batches(types, rows, 3)))?;
    let got = rows_of(&mut w, &out)?;
    Ok((text_rows(&got), w.memory()))
}

fn ints(xs: &[Option<i32>]) -> Vec<Vec<V>> {
    xs.iter()
        .map(|x| vec![x.map_or(V::Null, V::Int4)])
        .collect()
}

fn x() -> Expr {
    col(0, T::Int4)
}

#[test]
fn ranking_functions_match_postgres() {
    let rows = ints(&[
        Some(1),
        Some(1),
        Some(2),
        Some(3),
        Some(3),
        Some(3),
        Some(4),
    ]);
    let d = WindowFrame::default;
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &rows,
        vec![],
        vec![asc(x(), false)],
        vec![
            call(WindowFunc::Rank, vec![], d(), T::Int8),
            call(WindowFunc::DenseRank, vec![], d(), T::Int8),
            call(WindowFunc::PercentRank, vec![], d(), T::Float8),
            call(WindowFunc::CumeDist, vec![], d(), T::Float8),
            call(WindowFunc::RowNumber, vec![], d(), T::Int8),
        ],
    )
    .unwrap();
    // select x, rank() over w, dense_rank() over w, percent_rank() over w,
    //   cume_dist() over w, row_number() over w from (values ...) t(x) window w as (order by x);
    assert_eq!(
        got,
        [
            "1|1|1|0|0.2857142857142857|1",
            "1|1|1|0|0.2857142857142857|2",
            "2|3|2|0.3333333333333333|0.42857142857142855|3",
            "3|4|3|0.5|0.8571428571428571|4",
            "3|4|3|0.5|0.8571428571428571|5",
            "3|4|3|0.5|0.8571428571428571|6",
            "4|7|4|1|1|7",
        ]
    );
}

#[test]
fn ntile_lag_lead_match_postgres() {
    let rows = ints(&[Some(1), Some(2), Some(3), Some(4), Some(5), Some(6)]);
    // ntile(case when x < 3 then null else 2 end): NULL until the count is known.
    let n = Expr::Cmp {
        op: crate::expr::CmpOp::Lt,
        left: Box::new(x()),
        right: Box::new(lit(V::Int4(3), T::Int4)),
    };
    // Without CASE in the expression language, the argument is a stored
    // column: NULL for x < 3, else 2.
    let k: Vec<Vec<V>> = rows
        .iter()
        .map(|r| {
            let V::Int4(v) = r[0] else { unreachable!() };
            vec![r[0].clone(), if v < 3 { V::Null } else { V::Int4(2) }]
        })
        .collect();
    let _ = n;
    let d = WindowFrame::default;
    let (got, _) = run(
        1 << 20,
        &[T::Int4, T::Int4],
        &k,
        vec![],
        vec![asc(x(), false)],
        vec![call(WindowFunc::Ntile, vec![col(1, T::Int4)], d(), T::Int4)],
    )
    .unwrap();
    // select x, ntile(case when x < 3 then null else 2 end) over (order by x) from generate_series(1,6) x;
    let nt: Vec<&str> = got.iter().map(|r| r.rsplit('|').next().unwrap()).collect();
    assert_eq!(nt, ["NULL", "NULL", "1", "1", "1", "2"]);
    // select x, lag(x, <NULL at x = 3, else 1>, -1), lead(x, -1), lag(x, 10, x * 100) over (order by x)
    let rows: Vec<Vec<V>> = (1..=4)
        .map(|i| {
            vec![
                V::Int4(i),
                if i == 3 { V::Null } else { V::Int4(1) },
                V::Int4(i * 100),
            ]
        })
        .collect();
    let (got, _) = run(
        1 << 20,
        &[T::Int4, T::Int4, T::Int4],
        &rows,
        vec![],
        vec![asc(x(), false)],
        vec![
            call(
                WindowFunc::Lag,
                vec![x(), col(1, T::Int4), lit(V::Int4(-1), T::Int4)],
                d(),
                T::Int4,
            ),
            call(
                WindowFunc::Lead,
                vec![x(), lit(V::Int4(-1), T::Int4)],
                d(),
                T::Int4,
            ),
            call(
                WindowFunc::Lag,
                vec![x(), lit(V::Int4(10), T::Int4), col(2, T::Int4)],
                d(),
                T::Int4,
            ),
        ],
    )
    .unwrap();
    let tail: Vec<String> = got
        .iter()
        .map(|r| r.splitn(4, '|').nth(3).unwrap().to_string())
        .collect();
    assert_eq!(tail, ["-1|NULL|100", "1|1|200", "NULL|2|300", "3|3|400"]);
}

#[test]
fn range_offsets_with_nulls_match_postgres() {
    let rows = ints(&[Some(1), Some(2), Some(4), Some(5), None, None]);
    let sum = |f| call(WindowFunc::Aggregate(AggFunc::Sum), vec![x()], f, T::Int8);
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &rows,
        vec![],
        vec![asc(x(), false)],
        vec![
            sum(frame(
                M::Range,
                B::Preceding(lit(V::Int4(1), T::Int4)),
                B::Following(lit(V::Int4(1), T::Int4)),
                X::NoOthers,
            )),
            call(
                WindowFunc::Aggregate(AggFunc::CountStar),
                vec![],
                frame(
                    M::Range,
                    B::Preceding(lit(V::Int4(1), T::Int4)),
                    B::CurrentRow,
                    X::NoOthers,
                ),
                T::Int8,
            ),
        ],
    )
    .unwrap();
    // select x, sum(x) over (order by x range between 1 preceding and 1 following),
    //   count(*) over (order by x range between 1 preceding and current row)
    //   from (values (1),(2),(null),(null),(4),(5)) t(x);
    assert_eq!(
        got,
        [
            "1|3|1",
            "2|3|2",
            "4|9|1",
            "5|9|2",
            "NULL|NULL|2",
            "NULL|NULL|2"
        ]
    );
    // ... order by x desc nulls last
    let rows = ints(&[Some(5), Some(4), Some(2), Some(1), None, None]);
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &rows,
        vec![],
        vec![asc(x(), true)],
        vec![sum(frame(
            M::Range,
            B::Preceding(lit(V::Int4(1), T::Int4)),
            B::Following(lit(V::Int4(1), T::Int4)),
            X::NoOthers,
        ))],
    )
    .unwrap();
    assert_eq!(got, ["5|9", "4|9", "2|3", "1|3", "NULL|NULL", "NULL|NULL"]);
}

#[test]
fn groups_rows_and_exclusion_match_postgres() {
    let rows = ints(&[
        Some(1),
        Some(1),
        Some(2),
        Some(3),
        Some(3),
        Some(3),
        Some(4),
    ]);
    let fs = |f: WindowFrame| {
        vec![
            call(WindowFunc::FirstValue, vec![x()], f.clone(), T::Int4),
            call(WindowFunc::LastValue, vec![x()], f.clone(), T::Int4),
            call(WindowFunc::NthValue, vec![x(), int(2)], f.clone(), T::Int4),
            call(
                WindowFunc::Aggregate(AggFunc::Sum),
                vec![x()],
                f.clone(),
                T::Int8,
            ),
            call(
                WindowFunc::Aggregate(AggFunc::CountStar),
                vec![],
                f,
                T::Int8,
            ),
        ]
    };
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &rows,
        vec![],
        vec![asc(x(), false)],
        fs(frame(
            M::Groups,
            B::Preceding(int(1)),
            B::CurrentRow,
            X::CurrentRow,
        )),
    )
    .unwrap();
    // window w as (order by x groups between 1 preceding and current row exclude current row)
    assert_eq!(
        got,
        [
            "1|1|1|NULL|1|1",
            "1|1|1|NULL|1|1",
            "2|1|1|1|2|2",
            "3|2|3|3|8|3",
            "3|2|3|3|8|3",
            "3|2|3|3|8|3",
            "4|3|3|3|9|3",
        ]
    );
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &rows,
        vec![],
        vec![asc(x(), false)],
        fs(frame(
            M::Rows,
            B::Preceding(int(2)),
            B::Following(int(2)),
            X::Ties,
        )),
    )
    .unwrap();
    // window w as (order by x rows between 2 preceding and 2 following exclude ties)
    assert_eq!(
        got,
        [
            "1|1|2|2|3|2",
            "1|1|3|2|6|3",
            "2|1|3|1|10|5",
            "3|1|3|2|6|3",
            "3|2|4|3|9|3",
            "3|3|4|4|7|2",
            "4|3|4|3|10|3",
        ]
    );
    // select x, avg(x) over (order by x rows between 1 preceding and 1 following exclude group)
    //   from (values (1),(1),(2)) t(x);
    let (got, _) = run(
        1 << 20,
        &[T::Int4],
        &ints(&[Some(1), Some(1), Some(2)]),
        vec![],
        vec![asc(x(), false)],
        vec![call(
            WindowFunc::Aggregate(AggFunc::Avg),
            vec![x()],
            frame(
                M::Rows,
                B::Preceding(int(1)),
                B::Following(int(1)),
                X::Group,
            ),
            T::Numeric,
        )],
    )
    .unwrap();
    assert_eq!(
        got,
        ["1|NULL", "1|2.0000000000000000", "2|1.00000000000000000000"]
    );
}

#[test]
fn errors_match_postgres() {
    let rows = ints(&[Some(1), Some(2), Some(3)]);
    let one = |f: WindowCallSpec| {
        run(
            1 << 20,
            &[T::Int4],
            &rows,
            vec![],
            vec![asc(x(), false)],
            vec![f],
        )
    };
    let sum = |f| call(WindowFunc::Aggregate(AggFunc::Sum), vec![x()], f, T::Int8);
    let e = one(sum(frame(
        M::Rows,
        B::Preceding(int(-1)),
        B::CurrentRow,
        X::NoOthers,
    )))
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22013", "frame starting offset must not be negative")
    );
    let e = one(sum(frame(
        M::Rows,
        B::Preceding(lit(V::Null, T::Int8)),
        B::CurrentRow,
        X::NoOthers,
    )))
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22004", "frame starting offset must not be null")
    );
    let e = one(call(
        WindowFunc::NthValue,
        vec![x(), int(0)],
        WindowFrame::default(),
        T::Int4,
    ))
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22016", "argument of nth_value must be greater than zero")
    );
    let e = one(call(
        WindowFunc::Ntile,
        vec![int(0)],
        WindowFrame::default(),
        T::Int4,
    ))
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22014", "argument of ntile must be greater than zero")
    );
}

/// Two partitions of 20,000 rows each under `work_mem = 64kB`: the rows
/// go to the spill file, the results are those of a run in memory, and
/// the partition buffer stays near the limit.
#[test]
fn partitions_larger_than_work_mem() {
    let types = [T::Int4, T::Int4, T::Text];
    let rows: Vec<Vec<V>> = (0..40_000)
        .map(|i| {
            vec![
                V::Int4(i / 20_000),
                V::Int4(i % 20_000 / 3),
                V::Text(format!("pad {i}")),
            ]
        })
        .collect();
    let funcs = || {
        vec![
            call(
                WindowFunc::RowNumber,
                vec![],
                WindowFrame::default(),
                T::Int8,
            ),
            call(WindowFunc::Rank, vec![], WindowFrame::default(), T::Int8),
            call(
                WindowFunc::Aggregate(AggFunc::Sum),
                vec![col(1, T::Int4)],
                WindowFrame::default(),
                T::Int8,
            ),
            call(
                WindowFunc::Aggregate(AggFunc::Max),
                vec![col(2, T::Text)],
                frame(
                    M::Rows,
                    B::Preceding(int(5)),
                    B::Following(int(5)),
                    X::NoOthers,
                ),
                T::Text,
            ),
            call(
                WindowFunc::Lag,
                vec![col(2, T::Text), int(7)],
                WindowFrame::default(),
                T::Text,
            ),
            call(
                WindowFunc::Ntile,
                vec![int(3)],
                WindowFrame::default(),
                T::Int4,
            ),
            call(
                WindowFunc::LastValue,
                vec![col(1, T::Int4)],
                WindowFrame::default(),
                T::Int4,
            ),
        ]
    };
    let go = |wm| {
        run(
            wm,
            &types,
            &rows,
            vec![col(0, T::Int4)],
            vec![asc(col(1, T::Int4), false)],
            funcs(),
        )
        .unwrap()
    };
    let (big, _) = go(64 << 20);
    let (small, mem) = go(64 << 10);
    assert_eq!(big.len(), 40_000);
    assert_eq!(small, big);
    assert!(mem.peak <= (64 << 10) + (32 << 10), "{mem:?}");
    assert_eq!(big[20_000].split('|').nth(3).unwrap(), "1");
    assert_eq!(big[3].split('|').nth(5).unwrap(), "3");
}
