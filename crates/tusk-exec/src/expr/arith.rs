//! Arithmetic: `+ - * / %` and unary minus, with PostgreSQL's overflow,
//! underflow and division-by-zero errors, raised only on active non-NULL
//! rows (see the `expr` module doc).
//!
//! A chain `a + b - c ...` is one node ([`super::Expr::Arith`]) folded left
//! to right here, so its length costs no recursion.

use super::{or_nulls, Expr};
use crate::error::{
    division_by_zero, float_overflow, float_underflow, int2_out_of_range, int4_out_of_range,
    int8_out_of_range, ExecError, Result,
};
use crate::numeric::Numeric;
use crate::vector::{Batch, Data, Vector};
use std::borrow::Cow;
use tusk_storage::DataType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl ArithOp {
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "%",
        }
    }
}

/// Evaluates a chain: the first operand, then each step in turn.
pub(super) fn eval_chain(
    first: &Expr,
    rest: &[(ArithOp, Expr)],
    ty: DataType,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let mut rest = rest;
    let mut acc_ty = first.data_type();
    // `constant op x` (as in `1 - l_discount`) without a vector of copies
    // of the constant.
    let mut acc = match (first, rest.first()) {
        (Expr::Const { value, .. }, Some((op, e))) if !matches!(e, Expr::Const { .. }) => {
            let r = e.eval_ref(batch, active)?;
            match numeric_with_constant(*op, value, &r, true, active)? {
                Some(v) => {
                    rest = &rest[1..];
                    acc_ty = ty;
                    Cow::Owned(v)
                }
                None => first.eval_ref(batch, active)?,
            }
        }
        _ => first.eval_ref(batch, active)?,
    };
    for (op, e) in rest {
        if let Expr::Const { value, .. } = e {
            if let Some(v) = numeric_with_constant(*op, value, &acc, false, active)? {
                acc = Cow::Owned(v);
                acc_ty = ty;
                continue;
            }
        }
        let r = e.eval_ref(batch, active)?;
        let rt = e.data_type();
        acc = Cow::Owned(if super::datetime_arith::is_datetime_step(acc_ty, rt, ty) {
            super::datetime_arith::eval(*op, &acc, acc_ty, &r, rt, ty, active)?
        } else {
            arith(*op, &acc, &r, active)?
        });
        acc_ty = ty;
    }
    Ok(acc.into_owned())
}

