//! ORDER BY: an in-memory sort of the whole input.
//!
//! The input is gathered into one batch, the sort keys are evaluated once,
//! and a permutation is sorted with a comparator that walks the key vectors.
//! NULLs sort as in PostgreSQL: last in ascending order, first in descending,
//! unless NULLS FIRST/LAST says otherwise. The sort is stable.

use crate::error::Result;
use crate::operator::{collect, emit_chunk, ExecContext, Operator};
use crate::plan::SortKey;
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use std::cmp::Ordering;
use tusk_storage::DataType;
use tusk_types::float::float_cmp;

/// Orders two non-NULL values of the same type.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int4(x), Value::Int4(y)) => x.cmp(y),
        (Value::Int8(x), Value::Int8(y)) => x.cmp(y),
        (Value::Numeric(x), Value::Numeric(y)) => x.cmp(y),
        (Value::Int2(x), Value::Int2(y)) => x.cmp(y),
        (Value::Float4(x), Value::Float4(y)) => float_cmp(*x as f64, *y as f64),
        (Value::Float8(x), Value::Float8(y)) => float_cmp(*x, *y),
        (Value::Interval(x), Value::Interval(y)) => x.cmp(y),
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (
            Value::Time(x) | Value::Timestamp(x) | Value::TimestampTz(x),
            Value::Time(y) | Value::Timestamp(y) | Value::TimestampTz(y),
        ) => x.cmp(y),
        (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Greater,
        (_, Value::Null) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// Orders rows `i` and `j` of a vector (non-NULL values).
#[inline]
fn compare_rows(v: &Vector, i: usize, j: usize) -> Ordering {
    match &v.data {
        Data::Bool(d) => d[i].cmp(&d[j]),
        Data::Int4(d) => d[i].cmp(&d[j]),
        Data::Int8(d) => d[i].cmp(&d[j]),
        Data::Numeric(d) => d[i].cmp(&d[j]),
        Data::Text(d) => d.get(i).cmp(d.get(j)),
        Data::Int2(d) => d[i].cmp(&d[j]),
        Data::Float4(d) => float_cmp(d[i] as f64, d[j] as f64),
        Data::Float8(d) => float_cmp(d[i], d[j]),
        Data::Interval(d) => d[i].cmp(&d[j]),
    }
}

pub struct Sort {
    input: Option<Box<dyn Operator>>,
    keys: Vec<SortKey>,
    types: Vec<DataType>,
    sorted: Option<Batch>,
    pos: usize,
    ctx: ExecContext,
    id: usize,
}

impl Sort {
    pub fn new(
        input: Box<dyn Operator>,
        keys: Vec<SortKey>,
        types: Vec<DataType>,
        ctx: ExecContext,
        id: usize,
    ) -> Sort {
        Sort {
            input: Some(input),
            keys,
            types,
            sorted: None,
            pos: 0,
            ctx,
            id,
        }
    }

    fn run(&mut self) -> Result<Batch> {
        let mut input = self.input.take().expect("sort input consumed once");
        let all = collect(input.as_mut(), &self.types)?;
        let key_vecs = self
            .keys
            .iter()
            .map(|k| k.expr.eval(&all))
            .collect::<Result<Vec<Vector>>>()?;
        let mut perm: Vec<u32> = (0..all.len as u32).collect();
        perm.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            for (k, v) in self.keys.iter().zip(&key_vecs) {
                let o = match (v.is_null(a), v.is_null(b)) {
                    (true, true) => Ordering::Equal,
                    (true, false) => {
                        if k.nulls_first {
                            Ordering::Less
                        } else {
                            Ordering::Greater
                        }
                    }
                    (false, true) => {
                        if k.nulls_first {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        }
                    }
                    (false, false) => {
                        let o = compare_rows(v, a, b);
                        if k.desc {
                            o.reverse()
                        } else {
                            o
                        }
                    }
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
        let kb = (all.len * self.types.len() * 8).div_ceil(1024).max(25);
        self.ctx
            .note(self.id, format!("Sort Method: quicksort  Memory: {kb}kB"));
        Ok(all.gather(&perm))
    }
}

impl Operator for Sort {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.sorted.is_none() {
            self.sorted = Some(self.run()?);
        }
        Ok(emit_chunk(self.sorted.as_ref().unwrap(), &mut self.pos))
    }
}
