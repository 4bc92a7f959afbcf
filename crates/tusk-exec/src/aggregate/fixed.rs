//! Fixed-point kernels for the arguments of `sum` and `avg` over numeric.
//!
//! `sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))` over
//! `numeric(15, 2)` columns needs no general decimal arithmetic: every value
//! of a batch is an integer with one scale (2), its products fit 128 bits,
//! and the sum of a group is a 128-bit integer at the argument's scale. An
//! argument made of numeric columns, numeric constants, `+`, `-` and `*` is
//! compiled once per query into a [`FixedArg`]; per batch it runs over
//! *lanes* — one `i128` per row and one scale per column — and the
//! accumulator adds the lane to each row's group with checked 128-bit adds.
//!
//! ## Exactness and fallback
//!
//! A lane exists only when the batch agrees: every non-NULL value of each
//! column the argument reads is finite and small with one scale shared by the
//! column's rows. Scales follow PostgreSQL's rules as the general operators
//! do (`+` and `-`: the larger scale, the other side multiplied up; `*`: the
//! sum of the scales), so a lane's row is the general result's unscaled
//! integer, digit for digit. Any overflow of 128 bits, any NaN or infinity,
//! any column whose rows differ in scale — on any row, NULL rows aside —
//! makes [`FixedArg::eval`] return `None`, and the batch takes the general
//! path, which computes the exact result or raises PostgreSQL's error. So a
//! kernel never raises an error itself and never changes an answer. The
//! general path evaluates the argument for every row of the batch, too, so
//! which rows are evaluated does not change either.

use crate::expr::{ArithOp, Expr};
use crate::numeric::{unscaled_product as mul, Numeric};
use crate::value::Value;
use crate::vector::{Batch, Data};
use std::borrow::Cow;
use tusk_storage::DataType;

/// A compiled argument.
#[derive(Debug, Clone)]
pub enum FixedArg {
    Column(usize),
    Const(i128, u16),
    Chain(Box<FixedArg>, Vec<(ArithOp, FixedArg)>),
}

/// One value per row of a batch, all at `scale`; NULL rows hold 0.
#[derive(Clone)]
pub struct Lane {
    pub values: Vec<i128>,
    pub scale: u16,
    pub nulls: Option<Vec<bool>>,
}

impl FixedArg {
    /// The kernel of `e`, when `e` is numeric columns and constants under
    /// `+`, `-` and `*` only.
    pub fn compile(e: &Expr) -> Option<FixedArg> {
        if e.data_type() != DataType::Numeric {
            return None;
        }
        match e {
            Expr::Column { index, .. } => Some(FixedArg::Column(*index)),
            Expr::Const {
                value: Value::Numeric(n),
                ..
            } => {
                let (u, s) = n.as_small()?;
                Some(FixedArg::Const(u, s))
            }
            Expr::Arith { first, rest, .. } => {
                let steps = rest
                    .iter()
                    .map(|(op, e)| match op {
                        ArithOp::Add | ArithOp::Sub | ArithOp::Mul => {
                            Some((*op, FixedArg::compile(e)?))
                        }
                        ArithOp::Div | ArithOp::Mod => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(FixedArg::Chain(Box::new(FixedArg::compile(first)?), steps))
            }
            _ => None,
        }
    }

    /// The argument over every row of the batch of `lanes`, or `None` when
    /// the batch needs the general path (see the module doc). A column is
    /// the batch's own lane.
    pub fn lane<'a>(&self, lanes: &'a mut Lanes) -> Option<Cow<'a, Lane>> {
        match self {
            FixedArg::Column(c) => lanes.column(*c).map(Cow::Borrowed),
            _ => self.eval(lanes).map(Cow::Owned),
        }
    }

    fn eval(&self, lanes: &mut Lanes) -> Option<Lane> {
        match self {
            FixedArg::Column(c) => lanes.column(*c).cloned(),
            FixedArg::Const(u, s) => Some(Lane {
                values: vec![*u; lanes.batch.len],
                scale: *s,
                nulls: None,
            }),
            FixedArg::Chain(first, steps) => {
                // `c op x` (as in `1 - l_discount`) without a lane of copies
                // of the constant.
                let (mut acc, steps) = match (&**first, steps.split_first()) {
                    (FixedArg::Const(u, s), Some(((op, e), rest)))
                        if !matches!(e, FixedArg::Const(..)) =>
                    {
                        (const_left(*op, *u, *s, e.eval(lanes)?)?, rest)
                    }
                    _ => (first.eval(lanes)?, &steps[..]),
                };
                for (op, e) in steps {
                    acc = match e {
                        FixedArg::Const(u, s) => step_const(*op, acc, *u, *s)?,
                        _ => step(*op, acc, &e.eval(lanes)?)?,
                    };
                }
                Some(acc)
            }
        }
    }
}

