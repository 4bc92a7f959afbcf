//! Set-returning functions: the calls a FunctionScan runs.
//!
//! A set-returning function (PostgreSQL's `proretset`) gives any number of
//! rows for one set of arguments. tusk has `generate_series` (integers,
//! numerics, timestamps), `unnest`, `generate_subscripts`,
//! `regexp_matches`, `regexp_split_to_table`, `string_to_table` and the
//! JSON element and key functions (`jsonb_array_elements` ...). They are [`Func`]s like
//! the scalar functions, so the binder resolves their overloads with the
//! same catalog and rules; [`Func::set_returning`] tells them apart, and
//! the binder lets them appear only where PostgreSQL does (in FROM, and in
//! a select list, which the binder turns into a function scan).
//!
//! ## Contract
//!
//! A [`SetCall`] is one call: the function, its argument expressions and
//! its result type. [`start`] evaluates nothing itself: it takes the
//! argument values (computed once by the FunctionScan, after any lateral
//! parameters are substituted) and returns the call's [`SetRows`], which
//! hands out the values in order, a batch at a time. [`SetRows::fill`]
//! returns at most `max` values, and fewer only when the set is exhausted,
//! so the scan knows a call has ended without asking again.
//!
//! A scalar function in FROM (`SELECT * FROM upper('a')`) is a call too:
//! it gives one row, its value.
//!
//! Every set-returning function here but `string_to_table` (whose
//! delimiter and null string may be NULL, as in `string_to_array`) is
//! strict: a NULL argument gives no rows. Argument
//! errors (a zero step, a bad flag) are raised by [`start`], so they are
//! raised whether or not a row is ever pulled, as PostgreSQL raises them on
//! the first call.

mod elements;
mod json;
mod regexp;
mod series;

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::func::catalog::{p, poly, Param, Poly, Proc};
use crate::func::Func;
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::{DataType as D, TEXT_ARRAY};

const I4: Param = Param::T(D::Int4);
const I8: Param = Param::T(D::Int8);
const NUM: Param = Param::T(D::Numeric);
const TEXT: Param = Param::T(D::Text);
const TS: Param = Param::T(D::Timestamp);
const TSTZ: Param = Param::T(D::TimestampTz);
const IV: Param = Param::T(D::Interval);
const JSON: Param = Param::T(D::Json);
const JSONB: Param = Param::T(D::Jsonb);

/// The set-returning functions' overloads (PostgreSQL 15's `pg_proc` rows
/// with `proretset`, for the types tusk has).
pub static SET_PROCS: &[Proc] = &[
    p("generate_series", &[I4, I4], D::Int4, Func::GenerateSeries),
    p(
        "generate_series",
        &[I4, I4, I4],
        D::Int4,
        Func::GenerateSeries,
    ),
    p("generate_series", &[I8, I8], D::Int8, Func::GenerateSeries),
    p(
        "generate_series",
        &[I8, I8, I8],
        D::Int8,
        Func::GenerateSeries,
    ),
    p(
        "generate_series",
        &[NUM, NUM],
        D::Numeric,
        Func::GenerateSeries,
    ),
    p(
        "generate_series",
        &[NUM, NUM, NUM],
        D::Numeric,
        Func::GenerateSeries,
    ),
    p(
        "generate_series",
        &[TS, TS, IV],
        D::Timestamp,
        Func::GenerateSeries,
    ),
    p(
        "generate_series",
        &[TSTZ, TSTZ, IV],
        D::TimestampTz,
        Func::GenerateSeries,
    ),
    p(
        "generate_subscripts",
        &[Param::AnyArray, I4],
        D::Int4,
        Func::GenerateSubscripts,
    ),
    p(
        "generate_subscripts",
        &[Param::AnyArray, I4, Param::T(D::Bool)],
        D::Int4,
        Func::GenerateSubscripts,
    ),
    poly("unnest", &[Param::AnyArray], Poly::Element, Func::Unnest),
    p(
        "regexp_matches",
        &[TEXT, TEXT],
        TEXT_ARRAY,
        Func::RegexpMatches,
    ),
    p(
        "regexp_matches",
        &[TEXT, TEXT, TEXT],
        TEXT_ARRAY,
        Func::RegexpMatches,
    ),
    p(
        "regexp_split_to_table",
        &[TEXT, TEXT],
        D::Text,
        Func::RegexpSplitToTable,
    ),
    p(
        "regexp_split_to_table",
        &[TEXT, TEXT, TEXT],
        D::Text,
        Func::RegexpSplitToTable,
    ),
    p(
        "string_to_table",
        &[TEXT, TEXT],
        D::Text,
        Func::StringToTable,
    ),
    p(
        "string_to_table",
        &[TEXT, TEXT, TEXT],
        D::Text,
        Func::StringToTable,
    ),
    p(
        "jsonb_array_elements",
        &[JSONB],
        D::Jsonb,
        Func::JsonbArrayElements,
    ),
    p(
        "jsonb_array_elements_text",
        &[JSONB],
        D::Text,
        Func::JsonbArrayElementsText,
    ),
    p(
        "jsonb_object_keys",
        &[JSONB],
        D::Text,
        Func::JsonbObjectKeys,
    ),
    p(
        "json_array_elements",
        &[JSON],
        D::Json,
        Func::JsonArrayElements,
    ),
    p(
        "json_array_elements_text",
        &[JSON],
        D::Text,
        Func::JsonArrayElementsText,
    ),
    p("json_object_keys", &[JSON], D::Text, Func::JsonObjectKeys),
];

