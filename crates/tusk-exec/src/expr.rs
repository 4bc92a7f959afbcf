//! Bound scalar expressions and their vectorised evaluation.
//!
//! The binder (in tusk-sql) resolves names and types and inserts casts, so
//! every operator here sees operands of one type. Evaluation takes a batch
//! and returns one vector; the type dispatch happens once per batch.
//!
//! ## Errors only where PostgreSQL would raise them
//!
//! PostgreSQL evaluates `a AND b` row by row and skips `b` when `a` is false,
//! so `x <> 0 AND 10 / x > 1` never divides by zero. Evaluating a whole batch
//! at once would. Every evaluation therefore carries an *active* mask: rows
//! outside it must not raise errors (their result is arbitrary). `AND` narrows
//! the mask for its right side to rows whose left side is not false, `OR` to
//! rows whose left side is not true. NULL inputs never raise errors either.

use crate::cast::cast_value;
use crate::error::{
    division_by_zero, float_overflow, float_underflow, int2_out_of_range, int4_out_of_range,
    int8_out_of_range, ExecError, Result,
};
use crate::numeric::Numeric;
use crate::value::Value;
use crate::vector::{Batch, Data, Strings, Vector};
use std::cmp::Ordering;
use tusk_storage::DataType;
use tusk_types::float::float_cmp;

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

    #[inline]
    fn test(self, o: Ordering) -> bool {
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

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Column {
        index: usize,
        ty: DataType,
    },
    Const {
        value: Value,
        ty: DataType,
    },
    Arith {
        op: ArithOp,
        left: Box<Expr>,
        right: Box<Expr>,
        ty: DataType,
    },
    Neg {
        arg: Box<Expr>,
        ty: DataType,
    },
    Cmp {
        op: CmpOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull {
        arg: Box<Expr>,
        negated: bool,
    },
    Cast {
        arg: Box<Expr>,
        to: DataType,
    },
    Concat {
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Like {
        arg: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        case_insensitive: bool,
    },
    /// A `character(n)` value used as text: trailing spaces do not count
    /// (PostgreSQL's bpchar-to-text conversion).
    BpcharToText(Box<Expr>),
    /// A parameter: `$n` of a prepared statement, or an outer row's value
    /// inside a SubPlan. It must be replaced by a constant before evaluation.
    Param {
        index: usize,
        ty: DataType,
    },
}

impl Expr {
    pub fn data_type(&self) -> DataType {
        match self {
            Expr::Column { ty, .. }
            | Expr::Param { ty, .. }
            | Expr::Const { ty, .. }
            | Expr::Arith { ty, .. }
            | Expr::Neg { ty, .. } => *ty,
            Expr::Cast { to, .. } => *to,
            Expr::Concat { .. } | Expr::BpcharToText(_) => DataType::Text,
            Expr::Cmp { .. }
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Not(_)
            | Expr::IsNull { .. }
            | Expr::Like { .. } => DataType::Bool,
        }
    }

    /// Calls `f` on each direct sub-expression.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match self {
            Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => {}
            Expr::Arith { left, right, .. }
            | Expr::Cmp { left, right, .. }
            | Expr::Concat { left, right }
            | Expr::And(left, right)
            | Expr::Or(left, right)
            | Expr::Like {
                arg: left,
                pattern: right,
                ..
            } => {
                f(left);
                f(right);
            }
            Expr::Neg { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::BpcharToText(arg) => f(arg),
        }
    }

    /// Calls `f` on each direct sub-expression, mutably.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut Expr)) {
        match self {
            Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => {}
            Expr::Arith { left, right, .. }
            | Expr::Cmp { left, right, .. }
            | Expr::Concat { left, right }
            | Expr::And(left, right)
            | Expr::Or(left, right)
            | Expr::Like {
                arg: left,
                pattern: right,
                ..
            } => {
                f(left);
                f(right);
            }
            Expr::Neg { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::BpcharToText(arg) => f(arg),
        }
    }

    /// Column indexes this expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        if let Expr::Column { index, .. } = self {
            out.push(*index);
        }
        self.for_each_child(|c| c.columns(out));
    }

    /// Rewrites column references through `map` (old index -> new index).
    pub fn remap_columns(&mut self, map: &dyn Fn(usize) -> usize) {
        if let Expr::Column { index, .. } = self {
            *index = map(*index);
        }
        self.for_each_child_mut(|c| c.remap_columns(map));
    }

    /// Replaces each `Param` whose index `values` maps by that constant.
    pub fn substitute_params(&mut self, values: &dyn Fn(usize) -> Option<Value>) {
        if let Expr::Param { index, ty } = self {
            if let Some(value) = values(*index) {
                *self = Expr::Const { value, ty: *ty };
            }
            return;
        }
        self.for_each_child_mut(|c| c.substitute_params(values));
    }

    /// Whether any `Param` with an index `wanted` accepts occurs.
    pub fn uses_params(&self, wanted: &dyn Fn(usize) -> bool) -> bool {
        if let Expr::Param { index, .. } = self {
            return wanted(*index);
        }
        let mut found = false;
        self.for_each_child(|c| found = found || c.uses_params(wanted));
        found
    }

    /// Evaluates over every row of `batch`.
    pub fn eval(&self, batch: &Batch) -> Result<Vector> {
        self.eval_active(batch, None)
    }

    /// Evaluates; rows where `active` is false raise no errors.
    pub fn eval_active(&self, batch: &Batch, active: Option<&[bool]>) -> Result<Vector> {
        let n = batch.len;
        match self {
            Expr::Column { index, .. } => Ok(batch.columns[*index].clone()),
            Expr::Const { value, ty } => Ok(Vector::constant(value, *ty, n)),
            Expr::Param { index, .. } => Err(ExecError::new(format!(
                "there is no parameter ${}",
                index + 1
            ))),
            Expr::Arith {
                op, left, right, ..
            } => {
                let l = left.eval_active(batch, active)?;
                let r = right.eval_active(batch, active)?;
                arith(*op, &l, &r, active)
            }
            Expr::Neg { arg, .. } => {
                let v = arg.eval_active(batch, active)?;
                negate(&v, active)
            }
            Expr::Cmp { op, left, right } => {
                let l = left.eval_active(batch, active)?;
                let r = right.eval_active(batch, active)?;
                Ok(compare(*op, &l, &r))
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                let is_and = matches!(self, Expr::And(..));
                let l = a.eval_active(batch, active)?;
                let (lv, ln) = bools(&l);
                // The right side matters where the left is NULL or decides nothing.
                let right_active: Vec<bool> = (0..n)
                    .map(|i| {
                        active.is_none_or(|m| m[i]) && (ln.is_some_and(|m| m[i]) || lv[i] == is_and)
                    })
                    .collect();
                let r = b.eval_active(batch, Some(&right_active))?;
                let (rv, rn) = bools(&r);
                let mut out = Vec::with_capacity(n);
                let mut nulls = vec![false; n];
                for i in 0..n {
                    let lnull = ln.is_some_and(|m| m[i]);
                    let rnull = rn.is_some_and(|m| m[i]);
                    // Three-valued logic: a decisive non-NULL side wins.
                    let decisive = !is_and;
                    if (!lnull && lv[i] == decisive) || (!rnull && rv[i] == decisive) {
                        out.push(decisive);
                    } else if lnull || rnull {
                        out.push(false);
                        nulls[i] = true;
                    } else {
                        out.push(!decisive);
                    }
                }
                Ok(Vector::new(Data::Bool(out), Some(nulls)))
            }
            Expr::Not(a) => {
                let v = a.eval_active(batch, active)?;
                let (b, nulls) = bools(&v);
                Ok(Vector::new(
                    Data::Bool(b.iter().map(|x| !x).collect()),
                    nulls.cloned(),
                ))
            }
            Expr::IsNull { arg, negated } => {
                let v = arg.eval_active(batch, active)?;
                let out = (0..n).map(|i| v.is_null(i) != *negated).collect();
                Ok(Vector::new(Data::Bool(out), None))
            }
            Expr::Cast { arg, to } => {
                let v = arg.eval_active(batch, active)?;
                cast_vector(&v, arg.data_type(), *to, active)
            }
            Expr::BpcharToText(arg) => {
                let v = arg.eval_active(batch, active)?;
                let Data::Text(s) = &v.data else {
                    return Err(ExecError::new("character(n) value is not text"));
                };
                let mut out = Strings::with_capacity(n, n * 8);
                for x in s.iter() {
                    let end = x.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
                    out.push(&x[..end]);
                }
                Ok(Vector::new(Data::Text(out), v.nulls.clone()))
            }
            Expr::Concat { left, right } => {
                let l = left.eval_active(batch, active)?;
                let r = right.eval_active(batch, active)?;
                let (Data::Text(a), Data::Text(b)) = (&l.data, &r.data) else {
                    return Err(ExecError::new("operator || expects text operands"));
                };
                let mut s = Strings::with_capacity(n, n * 16);
                let mut buf = Vec::new();
                for i in 0..n {
                    buf.clear();
                    buf.extend_from_slice(a.get(i));
                    buf.extend_from_slice(b.get(i));
                    s.push(&buf);
                }
                Ok(Vector::new(Data::Text(s), or_nulls(&l, &r)))
            }
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let v = arg.eval_active(batch, active)?;
                let p = pattern.eval_active(batch, active)?;
                let (Data::Text(a), Data::Text(b)) = (&v.data, &p.data) else {
                    return Err(ExecError::new("LIKE expects text operands"));
                };
                let mut out = Vec::with_capacity(n);
                let mut cached: Option<(Vec<u8>, LikePattern)> = None;
                for i in 0..n {
                    let pat = b.get(i);
                    if cached.as_ref().is_none_or(|(raw, _)| raw.as_slice() != pat) {
                        let text = std::str::from_utf8(pat).unwrap_or("");
                        cached =
                            Some((pat.to_vec(), LikePattern::compile(text, *case_insensitive)?));
                    }
                    let m = cached.as_ref().unwrap().1.matches(a.get_str(i));
                    out.push(m != *negated);
                }
                Ok(Vector::new(Data::Bool(out), or_nulls(&v, &p)))
            }
        }
    }
}

