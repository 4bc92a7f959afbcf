//! Array functions (PostgreSQL 15 documentation, table 9.66): their
//! overloads, polymorphic over `anyarray` / `anyelement` (see `resolve`),
//! and their kernels, which work a row at a time on [`ArrayValue`]s.
//!
//! Dimensions are PostgreSQL's for one-dimensional arrays: `array_upper(a,
//! 1)` is the last subscript, any other dimension (and an empty array) has
//! none (NULL). `array_position` finds an element IS NOT DISTINCT FROM the
//! one sought (so it finds NULL). `array_to_string` skips NULL elements
//! unless given a text to print for them.

use super::catalog::{p, poly, Param, Poly, Proc};
use super::{eval_rows, Call, Func};
use crate::array::{cmp_values, ArrayValue};
use crate::error::Result;
use crate::value::Value;
use crate::vector::Vector;
use std::cmp::Ordering;
use tusk_storage::{DataType as D, TEXT_ARRAY};

const ARR: Param = Param::AnyArray;
const ELEM: Param = Param::AnyElement;
const I4: Param = Param::T(D::Int4);
const TEXT: Param = Param::T(D::Text);

/// The array functions' overloads.
pub static ARRAY_PROCS: &[Proc] = &[
    p(
        "array_to_string",
        &[ARR, TEXT],
        D::Text,
        Func::ArrayToString,
    ),
    p(
        "array_to_string",
        &[ARR, TEXT, TEXT],
        D::Text,
        Func::ArrayToString,
    ),
    p("array_upper", &[ARR, I4], D::Int4, Func::ArrayUpper),
    p("array_lower", &[ARR, I4], D::Int4, Func::ArrayLower),
    p("array_length", &[ARR, I4], D::Int4, Func::ArrayLength),
    p("cardinality", &[ARR], D::Int4, Func::Cardinality),
    p("array_ndims", &[ARR], D::Int4, Func::ArrayNdims),
    p("array_dims", &[ARR], D::Text, Func::ArrayDims),
    p("array_position", &[ARR, ELEM], D::Int4, Func::ArrayPosition),
    poly("array_append", &[ARR, ELEM], Poly::Array, Func::ArrayAppend),
    poly(
        "array_prepend",
        &[ELEM, ARR],
        Poly::Array,
        Func::ArrayPrepend,
    ),
    poly("array_cat", &[ARR, ARR], Poly::Array, Func::ArrayCat),
    poly("array_remove", &[ARR, ELEM], Poly::Array, Func::ArrayRemove),
    p(
        "string_to_array",
        &[TEXT, TEXT],
        TEXT_ARRAY,
        Func::StringToArray,
    ),
    p(
        "string_to_array",
        &[TEXT, TEXT, TEXT],
        TEXT_ARRAY,
        Func::StringToArray,
    ),
];

fn array(v: &Value) -> &ArrayValue {
    match v {
        Value::Array(a) => a,
        other => unreachable!("an array argument, not {other:?}"),
    }
}

