//! Single SQL values (constants, rows of small results) and their text form.

use crate::numeric::Numeric;
use tusk_storage::DataType;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int4(i32),
    Int8(i64),
    Numeric(Numeric),
    Text(String),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Numeric(_) => DataType::Numeric,
            Value::Text(_) => DataType::Text,
        })
    }

    /// PostgreSQL's output form (`t`/`f` for booleans); `None` for NULL.
    pub fn to_text(&self) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => if *b { "t" } else { "f" }.to_string(),
            Value::Int4(v) => v.to_string(),
            Value::Int8(v) => v.to_string(),
            Value::Numeric(v) => v.to_string(),
            Value::Text(s) => s.clone(),
        })
    }
}
