//! `generate_series(start, stop [, step])`: the FunctionScan node.
//!
//! Integer series (`integer`, `bigint`) count in `i128`, so no step can
//! overflow on the way to `stop`; each batch is computed from its first
//! value and the step. Numeric series add the step exactly, value by value,
//! and print each value at the scale the additions give it, as
//! PostgreSQL's `generate_series_step_numeric` does: the first value keeps
//! `start`'s scale, the next ones `max(scale(start), scale(step))`
//! (`generate_series(1, 10.0, 2.5)` is 1, 3.5, 6.0, 8.5).
//!
//! A NULL argument gives no rows (the function is strict). A zero step, and
//! for numeric a NaN or infinite argument, is an error (22023) raised when
//! the node starts, whether or not a row is ever pulled.

use crate::error::{sqlstate, ExecError, Result};
use crate::numeric::Numeric;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::plan::{NodeKind, Plan};
use crate::scan::{eval_constants, scan_filter};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use tusk_storage::DataType;

/// Where the series stands.
enum Series {
    Int {
        next: i128,
        stop: i128,
        step: i128,
    },
    Numeric {
        next: Numeric,
        stop: Numeric,
        step: Numeric,
    },
    Done,
}

pub struct FunctionScan {
    series: Series,
    ty: DataType,
    filter: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
}

fn invalid(msg: &str) -> ExecError {
    ExecError::coded(sqlstate::INVALID_PARAMETER_VALUE, msg)
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

impl FunctionScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<FunctionScan> {
        let NodeKind::FunctionScan {
            args, ty, filter, ..
        } = &plan.kind
        else {
            unreachable!("a FunctionScan node")
        };
        let vals = eval_constants(args)?;
        let series = if vals.iter().any(Value::is_null) {
            Series::Done
        } else if *ty == DataType::Numeric {
            let next = finite(&vals[0], "start value")?;
            let stop = finite(&vals[1], "stop value")?;
            let step = match vals.get(2) {
                Some(v) => finite(v, "step size")?,
                None => Numeric::from_i64(1),
            };
            if step.is_zero() {
                return Err(invalid("step size cannot equal zero"));
            }
            Series::Numeric { next, stop, step }
        } else {
            let int = |v: &Value| match v {
                Value::Int4(x) => Ok(i128::from(*x)),
                Value::Int8(x) => Ok(i128::from(*x)),
                other => Err(ExecError::new(format!(
                    "integer generate_series over {other:?}"
                ))),
            };
            let step = vals.get(2).map_or(Ok(1), int)?;
            if step == 0 {
                return Err(invalid("step size cannot equal zero"));
            }
            Series::Int {
                next: int(&vals[0])?,
                stop: int(&vals[1])?,
                step,
            }
        };
        Ok(FunctionScan {
            series,
            ty: *ty,
            filter: RowOrderFilter::new(filter.clone()),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn produce(&mut self) -> Result<Option<Batch>> {
        let (data, n) = match &mut self.series {
            Series::Done => return Ok(None),
            Series::Int { next, stop, step } => {
                let remaining = if (*step > 0 && *next > *stop) || (*step < 0 && *next < *stop) {
                    0
                } else {
                    (*stop - *next) / *step + 1
                };
                if remaining == 0 {
                    self.series = Series::Done;
                    return Ok(None);
                }
                let n = remaining.min(BATCH_SIZE as i128) as usize;
                let (start, step) = (*next, *step);
                *next = start + step * n as i128;
                let at = |i: usize| start + step * i as i128;
                let data = match self.ty {
                    DataType::Int4 => Data::Int4((0..n).map(|i| at(i) as i32).collect()),
                    _ => Data::Int8((0..n).map(|i| at(i) as i64).collect()),
                };
                (data, n)
            }
            Series::Numeric { next, stop, step } => {
                let up = step.signum() > 0;
                let mut out = Vec::new();
                while out.len() < BATCH_SIZE && (if up { *next <= *stop } else { *next >= *stop }) {
                    let after = next.checked_add(step)?;
                    out.push(std::mem::replace(next, after));
                }
                if out.is_empty() {
                    self.series = Series::Done;
                    return Ok(None);
                }
                let n = out.len();
                (Data::Numeric(out), n)
            }
        };
        Ok(Some(Batch::new(vec![Vector::new(data, None)], n)))
    }
}

impl Operator for FunctionScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.filter.raise_held()?;
        while let Some(b) = self.produce()? {
            if let Some(b) = scan_filter(b, &mut self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
