//! `generate_series(start, stop [, step])` over integers, numerics and
//! timestamps.
//!
//! Integer series (`integer`, `bigint`) count in `i128`, so no step can
//! overflow on the way to `stop`; each batch is computed from its first
//! value and the step. Numeric series add the step exactly, value by value,
//! and print each value at the scale the additions give it, as
//! PostgreSQL's `generate_series_step_numeric` does: the first value keeps
//! `start`'s scale, the next ones `max(scale(start), scale(step))`
//! (`generate_series(1, 10.0, 2.5)` is 1, 3.5, 6.0, 8.5).
//!
//! Timestamp series (`timestamp`, `timestamptz`, with an interval step)
//! add the step with the `+` operator's own arithmetic (for `timestamptz`
//! in the session's time zone, so `1 day` keeps the wall-clock time across
//! a daylight-saving change). As in PostgreSQL's
//! `generate_series_timestamp`, the value after each returned one is
//! computed when that one is returned, so a step that leaves the timestamp
//! range raises `timestamp out of range` even at the last value; the
//! step's direction is its sign as an interval (`1 month - 40 days` counts
//! down).
//!
//! A zero step, and for numeric a NaN or infinite argument, is an error
//! (22023).

use super::SetRows;
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::datetime_arith;
use crate::expr::ArithOp;
use crate::numeric::Numeric;
use crate::value::Value;
use crate::vector::{Data, Vector};
use tusk_storage::DataType;
use tusk_types::Interval;

fn invalid(msg: &str) -> ExecError {
    ExecError::coded(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn zero_step() -> ExecError {
    invalid("step size cannot equal zero")
}

/// Starts the series of type `ty` over non-NULL `args`.
pub(super) fn start(ty: DataType, args: Vec<Value>) -> Result<Box<dyn SetRows>> {
    match ty {
        DataType::Numeric => NumericSeries::new(args).map(|s| Box::new(s) as Box<dyn SetRows>),
        DataType::Timestamp | DataType::TimestampTz => {
            TimestampSeries::new(args).map(|s| Box::new(s) as Box<dyn SetRows>)
        }
        _ => IntSeries::new(ty, args).map(|s| Box::new(s) as Box<dyn SetRows>),
    }
}

/// An `integer` or `bigint` series.
struct IntSeries {
    next: i128,
    stop: i128,
    step: i128,
    ty: DataType,
}

impl IntSeries {
    fn new(ty: DataType, args: Vec<Value>) -> Result<IntSeries> {
        let int = |v: &Value| match v {
            Value::Int4(x) => Ok(i128::from(*x)),
            Value::Int8(x) => Ok(i128::from(*x)),
            other => Err(ExecError::new(format!(
                "integer generate_series over {other:?}"
            ))),
        };
        let step = args.get(2).map_or(Ok(1), int)?;
        if step == 0 {
            return Err(zero_step());
        }
        Ok(IntSeries {
            next: int(&args[0])?,
            stop: int(&args[1])?,
            step,
            ty,
        })
    }
}

impl SetRows for IntSeries {
    fn fill(&mut self, max: usize) -> Result<Vector> {
        let (next, stop, step) = (self.next, self.stop, self.step);
        let remaining = if (step > 0 && next > stop) || (step < 0 && next < stop) {
            0
        } else {
            (stop - next) / step + 1
        };
        let n = remaining.min(max as i128) as usize;
        self.next = next + step * n as i128;
        let at = |i: usize| next + step * i as i128;
        let data = match self.ty {
            DataType::Int4 => Data::Int4((0..n).map(|i| at(i) as i32).collect()),
            _ => Data::Int8((0..n).map(|i| at(i) as i64).collect()),
        };
        Ok(Vector::new(data, None))
    }
}

/// A `numeric` series.
struct NumericSeries {
    next: Numeric,
    stop: Numeric,
    step: Numeric,
}

/// The numeric argument `what` ("start value", "step size"), refused if
/// it is NaN or infinite.
fn finite(v: &Value, what: &str) -> Result<Numeric> {
    let Value::Numeric(n) = v else {
        return Err(ExecError::new(
            "numeric generate_series over a non-numeric value",
        ));
    };
    if n.is_nan() {
        return Err(invalid(&format!("{what} cannot be NaN")));
    }
    if n.is_infinite() {
        return Err(invalid(&format!("{what} cannot be infinity")));
    }
    Ok(n.clone())
}

impl NumericSeries {
    fn new(args: Vec<Value>) -> Result<NumericSeries> {
        let next = finite(&args[0], "start value")?;
        let stop = finite(&args[1], "stop value")?;
        let step = match args.get(2) {
            Some(v) => finite(v, "step size")?,
            None => Numeric::from_i64(1),
        };
        if step.is_zero() {
            return Err(zero_step());
        }
        Ok(NumericSeries { next, stop, step })
    }
}

impl SetRows for NumericSeries {
    fn fill(&mut self, max: usize) -> Result<Vector> {
        let up = self.step.signum() > 0;
        let mut out = Vec::new();
        while out.len() < max
            && (if up {
                self.next <= self.stop
            } else {
                self.next >= self.stop
            })
        {
            let after = self.next.checked_add(&self.step)?;
            out.push(std::mem::replace(&mut self.next, after));
        }
        Ok(Vector::new(Data::Numeric(out), None))
    }
}

/// A `timestamp` or `timestamptz` series with an interval step.
struct TimestampSeries {
    /// The next value, `None` once the series has ended.
    next: Option<Value>,
    stop: i64,
    step: Interval,
    up: bool,
}

/// The microseconds of a timestamp value.
fn micros(v: &Value) -> Result<i64> {
    match v {
        Value::Timestamp(t) | Value::TimestampTz(t) => Ok(*t),
        other => Err(ExecError::new(format!(
            "timestamp generate_series over {other:?}"
        ))),
    }
}

impl TimestampSeries {
    fn new(mut args: Vec<Value>) -> Result<TimestampSeries> {
        let Some(Value::Interval(step)) = args.pop() else {
            return Err(ExecError::new(
                "timestamp generate_series without an interval step",
            ));
        };
        let up = match step.cmp(&Interval::default()) {
            std::cmp::Ordering::Equal => return Err(zero_step()),
            o => o.is_gt(),
        };
        let stop = micros(&args[1])?;
        Ok(TimestampSeries {
            next: Some(args.swap_remove(0)),
            stop,
            step,
            up,
        })
    }
}

impl SetRows for TimestampSeries {
    fn fill(&mut self, max: usize) -> Result<Vector> {
        let ty = match &self.next {
            Some(Value::TimestampTz(_)) => DataType::TimestampTz,
            _ => DataType::Timestamp,
        };
        let mut out = Vector::with_capacity(ty, max.min(64));
        crate::env::with(|env| {
            while out.len() < max {
                let Some(current) = self.next.take() else {
                    break;
                };
                let t = micros(&current)?;
                if (self.up && t > self.stop) || (!self.up && t < self.stop) {
                    break;
                }
                let after = datetime_arith::step(
                    ArithOp::Add,
                    current.clone(),
                    Value::Interval(self.step),
                    env,
                )?;
                out.push_value(&current);
                self.next = Some(after);
            }
            Ok(out)
        })
    }
}
