//! What every join operator shares: the output rows of each join kind and
//! the join filter evaluated over pairs of rows.
//!
//! A join finds *pairs* (outer row, inner row) that satisfy its condition
//! and then emits, by kind (`plan::JoinKind`): the pairs themselves (inner,
//! left, right, full), outer rows NULL-extended on the inner side (left and
//! full joins' unmatched outer rows), inner rows NULL-extended on the outer
//! side (right and full joins' unmatched inner rows), bare outer rows (semi,
//! anti), outer rows with a mark (mark) or bare inner rows (right semi,
//! right anti: `inner_unmatched` with no outer columns). [`JoinOutput`] builds those
//! batches from row numbers, so the hash join and the nested loop build
//! their output the same way.
//!
//! [`PairFilter`] evaluates a join filter — an expression over all outer
//! columns followed by all inner columns — over a list of pairs without
//! building full pair rows: it gathers only the columns the filter reads,
//! into a compact batch the filter has been remapped to. The result keeps
//! SQL's three values (a mark join needs to tell NULL from false).

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::plan::JoinKind;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::DataType;

/// How a join's output rows are made.
#[derive(Debug, Clone)]
pub struct JoinOutput {
    pub kind: JoinKind,
    pub outer_out: Vec<usize>,
    pub inner_out: Vec<usize>,
    pub outer_types: Vec<DataType>,
    pub inner_types: Vec<DataType>,
}

impl JoinOutput {
    /// The output of a `kind` join emitting columns `outer_out` and
    /// `inner_out` of inputs of `outer_types` and `inner_types`, checked
    /// ([`JoinOutput::validate`]).
    pub fn checked(
        kind: JoinKind,
        outer_out: &[usize],
        inner_out: &[usize],
        outer_types: &[DataType],
        inner_types: &[DataType],
    ) -> Result<JoinOutput> {
        let out = JoinOutput {
            kind,
            outer_out: outer_out.to_vec(),
            inner_out: inner_out.to_vec(),
            outer_types: outer_types.to_vec(),
            inner_types: inner_types.to_vec(),
        };
        out.validate()?;
        Ok(out)
    }

    /// Output column types.
    pub fn types(&self) -> Vec<DataType> {
        self.kind.output_types(
            &self.outer_types,
            &self.inner_types,
            &self.outer_out,
            &self.inner_out,
        )
    }

    /// Checks the column lists against the inputs' types.
    pub fn validate(&self) -> Result<()> {
        let bad = self.outer_out.iter().any(|&c| c >= self.outer_types.len())
            || self.inner_out.iter().any(|&c| c >= self.inner_types.len());
        if bad {
            return Err(ExecError::new("join output column out of range"));
        }
        if !self.kind.emits_inner_columns() && !self.inner_out.is_empty() {
            return Err(ExecError::new(
                "a semi, anti or mark join emits no inner columns",
            ));
        }
        if !self.kind.emits_outer_columns() && !self.outer_out.is_empty() {
            return Err(ExecError::new(
                "a right semi or right anti join emits no outer columns",
            ));
        }
        Ok(())
    }

    /// Whether the output has no columns (only a row count matters).
    pub fn zero_width(&self) -> bool {
        self.outer_out.is_empty()
            && (self.inner_out.is_empty() || !self.kind.emits_inner_columns())
            && !matches!(self.kind, JoinKind::Mark { .. })
    }

    /// Matching pairs: outer rows `oi` of `outer` beside `inner`, the
    /// `inner_out` columns of the pairs' inner rows (already gathered).
    pub fn pairs(&self, outer: &Batch, oi: &[u32], inner: Vec<Vector>) -> Batch {
        let mut cols: Vec<Vector> = self
            .outer_out
            .iter()
            .map(|&c| outer.columns[c].gather(oi))
            .collect();
        cols.extend(inner);
        Batch::new(cols, oi.len())
    }

    /// Outer rows `rows` of `outer` with NULL inner columns (left and full
    /// joins' unmatched outer rows).
    pub fn outer_unmatched(&self, outer: &Batch, rows: &[u32]) -> Batch {
        let nulls = self
            .inner_out
            .iter()
            .map(|&c| Vector::nulls(self.inner_types[c], rows.len()))
            .collect();
        self.pairs(outer, rows, nulls)
    }

    /// Inner rows with NULL outer columns (right and full joins' unmatched
    /// inner rows), given their `inner_out` columns.
    pub fn inner_unmatched(&self, inner: Vec<Vector>, n: usize) -> Batch {
        let mut cols: Vec<Vector> = self
            .outer_out
            .iter()
            .map(|&c| Vector::nulls(self.outer_types[c], n))
            .collect();
        cols.extend(inner);
        Batch::new(cols, n)
    }

