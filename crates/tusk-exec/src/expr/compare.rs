//! Comparisons (`= <> < <= > >=`), row comparisons (`(a, b) < (c, d)`),
//! `IS [NOT] DISTINCT FROM`, and the row
//! comparator the other nodes share (IN, GREATEST/LEAST, NULLIF, CASE).
//!
//! Text compares bytewise (the C collation over UTF-8, which orders by code
//! point); floats with NaN equal to itself and above every other value
//! (PostgreSQL's `float8_cmp`); `bpchar` against `bpchar` ignores trailing
//! blanks. Comparisons never raise errors.

use super::{or_nulls, Expr};
use crate::error::{ExecError, Result};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use std::cmp::Ordering;
use tusk_storage::DataType;
use tusk_types::float::float_cmp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn commuted(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => o,
        }
    }

    /// Whether an ordering satisfies the operator.
    #[inline]
    pub fn test(self, o: Ordering) -> bool {
        match self {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        }
    }
}

/// `u * 10^digits`, if it fits in 128 bits.
fn rescale(u: i128, digits: u16) -> Option<i128> {
    10i128.checked_pow(u32::from(digits))?.checked_mul(u)
}

/// `s` without its trailing blanks (how `bpchar` compares and converts).
#[inline]
pub(crate) fn strip_blanks(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
    &s[..end]
}

/// How two strings of one type compare: bytewise (text, bytea), without
/// trailing blanks (`bpchar`), or as `jsonb` documents (whose text form is
/// parsed and compared in `jsonb`'s order, so `1.0` equals `1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextOrder {
    Bytes,
    Bpchar,
    Jsonb,
}

impl TextOrder {
    /// The order of values of type `ty`.
    pub fn of(ty: DataType) -> TextOrder {
        match ty {
            DataType::Bpchar => TextOrder::Bpchar,
            DataType::Jsonb => TextOrder::Jsonb,
            _ => TextOrder::Bytes,
        }
    }

    /// The order of a comparison between operands of types `a` and `b`.
    pub fn between(a: DataType, b: DataType) -> TextOrder {
        if a == b {
            TextOrder::of(a)
        } else {
            TextOrder::Bytes
        }
    }

    /// Compares two strings.
    #[inline]
    pub fn cmp(self, x: &[u8], y: &[u8]) -> Ordering {
        match self {
            TextOrder::Bytes => x.cmp(y),
            TextOrder::Bpchar => strip_blanks(x).cmp(strip_blanks(y)),
            TextOrder::Jsonb => crate::func::json::cmp_jsonb_text(x, y),
        }
    }
}

pub(super) fn eval_cmp(
    op: CmpOp,
    left: &Expr,
    right: &Expr,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let bp = TextOrder::between(left.data_type(), right.data_type());
    let l = left.eval_ref(batch, active)?;
    if let Expr::Const { value, .. } = right {
        if let Some(v) = compare_const(op, &l, value, bp) {
            return Ok(v);
        }
    }
    let r = right.eval_ref(batch, active)?;
    compare(op, &l, &r, bp)
}

