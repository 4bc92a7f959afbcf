//! The sets an array gives: `unnest(array)` (its elements, NULL elements
//! included, in subscript order) and `generate_subscripts(array, dim [,
//! reverse])` (its subscripts along dimension `dim`, from the lower bound
//! up, or down with `reverse`).
//!
//! tusk's arrays have one dimension, so `generate_subscripts` gives no rows
//! for any other `dim`, as PostgreSQL does for a dimension the array does
//! not have; an empty array gives no rows to either function.

use super::{Listed, SetRows};
use crate::error::{ExecError, Result};
use crate::func::Func;
use crate::value::Value;
use crate::vector::{Data, Vector};
use tusk_storage::DataType;

/// Starts `unnest` or `generate_subscripts` over non-NULL `args`; `ty` is
/// the result type.
pub(super) fn start(func: Func, ty: DataType, args: Vec<Value>) -> Result<Box<dyn SetRows>> {
    let mut args = args.into_iter();
    let Some(Value::Array(array)) = args.next() else {
        return Err(ExecError::new(format!("{} over a non-array", func.name())));
    };
    if func == Func::Unnest {
        return Ok(Box::new(Listed::new(array.items, ty)));
    }
    let dim = match args.next() {
        Some(Value::Int4(d)) => d,
        other => {
            return Err(ExecError::new(format!(
                "generate_subscripts dimension {other:?}"
            )))
        }
    };
    let reverse = matches!(args.next(), Some(Value::Bool(true)));
    let (lower, upper) = if dim == 1 {
        (array.lower, array.upper())
    } else {
        (1, 0)
    };
    Ok(Box::new(Subscripts {
        next: if reverse { upper } else { lower } as i64,
        last: if reverse { lower } else { upper } as i64,
        step: if reverse { -1 } else { 1 },
    }))
}

/// `generate_subscripts`: `next`, `next + step`, ... up to `last`.
struct Subscripts {
    next: i64,
    last: i64,
    step: i64,
}

impl SetRows for Subscripts {
    fn fill(&mut self, max: usize) -> Result<Vector> {
        let remaining = ((self.last - self.next) * self.step + 1).max(0) as usize;
        let n = remaining.min(max);
        let start = self.next;
        self.next += self.step * n as i64;
        let data = (0..n as i64)
            .map(|i| (start + self.step * i) as i32)
            .collect();
        Ok(Vector::new(Data::Int4(data), None))
    }
}
