//! The `numeric` overloads of the mathematical functions: the one seam
//! between the function layer and the numeric type.
//!
//! REPLACE: the types helper is making `numeric` arbitrary-precision
//! (tusk-types `numeric::math`: sqrt, exp, ln, log, power, round, trunc,
//! with PostgreSQL's result scales). Until that lands, this file computes
//! what is exact on today's 128-bit `Numeric` (abs, sign, ceil, floor,
//! round, trunc, mod, div) and refuses the transcendental functions with
//! `feature not supported` rather than print digits PostgreSQL would not.
//! When the new type lands, each arm below becomes one call into it.

use super::math::{bad_args, map1, map2};
use super::{Call, Func};
use crate::error::{division_by_zero, sqlstate, ExecError, Result};
use crate::numeric::{Numeric, OVERFLOW};
use crate::vector::{Data, Vector};

fn overflow() -> ExecError {
    ExecError::coded(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, OVERFLOW)
}

fn pow10(n: u32) -> Result<i128> {
    10i128.checked_pow(n).ok_or_else(overflow)
}

#[derive(Clone, Copy, PartialEq)]
enum Rounding {
    HalfAwayFromZero,
    TowardZero,
    Ceil,
    Floor,
}

/// `x` with `scale` digits after the point (negative: rounds to tens,
/// hundreds...); the result's scale is `max(scale, 0)`, as PostgreSQL's
/// `numeric_round` / `numeric_trunc`.
fn rescale(x: Numeric, scale: i32, mode: Rounding) -> Result<Numeric> {
    // PostgreSQL clamps the requested scale to NUMERIC_MAX_RESULT_SCALE.
    let scale = scale.clamp(-2000, 2000);
    let cur = x.scale as i32;
    if scale >= cur {
        let s = u16::try_from(scale).map_err(|_| overflow())?;
        return x.rescale(s).map_err(|_| overflow());
    }
    let f = pow10((cur - scale) as u32)?;
    let (q, r) = (x.unscaled / f, x.unscaled % f);
    let bump = match mode {
        Rounding::HalfAwayFromZero => r.abs() >= f - r.abs(),
        Rounding::TowardZero => false,
        Rounding::Ceil => r > 0,
        Rounding::Floor => r < 0,
    };
    let q = if bump && r != 0 {
        if mode == Rounding::Floor || (mode != Rounding::Ceil && r < 0) {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    };
    if scale >= 0 {
        Ok(Numeric {
            unscaled: q,
            scale: scale as u16,
        })
    } else {
        let unscaled = q
            .checked_mul(pow10((-scale) as u32)?)
            .ok_or_else(overflow)?;
        Ok(Numeric { unscaled, scale: 0 })
    }
}

fn not_yet(f: Func) -> ExecError {
    ExecError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("{}(numeric) is not supported yet", f.name()),
    )
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let out = match (f, c.args) {
        (Func::Abs, [a]) => map1(c, nums(a, f)?, |x| {
            Ok(if x.unscaled < 0 { x.negated() } else { x })
        })?,
        (Func::Sign, [a]) => map1(c, nums(a, f)?, |x| {
            Ok(Numeric::from_i64(x.unscaled.signum() as i64))
        })?,
        (Func::Ceil, [a]) => map1(c, nums(a, f)?, |x| rescale(x, 0, Rounding::Ceil))?,
        (Func::Floor, [a]) => map1(c, nums(a, f)?, |x| rescale(x, 0, Rounding::Floor))?,
        (Func::Round, [a]) => map1(c, nums(a, f)?, |x| {
            rescale(x, 0, Rounding::HalfAwayFromZero)
        })?,
        (Func::Trunc, [a]) => map1(c, nums(a, f)?, |x| rescale(x, 0, Rounding::TowardZero))?,
        (Func::Round | Func::Trunc, [a, s]) => {
            let Data::Int4(s) = &s.data else {
                return Err(bad_args(f));
            };
            let mode = if f == Func::Round {
                Rounding::HalfAwayFromZero
            } else {
                Rounding::TowardZero
            };
            map2(c, nums(a, f)?, s, |x, s| rescale(x, s, mode))?
        }
        (Func::Mod, [a, b]) => map2(c, nums(a, f)?, nums(b, f)?, |x, y| {
            if y.unscaled == 0 {
                return Err(division_by_zero());
            }
            let s = x.scale.max(y.scale);
            let (p, q) = (
                x.rescale(s).map_err(|_| overflow())?,
                y.rescale(s).map_err(|_| overflow())?,
            );
            Ok(Numeric {
                unscaled: p.unscaled % q.unscaled,
                scale: s,
            })
        })?,
        (Func::Div, [a, b]) => map2(c, nums(a, f)?, nums(b, f)?, |x, y| {
            if y.unscaled == 0 {
                return Err(division_by_zero());
            }
            let s = x.scale.max(y.scale);
            let (p, q) = (
                x.rescale(s).map_err(|_| overflow())?,
                y.rescale(s).map_err(|_| overflow())?,
            );
            Ok(Numeric::from_i128(p.unscaled / q.unscaled))
        })?,
        (Func::Sqrt | Func::Exp | Func::Ln | Func::Log10 | Func::Log | Func::Power, _) => {
            // Nothing to compute when every row is NULL or inactive.
            if (0..c.n).any(|i| c.computes(i)) {
                return Err(not_yet(f));
            }
            vec![Numeric::default(); c.n]
        }
        _ => return Err(bad_args(f)),
    };
    Ok(Vector::new(Data::Numeric(out), c.nulls.clone()))
}

fn nums(v: &Vector, f: Func) -> Result<&[Numeric]> {
    match &v.data {
        Data::Numeric(x) => Ok(x),
        _ => Err(bad_args(f)),
    }
}
