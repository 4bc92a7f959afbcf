//! The sets each function gives, against PostgreSQL 15's answers.

use super::{start, SetCall};
use crate::array::ArrayValue;
use crate::expr::Expr;
use crate::func::Func;
use crate::numeric::Numeric;
use crate::value::Value;
use tusk_storage::{DataType, TEXT_ARRAY};
use tusk_types::Interval;

/// Every value of `func` over `args` (result type `ty`), read `chunk` at
/// a time.
fn run(func: Func, ty: DataType, args: Vec<Value>, chunk: usize) -> Vec<Value> {
    let call = SetCall {
        func,
        args: Vec::<Expr>::new(),
        ty,
    };
    let mut rows = start(&call, args).unwrap();
    let mut out = Vec::new();
    loop {
        let v = rows.fill(chunk).unwrap();
        out.extend((0..v.len()).map(|i| v.value_as(i, ty)));
        if v.len() < chunk {
            return out;
        }
    }
}

fn texts(vals: &[Value]) -> Vec<String> {
    vals.iter()
        .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
        .collect()
}

#[test]
fn integer_series_counts_in_any_chunk_size() {
    for chunk in [1, 2, 3, 1024] {
        let got = run(
            Func::GenerateSeries,
            DataType::Int4,
            vec![Value::Int4(10), Value::Int4(1), Value::Int4(-4)],
            chunk,
        );
        assert_eq!(texts(&got), ["10", "6", "2"]);
    }
    let empty = run(
        Func::GenerateSeries,
        DataType::Int8,
        vec![Value::Int8(2), Value::Int8(1)],
        8,
    );
    assert!(empty.is_empty());
}

#[test]
fn numeric_series_keeps_postgres_scales() {
    let n = |s: &str| Value::Numeric(Numeric::parse(s).unwrap());
    let got = run(
        Func::GenerateSeries,
        DataType::Numeric,
        vec![n("1"), n("10.0"), n("2.5")],
        2,
    );
    assert_eq!(texts(&got), ["1", "3.5", "6.0", "8.5"]);
}

#[test]
fn zero_steps_are_refused_at_start() {
    let call = |ty, args| {
        start(
            &SetCall {
                func: Func::GenerateSeries,
                args: vec![],
                ty,
            },
            args,
        )
        .err()
        .map(|e| (e.code, e.message))
    };
    let want = Some(("22023", "step size cannot equal zero".to_string()));
    let got = call(
        DataType::Int4,
        vec![Value::Int4(1), Value::Int4(2), Value::Int4(0)],
    );
    assert_eq!(got.as_ref().map(|(c, m)| (&c[..], m.clone())), want);
    let ts = call(
        DataType::Timestamp,
        vec![
            Value::Timestamp(0),
            Value::Timestamp(10),
            Value::Interval(Interval::new(1, -30, 0)),
        ],
    );
    assert_eq!(ts.as_ref().map(|(c, m)| (&c[..], m.clone())), want);
}

#[test]
fn timestamp_series_steps_by_months() {
    let day = 86_400_000_000i64;
    let got = run(
        Func::GenerateSeries,
        DataType::Timestamp,
        vec![
            Value::Timestamp(30 * day), // 2000-01-31
            Value::Timestamp(100 * day),
            Value::Interval(Interval::new(1, 0, 0)),
        ],
        1,
    );
    assert_eq!(
        texts(&got),
        [
            "2000-01-31 00:00:00",
            "2000-02-29 00:00:00",
            "2000-03-29 00:00:00"
        ]
    );
}

#[test]
fn a_null_argument_gives_no_rows() {
    let got = run(
        Func::GenerateSeries,
        DataType::Int4,
        vec![Value::Int4(1), Value::Null],
        4,
    );
    assert!(got.is_empty());
}

fn int_array(items: Vec<Value>) -> Value {
    Value::Array(Box::new(ArrayValue::new(
        DataType::Int4.array_of().unwrap(),
        items,
    )))
}

#[test]
fn unnest_and_subscripts() {
    let a = || int_array(vec![Value::Int4(7), Value::Null, Value::Int4(9)]);
    let got = run(Func::Unnest, DataType::Int4, vec![a()], 2);
    assert_eq!(got.len(), 3);
    assert!(got[1].is_null());
    let subs = run(
        Func::GenerateSubscripts,
        DataType::Int4,
        vec![a(), Value::Int4(1), Value::Bool(true)],
        2,
    );
    assert_eq!(texts(&subs), ["3", "2", "1"]);
    let other_dim = run(
        Func::GenerateSubscripts,
        DataType::Int4,
        vec![a(), Value::Int4(2)],
        2,
    );
    assert!(other_dim.is_empty());
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

#[test]
fn split_ignores_degenerate_matches() {
    let split = |s: &str, p: &str| {
        texts(&run(
            Func::RegexpSplitToTable,
            DataType::Text,
            vec![text(s), text(p)],
            16,
        ))
    };
    assert_eq!(split("abc", ""), ["a", "b", "c"]);
    assert_eq!(split("a,b,,c", ","), ["a", "b", "", "c"]);
    assert_eq!(
        split("the quick  fox", "\\s*"),
        ["t", "h", "e", "q", "u", "i", "c", "k", "f", "o", "x"]
    );
    assert_eq!(split("", ","), [""]);
}

#[test]
fn matches_give_group_arrays() {
    let m = |s: &str, p: &str, f: &str| {
        texts(&run(
            Func::RegexpMatches,
            TEXT_ARRAY,
            vec![text(s), text(p), text(f)],
            16,
        ))
    };
    assert_eq!(m("foobarbequebaz", "(bar)(beque)", ""), ["{bar,beque}"]);
    assert_eq!(m("abab", "a(x)?b", "g"), ["{NULL}", "{NULL}"]);
    assert_eq!(m("abc", "", "g"), ["{\"\"}", "{\"\"}", "{\"\"}", "{\"\"}"]);
    assert_eq!(m("aXbX", "x", "gi"), ["{X}", "{X}"]);
}
