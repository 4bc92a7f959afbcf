//! Functions and operators over `json` and `jsonb` (PostgreSQL 15's
//! `json.c`, `jsonb.c`, `jsonfuncs.c`), on tusk-types' `json` module.
//!
//! Both types are held as text: `json` as written, `jsonb` in its normal
//! form (`Jsonb`'s text), so a `jsonb` value is parsed again where an
//! operator reads into it. Operators are calls of the functions PostgreSQL
//! implements them with (`->` is `jsonb_object_field` or
//! `jsonb_array_element`, `@>` `jsonb_contains`, ...); [`OPERATORS`] lists
//! them for resolution.
//!
//! SQL values become JSON as `to_json` makes them ([`write_json`]):
//! numbers as numbers (`NaN` and the infinities as strings), booleans as
//! `true`/`false`, `json`/`jsonb` as themselves, arrays as JSON arrays,
//! dates and timestamps in ISO 8601 with a `T`, anything else as its text
//! form in a string.

use super::{eval_rows, Call, Func};
use crate::array::ArrayValue;
use crate::error::{ExecError, Result};
use crate::value::Value;
use std::cmp::Ordering;
use tusk_storage::DataType;
use tusk_types::json::jsonb::PathEdit;
use tusk_types::json::{self, lex::write_string, Jsonb};
use tusk_types::Settings;

/// A binary operator over `json`/`jsonb`: operand types, result, function.
pub struct JsonOper {
    pub name: &'static str,
    pub left: DataType,
    pub right: DataType,
    pub ret: DataType,
    pub func: Func,
}

const TEXT_ARRAY: DataType = tusk_storage::TEXT_ARRAY;

macro_rules! json_opers {
    ($($name:literal $l:ident $r:ident $ret:ident $f:ident),* $(,)?) => {
        &[$(JsonOper {
            name: $name,
            left: DataType::$l,
            right: json_opers!(@t $r),
            ret: DataType::$ret,
            func: Func::$f,
        },)*]
    };
    (@t TextArray) => { TEXT_ARRAY };
    (@t $t:ident) => { DataType::$t };
}

/// The `json`/`jsonb` operators, in PostgreSQL's `pg_operator` order of
/// preference: for an untyped right operand the first row that fits wins
/// (`-> 'a'` is a key, not a position).
pub static OPERATORS: &[JsonOper] = json_opers![
    "->" Jsonb Text Jsonb JsonbObjectField,
    "->" Jsonb Int4 Jsonb JsonbArrayElement,
    "->>" Jsonb Text Text JsonbObjectFieldText,
    "->>" Jsonb Int4 Text JsonbArrayElementText,
    "#>" Jsonb TextArray Jsonb JsonbExtractPath,
    "#>>" Jsonb TextArray Text JsonbExtractPathText,
    "->" Json Text Json JsonObjectField,
    "->" Json Int4 Json JsonArrayElement,
    "->>" Json Text Text JsonObjectFieldText,
    "->>" Json Int4 Text JsonArrayElementText,
    "#>" Json TextArray Json JsonExtractPath,
    "#>>" Json TextArray Text JsonExtractPathText,
    "@>" Jsonb Jsonb Bool JsonbContains,
    "<@" Jsonb Jsonb Bool JsonbContained,
    "?" Jsonb Text Bool JsonbExists,
    "?|" Jsonb TextArray Bool JsonbExistsAny,
    "?&" Jsonb TextArray Bool JsonbExistsAll,
    "||" Jsonb Jsonb Jsonb JsonbConcat,
    "-" Jsonb Text Jsonb JsonbDelete,
    "-" Jsonb Int4 Jsonb JsonbDeleteIndex,
    "-" Jsonb TextArray Jsonb JsonbDeleteKeys,
    "#-" Jsonb TextArray Jsonb JsonbDeletePath,
];

/// Compares two `jsonb` texts in `jsonb`'s order.
pub fn cmp_jsonb_text(x: &[u8], y: &[u8]) -> Ordering {
    match std::str::from_utf8(y)
        .ok()
        .and_then(|s| Jsonb::parse(s).ok())
    {
        Some(b) => cmp_jsonb_to(x, &b),
        // Stored values always parse; never panic over a damaged one.
        None => x.cmp(y),
    }
}

/// Compares a `jsonb` text with a parsed document in `jsonb`'s order.
pub fn cmp_jsonb_to(x: &[u8], y: &Jsonb) -> Ordering {
    match std::str::from_utf8(x)
        .ok()
        .and_then(|s| Jsonb::parse(s).ok())
    {
        Some(a) => a.cmp_documents(y),
        // Stored values always parse; never panic over a damaged one.
        None => x.cmp(y.to_string().as_bytes()),
    }
}