/// The column lanes of one batch, each made once for all the calls that
/// read the column (`None` inside: the column has no lane in this batch).
pub struct Lanes<'b> {
    batch: &'b Batch,
    columns: Vec<Option<Option<Lane>>>,
}

impl<'b> Lanes<'b> {
    pub fn new(batch: &'b Batch) -> Lanes<'b> {
        Lanes {
            batch,
            columns: vec![None; batch.columns.len()],
        }
    }

    fn column(&mut self, c: usize) -> Option<&Lane> {
        let batch = self.batch;
        self.columns[c]
            .get_or_insert_with(|| column_lane(batch, c))
            .as_ref()
    }
}

/// Column `c` of `b` as a lane, if its non-NULL values are small with one
/// scale.
fn column_lane(b: &Batch, c: usize) -> Option<Lane> {
    let v = &b.columns[c];
    let Data::Numeric(d) = &v.data else {
        return None;
    };
    let mut scale = None;
    let mut values = Vec::with_capacity(d.len());
    for (i, x) in d.iter().enumerate() {
        if v.is_null(i) {
            values.push(0);
            continue;
        }
        let (u, s) = x.as_small()?;
        if *scale.get_or_insert(s) != s {
            return None;
        }
        values.push(u);
    }
    Some(Lane {
        values,
        scale: scale.unwrap_or(0),
        nulls: v.nulls.clone(),
    })
}

/// `10^d`, if it fits.
fn pow10(d: u16) -> Option<i128> {
    10i128.checked_pow(d as u32)
}

/// `l op r` row by row; NULL rows (0 in either lane) cannot overflow.
fn step(op: ArithOp, mut l: Lane, r: &Lane) -> Option<Lane> {
    let nulls = match (l.nulls.take(), &r.nulls) {
        (None, None) => None,
        (Some(x), None) => Some(x),
        (None, Some(y)) => Some(y.clone()),
        (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(p, q)| *p || *q).collect()),
    };
    let ok = match op {
        ArithOp::Mul => {
            let scale = l.scale.checked_add(r.scale)?;
            // Far below PostgreSQL's 16,383, so the general path's rounding
            // of a product's scale never applies.
            if scale > 1000 {
                return None;
            }
            l.scale = scale;
            zip_checked(&mut l.values, &r.values, mul)
        }
        ArithOp::Add | ArithOp::Sub => {
            let sub = op == ArithOp::Sub;
            let addsub = |a: i128, b: i128| {
                if sub {
                    a.checked_sub(b)
                } else {
                    a.checked_add(b)
                }
            };
            let scale = l.scale.max(r.scale);
            let (pl, pr) = (pow10(scale - l.scale)?, pow10(scale - r.scale)?);
            l.scale = scale;
            if pl == 1 && pr == 1 {
                zip_checked(&mut l.values, &r.values, addsub)
            } else {
                zip_checked(&mut l.values, &r.values, |a, b| {
                    addsub(a.checked_mul(pl)?, b.checked_mul(pr)?)
                })
            }
        }
        ArithOp::Div | ArithOp::Mod => false,
    };
    l.nulls = nulls;
    ok.then_some(l)
}

/// `l op c` for a constant `c` at scale `cs`.
fn step_const(op: ArithOp, mut l: Lane, c: i128, cs: u16) -> Option<Lane> {
    let ok = match op {
        ArithOp::Mul => {
            l.scale = l.scale.checked_add(cs).filter(|&s| s <= 1000)?;
            map_checked(&mut l.values, |a| mul(a, c))
        }
        ArithOp::Add | ArithOp::Sub => {
            let c = if op == ArithOp::Sub {
                c.checked_neg()?
            } else {
                c
            };
            if l.scale < cs {
                let p = pow10(cs - l.scale)?;
                l.scale = cs;
                map_checked(&mut l.values, |a| a.checked_mul(p)?.checked_add(c))
            } else {
                let c = c.checked_mul(pow10(l.scale - cs)?)?;
                map_checked(&mut l.values, |a| a.checked_add(c))
            }
        }
        ArithOp::Div | ArithOp::Mod => false,
    };
    ok.then_some(l)
}

/// `c op r` for a constant `c` at scale `cs`.
fn const_left(op: ArithOp, c: i128, cs: u16, mut r: Lane) -> Option<Lane> {
    match op {
        ArithOp::Add | ArithOp::Mul => step_const(op, r, c, cs),
        ArithOp::Sub => {
            // c - x = -x + c, exactly.
            if !map_checked(&mut r.values, |x| x.checked_neg()) {
                return None;
            }
            step_const(ArithOp::Add, r, c, cs)
        }
        ArithOp::Div | ArithOp::Mod => None,
    }
}