/// Evaluates each expression over `batch`.
pub fn eval_all(exprs: &[Expr], batch: &Batch) -> Result<Vec<Vector>> {
    exprs.iter().map(|e| e.eval(batch)).collect()
}

fn bools(v: &Vector) -> (&[bool], Option<&Vec<bool>>) {
    match &v.data {
        Data::Bool(b) => (b, v.nulls.as_ref()),
        _ => panic!("boolean expression produced a non-boolean vector"),
    }
}

fn or_nulls(a: &Vector, b: &Vector) -> Option<Vec<bool>> {
    match (&a.nulls, &b.nulls) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(p, q)| *p || *q).collect()),
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

fn arith(op: ArithOp, l: &Vector, r: &Vector, active: Option<&[bool]>) -> Result<Vector> {
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
                    ArithOp::Add => a[i].checked_add(b[i]),
                    ArithOp::Sub => a[i].checked_sub(b[i]),
                    ArithOp::Mul => a[i].checked_mul(b[i]),
                    ArithOp::Div => a[i].checked_div(b[i]),
                    ArithOp::Mod => numeric_mod(a[i], b[i]),
                };
                match res {
                    Ok(v) => out.push(v),
                    Err(_) if skip => out.push(Numeric::from_i64(0)),
                    Err(e) => return Err(ExecError::new(e)),
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

fn numeric_mod(a: Numeric, b: Numeric) -> std::result::Result<Numeric, &'static str> {
    if b.unscaled == 0 {
        return Err("division by zero");
    }
    let s = a.scale.max(b.scale);
    let (x, y) = (a.rescale(s)?, b.rescale(s)?);
    Ok(Numeric {
        unscaled: x.unscaled % y.unscaled,
        scale: s,
    })
}