/// A stored `jsonb` value (its normal-form text).
fn jsonb_of(v: &Value) -> Result<Jsonb> {
    match v {
        Value::Text(t) => Ok(Jsonb::parse(t)?),
        _ => Err(ExecError::new("jsonb argument is not text")),
    }
}

fn text_of(v: &Value) -> &str {
    match v {
        Value::Text(t) => t,
        _ => "",
    }
}

fn jsonb_value(j: &Jsonb) -> Value {
    Value::Text(j.to_string())
}

fn opt_text(t: Option<String>) -> Value {
    t.map_or(Value::Null, Value::Text)
}

/// `jsonb::type` for the numeric types and boolean (`cannot cast jsonb
/// string to type integer` for the wrong kind of value).
pub fn jsonb_to_scalar(text: &str, to: DataType) -> Result<Value> {
    let j = Jsonb::parse(text)?;
    let wrong = |j: &Jsonb| {
        // PostgreSQL's `JsonbTypeName`, which says `numeric` for numbers.
        let kind = match j {
            Jsonb::Number(_) => "numeric",
            other => other.type_name(),
        };
        ExecError::coded(
            crate::error::sqlstate::INVALID_PARAMETER_VALUE,
            format!("cannot cast jsonb {kind} to type {}", to.display_name()),
        )
    };
    match (&j, to) {
        (Jsonb::Bool(b), DataType::Bool) => Ok(Value::Bool(*b)),
        (Jsonb::Number(n), t) if t != DataType::Bool => {
            crate::cast::cast_value(&Value::Numeric(n.clone()), t)
        }
        _ => Err(wrong(&j)),
    }
}

/// Appends `v` (of type `ty`) as `to_json` writes it.
pub fn write_json(v: &Value, ty: DataType, s: &Settings, out: &mut String) {
    use tusk_types::datetime::format as dtf;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            out.push_str(&crate::cast::output(v, s).unwrap_or_default())
        }
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => {
            let t = crate::cast::output(v, s).unwrap_or_default();
            if t.bytes().any(|b| b.is_ascii_alphabetic() && b != b'e') {
                // NaN, Infinity: not JSON numbers.
                write_string(&t, out);
            } else {
                out.push_str(&t);
            }
        }
        Value::Text(t) if matches!(ty, DataType::Json | DataType::Jsonb) => out.push_str(t),
        Value::Date(d) => write_string(&dtf::format_date(*d), out),
        Value::Timestamp(t) => write_string(&iso_t(&dtf::format_timestamp(*t, None)), out),
        Value::TimestampTz(t) => {
            let text = iso_t(&dtf::format_timestamptz_in(*t, s));
            // `+00` becomes `+00:00`, as JSON's ISO 8601 form has it.
            let with_minutes = match text.rfind(['+', '-']) {
                Some(p) if p > 10 && text.len() - p == 3 => format!("{text}:00"),
                _ => text,
            };
            write_string(&with_minutes, out)
        }
        Value::Array(a) => write_json_array(a, s, out),
        other => write_string(&crate::cast::output(other, s).unwrap_or_default(), out),
    }
}

/// An ISO date/time text with `T` between date and time.
fn iso_t(text: &str) -> String {
    text.replacen(' ', "T", 1)
}

fn write_json_array(a: &ArrayValue, s: &Settings, out: &mut String) {
    out.push('[');
    for (i, x) in a.items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json(x, a.element(), s, out);
    }
    out.push(']');
}

/// `to_jsonb` of a value.
fn to_jsonb(v: &Value, ty: DataType, s: &Settings) -> Result<Jsonb> {
    let mut t = String::new();
    write_json(v, ty, s, &mut t);
    Ok(Jsonb::parse(&t)?)
}

/// The key of `json[b]_build_object`'s argument `i` (0-based): its text,
/// an error when NULL.
fn object_key(v: &Value, ty: DataType, i: usize, s: &Settings) -> Result<String> {
    if v.is_null() {
        return Err(ExecError::coded(
            crate::error::sqlstate::INVALID_PARAMETER_VALUE,
            format!("argument {} cannot be null", i + 1),
        )
        .with_hint("Object keys should be text."));
    }
    Ok(crate::cast::to_text(v, ty, s).unwrap_or_default())
}

fn odd_arguments(f: Func) -> ExecError {
    ExecError::coded(
        crate::error::sqlstate::INVALID_PARAMETER_VALUE,
        "argument list must have even number of elements",
    )
    .with_hint(format!(
        "The arguments of {}() must consist of alternating keys and values.",
        f.name()
    ))
}