/// One set-returning call of a FunctionScan.
#[derive(Debug, Clone, PartialEq)]
pub struct SetCall {
    pub func: Func,
    pub args: Vec<Expr>,
    /// The type of the values it returns.
    pub ty: D,
}

/// The values of one running call.
pub trait SetRows {
    /// The next at most `max` values (fewer only at the end of the set).
    fn fill(&mut self, max: usize) -> Result<Vector>;
}

/// A call that returns no rows (a NULL argument).
struct NoRows(D);

impl SetRows for NoRows {
    fn fill(&mut self, _max: usize) -> Result<Vector> {
        Ok(Vector::empty(self.0))
    }
}

/// A set computed whole when the call starts (an array's elements, a
/// string's matches), handed out from `at` on.
struct Listed {
    items: Vec<Value>,
    at: usize,
    ty: D,
}

impl Listed {
    fn new(items: Vec<Value>, ty: D) -> Listed {
        Listed { items, at: 0, ty }
    }
}

impl SetRows for Listed {
    fn fill(&mut self, max: usize) -> Result<Vector> {
        let rest = &self.items[self.at..];
        let n = rest.len().min(max);
        let mut out = Vector::with_capacity(self.ty, n);
        for v in &rest[..n] {
            out.push_value(v);
        }
        self.at += n;
        Ok(out)
    }
}

/// Starts `call` over its evaluated arguments `args`. A scalar function
/// (allowed in FROM, as in PostgreSQL) gives one row: its value.
pub fn start(call: &SetCall, args: Vec<Value>) -> Result<Box<dyn SetRows>> {
    if !call.func.set_returning() {
        let types: Vec<D> = call.args.iter().map(Expr::data_type).collect();
        let vectors: Vec<Vector> = args
            .iter()
            .zip(&types)
            .map(|(v, &t)| Vector::constant(v, t, 1))
            .collect();
        let value = call.func.eval(&vectors, &types, call.ty, 1, None)?;
        return Ok(Box::new(Listed::new(
            vec![value.value_as(0, call.ty)],
            call.ty,
        )));
    }
    if call.func.strict() && args.iter().any(Value::is_null) {
        return Ok(Box::new(NoRows(call.ty)));
    }
    match call.func {
        Func::GenerateSeries => series::start(call.ty, args),
        Func::Unnest | Func::GenerateSubscripts => elements::start(call.func, call.ty, args),
        Func::RegexpMatches | Func::RegexpSplitToTable => regexp::start(call.func, args),
        f if f.json_set() => json::start(f, call.ty, args),
        Func::StringToTable => {
            match crate::func::arrays::split(&args, D::Text.array_of().unwrap())? {
                Value::Array(a) => Ok(Box::new(Listed::new(a.items, D::Text))),
                _ => Ok(Box::new(NoRows(D::Text))),
            }
        }
        f => Err(ExecError::new(format!(
            "set-returning function {} has no implementation",
            f.name()
        ))),
    }
}

#[cfg(test)]
mod tests;