fn int(v: &Value) -> i32 {
    match v {
        Value::Int4(x) => *x,
        other => unreachable!("an integer argument, not {other:?}"),
    }
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

/// `array_upper` / `array_lower` / `array_length` of dimension `dim`.
fn dimension(a: &ArrayValue, dim: i32, f: impl Fn(&ArrayValue) -> i32) -> Value {
    if dim != 1 || a.items.is_empty() {
        Value::Null
    } else {
        Value::Int4(f(a))
    }
}

/// Evaluates an array function over a batch.
pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let element_out = |v: &Value| crate::env::with(|e| crate::cast::output(v, e.settings));
    eval_rows(c, |args| {
        Ok(match f {
            Func::ArrayToString => {
                if args[0].is_null() || args[1].is_null() {
                    return Ok(Value::Null);
                }
                let a = array(&args[0]);
                let sep = text(&args[1]).unwrap_or_default();
                let null_text = args.get(2).and_then(text);
                let mut parts = Vec::new();
                for v in &a.items {
                    match (v.is_null(), null_text) {
                        (true, Some(n)) => parts.push(n.to_string()),
                        (true, None) => {}
                        (false, _) => parts.push(element_out(v).unwrap_or_default()),
                    }
                }
                Value::Text(parts.join(sep))
            }
            Func::ArrayUpper => dimension(array(&args[0]), int(&args[1]), |a| a.upper()),
            Func::ArrayLower => dimension(array(&args[0]), int(&args[1]), |a| a.lower),
            Func::ArrayLength => {
                dimension(array(&args[0]), int(&args[1]), |a| a.items.len() as i32)
            }
            Func::Cardinality => Value::Int4(array(&args[0]).items.len() as i32),
            Func::ArrayNdims => match array(&args[0]).items.is_empty() {
                true => Value::Null,
                false => Value::Int4(1),
            },
            Func::ArrayDims => {
                let a = array(&args[0]);
                match a.items.is_empty() {
                    true => Value::Null,
                    false => Value::Text(format!("[{}:{}]", a.lower, a.upper())),
                }
            }
            Func::ArrayPosition => {
                if args[0].is_null() {
                    return Ok(Value::Null);
                }
                let a = array(&args[0]);
                let order = crate::expr::TextOrder::of(a.element());
                let found = a.items.iter().position(|e| match (e, &args[1]) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    (e, x) => cmp_values(e, x, order) == Ordering::Equal,
                });
                match found {
                    Some(i) => Value::Int4(a.lower + i as i32),
                    None => Value::Null,
                }
            }
            Func::ArrayAppend | Func::ArrayPrepend | Func::ArrayRemove | Func::ArrayCat => {
                combine(f, args, c.ty)?
            }
            Func::StringToArray => split(args, c.ty)?,
            other => unreachable!("{other:?} is not an array function"),
        })
    })
}

/// `array_append`, `array_prepend`, `array_remove`, `array_cat`: a NULL
/// array counts as empty.
fn combine(f: Func, args: &[Value], ty: D) -> Result<Value> {
    let empty = ArrayValue::new(ty, Vec::new());
    let arr = |v: &Value| match v {
        Value::Array(a) => (**a).clone(),
        _ => empty.clone(),
    };
    let out = match f {
        Func::ArrayAppend => {
            let mut a = arr(&args[0]);
            a.items.push(args[1].clone());
            a
        }
        Func::ArrayPrepend => {
            let mut a = arr(&args[1]);
            a.items.insert(0, args[0].clone());
            a
        }
        Func::ArrayRemove => {
            let mut a = arr(&args[0]);
            let order = crate::expr::TextOrder::of(a.element());
            a.items.retain(|e| match (e, &args[1]) {
                (Value::Null, Value::Null) => false,
                (Value::Null, _) | (_, Value::Null) => true,
                (e, x) => cmp_values(e, x, order) != Ordering::Equal,
            });
            a.lower = 1;
            a
        }
        _ => {
            let (mut a, b) = (arr(&args[0]), arr(&args[1]));
            if a.items.is_empty() {
                b
            } else {
                a.items.extend(b.items);
                a
            }
        }
    };
    if args.iter().all(Value::is_null) && f == Func::ArrayCat {
        return Ok(Value::Null);
    }
    Ok(Value::Array(Box::new(ArrayValue { ty, ..out })))
}

/// `string_to_array(s, sep [, null])`: a NULL separator splits into
/// characters, an empty one gives the whole string.
pub(crate) fn split(args: &[Value], ty: D) -> Result<Value> {
    let Some(s) = text(&args[0]) else {
        return Ok(Value::Null);
    };
    let null = args.get(2).and_then(text);
    let parts: Vec<String> = match text(&args[1]) {
        _ if s.is_empty() => Vec::new(),
        None => s.chars().map(String::from).collect(),
        Some("") => vec![s.to_string()],
        Some(sep) => s.split(sep).map(str::to_string).collect(),
    };
    let items = parts
        .into_iter()
        .map(|p| match null {
            Some(n) if n == p => Value::Null,
            _ => Value::Text(p),
        })
        .collect();
    Ok(Value::Array(Box::new(ArrayValue::new(ty, items))))
}