/// The elements of a `text[]` value as optional strings (`None` for NULL
/// elements); no elements for anything else.
fn text_items(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(a) => a.items.iter().map(opt_string).collect(),
        _ => Vec::new(),
    }
}

/// A text value's string (`None` for NULL).
fn opt_string(x: &Value) -> Option<String> {
    match x {
        Value::Text(t) => Some(t.clone()),
        _ => None,
    }
}

/// The path steps of `#>` (a `text[]`) or of `json[b]_extract_path`'s
/// variadic text arguments; `None` when a step is NULL.
fn path_steps(args: &[Value]) -> Option<Vec<String>> {
    match args {
        [a @ Value::Array(_)] => text_items(a).into_iter().collect(),
        rest => rest.iter().map(opt_string).collect(),
    }
}

fn array_length_error(scalar: bool) -> ExecError {
    ExecError::coded(
        crate::error::sqlstate::INVALID_PARAMETER_VALUE,
        if scalar {
            "cannot get array length of a scalar"
        } else {
            "cannot get array length of a non-array"
        },
    )
}

pub(super) fn eval(f: Func, c: &Call, s: &Settings) -> Result<crate::vector::Vector> {
    let types = c.types;
    eval_rows(c, |a| {
        Ok(match f {
            Func::JsonbTypeof => Value::Text(jsonb_of(&a[0])?.type_name().into()),
            Func::JsonTypeof => Value::Text(json::type_name(text_of(&a[0]))?.into()),
            Func::JsonbArrayLength => match &jsonb_of(&a[0])? {
                Jsonb::Array(items) => Value::Int4(items.len() as i32),
                Jsonb::Object(_) => return Err(array_length_error(false)),
                _ => return Err(array_length_error(true)),
            },
            Func::JsonArrayLength => match json::children(text_of(&a[0]))? {
                json::Children::Array(e) => Value::Int4(e.len() as i32),
                json::Children::Object(_) => return Err(array_length_error(false)),
                json::Children::Scalar(_) => return Err(array_length_error(true)),
            },
            Func::ToJson => {
                let mut t = String::new();
                write_json(&a[0], types[0], s, &mut t);
                Value::Text(t)
            }
            Func::ToJsonb => jsonb_value(&to_jsonb(&a[0], types[0], s)?),
            Func::JsonBuildObject | Func::JsonbBuildObject => {
                if a.len() % 2 != 0 {
                    return Err(odd_arguments(f));
                }
                let mut pairs = Vec::with_capacity(a.len() / 2);
                for i in (0..a.len()).step_by(2) {
                    pairs.push((object_key(&a[i], types[i], i, s)?, i + 1));
                }
                if f == Func::JsonbBuildObject {
                    let mut out = Vec::with_capacity(pairs.len());
                    for (k, vi) in pairs {
                        out.push((k, to_jsonb(&a[vi], types[vi], s)?));
                    }
                    jsonb_value(&Jsonb::Object(json::jsonb::normalize_pairs(out)))
                } else {
                    let mut t = String::from("{");
                    for (n, (k, vi)) in pairs.into_iter().enumerate() {
                        if n > 0 {
                            t.push_str(", ");
                        }
                        write_string(&k, &mut t);
                        t.push_str(" : ");
                        write_json(&a[vi], types[vi], s, &mut t);
                    }
                    t.push('}');
                    Value::Text(t)
                }
            }
            Func::JsonBuildArray => {
                let mut t = String::from("[");
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        t.push_str(", ");
                    }
                    write_json(v, types[i], s, &mut t);
                }
                t.push(']');
                Value::Text(t)
            }
            Func::JsonbBuildArray => {
                let items = a
                    .iter()
                    .zip(types)
                    .map(|(v, t)| to_jsonb(v, *t, s))
                    .collect::<Result<Vec<_>>>()?;
                jsonb_value(&Jsonb::Array(items))
            }
            Func::JsonbStripNulls => jsonb_value(&jsonb_of(&a[0])?.strip_nulls()),
            Func::JsonbPretty => Value::Text(jsonb_of(&a[0])?.pretty()),
            // `->` and `->>` read the stored normal form as text, without
            // building the document: its keys are unique, and a member's
            // text is that member's own normal form.
            Func::JsonbObjectField | Func::JsonbObjectFieldText => {
                let got = json::field(text_of(&a[0]), text_of(&a[1]))?;
                json_field_result(f == Func::JsonbObjectFieldText, got)?
            }
            Func::JsonbArrayElement | Func::JsonbArrayElementText => {
                let doc = text_of(&a[0]);
                let Value::Int4(i) = a[1] else {
                    return Err(ExecError::new("array position is not an integer"));
                };
                // A top-level scalar is a one-element array here.
                let got = match json::children(doc)? {
                    json::Children::Scalar(_) => (i == 0 || i == -1).then_some(doc),
                    top => top.element(doc, i64::from(i)),
                };
                json_field_result(f == Func::JsonbArrayElementText, got)?
            }
            Func::JsonbExtractPath | Func::JsonbExtractPathText => {
                let Some(steps) = path_steps(&a[1..]) else {
                    return Ok(Value::Null);
                };
                let j = jsonb_of(&a[0])?;
                let refs: Vec<&str> = steps.iter().map(String::as_str).collect();
                field_result(f == Func::JsonbExtractPathText, j.path(&refs))
            }
            Func::JsonObjectField | Func::JsonObjectFieldText => {
                let got = json::field(text_of(&a[0]), text_of(&a[1]))?;
                json_field_result(f == Func::JsonObjectFieldText, got)?
            }
            Func::JsonArrayElement | Func::JsonArrayElementText => {
                let Value::Int4(i) = a[1] else {
                    return Err(ExecError::new("array position is not an integer"));
                };
                let got = json::element(text_of(&a[0]), i64::from(i))?;
                json_field_result(f == Func::JsonArrayElementText, got)?
            }
            Func::JsonExtractPath | Func::JsonExtractPathText => {
                let Some(steps) = path_steps(&a[1..]) else {
                    return Ok(Value::Null);
                };
                let refs: Vec<&str> = steps.iter().map(String::as_str).collect();
                let got = json::path(text_of(&a[0]), &refs)?;
                json_field_result(f == Func::JsonExtractPathText, got)?
            }
            Func::JsonbContains => Value::Bool(jsonb_of(&a[0])?.contains(&jsonb_of(&a[1])?)),
            Func::JsonbContained => Value::Bool(jsonb_of(&a[1])?.contains(&jsonb_of(&a[0])?)),
            Func::JsonbExists => Value::Bool(jsonb_of(&a[0])?.has_key(text_of(&a[1]))),
            Func::JsonbExistsAny | Func::JsonbExistsAll => {
                let j = jsonb_of(&a[0])?;
                let keys: Vec<String> = text_items(&a[1]).into_iter().flatten().collect();
                Value::Bool(if f == Func::JsonbExistsAny {
                    keys.iter().any(|k| j.has_key(k))
                } else {
                    keys.iter().all(|k| j.has_key(k))
                })
            }
            Func::JsonbConcat => jsonb_value(&jsonb_of(&a[0])?.concat(&jsonb_of(&a[1])?)),
            Func::JsonbDelete => jsonb_value(&jsonb_of(&a[0])?.delete_key(text_of(&a[1]))?),
            Func::JsonbDeleteIndex => {
                let Value::Int4(i) = a[1] else {
                    return Err(ExecError::new("array position is not an integer"));
                };
                jsonb_value(&jsonb_of(&a[0])?.delete_index(i64::from(i))?)
            }
            Func::JsonbDeleteKeys => {
                let mut j = jsonb_of(&a[0])?;
                for k in text_items(&a[1]).into_iter().flatten() {
                    j = j.delete_key(&k)?;
                }
                jsonb_value(&j)
            }
            Func::JsonbSet | Func::JsonbInsert | Func::JsonbDeletePath => {
                let j = jsonb_of(&a[0])?;
                let steps = text_items(&a[1]);
                let path: Vec<Option<&str>> = steps.iter().map(|s| s.as_deref()).collect();
                let flag = matches!(a.get(3), Some(Value::Bool(true)));
                let value = match a.get(2) {
                    Some(v) => Some(jsonb_of(v)?),
                    None => None,
                };
                let edit = match (f, &value) {
                    (Func::JsonbSet, Some(value)) => PathEdit::Set {
                        value,
                        // create_if_missing defaults to true.
                        create: a.len() < 4 || flag,
                    },
                    (Func::JsonbInsert, Some(value)) => PathEdit::Insert { value, after: flag },
                    _ => PathEdit::Delete,
                };
                jsonb_value(&j.edit_path(&path, edit)?)
            }
            _ => return Err(super::math::bad_args(f)),
        })
    })
}