/// `l op c` for a constant `c` of type `ty`, without making a vector of
/// copies of it; `None` for the representations this does not cover.
fn compare_const(op: CmpOp, l: &Vector, c: &Value, order: TextOrder) -> Option<Vector> {
    fn against<T: Ord + Copy>(op: CmpOp, a: &[T], c: T) -> Vec<bool> {
        match op {
            CmpOp::Eq => a.iter().map(|x| *x == c).collect(),
            CmpOp::Ne => a.iter().map(|x| *x != c).collect(),
            CmpOp::Lt => a.iter().map(|x| *x < c).collect(),
            CmpOp::Le => a.iter().map(|x| *x <= c).collect(),
            CmpOp::Gt => a.iter().map(|x| *x > c).collect(),
            CmpOp::Ge => a.iter().map(|x| *x >= c).collect(),
        }
    }
    if c.is_null() {
        return Some(Vector::nulls(DataType::Bool, l.len()));
    }
    let out = match (&l.data, c) {
        (Data::Int4(a), Value::Int4(x) | Value::Date(x)) => against(op, a, *x),
        (
            Data::Int8(a),
            Value::Int8(x) | Value::Timestamp(x) | Value::TimestampTz(x) | Value::Time(x),
        ) => against(op, a, *x),
        (Data::Int2(a), Value::Int2(x)) => against(op, a, *x),
        (Data::Numeric(a), Value::Numeric(x)) => match x.as_small() {
            // Values compare by their unscaled integers brought to the
            // larger of the two scales (a decimal(15, 2) column against the
            // literal 24 compares 2400 with each value's unscaled integer).
            Some((cu, cs)) => {
                let mut at = (cs, Some(cu));
                a.iter()
                    .map(|v| match v.as_small() {
                        Some((u, s)) if s >= cs => {
                            if at.0 != s {
                                at = (s, rescale(cu, s - cs));
                            }
                            match at.1 {
                                Some(c) => op.test(u.cmp(&c)),
                                None => op.test(v.cmp(x)),
                            }
                        }
                        Some((u, s)) => match rescale(u, cs - s) {
                            Some(u) => op.test(u.cmp(&cu)),
                            None => op.test(v.cmp(x)),
                        },
                        None => op.test(v.cmp(x)),
                    })
                    .collect()
            }
            None => a.iter().map(|v| op.test(v.cmp(x))).collect(),
        },
        (Data::Text(a), Value::Text(x)) if order == TextOrder::Jsonb => {
            // The constant document is parsed once, not once per row.
            let x = tusk_types::json::Jsonb::parse(x).ok()?;
            (0..a.len())
                .map(|i| op.test(crate::func::json::cmp_jsonb_to(a.get(i), &x)))
                .collect()
        }
        (Data::Text(a), Value::Text(x)) if order != TextOrder::Bytes => {
            let x = x.as_bytes();
            (0..a.len())
                .map(|i| op.test(order.cmp(a.get(i), x)))
                .collect()
        }
        (Data::Text(a), Value::Text(x)) => {
            let x = x.as_bytes();
            (0..a.len()).map(|i| op.test(a.get(i).cmp(x))).collect()
        }
        (Data::Bytea(a), Value::Bytea(x)) => {
            (0..a.len()).map(|i| op.test(a.get(i).cmp(x))).collect()
        }
        (Data::Uuid(a), Value::Uuid(x)) => against(op, a, *x),
        _ => return None,
    };
    Some(Vector::new(Data::Bool(out), l.nulls.clone()))
}

/// `ROW(left) op ROW(right)`, lexicographically (see [`Expr::RowCompare`]).
/// Pair `k` is evaluated only for the active rows that pairs before it left
/// undecided, so a later pair never raises an error for a row an earlier
/// pair decided, as in PostgreSQL's step-by-step evaluation.
pub(super) fn eval_row_compare(
    op: CmpOp,
    left: &[Expr],
    right: &[Expr],
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let mut open: Vec<bool> = (0..n).map(|i| super::live(active, i)).collect();
    let mut out = vec![op.test(Ordering::Equal); n];
    let mut nulls = vec![false; n];
    for (l, r) in left.iter().zip(right) {
        if !open.contains(&true) {
            break;
        }
        let bp = TextOrder::between(l.data_type(), r.data_type());
        let lv = l.eval_ref(batch, Some(&open))?;
        let rv = r.eval_ref(batch, Some(&open))?;
        check_same(&lv, &rv)?;
        for i in 0..n {
            if !open[i] {
                continue;
            }
            if lv.is_null(i) || rv.is_null(i) {
                nulls[i] = true;
                open[i] = false;
                continue;
            }
            let o = cmp_rows(&lv, i, &rv, i, bp);
            if o != Ordering::Equal {
                out[i] = op.test(o);
                open[i] = false;
            }
        }
    }
    Ok(Vector::new(Data::Bool(out), Some(nulls)))
}

pub(super) fn eval_distinct(
    left: &Expr,
    right: &Expr,
    negated: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let bp = TextOrder::between(left.data_type(), right.data_type());
    let l = left.eval_ref(batch, active)?;
    let r = right.eval_ref(batch, active)?;
    let eq = compare(CmpOp::Eq, &l, &r, bp)?;
    let Data::Bool(eqv) = &eq.data else {
        unreachable!()
    };
    let out = (0..batch.len)
        .map(|i| {
            let distinct = match (l.is_null(i), r.is_null(i)) {
                (true, true) => false,
                (false, false) => !eqv[i],
                _ => true,
            };
            distinct != negated
        })
        .collect();
    Ok(Vector::new(Data::Bool(out), None))
}