/// `a[i] = f(a[i], b[i])` for every row; false if any `f` overflowed.
#[inline]
fn zip_checked(a: &mut [i128], b: &[i128], f: impl Fn(i128, i128) -> Option<i128>) -> bool {
    let mut ok = true;
    for (x, &y) in a.iter_mut().zip(b) {
        match f(*x, y) {
            Some(v) => *x = v,
            None => ok = false,
        }
    }
    ok
}

/// `a[i] = f(a[i])` for every row; false if any `f` overflowed.
#[inline]
fn map_checked(a: &mut [i128], f: impl Fn(i128) -> Option<i128>) -> bool {
    let mut ok = true;
    for x in a.iter_mut() {
        match f(*x) {
            Some(v) => *x = v,
            None => ok = false,
        }
    }
    ok
}

impl Lane {
    /// Row `i` as a numeric.
    #[inline]
    pub fn numeric(&self, i: usize) -> Numeric {
        Numeric::from_parts(self.values[i], self.scale)
    }

    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|m| m[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::Vector;

    fn num(s: &str) -> Numeric {
        Numeric::from_text(s).unwrap()
    }

    fn batch(cols: &[&[Option<&str>]]) -> Batch {
        let n = cols[0].len();
        let vs = cols
            .iter()
            .map(|c| {
                let mut v = Vector::with_capacity(DataType::Numeric, n);
                for x in c.iter() {
                    v.push_value(&x.map_or(Value::Null, |s| Value::Numeric(num(s))));
                }
                v
            })
            .collect();
        Batch::new(vs, n)
    }

    fn col(i: usize) -> Expr {
        Expr::Column {
            index: i,
            ty: DataType::Numeric,
        }
    }

    fn konst(s: &str) -> Expr {
        Expr::Const {
            value: Value::Numeric(num(s)),
            ty: DataType::Numeric,
        }
    }

    fn ar(l: Expr, op: ArithOp, r: Expr) -> Expr {
        Expr::arith(op, l, r, DataType::Numeric)
    }

    /// The kernel's rows against the general evaluation's, digit for digit.
    fn same_as_general(e: &Expr, b: &Batch) -> bool {
        let mut lanes = Lanes::new(b);
        let Some(lane) = FixedArg::compile(e).unwrap().lane(&mut lanes) else {
            return false;
        };
        let general = e.eval(b).unwrap();
        let Data::Numeric(g) = &general.data else {
            panic!("numeric")
        };
        for (i, want) in g.iter().enumerate() {
            assert_eq!(lane.is_null(i), general.is_null(i), "row {i}");
            if !lane.is_null(i) {
                assert_eq!(lane.numeric(i).to_string(), want.to_string(), "row {i}");
            }
        }
        true
    }

    #[test]
    fn q1_charge_matches_the_general_path() {
        // p * (1 - d) * (1 + t), with NULLs and negative values.
        let e = ar(
            ar(col(0), ArithOp::Mul, ar(konst("1"), ArithOp::Sub, col(1))),
            ArithOp::Mul,
            ar(konst("1"), ArithOp::Add, col(2)),
        );
        let b = batch(&[
            &[
                Some("21168.23"),
                Some("-45983.16"),
                None,
                Some("9999999999999.99"),
            ],
            &[Some("0.04"), Some("0.09"), Some("0.10"), Some("0.00")],
            &[Some("0.02"), None, Some("0.02"), Some("-0.08")],
        ]);
        assert!(same_as_general(&e, &b));
        let e = ar(col(0), ArithOp::Sub, konst("0.125"));
        assert!(same_as_general(&e, &b));
        let e = ar(konst("2.5"), ArithOp::Sub, col(1));
        assert!(same_as_general(&e, &b));
    }

    #[test]
    fn batches_the_kernel_cannot_hold_take_the_general_path() {
        let e = ar(col(0), ArithOp::Mul, col(1));
        // Two scales in one column.
        let b = batch(&[&[Some("1.5"), Some("2.25")], &[Some("1"), Some("1")]]);
        assert!(FixedArg::compile(&e)
            .unwrap()
            .lane(&mut Lanes::new(&b))
            .is_none());
        // NaN.
        let b = batch(&[&[Some("NaN"), Some("2")], &[Some("1"), Some("1")]]);
        assert!(FixedArg::compile(&e)
            .unwrap()
            .lane(&mut Lanes::new(&b))
            .is_none());
        // A product past 128 bits.
        let big = "99999999999999999999999999999";
        let b = batch(&[&[Some(big), Some("2")], &[Some(big), Some("1")]]);
        assert!(FixedArg::compile(&e)
            .unwrap()
            .lane(&mut Lanes::new(&b))
            .is_none());
        // ... unless that row is NULL on the other side.
        let b = batch(&[&[Some(big), Some("2")], &[None, Some("1")]]);
        assert!(same_as_general(&e, &b));
        // Division is not compiled at all.
        assert!(FixedArg::compile(&ar(col(0), ArithOp::Div, col(1))).is_none());
    }
}