    /// Outer rows `rows` of `outer` alone (semi and anti joins).
    pub fn outer_rows(&self, outer: &Batch, rows: &[u32]) -> Batch {
        self.pairs(outer, rows, Vec::new())
    }

    /// Outer rows `rows` of `outer` with their marks (`None` = NULL).
    pub fn marked(&self, outer: &Batch, rows: &[u32], marks: &[Option<bool>]) -> Batch {
        debug_assert_eq!(rows.len(), marks.len());
        let mark = Vector::new(
            Data::Bool(marks.iter().map(|m| m.unwrap_or(false)).collect()),
            Some(marks.iter().map(|m| m.is_none()).collect()),
        );
        self.pairs(outer, rows, vec![mark])
    }
}

/// A join filter prepared for evaluation over pairs of rows.
#[derive(Debug, Clone)]
pub struct PairFilter {
    /// The filter over the compact layout: `outer_cols` then `inner_cols`.
    expr: Expr,
    /// Outer columns the filter reads, in the compact layout's order.
    pub outer_cols: Vec<usize>,
    /// Inner columns the filter reads, in the compact layout's order.
    pub inner_cols: Vec<usize>,
}

impl PairFilter {
    /// `filter` reads outer columns `0..nouter` and inner columns from
    /// `nouter` on.
    pub fn new(filter: &Expr, nouter: usize) -> PairFilter {
        let mut cols = Vec::new();
        filter.columns(&mut cols);
        cols.sort_unstable();
        cols.dedup();
        let outer_cols: Vec<usize> = cols.iter().copied().filter(|&c| c < nouter).collect();
        let inner_cols: Vec<usize> = cols
            .iter()
            .filter(|&&c| c >= nouter)
            .map(|&c| c - nouter)
            .collect();
        let mut expr = filter.clone();
        expr.remap_columns(&|c| cols.binary_search(&c).expect("column read by the filter"));
        PairFilter {
            expr,
            outer_cols,
            inner_cols,
        }
    }

    /// The filter over pairs: outer rows `oi` of `outer`, and `inner` the
    /// [`PairFilter::inner_cols`] of the pairs' inner rows (gathered, one
    /// row per pair). One value per pair: true, false or NULL, the filter's
    /// three-valued result (what a null-aware mark join needs).
    pub fn eval(&self, outer: &Batch, oi: &[u32], inner: Vec<Vector>) -> Result<Vec<Option<bool>>> {
        let v = self.expr.eval(&self.pairs(outer, oi, inner))?;
        let b = join_bools(&v)?;
        Ok((0..oi.len())
            .map(|i| (!v.is_null(i)).then_some(b[i]))
            .collect())
    }

    /// The filter as a join's qual list: its conjuncts in turn, each on
    /// the pairs that passed all before it, as PostgreSQL's `ExecQual`
    /// stops a pair at its first false or NULL conjunct. So a conjunct that
    /// can fail (a division) runs only on pairs PostgreSQL runs it on. A
    /// pair that does not pass is `Some(false)` or `None` (which of the two
    /// is not the filter's three-valued result: use [`PairFilter::eval`]
    /// where that matters).
    pub fn eval_quals(
        &self,
        outer: &Batch,
        oi: &[u32],
        inner: Vec<Vector>,
    ) -> Result<Vec<Option<bool>>> {
        let Expr::And(conjuncts) = &self.expr else {
            return self.eval(outer, oi, inner);
        };
        let mut batch = self.pairs(outer, oi, inner);
        let mut out = vec![Some(true); oi.len()];
        // The pairs still passing: `alive[j]` is row j of `batch`.
        let mut alive: Vec<u32> = (0..oi.len() as u32).collect();
        for c in conjuncts {
            if alive.is_empty() {
                break;
            }
            let v = c.eval(&batch)?;
            let b = join_bools(&v)?;
            let mut keep = Vec::with_capacity(alive.len());
            for (j, &pair) in alive.iter().enumerate() {
                if v.is_null(j) {
                    out[pair as usize] = None;
                } else if !b[j] {
                    out[pair as usize] = Some(false);
                } else {
                    keep.push(j as u32);
                }
            }
            if keep.len() < alive.len() {
                batch = batch.gather(&keep);
                alive = keep.iter().map(|&j| alive[j as usize]).collect();
            }
        }
        Ok(out)
    }

    /// The columns the filter reads, one row per pair.
    fn pairs(&self, outer: &Batch, oi: &[u32], inner: Vec<Vector>) -> Batch {
        let mut cols: Vec<Vector> = self
            .outer_cols
            .iter()
            .map(|&c| outer.columns[c].gather(oi))
            .collect();
        cols.extend(inner);
        Batch::new(cols, oi.len())
    }
}