/// `c op v` (`const_left`) or `v op c` for a numeric constant `c` and a
/// numeric vector `v`, row by row as [`arith`] would compute them;
/// `None` when `v` is not numeric or `c` is NULL (then the caller makes a
/// vector of the constant).
fn numeric_with_constant(
    op: ArithOp,
    c: &crate::value::Value,
    v: &Vector,
    const_left: bool,
    active: Option<&[bool]>,
) -> Result<Option<Vector>> {
    let (crate::value::Value::Numeric(c), Data::Numeric(a)) = (c, &v.data) else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(a.len());
    let mut shifted = ShiftedConst::new(c);
    for (i, x) in a.iter().enumerate() {
        // `+` and `-` with the constant already at the values' scale: one
        // checked 128-bit add per row (`1 - l_discount`).
        if matches!(op, ArithOp::Add | ArithOp::Sub) {
            if let Some((xu, xs)) = x.as_small() {
                if let Some(cu) = shifted.at(xs) {
                    let r = match (op, const_left) {
                        (ArithOp::Add, _) => xu.checked_add(cu),
                        (_, true) => cu.checked_sub(xu),
                        (_, false) => xu.checked_sub(cu),
                    };
                    if let Some(r) = r {
                        out.push(Numeric::from_parts(r, xs));
                        continue;
                    }
                }
            }
        }
        let (l, r) = if const_left { (c, x) } else { (x, c) };
        let res = match op {
            ArithOp::Add => l.checked_add(r),
            ArithOp::Sub => l.checked_sub(r),
            ArithOp::Mul => l.checked_mul(r),
            ArithOp::Div => l.checked_div(r),
            ArithOp::Mod => l.checked_rem(r),
        };
        match res {
            Ok(n) => out.push(n),
            Err(_) if v.is_null(i) || active.is_some_and(|m| !m[i]) => {
                out.push(Numeric::from_i64(0))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(Vector::new(Data::Numeric(out), v.nulls.clone())))
}

/// A small numeric constant rescaled to the scale of the values it meets,
/// computed once per scale (a column's values share one): `c · 10^(s - sc)`
/// for values of scale `s >= sc`, so adding it keeps the value's scale, as
/// PostgreSQL's result scale (the larger one) requires.
struct ShiftedConst {
    c: Option<(i128, u16)>,
    last: Option<(u16, Option<i128>)>,
}

impl ShiftedConst {
    fn new(c: &Numeric) -> ShiftedConst {
        ShiftedConst {
            c: c.as_small(),
            last: None,
        }
    }

    /// The constant at scale `s`; `None` when `s` is below the constant's
    /// scale or the rescaled constant does not fit 128 bits.
    #[inline]
    fn at(&mut self, s: u16) -> Option<i128> {
        match self.last {
            Some((ls, v)) if ls == s => v,
            _ => {
                let (cu, cs) = self.c?;
                let v = s
                    .checked_sub(cs)
                    .and_then(|d| 10i128.checked_pow(d as u32))
                    .and_then(|p| cu.checked_mul(p));
                self.last = Some((s, v));
                v
            }
        }
    }
}

/// Integer arithmetic with PostgreSQL's overflow and division rules.
trait CheckedInt: Copy + Default {
    fn add(self, o: Self) -> Option<Self>;
    fn sub(self, o: Self) -> Option<Self>;
    fn mul(self, o: Self) -> Option<Self>;
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Self;
    fn is_zero(self) -> bool;
    fn neg(self) -> Option<Self>;
    fn overflow() -> ExecError;
}

macro_rules! checked_int {
    ($t:ty, $err:expr) => {
        impl CheckedInt for $t {
            #[inline]
            fn add(self, o: Self) -> Option<Self> {
                self.checked_add(o)
            }
            #[inline]
            fn sub(self, o: Self) -> Option<Self> {
                self.checked_sub(o)
            }
            #[inline]
            fn mul(self, o: Self) -> Option<Self> {
                self.checked_mul(o)
            }
            #[inline]
            fn div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            #[inline]
            fn rem(self, o: Self) -> Self {
                // MIN % -1 is 0 in PostgreSQL, not an overflow.
                self.checked_rem(o).unwrap_or(0)
            }
            #[inline]
            fn is_zero(self) -> bool {
                self == 0
            }
            #[inline]
            fn neg(self) -> Option<Self> {
                self.checked_neg()
            }
            fn overflow() -> ExecError {
                $err
            }
        }
    };
}
checked_int!(i16, int2_out_of_range());
checked_int!(i32, int4_out_of_range());
checked_int!(i64, int8_out_of_range());

fn arith_ints<T: CheckedInt>(
    op: ArithOp,
    a: &[T],
    b: &[T],
    nulls: &Option<Vec<bool>>,
    active: Option<&[bool]>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let skip = nulls.as_ref().is_some_and(|m| m[i]) || active.is_some_and(|m| !m[i]);
        let (x, y) = (a[i], b[i]);
        let r = match op {
            ArithOp::Add => x.add(y),
            ArithOp::Sub => x.sub(y),
            ArithOp::Mul => x.mul(y),
            ArithOp::Div | ArithOp::Mod if y.is_zero() => {
                if skip {
                    Some(T::default())
                } else {
                    return Err(division_by_zero());
                }
            }
            ArithOp::Div => x.div(y),
            ArithOp::Mod => Some(x.rem(y)),
        };
        match r {
            Some(v) => out.push(v),
            None if skip => out.push(T::default()),
            None => return Err(T::overflow()),
        }
    }
    Ok(out)
}

pub(crate) fn arith(
    op: ArithOp,
    l: &Vector,
    r: &Vector,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let nulls = or_nulls(l, r);
    let data = match (&l.data, &r.data) {
        (Data::Int2(a), Data::Int2(b)) => Data::Int2(arith_ints(op, a, b, &nulls, active)?),
        (Data::Int4(a), Data::Int4(b)) => Data::Int4(arith_ints(op, a, b, &nulls, active)?),
        (Data::Float8(a), Data::Float8(b)) => Data::Float8(arith_floats(op, a, b, &nulls, active)?),
        (Data::Float4(a), Data::Float4(b)) => Data::Float4(arith_floats(op, a, b, &nulls, active)?),
        (Data::Int8(a), Data::Int8(b)) => Data::Int8(arith_ints(op, a, b, &nulls, active)?),
        (Data::Numeric(a), Data::Numeric(b)) => {
            let mut out = Vec::with_capacity(a.len());
            for i in 0..a.len() {
                let skip = nulls.as_ref().is_some_and(|m| m[i]) || active.is_some_and(|m| !m[i]);
                let res = match op {
                    ArithOp::Add => a[i].checked_add(&b[i]),
                    ArithOp::Sub => a[i].checked_sub(&b[i]),
                    ArithOp::Mul => a[i].checked_mul(&b[i]),
                    ArithOp::Div => a[i].checked_div(&b[i]),
                    ArithOp::Mod => a[i].checked_rem(&b[i]),
                };
                match res {
                    Ok(v) => out.push(v),
                    Err(_) if skip => out.push(Numeric::from_i64(0)),
                    Err(e) => return Err(e.into()),
                }
            }
            Data::Numeric(out)
        }
        _ => return Err(ExecError::new("arithmetic on mismatched types")),
    };
    Ok(Vector::new(data, nulls))
}

/// Float arithmetic with PostgreSQL's checks: a result that is infinite
/// from finite inputs overflows, and a zero product or quotient of non-zero
/// inputs underflows; dividing by zero is an error (`float8div`). There is
/// no `%` for floats (the binder refuses it).
trait CheckedFloat: Copy + Default + PartialEq {
    fn ops(self, o: Self, op: ArithOp) -> Self;
    fn is_inf(self) -> bool;
    fn zero() -> Self;
}

macro_rules! checked_float {
    ($t:ty) => {
        impl CheckedFloat for $t {
            #[inline]
            fn ops(self, o: Self, op: ArithOp) -> Self {
                match op {
                    ArithOp::Add => self + o,
                    ArithOp::Sub => self - o,
                    ArithOp::Mul => self * o,
                    ArithOp::Div => self / o,
                    ArithOp::Mod => self % o,
                }
            }
            #[inline]
            fn is_inf(self) -> bool {
                self.is_infinite()
            }
            #[inline]
            fn zero() -> Self {
                0.0
            }
        }
    };
}
checked_float!(f32);
checked_float!(f64);

fn arith_floats<T: CheckedFloat>(
    op: ArithOp,
    a: &[T],
    b: &[T],
    nulls: &Option<Vec<bool>>,
    active: Option<&[bool]>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let (x, y) = (a[i], b[i]);
        let r = x.ops(y, op);
        let skip = || nulls.as_ref().is_some_and(|m| m[i]) || active.is_some_and(|m| !m[i]);
        let err = if op == ArithOp::Div && y == T::zero() {
            Some(division_by_zero())
        } else if r.is_inf() && !x.is_inf() && !y.is_inf() {
            Some(float_overflow())
        } else if r == T::zero()
            && matches!(op, ArithOp::Mul | ArithOp::Div)
            && x != T::zero()
            && !(op == ArithOp::Div && y.is_inf())
            && !(op == ArithOp::Mul && y == T::zero())
        {
            Some(float_underflow())
        } else {
            None
        };
        match err {
            Some(e) if !skip() => return Err(e),
            Some(_) => out.push(T::default()),
            None => out.push(r),
        }
    }
    Ok(out)
}