/// `l op r` row by row; NULL where either side is.
pub(crate) fn compare(op: CmpOp, l: &Vector, r: &Vector, order: TextOrder) -> Result<Vector> {
    fn cmp_slices<T: Ord>(op: CmpOp, a: &[T], b: &[T]) -> Vec<bool> {
        a.iter().zip(b).map(|(x, y)| op.test(x.cmp(y))).collect()
    }
    let out = match (&l.data, &r.data) {
        (Data::Bool(a), Data::Bool(b)) => cmp_slices(op, a, b),
        (Data::Int4(a), Data::Int4(b)) => match op {
            // The common equality filter, written so it vectorises.
            CmpOp::Eq => a.iter().zip(b).map(|(x, y)| x == y).collect(),
            _ => cmp_slices(op, a, b),
        },
        (Data::Int8(a), Data::Int8(b)) => cmp_slices(op, a, b),
        (Data::Int2(a), Data::Int2(b)) => cmp_slices(op, a, b),
        (Data::Float8(a), Data::Float8(b)) => a
            .iter()
            .zip(b)
            .map(|(x, y)| op.test(float_cmp(*x, *y)))
            .collect(),
        (Data::Float4(a), Data::Float4(b)) => a
            .iter()
            .zip(b)
            .map(|(x, y)| op.test(float_cmp(*x as f64, *y as f64)))
            .collect(),
        (Data::Interval(a), Data::Interval(b)) => cmp_slices(op, a, b),
        (Data::Numeric(a), Data::Numeric(b)) => cmp_slices(op, a, b),
        (Data::Text(a), Data::Text(b)) if order != TextOrder::Bytes => (0..a.len())
            .map(|i| op.test(order.cmp(a.get(i), b.get(i))))
            .collect(),
        (Data::Text(a), Data::Text(b)) | (Data::Bytea(a), Data::Bytea(b)) => (0..a.len())
            .map(|i| op.test(a.get(i).cmp(b.get(i))))
            .collect(),
        (Data::Uuid(a), Data::Uuid(b)) => cmp_slices(op, a, b),
        (Data::Array(a), Data::Array(b)) => cmp_slices(op, a, b),
        _ => return Err(mismatch()),
    };
    Ok(Vector::new(Data::Bool(out), or_nulls(l, r)))
}

fn mismatch() -> ExecError {
    ExecError::new("comparison of mismatched types")
}

/// Compares row `i` of `a` with row `j` of `b` (non-NULL rows of one
/// representation).
pub(crate) fn cmp_rows(a: &Vector, i: usize, b: &Vector, j: usize, order: TextOrder) -> Ordering {
    match (&a.data, &b.data) {
        (Data::Bool(x), Data::Bool(y)) => x[i].cmp(&y[j]),
        (Data::Int2(x), Data::Int2(y)) => x[i].cmp(&y[j]),
        (Data::Int4(x), Data::Int4(y)) => x[i].cmp(&y[j]),
        (Data::Int8(x), Data::Int8(y)) => x[i].cmp(&y[j]),
        (Data::Float4(x), Data::Float4(y)) => float_cmp(x[i] as f64, y[j] as f64),
        (Data::Float8(x), Data::Float8(y)) => float_cmp(x[i], y[j]),
        (Data::Numeric(x), Data::Numeric(y)) => x[i].cmp(&y[j]),
        (Data::Interval(x), Data::Interval(y)) => x[i].cmp(&y[j]),
        (Data::Text(x), Data::Text(y)) => order.cmp(x.get(i), y.get(j)),
        (Data::Bytea(x), Data::Bytea(y)) => x.get(i).cmp(y.get(j)),
        (Data::Uuid(x), Data::Uuid(y)) => x[i].cmp(&y[j]),
        (Data::Array(x), Data::Array(y)) => x[i].cmp(&y[j]),
        _ => panic!("cmp_rows over vectors of different representations"),
    }
}

/// Checks that two vectors can be compared row by row.
pub(crate) fn check_same(a: &Vector, b: &Vector) -> Result<()> {
    if a.physical() == b.physical() {
        Ok(())
    } else {
        Err(mismatch())
    }
}
