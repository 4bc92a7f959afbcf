//! Mathematical functions over integers and `double precision` (PostgreSQL
//! 15's `int.c`, `int8.c` and `float.c`, with their error checks); the
//! `numeric` overloads are in `numeric_fns`.
//!
//! Float results follow `float.c`: a finite input giving an infinite result
//! is `value out of range: overflow`, a non-zero result rounding to zero is
//! `underflow`, and the domain errors carry PostgreSQL's SQLSTATEs (2201E for
//! logarithms, 2201F for powers and roots, 22003 for trigonometric inputs).

use super::numeric_fns;
use super::{Call, Func};
use crate::error::{
    division_by_zero, float_overflow, float_underflow, int2_out_of_range, int4_out_of_range,
    int8_out_of_range, sqlstate, ExecError, Result,
};
use crate::vector::{Data, Vector};

/// PostgreSQL's `RADIANS_PER_DEGREE`.
const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    if matches!(c.args.first().map(|a| &a.data), Some(Data::Numeric(_))) {
        return numeric_fns::eval(f, c);
    }
    let data = match (f, c.args) {
        (Func::Pi, []) => Data::Float8(vec![std::f64::consts::PI; c.n]),
        (Func::Abs, [a]) => match &a.data {
            Data::Int2(v) => Data::Int2(map1(c, v, |x| {
                x.checked_abs().ok_or_else(int2_out_of_range)
            })?),
            Data::Int4(v) => Data::Int4(map1(c, v, |x| {
                x.checked_abs().ok_or_else(int4_out_of_range)
            })?),
            Data::Int8(v) => Data::Int8(map1(c, v, |x| {
                x.checked_abs().ok_or_else(int8_out_of_range)
            })?),
            Data::Float4(v) => Data::Float4(v.iter().map(|x| x.abs()).collect()),
            Data::Float8(v) => Data::Float8(v.iter().map(|x| x.abs()).collect()),
            _ => return Err(bad_args(f)),
        },
        (Func::Mod, [a, b]) => match (&a.data, &b.data) {
            (Data::Int2(x), Data::Int2(y)) => Data::Int2(map2(c, x, y, int_mod)?),
            (Data::Int4(x), Data::Int4(y)) => Data::Int4(map2(c, x, y, int_mod)?),
            (Data::Int8(x), Data::Int8(y)) => Data::Int8(map2(c, x, y, int_mod)?),
            _ => return Err(bad_args(f)),
        },
        (Func::Gcd | Func::Lcm, [a, b]) => match (&a.data, &b.data) {
            (Data::Int4(x), Data::Int4(y)) => Data::Int4(map2(c, x, y, |p, q| {
                let r = gcd_lcm(f, p as i64, q as i64)?;
                i32::try_from(r).map_err(|_| int4_out_of_range())
            })?),
            (Data::Int8(x), Data::Int8(y)) => Data::Int8(map2(c, x, y, |p, q| gcd_lcm(f, p, q))?),
            _ => return Err(bad_args(f)),
        },
        (Func::Atan2, [a, b]) => {
            let (Data::Float8(x), Data::Float8(y)) = (&a.data, &b.data) else {
                return Err(bad_args(f));
            };
            Data::Float8(map2(c, x, y, |p, q| checked(p.atan2(q), p, q))?)
        }
        (Func::Power, [a, b]) => {
            let (Data::Float8(x), Data::Float8(y)) = (&a.data, &b.data) else {
                return Err(bad_args(f));
            };
            Data::Float8(map2(c, x, y, dpow)?)
        }
        (_, [a]) => {
            let Data::Float8(x) = &a.data else {
                return Err(bad_args(f));
            };
            Data::Float8(map1(c, x, |v| float1(f, v))?)
        }
        _ => return Err(bad_args(f)),
    };
    Ok(Vector::new(data, c.nulls.clone()))
}

pub(super) fn bad_args(f: Func) -> ExecError {
    ExecError::new(format!("{}: unexpected argument types", f.name()))
}

/// Applies `f` to the rows the call computes; other rows get a default.
pub(super) fn map1<T: Copy, U: Default>(
    c: &Call,
    a: &[T],
    f: impl Fn(T) -> Result<U>,
) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(c.n);
    for (i, &x) in a.iter().enumerate() {
        out.push(if c.computes(i) { f(x)? } else { U::default() });
    }
    Ok(out)
}

/// [`map1`] over two arguments.
pub(super) fn map2<T: Copy, V: Copy, U: Default>(
    c: &Call,
    a: &[T],
    b: &[V],
    f: impl Fn(T, V) -> Result<U>,
) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(c.n);
    for i in 0..c.n {
        out.push(if c.computes(i) {
            f(a[i], b[i])?
        } else {
            U::default()
        });
    }
    Ok(out)
}

trait IntMod: Copy + Default + PartialEq {
    fn checked_rem(self, o: Self) -> Option<Self>;
}

macro_rules! int_mod {
    ($($t:ty),*) => {$(
        impl IntMod for $t {
            fn checked_rem(self, o: Self) -> Option<Self> {
                <$t>::checked_rem(self, o)
            }
        }
    )*};
}
int_mod!(i16, i32, i64);

fn int_mod<T: IntMod>(x: T, y: T) -> Result<T> {
    if y == T::default() {
        return Err(division_by_zero());
    }
    // MIN % -1 is 0, not an overflow.
    Ok(x.checked_rem(y).unwrap_or_default())
}

