//! The ordered-set aggregates: `percentile_cont`, `percentile_disc` and
//! `mode`, written `f(direct) WITHIN GROUP (ORDER BY value)`.
//!
//! They need a group's values in order, which is what an aggregate with an
//! ORDER BY input already gets (`ordered`: a sort by group, then by the
//! ORDER BY key, that spills within `work_mem`). So the state is
//! `array_agg`'s, a group's values in arrival order, with NULL values left
//! out as PostgreSQL's `ordered_set_transition` leaves them out
//! ([`super::funcs::strict_args`]); only the final step differs, and it
//! lives here. It follows PostgreSQL 15's `orderedsetaggs.c`:
//!
//! * The *direct argument* (the fraction, or an array of fractions) is
//!   evaluated once per group at the end, before looking at the values: a
//!   NULL fraction gives NULL, one outside `[0, 1]` (or NaN) raises
//!   `percentile value %g is not between 0 and 1` even over no rows. The
//!   binder admits only direct arguments that read no column (constants
//!   and parameters), so the value is the same for every group. Among an array's fractions a NULL gives a NULL
//!   element.
//! * With no (non-NULL) values the result is NULL.
//! * `percentile_disc(f)` is the value at position `ceil(f × n)` (1-based;
//!   the first for `f = 0`).
//! * `percentile_cont(f)` interpolates between positions `floor(f × (n −
//!   1))` and `ceil(f × (n − 1))` (0-based) as `lo + (hi − lo) × (f × (n −
//!   1) − floor(...))`, for `double precision` and for `interval` (with
//!   interval subtraction, scaling and addition, as `interval_lerp`).
//! * `mode()` is the most frequent value; among equally frequent ones the
//!   first in the sort order. Equal means equal to the type's `=` (so
//!   `1.0` and `1.00` are one value, and the first of the run is kept).

use crate::array::{cmp_values, ArrayValue};
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::plan::{AggCall, AggFunc};
use crate::value::Value;
use std::cmp::Ordering;
use tusk_storage::DataType;

/// The final step of one ordered-set aggregate call.
#[derive(Debug, Clone)]
pub struct OrderedSet {
    func: AggFunc,
    /// The direct argument (`None` for `mode`).
    direct: Option<Expr>,
    /// The type of the values.
    elem: DataType,
}

impl OrderedSet {
    pub fn new(call: &AggCall) -> OrderedSet {
        OrderedSet {
            func: call.func,
            direct: call.args.get(1).cloned(),
            elem: call.args[0].data_type(),
        }
    }

    /// The result for a group whose sorted non-NULL values are `values`
    /// (`None`: it had none).
    pub fn finish(&self, values: Option<&[Value]>, result: DataType) -> Result<Value> {
        let values = values.unwrap_or(&[]);
        let Some(direct) = &self.direct else {
            return Ok(self.mode(values));
        };
        match direct.eval_const()? {
            Value::Null => Ok(Value::Null),
            Value::Array(fractions) => {
                let checked = fractions
                    .items
                    .iter()
                    .map(|f| match f {
                        Value::Null => Ok(None),
                        f => fraction(f).map(Some),
                    })
                    .collect::<Result<Vec<_>>>()?;
                if values.is_empty() {
                    return Ok(Value::Null);
                }
                let items = checked
                    .into_iter()
                    .map(|f| f.map_or(Ok(Value::Null), |f| self.percentile(values, f)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Value::Array(Box::new(ArrayValue::new(result, items))))
            }
            f => {
                let f = fraction(&f)?;
                if values.is_empty() {
                    return Ok(Value::Null);
                }
                self.percentile(values, f)
            }
        }
    }

    /// `percentile_cont` or `percentile_disc` at fraction `f` over `n > 0`
    /// sorted values.
    fn percentile(&self, values: &[Value], f: f64) -> Result<Value> {
        let n = values.len();
        if self.func == AggFunc::PercentileDisc {
            let position = (f * n as f64).ceil() as usize;
            return Ok(values[position.clamp(1, n) - 1].clone());
        }
        let exact = f * (n - 1) as f64;
        let (first, second) = (exact.floor() as usize, exact.ceil() as usize);
        let lo = &values[first];
        if first == second {
            return Ok(lo.clone());
        }
        let proportion = exact - first as f64;
        Ok(match (lo, &values[second]) {
            (Value::Float8(lo), Value::Float8(hi)) => Value::Float8(lo + proportion * (hi - lo)),
            (Value::Interval(lo), Value::Interval(hi)) => {
                Value::Interval(hi.checked_sub(*lo)?.mul_f64(proportion)?.checked_add(*lo)?)
            }
            // The binder casts the values to one of the two.
            (lo, _) => lo.clone(),
        })
    }

    /// The most frequent of the sorted `values`, the first of equals.
    fn mode(&self, values: &[Value]) -> Value {
        let order = crate::expr::TextOrder::of(self.elem);
        let mut best: Option<(&Value, usize)> = None;
        let mut i = 0;
        while i < values.len() {
            let run = values[i..]
                .iter()
                .take_while(|v| cmp_values(v, &values[i], order) == Ordering::Equal)
                .count();
            if best.is_none_or(|(_, freq)| run > freq) {
                best = Some((&values[i], run));
            }
            i += run;
        }
        best.map_or(Value::Null, |(v, _)| v.clone())
    }
}

/// A percentile as a `double precision`, checked to lie in `[0, 1]`.
fn fraction(v: &Value) -> Result<f64> {
    let f = match v {
        Value::Float8(f) => *f,
        _ => f64::NAN,
    };
    if !(0.0..=1.0).contains(&f) {
        return Err(ExecError::coded(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "percentile value {} is not between 0 and 1",
                tusk_types::float::format_g(f, 6)
            ),
        ));
    }
    Ok(f)
}
