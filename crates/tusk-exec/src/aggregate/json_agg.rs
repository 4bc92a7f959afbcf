//! `json_agg`, `jsonb_agg`, `json_object_agg` and `jsonb_object_agg`.
//!
//! A group's state is the JSON text of its members so far, separated as
//! PostgreSQL's `json` aggregates separate them (`, ` between elements,
//! ` : ` between a key and its value). The `json` forms finish by wrapping
//! it (`[1, 2]`, `{ "a" : 1 }`, PostgreSQL's spelling); the `jsonb` forms
//! parse the wrapped text into the normal form, which also keeps only the
//! last of duplicate keys. None of them is strict: a NULL value is JSON
//! `null`; a NULL key is an error.

use crate::error::{sqlstate, ExecError, Result};
use crate::func::json::write_json;
use crate::plan::AggFunc;
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::DataType;
use tusk_types::json::lex::write_string;
use tusk_types::json::Jsonb;
use tusk_types::Settings;

/// Whether `f` is one of the JSON aggregates.
pub fn is_json_agg(f: AggFunc) -> bool {
    matches!(
        f,
        AggFunc::JsonAgg | AggFunc::JsonbAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg
    )
}

/// Appends row `i` of `args` (of types `types`) to a group's text.
pub fn push_row(
    f: AggFunc,
    state: &mut Option<String>,
    args: &[&Vector],
    types: &[DataType],
    i: usize,
    settings: &Settings,
) -> Result<()> {
    let object = matches!(f, AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg);
    let text = state.get_or_insert_with(String::new);
    if !text.is_empty() {
        text.push_str(", ");
    }
    if object {
        let key = args[0].value_as(i, types[0]);
        if key.is_null() {
            return Err(ExecError::coded(
                sqlstate::INVALID_PARAMETER_VALUE,
                "field name must not be null",
            ));
        }
        let key = crate::cast::to_text(&key, types[0], settings).unwrap_or_default();
        write_string(&key, text);
        text.push_str(" : ");
        write_json(&args[1].value_as(i, types[1]), types[1], settings, text);
    } else {
        write_json(&args[0].value_as(i, types[0]), types[0], settings, text);
    }
    Ok(())
}

/// A group's result (NULL for a group without rows).
pub fn finish(f: AggFunc, state: Option<&String>) -> Result<Value> {
    let Some(text) = state else {
        return Ok(Value::Null);
    };
    Ok(Value::Text(match f {
        AggFunc::JsonAgg => format!("[{text}]"),
        AggFunc::JsonObjectAgg => format!("{{ {text} }}"),
        AggFunc::JsonbAgg => Jsonb::parse(&format!("[{text}]"))?.to_string(),
        _ => Jsonb::parse(&format!("{{{text}}}"))?.to_string(),
    }))
}