pub(super) fn negate(v: &Vector, active: Option<&[bool]>) -> Result<Vector> {
    fn neg_ints<T: CheckedInt>(a: &[T], v: &Vector, active: Option<&[bool]>) -> Result<Vec<T>> {
        a.iter()
            .enumerate()
            .map(|(i, x)| match x.neg() {
                Some(y) => Ok(y),
                None if v.is_null(i) || active.is_some_and(|m| !m[i]) => Ok(T::default()),
                None => Err(T::overflow()),
            })
            .collect()
    }
    let data = match &v.data {
        Data::Int2(a) => Data::Int2(neg_ints(a, v, active)?),
        Data::Float4(a) => Data::Float4(a.iter().map(|x| -x).collect()),
        Data::Float8(a) => Data::Float8(a.iter().map(|x| -x).collect()),
        Data::Int4(a) => Data::Int4(neg_ints(a, v, active)?),
        Data::Int8(a) => Data::Int8(neg_ints(a, v, active)?),
        Data::Numeric(a) => Data::Numeric(a.iter().map(|x| x.negated()).collect()),
        Data::Interval(a) => Data::Interval(
            a.iter()
                .enumerate()
                .map(|(i, x)| match x.checked_neg() {
                    Ok(y) => Ok(y),
                    Err(_) if v.is_null(i) || active.is_some_and(|m| !m[i]) => Ok(*x),
                    Err(e) => Err(e.into()),
                })
                .collect::<Result<_>>()?,
        ),
        _ => return Err(ExecError::new("unary minus on a non-numeric value")),
    };
    Ok(Vector::new(data, v.nulls.clone()))
}