/// The result of `->` (the value as `jsonb`) or `->>` (as text).
fn field_result(as_text: bool, got: Option<&Jsonb>) -> Value {
    match got {
        None => Value::Null,
        Some(v) if as_text => opt_text(v.to_text()),
        Some(v) => jsonb_value(v),
    }
}

/// The same over `json` text.
fn json_field_result(as_text: bool, got: Option<&str>) -> Result<Value> {
    Ok(match got {
        None => Value::Null,
        Some(v) if as_text => opt_text(json::value_text(v)?),
        Some(v) => Value::Text(v.to_string()),
    })
}

/// Appends a sort key of the `jsonb` text `text` whose bytewise order is
/// `jsonb`'s order ([`Jsonb::cmp_documents`]): a type byte in PostgreSQL's
/// type order (null, string, number, boolean, array, object), then for
/// containers the element or pair count (compared before any element),
/// then the elements, or each key as an escaped string and its value. A
/// top-level scalar is a one-element array flagged *raw*, below a real
/// array of one element, as PostgreSQL's raw scalars sort.
pub fn write_sort_key(text: &[u8], out: &mut Vec<u8>, scratch: &mut String) {
    let Some(j) = std::str::from_utf8(text)
        .ok()
        .and_then(|t| Jsonb::parse(t).ok())
    else {
        // Stored values always parse; a damaged one sorts by its bytes.
        out.extend_from_slice(text);
        return out.extend_from_slice(&[0, 0]);
    };
    match &j {
        Jsonb::Object(_) => key_of(&j, out, scratch),
        Jsonb::Array(items) => {
            out.push(4);
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            out.push(1);
            for v in items {
                key_of(v, out, scratch);
            }
        }
        scalar => {
            out.push(4);
            out.extend_from_slice(&1u32.to_be_bytes());
            out.push(0);
            key_of(scalar, out, scratch);
        }
    }
}

