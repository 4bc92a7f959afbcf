//! The sets a JSON document gives: `json[b]_array_elements` (an array's
//! elements, as `json[b]`), `json[b]_array_elements_text` (the same as
//! text: strings unquoted, JSON null as SQL NULL) and
//! `json[b]_object_keys` (an object's keys: for `json` as written,
//! duplicates included; for `jsonb` in its storage order). Anything else
//! is PostgreSQL's error for that function and kind of value.
//!
//! `json[b]_each[_text](doc)` returns two columns, `key` and `value`: the
//! binder runs it as two calls side by side (PostgreSQL's `ROWS FROM`), one
//! for the keys ([`Func::JsonbEachKey`], which gives no rows for anything
//! but an object) and one for the values, which raises the error for a
//! document that is no object. For `json`, duplicate keys are all kept, in
//! the order written; `_text` gives strings unquoted and JSON null as SQL
//! NULL.

use super::{Listed, SetRows};
use crate::error::{sqlstate, ExecError, Result};
use crate::func::Func;
use crate::value::Value;
use tusk_storage::DataType;
use tusk_types::json::{self, Children, Jsonb};

fn invalid(message: String) -> ExecError {
    ExecError::coded(sqlstate::INVALID_PARAMETER_VALUE, message)
}

/// Starts one of the JSON set-returning functions over a non-NULL
/// document; `ty` is the result type.
pub(super) fn start(func: Func, ty: DataType, args: Vec<Value>) -> Result<Box<dyn SetRows>> {
    let Some(Value::Text(doc)) = args.into_iter().next() else {
        return Err(ExecError::new(format!(
            "{} over a non-text value",
            func.name()
        )));
    };
    let items = match func {
        Func::JsonbArrayElements | Func::JsonbArrayElementsText => match &Jsonb::parse(&doc)? {
            Jsonb::Array(items) => items
                .iter()
                .map(|v| match func {
                    Func::JsonbArrayElements => Value::Text(v.to_string()),
                    _ => v.to_text().map_or(Value::Null, Value::Text),
                })
                .collect(),
            Jsonb::Object(_) => {
                return Err(invalid("cannot extract elements from an object".into()))
            }
            _ => return Err(invalid("cannot extract elements from a scalar".into())),
        },
        Func::JsonbObjectKeys => match &Jsonb::parse(&doc)? {
            Jsonb::Object(pairs) => pairs.iter().map(|(k, _)| Value::Text(k.clone())).collect(),
            Jsonb::Array(_) => {
                return Err(invalid("cannot call jsonb_object_keys on an array".into()))
            }
            _ => return Err(invalid("cannot call jsonb_object_keys on a scalar".into())),
        },
        Func::JsonbEachKey | Func::JsonbEachValue | Func::JsonbEachTextValue => {
            match &Jsonb::parse(&doc)? {
                Jsonb::Object(pairs) => pairs
                    .iter()
                    .map(|(k, v)| match func {
                        Func::JsonbEachKey => Value::Text(k.clone()),
                        Func::JsonbEachValue => Value::Text(v.to_string()),
                        _ => v.to_text().map_or(Value::Null, Value::Text),
                    })
                    .collect(),
                _ if func == Func::JsonbEachKey => Vec::new(),
                _ => {
                    return Err(invalid(format!(
                        "cannot call {} on a non-object",
                        func.name()
                    )))
                }
            }
        }
        Func::JsonEachKey | Func::JsonEachValue | Func::JsonEachTextValue => {
            match json::children(&doc)? {
                Children::Object(members) => members
                    .into_iter()
                    .map(|(k, (s, e))| {
                        Ok(match func {
                            Func::JsonEachKey => Value::Text(k),
                            Func::JsonEachValue => Value::Text(doc[s..e].to_string()),
                            _ => json::value_text(&doc[s..e])?.map_or(Value::Null, Value::Text),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ if func == Func::JsonEachKey => Vec::new(),
                Children::Array(_) => {
                    return Err(invalid("cannot deconstruct an array as an object".into()))
                }
                Children::Scalar(_) => return Err(invalid("cannot deconstruct a scalar".into())),
            }
        }
        Func::JsonArrayElements | Func::JsonArrayElementsText => match json::children(&doc)? {
            Children::Array(ranges) => ranges
                .iter()
                .map(|&(s, e)| {
                    let text = &doc[s..e];
                    Ok(match func {
                        Func::JsonArrayElements => Value::Text(text.to_string()),
                        _ => json::value_text(text)?.map_or(Value::Null, Value::Text),
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            Children::Scalar(_) if func == Func::JsonArrayElements => {
                return Err(invalid(format!("cannot call {} on a scalar", func.name())))
            }
            _ => {
                return Err(invalid(format!(
                    "cannot call {} on a non-array",
                    func.name()
                )))
            }
        },
        _ => match json::children(&doc)? {
            Children::Object(members) => members.into_iter().map(|(k, _)| Value::Text(k)).collect(),
            Children::Array(_) => {
                return Err(invalid("cannot call json_object_keys on an array".into()))
            }
            Children::Scalar(_) => {
                return Err(invalid("cannot call json_object_keys on a scalar".into()))
            }
        },
    };
    Ok(Box::new(Listed::new(items, ty)))
}