fn negate(v: &Vector, active: Option<&[bool]>) -> Result<Vector> {
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
        _ => return Err(ExecError::new("unary minus on a non-numeric value")),
    };
    Ok(Vector::new(data, v.nulls.clone()))
}

fn compare(op: CmpOp, l: &Vector, r: &Vector) -> Vector {
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
        (Data::Text(a), Data::Text(b)) => (0..a.len())
            .map(|i| op.test(a.get(i).cmp(b.get(i))))
            .collect(),
        _ => panic!("comparison of mismatched types"),
    };
    Vector::new(Data::Bool(out), or_nulls(l, r))
}

/// Casts a vector; the common integer casts have their own loops.
pub fn cast_vector(
    v: &Vector,
    from: DataType,
    to: DataType,
    active: Option<&[bool]>,
) -> Result<Vector> {
    if from == to || (from.is_string() && to.is_string()) {
        return Ok(v.clone());
    }
    let skip = |i: usize| v.is_null(i) || active.is_some_and(|m| !m[i]);
    let data = match (&v.data, from, to) {
        (Data::Int4(a), DataType::Int4, DataType::Int8) => {
            Data::Int8(a.iter().map(|&x| x as i64).collect())
        }
        (Data::Int8(a), DataType::Int8, DataType::Int4) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, &x) in a.iter().enumerate() {
                match i32::try_from(x) {
                    Ok(y) => out.push(y),
                    Err(_) if skip(i) => out.push(0),
                    Err(_) => return Err(int4_out_of_range()),
                }
            }
            Data::Int4(out)
        }
        (Data::Int4(a), DataType::Int4, DataType::Text) => {
            let mut s = Strings::with_capacity(a.len(), a.len() * 8);
            for x in a {
                s.push(x.to_string().as_bytes());
            }
            Data::Text(s)
        }
        _ => {
            let mut out = Vector::with_capacity(to, v.len());
            for i in 0..v.len() {
                if skip(i) {
                    out.push_value(&Value::Null);
                } else {
                    out.push_value(&cast_value(&v.value_as(i, from), to)?);
                }
            }
            return Ok(Vector::new(out.data, v.nulls.clone()));
        }
    };
    Ok(Vector::new(data, v.nulls.clone()))
}

