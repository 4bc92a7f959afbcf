//! `+ - * /` among dates, times, timestamps and intervals (the rows of
//! `func::catalog`'s `DATETIME` operator table; the calendar rules are
//! tusk-types' `datetime::arith`).
//!
//! These operators take operands of different types (`date + integer`,
//! `timestamp - interval`, `interval * double precision`), and dates and
//! integers, or timestamps and bigints, share a representation; so the
//! kernel is chosen by the operands' SQL types, which the arithmetic chain
//! knows ([`is_datetime_step`]), not by the vectors. It runs a row at a
//! time: calendar work (months of different lengths, the session's time
//! zone for `timestamptz`) dominates, not dispatch. As everywhere in the
//! executor, a NULL or inactive row is never computed, so it raises
//! nothing.

use super::ArithOp;
use crate::cast::CastEnv;
use crate::error::{ExecError, Result};
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::DataType;
use tusk_types::datetime::arith as dt;

fn is_temporal(t: DataType) -> bool {
    matches!(
        t,
        DataType::Date
            | DataType::Time
            | DataType::Timestamp
            | DataType::TimestampTz
            | DataType::Interval
    )
}

/// Whether a step `l op r -> ty` is date/time arithmetic.
pub(super) fn is_datetime_step(l: DataType, r: DataType, ty: DataType) -> bool {
    is_temporal(l) || is_temporal(r) || is_temporal(ty)
}

/// One step of a chain over a batch: `l op r`, of types `lt`, `rt`, into
/// type `ty`.
pub(super) fn eval(
    op: ArithOp,
    l: &Vector,
    lt: DataType,
    r: &Vector,
    rt: DataType,
    ty: DataType,
    active: Option<&[bool]>,
) -> Result<Vector> {
    crate::env::with(|env| {
        let mut out = Vector::with_capacity(ty, l.len());
        for i in 0..l.len() {
            if l.is_null(i) || r.is_null(i) || active.is_some_and(|m| !m[i]) {
                out.push_value(&Value::Null);
                continue;
            }
            let v = step(op, l.value_as(i, lt), r.value_as(i, rt), env)?;
            out.push_value(&v);
        }
        Ok(out)
    })
}

/// `a op b` on two non-NULL values.
pub fn step(op: ArithOp, a: Value, b: Value, env: &CastEnv) -> Result<Value> {
    use ArithOp::*;
    use Value as V;
    let zone = &env.settings.time_zone;
    Ok(match (op, a, b) {
        (Add, V::Date(d), V::Int4(n)) | (Add, V::Int4(n), V::Date(d)) => {
            V::Date(dt::date_plus_days(d, n as i64)?)
        }
        (Sub, V::Date(d), V::Int4(n)) => V::Date(dt::date_plus_days(d, -(n as i64))?),
        (Sub, V::Date(a), V::Date(b)) => V::Int4(dt::date_minus_date(a, b)?),
        (Add, V::Date(d), V::Interval(iv)) | (Add, V::Interval(iv), V::Date(d)) => {
            V::Timestamp(dt::timestamp_plus_interval(dt::date_to_timestamp(d)?, iv)?)
        }
        (Sub, V::Date(d), V::Interval(iv)) => {
            V::Timestamp(dt::timestamp_minus_interval(dt::date_to_timestamp(d)?, iv)?)
        }
        (Add, V::Date(d), V::Time(t)) | (Add, V::Time(t), V::Date(d)) => {
            V::Timestamp(dt::date_plus_time(d, t)?)
        }
        (Add, V::Timestamp(t), V::Interval(iv)) | (Add, V::Interval(iv), V::Timestamp(t)) => {
            V::Timestamp(dt::timestamp_plus_interval(t, iv)?)
        }
        (Sub, V::Timestamp(t), V::Interval(iv)) => {
            V::Timestamp(dt::timestamp_minus_interval(t, iv)?)
        }
        (Sub, V::Timestamp(a), V::Timestamp(b)) | (Sub, V::TimestampTz(a), V::TimestampTz(b)) => {
            V::Interval(dt::timestamp_minus_timestamp(a, b)?)
        }
        (Add, V::TimestampTz(t), V::Interval(iv)) | (Add, V::Interval(iv), V::TimestampTz(t)) => {
            V::TimestampTz(dt::timestamptz_plus_interval(t, iv, zone)?)
        }
        (Sub, V::TimestampTz(t), V::Interval(iv)) => {
            V::TimestampTz(dt::timestamptz_minus_interval(t, iv, zone)?)
        }
        (Add, V::Time(t), V::Interval(iv)) | (Add, V::Interval(iv), V::Time(t)) => {
            V::Time(dt::time_plus_interval(t, iv))
        }
        (Sub, V::Time(t), V::Interval(iv)) => V::Time(dt::time_minus_interval(t, iv)),
        (Sub, V::Time(a), V::Time(b)) => V::Interval(dt::time_minus_time(a, b)),
        (Add, V::Interval(a), V::Interval(b)) => V::Interval(a.checked_add(b)?),
        (Sub, V::Interval(a), V::Interval(b)) => V::Interval(a.checked_sub(b)?),
        (Mul, V::Interval(iv), V::Float8(f)) | (Mul, V::Float8(f), V::Interval(iv)) => {
            V::Interval(iv.mul_f64(f)?)
        }
        (Div, V::Interval(iv), V::Float8(f)) => V::Interval(iv.div_f64(f)?),
        (op, a, b) => {
            return Err(ExecError::new(format!(
                "no date/time operator {} for {a:?} and {b:?}",
                op.symbol()
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_types::Interval;

    fn run(op: ArithOp, a: Value, b: Value) -> Result<Value> {
        step(op, a, b, &CastEnv::default())
    }

    #[test]
    fn dates_move_by_days_and_intervals() {
        assert_eq!(
            run(ArithOp::Add, Value::Date(0), Value::Int4(31)).unwrap(),
            Value::Date(31)
        );
        // 2000-01-31 + 1 month is 2000-02-29 (the month's last day).
        let jan31 = Value::Date(30);
        let got = run(ArithOp::Add, jan31, Value::Interval(Interval::new(1, 0, 0))).unwrap();
        assert_eq!(got, Value::Timestamp(59 * 86_400_000_000));
        assert_eq!(
            run(ArithOp::Sub, Value::Date(10), Value::Date(3)).unwrap(),
            Value::Int4(7)
        );
    }

    #[test]
    fn range_errors_are_postgres_messages() {
        let e = run(ArithOp::Add, Value::Date(2_145_031_948), Value::Int4(5)).unwrap_err();
        assert_eq!(e.message, "date out of range");
        let e = run(ArithOp::Sub, Value::Date(i32::MAX), Value::Date(0)).unwrap_err();
        assert_eq!(e.message, "cannot subtract infinite dates");
    }
}
