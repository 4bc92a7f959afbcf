//! `width_bucket(operand, low, high, count)`: which of `count` equal-width
//! buckets between `low` and `high` holds `operand`, 0 below the range and
//! `count + 1` at or above its end (`low > high` counts downwards).
//!
//! Both overloads follow PostgreSQL 15's `width_bucket_float8` and
//! `width_bucket_numeric`:
//! - `double precision`: `count * (operand - low) / (high - low)`
//!   truncated, held below `count` when rounding reaches it, plus one; a
//!   range wider than the largest double is computed over halves. An
//!   infinite operand is allowed, infinite bounds are not.
//! - `numeric`: the same quotient computed exactly and truncated.
//!
//! Errors (2201G): `count` not positive, a NaN argument, equal bounds,
//! infinite bounds; `count + 1` past `integer` is 22003.

use super::{Call, Func};
use crate::error::{int4_out_of_range, ExecError, Result};
use crate::numeric::Numeric;
use crate::vector::{Data, Vector};

const INVALID_ARGUMENT: &str = "2201G";

fn invalid(msg: &str) -> ExecError {
    ExecError::coded(INVALID_ARGUMENT, msg)
}

/// Checks `count` and returns `count + 1` for an operand past the range.
fn past_end(count: i32) -> Result<i32> {
    count.checked_add(1).ok_or_else(int4_out_of_range)
}

fn check_count(count: i32) -> Result<()> {
    if count <= 0 {
        return Err(invalid("count must be greater than zero"));
    }
    Ok(())
}

fn nan_error() -> ExecError {
    invalid("operand, lower bound, and upper bound cannot be NaN")
}

fn infinite_bounds() -> ExecError {
    invalid("lower and upper bounds must be finite")
}

fn equal_bounds() -> ExecError {
    invalid("lower bound cannot equal upper bound")
}

/// The double precision overload.
pub(crate) fn float8(x: f64, low: f64, high: f64, count: i32) -> Result<i32> {
    check_count(count)?;
    if x.is_nan() || low.is_nan() || high.is_nan() {
        return Err(nan_error());
    }
    if low.is_infinite() || high.is_infinite() {
        return Err(infinite_bounds());
    }
    let n = count as f64;
    // The share of the range below x, from the side the buckets start at.
    let share = |from: f64, to: f64, x: f64| {
        if (to - from).is_infinite() {
            (x / 2.0 - from / 2.0) / (to / 2.0 - from / 2.0)
        } else {
            (x - from) / (to - from)
        }
    };
    let inside = if low < high {
        if x < low {
            return Ok(0);
        }
        if x >= high {
            return past_end(count);
        }
        n * share(low, high, x)
    } else if low > high {
        if x > low {
            return Ok(0);
        }
        if x <= high {
            return past_end(count);
        }
        n * share(-low, -high, -x)
    } else {
        return Err(equal_bounds());
    };
    Ok((inside as i32).min(count - 1) + 1)
}

/// The numeric overload.
pub(crate) fn numeric(x: &Numeric, low: &Numeric, high: &Numeric, count: i32) -> Result<i32> {
    check_count(count)?;
    if x.is_nan() || low.is_nan() || high.is_nan() {
        return Err(nan_error());
    }
    if low.is_infinite() || high.is_infinite() {
        return Err(infinite_bounds());
    }
    let (from, to, x) = match low.cmp(high) {
        std::cmp::Ordering::Less => {
            if x < low {
                return Ok(0);
            }
            if x >= high {
                return past_end(count);
            }
            (low.clone(), high.clone(), x.clone())
        }
        std::cmp::Ordering::Greater => {
            if x > low {
                return Ok(0);
            }
            if x <= high {
                return past_end(count);
            }
            (low.negated(), high.negated(), x.negated())
        }
        std::cmp::Ordering::Equal => return Err(equal_bounds()),
    };
    let scaled = x
        .checked_sub(&from)?
        .checked_mul(&Numeric::from_i64(count as i64))?;
    let bucket = scaled.div_trunc(&to.checked_sub(&from)?)?;
    Ok(bucket.to_i32()? + 1)
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let mut out = Vec::with_capacity(c.n);
    for i in 0..c.n {
        if !c.computes(i) {
            out.push(0);
            continue;
        }
        let Data::Int4(count) = &c.args[3].data else {
            return Err(super::math::bad_args(f));
        };
        out.push(match (&c.args[0].data, &c.args[1].data, &c.args[2].data) {
            (Data::Float8(x), Data::Float8(l), Data::Float8(h)) => {
                float8(x[i], l[i], h[i], count[i])?
            }
            (Data::Numeric(x), Data::Numeric(l), Data::Numeric(h)) => {
                numeric(&x[i], &l[i], &h[i], count[i])?
            }
            _ => return Err(super::math::bad_args(f)),
        });
    }
    Ok(Vector::new(Data::Int4(out), c.nulls.clone()))
}