fn key_string(s: &str, out: &mut Vec<u8>) {
    for &c in s.as_bytes() {
        out.push(c);
        if c == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn key_of(v: &Jsonb, out: &mut Vec<u8>, scratch: &mut String) {
    match v {
        Jsonb::Null => out.push(0),
        Jsonb::String(s) => {
            out.push(1);
            key_string(s, out);
        }
        Jsonb::Number(n) => {
            out.push(2);
            crate::sortkey::numeric_key(n, out, scratch);
        }
        Jsonb::Bool(b) => out.extend_from_slice(&[3, *b as u8]),
        Jsonb::Array(items) => crate::stack::grow(|| {
            out.push(4);
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            for x in items {
                key_of(x, out, scratch);
            }
        }),
        Jsonb::Object(pairs) => crate::stack::grow(|| {
            out.push(5);
            out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
            for (k, x) in pairs {
                key_string(k, out);
                key_of(x, out, scratch);
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_order_documents_as_comparison_does() {
        let docs = [
            "[]",
            "null",
            "\"\"",
            "\"a\"",
            "\"b\"",
            "-1",
            "1",
            "1.0",
            "2",
            "false",
            "true",
            "[null]",
            "[1]",
            "[1, 2]",
            "[[1]]",
            "[{}]",
            "[2, 1]",
            "{}",
            "{\"a\": 1}",
            "{\"b\": 1}",
            "{\"a\": 2}",
            "{\"a\": [1]}",
            "{\"a\": 1, \"b\": 2}",
            "[\"a\", 1]",
        ];
        let mut scratch = String::new();
        for a in docs {
            for b in docs {
                let (ja, jb) = (Jsonb::parse(a).unwrap(), Jsonb::parse(b).unwrap());
                let (ta, tb) = (ja.to_string(), jb.to_string());
                let mut ka = Vec::new();
                let mut kb = Vec::new();
                write_sort_key(ta.as_bytes(), &mut ka, &mut scratch);
                write_sort_key(tb.as_bytes(), &mut kb, &mut scratch);
                assert_eq!(ka.cmp(&kb), ja.cmp_documents(&jb), "{a} vs {b}");
                assert_eq!(
                    cmp_jsonb_text(ta.as_bytes(), tb.as_bytes()),
                    ja.cmp_documents(&jb)
                );
            }
        }
        // PostgreSQL's order, checked against PostgreSQL 15.
        let lt = |a: &str, b: &str| {
            Jsonb::parse(a)
                .unwrap()
                .cmp_documents(&Jsonb::parse(b).unwrap())
                == Ordering::Less
        };
        assert!(lt("[]", "null"));
        assert!(lt("1", "[0]"));
        assert!(!lt("{\"a\": 1}", "[1, 2]"));
        assert_eq!(
            Jsonb::parse("1.0")
                .unwrap()
                .cmp_documents(&Jsonb::parse("1").unwrap()),
            Ordering::Equal
        );
    }
}