/// `gcd` / `lcm` of 64-bit integers (the int4 versions narrow the result).
fn gcd_lcm(f: Func, a: i64, b: i64) -> Result<i64> {
    let overflow = int8_out_of_range;
    let mut x = (a as i128).abs();
    let mut y = (b as i128).abs();
    while y != 0 {
        (x, y) = (y, x % y);
    }
    let r = if f == Func::Gcd {
        x
    } else if a == 0 || b == 0 {
        0
    } else {
        ((a as i128) / x * (b as i128)).abs()
    };
    i64::try_from(r).map_err(|_| overflow())
}

/// A float result of finite inputs `x`, `y`: overflow to infinity is an error.
fn checked(r: f64, x: f64, y: f64) -> Result<f64> {
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        Err(float_overflow())
    } else {
        Ok(r)
    }
}

fn out_of_range() -> ExecError {
    ExecError::coded(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "input is out of range",
    )
}

fn log_error(x: f64) -> Option<ExecError> {
    let msg = if x == 0.0 {
        "cannot take logarithm of zero"
    } else if x < 0.0 {
        "cannot take logarithm of a negative number"
    } else {
        return None;
    };
    Some(ExecError::coded(sqlstate::INVALID_ARGUMENT_FOR_LOG, msg))
}

/// The one-argument float8 functions.
fn float1(f: Func, x: f64) -> Result<f64> {
    let r = match f {
        Func::Sign => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        Func::Ceil => x.ceil(),
        Func::Floor => x.floor(),
        // rint(): halves go to the even neighbour.
        Func::Round => x.round_ties_even(),
        Func::Trunc => x.trunc(),
        Func::Sqrt => {
            if x < 0.0 {
                return Err(ExecError::coded(
                    sqlstate::INVALID_ARGUMENT_FOR_POWER,
                    "cannot take square root of a negative number",
                ));
            }
            let r = x.sqrt();
            if r == 0.0 && x != 0.0 {
                return Err(float_underflow());
            }
            r
        }
        Func::Cbrt => super::libm::cbrt(x),
        Func::Exp => {
            if x.is_nan() {
                return Ok(x);
            }
            if x.is_infinite() {
                return Ok(if x > 0.0 { x } else { 0.0 });
            }
            let r = x.exp();
            if r.is_infinite() {
                return Err(float_overflow());
            }
            if r == 0.0 {
                return Err(float_underflow());
            }
            r
        }
        Func::Ln | Func::Log10 => {
            if let Some(e) = log_error(x) {
                return Err(e);
            }
            let r = if f == Func::Ln { x.ln() } else { x.log10() };
            if r.is_infinite() && !x.is_infinite() {
                return Err(float_overflow());
            }
            if r == 0.0 && x != 1.0 {
                return Err(float_underflow());
            }
            r
        }
        Func::Degrees => {
            let r = x / RADIANS_PER_DEGREE;
            return checked(r, x, 1.0);
        }
        Func::Radians => {
            let r = x * RADIANS_PER_DEGREE;
            if r == 0.0 && x != 0.0 {
                return Err(float_underflow());
            }
            return checked(r, x, 1.0);
        }
        Func::Sin | Func::Cos | Func::Tan | Func::Cot => {
            if x.is_nan() {
                return Ok(x);
            }
            if x.is_infinite() {
                return Err(out_of_range());
            }
            let r = match f {
                Func::Sin => x.sin(),
                Func::Cos => x.cos(),
                Func::Tan => x.tan(),
                // cot(0) is Infinity, not an error.
                _ => return Ok(1.0 / x.tan()),
            };
            if r.is_infinite() {
                return Err(float_overflow());
            }
            r
        }
        Func::Asin | Func::Acos => {
            if x.is_nan() {
                return Ok(x);
            }
            if !(-1.0..=1.0).contains(&x) {
                return Err(out_of_range());
            }
            if f == Func::Asin {
                x.asin()
            } else {
                x.acos()
            }
        }
        Func::Atan => x.atan(),
        // The C library's, as PostgreSQL's: an overflowing sinh or cosh
        // is infinite, not an error.
        Func::Sinh => x.sinh(),
        Func::Cosh => x.cosh(),
        Func::Tanh => x.tanh(),
        _ => return Err(bad_args(f)),
    };
    Ok(r)
}

/// PostgreSQL's `dpow`, special cases and all.
fn dpow(x: f64, y: f64) -> Result<f64> {
    if x.is_nan() {
        return Ok(if y.is_nan() || y != 0.0 {
            f64::NAN
        } else {
            1.0
        });
    }
    if y.is_nan() {
        return Ok(if x != 1.0 { f64::NAN } else { 1.0 });
    }
    let power_error = |m: &str| ExecError::coded(sqlstate::INVALID_ARGUMENT_FOR_POWER, m);
    if x == 0.0 && y < 0.0 {
        return Err(power_error("zero raised to a negative power is undefined"));
    }
    if x < 0.0 && y.floor() != y {
        return Err(power_error(
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if y.is_infinite() {
        let ax = x.abs();
        return Ok(if ax == 1.0 {
            1.0
        } else if (y > 0.0) == (ax > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if x.is_infinite() {
        if y == 0.0 {
            return Ok(1.0);
        }
        if x > 0.0 {
            return Ok(if y > 0.0 { x } else { 0.0 });
        }
        let odd = y == y.floor() && (y / 2.0) != (y / 2.0).floor();
        return Ok(if y > 0.0 {
            if odd {
                x
            } else {
                -x
            }
        } else if odd {
            -0.0
        } else {
            0.0
        });
    }
    let r = x.powf(y);
    if r.is_infinite() {
        return Err(float_overflow());
    }
    if r == 0.0 && x != 0.0 {
        return Err(float_underflow());
    }
    Ok(r)
}
