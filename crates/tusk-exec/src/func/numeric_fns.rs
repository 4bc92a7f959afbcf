//! The `numeric` overloads of the mathematical functions: the seam between
//! the function layer and tusk-types' arbitrary-precision numeric, which
//! owns the arithmetic and PostgreSQL 15's result scales (`abs`, `sign`,
//! `ceil`, `floor`, `round`, `trunc`, `mod`, `div`, `sqrt`, `exp`, `ln`,
//! `log`, `power`, `trim_scale`), plus the functions that look at a
//! numeric's digits (`scale`, `min_scale`) and `factorial`. This file only
//! maps calls onto it, row by row, for the rows the call computes.

use super::math::bad_args;
use super::{Call, Func};
use crate::error::Result;
use crate::numeric::Numeric;
use crate::vector::{Data, Vector};

fn nums(v: &Vector, f: Func) -> Result<&[Numeric]> {
    match &v.data {
        Data::Numeric(x) => Ok(x),
        _ => Err(bad_args(f)),
    }
}

/// Applies `op` to the rows the call computes (others get zero).
fn map(c: &Call, op: impl Fn(usize) -> Result<Numeric>) -> Result<Vec<Numeric>> {
    let mut out = Vec::with_capacity(c.n);
    for i in 0..c.n {
        out.push(if c.computes(i) {
            op(i)?
        } else {
            Numeric::from_i64(0)
        });
    }
    Ok(out)
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let x = nums(&c.args[0], f)?;
    let out = match (f, c.args) {
        (Func::Abs, [_]) => map(c, |i| Ok(x[i].abs()))?,
        (Func::Sign, [_]) => map(c, |i| Ok(x[i].sign()))?,
        (Func::Ceil, [_]) => map(c, |i| Ok(x[i].ceil()?))?,
        (Func::Floor, [_]) => map(c, |i| Ok(x[i].floor()?))?,
        (Func::Round, [_]) => map(c, |i| Ok(x[i].round_fn(0)?))?,
        (Func::Trunc, [_]) => map(c, |i| Ok(x[i].trunc_fn(0)?))?,
        (Func::Sqrt, [_]) => map(c, |i| Ok(x[i].sqrt()?))?,
        (Func::Exp, [_]) => map(c, |i| Ok(x[i].exp()?))?,
        (Func::Ln, [_]) => map(c, |i| Ok(x[i].ln()?))?,
        (Func::Log10, [_]) => map(c, |i| Ok(x[i].log10()?))?,
        (Func::TrimScale, [_]) => map(c, |i| Ok(x[i].normalized()))?,
        (Func::Scale | Func::MinScale, [_]) => {
            // NULL for NaN and the infinities, which have no digits.
            let mut out = Vec::with_capacity(c.n);
            let mut nulls = c.nulls.clone().unwrap_or_else(|| vec![false; c.n]);
            for (i, null) in nulls.iter_mut().enumerate() {
                let v = &x[i];
                *null |= c.computes(i) && !v.is_finite();
                out.push(match f {
                    _ if !c.computes(i) || !v.is_finite() => 0,
                    Func::Scale => v.scale() as i32,
                    _ => v.normalized().scale() as i32,
                });
            }
            return Ok(Vector::new(Data::Int4(out), Some(nulls)));
        }
        (Func::Round | Func::Trunc, [_, s]) => {
            let Data::Int4(s) = &s.data else {
                return Err(bad_args(f));
            };
            if f == Func::Round {
                map(c, |i| Ok(x[i].round_fn(s[i])?))?
            } else {
                map(c, |i| Ok(x[i].trunc_fn(s[i])?))?
            }
        }
        (Func::Mod | Func::Div | Func::Log | Func::Power, [_, y]) => {
            let y = nums(y, f)?;
            match f {
                Func::Mod => map(c, |i| Ok(x[i].checked_rem(&y[i])?))?,
                Func::Div => map(c, |i| Ok(x[i].div_trunc(&y[i])?))?,
                Func::Log => map(c, |i| Ok(x[i].log(&y[i])?))?,
                _ => map(c, |i| Ok(x[i].power(&y[i])?))?,
            }
        }
        _ => return Err(bad_args(f)),
    };
    Ok(Vector::new(Data::Numeric(out), c.nulls.clone()))
}

/// `factorial(bigint)`: exact, as PostgreSQL 15's `numeric_fac` (an error
/// below 0 and above 32177, whose factorial has more digits than numeric
/// holds).
pub(super) fn factorial(c: &Call) -> Result<Vector> {
    let Data::Int8(n) = &c.args[0].data else {
        return Err(bad_args(Func::Factorial));
    };
    let out = map(c, |i| {
        let n = n[i];
        if n < 0 {
            return Err(crate::error::ExecError::coded(
                crate::error::sqlstate::INVALID_PARAMETER_VALUE,
                "factorial of a negative number is undefined",
            ));
        }
        if n > 32177 {
            return Err(crate::error::ExecError::coded(
                crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "value overflows numeric format",
            ));
        }
        let mut acc = Numeric::from_i64(1);
        for k in 2..=n {
            acc = acc.checked_mul(&Numeric::from_i64(k))?;
        }
        Ok(acc)
    })?;
    Ok(Vector::new(Data::Numeric(out), c.nulls.clone()))
}