/// A join condition's values as Booleans (the condition must be one).
fn join_bools(v: &Vector) -> Result<&[bool]> {
    match &v.data {
        Data::Bool(b) => Ok(b),
        _ => Err(ExecError::coded(
            crate::error::sqlstate::DATATYPE_MISMATCH,
            "argument of JOIN/ON must be type boolean",
        )),
    }
}

/// Row numbers `from..to` as gather indexes.
pub fn row_range(from: usize, to: usize) -> Vec<u32> {
    (from as u32..to as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::CmpOp;
    use crate::testing::{col, lit};
    use crate::value::Value;

    fn ints(v: &[Option<i32>]) -> Vector {
        let mut out = Vector::empty(DataType::Int4);
        for x in v {
            out.push_value(&x.map_or(Value::Null, Value::Int4));
        }
        out
    }

    /// As a qual list, a pair's later conjuncts run only if the earlier
    /// ones were true: 1 / inner is not computed where inner is 0 unless
    /// the first conjunct held.
    #[test]
    fn qual_list_stops_at_false_or_null() {
        use crate::expr::ArithOp;
        let outer = Batch::new(vec![ints(&[Some(1), None, Some(0)])], 3);
        let first = Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(col(0, DataType::Int4)),
            right: Box::new(lit(Value::Int4(0), DataType::Int4)),
        };
        let second = Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(Expr::Arith {
                first: Box::new(lit(Value::Int4(1), DataType::Int4)),
                rest: vec![(ArithOp::Div, col(1, DataType::Int4))],
                ty: DataType::Int4,
            }),
            right: Box::new(lit(Value::Int4(0), DataType::Int4)),
        };
        let pf = PairFilter::new(&Expr::And(vec![first, second]), 1);
        let inner = || ints(&[Some(1), Some(0), Some(0)]);
        // Pair 0 passes both; pairs 1 (NULL) and 2 (false) stop first.
        let got = pf.eval_quals(&outer, &[0, 1, 2], vec![inner()]).unwrap();
        assert_eq!(got, vec![Some(true), None, Some(false)]);
        // The three-valued AND computes 1 / 0 for pair 1.
        assert!(pf.eval(&outer, &[0, 1, 2], vec![inner()]).is_err());
    }

    /// The filter reads the second outer and the first inner column; the
    /// result keeps NULL apart from false.
    #[test]
    fn pair_filter_gathers_only_what_it_reads() {
        let outer = Batch::new(
            vec![ints(&[Some(0), Some(0)]), ints(&[Some(1), Some(5)])],
            2,
        );
        // outer.1 < inner.0, with inner at 2 in the full layout.
        let f = Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(col(1, DataType::Int4)),
            right: Box::new(col(2, DataType::Int4)),
        };
        let pf = PairFilter::new(&f, 2);
        assert_eq!(pf.outer_cols, vec![1]);
        assert_eq!(pf.inner_cols, vec![0]);
        let inner = ints(&[Some(3), None, Some(3)]);
        let got = pf.eval(&outer, &[0, 0, 1], vec![inner]).unwrap();
        assert_eq!(got, vec![Some(true), None, Some(false)]);
        // A constant filter reads nothing.
        let pf = PairFilter::new(&lit(Value::Bool(true), DataType::Bool), 2);
        assert!(pf.outer_cols.is_empty() && pf.inner_cols.is_empty());
        assert_eq!(pf.eval(&outer, &[1], vec![]).unwrap(), vec![Some(true)]);
    }

    #[test]
    fn output_shapes_by_kind() {
        let out = |kind| JoinOutput {
            kind,
            outer_out: vec![1],
            inner_out: if kind == JoinKind::Inner || kind == JoinKind::Full {
                vec![0]
            } else {
                vec![]
            },
            outer_types: vec![DataType::Int4, DataType::Text],
            inner_types: vec![DataType::Int8],
        };
        assert_eq!(
            out(JoinKind::Full).types(),
            vec![DataType::Text, DataType::Int8]
        );
        assert_eq!(
            out(JoinKind::Mark { null_aware: true }).types(),
            vec![DataType::Text, DataType::Bool]
        );
        assert!(out(JoinKind::Anti).validate().is_ok());
        let mut bad = out(JoinKind::Semi);
        bad.inner_out = vec![0];
        assert!(bad.validate().is_err());
        let j = out(JoinKind::Full);
        let b = j.inner_unmatched(
            vec![Vector::constant(&Value::Int8(7), DataType::Int8, 2)],
            2,
        );
        assert_eq!(b.columns[0].value(1), Value::Null);
        assert_eq!(b.columns[1].value(1), Value::Int8(7));
    }
}
