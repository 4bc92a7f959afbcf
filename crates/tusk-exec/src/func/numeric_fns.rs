//! The `numeric` overloads of the mathematical functions: the seam between
//! the function layer and tusk-types' arbitrary-precision numeric, which
//! owns the arithmetic and PostgreSQL 15's result scales (`abs`, `sign`,
//! `ceil`, `floor`, `round`, `trunc`, `mod`, `div`, `sqrt`, `exp`, `ln`,
//! `log`, `power`). This file only maps calls onto it, row by row, for the
//! rows the call computes.

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
