//! Array expressions: `ARRAY[a, b, ...]`, subscripts `a[i]`, and
//! `x op ANY | ALL (array)` (PostgreSQL's ScalarArrayOpExpr).
//!
//! `x op ANY (a)` is the three-valued OR of `x op e` over the elements `e`
//! of `a`: true if one is true, else NULL if one is NULL (a NULL element,
//! or `x` NULL), else false. ALL is the AND. An empty array gives false
//! for ANY and true for ALL whatever `x` is; a NULL array gives NULL.

use super::{live, CmpOp, Expr};
use crate::array::{cmp_values, ArrayValue};
use crate::error::{sqlstate, ExecError, Result};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::DataType;

/// `ARRAY[elems]` of array type `ty`: one array per row (elements NULL
/// where their expression is).
pub(super) fn eval_constructor(
    elems: &[Expr],
    ty: DataType,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let element = ty.element().expect("an array type");
    let vs = elems
        .iter()
        .map(|e| e.eval_active(batch, active))
        .collect::<Result<Vec<_>>>()?;
    let rows = (0..batch.len)
        .map(|i| {
            let items = vs.iter().map(|v| v.value_as(i, element)).collect();
            ArrayValue::new(ty, items)
        })
        .collect();
    Ok(Vector::new(Data::Array(rows), None))
}

/// `array[index]`: the element, NULL when either is NULL or the index is
/// outside the array.
pub(super) fn eval_subscript(
    array: &Expr,
    index: &Expr,
    ty: DataType,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let a = array.eval_active(batch, active)?;
    let idx = index.eval_active(batch, active)?;
    let Data::Array(arrays) = &a.data else {
        return Err(ExecError::new("subscript of a value that is not an array"));
    };
    let mut out = Vector::with_capacity(ty, batch.len);
    for (i, arr) in arrays.iter().enumerate() {
        let v = if a.is_null(i) || idx.is_null(i) || !live(active, i) {
            Value::Null
        } else {
            let at = match idx.value_as(i, index.data_type()) {
                Value::Int2(x) => x as i64,
                Value::Int4(x) => x as i64,
                Value::Int8(x) => x,
                _ => {
                    return Err(ExecError::coded(
                        sqlstate::DATATYPE_MISMATCH,
                        "array subscript must have type integer",
                    ))
                }
            };
            arr.get(at).cloned().unwrap_or(Value::Null)
        };
        out.push_value(&v);
    }
    Ok(out)
}

/// `arg op ANY (array)` (or ALL).
pub(super) fn eval_any(
    arg: &Expr,
    array: &Expr,
    op: CmpOp,
    all: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let x = arg.eval_active(batch, active)?;
    let a = array.eval_active(batch, active)?;
    let Data::Array(arrays) = &a.data else {
        return Err(ExecError::new("ANY/ALL over a value that is not an array"));
    };
    let xty = arg.data_type();
    let order = super::TextOrder::of(xty);
    let n = batch.len;
    let mut out = vec![false; n];
    let mut nulls = vec![false; n];
    for i in 0..n {
        if a.is_null(i) || !live(active, i) {
            nulls[i] = true;
            continue;
        }
        let items = &arrays[i].items;
        if items.is_empty() {
            out[i] = all;
            continue;
        }
        if x.is_null(i) {
            nulls[i] = true;
            continue;
        }
        let xv = x.value_as(i, xty);
        // ANY: looking for a true; ALL: for a false.
        let mut decided = false;
        let mut unknown = false;
        for e in items {
            if e.is_null() {
                unknown = true;
                continue;
            }
            if op.test(cmp_values(&xv, e, order)) != all {
                decided = true;
                break;
            }
        }
        if decided {
            out[i] = !all;
        } else if unknown {
            nulls[i] = true;
        } else {
            out[i] = all;
        }
    }
    Ok(Vector::new(Data::Bool(out), Some(nulls)))
}