/// A compiled LIKE pattern (`%` any run, `_` one character, `\` escapes).
#[derive(Debug, Clone)]
pub struct LikePattern {
    tokens: Vec<LikeToken>,
    case_insensitive: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum LikeToken {
    Any,
    One,
    Lit(char),
}

impl LikePattern {
    pub fn compile(p: &str, case_insensitive: bool) -> Result<LikePattern> {
        let mut tokens = Vec::new();
        let mut chars = p.chars();
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '%' => LikeToken::Any,
                '_' => LikeToken::One,
                '\\' => match chars.next() {
                    Some(e) => LikeToken::Lit(e),
                    None => {
                        return Err(ExecError::new(
                            "LIKE pattern must not end with escape character",
                        ))
                    }
                },
                c => LikeToken::Lit(if case_insensitive { lower(c) } else { c }),
            });
        }
        Ok(LikePattern {
            tokens,
            case_insensitive,
        })
    }

    pub fn matches(&self, s: &str) -> bool {
        let text: Vec<char> = if self.case_insensitive {
            s.chars().map(lower).collect()
        } else {
            s.chars().collect()
        };
        // Greedy matching with backtracking to the last `%` (linear for the
        // usual patterns).
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.tokens.get(p) {
                Some(LikeToken::Any) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(LikeToken::One) => {
                    t += 1;
                    p += 1;
                }
                Some(LikeToken::Lit(c)) if *c == text[t] => {
                    t += 1;
                    p += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        self.tokens[p..].iter().all(|t| *t == LikeToken::Any)
    }
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(v: Vec<i32>, nulls: Option<Vec<bool>>) -> Vector {
        Vector::new(Data::Int4(v), nulls)
    }

    #[test]
    fn like() {
        let m = |p: &str, s: &str| LikePattern::compile(p, false).unwrap().matches(s);
        assert!(m("a%", "abc"));
        assert!(m("%c", "abc"));
        assert!(m("a_c", "abc"));
        assert!(!m("a_c", "abbc"));
        assert!(m("%b%", "abc"));
        assert!(m("%", ""));
        assert!(!m("_", ""));
        assert!(m("a\\%", "a%"));
        assert!(!m("a\\%", "ab"));
        assert!(m("%a%a%", "banana"));
        assert!(LikePattern::compile("A%", true).unwrap().matches("abc"));
    }

    #[test]
    fn and_skips_errors_on_rows_the_left_side_rejects() {
        // x <> 0 AND 10 / x > 1
        let x = Expr::Column {
            index: 0,
            ty: DataType::Int4,
        };
        let c = |v| {
            Box::new(Expr::Const {
                value: Value::Int4(v),
                ty: DataType::Int4,
            })
        };
        let e = Expr::And(
            Box::new(Expr::Cmp {
                op: CmpOp::Ne,
                left: Box::new(x.clone()),
                right: c(0),
            }),
            Box::new(Expr::Cmp {
                op: CmpOp::Gt,
                left: Box::new(Expr::Arith {
                    op: ArithOp::Div,
                    left: c(10),
                    right: Box::new(x),
                    ty: DataType::Int4,
                }),
                right: c(1),
            }),
        );
        let b = Batch::new(vec![col(vec![0, 5, 20], None)], 3);
        let v = e.eval(&b).unwrap();
        assert_eq!(v.data, Data::Bool(vec![false, true, false]));
    }

    #[test]
    fn overflow_and_division_errors() {
        let b = Batch::new(
            vec![
                col(vec![i32::MAX, 1], None),
                col(vec![1, 0], Some(vec![false, true])),
            ],
            2,
        );
        let add = Expr::Arith {
            op: ArithOp::Add,
            left: Box::new(Expr::Column {
                index: 0,
                ty: DataType::Int4,
            }),
            right: Box::new(Expr::Const {
                value: Value::Int4(1),
                ty: DataType::Int4,
            }),
            ty: DataType::Int4,
        };
        assert_eq!(add.eval(&b).unwrap_err().message, "integer out of range");
        // Division by a NULL zero is NULL, not an error.
        let div = Expr::Arith {
            op: ArithOp::Div,
            left: Box::new(Expr::Const {
                value: Value::Int4(1),
                ty: DataType::Int4,
            }),
            right: Box::new(Expr::Column {
                index: 1,
                ty: DataType::Int4,
            }),
            ty: DataType::Int4,
        };
        let v = div.eval(&b).unwrap();
        assert!(v.is_null(1));
    }

    #[test]
    fn three_valued_or() {
        let b = Batch::new(
            vec![Vector::new(
                Data::Bool(vec![true, false, false]),
                Some(vec![false, false, true]),
            )],
            3,
        );
        let c = Expr::Column {
            index: 0,
            ty: DataType::Bool,
        };
        let null = Expr::Const {
            value: Value::Null,
            ty: DataType::Bool,
        };
        let v = Expr::Or(Box::new(c), Box::new(null)).eval(&b).unwrap();
        assert_eq!(v.value(0), Value::Bool(true));
        assert_eq!(v.value(1), Value::Null);
        assert_eq!(v.value(2), Value::Null);
    }
}
