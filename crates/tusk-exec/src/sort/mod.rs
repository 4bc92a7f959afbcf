//! ORDER BY: the Sort node.
//!
//! The node evaluates its key expressions (a key that is a plain column is
//! read in place; others are computed and carried as extra columns), feeds
//! every input batch to a [`Sorter`] and then returns the sorted rows without
//! the extra columns. With `limit` (the planner's LIMIT + OFFSET) the sorter
//! keeps only what can be returned (top-N) and the node stops after `limit`
//! rows. How the sorter stays within `work_mem` is in [`sorter`]; the order
//! itself is [`crate::sortkey`]'s.

pub mod merge;
pub mod sorter;

use crate::error::Result;
use crate::expr::Expr;
use crate::memory::WorkMem;
use crate::operator::{ExecContext, Operator};
use crate::plan::SortKey;
use crate::sortkey::KeyOrder;
use crate::vector::{Batch, BATCH_SIZE};
use sorter::{SortReport, SortSpec, SortedStream, Sorter};
use tusk_storage::DataType;

#[cfg(test)]
pub(crate) use reference::compare_values;

#[cfg(test)]
mod reference {
    use crate::value::Value;
    use std::cmp::Ordering;
    use tusk_types::float::float_cmp;

    /// A straightforward ordering of two values of one type (NULL last): the
    /// model that tests check the normalized keys against. The executor itself
    /// orders by normalized keys only.
    pub fn compare_values(a: &Value, b: &Value) -> Ordering {
        match (a, b) {
            (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
            (Value::Int4(x), Value::Int4(y)) => x.cmp(y),
            (Value::Int8(x), Value::Int8(y)) => x.cmp(y),
            (Value::Numeric(x), Value::Numeric(y)) => x.cmp(y),
            (Value::Int2(x), Value::Int2(y)) => x.cmp(y),
            (Value::Float4(x), Value::Float4(y)) => float_cmp(*x as f64, *y as f64),
            (Value::Float8(x), Value::Float8(y)) => float_cmp(*x, *y),
            (Value::Interval(x), Value::Interval(y)) => x.cmp(y),
            (Value::Date(x), Value::Date(y)) => x.cmp(y),
            (
                Value::Time(x) | Value::Timestamp(x) | Value::TimestampTz(x),
                Value::Time(y) | Value::Timestamp(y) | Value::TimestampTz(y),
            ) => x.cmp(y),
            (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            _ => Ordering::Equal,
        }
    }
}

/// How a plan's sort keys become a [`SortSpec`] over the input columns plus
/// the computed keys.
pub struct KeyColumns {
    /// Expressions computed and appended to each batch.
    pub computed: Vec<Expr>,
    pub spec: SortSpec,
}

impl KeyColumns {
    pub fn new(keys: &[SortKey], input: &[DataType], limit: Option<u64>) -> KeyColumns {
        let mut types = input.to_vec();
        let mut computed = Vec::new();
        let key_cols = keys
            .iter()
            .map(|k| {
                let col = match &k.expr {
                    Expr::Column { index, .. } if *index < input.len() => *index,
                    e => {
                        computed.push(e.clone());
                        types.push(e.data_type());
                        types.len() - 1
                    }
                };
                let order = KeyOrder {
                    ty: k.expr.data_type(),
                    desc: k.desc,
                    nulls_first: k.nulls_first,
                };
                (col, order)
            })
            .collect();
        KeyColumns {
            computed,
            spec: SortSpec {
                types,
                keys: key_cols,
                out_cols: input.len(),
                limit,
            },
        }
    }

    /// The batch with the computed key columns appended.
    pub fn extend(&self, mut b: Batch) -> Result<Batch> {
        for e in &self.computed {
            let v = e.eval(&b)?;
            b.columns.push(v);
        }
        Ok(b)
    }
}

pub struct Sort {
    input: Option<Box<dyn Operator>>,
    keys: KeyColumns,
    wm: WorkMem,
    stream: Option<SortedStream>,
    ctx: ExecContext,
    id: usize,
}

impl Sort {
    pub fn new(
        input: Box<dyn Operator>,
        keys: &[SortKey],
        limit: Option<u64>,
        types: &[DataType],
        ctx: &ExecContext,
        id: usize,
    ) -> Sort {
        Sort {
            input: Some(input),
            keys: KeyColumns::new(keys, types, limit),
            wm: WorkMem::sort(ctx),
            stream: None,
            ctx: ctx.clone(),
            id,
        }
    }

    fn run(&mut self) -> Result<SortedStream> {
        let mut input = self.input.take().expect("sort input consumed once");
        let mut sorter = Sorter::new(self.keys.spec.clone(), self.wm.clone());
        while let Some(b) = input.next()? {
            sorter.push(self.keys.extend(b)?)?;
        }
        sorter.finish()
    }

    /// How the sort went (after the first row was returned).
    pub fn report(&self) -> Option<SortReport> {
        self.stream.as_ref().map(|s| s.report())
    }
}

impl Operator for Sort {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.stream.is_none() {
            let s = self.run()?;
            self.ctx.note(self.id, s.report().line());
            self.stream = Some(s);
        }
        self.stream.as_mut().unwrap().next_batch(BATCH_SIZE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, col, node, rows_of, series, TestDb};
    use crate::value::Value;
    use crate::vector::Vector;
    use std::cmp::Ordering;
    use tusk_storage::DataType::{Float8, Int4, Int8, Numeric as Num, Text};

    fn key(index: usize, ty: DataType, desc: bool, nulls_first: bool) -> SortKey {
        SortKey {
            expr: col(index, ty),
            desc,
            nulls_first,
        }
    }

    fn sort_rows(
        db: &TestDb,
        work_mem: usize,
        types: &[DataType],
        rows: &[Vec<Value>],
        keys: &[SortKey],
        limit: Option<u64>,
    ) -> (Vec<Vec<Value>>, SortReport) {
        let ctx = db.ctx(work_mem, 1);
        let mut s = Sort::new(
            Box::new(batches(types, rows, 500)),
            keys,
            limit,
            types,
            &ctx,
            0,
        );
        let out = rows_of(&mut s, types).unwrap();
        (out, s.report().unwrap())
    }

    /// The expected order by a straightforward model: (NULL rank, value)
    /// per key.
    fn model_sort(rows: &[Vec<Value>], keys: &[(usize, bool, bool)]) -> Vec<Vec<Value>> {
        let mut v = rows.to_vec();
        v.sort_by(|a, b| {
            for &(c, desc, nf) in keys {
                let o = match (a[c].is_null(), b[c].is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => {
                        if nf {
                            Ordering::Less
                        } else {
                            Ordering::Greater
                        }
                    }
                    (false, true) => {
                        if nf {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        }
                    }
                    _ => {
                        let o = compare_values(&a[c], &b[c]);
                        if desc {
                            o.reverse()
                        } else {
                            o
                        }
                    }
                };
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        });
        v
    }

    fn data(n: usize) -> Vec<Vec<Value>> {
        (0..n)
            .map(|i| {
                let x = (i as i64 * 7919) % 1009;
                vec![
                    if i % 13 == 0 {
                        Value::Null
                    } else {
                        Value::Int4((x % 50) as i32)
                    },
                    Value::Text(format!("s{}", (x * 31) % 997)),
                    Value::Int8(i as i64),
                ]
            })
            .collect()
    }

    #[test]
    fn nulls_directions_duplicates_and_empty() {
        let db = TestDb::new();
        let types = [Int4, Text, Int8];
        let rows = data(3000);
        for (desc, nf) in [(false, false), (false, true), (true, false), (true, true)] {
            let keys = [key(0, Int4, desc, nf), key(1, Text, !desc, false)];
            let (got, rep) = sort_rows(&db, 4 << 20, &types, &rows, &keys, None);
            assert_eq!(rep.method, sorter::SortMethod::Quicksort);
            let want = model_sort(&rows, &[(0, desc, nf), (1, !desc, false)]);
            // Ties (equal keys) keep input order, as the model's stable sort does.
            assert_eq!(got, want, "desc {desc} nulls_first {nf}");
        }
        let (got, _) = sort_rows(
            &db,
            4 << 20,
            &types,
            &[],
            &[key(0, Int4, false, false)],
            None,
        );
        assert!(got.is_empty());
    }

    #[test]
    fn floats_with_nan_and_numerics_across_scales() {
        let db = TestDb::new();
        let f = |x: f64| vec![Value::Float8(x)];
        let rows = vec![
            f(f64::NAN),
            f(1.0),
            f(f64::NEG_INFINITY),
            f(-0.0),
            f(f64::INFINITY),
            vec![Value::Null],
            f(0.0),
            f(-f64::NAN),
        ];
        let (got, _) = sort_rows(
            &db,
            1 << 20,
            &[Float8],
            &rows,
            &[key(0, Float8, false, false)],
            None,
        );
        let text: Vec<String> = got
            .iter()
            .map(|r| r[0].to_text().unwrap_or_default())
            .collect();
        assert_eq!(
            text,
            ["-Infinity", "-0", "0", "1", "Infinity", "NaN", "NaN", ""]
        );
        // The panic: avg(bigint) values of mixed magnitude.
        let n = |s: &str| vec![Value::Numeric(crate::numeric::Numeric::parse(s).unwrap())];
        let rows = vec![
            n("4611686019501129728"),
            n("27.0000000000000000"),
            n("0.00000000000000000001"),
            n("-9223372036854775807"),
            n("27"),
        ];
        let (got, _) = sort_rows(
            &db,
            1 << 20,
            &[Num],
            &rows,
            &[key(0, Num, true, false)],
            None,
        );
        let text: Vec<String> = got.iter().map(|r| r[0].to_text().unwrap()).collect();
        assert_eq!(
            text,
            [
                "4611686019501129728",
                "27.0000000000000000",
                "27",
                "0.00000000000000000001",
                "-9223372036854775807"
            ]
        );
    }

    #[test]
    fn external_merge_within_work_mem() {
        let db = TestDb::new();
        let types = [Int4, Text, Int8];
        let rows = data(60_000);
        let work_mem = 64 << 10;
        let keys = [key(1, Text, false, false), key(0, Int4, true, true)];
        let (got, rep) = sort_rows(&db, work_mem, &types, &rows, &keys, None);
        assert_eq!(
            got,
            model_sort(&rows, &[(1, false, false), (0, true, true)])
        );
        assert_eq!(rep.method, sorter::SortMethod::ExternalMerge);
        assert!(rep.disk > 1 << 20, "{rep:?}");
        assert!(rep
            .line()
            .starts_with("Sort Method: external merge  Disk: "));
        // The limit plus one input batch of 500 rows (about 12 kB) and a
        // spill buffer.
        assert!(
            rep.peak <= work_mem + (16 << 10),
            "peak {} kB",
            rep.peak / 1024
        );
        // Under a bound, every run keeps only what can be returned.
        let (top, rep) = sort_rows(&db, work_mem, &types, &rows, &keys, Some(20_000));
        assert_eq!(top, got[..20_000].to_vec());
        assert_eq!(rep.method, sorter::SortMethod::ExternalMerge);
    }

    #[test]
    fn top_n_keeps_only_the_bound() {
        let db = TestDb::new();
        let rows = data(10_000);
        let types = [Int4, Text, Int8];
        let keys = [key(2, Int8, true, false)];
        let (got, rep) = sort_rows(&db, 4 << 20, &types, &rows, &keys, Some(3));
        let ids: Vec<Value> = got.iter().map(|r| r[2].clone()).collect();
        assert_eq!(
            ids,
            [Value::Int8(9999), Value::Int8(9998), Value::Int8(9997)]
        );
        assert_eq!(rep.method, sorter::SortMethod::TopN);
        assert!(rep
            .line()
            .starts_with("Sort Method: top-N heapsort  Memory: "));
        // Fewer rows than twice the bound: an ordinary quicksort.
        let (got, rep) = sort_rows(&db, 4 << 20, &types, &rows[..5], &keys, Some(3));
        assert_eq!(got.len(), 3);
        assert_eq!(rep.method, sorter::SortMethod::Quicksort);
        let (got, _) = sort_rows(&db, 4 << 20, &types, &rows, &keys, Some(0));
        assert!(got.is_empty());
    }

    /// `select * from generate_series(1, N) g order by 1 desc limit 1`
    /// holds about one input batch whatever N is (the 1e12 grew to
    /// 24 GB): here 3 million rows, about 150 MB of sort entries, peak
    /// under 256 kB, every batch beating the one row kept.
    #[test]
    fn order_by_limit_runs_in_bounded_memory() {
        let db = TestDb::new();
        let plan = series(1, 3_000_000);
        let ctx = db.ctx(64 << 10, 2);
        let input = crate::build::build(&plan, &ctx).unwrap();
        let mut s = Sort::new(
            input,
            &[key(0, Int8, true, false)],
            Some(1),
            &[Int8],
            &ctx,
            0,
        );
        let got = rows_of(&mut s, &[Int8]).unwrap();
        assert_eq!(got, vec![vec![Value::Int8(3_000_000)]]);
        let rep = s.report().unwrap();
        assert_eq!(rep.method, sorter::SortMethod::TopN);
        assert!(rep.peak < 256 << 10, "peak {}", rep.peak);
    }

    #[test]
    fn computed_keys_are_dropped_from_the_output() {
        let db = TestDb::new();
        let rows: Vec<Vec<Value>> = (0..10).map(|i| vec![Value::Int4(i)]).collect();
        // ORDER BY -x
        let neg = Expr::Neg {
            arg: Box::new(col(0, Int4)),
            ty: Int4,
        };
        let k = SortKey {
            expr: neg,
            desc: false,
            nulls_first: false,
        };
        let (got, _) = sort_rows(&db, 1 << 20, &[Int4], &rows, &[k], None);
        assert_eq!(got[0], vec![Value::Int4(9)]);
        assert_eq!(got[0].len(), 1);
        let _ = (node, Vector::empty(Int4));
    }
}
